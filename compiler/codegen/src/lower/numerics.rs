//! Numeric lowering, decided once for both vendors so they compute the interpreter's bits:
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

use super::{Bv, LResult, LowerError, Lowering};
use crate::isa::ApproxFn;
use inkwell::llvm_sys::core as llc;
use inkwell::llvm_sys::{LLVMIntPredicate, LLVMOpcode, LLVMRealPredicate};
use inkwell::values::AsValueRef;
use kiln_ir::target::Capability;
use kiln_ir::*;

impl<'ctx, 'k> Lowering<'ctx, 'k> {
    /// Runs `f` on f32 copies of f16 / bf16 operands and rounds the result back (exact: see the
    /// module doc); other types go straight through.
    pub(super) fn widened(
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

    pub(super) fn fintr(&self, name: &str, ty: Type, args: &[Bv<'ctx>]) -> LResult<Bv<'ctx>> {
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

    pub(super) fn unary(&mut self, op: UnaryOp, x: Bv<'ctx>, ty: Type) -> LResult<Bv<'ctx>> {
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
    pub(super) fn approx(&mut self, f: ApproxFn, x: Bv<'ctx>, ty: Type) -> LResult<Bv<'ctx>> {
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
            B::Shl => self.binop(O::LLVMShl, a, self.shift_amount(b, ty)),
            B::Shr => {
                let o = if signed { O::LLVMAShr } else { O::LLVMLShr };
                self.binop(o, a, self.shift_amount(b, ty))
            }
        }
    }

    /// A shift amount taken modulo the bit width, as `ops.rs` defines shifts.
    fn shift_amount(&self, b: Bv<'ctx>, ty: Type) -> Bv<'ctx> {
        self.binop(LLVMOpcode::LLVMAnd, b, self.constant(ty, (ty.scalar.bits() - 1) as u64))
    }

    pub(super) fn compare(&self, op: CmpOp, a: Bv<'ctx>, b: Bv<'ctx>, ty: Type) -> Bv<'ctx> {
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

    pub(super) fn fma(
        &mut self,
        a: Bv<'ctx>,
        b: Bv<'ctx>,
        c: Bv<'ctx>,
        ty: Type,
    ) -> LResult<Bv<'ctx>> {
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
            s @ (ScalarType::I1
            | ScalarType::I8
            | ScalarType::U8
            | ScalarType::I16
            | ScalarType::U16
            | ScalarType::I32
            | ScalarType::U32
            | ScalarType::I64
            | ScalarType::U64) => Err(LowerError::Invalid(format!("fma on {s}"))),
        }
    }

    /// bf16 fma with one rounding where no correctly rounded instruction exists: the product is
    /// exact in f64, TwoSum gives the exact error of the f64 sum, the sum is rounded to odd, and
    /// round-to-odd followed by round-to-nearest-even is a single correct rounding.
    pub(super) fn fma_bf16_soft(
        &mut self,
        a: Bv<'ctx>,
        b: Bv<'ctx>,
        c: Bv<'ctx>,
    ) -> LResult<Bv<'ctx>> {
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
    pub(super) fn round_to_odd_bits(
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
    pub(super) fn f64_to_bf16(&self, v: Bv<'ctx>) -> Bv<'ctx> {
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
    pub(super) fn per_lane(
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

    pub(super) fn convert(&mut self, v: Bv<'ctx>, from: Type, to: Type) -> LResult<Bv<'ctx>> {
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
    pub(super) fn int64_to_bf16(&mut self, x: Bv<'ctx>, signed: bool) -> LResult<Bv<'ctx>> {
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
}
