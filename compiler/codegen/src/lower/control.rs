//! Blocks and control flow: the dispatch over ops (exhaustive, so a new op is listed here), `if`
//! as a diamond with phis, `for` as a loop whose header carries the index and values in phis.

use super::{Bv, LResult, LowerError, Lowering};
use inkwell::basic_block::BasicBlock;
use inkwell::llvm_sys::{LLVMIntPredicate, LLVMOpcode};
use inkwell::values::BasicValue;
use kiln_ir::*;

impl<'ctx, 'k> Lowering<'ctx, 'k> {
    /// Lowers a block; returns the values of its closing `yield` (empty without one).
    pub(super) fn lower_block(&mut self, block: Block) -> LResult<Vec<Bv<'ctx>>> {
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

    pub(super) fn lower_inst(&mut self, data: &InstData) -> LResult<Vec<Bv<'ctx>>> {
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
            Op::Load { mem, index, ty, align, unit } => {
                one(self.load(mem, *index, *ty, *align, *unit)?)
            }
            Op::Store { mem, index, value, align, unit } => {
                self.store(mem, *index, *value, *align, *unit)?;
                Ok(vec![])
            }
            Op::Atomic { op, mem, index, value, scope } => {
                let ty = k.ty(*value);
                if !matches!(ty.scalar.bits(), 32 | 64) || !ty.scalar.is_int() || ty.lanes != 1 {
                    return Err(LowerError::Unsupported(format!(
                        "atomic on {ty} (32- or 64-bit integers only)"
                    )));
                }
                let (ptr, space) = self.address(mem, *index, ty, IndexUnit::Element)?;
                let v = self.val(*value)?;
                one(self.isa.atomic(self, *op, ptr, space, v, ty, *scope)?)
            }
            Op::Fence(scope) => {
                self.isa.fence(self, *scope)?;
                Ok(vec![])
            }
            Op::Prefetch { mem, index } => {
                let (ptr, _) = self.address(mem, *index, Type::U8, IndexUnit::Byte)?;
                self.isa.prefetch(self, ptr)?;
                Ok(vec![])
            }
            Op::GridDependencyWait => {
                self.isa.grid_dependency_wait(self)?;
                Ok(vec![])
            }
            Op::AsyncCopy { dst, dst_index, src, src_index, bytes } => {
                let (d, _) =
                    self.address(&MemRef::Lds(*dst), *dst_index, Type::U8, IndexUnit::Byte)?;
                let (s, _) =
                    self.address(&MemRef::Buffer(*src), *src_index, Type::U8, IndexUnit::Byte)?;
                self.isa.async_copy(self, d, s, *bytes)?;
                Ok(vec![])
            }
            Op::AsyncWait { pending } => {
                self.isa.async_wait(self, *pending)?;
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
            Op::Mma { kind, a, b, c } => {
                // The verifier refuses this; LLVM would abort on an intrinsic it cannot select.
                let archs = kind.shape().archs();
                if !archs.contains(&self.t.name) {
                    return Err(LowerError::Unsupported(format!(
                        "mma {kind} (archs that have it: {})",
                        archs.join(", ")
                    )));
                }
                let (a, b, c) = (self.val(*a)?, self.val(*b)?, self.val(*c)?);
                one(self.isa.mma(self, *kind, a, b, c)?)
            }
            Op::LdMatrix { mem, index, matrices, trans } => {
                let ty = k.ty(data.results[0]);
                let elem = Type::scalar(ty.scalar);
                let (row, _) = self.address(mem, *index, elem, IndexUnit::Element)?;
                one(self.isa.ld_matrix(self, row, *matrices, *trans, ty)?)
            }
            Op::Perm { a, b, sel } => one(self.perm(self.val(*a)?, self.val(*b)?, *sel)?),
            Op::Dot { op, a, b, acc } => {
                one(self.dot(*op, self.val(*a)?, self.val(*b)?, self.val(*acc)?)?)
            }
            Op::PackedConvert { op, arg } => one(self.packed_convert(*op, self.val(*arg)?)?),
        }
    }

    pub(super) fn lower_if(
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

    pub(super) fn lower_for(
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
}
