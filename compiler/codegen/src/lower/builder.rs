//! The building blocks of the lowering: LLVM types and constants of kiln types, instruction and
//! intrinsic helpers for scalars and vectors alike, textual helpers and loop metadata.

use super::{Bv, LResult, LowerError, Lowering};
use inkwell::context::{AsContextRef, Context};
use inkwell::intrinsics::Intrinsic;
use inkwell::llvm_sys::core as llc;
use inkwell::llvm_sys::debuginfo as lldi;
use inkwell::llvm_sys::prelude::LLVMMetadataRef;
use inkwell::llvm_sys::{LLVMIntPredicate, LLVMOpcode, LLVMRealPredicate};
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Linkage;
use inkwell::types::{AsTypeRef, BasicType, BasicTypeEnum, IntType};
use inkwell::values::{AsValueRef, FunctionValue, IntValue};
use kiln_ir::*;

impl<'ctx, 'k> Lowering<'ctx, 'k> {
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

    pub(super) fn val(&self, v: Value) -> LResult<Bv<'ctx>> {
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

    pub(super) fn link_prelude(&mut self) -> LResult<()> {
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
    pub(super) fn set_unroll(&self, latch_br: inkwell::values::InstructionValue<'ctx>, n: u32) {
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
pub(super) fn scalar_mem_type(ctx: &Context, s: ScalarType) -> BasicTypeEnum<'_> {
    if s == ScalarType::I1 {
        ctx.i8_type().into()
    } else {
        scalar_type(ctx, s)
    }
}

pub(super) trait VecTypeOf<'ctx> {
    fn vec_type_of(self, n: u32) -> BasicTypeEnum<'ctx>;
}

impl<'ctx> VecTypeOf<'ctx> for BasicTypeEnum<'ctx> {
    fn vec_type_of(self, n: u32) -> BasicTypeEnum<'ctx> {
        match self {
            BasicTypeEnum::IntType(t) => t.vec_type(n).into(),
            BasicTypeEnum::FloatType(t) => t.vec_type(n).into(),
            other @ (BasicTypeEnum::ArrayType(_)
            | BasicTypeEnum::PointerType(_)
            | BasicTypeEnum::StructType(_)
            | BasicTypeEnum::VectorType(_)
            | BasicTypeEnum::ScalableVectorType(_)) => other,
        }
    }
}
