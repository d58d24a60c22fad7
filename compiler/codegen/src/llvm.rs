//! kiln IR -> LLVM IR, shared by both vendors, then the LLVM pipeline and code generation.
//!
//! The lowering walks the structured body once: `if` becomes a diamond with phis, `for` a loop
//! whose header carries the index and the carried values in phis. What differs per target (ids,
//! barriers, fences, atomics' scopes, the cross-lane exchanges, approximate math, the kernel ABI)
//! is asked of the back end's `isa::Isa`; everything numeric is decided here, once, so both vendors
//! compute the same bits:
//!
//! - No fast-math flags anywhere, no contraction; denormals kept (both back ends are told `ieee`).
//! - f16 / bf16 arithmetic (add, sub, mul, div, sqrt, rounding) extends to f32, computes and
//!   rounds back: exact, because f32 has more than 2p+2 bits for both (double rounding is
//!   innocuous). Negation, abs, compares, min/max and select work on the narrow values directly.
//! - `fma` f16 is `llvm.fma.f16` (a native, correctly rounded `v_fma_f16` / `fma.rn.f16` on every
//!   target kiln has). `fma` bf16 is native where it is correctly rounded (`fma.rn.bf16`, sm_80+);
//!   elsewhere the exact product (in f64) is added with TwoSum, rounded to odd, then to bf16: one
//!   rounding, like the interpreter. Conversions to bf16 that could round twice go the same way.
//! - Min / max are compare + select exactly as `ops.rs` words them (not `minnum`).
//! - Float -> int is `fpto[su]i.sat` (saturating, NaN -> 0).
//! - Cross-lane ops work on 32-bit pieces: 64-bit values split in two, narrower ones extended.
//!   Wave reductions and `tsum` are xor butterflies with descending offsets combining
//!   `own op partner`, the interpreter's order, so results are bitwise equal.
//!
//! LLVM 19's C API cannot set a sync scope, so fences, atomics and the LDS-only barrier with
//! scopes are written as small textual helper functions (`kiln.*`, `alwaysinline`,
//! `linkonce_odr`), parsed, linked in and inlined before optimization.

use crate::isa::{self, ApproxFn, EmitError, Isa};
use crate::{CodegenError, CompiledObject, Options};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::{AsContextRef, Context};
use inkwell::intrinsics::Intrinsic;
use inkwell::llvm_sys::core as llc;
use inkwell::llvm_sys::debuginfo as lldi;
use inkwell::llvm_sys::prelude::LLVMMetadataRef;
use inkwell::llvm_sys::{LLVMIntPredicate, LLVMOpcode, LLVMRealPredicate};
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::{Linkage, Module};
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{
    CodeModel, InitializationConfig, RelocMode, Target as LlvmTarget, TargetMachine, TargetTriple,
};
use inkwell::types::{AsTypeRef, BasicType, BasicTypeEnum, IntType};
use inkwell::values::{
    AsValueRef, BasicValue, BasicValueEnum, FunctionValue, GlobalValue, IntValue, PointerValue,
};
use inkwell::{AddressSpace as LlvmAs, OptimizationLevel};
use kiln_ir::target::Capability;
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
    let module = Lowering::lower(&ctx, &tm, k, t).map_err(lerr)?;

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
    })
}

impl<'ctx, 'k> Lowering<'ctx, 'k> {
    /// Builds the module of one kernel (helpers linked in, verified).
    fn lower(
        ctx: &'ctx Context,
        tm: &TargetMachine,
        k: &'k Kernel,
        t: &'k Target,
    ) -> LResult<Module<'ctx>> {
        let module = ctx.create_module(&k.name);
        module.set_triple(&tm.get_triple());
        module.set_data_layout(&tm.get_target_data().get_data_layout());
        let mut l = Lowering::new(ctx, module, k, t)?;
        l.isa.setup_kernel(&mut l);
        let entry = ctx.append_basic_block(l.func, "entry");
        l.b.position_at_end(entry);
        l.allocate_memory()?;
        l.lower_block(k.entry)?;
        l.b.build_return(None)?;
        l.link_prelude()?;
        l.module.verify().map_err(|m| LowerError::Llvm("module verification", m.to_string()))?;
        Ok(l.module)
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
        for (i, p) in k.params.values().enumerate() {
            if let ParamKind::Buffer { access, .. } = &p.kind {
                let loc = AttributeLoc::Param(i as u32);
                func.add_attribute(loc, ctx.create_enum_attribute(noalias, 0));
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

    /// LDS as one addrspace(3) array laid out as `Kernel::lds_offsets` says; private arrays as
    /// allocas in the entry block (the alloca address space of the data layout: 5 on AMDGPU).
    fn allocate_memory(&mut self) -> LResult<()> {
        let bytes = self.k.lds_bytes();
        if bytes > self.t.lds_per_workgroup {
            return Err(LowerError::Unsupported(format!(
                "{bytes} bytes of LDS (the target allows {})",
                self.t.lds_per_workgroup
            )));
        }
        if bytes > 0 {
            let ty = self.ctx.i8_type().array_type(bytes);
            let g = self.module.add_global(ty, Some(LlvmAs::from(AS_LDS)), "kiln.lds");
            g.set_initializer(&ty.get_poison());
            g.set_linkage(Linkage::Internal);
            g.set_alignment(16);
            self.lds = Some(g);
        }
        for p in self.k.private.values() {
            let ty = scalar_mem_type(self.ctx, p.elem).array_type(p.len);
            let a = self.b.build_alloca(ty, &p.name)?;
            a.as_instruction().map(|i| i.set_alignment(16));
            self.privates.push(a);
        }
        Ok(())
    }

    // ---- types and constants ----

    pub fn i32t(&self) -> IntType<'ctx> {
        self.ctx.i32_type()
    }
    /// The integer type of a width kiln uses (1, 8, 16, 32, 64).
    pub fn int_type(&self, bits: u32) -> IntType<'ctx> {
        match bits {
            1 => self.ctx.bool_type(),
            8 => self.ctx.i8_type(),
            16 => self.ctx.i16_type(),
            64 => self.ctx.i64_type(),
            _ => self.ctx.i32_type(),
        }
    }
    pub fn i32c(&self, v: u32) -> IntValue<'ctx> {
        self.ctx.i32_type().const_int(v as u64, false)
    }
    pub fn i64c(&self, v: u64) -> IntValue<'ctx> {
        self.ctx.i64_type().const_int(v, false)
    }
    pub fn ty(&self, t: Type) -> BasicTypeEnum<'ctx> {
        let s = scalar_type(self.ctx, t.scalar);
        if t.lanes > 1 {
            s.vec_type_of(t.lanes as u32)
        } else {
            s
        }
    }

    /// A constant of type `t` (a splat for vectors) from the scalar's bit pattern.
    pub fn constant(&self, t: Type, bits: u64) -> Bv<'ctx> {
        let s = t.scalar;
        let int_ty = self.int_type(s.bits());
        let masked = if s.bits() == 64 { bits } else { bits & ((1u64 << s.bits()) - 1) };
        let mut c: Bv<'ctx> = int_ty.const_int(masked, false).into();
        if s.is_float() {
            c = self.cast(LLVMOpcode::LLVMBitCast, c, scalar_type(self.ctx, s));
        }
        if t.lanes > 1 {
            let mut refs: Vec<_> = (0..t.lanes).map(|_| c.as_value_ref()).collect();
            // SAFETY: `refs` are constants of one type; LLVM copies the array.
            unsafe { Bv::new(llc::LLVMConstVector(refs.as_mut_ptr(), refs.len() as u32)) }
        } else {
            c
        }
    }

    fn val(&self, v: Value) -> LResult<Bv<'ctx>> {
        self.vals[v.as_u32() as usize]
            .ok_or_else(|| LowerError::Invalid(format!("{v} used before it is defined")))
    }

    // ---- generic instruction helpers (scalars and vectors alike) ----

    pub fn binop(&self, op: LLVMOpcode, a: Bv<'ctx>, b: Bv<'ctx>) -> Bv<'ctx> {
        // SAFETY: operands come from this builder's context and have matching types (the
        // lowering keeps IR types aligned with kiln types).
        unsafe {
            Bv::new(llc::LLVMBuildBinOp(
                self.b.as_mut_ptr(),
                op,
                a.as_value_ref(),
                b.as_value_ref(),
                c"".as_ptr(),
            ))
        }
    }
    pub fn cast(&self, op: LLVMOpcode, v: Bv<'ctx>, to: BasicTypeEnum<'ctx>) -> Bv<'ctx> {
        // SAFETY: as in `binop`; `op` is a cast opcode valid for the two types.
        unsafe {
            Bv::new(llc::LLVMBuildCast(
                self.b.as_mut_ptr(),
                op,
                v.as_value_ref(),
                to.as_type_ref(),
                c"".as_ptr(),
            ))
        }
    }
    pub fn icmp(&self, p: LLVMIntPredicate, a: Bv<'ctx>, b: Bv<'ctx>) -> Bv<'ctx> {
        // SAFETY: as in `binop`.
        unsafe {
            Bv::new(llc::LLVMBuildICmp(
                self.b.as_mut_ptr(),
                p,
                a.as_value_ref(),
                b.as_value_ref(),
                c"".as_ptr(),
            ))
        }
    }
    pub fn fcmp(&self, p: LLVMRealPredicate, a: Bv<'ctx>, b: Bv<'ctx>) -> Bv<'ctx> {
        // SAFETY: as in `binop`.
        unsafe {
            Bv::new(llc::LLVMBuildFCmp(
                self.b.as_mut_ptr(),
                p,
                a.as_value_ref(),
                b.as_value_ref(),
                c"".as_ptr(),
            ))
        }
    }
    pub fn select(&self, c: Bv<'ctx>, t: Bv<'ctx>, f: Bv<'ctx>) -> Bv<'ctx> {
        // SAFETY: as in `binop`; `c` is i1 or a vector of i1 of the operands' length.
        unsafe {
            Bv::new(llc::LLVMBuildSelect(
                self.b.as_mut_ptr(),
                c.as_value_ref(),
                t.as_value_ref(),
                f.as_value_ref(),
                c"".as_ptr(),
            ))
        }
    }

    /// Calls an LLVM intrinsic; `overload` lists the overloaded types (ignored for intrinsics that
    /// are not overloaded).
    pub fn intrinsic(
        &self,
        name: &str,
        overload: &[BasicTypeEnum<'ctx>],
        args: &[Bv<'ctx>],
    ) -> LResult<Option<Bv<'ctx>>> {
        let i = Intrinsic::find(name)
            .ok_or_else(|| LowerError::Llvm("IR building", format!("no intrinsic {name}")))?;
        let tys: &[BasicTypeEnum] = if i.is_overloaded() { overload } else { &[] };
        let f = i.get_declaration(&self.module, tys).ok_or_else(|| {
            LowerError::Llvm("IR building", format!("cannot declare {name} for {tys:?}"))
        })?;
        self.call(f, args)
    }
    /// An intrinsic that returns a value.
    pub fn intrinsic_v(
        &self,
        name: &str,
        overload: &[BasicTypeEnum<'ctx>],
        args: &[Bv<'ctx>],
    ) -> LResult<Bv<'ctx>> {
        self.intrinsic(name, overload, args)?
            .ok_or_else(|| LowerError::Llvm("IR building", format!("{name} returns nothing")))
    }
    pub fn call(&self, f: FunctionValue<'ctx>, args: &[Bv<'ctx>]) -> LResult<Option<Bv<'ctx>>> {
        let args: Vec<_> = args.iter().map(|a| (*a).into()).collect();
        Ok(self.b.build_call(f, &args, "")?.try_as_basic_value().basic())
    }

    /// Declares (once) a helper written as LLVM text: `sig` is e.g. `i32 (ptr addrspace(1), i32)`
    /// split into `ret` and `params`; `body` is the function body between the braces, using `%0`,
    /// `%1`.. for the parameters. `decls` are the declarations the body needs.
    pub fn helper(
        &mut self,
        name: &str,
        ret: Option<BasicTypeEnum<'ctx>>,
        params: &[BasicTypeEnum<'ctx>],
        body: &str,
        decls: &[&str],
    ) -> FunctionValue<'ctx> {
        if let Some(f) = self.module.get_function(name) {
            return f;
        }
        let ptys: Vec<_> = params.iter().map(|p| (*p).into()).collect();
        let fty = match ret {
            Some(r) => r.fn_type(&ptys, false),
            None => self.ctx.void_type().fn_type(&ptys, false),
        };
        let f = self.module.add_function(name, fty, Some(Linkage::External));
        if self.helpers.insert(name.to_string()) {
            let ret_s =
                ret.map(|r| r.print_to_string().to_string()).unwrap_or_else(|| "void".into());
            let params_s: Vec<String> =
                params.iter().map(|p| p.print_to_string().to_string()).collect();
            self.prelude += &format!(
                "define linkonce_odr hidden {ret_s} @{name}({}) #0 {{\n{body}\n}}\n",
                params_s.join(", ")
            );
            for d in decls {
                if self.prelude_decls.insert(d.to_string()) {
                    self.prelude += d;
                    self.prelude += "\n";
                }
            }
        }
        f
    }

    fn link_prelude(&mut self) -> LResult<()> {
        if self.prelude.is_empty() {
            return Ok(());
        }
        let text = format!(
            "target datalayout = \"{}\"\ntarget triple = \"{}\"\n{}\nattributes #0 = {{ alwaysinline convergent nounwind }}\n{}",
            self.module.get_data_layout().as_str().to_string_lossy(),
            self.module.get_triple().as_str().to_string_lossy(),
            self.prelude,
            self.isa.helper_metadata(),
        );
        let buf = MemoryBuffer::create_from_memory_range_copy(text.as_bytes(), "kiln-helpers");
        let helpers = self
            .ctx
            .create_module_from_ir(buf)
            .map_err(|m| LowerError::Llvm("parsing the helpers", format!("{m}\n{text}")))?;
        self.module
            .link_in_module(helpers)
            .map_err(|m| LowerError::Llvm("linking the helpers", m.to_string()))
    }

    /// Attaches `!llvm.loop !{self, !{"llvm.loop.unroll.count", i32 n}}` to a loop's back edge.
    fn set_unroll(&self, latch_br: inkwell::values::InstructionValue<'ctx>, n: u32) {
        let ctx = self.ctx.as_ctx_ref();
        let key = "llvm.loop.unroll.count";
        // SAFETY: plain metadata construction in this context; the temporary node is replaced
        // (and freed by) LLVMMetadataReplaceAllUsesWith, which makes the loop id self-referential
        // as LLVM requires.
        unsafe {
            let s = llc::LLVMMDStringInContext2(ctx, key.as_ptr() as *const _, key.len());
            let n = llc::LLVMValueAsMetadata(self.i32c(n).as_value_ref());
            let mut pair = [s, n];
            let unroll = llc::LLVMMDNodeInContext2(ctx, pair.as_mut_ptr(), 2);
            let temp = lldi::LLVMTemporaryMDNode(ctx, std::ptr::null_mut::<LLVMMetadataRef>(), 0);
            let mut ops = [temp, unroll];
            let id = llc::LLVMMDNodeInContext2(ctx, ops.as_mut_ptr(), 2);
            lldi::LLVMMetadataReplaceAllUsesWith(temp, id);
            let kind = self.ctx.get_kind_id("llvm.loop");
            llc::LLVMSetMetadata(latch_br.as_value_ref(), kind, llc::LLVMMetadataAsValue(ctx, id));
        }
    }

    // ---- blocks ----

    /// Lowers a block; returns the values of its closing `yield` (empty without one).
    fn lower_block(&mut self, block: Block) -> LResult<Vec<Bv<'ctx>>> {
        let k = self.k;
        for &inst in &k.blocks[block].insts {
            let data = &k.insts[inst];
            if let Op::Yield(vals) = &data.op {
                return vals.iter().map(|&v| self.val(v)).collect();
            }
            let results = self.lower_inst(data)?;
            if results.len() != data.results.len() {
                return Err(LowerError::Invalid(format!(
                    "{inst}: `{}` gives {} results, the instruction lists {}",
                    data.op.name(),
                    results.len(),
                    data.results.len()
                )));
            }
            for (&r, v) in data.results.iter().zip(results) {
                self.vals[r.as_u32() as usize] = Some(v);
            }
        }
        Ok(vec![])
    }

    fn lower_inst(&mut self, data: &InstData) -> LResult<Vec<Bv<'ctx>>> {
        let k = self.k;
        let one = |v: Bv<'ctx>| Ok(vec![v]);
        match &data.op {
            Op::Const { ty, bits } => one(self.constant(*ty, *bits)),
            Op::Arg(p) | Op::BufferAddr(p) => {
                let v = self.params[p.as_u32() as usize];
                if v.is_pointer_value() {
                    one(self
                        .b
                        .build_ptr_to_int(v.into_pointer_value(), self.ctx.i64_type(), "")?
                        .into())
                } else {
                    one(v)
                }
            }
            Op::Id(kind) => one(self.id(*kind)?.into()),
            Op::Unary { op, arg } => one(self.unary(*op, self.val(*arg)?, k.ty(*arg))?),
            Op::Binary { op, lhs, rhs } => {
                one(self.binary(*op, self.val(*lhs)?, self.val(*rhs)?, k.ty(*lhs)))
            }
            Op::Fma { a, b, c } => {
                one(self.fma(self.val(*a)?, self.val(*b)?, self.val(*c)?, k.ty(*a))?)
            }
            Op::Cmp { op, lhs, rhs } => {
                one(self.compare(*op, self.val(*lhs)?, self.val(*rhs)?, k.ty(*lhs)))
            }
            Op::Select { cond, if_true, if_false } => {
                one(self.select(self.val(*cond)?, self.val(*if_true)?, self.val(*if_false)?))
            }
            Op::Convert { to, arg } => one(self.convert(self.val(*arg)?, k.ty(*arg), *to)?),
            Op::Bitcast { to, arg } => {
                one(self.cast(LLVMOpcode::LLVMBitCast, self.val(*arg)?, self.ty(*to)))
            }
            Op::Extract { vector, lane } => {
                let v = self.val(*vector)?.into_vector_value();
                one(self.b.build_extract_element(v, self.i32c(*lane as u32), "")?)
            }
            Op::MakeVector { ty, elems } => {
                let mut v = self.ty(*ty).into_vector_type().get_poison();
                for (i, e) in elems.iter().enumerate() {
                    v = self.b.build_insert_element(v, self.val(*e)?, self.i32c(i as u32), "")?;
                }
                one(v.into())
            }
            Op::Load { mem, index, ty } => one(self.load(mem, *index, *ty)?),
            Op::Store { mem, index, value } => {
                self.store(mem, *index, *value)?;
                Ok(vec![])
            }
            Op::Atomic { op, mem, index, value, scope } => {
                let ty = k.ty(*value);
                if !matches!(ty.scalar.bits(), 32 | 64) || !ty.scalar.is_int() || ty.lanes != 1 {
                    return Err(LowerError::Unsupported(format!(
                        "atomic on {ty} (32- or 64-bit integers only)"
                    )));
                }
                let (ptr, space) = self.address(mem, *index, ty)?;
                let v = self.val(*value)?;
                one(self.isa.atomic(self, *op, ptr, space, v, ty, *scope)?)
            }
            Op::Fence(scope) => {
                self.isa.fence(self, *scope)?;
                Ok(vec![])
            }
            Op::Barrier(kind) => {
                self.isa.barrier(self, *kind)?;
                Ok(vec![])
            }
            Op::Shuffle { mode, value, offset } => {
                let w = k.wave_size;
                if *offset >= w {
                    return Err(LowerError::Invalid(format!(
                        "shuffle offset {offset} >= wave size {w}"
                    )));
                }
                let (mode, off) = (*mode, *offset);
                one(self.per_dword(self.val(*value)?, k.ty(*value), &mut |l, x| match mode {
                    ShuffleMode::Xor => l.isa.shuffle_xor(l, x, off),
                    ShuffleMode::Up => l.isa.shuffle_up(l, x, off),
                    ShuffleMode::Down => l.isa.shuffle_down(l, x, off),
                })?)
            }
            Op::ShuffleIdx { value, lane } => {
                let src = self.b.build_and(
                    self.val(*lane)?.into_int_value(),
                    self.i32c(k.wave_size - 1),
                    "",
                )?;
                one(self.per_dword(self.val(*value)?, k.ty(*value), &mut |l, x| {
                    l.isa.shuffle_idx(l, x, src)
                })?)
            }
            Op::Broadcast { value, lane } => {
                let lane = *lane % k.wave_size;
                one(self.per_dword(self.val(*value)?, k.ty(*value), &mut |l, x| {
                    l.isa.broadcast(l, x, lane)
                })?)
            }
            Op::Ballot { cond } => {
                let c = self.val(*cond)?.into_int_value();
                one(self.isa.ballot(self, c)?.into())
            }
            Op::WaveReduce { op, value } => {
                one(self.wave_reduce(*op, self.val(*value)?, k.ty(*value))?)
            }
            Op::WaveArgmax { value, index } => {
                let (v, i) =
                    self.wave_argmax(self.val(*value)?, self.val(*index)?, k.ty(*value))?;
                Ok(vec![v, i])
            }
            Op::Tsum { p, values } => {
                let ty = k.ty(values[0]);
                let vals = values.iter().map(|&v| self.val(v)).collect::<LResult<Vec<_>>>()?;
                one(self.tsum(*p, vals, ty)?)
            }
            Op::If { cond, then_block, else_block } => {
                self.lower_if(*cond, *then_block, *else_block, &data.results)
            }
            Op::For { start, end, step, unroll, init, body } => {
                self.lower_for(*start, *end, *step, *unroll, init, *body)
            }
            Op::Yield(_) => Err(LowerError::Invalid("`yield` in the middle of a block".into())),
        }
    }

    fn lower_if(
        &mut self,
        cond: Value,
        tb: Block,
        eb: Block,
        results: &[Value],
    ) -> LResult<Vec<Bv<'ctx>>> {
        let c = self.val(cond)?.into_int_value();
        let then_bb = self.ctx.append_basic_block(self.func, "then");
        let else_bb = self.ctx.append_basic_block(self.func, "else");
        let merge = self.ctx.append_basic_block(self.func, "endif");
        self.b.build_conditional_branch(c, then_bb, else_bb)?;
        let mut arms: Vec<(Vec<Bv<'ctx>>, BasicBlock<'ctx>)> = vec![];
        for (bb, block) in [(then_bb, tb), (else_bb, eb)] {
            self.b.position_at_end(bb);
            let vals = self.lower_block(block)?;
            arms.push((vals, self.b.get_insert_block().expect("positioned")));
            self.b.build_unconditional_branch(merge)?;
        }
        self.b.position_at_end(merge);
        let mut out = vec![];
        for (i, &r) in results.iter().enumerate() {
            let phi = self.b.build_phi(self.ty(self.k.ty(r)), "")?;
            for (vals, bb) in &arms {
                let v = vals
                    .get(i)
                    .ok_or_else(|| LowerError::Invalid("`if` arm yields too few values".into()))?;
                phi.add_incoming(&[(v as &dyn BasicValue, *bb)]);
            }
            out.push(phi.as_basic_value());
        }
        Ok(out)
    }

    fn lower_for(
        &mut self,
        start: Value,
        end: Value,
        step: Value,
        unroll: u32,
        init: &[Value],
        body: Block,
    ) -> LResult<Vec<Bv<'ctx>>> {
        let k = self.k;
        let signed = k.ty(start).scalar.is_signed();
        let (s, e, st) = (self.val(start)?, self.val(end)?, self.val(step)?);
        let init: Vec<Bv<'ctx>> = init.iter().map(|&v| self.val(v)).collect::<LResult<_>>()?;
        let pre = self.b.get_insert_block().expect("positioned");
        let head = self.ctx.append_basic_block(self.func, "for.head");
        let body_bb = self.ctx.append_basic_block(self.func, "for.body");
        let exit = self.ctx.append_basic_block(self.func, "for.exit");
        self.b.build_unconditional_branch(head)?;
        self.b.position_at_end(head);
        let iphi = self.b.build_phi(s.get_type(), "i")?;
        iphi.add_incoming(&[(&s as &dyn BasicValue, pre)]);
        let mut phis = vec![];
        for v in &init {
            let phi = self.b.build_phi(v.get_type(), "")?;
            phi.add_incoming(&[(v as &dyn BasicValue, pre)]);
            phis.push(phi);
        }
        // `wrapped` is set when `i + step` overflowed: the IR's loop (like the interpreter's)
        // stops there instead of wrapping around to small indices.
        let wphi = self.b.build_phi(self.ctx.bool_type(), "wrapped")?;
        wphi.add_incoming(&[(&self.ctx.bool_type().const_zero() as &dyn BasicValue, pre)]);
        let i = iphi.as_basic_value();
        let pred = if signed { LLVMIntPredicate::LLVMIntSLT } else { LLVMIntPredicate::LLVMIntULT };
        let in_range = self.icmp(pred, i, e).into_int_value();
        let not_wrapped = self.b.build_not(wphi.as_basic_value().into_int_value(), "")?;
        let go = self.b.build_and(in_range, not_wrapped, "")?;
        self.b.build_conditional_branch(go, body_bb, exit)?;
        self.b.position_at_end(body_bb);
        let bparams = &k.blocks[body].params;
        if bparams.len() != phis.len() + 1 {
            return Err(LowerError::Invalid(
                "`for` body parameters do not match its carried values".into(),
            ));
        }
        self.vals[bparams[0].as_u32() as usize] = Some(i);
        for (p, phi) in bparams[1..].iter().zip(&phis) {
            self.vals[p.as_u32() as usize] = Some(phi.as_basic_value());
        }
        let next = self.lower_block(body)?;
        if next.len() != phis.len() {
            return Err(LowerError::Invalid(
                "`for` body yields a different number of carried values".into(),
            ));
        }
        let inext = self.binop(LLVMOpcode::LLVMAdd, i, st);
        let wrapped = self.icmp(pred, inext, i);
        let latch = self.b.get_insert_block().expect("positioned");
        let br = self.b.build_unconditional_branch(head)?;
        if unroll > 1 {
            self.set_unroll(br, unroll);
        }
        iphi.add_incoming(&[(&inext as &dyn BasicValue, latch)]);
        wphi.add_incoming(&[(&wrapped as &dyn BasicValue, latch)]);
        for (phi, v) in phis.iter().zip(&next) {
            phi.add_incoming(&[(v as &dyn BasicValue, latch)]);
        }
        self.b.position_at_end(exit);
        Ok(phis.iter().map(|p| p.as_basic_value()).collect())
    }

    // ---- arithmetic ----

    /// Runs `f` on f32 copies of f16 / bf16 operands and rounds the result back (exact: see the
    /// module doc); other types go straight through.
    fn widened(
        &self,
        ty: Type,
        args: &[Bv<'ctx>],
        f: impl FnOnce(&Self, &[Bv<'ctx>]) -> Bv<'ctx>,
    ) -> Bv<'ctx> {
        if matches!(ty.scalar, ScalarType::F16 | ScalarType::BF16) {
            let wide = self.ty(Type::vector(ScalarType::F32, ty.lanes));
            let w: Vec<_> =
                args.iter().map(|&a| self.cast(LLVMOpcode::LLVMFPExt, a, wide)).collect();
            let r = f(self, &w);
            self.cast(LLVMOpcode::LLVMFPTrunc, r, self.ty(ty))
        } else {
            f(self, args)
        }
    }

    fn fintr(&self, name: &str, ty: Type, args: &[Bv<'ctx>]) -> LResult<Bv<'ctx>> {
        if matches!(ty.scalar, ScalarType::F16 | ScalarType::BF16) {
            let wide_t = Type::vector(ScalarType::F32, ty.lanes);
            let wide = self.ty(wide_t);
            let w: Vec<_> =
                args.iter().map(|&a| self.cast(LLVMOpcode::LLVMFPExt, a, wide)).collect();
            let r = self.intrinsic_v(name, &[wide], &w)?;
            Ok(self.cast(LLVMOpcode::LLVMFPTrunc, r, self.ty(ty)))
        } else {
            self.intrinsic_v(name, &[self.ty(ty)], args)
        }
    }

    fn unary(&mut self, op: UnaryOp, x: Bv<'ctx>, ty: Type) -> LResult<Bv<'ctx>> {
        use UnaryOp as U;
        let float = ty.scalar.is_float();
        Ok(match op {
            U::Neg if float => {
                // SAFETY: a float operand of this builder's context.
                unsafe {
                    Bv::new(llc::LLVMBuildFNeg(self.b.as_mut_ptr(), x.as_value_ref(), c"".as_ptr()))
                }
            }
            U::Neg => self.binop(LLVMOpcode::LLVMSub, self.constant(ty, 0), x),
            U::Not => self.binop(LLVMOpcode::LLVMXor, x, self.constant(ty, u64::MAX)),
            U::Abs if float => self.intrinsic_v("llvm.fabs", &[self.ty(ty)], &[x])?,
            U::Abs => self.intrinsic_v(
                "llvm.abs",
                &[self.ty(ty)],
                &[x, self.ctx.bool_type().const_zero().into()],
            )?,
            U::Sqrt => self.fintr("llvm.sqrt", ty, &[x])?,
            U::Floor => self.fintr("llvm.floor", ty, &[x])?,
            U::Ceil => self.fintr("llvm.ceil", ty, &[x])?,
            U::Trunc => self.fintr("llvm.trunc", ty, &[x])?,
            U::Round => self.fintr("llvm.round", ty, &[x])?,
            U::RoundEven => self.fintr("llvm.roundeven", ty, &[x])?,
            U::Exp2Approx => self.approx(ApproxFn::Exp2, x, ty)?,
            U::Log2Approx => self.approx(ApproxFn::Log2, x, ty)?,
            U::RsqrtApprox => self.approx(ApproxFn::Rsqrt, x, ty)?,
            U::RcpApprox => self.approx(ApproxFn::Rcp, x, ty)?,
            U::IsNan => self.fcmp(LLVMRealPredicate::LLVMRealUNO, x, x),
            U::Popcount => self.intrinsic_v("llvm.ctpop", &[self.ty(ty)], &[x])?,
            U::Ctz => self.intrinsic_v(
                "llvm.cttz",
                &[self.ty(ty)],
                &[x, self.ctx.bool_type().const_zero().into()],
            )?,
        })
    }

    /// An approximate f32 function, as the back end computes it.
    fn approx(&mut self, f: ApproxFn, x: Bv<'ctx>, ty: Type) -> LResult<Bv<'ctx>> {
        if ty != Type::F32 {
            return Err(LowerError::Unsupported(format!("{f:?} approximation on {ty} (f32 only)")));
        }
        self.isa.approx(self, f, x)
    }

    pub fn binary(&self, op: BinaryOp, a: Bv<'ctx>, b: Bv<'ctx>, ty: Type) -> Bv<'ctx> {
        use BinaryOp as B;
        use LLVMOpcode as O;
        let float = ty.scalar.is_float();
        let signed = ty.scalar.is_signed();
        let fop = |o: O| self.widened(ty, &[a, b], |l, w| l.binop(o, w[0], w[1]));
        match op {
            B::Add if float => fop(O::LLVMFAdd),
            B::Sub if float => fop(O::LLVMFSub),
            B::Mul if float => fop(O::LLVMFMul),
            B::Div if float => fop(O::LLVMFDiv),
            B::Rem if float => fop(O::LLVMFRem),
            B::Add => self.binop(O::LLVMAdd, a, b),
            B::Sub => self.binop(O::LLVMSub, a, b),
            B::Mul => self.binop(O::LLVMMul, a, b),
            B::Div => self.binop(if signed { O::LLVMSDiv } else { O::LLVMUDiv }, a, b),
            B::Rem => self.binop(if signed { O::LLVMSRem } else { O::LLVMURem }, a, b),
            B::Min | B::Max if float => {
                // min: a < b || b is NaN ? a : b;  max: a > b || b is NaN ? a : b.
                let p = if op == B::Min {
                    LLVMRealPredicate::LLVMRealOLT
                } else {
                    LLVMRealPredicate::LLVMRealOGT
                };
                let better = self.fcmp(p, a, b);
                let b_nan = self.fcmp(LLVMRealPredicate::LLVMRealUNO, b, b);
                let take_a = self.binop(O::LLVMOr, better, b_nan);
                self.select(take_a, a, b)
            }
            B::Min | B::Max => {
                use LLVMIntPredicate as P;
                let p = match (op == B::Min, signed) {
                    (true, true) => P::LLVMIntSLT,
                    (true, false) => P::LLVMIntULT,
                    (false, true) => P::LLVMIntSGT,
                    (false, false) => P::LLVMIntUGT,
                };
                let take_a = self.icmp(p, a, b);
                self.select(take_a, a, b)
            }
            B::And => self.binop(O::LLVMAnd, a, b),
            B::Or => self.binop(O::LLVMOr, a, b),
            B::Xor => self.binop(O::LLVMXor, a, b),
            B::Shl | B::Shr => {
                let amount =
                    self.binop(O::LLVMAnd, b, self.constant(ty, (ty.scalar.bits() - 1) as u64));
                let o = match (op, signed) {
                    (B::Shl, _) => O::LLVMShl,
                    (_, true) => O::LLVMAShr,
                    _ => O::LLVMLShr,
                };
                self.binop(o, a, amount)
            }
        }
    }

    fn compare(&self, op: CmpOp, a: Bv<'ctx>, b: Bv<'ctx>, ty: Type) -> Bv<'ctx> {
        use LLVMIntPredicate as I;
        use LLVMRealPredicate as R;
        if ty.scalar.is_float() {
            let p = match op {
                CmpOp::Eq => R::LLVMRealOEQ,
                CmpOp::Ne => R::LLVMRealUNE,
                CmpOp::Lt => R::LLVMRealOLT,
                CmpOp::Le => R::LLVMRealOLE,
                CmpOp::Gt => R::LLVMRealOGT,
                CmpOp::Ge => R::LLVMRealOGE,
            };
            return self.fcmp(p, a, b);
        }
        let s = ty.scalar.is_signed();
        let p = match op {
            CmpOp::Eq => I::LLVMIntEQ,
            CmpOp::Ne => I::LLVMIntNE,
            CmpOp::Lt if s => I::LLVMIntSLT,
            CmpOp::Le if s => I::LLVMIntSLE,
            CmpOp::Gt if s => I::LLVMIntSGT,
            CmpOp::Ge if s => I::LLVMIntSGE,
            CmpOp::Lt => I::LLVMIntULT,
            CmpOp::Le => I::LLVMIntULE,
            CmpOp::Gt => I::LLVMIntUGT,
            CmpOp::Ge => I::LLVMIntUGE,
        };
        self.icmp(p, a, b)
    }

    fn fma(&mut self, a: Bv<'ctx>, b: Bv<'ctx>, c: Bv<'ctx>, ty: Type) -> LResult<Bv<'ctx>> {
        match ty.scalar {
            ScalarType::F16 | ScalarType::F32 | ScalarType::F64 => {
                self.intrinsic_v("llvm.fma", &[self.ty(ty)], &[a, b, c])
            }
            ScalarType::BF16 if self.t.has(Capability::Bf16Fma) => {
                self.intrinsic_v("llvm.fma", &[self.ty(ty)], &[a, b, c])
            }
            ScalarType::BF16 => {
                self.per_lane(ty, &[a, b, c], &mut |l, x| l.fma_bf16_soft(x[0], x[1], x[2]))
            }
            s => Err(LowerError::Invalid(format!("fma on {s}"))),
        }
    }

    /// bf16 fma with one rounding where no correctly rounded instruction exists: the product is
    /// exact in f64, TwoSum gives the exact error of the f64 sum, the sum is rounded to odd, and
    /// round-to-odd followed by round-to-nearest-even is a single correct rounding.
    fn fma_bf16_soft(&mut self, a: Bv<'ctx>, b: Bv<'ctx>, c: Bv<'ctx>) -> LResult<Bv<'ctx>> {
        use LLVMOpcode as O;
        let f64t = self.ctx.f64_type().into();
        let (a, b, c) = (
            self.cast(O::LLVMFPExt, a, f64t),
            self.cast(O::LLVMFPExt, b, f64t),
            self.cast(O::LLVMFPExt, c, f64t),
        );
        let p = self.binop(O::LLVMFMul, a, b);
        let s = self.binop(O::LLVMFAdd, p, c);
        let bb = self.binop(O::LLVMFSub, s, p);
        let t1 = self.binop(O::LLVMFSub, s, bb);
        let e1 = self.binop(O::LLVMFSub, p, t1);
        let e2 = self.binop(O::LLVMFSub, c, bb);
        let e = self.binop(O::LLVMFAdd, e1, e2);
        // The exact sum is s + e: rounding s to odd moves it one ulp toward e when s is even.
        let zero = self.constant(Type::F64, 0);
        let inexact = self.fcmp(LLVMRealPredicate::LLVMRealONE, e, zero);
        let i64t = self.ctx.i64_type().into();
        let bits = self.cast(O::LLVMBitCast, s, i64t);
        let sign_s = self.icmp(LLVMIntPredicate::LLVMIntSLT, bits, self.constant(Type::I64, 0));
        let ebits = self.cast(O::LLVMBitCast, e, i64t);
        let sign_e = self.icmp(LLVMIntPredicate::LLVMIntSLT, ebits, self.constant(Type::I64, 0));
        let away = self.icmp(LLVMIntPredicate::LLVMIntEQ, sign_s, sign_e);
        let s_odd = self.round_to_odd_bits(bits, Type::I64, inexact, away);
        let s_odd = self.cast(O::LLVMBitCast, s_odd, f64t);
        Ok(self.f64_to_bf16(s_odd))
    }

    /// `bits` of a float rounded to nearest, made round-to-odd: when inexact and even, one step
    /// away from zero (`away`) or toward it.
    fn round_to_odd_bits(
        &self,
        bits: Bv<'ctx>,
        ity: Type,
        inexact: Bv<'ctx>,
        away: Bv<'ctx>,
    ) -> Bv<'ctx> {
        use LLVMOpcode as O;
        let one = self.constant(ity, 1);
        let low = self.binop(O::LLVMAnd, bits, one);
        let even = self.icmp(LLVMIntPredicate::LLVMIntEQ, low, self.constant(ity, 0));
        let up = self.binop(O::LLVMAdd, bits, one);
        let down = self.binop(O::LLVMSub, bits, one);
        let adj = self.select(away, up, down);
        let fix = self.binop(O::LLVMAnd, inexact, even);
        self.select(fix, adj, bits)
    }

    /// f64 -> bf16 with one rounding: round to odd into f32 (29 spare bits), then to bf16.
    fn f64_to_bf16(&self, v: Bv<'ctx>) -> Bv<'ctx> {
        use LLVMOpcode as O;
        let f32t = self.ctx.f32_type().into();
        let f = self.cast(O::LLVMFPTrunc, v, f32t);
        let back = self.cast(O::LLVMFPExt, f, self.ctx.f64_type().into());
        let inexact = self.fcmp(LLVMRealPredicate::LLVMRealONE, back, v);
        // The f32 value overshot |v| when |back| > |v|: then step toward zero.
        let abs = |x: Bv<'ctx>| {
            self.intrinsic_v("llvm.fabs", &[x.get_type()], &[x]).expect("fabs exists")
        };
        let over = self.fcmp(LLVMRealPredicate::LLVMRealOGT, abs(back), abs(v));
        let away = self.binop(O::LLVMXor, over, self.ctx.bool_type().const_all_ones().into());
        let bits = self.cast(O::LLVMBitCast, f, self.ctx.i32_type().into());
        let odd = self.round_to_odd_bits(bits, Type::I32, inexact, away);
        let f = self.cast(O::LLVMBitCast, odd, f32t);
        self.cast(O::LLVMFPTrunc, f, self.ctx.bf16_type().into())
    }

    /// Applies `f` to each element (scalars: once).
    fn per_lane(
        &mut self,
        ty: Type,
        args: &[Bv<'ctx>],
        f: &mut dyn FnMut(&mut Self, &[Bv<'ctx>]) -> LResult<Bv<'ctx>>,
    ) -> LResult<Bv<'ctx>> {
        if ty.lanes == 1 {
            return f(self, args);
        }
        let mut out = self.ty(ty).into_vector_type().get_poison();
        for i in 0..ty.lanes as u32 {
            let el: Vec<Bv<'ctx>> = args
                .iter()
                .map(|a| self.b.build_extract_element(a.into_vector_value(), self.i32c(i), ""))
                .collect::<Result<_, _>>()?;
            let r = f(self, &el)?;
            out = self.b.build_insert_element(out, r, self.i32c(i), "")?;
        }
        Ok(out.into())
    }

    fn convert(&mut self, v: Bv<'ctx>, from: Type, to: Type) -> LResult<Bv<'ctx>> {
        use LLVMOpcode as O;
        use ScalarType as S;
        let (fs, ts) = (from.scalar, to.scalar);
        let to_t = self.ty(to);
        if fs == ts {
            return Ok(v);
        }
        let wide = |l: &Self, v: Bv<'ctx>| -> Bv<'ctx> {
            if matches!(fs, S::F16 | S::BF16) {
                l.cast(O::LLVMFPExt, v, l.ty(Type::vector(S::F32, from.lanes)))
            } else {
                v
            }
        };
        Ok(match (fs.is_float(), ts.is_float()) {
            (true, true) => {
                if ts == S::BF16 && fs == S::F64 {
                    self.per_lane(to, &[v], &mut |l, x| Ok(l.f64_to_bf16(x[0])))?
                } else if fs.bits() < ts.bits() {
                    self.cast(O::LLVMFPExt, v, to_t)
                } else {
                    // f32 -> f16/bf16 and f64 -> f16/f32 are single roundings; f16 <-> bf16 goes
                    // through f32, which holds either exactly.
                    let v = if fs.bits() == ts.bits() { wide(self, v) } else { v };
                    self.cast(O::LLVMFPTrunc, v, to_t)
                }
            }
            (true, false) => {
                let name = if ts.is_signed() { "llvm.fptosi.sat" } else { "llvm.fptoui.sat" };
                let w = wide(self, v);
                self.intrinsic_v(name, &[to_t, w.get_type()], &[w])?
            }
            (false, true) => {
                let signed = fs.is_signed();
                let op = if signed { O::LLVMSIToFP } else { O::LLVMUIToFP };
                if ts == S::BF16 {
                    let f64v = self.ty(Type::vector(S::F64, from.lanes));
                    if fs.bits() <= 32 {
                        let d = self.cast(op, v, f64v);
                        self.per_lane(to, &[d], &mut |l, x| Ok(l.f64_to_bf16(x[0])))?
                    } else {
                        self.per_lane(to, &[v], &mut |l, x| l.int64_to_bf16(x[0], signed))?
                    }
                } else {
                    self.cast(op, v, to_t)
                }
            }
            (false, false) => {
                if ts.bits() < fs.bits() {
                    self.cast(O::LLVMTrunc, v, to_t)
                } else if fs.is_signed() {
                    self.cast(O::LLVMSExt, v, to_t)
                } else {
                    self.cast(O::LLVMZExt, v, to_t)
                }
            }
        })
    }

    /// 64-bit integer -> bf16 with one rounding: to f64 rounded to odd, then `f64_to_bf16`.
    fn int64_to_bf16(&mut self, x: Bv<'ctx>, signed: bool) -> LResult<Bv<'ctx>> {
        use LLVMIntPredicate as P;
        use LLVMOpcode as O;
        let f64t = self.ctx.f64_type().into();
        let f = self.cast(if signed { O::LLVMSIToFP } else { O::LLVMUIToFP }, x, f64t);
        let name = if signed { "llvm.fptosi.sat" } else { "llvm.fptoui.sat" };
        let back = self.intrinsic_v(name, &[x.get_type(), f64t], &[f])?;
        let inexact = self.icmp(P::LLVMIntNE, back, x);
        let over = if signed {
            let neg = self.icmp(P::LLVMIntSLT, x, self.constant(Type::I64, 0));
            let above = self.icmp(P::LLVMIntSGT, back, x);
            let below = self.icmp(P::LLVMIntSLT, back, x);
            self.select(neg, below, above)
        } else {
            self.icmp(P::LLVMIntUGT, back, x)
        };
        let away = self.binop(O::LLVMXor, over, self.ctx.bool_type().const_all_ones().into());
        let bits = self.cast(O::LLVMBitCast, f, self.ctx.i64_type().into());
        let odd = self.round_to_odd_bits(bits, Type::I64, inexact, away);
        let f = self.cast(O::LLVMBitCast, odd, f64t);
        Ok(self.f64_to_bf16(f))
    }

    // ---- memory ----

    /// The address of element `index` (in units of `ty`'s scalar) of `mem`, and its address space.
    fn address(
        &mut self,
        mem: &MemRef,
        index: Value,
        ty: Type,
    ) -> LResult<(PointerValue<'ctx>, u16)> {
        let idx = self.b.build_int_z_extend(
            self.val(index)?.into_int_value(),
            self.ctx.i64_type(),
            "",
        )?;
        let elem = scalar_mem_type(self.ctx, ty.scalar);
        let (base, space) = match mem {
            MemRef::Buffer(p) => {
                let v = self.params[p.as_u32() as usize];
                if !v.is_pointer_value() {
                    return Err(LowerError::Invalid(format!(
                        "memory access through scalar parameter {p}"
                    )));
                }
                (v.into_pointer_value(), AS_GLOBAL)
            }
            MemRef::Global(addr) => {
                let a = self.val(*addr)?.into_int_value();
                (
                    self.b.build_int_to_ptr(a, self.ctx.ptr_type(LlvmAs::from(AS_GLOBAL)), "")?,
                    AS_GLOBAL,
                )
            }
            MemRef::Lds(slot) => {
                let g =
                    self.lds.ok_or_else(|| LowerError::Invalid(format!("{slot} without LDS")))?;
                let off = self.k.lds_offsets()[slot.as_u32() as usize];
                // SAFETY: in-bounds offset of a slot inside the LDS array.
                let p = unsafe {
                    self.b.build_in_bounds_gep(
                        self.ctx.i8_type(),
                        g.as_pointer_value(),
                        &[self.i32c(off)],
                        "",
                    )?
                };
                (p, AS_LDS)
            }
            MemRef::Private(slot) => {
                let p = *self
                    .privates
                    .get(slot.as_u32() as usize)
                    .ok_or_else(|| LowerError::Invalid(format!("unknown private array {slot}")))?;
                (p, self.isa.private_address_space())
            }
        };
        // SAFETY: a plain element GEP; out-of-bounds indices are the kernel's (sanitizer-checked) bug.
        let ptr = unsafe { self.b.build_gep(elem, base, &[idx], "")? };
        Ok((ptr, space))
    }

    fn align_of(ty: Type) -> u32 {
        if ty.lanes > 1 && ty.bytes().is_power_of_two() {
            ty.bytes()
        } else {
            ty.scalar.bytes()
        }
    }

    fn load(&mut self, mem: &MemRef, index: Value, ty: Type) -> LResult<Bv<'ctx>> {
        let (ptr, _) = self.address(mem, index, ty)?;
        let bool_scalar = ty.scalar == ScalarType::I1;
        let lty = if bool_scalar { self.ctx.i8_type().into() } else { self.ty(ty) };
        let v = self.b.build_load(lty, ptr, "")?;
        if let Some(i) = v.as_instruction_value() {
            let _ = i.set_alignment(Self::align_of(ty));
        }
        Ok(if bool_scalar {
            self.cast(LLVMOpcode::LLVMTrunc, v, self.ctx.bool_type().into())
        } else {
            v
        })
    }

    fn store(&mut self, mem: &MemRef, index: Value, value: Value) -> LResult<()> {
        let ty = self.k.ty(value);
        let (ptr, _) = self.address(mem, index, ty)?;
        let mut v = self.val(value)?;
        if ty.scalar == ScalarType::I1 {
            v = self.cast(LLVMOpcode::LLVMZExt, v, self.ctx.i8_type().into());
        }
        let st = self.b.build_store(ptr, v)?;
        let _ = st.set_alignment(Self::align_of(ty));
        Ok(())
    }

    // ---- cross-lane ----

    /// Applies a 32-bit cross-lane exchange to a value of any type: vectors element by element,
    /// 64-bit scalars as two halves, narrower ones zero-extended.
    fn per_dword(
        &mut self,
        v: Bv<'ctx>,
        ty: Type,
        f: &mut dyn FnMut(&mut Self, IntValue<'ctx>) -> LResult<IntValue<'ctx>>,
    ) -> LResult<Bv<'ctx>> {
        use LLVMOpcode as O;
        self.per_lane(ty, &[v], &mut |l, x| {
            let x = x[0];
            let s = ty.scalar;
            let ity: BasicTypeEnum = l.int_type(s.bits()).into();
            let xi = if s.is_float() { l.cast(O::LLVMBitCast, x, ity) } else { x };
            let r = if s.bits() == 64 {
                let lo = l.cast(O::LLVMTrunc, xi, l.i32t().into()).into_int_value();
                let hi = l.binop(O::LLVMLShr, xi, l.i64c(32).into());
                let hi = l.cast(O::LLVMTrunc, hi, l.i32t().into()).into_int_value();
                let (lo, hi) = (f(l, lo)?, f(l, hi)?);
                let lo = l.cast(O::LLVMZExt, lo.into(), ity);
                let hi = l.cast(O::LLVMZExt, hi.into(), ity);
                let hi = l.binop(O::LLVMShl, hi, l.i64c(32).into());
                l.binop(O::LLVMOr, lo, hi)
            } else if s.bits() < 32 {
                let w = l.cast(O::LLVMZExt, xi, l.i32t().into()).into_int_value();
                let r = f(l, w)?;
                l.cast(O::LLVMTrunc, r.into(), ity)
            } else {
                f(l, xi.into_int_value())?.into()
            };
            Ok(if s.is_float() { l.cast(O::LLVMBitCast, r, scalar_type(l.ctx, s)) } else { r })
        })
    }

    /// The id `kind`, as the target reads it.
    fn id(&mut self, kind: IdKind) -> LResult<IntValue<'ctx>> {
        self.isa.id(self, kind)
    }

    /// The linear local id `x + y * sx + z * sx * sy` from the target's local ids, leaving out
    /// the dimensions of size 1; the same on every target.
    pub(crate) fn local_linear(&mut self) -> LResult<IntValue<'ctx>> {
        let [sx, sy, sz] = self.k.workgroup_size;
        let mut lin = self.id(IdKind::LocalId(Dim::X))?;
        if sy > 1 {
            let y = self.id(IdKind::LocalId(Dim::Y))?;
            let t = self.b.build_int_mul(y, self.i32c(sx), "")?;
            lin = self.b.build_int_add(lin, t, "")?;
        }
        if sz > 1 {
            let z = self.id(IdKind::LocalId(Dim::Z))?;
            let t = self.b.build_int_mul(z, self.i32c(sx * sy), "")?;
            lin = self.b.build_int_add(lin, t, "")?;
        }
        Ok(lin)
    }

    /// `v op shuffle_xor(v, o)` for o = W/2 .. 1.
    fn wave_reduce(&mut self, op: ReduceOp, v: Bv<'ctx>, ty: Type) -> LResult<Bv<'ctx>> {
        if let Some(r) = self.isa.wave_reduce(self, op, v, ty)? {
            return Ok(r);
        }
        let bop = match op {
            ReduceOp::Add => BinaryOp::Add,
            ReduceOp::Min => BinaryOp::Min,
            ReduceOp::Max => BinaryOp::Max,
        };
        let mut v = v;
        let mut o = self.k.wave_size / 2;
        while o >= 1 {
            let partner = self.per_dword(v, ty, &mut |l, x| l.isa.shuffle_xor(l, x, o))?;
            v = self.binary(bop, v, partner, ty);
            o /= 2;
        }
        Ok(v)
    }

    /// Argmax butterfly: the partner wins when its value is larger, when it is NaN and ours is
    /// not, or on a tie (both equal or both NaN) when its index is lower. Symmetric, so every
    /// lane ends with the same pair.
    fn wave_argmax(&mut self, v: Bv<'ctx>, i: Bv<'ctx>, ty: Type) -> LResult<(Bv<'ctx>, Bv<'ctx>)> {
        use LLVMIntPredicate as P;
        use LLVMOpcode as O;
        use LLVMRealPredicate as R;
        if ty.lanes != 1 {
            return Err(LowerError::Unsupported(format!("wave_argmax on {ty}")));
        }
        let (mut v, mut i) = (v, i);
        let mut o = self.k.wave_size / 2;
        while o >= 1 {
            let pv = self.per_dword(v, ty, &mut |l, x| l.isa.shuffle_xor(l, x, o))?;
            let pi = self.per_dword(i, Type::U32, &mut |l, x| l.isa.shuffle_xor(l, x, o))?;
            let lower_index = self.icmp(P::LLVMIntULT, pi, i);
            let take = if ty.scalar.is_float() {
                let gt = self.fcmp(R::LLVMRealOGT, pv, v);
                let eq = self.fcmp(R::LLVMRealOEQ, pv, v);
                let own_nan = self.fcmp(R::LLVMRealUNO, v, v);
                let p_nan = self.fcmp(R::LLVMRealUNO, pv, pv);
                let not_own_nan =
                    self.binop(O::LLVMXor, own_nan, self.ctx.bool_type().const_all_ones().into());
                let nan_wins = self.binop(O::LLVMAnd, p_nan, not_own_nan);
                let both_nan = self.binop(O::LLVMAnd, p_nan, own_nan);
                let tie = self.binop(O::LLVMOr, eq, both_nan);
                let tie_wins = self.binop(O::LLVMAnd, tie, lower_index);
                let a = self.binop(O::LLVMOr, gt, nan_wins);
                self.binop(O::LLVMOr, a, tie_wins)
            } else {
                let gt = self.icmp(
                    if ty.scalar.is_signed() { P::LLVMIntSGT } else { P::LLVMIntUGT },
                    pv,
                    v,
                );
                let eq = self.icmp(P::LLVMIntEQ, pv, v);
                let tie_wins = self.binop(O::LLVMAnd, eq, lower_index);
                self.binop(O::LLVMOr, gt, tie_wins)
            };
            v = self.select(take, pv, v);
            i = self.select(take, pi, i);
            o /= 2;
        }
        Ok((v, i))
    }

    /// The transposed butterfly of DESIGN.md section 2: log2(P) halving steps (each lane sends the
    /// half it gives up, keeps the other, adds `kept + received`), then a plain butterfly over the
    /// remaining offsets. P-1+log2(W/P) exchanges.
    fn tsum(&mut self, p: u32, values: Vec<Bv<'ctx>>, ty: Type) -> LResult<Bv<'ctx>> {
        let w = self.k.wave_size;
        if !p.is_power_of_two() || p > w || values.len() > p as usize || values.is_empty() {
            return Err(LowerError::Invalid(format!(
                "tsum<{p}> of {} values in a wave of {w}",
                values.len()
            )));
        }
        let mut vals = values;
        while vals.len() < p as usize {
            vals.push(self.constant(ty, 0));
        }
        let lane = self.id(IdKind::Lane)?;
        let mut o = w / 2;
        while vals.len() > 1 {
            let half = vals.len() / 2;
            let bit = self.b.build_and(lane, self.i32c(o), "")?;
            let upper = self.icmp(LLVMIntPredicate::LLVMIntNE, bit.into(), self.i32c(0).into());
            let mut next = Vec::with_capacity(half);
            for j in 0..half {
                let (lo, hi) = (vals[j], vals[half + j]);
                let send = self.select(upper, lo, hi);
                let keep = self.select(upper, hi, lo);
                let recv = self.per_dword(send, ty, &mut |l, x| l.isa.shuffle_xor(l, x, o))?;
                next.push(self.binary(BinaryOp::Add, keep, recv, ty));
            }
            vals = next;
            o /= 2;
        }
        let mut v = vals[0];
        while o >= 1 {
            let partner = self.per_dword(v, ty, &mut |l, x| l.isa.shuffle_xor(l, x, o))?;
            v = self.binary(BinaryOp::Add, v, partner, ty);
            o /= 2;
        }
        Ok(v)
    }
}

/// The LLVM type of a scalar in registers.
pub(crate) fn scalar_type(ctx: &Context, s: ScalarType) -> BasicTypeEnum<'_> {
    match s {
        ScalarType::I1 => ctx.bool_type().into(),
        ScalarType::I8 | ScalarType::U8 => ctx.i8_type().into(),
        ScalarType::I16 | ScalarType::U16 => ctx.i16_type().into(),
        ScalarType::I32 | ScalarType::U32 => ctx.i32_type().into(),
        ScalarType::I64 | ScalarType::U64 => ctx.i64_type().into(),
        ScalarType::F16 => ctx.f16_type().into(),
        ScalarType::BF16 => ctx.bf16_type().into(),
        ScalarType::F32 => ctx.f32_type().into(),
        ScalarType::F64 => ctx.f64_type().into(),
    }
}

/// The LLVM type of a scalar in memory (`i1` is a byte).
fn scalar_mem_type(ctx: &Context, s: ScalarType) -> BasicTypeEnum<'_> {
    if s == ScalarType::I1 {
        ctx.i8_type().into()
    } else {
        scalar_type(ctx, s)
    }
}

trait VecTypeOf<'ctx> {
    fn vec_type_of(self, n: u32) -> BasicTypeEnum<'ctx>;
}

impl<'ctx> VecTypeOf<'ctx> for BasicTypeEnum<'ctx> {
    fn vec_type_of(self, n: u32) -> BasicTypeEnum<'ctx> {
        match self {
            BasicTypeEnum::IntType(t) => t.vec_type(n).into(),
            BasicTypeEnum::FloatType(t) => t.vec_type(n).into(),
            other => other,
        }
    }
}
