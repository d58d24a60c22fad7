//! Test support: tiny packages written by hand into temp directories (no codegen), test kernels
//! as IR plus hand-written PTX, and `testgen!`, which instantiates one test body for the cpu,
//! cuda and hip devices.
//!
//! A skipped test is not a pass: the cuda and hip instances are `#[ignore]`d with the device
//! they need as the reason, so every `cargo test` lists them as ignored, and a run that selects
//! them (`cargo test -p kiln-runtime -- --ignored cuda::`) fails when the device is absent.

use crate::{Device, DeviceKind, Package};
use kiln_ir::package::{
    Abi, KernelRoutes, Manifest, ObjectEntry, ObjectFormat, Resources, Toolchain, MANIFEST_FILE,
    MANIFEST_FORMAT,
};
use kiln_ir::*;

/// Runs `body` on device 0 of `kind`. A test that was selected for a device fails without it.
pub fn on_device(kind: DeviceKind, body: fn(&Device)) {
    match Device::open(kind, 0) {
        Ok(d) => body(&d),
        Err(e) => panic!("this test needs a {kind} device, and none opens: {e}"),
    }
}

/// `testgen!(a, b)`: `cpu::a`, `cuda::a`, `hip::a`, ... each running the body `fn a(&Device)`;
/// the cuda and hip instances are ignored unless selected (`--ignored`, `--include-ignored`).
macro_rules! testgen {
    ($($body:ident),* $(,)?) => {
        mod cpu {
            $(#[test]
            fn $body() {
                $crate::testing::on_device($crate::DeviceKind::Cpu, super::$body)
            })*
        }
        mod cuda {
            $(#[test]
            #[ignore = "needs a CUDA device: cargo test -p kiln-runtime -- --ignored cuda::"]
            fn $body() {
                $crate::testing::on_device($crate::DeviceKind::Cuda, super::$body)
            })*
        }
        mod hip {
            $(#[test]
            #[ignore = "needs a HIP device: cargo test -p kiln-runtime --features hip -- --ignored hip::"]
            fn $body() {
                $crate::testing::on_device($crate::DeviceKind::Hip, super::$body)
            })*
        }
    };
}
pub(crate) use testgen;

/// A kernel as IR (for the cpu device) and as PTX with `{target}` for the arch (for cuda).
pub struct TestKernel {
    pub ir: Kernel,
    pub ptx: &'static str,
}

/// The manifest entry the package writer would write for `ir`.
pub fn entry(
    ir: &Kernel,
    variant: &str,
    arch: &str,
    bytes: &[u8],
    format: ObjectFormat,
) -> ObjectEntry {
    let ext = match format {
        ObjectFormat::Hsaco => "hsaco",
        ObjectFormat::Ptx => "ptx",
    };
    let triple = Target::by_name(arch).map(|t| t.triple()).unwrap_or("unknown");
    let stem = format!("{}/{variant}.{arch}", ir.name);
    ObjectEntry {
        kernel: ir.name.clone(),
        variant: variant.to_string(),
        symbol: ir.name.clone(),
        consts: ir.consts.clone(),
        arch: arch.to_string(),
        target_id: format!("{triple}--{arch}"),
        wave_size: ir.wave_size,
        workgroup_size: ir.workgroup_size,
        grid: ir.grid.clone(),
        abi: Abi::of(ir),
        resources: Resources {
            lds_bytes: ir.lds_bytes(),
            wave_size: ir.wave_size,
            source: "test".into(),
            ..Resources::default()
        },
        occupancy: None,
        ir_hash: ir.content_hash(),
        ir_file: format!("{stem}.ir.ron"),
        file: format!("{stem}.{ext}"),
        format,
        content_hash: blake3::hash(bytes).to_hex().to_string(),
        // What the object does, as the back end records it: PTX that waits at entry.
        grid_dependency: format == ObjectFormat::Ptx
            && bytes.windows(20).any(|w| w == b"griddepcontrol.wait;"),
    }
}

/// A package being written by hand.
#[derive(Default)]
pub struct PackageDir {
    pub objects: Vec<ObjectEntry>,
    pub routes: Vec<KernelRoutes>,
    files: Vec<(String, Vec<u8>)>,
}

impl PackageDir {
    pub fn new() -> PackageDir {
        PackageDir::default()
    }

    /// Adds an object of `kernel` with its IR file.
    pub fn add(
        &mut self,
        kernel: &Kernel,
        variant: &str,
        arch: &str,
        bytes: &[u8],
        format: ObjectFormat,
    ) {
        let e = entry(kernel, variant, arch, bytes, format);
        self.files.push((e.file.clone(), bytes.to_vec()));
        self.files.push((e.ir_file.clone(), kernel.to_ron().into_bytes()));
        self.objects.push(e);
    }

    /// Adds an object with fake code bytes (the cpu device runs the IR).
    pub fn add_fake(&mut self, kernel: &Kernel, variant: &str, arch: &str) {
        let bytes = crate::package::cpu_only_hsaco(arch, &kernel.name);
        self.add(kernel, variant, arch, &bytes, ObjectFormat::Hsaco);
    }

    /// Writes the package into a fresh temp directory.
    pub fn write(&self) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        for (rel, bytes) in &self.files {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        }
        let m = Manifest {
            format: MANIFEST_FORMAT,
            toolchain: Toolchain {
                kiln: "test".into(),
                llvm: "none".into(),
                ..Toolchain::default()
            },
            objects: self.objects.clone(),
            routes: self.routes.clone(),
        };
        let text = ron::ser::to_string_pretty(&m, ron::ser::PrettyConfig::default()).unwrap();
        std::fs::write(dir.path().join(MANIFEST_FILE), text).unwrap();
        dir
    }
}

/// A package of `kernels` (baseline variants, no routes) for `dev`: fake objects for gfx1100 on
/// the cpu device, PTX for the GPU's arch on cuda. Always `Some`; on hip, where the test kernels
/// have no HSACO without LLVM, it panics, so a hip test that needs them fails when selected
/// instead of passing without running.
pub fn package_for(dev: &Device, kernels: &[TestKernel]) -> Option<(tempfile::TempDir, Package)> {
    let mut p = PackageDir::new();
    match dev.kind() {
        DeviceKind::Cpu => {
            for k in kernels {
                p.add_fake(&k.ir, "baseline", "gfx1100");
            }
        }
        DeviceKind::Cuda => {
            let arch = dev.arch().expect("a cuda device has an arch");
            for k in kernels {
                let ptx = k.ptx.replace("{target}", &arch);
                p.add(&k.ir, "baseline", &arch, ptx.as_bytes(), ObjectFormat::Ptx);
            }
        }
        DeviceKind::Hip => {
            panic!(
                "the test kernels have no HSACO (no LLVM in the runtime's tests): not run on hip"
            )
        }
    }
    let dir = p.write();
    let pkg = Package::open(dir.path()).expect("test package opens");
    Some((dir, pkg))
}

fn shape(p: Param, num: u64, add: u64) -> ShapeExpr {
    ShapeExpr { factors: vec![p], num, den: 1, add }
}

/// `out[i] = x[i] * s` for `i < n`; grid `ceil(n/32)`.
pub fn scale() -> TestKernel {
    let mut b = KernelBuilder::new("scale", 32);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    let n = b.scalar_param("n", ScalarType::U32);
    let s = b.scalar_param("s", ScalarType::F32);
    b.set_buffer_len(x, shape(n, 1, 0));
    b.set_buffer_len(out, shape(n, 1, 0));
    b.grid([ShapeExpr::scaled(&[n], 1, 32), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let wg = b.workgroup_id(Dim::X);
    let w = b.u32(32);
    let base = b.mul(wg, w);
    let lid = b.local_id();
    let i = b.add(base, lid);
    let nv = b.arg(n);
    let inside = b.lt(i, nv);
    b.if_then(inside, |b| {
        let v = b.load(x, i, ScalarType::F32);
        let sv = b.arg(s);
        let r = b.mul(v, sv);
        b.store(out, i, r);
    });
    TestKernel { ir: b.finish(), ptx: SCALE_PTX }
}

/// `scale` with PTX that ptxas refuses (an undeclared register).
pub fn scale_with_ptx_error() -> TestKernel {
    let ptx = SCALE_PTX.replace("mul.rn.f32 %f3, %f2, %f1;", "mul.rn.f32 %f3, %f2, %f_undeclared;");
    TestKernel { ir: scale().ir, ptx: Box::leak(ptx.into_boxed_str()) }
}

const SCALE_PTX: &str = r#"
.version 7.8
.target {target}
.address_size 64
.visible .entry scale(.param .u64 p_x, .param .u64 p_out, .param .u32 p_n, .param .f32 p_s)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [p_x];
    ld.param.u64 %rd2, [p_out];
    ld.param.u32 %r1, [p_n];
    ld.param.f32 %f1, [p_s];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %tid.x;
    shl.b32 %r4, %r2, 5;
    add.u32 %r5, %r4, %r3;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mul.wide.u32 %rd5, %r5, 4;
    add.s64 %rd6, %rd3, %rd5;
    ld.global.f32 %f2, [%rd6];
    mul.rn.f32 %f3, %f2, %f1;
    add.s64 %rd7, %rd4, %rd5;
    st.global.f32 [%rd7], %f3;
DONE:
    ret;
}
"#;

/// `body` on lane 0 of each wave only; it gets the `u32` zero the lane was compared with.
fn on_lane0(b: &mut KernelBuilder, body: impl FnOnce(&mut KernelBuilder, Value)) {
    let lane = b.lane();
    let zero = b.u32(0);
    let first = b.eq(lane, zero);
    b.if_then(first, |b| body(b, zero));
}

/// Builds the common head of the position-dependent chain kernels: buffers `(first, second)`
/// and the scalar `pos`, with lengths `pos*32+32` (or `pos+1` for a `u32` second buffer).
fn chain_head(
    name: &str,
    first: (&str, ScalarType, Access),
    second: (&str, ScalarType, Access),
) -> (KernelBuilder, Param, Param, Param) {
    let mut b = KernelBuilder::new(name, 32);
    let p0 = b.buffer(first.0, first.1, first.2);
    let p1 = b.buffer(second.0, second.1, second.2);
    let pos = b.scalar_param("pos", ScalarType::U32);
    b.set_buffer_len(p0, shape(pos, 32, 32));
    let second_len =
        if second.1 == ScalarType::U32 { shape(pos, 1, 1) } else { shape(pos, 32, 32) };
    b.set_buffer_len(p1, second_len);
    (b, p0, p1, pos)
}

/// `a[pos*32+l] = b[(pos-1)*32+l] * 1.5 + f32(pos+l)`.
pub fn mix() -> TestKernel {
    let (mut b, a, bb, pos) = chain_head(
        "mix",
        ("a", ScalarType::F32, Access::Write),
        ("b", ScalarType::F32, Access::Read),
    );
    let lane = b.lane();
    let p = b.arg(pos);
    let one = b.u32(1);
    let prev = b.sub(p, one);
    let w = b.u32(32);
    let s0 = b.mul(prev, w);
    let src = b.add(s0, lane);
    let d0 = b.mul(p, w);
    let dst = b.add(d0, lane);
    let v = b.load(bb, src, ScalarType::F32);
    let k = b.f32(1.5);
    let m = b.mul(v, k);
    let t = b.add(p, lane);
    let tf = b.convert(t, ScalarType::F32);
    let r = b.add(m, tf);
    b.store(a, dst, r);
    TestKernel { ir: b.finish(), ptx: MIX_PTX }
}

const MIX_PTX: &str = r#"
.version 7.8
.target {target}
.address_size 64
.visible .entry mix(.param .u64 p_a, .param .u64 p_b, .param .u32 p_pos)
{
    .reg .b32 %r<10>;
    .reg .f32 %f<6>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [p_a];
    ld.param.u64 %rd2, [p_b];
    ld.param.u32 %r1, [p_pos];
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mov.u32 %r2, %laneid;
    sub.u32 %r3, %r1, 1;
    shl.b32 %r4, %r3, 5;
    add.u32 %r5, %r4, %r2;
    shl.b32 %r6, %r1, 5;
    add.u32 %r7, %r6, %r2;
    mul.wide.u32 %rd5, %r5, 4;
    add.s64 %rd5, %rd4, %rd5;
    ld.global.f32 %f1, [%rd5];
    mul.rn.f32 %f2, %f1, 0f3FC00000;
    add.u32 %r8, %r1, %r2;
    cvt.rn.f32.u32 %f3, %r8;
    add.rn.f32 %f4, %f2, %f3;
    mul.wide.u32 %rd6, %r7, 4;
    add.s64 %rd6, %rd3, %rd6;
    st.global.f32 [%rd6], %f4;
    ret;
}
"#;

/// `b[pos*32+l] = a[pos*32+l] + b[(pos-1)*32 + (l^1)]`.
pub fn acc() -> TestKernel {
    let (mut b, a, bb, pos) = chain_head(
        "acc",
        ("a", ScalarType::F32, Access::Read),
        ("b", ScalarType::F32, Access::ReadWrite),
    );
    let lane = b.lane();
    let p = b.arg(pos);
    let w = b.u32(32);
    let d0 = b.mul(p, w);
    let dst = b.add(d0, lane);
    let one = b.u32(1);
    let prev = b.sub(p, one);
    let s0 = b.mul(prev, w);
    let partner = b.xor(lane, one);
    let src = b.add(s0, partner);
    let x = b.load(a, dst, ScalarType::F32);
    let y = b.load(bb, src, ScalarType::F32);
    let r = b.add(x, y);
    b.store(bb, dst, r);
    TestKernel { ir: b.finish(), ptx: ACC_PTX }
}

const ACC_PTX: &str = r#"
.version 7.8
.target {target}
.address_size 64
.visible .entry acc(.param .u64 p_a, .param .u64 p_b, .param .u32 p_pos)
{
    .reg .b32 %r<10>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [p_a];
    ld.param.u64 %rd2, [p_b];
    ld.param.u32 %r1, [p_pos];
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mov.u32 %r2, %laneid;
    shl.b32 %r3, %r1, 5;
    add.u32 %r4, %r3, %r2;
    sub.u32 %r5, %r1, 1;
    shl.b32 %r6, %r5, 5;
    xor.b32 %r7, %r2, 1;
    add.u32 %r8, %r6, %r7;
    mul.wide.u32 %rd5, %r4, 4;
    add.s64 %rd6, %rd3, %rd5;
    ld.global.f32 %f1, [%rd6];
    mul.wide.u32 %rd7, %r8, 4;
    add.s64 %rd7, %rd4, %rd7;
    ld.global.f32 %f2, [%rd7];
    add.rn.f32 %f3, %f1, %f2;
    add.s64 %rd8, %rd4, %rd5;
    st.global.f32 [%rd8], %f3;
    ret;
}
"#;

/// Lane 0: `c[pos] = c[pos-1] * 31 + bits(a[pos*32])` (wrapping).
pub fn count() -> TestKernel {
    let (mut b, a, c, pos) = chain_head(
        "count",
        ("a", ScalarType::F32, Access::Read),
        ("c", ScalarType::U32, Access::ReadWrite),
    );
    on_lane0(&mut b, |b, _| {
        let p = b.arg(pos);
        let w = b.u32(32);
        let ai = b.mul(p, w);
        let f = b.load(a, ai, ScalarType::F32);
        let bits = b.bitcast(f, ScalarType::U32);
        let one = b.u32(1);
        let prev = b.sub(p, one);
        let old = b.load(c, prev, ScalarType::U32);
        let k = b.u32(31);
        let m = b.mul(old, k);
        let r = b.add(m, bits);
        b.store(c, p, r);
    });
    TestKernel { ir: b.finish(), ptx: COUNT_PTX }
}

const COUNT_PTX: &str = r#"
.version 7.8
.target {target}
.address_size 64
.visible .entry count(.param .u64 p_a, .param .u64 p_c, .param .u32 p_pos)
{
    .reg .pred %p<2>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<10>;
    mov.u32 %r2, %laneid;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra DONE;
    ld.param.u64 %rd1, [p_a];
    ld.param.u64 %rd2, [p_c];
    ld.param.u32 %r1, [p_pos];
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    shl.b32 %r3, %r1, 5;
    mul.wide.u32 %rd5, %r3, 4;
    add.s64 %rd5, %rd3, %rd5;
    ld.global.u32 %r4, [%rd5];
    sub.u32 %r5, %r1, 1;
    mul.wide.u32 %rd6, %r5, 4;
    add.s64 %rd6, %rd4, %rd6;
    ld.global.u32 %r6, [%rd6];
    mul.lo.u32 %r7, %r6, 31;
    add.u32 %r8, %r7, %r4;
    mul.wide.u32 %rd7, %r1, 4;
    add.s64 %rd7, %rd4, %rd7;
    st.global.u32 [%rd7], %r8;
DONE:
    ret;
}
"#;

/// The library's `copy_from_mapped_multi` (the IR from kiln-specs, at wave 32), with PTX written
/// by hand to the same algorithm (per copy, the widest access both addresses allow: 16, 8, 4
/// bytes or bytes, spread over 32 workgroups of 256 lanes; then the tail a byte a lane), so that
/// its table of device addresses runs on cuda without LLVM here.
pub fn copy_from_mapped_multi() -> TestKernel {
    let target = Target::by_name("gfx1100").expect("gfx1100 is in the target table");
    TestKernel { ir: kiln_specs::copy::copy_from_mapped_multi(target, 32), ptx: COPY_PTX }
}

const COPY_PTX: &str = r#"
.version 7.8
.target {target}
.address_size 64
.visible .entry copy_from_mapped_multi(.param .u64 p_table, .param .u32 p_count)
{
    .reg .pred %p<8>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<24>;
    ld.param.u64 %rd1, [p_table];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %ctaid.y;
    mul.wide.u32 %rd2, %r1, 24;
    add.s64 %rd2, %rd1, %rd2;
    ld.global.u64 %rd3, [%rd2];
    ld.global.u64 %rd4, [%rd2+8];
    ld.global.u64 %rd5, [%rd2+16];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.u32 %r4, %r2, 256, %r3;
    cvt.u64.u32 %rd6, %r4;
    or.b64 %rd7, %rd3, %rd4;
    and.b64 %rd8, %rd7, 15;
    setp.eq.u64 %p1, %rd8, 0;
    and.b64 %rd8, %rd7, 7;
    setp.eq.u64 %p2, %rd8, 0;
    and.b64 %rd8, %rd7, 3;
    setp.eq.u64 %p3, %rd8, 0;
    mov.u64 %rd9, 1;
    @%p3 mov.u64 %rd9, 4;
    @%p2 mov.u64 %rd9, 8;
    @%p1 mov.u64 %rd9, 16;
    div.u64 %rd10, %rd5, %rd9;
    mov.u64 %rd11, %rd6;
LOOP:
    setp.ge.u64 %p4, %rd11, %rd10;
    @%p4 bra TAIL;
    mul.lo.u64 %rd12, %rd11, %rd9;
    add.s64 %rd13, %rd3, %rd12;
    add.s64 %rd14, %rd4, %rd12;
    @%p1 bra W16;
    @%p2 bra W8;
    @%p3 bra W4;
    ld.global.u8 %r5, [%rd13];
    st.global.u8 [%rd14], %r5;
    bra NEXT;
W16:
    ld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd13];
    st.global.v4.u32 [%rd14], {%r5, %r6, %r7, %r8};
    bra NEXT;
W8:
    ld.global.v2.u32 {%r5, %r6}, [%rd13];
    st.global.v2.u32 [%rd14], {%r5, %r6};
    bra NEXT;
W4:
    ld.global.u32 %r5, [%rd13];
    st.global.u32 [%rd14], %r5;
NEXT:
    add.s64 %rd11, %rd11, 8192;
    bra LOOP;
TAIL:
    mul.lo.u64 %rd15, %rd10, %rd9;
    sub.s64 %rd16, %rd5, %rd15;
    setp.ge.u64 %p5, %rd6, %rd16;
    @%p5 bra DONE;
    add.s64 %rd17, %rd15, %rd6;
    add.s64 %rd18, %rd3, %rd17;
    add.s64 %rd19, %rd4, %rd17;
    ld.global.u8 %r9, [%rd18];
    st.global.u8 [%rd19], %r9;
DONE:
    ret;
}
"#;

/// Lane 0: `out[0] = ws[0] + n; ws[0] = 0` with `ws` a runtime-owned workspace.
pub fn ws_count() -> TestKernel {
    let mut b = KernelBuilder::new("ws_count", 32);
    let out = b.buffer("out", ScalarType::U32, Access::Write);
    let n = b.scalar_param("n", ScalarType::U32);
    let ws = b.workspace("ws", ScalarType::U32, ShapeExpr::constant(1));
    b.set_buffer_len(out, ShapeExpr::constant(1));
    on_lane0(&mut b, |b, zero| {
        let old = b.load(ws, zero, ScalarType::U32);
        let nv = b.arg(n);
        let r = b.add(old, nv);
        b.store(out, zero, r);
        b.store(ws, zero, zero);
    });
    TestKernel { ir: b.finish(), ptx: WS_COUNT_PTX }
}

const WS_COUNT_PTX: &str = r#"
.version 7.8
.target {target}
.address_size 64
.visible .entry ws_count(.param .u64 p_out, .param .u32 p_n, .param .u64 p_ws)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<6>;
    mov.u32 %r1, %laneid;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    ld.param.u64 %rd1, [p_out];
    ld.param.u32 %r2, [p_n];
    ld.param.u64 %rd2, [p_ws];
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    ld.global.u32 %r3, [%rd4];
    add.u32 %r4, %r3, %r2;
    st.global.u32 [%rd3], %r4;
    mov.u32 %r5, 0;
    st.global.u32 [%rd4], %r5;
DONE:
    ret;
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    /// A GPU instance of a `testgen!` test that was selected fails without its device (it used
    /// to print "skipping" and pass); with the device there, the body runs.
    #[test]
    fn selected_device_tests_fail_without_their_device() {
        use std::sync::atomic::{AtomicBool, Ordering};
        static RAN: AtomicBool = AtomicBool::new(false);
        for kind in [DeviceKind::Cuda, DeviceKind::Hip] {
            RAN.store(false, Ordering::SeqCst);
            let present = Device::open(kind, 0).is_ok();
            let outcome =
                std::panic::catch_unwind(|| on_device(kind, |_| RAN.store(true, Ordering::SeqCst)));
            if present {
                assert!(
                    outcome.is_ok() && RAN.load(Ordering::SeqCst),
                    "{kind}: the body did not run"
                );
            } else {
                let e = outcome.expect_err("a selected device test passed without its device");
                let text = e.downcast_ref::<String>().cloned().unwrap_or_default();
                assert!(text.contains(&format!("this test needs a {kind} device")), "{text}");
                assert!(!RAN.load(Ordering::SeqCst));
            }
        }
    }

    #[test]
    fn test_kernels_verify() {
        for k in [scale(), mix(), acc(), count(), ws_count(), copy_from_mapped_multi()] {
            if let Err(e) = verify(&k.ir, Target::by_name("gfx1100").ok()) {
                panic!("{}: {e}", k.ir.name);
            }
        }
    }

    /// ptxas from `KILN_PTXAS`, `PATH`, or the pip packages `nvidia-cuda-nvcc` (12: under
    /// `nvidia/cuda_nvcc/bin`, 13: under `nvidia/cu13/bin`).
    fn find_ptxas() -> Option<std::path::PathBuf> {
        let works = |p: &std::path::Path| {
            std::process::Command::new(p)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        };
        let mut candidates: Vec<std::path::PathBuf> = vec![];
        if let Ok(p) = std::env::var("KILN_PTXAS") {
            candidates.push(p.into());
        }
        candidates.push("ptxas".into());
        let py = std::process::Command::new("python3")
            .args(["-c", "import nvidia; print(list(nvidia.__path__)[0])"])
            .output();
        if let Ok(o) = py {
            let root = std::path::PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
            for sub in ["cu13/bin/ptxas", "cuda_nvcc/bin/ptxas"] {
                candidates.push(root.join(sub));
            }
        }
        candidates.into_iter().find(|p| works(p))
    }

    /// Assembles the hand-written PTX with ptxas when there is one (scripts/setup.sh installs
    /// it), so a PTX typo shows up here rather than only on a GPU.
    #[test]
    fn test_ptx_assembles() {
        let Some(ptxas) = find_ptxas() else {
            eprintln!("skipping: no ptxas (set KILN_PTXAS)");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let all: Vec<(String, &str)> =
            [scale(), mix(), acc(), count(), ws_count(), copy_from_mapped_multi()]
                .into_iter()
                .map(|k| (k.ir.name, k.ptx))
                .collect();
        for (name, ptx) in all {
            let src = dir.path().join(format!("{name}.ptx"));
            std::fs::write(&src, ptx.replace("{target}", "sm_90")).unwrap();
            let out = std::process::Command::new(&ptxas)
                .args(["-arch=sm_90", "-o"])
                .arg(dir.path().join("out.cubin"))
                .arg(&src)
                .output()
                .unwrap();
            assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
}
