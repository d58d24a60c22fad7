//! The device's copy bandwidth, measured in the same run as the bench cases it is the floor for:
//! a large device-to-device copy, bytes read plus bytes written over the median time of a few
//! copies (as `bench/peers.py` measures torch's `copy_`), timed with device events after a
//! warm-up copy.
//!
//! The copy kernel moves one 16-byte vector a lane (`ld.global.v4.u32` / `st.global.v4.u32`,
//! grid `ceil(vectors / 256)` workgroups of 256 lanes), which is how the library's kernels read
//! memory too. On cuda it is hand-written PTX; on the cpu device its IR runs in the interpreter
//! (a figure that means nothing, like every time on the cpu device); on hip there is no built-in
//! kernel (an HSACO needs LLVM), so `kiln bench --device hip` takes `--bandwidth`.

use super::{built_in_package, median_us_per_unit};
use kiln_ir::package::ObjectFormat;
use kiln_ir::{Access, Dim, Kernel, KernelBuilder, ScalarType, ShapeExpr, Type};
use kiln_runtime::{Args, Device, DeviceError, DeviceKind, Package, Runtime, RuntimeError};

/// The copy kernel's name.
pub const STREAM_COPY: &str = "kiln_stream_copy";

/// Lanes a workgroup.
const BLOCK: u32 = 256;

/// `dst[i] = src[i]` for 16-byte vectors `i < n16`; the parameters in the IR's order.
pub const STREAM_COPY_PTX: &str = r#"
.version 7.8
.target {target}
.address_size 64
.visible .entry kiln_stream_copy(.param .u64 p_dst, .param .u64 p_src, .param .u32 p_n16)
{
    .reg .pred %p<2>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<8>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    cvt.u64.u32 %rd1, %r1;
    mad.wide.u32 %rd2, %r2, %r3, %rd1;
    ld.param.u32 %r4, [p_n16];
    cvt.u64.u32 %rd3, %r4;
    setp.ge.u64 %p1, %rd2, %rd3;
    @%p1 bra DONE;
    ld.param.u64 %rd4, [p_dst];
    ld.param.u64 %rd5, [p_src];
    cvta.to.global.u64 %rd4, %rd4;
    cvta.to.global.u64 %rd5, %rd5;
    shl.b64 %rd6, %rd2, 4;
    add.s64 %rd7, %rd5, %rd6;
    ld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd7];
    add.s64 %rd7, %rd4, %rd6;
    st.global.v4.u32 [%rd7], {%r5, %r6, %r7, %r8};
DONE:
    ret;
}
"#;

/// The copy kernel's IR (the ABI of [`STREAM_COPY_PTX`]): `dst` and `src` of `4 * n16` u32s,
/// in waves of `wave` lanes (32 for the PTX; the cpu device emulating a wave-64 arch needs 64).
pub fn stream_copy_ir(wave: u32) -> Kernel {
    let mut b = KernelBuilder::new(STREAM_COPY, wave);
    b.workgroup_size([BLOCK, 1, 1]);
    // Parameters in the PTX's order (dst, src, n16): the runtime passes them in the IR's.
    let dst = b.buffer("dst", ScalarType::U32, Access::Write);
    let src = b.buffer("src", ScalarType::U32, Access::Read);
    let n16 = b.scalar_param("n16", ScalarType::U32);
    let words = ShapeExpr::scaled(&[n16], 4, 1);
    b.set_buffer_len(dst, words.clone());
    b.set_buffer_len(src, words);
    b.grid([
        ShapeExpr::scaled(&[n16], 1, u64::from(BLOCK)),
        ShapeExpr::constant(1),
        ShapeExpr::constant(1),
    ]);
    let lane = b.local_id();
    let wg = b.workgroup_id(Dim::X);
    let block = b.u32(BLOCK);
    let base = b.mul(wg, block);
    let i = b.add(base, lane);
    let n = b.arg(n16);
    let inside = b.lt(i, n);
    b.if_then(inside, |b| {
        let four = b.u32(4);
        let at = b.mul(i, four);
        let v = b.load(src, at, Type::vector(ScalarType::U32, 4));
        b.store(dst, at, v);
    });
    b.finish()
}

/// A package holding [`STREAM_COPY`] for the device (PTX for its arch on cuda, the IR on the
/// cpu device); hip has none.
pub fn stream_copy_package(device: &Device) -> Result<Package, RuntimeError> {
    let ptx = |arch: &str| {
        let ir = stream_copy_ir(32);
        let ptx = STREAM_COPY_PTX.replace("{target}", arch);
        built_in_package(&ir, arch, ObjectFormat::Ptx, ptx.into_bytes())
    };
    match device.kind() {
        // The cpu device runs the IR; the object is for the arch it emulates (an NVIDIA one
        // gets the real PTX, an AMD one a stand-in HSACO), so that the package loads there.
        DeviceKind::Cpu => {
            let arch = device.arch().unwrap_or_else(|| "gfx1100".into());
            match kiln_ir::Target::by_name(&arch).ok() {
                Some(t) if t.vendor == kiln_ir::target::Vendor::Nvidia => ptx(&arch),
                t => {
                    let ir = stream_copy_ir(t.map_or(32, |t| t.default_wave()));
                    let hsaco = kiln_runtime::package::cpu_only_hsaco(&arch, &ir.name);
                    built_in_package(&ir, &arch, ObjectFormat::Hsaco, hsaco)
                }
            }
        }
        DeviceKind::Cuda => ptx(&device.arch().unwrap_or_default()),
        DeviceKind::Hip => Err(DeviceError::Unavailable {
            kind: DeviceKind::Hip,
            reason: "no built-in copy kernel for hip (an HSACO needs LLVM): give the device's \
                     copy bandwidth with --bandwidth GB/s"
                .into(),
        }
        .into()),
    }
}

/// A measured copy bandwidth.
#[derive(Clone, Debug, PartialEq)]
pub struct Bandwidth {
    /// Bytes read plus bytes written a second, in GB/s (1e9 bytes).
    pub gbps: f64,
    /// Bytes one copy copies (it moves twice as many).
    pub bytes: u64,
    /// The median time of one copy, us.
    pub us: f64,
}

/// Copies `bytes` (rounded down to 16-byte vectors, at least one) from one device buffer to
/// another `samples` times after a warm-up copy; the median gives the bandwidth.
pub fn copy_bandwidth(
    device: &Device,
    bytes: u64,
    samples: usize,
) -> Result<Bandwidth, RuntimeError> {
    let pkg = stream_copy_package(device)?;
    let rt = Runtime::load_with(device, &pkg, kiln_runtime::Overrides::none())?;
    let n16 = u32::try_from((bytes / 16).max(1)).unwrap_or(u32::MAX);
    let words = n16 as usize * 4;
    let src = device.alloc(ScalarType::U32, words)?;
    let dst = device.alloc(ScalarType::U32, words)?;
    let args = Args::new().buffer("dst", &dst).buffer("src", &src).scalar("n16", n16);
    rt.launch(STREAM_COPY, &args)?;
    rt.synchronize()?;
    let us = median_us_per_unit(&rt, samples, 1, || rt.launch(STREAM_COPY, &args).map(|_| ()))?;
    let bytes = u64::from(n16) * 16;
    Ok(Bandwidth { gbps: 2.0 * bytes as f64 / (us * 1e3), bytes, us })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_runtime::CpuOptions;

    /// The runtime passes arguments in the IR's parameter order, so the hand-written PTX must
    /// declare them in that order (a swap faulted on the H200: the scalar landed in `p_dst`).
    #[test]
    fn the_ptx_declares_the_irs_parameters_in_order() {
        let entry = STREAM_COPY_PTX.split(".entry").nth(1).unwrap();
        let decl = &entry[..entry.find(')').unwrap()];
        let ptx: Vec<&str> = decl
            .split(".param")
            .skip(1)
            .map(|p| p.split_whitespace().nth(1).unwrap().trim_end_matches(','))
            .collect();
        let ir = stream_copy_ir(32);
        let names: Vec<String> = ir.params.values().map(|p| format!("p_{}", p.name)).collect();
        assert_eq!(ptx, names);
    }

    /// The copy copies (random words, a length that is not a multiple of a workgroup), and the
    /// figure is a positive bandwidth over the bytes copied.
    fn copies_and_measures(dev: &Device, bytes: u64) {
        let pkg = stream_copy_package(dev).unwrap();
        let rt = Runtime::load_with(dev, &pkg, kiln_runtime::Overrides::none()).unwrap();
        let n16 = 300u32;
        let words: Vec<u32> = (0..n16 * 4).map(|i| i.wrapping_mul(0x9e37_79b9) ^ 0x5bd1).collect();
        let src = dev.upload(&words).unwrap();
        let dst = dev.alloc(ScalarType::U32, words.len()).unwrap();
        let args = Args::new().buffer("dst", &dst).buffer("src", &src).scalar("n16", n16);
        rt.launch(STREAM_COPY, &args).unwrap();
        rt.synchronize().unwrap();
        assert_eq!(dst.read::<u32>().unwrap(), words);
        let b = copy_bandwidth(dev, bytes, 3).unwrap();
        assert_eq!(b.bytes, bytes / 16 * 16);
        assert!(b.gbps.is_finite() && b.gbps > 0.0 && b.us > 0.0, "{b:?}");
    }

    #[test]
    fn copies_and_measures_on_cpu() {
        copies_and_measures(&Device::cpu(CpuOptions::default()), 64 << 10);
    }

    /// The cpu device emulating an NVIDIA arch or an AMD one other than the default
    /// (`kiln generate --device cpu --arch sm_90 --profile` measures its floor there).
    #[test]
    fn copies_and_measures_on_cpu_emulating_any_arch() {
        for arch in ["sm_90", "sm_80", "gfx906", "gfx1201"] {
            let opts = CpuOptions { arch: Some(arch.into()), ..CpuOptions::default() };
            copies_and_measures(&Device::cpu(opts), 16 << 10);
        }
    }

    #[test]
    #[ignore = "needs a CUDA GPU: cargo test -p kiln -- --ignored"]
    fn copies_and_measures_on_cuda() {
        copies_and_measures(&Device::cuda(0).expect("a CUDA device"), 1 << 30);
    }

    /// The hand-written PTX assembles, when there is a ptxas (`KILN_PTXAS`).
    #[test]
    fn bench_ptx_assembles() {
        let Some(ptxas) = std::env::var_os("KILN_PTXAS") else {
            eprintln!("not run: KILN_PTXAS is not set (scripts/env.sh sets it)");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let kernels = [
            (STREAM_COPY, STREAM_COPY_PTX),
            (super::super::launch_cost::TRIVIAL, super::super::launch_cost::TRIVIAL_PTX),
        ];
        for (name, ptx) in kernels {
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
