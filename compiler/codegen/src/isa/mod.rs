//! The lowering interface each back end implements (Cranelift's `isa/<target>`): everything that
//! differs by vendor, so the shared lowering in `lower/` asks [`Isa`] and never the vendor.
//!
//! What does not differ by vendor but by arch (DPP flavours, `permlane64`, `redux.sync`, bf16
//! fma, dot and matrix instructions, the PTX version) is a fact of kiln-ir's target table; back
//! ends ask `Target::has` for it, never the arch's or family's name.

pub(crate) mod amdgpu;
pub(crate) mod nvptx;

use crate::lower::{Bv, LResult, LowerError, Lowering};
use inkwell::module::Module;
use inkwell::targets::TargetMachine;
use inkwell::values::{IntValue, PointerValue};
use kiln_ir::matrix::MmaKind;
use kiln_ir::package::{ObjectFormat, Resources};
use kiln_ir::target::{DotKind, Vendor};
use kiln_ir::{AtomicOp, BarrierKind, IdKind, Kernel, ReduceOp, Scope, Target, Type};

/// The approximate f32 functions (the IR's `*Approx` unary ops).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ApproxFn {
    /// 2^x.
    Exp2,
    /// log2 x.
    Log2,
    /// 1 / sqrt x.
    Rsqrt,
    /// 1 / x.
    Rcp,
}

/// A code object as the back end produced it.
pub(crate) struct Emitted {
    pub format: ObjectFormat,
    pub bytes: Vec<u8>,
    pub asm: Option<String>,
    pub resources: Resources,
}

/// Why a back end could not produce or read its code object.
pub(crate) enum EmitError {
    /// LLVM code generation.
    Llvm(String),
    /// An external tool (`ld.lld`, `ptxas`).
    Tool(&'static str, String),
    /// Reading the code object back.
    Object(String),
}

/// What a back end decides. Cross-lane methods work on one 32-bit piece: the shared lowering
/// splits wider values and vectors (`per_dword`).
pub(crate) trait Isa: Sync {
    /// The LLVM target features string for a wave size.
    fn target_features(&self, t: &Target, wave: u32) -> String;
    /// Calling convention, function attributes and annotations of the kernel function.
    fn setup_kernel(&self, l: &mut Lowering);
    /// Code at the top of the entry block, before anything else the kernel does; true when the
    /// kernel waits for the grids it depends on (recorded with the object: the runtime overlaps
    /// a launch only of an object that says so). With `wait_here` the wait is there; without,
    /// the kernel has its own [`kiln_ir::Op::GridDependencyWait`] further down.
    fn kernel_entry(&self, l: &mut Lowering, wait_here: bool) -> LResult<bool>;
    /// [`kiln_ir::Op::GridDependencyWait`].
    fn grid_dependency_wait(&self, l: &mut Lowering) -> LResult<()>;
    /// [`kiln_ir::Op::Prefetch`] of the byte at global pointer `ptr`.
    fn prefetch<'ctx>(&self, l: &mut Lowering<'ctx, '_>, ptr: PointerValue<'ctx>) -> LResult<()>;
    /// [`kiln_ir::Op::AsyncCopy`] of `bytes` (4, 8 or 16, both pointers aligned to it) from
    /// global `src` to LDS `dst`. By default a load and a store at once: the copy has landed
    /// before any [`kiln_ir::Op::AsyncWait`] (a program the interpreter accepts reads the bytes
    /// only after one).
    fn async_copy<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        dst: PointerValue<'ctx>,
        src: PointerValue<'ctx>,
        bytes: u32,
    ) -> LResult<()> {
        l.copy_now(dst, src, bytes)
    }
    /// [`kiln_ir::Op::LdMatrix`] from the LDS row address `row` this lane names: the lane's
    /// `2 matrices` elements as `ty`. Only NVIDIA has it (the verifier refuses it elsewhere).
    fn ld_matrix<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        _row: PointerValue<'ctx>,
        _matrices: u32,
        _trans: bool,
        _ty: Type,
    ) -> LResult<Bv<'ctx>> {
        Err(LowerError::Unsupported(format!("ld_matrix on {} (NVIDIA only)", l.t)))
    }
    /// [`kiln_ir::Op::AsyncWait`]: nothing by default (the copies landed when issued).
    fn async_wait(&self, _l: &mut Lowering, _pending: u32) -> LResult<()> {
        Ok(())
    }
    /// Metadata definitions the textual helpers (`kiln.*`) refer to, appended to their module.
    fn helper_metadata(&self) -> &'static str;
    /// The address space of private arrays (the data layout's alloca space).
    fn private_address_space(&self) -> u16;
    /// An id.
    fn id<'ctx>(&self, l: &mut Lowering<'ctx, '_>, kind: IdKind) -> LResult<IntValue<'ctx>>;
    /// A workgroup barrier.
    fn barrier(&self, l: &mut Lowering, kind: BarrierKind) -> LResult<()>;
    /// An acquire-release fence of a scope.
    fn fence(&self, l: &mut Lowering, scope: Scope) -> LResult<()>;
    /// An acquire-release atomic read-modify-write on a 32- or 64-bit integer; returns the old
    /// value. `space` is `ptr`'s LLVM address space.
    #[allow(clippy::too_many_arguments)]
    fn atomic<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        op: AtomicOp,
        ptr: PointerValue<'ctx>,
        space: u16,
        v: Bv<'ctx>,
        ty: Type,
        scope: Scope,
    ) -> LResult<Bv<'ctx>>;
    /// An approximate f32 function.
    fn approx<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        f: ApproxFn,
        x: Bv<'ctx>,
    ) -> LResult<Bv<'ctx>>;
    /// Lane i reads lane i ^ mask.
    fn shuffle_xor<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        x: IntValue<'ctx>,
        mask: u32,
    ) -> LResult<IntValue<'ctx>>;
    /// Lane i reads lane `src` (already reduced modulo the wave size).
    fn shuffle_idx<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        x: IntValue<'ctx>,
        src: IntValue<'ctx>,
    ) -> LResult<IntValue<'ctx>>;
    /// Lane i reads lane i - off; lanes below `off` keep their own value.
    fn shuffle_up<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        x: IntValue<'ctx>,
        off: u32,
    ) -> LResult<IntValue<'ctx>>;
    /// Lane i reads lane i + off; lanes at or past `wave - off` keep their own value.
    fn shuffle_down<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        x: IntValue<'ctx>,
        off: u32,
    ) -> LResult<IntValue<'ctx>>;
    /// Every lane reads lane `lane`.
    fn broadcast<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        x: IntValue<'ctx>,
        lane: u32,
    ) -> LResult<IntValue<'ctx>>;
    /// The i64 mask of the lanes where `cond` holds.
    fn ballot<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        cond: IntValue<'ctx>,
    ) -> LResult<IntValue<'ctx>>;
    /// A native wave reduction whose bits equal the shared xor butterfly's, or `None` where
    /// the butterfly is needed.
    fn wave_reduce<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        op: ReduceOp,
        v: Bv<'ctx>,
        ty: Type,
    ) -> LResult<Option<Bv<'ctx>>>;
    /// `D = A x B + C` of `kind` over the wave ([`kiln_ir::Op::Mma`]): `a`, `b`, `c` are the
    /// fragments as kiln types them (`<16 x half>`, `<16 x i8>`, `<8 x float>`...); the result
    /// is D in C's type. The register packing is [`kiln_ir::matrix::MmaShape::registers`].
    fn mma<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        kind: MmaKind,
        a: Bv<'ctx>,
        b: Bv<'ctx>,
        c: Bv<'ctx>,
    ) -> LResult<Bv<'ctx>>;
    /// A hardware dot product of the target table's flavour `kind` (`Target::dot`): the
    /// integer flavours take and give `i32` (four bytes), `DotKind::F16` two `<2 x half>` and an
    /// f32 accumulator. Unsupported where the target lacks it (the verifier refuses it first).
    fn dot<'ctx>(
        &self,
        l: &mut Lowering<'ctx, '_>,
        kind: DotKind,
        a: Bv<'ctx>,
        b: Bv<'ctx>,
        acc: Bv<'ctx>,
    ) -> LResult<Bv<'ctx>>;
    /// Generates the code object from the optimized module and reads its resources back.
    fn emit(
        &self,
        tm: &TargetMachine,
        module: &Module,
        k: &Kernel,
        t: &Target,
        emit_asm: bool,
    ) -> Result<Emitted, EmitError>;
    /// True when the shared lowering must split an access below its natural alignment into
    /// naturally aligned pieces of the stated alignment itself, instead of handing LLVM the
    /// under-aligned access: where the back end's own legalization cannot be trusted with it.
    fn splits_underaligned_access(&self) -> bool;
}

/// The back end of a target: the one place that maps a vendor to its lowering.
pub(crate) fn for_target(t: &Target) -> &'static dyn Isa {
    match t.vendor {
        Vendor::Amd => &amdgpu::AmdGpu,
        Vendor::Nvidia => &nvptx::Nvptx,
    }
}

/// The target table's instruction for a dot-product flavour, or the lowering's refusal (the
/// verifier refuses such an op first; this keeps a direct `compile` from aborting in LLVM).
pub(crate) fn dot_instr(
    l: &Lowering<'_, '_>,
    kind: DotKind,
) -> LResult<&'static kiln_ir::target::DotInstr> {
    l.t.dot(kind).ok_or_else(|| {
        LowerError::Unsupported(format!("`{}` on {} (not in its dot table)", kind.name(), l.t))
    })
}
