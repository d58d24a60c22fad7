//! kiln IR -> LLVM IR, shared by both vendors, then the LLVM pipeline and code generation.
//!
//! The lowering walks the structured body once: `if` becomes a diamond with phis, `for` a loop
//! whose header carries the index and the carried values in phis. What differs per target (ids,
//! barriers, fences, atomics' scopes, the cross-lane exchanges, approximate math, the kernel ABI)
//! is asked of the back end's `isa::Isa`; everything numeric is decided here, once, so both vendors
//! compute the same bits. By concern:
//!
//! - Numerics (`numerics.rs`): the rules that make both vendors compute the interpreter's bits.
//! - Cross-lane (`crosslane.rs`): 32-bit pieces and butterflies in the interpreter's order.
//! - Memory (`memory.rs`): LDS, private arrays, addresses, loads and stores.
//! - Control (`control.rs`): blocks, the op dispatch, `if` and `for`.
//! - Packed (`packed.rs`): ops on four bytes of a `u32` or a pair of halves (byte permute, dot
//!   products, packed conversions).
//! - Building blocks (`builder.rs`): types, constants, LLVM instruction and intrinsic helpers.
//!
//! LLVM 19's C API cannot set a sync scope, so fences, atomics and the LDS-only barrier with
//! scopes are written as small textual helper functions (`kiln.*`, `alwaysinline`,
//! `linkonce_odr`), parsed, linked in and inlined before optimization.

mod builder;
mod control;
mod crosslane;
mod memory;
mod numerics;
mod packed;

use builder::scalar_mem_type;
pub(crate) use builder::scalar_type;

use crate::isa::{self, EmitError, Isa};
use crate::{CodegenError, CompiledObject, Options};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{
    CodeModel, InitializationConfig, RelocMode, Target as LlvmTarget, TargetMachine, TargetTriple,
};
use inkwell::values::{BasicValueEnum, FunctionValue, GlobalValue, PointerValue};
use inkwell::{AddressSpace as LlvmAs, OptimizationLevel};
use kiln_ir::*;
use std::collections::HashSet;
use std::sync::Once;

/// A value in the lowering.
pub(crate) type Bv<'ctx> = BasicValueEnum<'ctx>;

/// Errors inside the lowering; `compile` adds the kernel and the arch.
#[derive(Debug)]
pub(crate) enum LowerError {
    Unsupported(String),
    Invalid(String),
    Llvm(&'static str, String),
}

impl From<BuilderError> for LowerError {
    fn from(e: BuilderError) -> LowerError {
        LowerError::Llvm("IR building", e.to_string())
    }
}

pub(crate) type LResult<T> = Result<T, LowerError>;

/// LLVM address spaces (the same numbers on both back ends for these three).
pub(crate) const AS_GLOBAL: u16 = 1;
pub(crate) const AS_LDS: u16 = 3;

/// The lowering state of one kernel.
pub(crate) struct Lowering<'ctx, 'k> {
    pub ctx: &'ctx Context,
    pub module: Module<'ctx>,
    pub b: Builder<'ctx>,
    pub k: &'k Kernel,
    pub t: &'k Target,
    /// The back end: everything that differs by vendor.
    pub isa: &'static dyn Isa,
    pub func: FunctionValue<'ctx>,
    vals: Vec<Option<Bv<'ctx>>>,
    params: Vec<Bv<'ctx>>,
    lds: Option<GlobalValue<'ctx>>,
    privates: Vec<PointerValue<'ctx>>,
    prelude: String,
    prelude_decls: HashSet<String>,
    helpers: HashSet<String>,
}

fn init_llvm() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        let cfg = InitializationConfig::default();
        LlvmTarget::initialize_amd_gpu(&cfg);
        LlvmTarget::initialize_nvptx(&cfg);
    });
}

/// The target machine for a target and wave size.
fn target_machine(t: &Target, wave: u32, opt: u32) -> Result<TargetMachine, String> {
    init_llvm();
    let triple = TargetTriple::create(t.triple());
    let target = LlvmTarget::from_triple(&triple).map_err(|e| e.to_string())?;
    let level = match opt {
        0 => OptimizationLevel::None,
        1 => OptimizationLevel::Less,
        2 => OptimizationLevel::Default,
        _ => OptimizationLevel::Aggressive,
    };
    target
        .create_target_machine(
            &triple,
            t.name,
            &isa::for_target(t).target_features(t, wave),
            level,
            RelocMode::PIC,
            CodeModel::Default,
        )
        .ok_or_else(|| format!("LLVM has no target machine for {} ({})", t.name, t.triple()))
}

pub(crate) fn compile(
    k: &Kernel,
    t: &Target,
    opts: &Options,
) -> Result<CompiledObject, CodegenError> {
    let kernel = k.name.clone();
    let arch = t.name.to_string();
    let lerr = |e: LowerError| match e {
        LowerError::Unsupported(what) => {
            CodegenError::Unsupported { kernel: kernel.clone(), arch: arch.clone(), what }
        }
        LowerError::Invalid(what) => {
            CodegenError::InvalidIr { kernel: kernel.clone(), arch: arch.clone(), what }
        }
        LowerError::Llvm(stage, message) => {
            CodegenError::Llvm { kernel: kernel.clone(), arch: arch.clone(), stage, message }
        }
    };
    if !t.supports_wave(k.wave_size) {
        return Err(lerr(LowerError::Unsupported(format!(
            "wave size {} (the target runs {:?})",
            k.wave_size, t.wave_sizes
        ))));
    }
    let tm = target_machine(t, k.wave_size, opts.opt_level)
        .map_err(|m| lerr(LowerError::Llvm("target setup", m)))?;
    let ctx = Context::create();
    let (module, grid_dependency) = Lowering::lower(&ctx, &tm, k, t).map_err(lerr)?;

    let passes = if opts.opt_level == 0 {
        "always-inline".to_string()
    } else {
        format!("default<O{}>", opts.opt_level.min(3))
    };
    module
        .run_passes(&passes, &tm, PassBuilderOptions::create())
        .map_err(|m| lerr(LowerError::Llvm("optimization", m.to_string())))?;
    let llvm_ir = opts.emit_llvm.then(|| module.print_to_string().to_string());
    let e = isa::for_target(t).emit(&tm, &module, k, t, opts.emit_asm).map_err(|e| match e {
        EmitError::Llvm(m) => lerr(LowerError::Llvm("code generation", m)),
        EmitError::Tool(tool, message) => {
            CodegenError::Tool { kernel: kernel.clone(), arch: arch.clone(), tool, message }
        }
        EmitError::Object(message) => {
            CodegenError::Object { kernel: kernel.clone(), arch: arch.clone(), message }
        }
    })?;
    Ok(CompiledObject {
        format: e.format,
        bytes: e.bytes,
        llvm_ir,
        asm: e.asm,
        resources: e.resources,
        symbol: k.name.clone(),
        grid_dependency,
    })
}

impl<'ctx, 'k> Lowering<'ctx, 'k> {
    /// Builds the module of one kernel (helpers linked in, verified), and whether its entry waits
    /// for the grids it depends on.
    fn lower(
        ctx: &'ctx Context,
        tm: &TargetMachine,
        k: &'k Kernel,
        t: &'k Target,
    ) -> LResult<(Module<'ctx>, bool)> {
        let module = ctx.create_module(&k.name);
        module.set_triple(&tm.get_triple());
        module.set_data_layout(&tm.get_target_data().get_data_layout());
        let mut l = Lowering::new(ctx, module, k, t)?;
        l.isa.setup_kernel(&mut l);
        let entry = ctx.append_basic_block(l.func, "entry");
        l.b.position_at_end(entry);
        let explicit = k.blocks[k.entry]
            .insts
            .iter()
            .any(|&i| matches!(k.insts[i].op, kiln_ir::Op::GridDependencyWait));
        let waits = l.isa.kernel_entry(&mut l, !explicit)?;
        l.allocate_memory()?;
        l.lower_block(k.entry)?;
        l.b.build_return(None)?;
        l.link_prelude()?;
        l.module.verify().map_err(|m| LowerError::Llvm("module verification", m.to_string()))?;
        Ok((l.module, waits))
    }

    fn new(
        ctx: &'ctx Context,
        module: Module<'ctx>,
        k: &'k Kernel,
        t: &'k Target,
    ) -> LResult<Self> {
        let ptr = ctx.ptr_type(LlvmAs::from(AS_GLOBAL));
        let mut tys = vec![];
        for p in k.params.values() {
            tys.push(match &p.kind {
                ParamKind::Buffer { .. } => ptr.into(),
                ParamKind::Scalar(s) => scalar_type(ctx, *s).into(),
            });
        }
        let fty = ctx.void_type().fn_type(&tys, false);
        let func = module.add_function(&k.name, fty, Some(Linkage::External));
        let noalias = Attribute::get_named_enum_kind_id("noalias");
        let readonly = Attribute::get_named_enum_kind_id("readonly");
        let writeonly = Attribute::get_named_enum_kind_id("writeonly");
        let in_flight = buffers_maybe_in_flight(k, t);
        for (i, (pk, p)) in k.params.iter().enumerate() {
            if let ParamKind::Buffer { access, .. } = &p.kind {
                let loc = AttributeLoc::Param(i as u32);
                if !in_flight.contains(&pk) {
                    func.add_attribute(loc, ctx.create_enum_attribute(noalias, 0));
                }
                match access {
                    Access::Read => func.add_attribute(loc, ctx.create_enum_attribute(readonly, 0)),
                    Access::Write => {
                        func.add_attribute(loc, ctx.create_enum_attribute(writeonly, 0))
                    }
                    Access::ReadWrite => {}
                }
            }
        }
        for (a, v) in [("denormal-fp-math", "ieee,ieee"), ("denormal-fp-math-f32", "ieee,ieee")] {
            func.add_attribute(AttributeLoc::Function, ctx.create_string_attribute(a, v));
        }
        let params = func.get_param_iter().collect();
        Ok(Lowering {
            ctx,
            module,
            b: ctx.create_builder(),
            k,
            t,
            isa: isa::for_target(t),
            func,
            vals: vec![None; k.values.len()],
            params,
            lds: None,
            privates: vec![],
            prelude: String::new(),
            prelude_decls: HashSet::new(),
            helpers: HashSet::new(),
        })
    }
}

/// The read-only buffers whose loads must stay after the kernel's grid-dependency wait in the
/// machine code: on a target that waits ([`Target::waits_for_grid_dependency`]), in a kernel
/// that loads before its own wait ([`Kernel::reads_before_grid_wait`] not empty), every
/// `Access::Read` buffer that is not one of those early reads (the activations a grid before
/// this one may still be writing). They get no `noalias`, so NVPTX loads them with `ld.global`
/// rather than `ld.global.nc`: the non-coherent load promises ptxas that the bytes do not
/// change while the kernel runs, and ptxas (CUDA 13, sm_90) then hoists such loads, and the
/// arithmetic on them, above `griddepcontrol.wait` (seen in the SASS of every early GEMV before
/// this rule: activation loads and `IDP` / `IMMA` before `ACQBULK`), where they may read what the
/// grid before is writing. A coherent load stays after the wait (codegen test
/// `early_loads_stay_before_the_wait_in_the_sass`, case `lib_gemv_early_coherent_sm90`). The
/// early reads keep `noalias` (and so `.nc`): the runtime overlaps a launch only where no grid
/// in flight writes them.
fn buffers_maybe_in_flight(k: &Kernel, t: &Target) -> Vec<kiln_ir::Param> {
    let early = k.reads_before_grid_wait();
    if !t.waits_for_grid_dependency() || early.is_empty() {
        return vec![];
    }
    k.params
        .iter()
        .filter(|(p, d)| {
            matches!(d.kind, ParamKind::Buffer { access: Access::Read, .. }) && !early.contains(p)
        })
        .map(|(p, _)| p)
        .collect()
}
