//! The NVPTX back end.
//!
//! # How the IR maps onto this target
//!
//! | IR | NVPTX |
//! |---|---|
//! | kernel | `ptx_kernel` calling convention plus `!nvvm.annotations` `kernel` and no `reqntid`/`maxntid` (with either, ptxas caps registers for an occupancy target and spills) |
//! | buffer param | `ptr addrspace(1) noalias` (+ `readonly` / `writeonly`); distinct buffers must not overlap |
//! | scalar param | `.param` by value |
//! | LDS | one `addrspace(3)` (`.shared`) array |
//! | private | `alloca` (`.local` when not promoted) |
//! | lane / ids | `%laneid`, `%tid.*`, `%ctaid.*`, `%nctaid.*`; wave = linear local id / 32 |
//! | `barrier(Lds)`, `barrier(All)` | `bar.sync 0` (`llvm.nvvm.barrier0`); it orders shared and global memory for the CTA |
//! | fence | `membar.cta` / `fence.acq_rel.gpu` (inline assembly): LLVM 19's NVPTX cannot select IR `fence` instructions |
//! | atomics | `atom.*` (relaxed; LLVM 19 ignores IR orderings and scopes on NVPTX) between two fences of the op's scope, which gives the acquire-release ordering the IR promises |
//! | shuffles | `shfl.sync.{bfly,idx,up,down}.b32` with the full mask (cross-lane ops run on converged waves) |
//! | ballot | `vote.sync.ballot.b32` with `activemask` (ballot counts the active lanes) |
//! | wave reduce, 32-bit integers, sm_80+ | `redux.sync` (integer add / min / max are associative, so the bits equal the butterfly's) |
//! | `mma` | inline PTX `mma.sync.aligned.{m16n8k16,m16n8k32,m16n8k8,m8n8k16}.row.col...` (LLVM 19's NVPTX has no intrinsic for them), registers packed as `kiln_ir::matrix` says |
//! | approximate math | `ex2.approx.f32`, `lg2.approx.f32`, `rsqrt.approx.f32`, `rcp.approx.f32` (inline PTX: LLVM has no non-ftz intrinsic for it) |
//!
//! Exact math: with no fast-math flags LLVM 19 emits `div.rn.f32` and `sqrt.rn.f32` (its
//! `-nvptx-prec-divf32` default is 2, IEEE, and `-nvptx-prec-sqrtf32` defaults to on unless
//! unsafe-fp-math is set, which kiln never sets); `"denormal-fp-math-f32"="ieee,ieee"` keeps `.ftz`
//! off. bf16 `fma.rn.bf16` is used from sm_80 on; sm_75 takes the shared exact software path.
//!
//! PTX ISA 7.8 (`+ptx78`): the lowest that covers sm_90, accepted by CUDA 12 and 13 drivers.

use super::{ApproxFn, EmitError, Emitted, Isa};
use crate::lower::{Bv, LResult, LowerError, Lowering};
use crate::{resources, tools};
use inkwell::attributes::AttributeLoc;
use inkwell::llvm_sys::LLVMOpcode;
use inkwell::module::Module;
use inkwell::targets::{FileType, TargetMachine};
use inkwell::types::{BasicType, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, IntValue, PointerValue};
use inkwell::{AtomicOrdering, AtomicRMWBinOp};
use kiln_ir::matrix::{FragmentRole, MmaKind, MmaLowering};
use kiln_ir::package::ObjectFormat;
use kiln_ir::package::Resources;
use kiln_ir::target::{Capability, DotKind};
use kiln_ir::{AtomicOp, BarrierKind, IdKind, Kernel, ReduceOp, ScalarType, Scope, Target, Type};

/// `ptx_kernel` in LLVM's calling-convention numbering.
const CC_PTX_KERNEL: u32 = 71;

/// The LLVM target features: the PTX ISA version the target table gives the arch.
fn ptx_feature(t: &Target) -> String {
    format!("+ptx{}", t.ptx.map_or(0, |p| p.isa))
}

/// The NVPTX back end.
pub(crate) struct Nvptx;

impl Isa for Nvptx {
    fn target_features(&self, t: &Target, _wave: u32) -> String {
        ptx_feature(t)
    }
    fn setup_kernel(&self, l: &mut Lowering) {
        setup_kernel(l)
    }
    /// On sm_90 and later ([`kiln_ir::Target::waits_for_grid_dependency`]): let the next grid
    /// launch now (`griddepcontrol.launch_dependents`: its workgroups take free slots and wait),
    /// then wait for the grids this one depends on to finish and their memory to be visible
    /// (`griddepcontrol.wait`), before any load or store, unless the kernel places the wait
    /// itself ([`kiln_ir::Op::GridDependencyWait`], after its prefetches). Both are no-ops for a
    /// launch without programmatic serialization, so one object serves both kinds of launch.
    fn kernel_entry(&self, l: &mut Lowering, wait_here: bool) -> LResult<bool> {
        if !l.t.waits_for_grid_dependency() {
            return Ok(false);
        }
        asm_statement(l, "griddepcontrol.launch_dependents;")?;
        if wait_here {
            asm_statement(l, "griddepcontrol.wait;")?;
        }
        Ok(true)
    }
    fn grid_dependency_wait(&self, l: &mut Lowering) -> LResult<()> {
        if l.t.waits_for_grid_dependency() {
            asm_statement(l, "griddepcontrol.wait;")?;
        }
        Ok(())
    }
    /// `prefetch.global.L2` (every NVIDIA arch kiln targets; a hint, no fault on a valid address).
    fn prefetch<'ctx>(&self, l: &mut Lowering<'ctx, '_>, ptr: PointerValue<'ctx>) -> LResult<()> {
        let i64t = l.ctx.i64_type();
        let addr = l.b.build_ptr_to_int(ptr, i64t, "")?;
        let fty = l.ctx.void_type().fn_type(&[i64t.into()], false);
        let asm = l.ctx.create_inline_asm(
            fty,
            "prefetch.global.L2 [$0];".into(),
            "l,~{memory}".into(),
            true,
            false,
            None,
            false,
        );
        l.b.build_indirect_call(fty, asm, &[addr.into()], "")?;
        Ok(())
    }
    /// sm_80 and later: `cp.async` (`.cg`, around L1, for 16 bytes; `.ca` for 4 and 8); before,
    /// a load and a store at once.
    fn async_copy<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        dst: PointerValue<'ctx>,
        src: PointerValue<'ctx>,
        bytes: u32,
    ) -> LResult<()> {
        if l.t.sm().is_none_or(|sm| sm < 80) {
            return l.copy_now(dst, src, bytes);
        }
        let i64t = l.ctx.i64_type();
        let d = l.b.build_ptr_to_int(dst, i64t, "")?;
        let s = l.b.build_ptr_to_int(src, i64t, "")?;
        let fty = l.ctx.void_type().fn_type(&[i64t.into(), i64t.into()], false);
        let cache = if bytes == 16 { "cg" } else { "ca" };
        let asm = l.ctx.create_inline_asm(
            fty,
            format!("cp.async.{cache}.shared.global [$0], [$1], {bytes};"),
            "l,l,~{memory}".into(),
            true,
            false,
            None,
            false,
        );
        l.b.build_indirect_call(fty, asm, &[d.into(), s.into()], "")?;
        Ok(())
    }
    /// `ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16` (sm_75 and later; the verifier
    /// refuses it before): one `b32` register a matrix, element 0 in the low bits.
    fn ld_matrix<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        row: PointerValue<'ctx>,
        matrices: u32,
        trans: bool,
        ty: Type,
    ) -> LResult<Bv<'ctx>> {
        let i64t = l.ctx.i64_type();
        let i32t = l.i32t();
        let a = l.b.build_ptr_to_int(row, i64t, "")?;
        let n = matrices as usize;
        let outs: Vec<String> = (0..n).map(|i| format!("${i}")).collect();
        let text = format!(
            "ldmatrix.sync.aligned.m8n8.x{n}{}.shared.b16 {{{}}}, [${n}];",
            if trans { ".trans" } else { "" },
            outs.join(", ")
        );
        let mut cons = vec!["=r"; n];
        cons.push("l");
        cons.push("~{memory}");
        let ret: BasicTypeEnum<'ctx> = if n == 1 {
            i32t.into()
        } else {
            l.ctx.struct_type(&vec![i32t.into(); n], false).into()
        };
        let fty = ret.fn_type(&[i64t.into()], false);
        let asm = l.ctx.create_inline_asm(fty, text, cons.join(","), true, false, None, false);
        let r = l.b.build_indirect_call(fty, asm, &[a.into()], "")?;
        let convergent = inkwell::attributes::Attribute::get_named_enum_kind_id("convergent");
        r.add_attribute(AttributeLoc::Function, l.ctx.create_enum_attribute(convergent, 0));
        let r = r
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| LowerError::Llvm("IR building", "ldmatrix asm".into()))?;
        let mut words = i32t.vec_type(matrices).get_poison();
        for i in 0..matrices {
            let w = if n == 1 {
                r.into_int_value()
            } else {
                l.b.build_extract_value(r.into_struct_value(), i, "")?.into_int_value()
            };
            words = l.b.build_insert_element(words, w, l.i32c(i), "")?;
        }
        Ok(l.cast(LLVMOpcode::LLVMBitCast, words.into(), l.ty(ty)))
    }
    /// sm_80 and later: `cp.async.commit_group` then `cp.async.wait_group`; before, nothing.
    fn async_wait(&self, l: &mut Lowering, pending: u32) -> LResult<()> {
        if l.t.sm().is_none_or(|sm| sm < 80) {
            return Ok(());
        }
        asm_statement(l, &format!("cp.async.commit_group;\n\tcp.async.wait_group {pending};"))
    }
    /// The NVPTX helpers refer to no metadata.
    fn helper_metadata(&self) -> &'static str {
        ""
    }
    fn private_address_space(&self) -> u16 {
        0
    }
    fn id<'ctx>(&self, l: &mut Lowering<'ctx, '_>, kind: IdKind) -> LResult<IntValue<'ctx>> {
        id(l, kind)
    }
    /// `bar.sync 0` orders shared and global memory, so both kinds are the same barrier.
    fn barrier(&self, l: &mut Lowering, kind: BarrierKind) -> LResult<()> {
        match kind {
            BarrierKind::Lds | BarrierKind::All => {
                l.intrinsic("llvm.nvvm.barrier0", &[], &[])?;
            }
        }
        Ok(())
    }
    fn fence(&self, l: &mut Lowering, scope: Scope) -> LResult<()> {
        fence(l, scope)
    }
    fn atomic<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        op: AtomicOp,
        ptr: PointerValue<'ctx>,
        space: u16,
        v: Bv<'ctx>,
        ty: Type,
        scope: Scope,
    ) -> LResult<Bv<'ctx>> {
        atomic(l, op, ptr, space, v, ty, scope)
    }
    fn approx<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        f: ApproxFn,
        x: Bv<'ctx>,
    ) -> LResult<Bv<'ctx>> {
        approx(l, f, x)
    }
    fn shuffle_xor<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        x: IntValue<'ctx>,
        mask: u32,
    ) -> LResult<IntValue<'ctx>> {
        let m = l.i32c(mask);
        shfl(l, "bfly", x, m, 0x1f)
    }
    fn shuffle_idx<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        x: IntValue<'ctx>,
        src: IntValue<'ctx>,
    ) -> LResult<IntValue<'ctx>> {
        shfl(l, "idx", x, src, 0x1f)
    }
    /// `shfl.up` leaves lanes below the offset with their own value, as the IR says.
    fn shuffle_up<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        x: IntValue<'ctx>,
        off: u32,
    ) -> LResult<IntValue<'ctx>> {
        let o = l.i32c(off);
        shfl(l, "up", x, o, 0)
    }
    /// `shfl.down` leaves lanes past the end with their own value, as the IR says.
    fn shuffle_down<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        x: IntValue<'ctx>,
        off: u32,
    ) -> LResult<IntValue<'ctx>> {
        let o = l.i32c(off);
        shfl(l, "down", x, o, 0x1f)
    }
    fn broadcast<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        x: IntValue<'ctx>,
        lane: u32,
    ) -> LResult<IntValue<'ctx>> {
        let s = l.i32c(lane);
        shfl(l, "idx", x, s, 0x1f)
    }
    fn ballot<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        cond: IntValue<'ctx>,
    ) -> LResult<IntValue<'ctx>> {
        let active = l.intrinsic_v("llvm.nvvm.activemask", &[], &[])?;
        let m = l.intrinsic_v("llvm.nvvm.vote.ballot.sync", &[], &[active, cond.into()])?;
        let i64t: BasicTypeEnum = l.ctx.i64_type().into();
        Ok(l.cast(LLVMOpcode::LLVMZExt, m, i64t).into_int_value())
    }
    fn wave_reduce<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        op: ReduceOp,
        v: Bv<'ctx>,
        ty: Type,
    ) -> LResult<Option<Bv<'ctx>>> {
        redux(l, op, v, ty)
    }
    /// Inline PTX `mma.sync` of [`MmaKind::lowering`]: A and B bitcast to their `.b32`
    /// registers, C and D one `.f32` / `.s32` register an element.
    fn mma<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        kind: MmaKind,
        a: Bv<'ctx>,
        b: Bv<'ctx>,
        c: Bv<'ctx>,
    ) -> LResult<Bv<'ctx>> {
        mma(l, kind, a, b, c)
    }
    /// Inline PTX `dp4a` with the table's type suffixes (LLVM 19 has no dp4a intrinsic); no f16
    /// pair dot on NVIDIA (the exact `dot f16` is two fma in the shared lowering).
    fn dot<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        kind: DotKind,
        a: Bv<'ctx>,
        b: Bv<'ctx>,
        acc: Bv<'ctx>,
    ) -> LResult<Bv<'ctx>> {
        let instr = super::dot_instr(l, kind)?;
        let i32t = l.ctx.i32_type();
        let fty = i32t.fn_type(&[i32t.into(), i32t.into(), i32t.into()], false);
        let asm = l.ctx.create_inline_asm(
            fty,
            format!("{} $0, $1, $2, $3;", instr.lowering),
            "=r,r,r,r".into(),
            false,
            false,
            None,
            false,
        );
        let r = l.b.build_indirect_call(fty, asm, &[a.into(), b.into(), acc.into()], "")?;
        r.try_as_basic_value()
            .basic()
            .ok_or_else(|| LowerError::Llvm("IR building", "dp4a asm".into()))
    }

    /// PTX requires every `ld`/`st` to be naturally aligned, and LLVM 19 selects a 2-byte
    /// aligned `<16 x i8>` load from a read-only parameter as a misaligned
    /// `ld.global.nc.v4.u32` (it does not split it), so the lowering splits.
    fn splits_underaligned_access(&self) -> bool {
        true
    }
    /// PTX text; resources from `ptxas -v` where a ptxas is found.
    fn emit(
        &self,
        tm: &TargetMachine,
        module: &Module,
        k: &Kernel,
        t: &Target,
        emit_asm: bool,
    ) -> Result<Emitted, EmitError> {
        let ptx = tm
            .write_to_memory_buffer(module, FileType::Assembly)
            .map(|b| b.as_slice().to_vec())
            .map_err(|e| EmitError::Llvm(e.to_string()))?;
        let resources = match tools::find_ptxas() {
            Some(ptxas) => {
                let file = tools::TempFile::new(".ptx");
                std::fs::write(&file.0, &ptx).map_err(|e| {
                    EmitError::Tool("ptxas", format!("writing {}: {e}", file.0.display()))
                })?;
                resources::ptxas_resources(ptxas, &file.0, t.name, k.wave_size)
                    .map_err(|m| EmitError::Tool("ptxas", m))?
            }
            None => unmeasured_resources(k),
        };
        let asm = emit_asm.then(|| String::from_utf8_lossy(&ptx).into_owned());
        Ok(Emitted { format: ObjectFormat::Ptx, bytes: ptx, asm, resources })
    }
}

/// Resources when no ptxas is there to measure them.
fn unmeasured_resources(k: &Kernel) -> Resources {
    Resources {
        lds_bytes: k.lds_bytes(),
        wave_size: k.wave_size,
        source: "not measured (no ptxas)".into(),
        ..Resources::default()
    }
}

fn setup_kernel(l: &mut Lowering) {
    let f = l.func;
    f.set_call_conventions(CC_PTX_KERNEL);
    for (k, v) in [("target-cpu", l.t.name.to_string()), ("target-features", ptx_feature(l.t))] {
        f.add_attribute(AttributeLoc::Function, l.ctx.create_string_attribute(k, &v));
    }
    let fptr: BasicMetadataValueEnum = f.as_global_value().as_pointer_value().into();
    // Only `kernel`: with `.reqntid` or `.maxntid` ptxas caps the registers for an occupancy
    // target of its own and spills (the GEMV: 4-8 bytes at 40-80 registers); without, it
    // allocates what the code needs. The runtime launches the static workgroup size and refuses a
    // kernel whose registers cannot hold it.
    let mut entries = vec![("kernel", 1)];
    if let Some(cap) = l.k.max_registers {
        entries.push(("maxnreg", cap));
    }
    for (key, n) in entries {
        let node =
            l.ctx.metadata_node(&[fptr, l.ctx.metadata_string(key).into(), l.i32c(n).into()]);
        l.module.add_global_metadata("nvvm.annotations", &node).expect("a node is metadata");
    }
}

fn sreg<'ctx>(l: &mut Lowering<'ctx, '_>, name: &str) -> LResult<IntValue<'ctx>> {
    Ok(l.intrinsic_v(&format!("llvm.nvvm.read.ptx.sreg.{name}"), &[], &[])?.into_int_value())
}

fn id<'ctx>(l: &mut Lowering<'ctx, '_>, kind: IdKind) -> LResult<IntValue<'ctx>> {
    let k = l.k;
    Ok(match kind {
        IdKind::Lane => sreg(l, "laneid")?,
        IdKind::Wave => {
            let lin = id(l, IdKind::LocalLinear)?;
            l.b.build_right_shift(lin, l.i32c(5), false, "")?
        }
        IdKind::NumWaves => l.i32c(k.waves_per_workgroup()),
        IdKind::WaveSize => l.i32c(32),
        IdKind::LocalId(d) if k.workgroup_size[d.index()] == 1 => l.i32c(0),
        IdKind::LocalId(d) => sreg(l, &format!("tid.{}", d.name()))?,
        IdKind::LocalLinear => l.local_linear()?,
        IdKind::WorkgroupId(d) => sreg(l, &format!("ctaid.{}", d.name()))?,
        IdKind::WorkgroupSize(d) => l.i32c(k.workgroup_size[d.index()]),
        IdKind::NumWorkgroups(d) => sreg(l, &format!("nctaid.{}", d.name()))?,
    })
}

fn fence(l: &mut Lowering, scope: Scope) -> LResult<()> {
    match scope {
        Scope::Workgroup => {
            l.intrinsic("llvm.nvvm.membar.cta", &[], &[])?;
        }
        // `fence.acq_rel.gpu`, not `membar.gl` (= `fence.sc.gpu`): the IR promises
        // acquire-release ordering, and the sequentially consistent fence costs about 50 ns a
        // workgroup of the last-workgroup handshake on the H200 (a 1024-workgroup GEMV with one
        // handshake a workgroup took 53 us longer; bench/results/pipeline-h200-2026-12-02.md).
        Scope::Device => {
            let fty = l.ctx.void_type().fn_type(&[], false);
            let asm = l.ctx.create_inline_asm(
                fty,
                "fence.acq_rel.gpu;".into(),
                "~{memory}".into(),
                true,
                false,
                None,
                false,
            );
            l.b.build_indirect_call(fty, asm, &[], "")?;
        }
    }
    Ok(())
}

/// A device-scope atomic on global memory is one `atom.acq_rel.gpu.global` (sm_70+): ptxas
/// gives `MEMBAR.ALL.GPU`, the atomic and `CCTL.IVALL` (the L1 invalidation of the acquire),
/// where a fence each side (what other scopes and spaces take: LLVM 19 lowers an
/// `atomicrmw`'s ordering on NVPTX to nothing) adds a second `MEMBAR.ALL.GPU` after the
/// atomic, on the last-workgroup handshake's path.
fn atomic<'ctx>(
    l: &mut Lowering<'ctx, '_>,
    op: AtomicOp,
    ptr: PointerValue<'ctx>,
    space: u16,
    v: Bv<'ctx>,
    ty: Type,
    scope: Scope,
) -> LResult<Bv<'ctx>> {
    let signed = ty.scalar.is_signed();
    let bits = ty.scalar.bits();
    if space == crate::lower::AS_GLOBAL && scope == Scope::Device {
        let (name, kind) = match op {
            AtomicOp::Add => ("add", 'u'),
            AtomicOp::Min => ("min", if signed { 's' } else { 'u' }),
            AtomicOp::Max => ("max", if signed { 's' } else { 'u' }),
            AtomicOp::Exchange => ("exch", 'b'),
            AtomicOp::And => ("and", 'b'),
            AtomicOp::Or => ("or", 'b'),
        };
        let it = l.int_type(bits);
        let i64t = l.ctx.i64_type();
        let fty = it.fn_type(&[i64t.into(), it.into()], false);
        let reg = if bits == 64 { 'l' } else { 'r' };
        let asm = l.ctx.create_inline_asm(
            fty,
            format!("atom.acq_rel.gpu.global.{name}.{kind}{bits} $0, [$1], $2;"),
            format!("={reg},l,{reg},~{{memory}}"),
            true,
            false,
            None,
            false,
        );
        let addr = l.b.build_ptr_to_int(ptr, i64t, "")?;
        let r = l.b.build_indirect_call(fty, asm, &[addr.into(), v.into()], "")?;
        return r
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| LowerError::Llvm("IR building", "atom asm".into()));
    }
    let rmw = match op {
        AtomicOp::Add => AtomicRMWBinOp::Add,
        AtomicOp::Min if signed => AtomicRMWBinOp::Min,
        AtomicOp::Max if signed => AtomicRMWBinOp::Max,
        AtomicOp::Min => AtomicRMWBinOp::UMin,
        AtomicOp::Max => AtomicRMWBinOp::UMax,
        AtomicOp::Exchange => AtomicRMWBinOp::Xchg,
        AtomicOp::And => AtomicRMWBinOp::And,
        AtomicOp::Or => AtomicRMWBinOp::Or,
    };
    fence(l, scope)?;
    let r = l.b.build_atomicrmw(rmw, ptr, v.into_int_value(), AtomicOrdering::Monotonic)?;
    fence(l, scope)?;
    Ok(r.into())
}

fn approx<'ctx>(l: &mut Lowering<'ctx, '_>, f: ApproxFn, x: Bv<'ctx>) -> LResult<Bv<'ctx>> {
    let name = match f {
        ApproxFn::Exp2 => "llvm.nvvm.ex2.approx.f",
        ApproxFn::Log2 => "llvm.nvvm.lg2.approx.f",
        ApproxFn::Rsqrt => "llvm.nvvm.rsqrt.approx.f",
        ApproxFn::Rcp => {
            let f32t = l.ctx.f32_type();
            let fty = f32t.fn_type(&[f32t.into()], false);
            let asm = l.ctx.create_inline_asm(
                fty,
                "rcp.approx.f32 $0, $1;".into(),
                "=f,f".into(),
                false,
                false,
                None,
                false,
            );
            let r = l.b.build_indirect_call(fty, asm, &[x.into()], "")?;
            return r
                .try_as_basic_value()
                .basic()
                .ok_or_else(|| LowerError::Llvm("IR building", "rcp asm".into()));
        }
    };
    l.intrinsic_v(name, &[], &[x])
}

fn shfl<'ctx>(
    l: &mut Lowering<'ctx, '_>,
    kind: &str,
    x: IntValue<'ctx>,
    b: IntValue<'ctx>,
    c: u32,
) -> LResult<IntValue<'ctx>> {
    let name = format!("llvm.nvvm.shfl.sync.{kind}.i32");
    let args = [l.i32c(u32::MAX).into(), x.into(), b.into(), l.i32c(c).into()];
    Ok(l.intrinsic_v(&name, &[], &args)?.into_int_value())
}

/// `redux.sync` for 32-bit integer reductions on sm_80+; `None` where the butterfly is needed.
fn redux<'ctx>(
    l: &mut Lowering<'ctx, '_>,
    op: ReduceOp,
    v: Bv<'ctx>,
    ty: Type,
) -> LResult<Option<Bv<'ctx>>> {
    let int32 = matches!(ty.scalar, ScalarType::I32 | ScalarType::U32) && ty.lanes == 1;
    if !int32 || !l.t.has(Capability::ReduxSync) {
        return Ok(None);
    }
    let signed = ty.scalar.is_signed();
    let name = match op {
        ReduceOp::Add => "llvm.nvvm.redux.sync.add",
        ReduceOp::Min if signed => "llvm.nvvm.redux.sync.min",
        ReduceOp::Max if signed => "llvm.nvvm.redux.sync.max",
        ReduceOp::Min => "llvm.nvvm.redux.sync.umin",
        ReduceOp::Max => "llvm.nvvm.redux.sync.umax",
    };
    Ok(Some(l.intrinsic_v(name, &[], &[v, l.i32c(u32::MAX).into()])?))
}

fn mma<'ctx>(
    l: &mut Lowering<'ctx, '_>,
    kind: MmaKind,
    a: Bv<'ctx>,
    b: Bv<'ctx>,
    c: Bv<'ctx>,
) -> LResult<Bv<'ctx>> {
    let MmaLowering::Ptx { instruction } = kind.lowering() else {
        return Err(LowerError::Invalid(format!("{kind} is not a PTX matrix instruction")));
    };
    let shape = kind.shape();
    let i32t = l.i32t();
    // A and B: `count` b32 registers, element 0 in the low bits (a little-endian bitcast).
    let regs = |l: &mut Lowering<'ctx, '_>, v: Bv<'ctx>, role| -> LResult<Vec<Bv<'ctx>>> {
        let n = shape.registers(role).count;
        let packed =
            l.cast(LLVMOpcode::LLVMBitCast, v, i32t.vec_type(n).into()).into_vector_value();
        (0..n)
            .map(|i| Ok(l.b.build_extract_element(packed, l.i32c(i), "")?))
            .collect::<LResult<Vec<_>>>()
    };
    let ra = regs(l, a, FragmentRole::A)?;
    let rb = regs(l, b, FragmentRole::B)?;
    let cr = shape.registers(FragmentRole::C);
    let cv = c.into_vector_value();
    let rc = (0..cr.count)
        .map(|i| Ok(l.b.build_extract_element(cv, l.i32c(i), "")?))
        .collect::<LResult<Vec<_>>>()?;
    let float = cr.llvm_type == "float";
    let cty: BasicTypeEnum<'ctx> = if float { l.ctx.f32_type().into() } else { i32t.into() };
    let (dcon, ccon) = if float { ("=f", "f") } else { ("=r", "r") };
    let nd = cr.count as usize;
    let mut next = 0usize;
    let mut group = |n: usize| {
        let g: Vec<String> = (next..next + n).map(|i| format!("${i}")).collect();
        next += n;
        format!("{{{}}}", g.join(", "))
    };
    let text = format!(
        "{instruction} {}, {}, {}, {};",
        group(nd),
        group(ra.len()),
        group(rb.len()),
        group(rc.len())
    );
    let mut cons: Vec<&str> = vec![dcon; nd];
    cons.extend(std::iter::repeat_n("r", ra.len() + rb.len()));
    cons.extend(std::iter::repeat_n(ccon, rc.len()));
    let ret = l.ctx.struct_type(&vec![cty; nd], false);
    let params: Vec<_> = ra.iter().chain(&rb).chain(&rc).map(|v| v.get_type().into()).collect();
    let fty = ret.fn_type(&params, false);
    let asm = l.ctx.create_inline_asm(fty, text, cons.join(","), false, false, None, false);
    let args: Vec<_> = ra.iter().chain(&rb).chain(&rc).map(|v| (*v).into()).collect();
    let r = l.b.build_indirect_call(fty, asm, &args, "")?;
    // Every lane of the warp must run it together: LLVM must not move it into divergent code.
    let convergent = inkwell::attributes::Attribute::get_named_enum_kind_id("convergent");
    r.add_attribute(AttributeLoc::Function, l.ctx.create_enum_attribute(convergent, 0));
    let r = r
        .try_as_basic_value()
        .basic()
        .ok_or_else(|| LowerError::Llvm("IR building", "mma asm".into()))?
        .into_struct_value();
    let mut d = cv.get_type().get_poison();
    for i in 0..nd as u32 {
        let x = l.b.build_extract_value(r, i, "")?;
        d = l.b.build_insert_element(d, x, l.i32c(i), "")?;
    }
    Ok(d.into())
}

/// An inline PTX statement without operands that orders memory (`~{memory}`).
fn asm_statement(l: &mut Lowering, text: &str) -> LResult<()> {
    let fty = l.ctx.void_type().fn_type(&[], false);
    let asm =
        l.ctx.create_inline_asm(fty, text.into(), "~{memory}".into(), true, false, None, false);
    l.b.build_indirect_call(fty, asm, &[], "")?;
    Ok(())
}
