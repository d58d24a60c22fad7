//! The AMDGPU back end.
//!
//! # How the IR maps onto this target
//!
//! | IR | AMDGPU |
//! |---|---|
//! | kernel | `amdgpu_kernel`, `"amdgpu-flat-work-group-size"="N,N"`, `+wavefrontsize32/64` (target machine and function) |
//! | buffer param | `ptr addrspace(1) noalias` (+ `readonly` / `writeonly` from the access); distinct buffers of one launch must not overlap |
//! | scalar param | by value in the kernarg segment, natural alignment |
//! | LDS | one `addrspace(3)` array laid out as `Kernel::lds_offsets` |
//! | private | `alloca` in `addrspace(5)` (scratch if it is not promoted to registers) |
//! | lane | `mbcnt.lo(~0, 0)` (wave 32), `mbcnt.hi(~0, mbcnt.lo(~0, 0))` (wave 64) |
//! | wave | `readfirstlane(local_linear >> log2 W)`, so it lives in an SGPR |
//! | local / workgroup id | `workitem.id.*`, `workgroup.id.*` |
//! | number of workgroups | the HSA dispatch packet (`dispatch.ptr`: `grid_size` / static workgroup size, rounded up): no hidden kernel arguments, so any HSA runtime works |
//! | `barrier(Lds)` | `fence syncscope("workgroup") release, !mmra !{"amdgpu-as", "local"}`; `s.barrier`; the same fence `acquire` -> gfx12 `s_wait_dscnt 0; s_barrier_signal -1; s_barrier_wait -1`, gfx11 `s_waitcnt lgkmcnt(0); s_barrier`, no `global_inv` / `buffer_gl0_inv` |
//! | `barrier(All)` | the same with plain workgroup fences (global memory is ordered too) |
//! | fence / atomics | `syncscope("workgroup")` / `syncscope("agent")`, acq_rel |
//! | shuffle xor, gfx10+ | DPP `row_xmask` (mask < 16), `v_permlanex16` (16..31), `v_permlane64` for 32 in wave 64 on gfx11+; on gfx10 wave 64, 32 is a readlane/writelane swap (no LDS) |
//! | shuffle xor, gfx9 | DPP `quad_perm` (mask < 4), `ds_swizzle` xor mode (4..31), `ds_bpermute` (32..63): `ds_swizzle` and `ds_bpermute` use the LDS crossbar, not LDS memory |
//! | shuffle idx / up / down | `ds_bpermute`; RDNA wave 64 (where it stays inside a 32-lane half) also reads the swapped halves and selects |
//! | broadcast / ballot | `readlane` / `ballot.i32` or `ballot.i64` |
//! | approximate math | `amdgcn.exp2`, `amdgcn.log`, `amdgcn.rsq`, `amdgcn.rcp` (`v_exp_f32`, `v_log_f32`, `v_rsq_f32`, `v_rcp_f32`) |
//! | `mma` | `amdgcn.wmma.*` (gfx11, gfx12; wave 32) / `amdgcn.mfma.*` (gfx90a, gfx942; wave 64), named by `kiln_ir::matrix` |
//!
//! LLVM 19 spells the memory-model tag `amdgpu-as` (DESIGN.md writes the later name
//! `amdgpu-synchronize-as`; LLVM 19 ignores that one and would emit `global_inv` / `buffer_gl0_inv`).
//!
//! The HSACO is LLVM's relocatable object linked with `ld.lld -shared`.

use super::{ApproxFn, EmitError, Emitted, Isa};
use crate::lower::{Bv, LResult, LowerError, Lowering};
use crate::tools::{find_ld_lld, TempFile};
use inkwell::attributes::AttributeLoc;
use inkwell::llvm_sys::{LLVMIntPredicate, LLVMOpcode};
use inkwell::module::Module;
use inkwell::targets::{FileType, TargetMachine};
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValue;
use inkwell::values::{IntValue, PointerValue};
use inkwell::AddressSpace as LlvmAs;
use kiln_ir::matrix::{AmdMmaOperands, FragmentRole, MmaKind, MmaLowering};
use kiln_ir::package::ObjectFormat;
use kiln_ir::target::{Capability, DotKind, Family};
use kiln_ir::{AtomicOp, BarrierKind, Dim, IdKind, Kernel, ReduceOp, Scope, Target, Type};
use std::process::Command;

/// `amdgpu_kernel` in LLVM's calling-convention numbering.
const CC_AMDGPU_KERNEL: u32 = 91;

/// The metadata node the LDS-only fences refer to (appended to the helper module).
const MMRA_LDS_DEF: &str = "!0 = !{!\"amdgpu-as\", !\"local\"}\n";

/// The AMDGPU back end.
pub(crate) struct AmdGpu;

impl Isa for AmdGpu {
    fn target_features(&self, _t: &Target, wave: u32) -> String {
        format!("+wavefrontsize{wave}")
    }
    fn setup_kernel(&self, l: &mut Lowering) {
        setup_kernel(l)
    }
    /// AMD has no programmatic dependent launch: nothing at entry.
    fn kernel_entry(&self, _l: &mut Lowering, _wait_here: bool) -> LResult<bool> {
        Ok(false)
    }
    /// Nothing to wait for (see [`Self::kernel_entry`]).
    fn grid_dependency_wait(&self, _l: &mut Lowering) -> LResult<()> {
        Ok(())
    }
    /// A hint kiln does not use on AMD yet (gfx12's `s_prefetch_data` is not wired): nothing.
    fn prefetch<'ctx>(&self, _l: &mut Lowering<'ctx, '_>, _ptr: PointerValue<'ctx>) -> LResult<()> {
        Ok(())
    }
    fn helper_metadata(&self) -> &'static str {
        MMRA_LDS_DEF
    }
    fn private_address_space(&self) -> u16 {
        5
    }
    fn id<'ctx>(&self, l: &mut Lowering<'ctx, '_>, kind: IdKind) -> LResult<IntValue<'ctx>> {
        id(l, kind)
    }
    fn barrier(&self, l: &mut Lowering, kind: BarrierKind) -> LResult<()> {
        barrier(l, kind)
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
        let name = match f {
            ApproxFn::Exp2 => "llvm.amdgcn.exp2",
            ApproxFn::Log2 => "llvm.amdgcn.log",
            ApproxFn::Rsqrt => "llvm.amdgcn.rsq",
            ApproxFn::Rcp => "llvm.amdgcn.rcp",
        };
        l.intrinsic_v(name, &[x.get_type()], &[x])
    }
    fn shuffle_xor<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        x: IntValue<'ctx>,
        mask: u32,
    ) -> LResult<IntValue<'ctx>> {
        shuffle_xor(l, x, mask)
    }
    fn shuffle_idx<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        x: IntValue<'ctx>,
        src: IntValue<'ctx>,
    ) -> LResult<IntValue<'ctx>> {
        shuffle_idx(l, x, src)
    }
    /// Lane i reads i - off through `shuffle_idx`; lanes below `off` read themselves.
    fn shuffle_up<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        x: IntValue<'ctx>,
        off: u32,
    ) -> LResult<IntValue<'ctx>> {
        let lane = id(l, IdKind::Lane)?;
        let ge = l.icmp(LLVMIntPredicate::LLVMIntUGE, lane.into(), l.i32c(off).into());
        let src = l.b.build_int_sub(lane, l.i32c(off), "")?;
        let src = l.select(ge, src.into(), lane.into()).into_int_value();
        shuffle_idx(l, x, src)
    }
    /// Lane i reads i + off through `shuffle_idx`; lanes at or past `wave - off` read themselves.
    fn shuffle_down<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        x: IntValue<'ctx>,
        off: u32,
    ) -> LResult<IntValue<'ctx>> {
        let lane = id(l, IdKind::Lane)?;
        let lt =
            l.icmp(LLVMIntPredicate::LLVMIntULT, lane.into(), l.i32c(l.k.wave_size - off).into());
        let src = l.b.build_int_add(lane, l.i32c(off), "")?;
        let src = l.select(lt, src.into(), lane.into()).into_int_value();
        shuffle_idx(l, x, src)
    }
    fn broadcast<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        x: IntValue<'ctx>,
        lane: u32,
    ) -> LResult<IntValue<'ctx>> {
        let i32t: BasicTypeEnum = l.i32t().into();
        Ok(l.intrinsic_v("llvm.amdgcn.readlane", &[i32t], &[x.into(), l.i32c(lane).into()])?
            .into_int_value())
    }
    fn ballot<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        cond: IntValue<'ctx>,
    ) -> LResult<IntValue<'ctx>> {
        let i64t: BasicTypeEnum = l.ctx.i64_type().into();
        if wave64(l) {
            return Ok(l
                .intrinsic_v("llvm.amdgcn.ballot", &[i64t], &[cond.into()])?
                .into_int_value());
        }
        let m = l.intrinsic_v("llvm.amdgcn.ballot", &[l.i32t().into()], &[cond.into()])?;
        Ok(l.cast(LLVMOpcode::LLVMZExt, m, i64t).into_int_value())
    }
    /// No native reduction whose bits are the butterfly's: DPP reductions are the butterfly.
    fn wave_reduce<'ctx>(
        &self,
        _l: &mut Lowering<'ctx, '_>,
        _op: ReduceOp,
        _v: Bv<'ctx>,
        _ty: Type,
    ) -> LResult<Option<Bv<'ctx>>> {
        Ok(None)
    }
    /// The WMMA / MFMA intrinsic of [`MmaKind::lowering`], the multiplicands bitcast to the
    /// intrinsic's operand types (`<16 x i8>` to `<4 x i32>`, `<4 x i8>` to `i32`...).
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
    /// The table's intrinsic (`llvm.amdgcn.sdot4`, `udot4`, `sudot4`, `fdot2`), clamp off so
    /// integer sums wrap.
    fn dot<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        kind: DotKind,
        a: Bv<'ctx>,
        b: Bv<'ctx>,
        acc: Bv<'ctx>,
    ) -> LResult<Bv<'ctx>> {
        let instr = super::dot_instr(l, kind)?;
        let flag = |on: bool| l.ctx.bool_type().const_int(on as u64, false).into();
        let args = match kind {
            DotKind::I8 | DotKind::U8 | DotKind::F16 => vec![a, b, acc, flag(false)],
            // (a signed, a, b signed, b, acc, clamp).
            DotKind::I8U8 => vec![flag(true), a, flag(false), b, acc, flag(false)],
        };
        l.intrinsic_v(instr.lowering, &[], &args)
    }

    /// The HSA ABI runs in unaligned access mode (LLVM turns `unaligned-access-mode` on for
    /// amdhsa): global accesses may be unaligned, and LLVM splits LDS and private ones where the
    /// subtarget needs it, so the under-aligned access goes to LLVM as it is.
    fn splits_underaligned_access(&self) -> bool {
        false
    }
    /// The relocatable object linked into an HSACO; resources from its metadata note.
    fn emit(
        &self,
        tm: &TargetMachine,
        module: &Module,
        k: &Kernel,
        _t: &Target,
        emit_asm: bool,
    ) -> Result<Emitted, EmitError> {
        let gen = |m: &Module, ft: FileType| {
            tm.write_to_memory_buffer(m, ft)
                .map(|b| b.as_slice().to_vec())
                .map_err(|e| EmitError::Llvm(e.to_string()))
        };
        // Code generation rewrites the module, so the assembly is made from a copy.
        let asm = if emit_asm {
            Some(String::from_utf8_lossy(&gen(&module.clone(), FileType::Assembly)?).into_owned())
        } else {
            None
        };
        let obj = gen(module, FileType::Object)?;
        let bytes = link_hsaco(&obj).map_err(|m| EmitError::Tool("ld.lld", m))?;
        let resources =
            crate::resources::amdgpu_resources(&bytes, &k.name).map_err(EmitError::Object)?;
        Ok(Emitted { format: ObjectFormat::Hsaco, bytes, asm, resources })
    }
}

fn setup_kernel(l: &mut Lowering) {
    let f = l.func;
    f.set_call_conventions(CC_AMDGPU_KERNEL);
    let n = l.k.workgroup_lanes();
    let attrs = [
        ("amdgpu-flat-work-group-size", format!("{n},{n}")),
        ("target-cpu", l.t.name.to_string()),
        ("target-features", AmdGpu.target_features(l.t, l.k.wave_size)),
        ("uniform-work-group-size", "true".to_string()),
    ];
    for (k, v) in attrs {
        f.add_attribute(AttributeLoc::Function, l.ctx.create_string_attribute(k, &v));
    }
    if let Some(cap) = l.k.max_registers {
        let v = cap.to_string();
        f.add_attribute(
            AttributeLoc::Function,
            l.ctx.create_string_attribute("amdgpu-num-vgpr", &v),
        );
    }
}

fn wave64(l: &Lowering) -> bool {
    l.k.wave_size == 64
}

fn id<'ctx>(l: &mut Lowering<'ctx, '_>, kind: IdKind) -> LResult<IntValue<'ctx>> {
    let k = l.k;
    let dimname = |d: Dim| d.name();
    Ok(match kind {
        IdKind::Lane => {
            let lo = l.intrinsic_v(
                "llvm.amdgcn.mbcnt.lo",
                &[],
                &[l.i32c(u32::MAX).into(), l.i32c(0).into()],
            )?;
            if wave64(l) {
                l.intrinsic_v("llvm.amdgcn.mbcnt.hi", &[], &[l.i32c(u32::MAX).into(), lo])?
                    .into_int_value()
            } else {
                lo.into_int_value()
            }
        }
        IdKind::Wave => {
            let lin = id(l, IdKind::LocalLinear)?;
            let w = l.b.build_right_shift(lin, l.i32c(k.wave_size.trailing_zeros()), false, "")?;
            l.intrinsic_v("llvm.amdgcn.readfirstlane", &[l.i32t().into()], &[w.into()])?
                .into_int_value()
        }
        IdKind::NumWaves => l.i32c(k.waves_per_workgroup()),
        IdKind::WaveSize => l.i32c(k.wave_size),
        IdKind::LocalId(d) => {
            if k.workgroup_size[d.index()] == 1 {
                l.i32c(0)
            } else {
                let name = format!("llvm.amdgcn.workitem.id.{}", dimname(d));
                l.intrinsic_v(&name, &[], &[])?.into_int_value()
            }
        }
        IdKind::LocalLinear => l.local_linear()?,
        IdKind::WorkgroupId(d) => {
            let name = format!("llvm.amdgcn.workgroup.id.{}", dimname(d));
            l.intrinsic_v(&name, &[], &[])?.into_int_value()
        }
        IdKind::WorkgroupSize(d) => l.i32c(k.workgroup_size[d.index()]),
        IdKind::NumWorkgroups(d) => {
            // hsa_kernel_dispatch_packet_t: grid_size_x/y/z are u32 at byte 12/16/20, in work-items.
            let packet = l.intrinsic_v("llvm.amdgcn.dispatch.ptr", &[], &[])?.into_pointer_value();
            // SAFETY: a constant offset inside the 64-byte dispatch packet.
            let p = unsafe {
                l.b.build_in_bounds_gep(
                    l.ctx.i8_type(),
                    packet,
                    &[l.i32c(12 + 4 * d.index() as u32)],
                    "",
                )?
            };
            let g = l.b.build_load(l.i32t(), p, "grid_size")?;
            if let Some(i) = g.as_instruction_value() {
                let _ = i.set_alignment(4);
            }
            let wg = k.workgroup_size[d.index()];
            let g = l.b.build_int_add(g.into_int_value(), l.i32c(wg - 1), "")?;
            l.b.build_int_unsigned_div(g, l.i32c(wg), "")?
        }
    })
}

fn sync_scope(scope: Scope) -> &'static str {
    match scope {
        Scope::Workgroup => "workgroup",
        Scope::Device => "agent",
    }
}

/// A barrier between workgroup fences. `barrier all` on gfx9 also waits for the wave's
/// vector memory operations (`s_waitcnt vmcnt(0)`) before `s_barrier`: LLVM 19's workgroup
/// release there (gfx90a, gfx942 outside tgsplit mode) waits for none, so another wave's
/// agent-scope release after the barrier (the last-workgroup handshake's one atomic) would not
/// cover this wave's stores still in flight, and the IR promises that a device atomic
/// publishes every lane's writes before the last `barrier all` (the interpreter's race check
/// holds kernels to it). gfx906's and RDNA's (WGP mode) workgroup releases already wait; on
/// gfx12 it is `global_wb` and `s_wait_storecnt`.
fn barrier(l: &mut Lowering, kind: BarrierKind) -> LResult<()> {
    let (name, mmra) = match kind {
        BarrierKind::Lds => ("kiln.barrier.lds", ", !mmra !0"),
        BarrierKind::All => ("kiln.barrier.all", ""),
    };
    let wait = if kind == BarrierKind::All && l.t.family == Family::Gfx9 {
        "  call void asm sideeffect \"s_waitcnt vmcnt(0)\", \"~{memory}\"()\n"
    } else {
        ""
    };
    let body = format!(
        "  fence syncscope(\"workgroup\") release{mmra}\n{wait}  call void @llvm.amdgcn.s.barrier()\n  fence syncscope(\"workgroup\") acquire{mmra}\n  ret void"
    );
    let f = l.helper(name, None, &[], &body, &["declare void @llvm.amdgcn.s.barrier()"]);
    l.call(f, &[])?;
    Ok(())
}

fn fence(l: &mut Lowering, scope: Scope) -> LResult<()> {
    let s = sync_scope(scope);
    let body = format!("  fence syncscope(\"{s}\") acq_rel\n  ret void");
    let f = l.helper(&format!("kiln.fence.{s}"), None, &[], &body, &[]);
    l.call(f, &[])?;
    Ok(())
}

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
    let rmw = match op {
        AtomicOp::Add => "add",
        AtomicOp::Min if signed => "min",
        AtomicOp::Max if signed => "max",
        AtomicOp::Min => "umin",
        AtomicOp::Max => "umax",
        AtomicOp::Exchange => "xchg",
        AtomicOp::And => "and",
        AtomicOp::Or => "or",
    };
    let s = sync_scope(scope);
    let bits = ty.scalar.bits();
    let name = format!("kiln.atomic.{rmw}.i{bits}.as{space}.{s}");
    let pty: BasicTypeEnum = l.ctx.ptr_type(LlvmAs::from(space)).into();
    let vty: BasicTypeEnum = l.int_type(bits).into();
    let body = format!(
        "  %r = atomicrmw {rmw} ptr addrspace({space}) %0, i{bits} %1 syncscope(\"{s}\") acq_rel, align {}\n  ret i{bits} %r",
        bits / 8
    );
    let f = l.helper(&name, Some(vty), &[pty, vty], &body, &[]);
    l.call(f, &[ptr.into(), v])?
        .ok_or_else(|| LowerError::Llvm("IR building", "atomic helper returned nothing".into()))
}

/// Xor exchanges inside 32 lanes by DPP `row_xmask` and `v_permlanex16` (gfx10+); without them,
/// DPP `quad_perm`, `ds_swizzle` and `ds_bpermute` (gfx9).
fn has_row_xmask_path(l: &Lowering) -> bool {
    l.t.has(Capability::DppRowXmask) && l.t.has(Capability::Permlanex16)
}

/// `update.dpp` with all rows and banks enabled; bound_ctrl set so LLVM may fold the move into
/// the consumer (`v_add_f32_dpp`). Every control used here reads a lane that exists.
fn dpp<'ctx>(l: &mut Lowering<'ctx, '_>, x: IntValue<'ctx>, ctrl: u32) -> LResult<IntValue<'ctx>> {
    let i32t: BasicTypeEnum = l.i32t().into();
    let args = [
        l.i32t().get_poison().into(),
        x.into(),
        l.i32c(ctrl).into(),
        l.i32c(0xf).into(),
        l.i32c(0xf).into(),
        l.ctx.bool_type().const_all_ones().into(),
    ];
    Ok(l.intrinsic_v("llvm.amdgcn.update.dpp", &[i32t], &args)?.into_int_value())
}

fn bpermute<'ctx>(
    l: &mut Lowering<'ctx, '_>,
    x: IntValue<'ctx>,
    src_lane: IntValue<'ctx>,
) -> LResult<IntValue<'ctx>> {
    let addr = l.b.build_left_shift(src_lane, l.i32c(2), "")?;
    Ok(l.intrinsic_v("llvm.amdgcn.ds.bpermute", &[], &[addr.into(), x.into()])?.into_int_value())
}

/// Lane i reads lane i ^ 32 (wave 64 on RDNA): `v_permlane64` on gfx11+, else 64 readlanes and
/// writelanes through SGPRs (gfx10 has no cross-half exchange short of LDS).
fn swap_halves<'ctx>(l: &mut Lowering<'ctx, '_>, x: IntValue<'ctx>) -> LResult<IntValue<'ctx>> {
    let i32t: BasicTypeEnum = l.i32t().into();
    if l.t.has(Capability::Permlane64) {
        return Ok(l.intrinsic_v("llvm.amdgcn.permlane64", &[i32t], &[x.into()])?.into_int_value());
    }
    let mut acc: Bv = l.i32t().get_poison().into();
    for j in 0..64u32 {
        let s =
            l.intrinsic_v("llvm.amdgcn.readlane", &[i32t], &[x.into(), l.i32c(j ^ 32).into()])?;
        acc = l.intrinsic_v("llvm.amdgcn.writelane", &[i32t], &[s, l.i32c(j).into(), acc])?;
    }
    Ok(acc.into_int_value())
}

fn shuffle_xor<'ctx>(
    l: &mut Lowering<'ctx, '_>,
    x: IntValue<'ctx>,
    mask: u32,
) -> LResult<IntValue<'ctx>> {
    if mask == 0 {
        return Ok(x);
    }
    if !has_row_xmask_path(l) {
        if mask >= 32 {
            let lane = id(l, IdKind::Lane)?;
            let src = l.b.build_xor(lane, l.i32c(mask), "")?;
            return bpermute(l, x, src);
        }
        if mask < 4 {
            // quad_perm: lane j of each quad reads lane j ^ mask.
            let ctrl = (0..4).map(|j| ((j ^ mask) & 3) << (2 * j)).sum::<u32>();
            return dpp(l, x, ctrl);
        }
        // ds_swizzle bit mode: and_mask 0x1f, or_mask 0, xor_mask in bits 14:10.
        let offset = 0x1f | (mask << 10);
        return Ok(l
            .intrinsic_v("llvm.amdgcn.ds.swizzle", &[], &[x.into(), l.i32c(offset).into()])?
            .into_int_value());
    }
    let mut v = x;
    if mask & 32 != 0 {
        v = swap_halves(l, v)?;
    }
    let low = mask & 31;
    if low >= 16 {
        // v_permlanex16: lane j of a row reads lane sel[j] of the other row of its pair.
        let k = low & 15;
        let sel = |base: u32| (0..8).map(|j| ((base + j) ^ k) << (4 * j)).sum::<u32>();
        let i32t: BasicTypeEnum = l.i32t().into();
        let args = [
            l.i32t().get_poison().into(),
            v.into(),
            l.i32c(sel(0)).into(),
            l.i32c(sel(8)).into(),
            l.ctx.bool_type().const_zero().into(),
            l.ctx.bool_type().const_zero().into(),
        ];
        v = l.intrinsic_v("llvm.amdgcn.permlanex16", &[i32t], &args)?.into_int_value();
    } else if low > 0 {
        v = dpp(l, v, 0x160 + low)?;
    }
    Ok(v)
}

fn shuffle_idx<'ctx>(
    l: &mut Lowering<'ctx, '_>,
    x: IntValue<'ctx>,
    src: IntValue<'ctx>,
) -> LResult<IntValue<'ctx>> {
    if !l.t.features.wave64_in_halves || !wave64(l) {
        return bpermute(l, x, src);
    }
    // Wave 64 in halves (RDNA): ds_bpermute reads inside the lane's own 32-lane half (address
    // bits 6:2), so read both the value and its half-swapped copy and pick by whether the source
    // is across.
    let lane = id(l, IdKind::Lane)?;
    let swapped = swap_halves(l, x)?;
    let same = bpermute(l, x, src)?;
    let across = bpermute(l, swapped, src)?;
    let diff = l.b.build_xor(lane, src, "")?;
    let bit = l.b.build_and(diff, l.i32c(32), "")?;
    let is_across = l.icmp(LLVMIntPredicate::LLVMIntNE, bit.into(), l.i32c(0).into());
    Ok(l.select(is_across, across.into(), same.into()).into_int_value())
}

/// Links an AMDGPU relocatable object into an HSACO with `ld.lld -shared`.
fn link_hsaco(obj: &[u8]) -> Result<Vec<u8>, String> {
    let lld = find_ld_lld().ok_or(
        "ld.lld not found (install lld-19, put ld.lld-19 on PATH, or set KILN_LD_LLD)".to_string(),
    )?;
    let input = TempFile::new(".o");
    let output = TempFile::new(".hsaco");
    std::fs::write(&input.0, obj).map_err(|e| format!("writing {}: {e}", input.0.display()))?;
    // One thread: the build already runs a job per core, and lld's thread pool costs more than
    // it saves on a single small object (about 2.5 ms a call, measured).
    let out = Command::new(lld)
        .arg("--threads=1")
        .arg("-shared")
        .arg(&input.0)
        .arg("-o")
        .arg(&output.0)
        .output()
        .map_err(|e| format!("running {}: {e}", lld.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed ({}): {}",
            lld.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    std::fs::read(&output.0).map_err(|e| format!("reading {}: {e}", output.0.display()))
}

/// An LLVM type of the matrix tables' spelling: `i32`, `i64`, `<N x half|float|i32>`.
fn matrix_llvm_type<'ctx>(l: &Lowering<'ctx, '_>, text: &str) -> LResult<BasicTypeEnum<'ctx>> {
    let elem = |name: &str| -> LResult<BasicTypeEnum<'ctx>> {
        Ok(match name {
            "half" => l.ctx.f16_type().into(),
            "float" => l.ctx.f32_type().into(),
            "i32" => l.ctx.i32_type().into(),
            "i64" => l.ctx.i64_type().into(),
            other => {
                return Err(LowerError::Invalid(format!(
                    "matrix operand type `{text}`: unknown element `{other}`"
                )))
            }
        })
    };
    match text.strip_prefix('<').and_then(|t| t.strip_suffix('>')) {
        Some(inner) => {
            let (n, e) = inner.split_once(" x ").ok_or_else(|| {
                LowerError::Invalid(format!("matrix operand type `{text}`: expected <N x T>"))
            })?;
            let n: u32 = n.parse().map_err(|_| {
                LowerError::Invalid(format!("matrix operand type `{text}`: bad length"))
            })?;
            Ok(match elem(e)? {
                BasicTypeEnum::FloatType(f) => f.vec_type(n).into(),
                BasicTypeEnum::IntType(i) => i.vec_type(n).into(),
                other => {
                    return Err(LowerError::Invalid(format!(
                        "matrix operand type `{text}`: element {other:?}"
                    )))
                }
            })
        }
        None => elem(text),
    }
}

fn mma<'ctx>(
    l: &mut Lowering<'ctx, '_>,
    kind: MmaKind,
    a: Bv<'ctx>,
    b: Bv<'ctx>,
    c: Bv<'ctx>,
) -> LResult<Bv<'ctx>> {
    let MmaLowering::Amd { intrinsic, operands, .. } = kind.lowering() else {
        return Err(LowerError::Invalid(format!("{kind} is not an AMD matrix instruction")));
    };
    let shape = kind.shape();
    let ab_ty = matrix_llvm_type(l, shape.registers(FragmentRole::A).llvm_type)?;
    let c_ty = matrix_llvm_type(l, shape.registers(FragmentRole::C).llvm_type)?;
    let a = l.cast(LLVMOpcode::LLVMBitCast, a, ab_ty);
    let b = l.cast(LLVMOpcode::LLVMBitCast, b, ab_ty);
    let (i1, i32t) = (l.ctx.bool_type(), l.i32t());
    let flag = |v: bool| -> Bv<'ctx> { i1.const_int(v as u64, false).into() };
    let zero: Bv<'ctx> = i32t.const_int(0, false).into();
    let args: Vec<Bv<'ctx>> = match operands {
        AmdMmaOperands::Wmma => vec![a, b, c],
        AmdMmaOperands::WmmaIu8 { a_signed, b_signed } => {
            vec![flag(a_signed), a, flag(b_signed), b, c, flag(false)]
        }
        AmdMmaOperands::Mfma => vec![a, b, c, zero, zero, zero],
    };
    let f = match l.module.get_function(intrinsic) {
        Some(f) => f,
        None => {
            let params: Vec<_> = args.iter().map(|v| v.get_type().into()).collect();
            let fty = match c_ty {
                BasicTypeEnum::VectorType(v) => v.fn_type(&params, false),
                other => {
                    return Err(LowerError::Invalid(format!(
                        "{intrinsic}: expected a vector accumulator, found {other:?}"
                    )))
                }
            };
            l.module.add_function(intrinsic, fty, None)
        }
    };
    l.call(f, &args)?
        .ok_or_else(|| LowerError::Llvm("IR building", format!("{intrinsic} returns nothing")))
}
