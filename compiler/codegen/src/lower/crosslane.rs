//! Cross-lane lowering shared by both vendors; the exchanges themselves are the back end's.
//!
//! - Cross-lane ops work on 32-bit pieces: 64-bit values split in two, narrower ones extended.
//!   Wave reductions and `tsum` are xor butterflies with descending offsets combining
//!   `own op partner`, the interpreter's order, so results are bitwise equal.

use super::{scalar_type, Bv, LResult, LowerError, Lowering};
use inkwell::llvm_sys::{LLVMIntPredicate, LLVMOpcode, LLVMRealPredicate};
use inkwell::types::BasicTypeEnum;
use inkwell::values::IntValue;
use kiln_ir::*;

impl<'ctx, 'k> Lowering<'ctx, 'k> {
    /// Applies a 32-bit cross-lane exchange to a value of any type: vectors element by element,
    /// 64-bit scalars as two halves, narrower ones zero-extended.
    pub(super) fn per_dword(
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
    pub(super) fn id(&mut self, kind: IdKind) -> LResult<IntValue<'ctx>> {
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
    pub(super) fn wave_reduce(&mut self, op: ReduceOp, v: Bv<'ctx>, ty: Type) -> LResult<Bv<'ctx>> {
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
    pub(super) fn wave_argmax(
        &mut self,
        v: Bv<'ctx>,
        i: Bv<'ctx>,
        ty: Type,
    ) -> LResult<(Bv<'ctx>, Bv<'ctx>)> {
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
    pub(super) fn tsum(&mut self, p: u32, values: Vec<Bv<'ctx>>, ty: Type) -> LResult<Bv<'ctx>> {
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
