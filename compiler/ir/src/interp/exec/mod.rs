//! Runs one workgroup: every instruction over all lanes of the workgroup at once, with an active
//! mask. Values live in a register file laid out `[slot][lane]` (`u64` bit patterns).
//!
//! Arithmetic runs over the span of active lanes without looking at the mask: a value defined in a
//! block is read only by lanes active in that block, so what an inactive lane computes is never
//! seen (except by a cross-lane read of an inactive lane, which the sanitizer reports). Everything
//! that can fail or be seen elsewhere looks at the mask: memory, division, cross-lane ops, the
//! merge of `if` results and the loop-carried values.
//!
//! `memory.rs` holds loads, stores, atomics and the LDS sanitizer; `cross_lane.rs` the shuffles,
//! broadcast, ballot and the wave-wide butterflies; this file the dispatch, control flow and
//! arithmetic.

mod cross_lane;
mod global;
mod memory;

use global::GlobalTouch;
use memory::{How, Loc, Shadow, FRESH, NEVER};

use super::arith::{self, as_i128, width_mask};
use super::error::{InterpError, Lanes, Site};
use super::packed;
use super::prepare::Prepared;
use super::Launch;
use crate::{
    natural_align, AtomicOp, Block, DotOp, IdKind, IndexUnit, Inst, MemRef, Op, PackedConvertOp,
    Param, ParamKind, ReduceOp, ScalarType, ShuffleMode, Type, TypeClass, Value,
};
use cranelift_entity::EntityRef;
use std::sync::atomic::Ordering::Relaxed;

/// The lanes a block runs for, with the span `lo..hi` that holds them all.
pub(crate) struct Mask {
    on: Vec<bool>,
    lo: usize,
    hi: usize,
    count: usize,
}

impl Mask {
    /// Lanes `0..lanes` of a register file `padded` lanes wide.
    fn full(lanes: usize, padded: usize) -> Mask {
        Mask { on: (0..padded).map(|l| l < lanes).collect(), lo: 0, hi: lanes, count: lanes }
    }

    /// The active lanes for which `f` holds.
    fn subset(&self, f: impl Fn(usize) -> bool) -> Mask {
        let mut on = vec![false; self.on.len()];
        let (mut lo, mut hi, mut count) = (usize::MAX, 0, 0);
        for (l, &active) in self.on.iter().enumerate().take(self.hi).skip(self.lo) {
            if active && f(l) {
                on[l] = true;
                lo = lo.min(l);
                hi = l + 1;
                count += 1;
            }
        }
        if count == 0 {
            lo = 0;
        }
        Mask { on, lo, hi, count }
    }

    /// The active lanes, ascending.
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        (self.lo..self.hi).filter(|&l| self.on[l])
    }
}

/// Splits the register file into the row of slot `d` (mutable) and the rows of `srcs`.
/// The prepare step guarantees that no source is `d`.
fn split_rows<const N: usize>(
    regs: &mut [u64],
    lp: usize,
    d: usize,
    srcs: [usize; N],
) -> (&mut [u64], [&[u64]; N]) {
    let (before, rest) = regs.split_at_mut(d * lp);
    let (dst, after) = rest.split_at_mut(lp);
    let (before, after): (&[u64], &[u64]) = (before, after);
    let srcs = srcs.map(|s| {
        if s < d {
            &before[s * lp..(s + 1) * lp]
        } else {
            &after[(s - d - 1) * lp..(s - d) * lp]
        }
    });
    (dst, srcs)
}

fn lanes_of(t: Type) -> usize {
    t.lanes.max(1) as usize
}

/// The state of one workgroup in flight; reused for the next workgroup on the same thread.
pub(crate) struct Exec<'a> {
    p: &'a Prepared<'a>,
    launch: &'a Launch<'a>,
    regs: Vec<u64>,
    /// Lanes of the workgroup.
    l: usize,
    /// Lanes rounded up to whole waves (the register file's row length).
    lp: usize,
    /// Wave size.
    w: usize,
    lds: Vec<u8>,
    shadow: Vec<Shadow>,
    /// The workgroup's number among those this `Exec` ran (from 1): its [`Shadow`]s' `gen`.
    gen: u32,
    epoch: u32,
    private: Vec<u8>,
    wg: [u32; 3],
    /// Active lanes summed over every executed instruction.
    pub lane_ops: u64,
    locs: Vec<Loc>,
    /// Register rows (`regs`' slots) written since the workgroup began, listed once each in
    /// `written`: the next workgroup zeroes those alone (a kernel of thousands of values over 256
    /// lanes has megabytes of registers, most untouched by a workgroup that returns early), and
    /// of each only the lanes `lanes[slot]` it may have written: the waves of the masks it was
    /// written under (a value computed by one wave or one lane of a 256-lane workgroup is zeroed
    /// in that wave alone; every write of a row, cross-lane ones too, stays in those waves).
    dirty: Vec<bool>,
    written: Vec<usize>,
    lanes: Vec<(usize, usize)>,
    /// The LDS bytes (and their sanitizer shadow) this workgroup may have changed, `lo..hi`: the
    /// next one resets those alone.
    lds_touched: (usize, usize),
    /// Whether the constants and arguments are in `regs` ([`Exec::fill_fixed`]).
    fixed_filled: bool,
    /// Per LDS byte, the async copies in flight to it ([`Op::AsyncCopy`]).
    in_flight: Vec<u8>,
    /// Per lane, its async copies not yet landed.
    copies: Vec<memory::LaneCopies>,
    /// Async copies not yet landed, over all lanes.
    pending_copies: usize,
    /// The workgroup's state for the check across workgroups (in-order model).
    sync: super::races::WgSync,
    /// With the sanitizer, per global byte the workgroup touched of a span the check across
    /// workgroups tracks: its waves' accesses, by interval between `barrier all`s
    /// ([`Exec::global_epoch`]), as [`Exec::shadow`] keeps LDS's (in the same generations).
    global_shadow: global::GlobalShadow,
    /// `barrier all`s run by the workgroup.
    global_epoch: u32,
}

impl<'a> Exec<'a> {
    /// State for running workgroups of a prepared kernel.
    pub fn new(p: &'a Prepared<'a>, launch: &'a Launch<'a>) -> Exec<'a> {
        let k = p.k;
        let w = k.wave_size as usize;
        let l = k.workgroup_lanes() as usize;
        let lp = l.div_ceil(w) * w;
        let lds_bytes = k.lds_bytes() as usize;
        Exec {
            p,
            launch,
            regs: vec![0; p.nslots * lp],
            l,
            lp,
            w,
            lds: vec![0; lds_bytes],
            shadow: vec![FRESH; if launch.sanitize { lds_bytes } else { 0 }],
            gen: 0,
            epoch: 0,
            private: vec![0; p.private_bytes * lp],
            wg: [0; 3],
            lane_ops: 0,
            locs: Vec::new(),
            dirty: vec![false; p.nslots],
            written: Vec::new(),
            lanes: vec![(0, 0); p.nslots],
            lds_touched: (0, 0),
            fixed_filled: false,
            in_flight: vec![0; lds_bytes],
            copies: (0..lp).map(|_| memory::LaneCopies::default()).collect(),
            pending_copies: 0,
            sync: Default::default(),
            global_shadow: Default::default(),
            global_epoch: 0,
        }
    }

    /// Runs workgroup `wg` to the end.
    pub fn run_workgroup(&mut self, wg: [u32; 3]) -> Result<(), InterpError> {
        self.wg = wg;
        // Every register row starts at zero: the rows the last workgroup wrote are zeroed again
        // (the rest still are; the fixed values are written below).
        let lp = self.lp;
        for s in self.written.drain(..) {
            self.dirty[s] = false;
            let (lo, hi) = self.lanes[s];
            self.regs[s * lp + lo..s * lp + hi].fill(0);
        }
        // LDS starts zeroed (the bytes the last workgroup touched again) and its shadow fresh
        // (a new generation; once in four billion workgroups, every byte reset).
        let (lo, hi) = std::mem::replace(&mut self.lds_touched, (usize::MAX, 0));
        if lo < hi {
            self.lds[lo..hi].fill(0);
        }
        self.gen = self.gen.wrapping_add(1);
        if self.gen == 0 {
            self.shadow.fill(FRESH);
            self.global_shadow.forget();
            self.gen = 1;
        }
        self.private.fill(0);
        self.epoch = 0;
        self.sync.reset(self.lp, self.w);
        self.global_shadow.clear();
        self.global_epoch = 0;
        #[cfg(test)]
        self.assert_fresh();
        self.fill_fixed();
        if self.pending_copies > 0 {
            self.in_flight.fill(0);
            self.copies.iter_mut().for_each(|c| *c = memory::LaneCopies::default());
            self.pending_copies = 0;
        }
        let m = Mask::full(self.l, self.lp);
        self.exec_block(self.p.k.entry, &m)?;
        self.copies_all_landed()
    }

    /// (The interpreter's own tests.) Every register row but the fixed values' is zero, LDS is
    /// zero and its shadow fresh, as a workgroup's state was when each was cleared whole: the
    /// resets of only what the last workgroup wrote miss nothing.
    #[cfg(test)]
    fn assert_fresh(&self) {
        let (p, lp) = (self.p, self.lp);
        let mut fixed = vec![false; p.nslots];
        for &inst in &p.fixed {
            let r = p.k.insts[inst].results[0];
            let s = p.slot(r);
            fixed[s..s + lanes_of(p.k.ty(r))].fill(true);
        }
        for (s, row) in self.regs.chunks(lp).enumerate() {
            assert!(fixed[s] || row.iter().all(|&x| x == 0), "register row {s} left over");
        }
        assert!(self.lds.iter().all(|&b| b == 0), "LDS left over");
        assert!(self.shadow.iter().all(|s| s.is_fresh(self.gen)), "LDS shadow left over");
        assert!(self.written.is_empty() && self.dirty.iter().all(|&d| !d));
    }

    /// Writes the fixed values: constants and arguments once (the same for every workgroup of
    /// the launch, and no other instruction writes their rows), the ids each workgroup.
    fn fill_fixed(&mut self) {
        let (p, lp) = (self.p, self.lp);
        let k = p.k;
        let first = !std::mem::replace(&mut self.fixed_filled, true);
        for &inst in &p.fixed {
            let data = &k.insts[inst];
            if !first && !matches!(data.op, Op::Id(_)) {
                continue;
            }
            let r = data.results[0];
            let t = k.ty(r);
            let s = p.slot(r);
            let fill = |regs: &mut [u64], bits: u64| {
                for e in 0..lanes_of(t) {
                    regs[(s + e) * lp..(s + e + 1) * lp].fill(bits & width_mask(t.scalar));
                }
            };
            match data.op {
                Op::Const { bits, .. } => fill(&mut self.regs, bits),
                Op::Arg(q) => {
                    let bits = match self.launch.params[q.index()] {
                        Some(s) => self.launch.spans[s].base,
                        None => self.launch.scalars[q.index()],
                    };
                    fill(&mut self.regs, bits)
                }
                Op::BufferAddr(q) => {
                    let s = self.launch.params[q.index()];
                    fill(&mut self.regs, s.map_or(0, |s| self.launch.spans[s].base))
                }
                Op::Id(kind) => {
                    for l in 0..lp {
                        self.regs[s * lp + l] = self.id(kind, l) as u64;
                    }
                }
                // Not fixed: the prepare step lists only the four ops above.
                Op::Unary { .. }
                | Op::Binary { .. }
                | Op::Fma { .. }
                | Op::Cmp { .. }
                | Op::Select { .. }
                | Op::Convert { .. }
                | Op::Bitcast { .. }
                | Op::Extract { .. }
                | Op::MakeVector { .. }
                | Op::Load { .. }
                | Op::Store { .. }
                | Op::Prefetch { .. }
                | Op::AsyncCopy { .. }
                | Op::AsyncWait { .. }
                | Op::GridDependencyWait
                | Op::Atomic { .. }
                | Op::Fence(_)
                | Op::Barrier(_)
                | Op::Shuffle { .. }
                | Op::ShuffleIdx { .. }
                | Op::Broadcast { .. }
                | Op::Ballot { .. }
                | Op::WaveReduce { .. }
                | Op::WaveArgmax { .. }
                | Op::Tsum { .. }
                | Op::If { .. }
                | Op::For { .. }
                | Op::Yield(_)
                | Op::Mma { .. }
                | Op::Perm { .. }
                | Op::Dot { .. }
                | Op::PackedConvert { .. }
                | Op::LdMatrix { .. } => {}
            }
        }
    }

    fn id(&self, kind: IdKind, l: usize) -> u32 {
        let k = self.p.k;
        let [sx, sy, _] = k.workgroup_size.map(|s| s.max(1) as usize);
        let w = self.w;
        (match kind {
            IdKind::Lane => l % w,
            IdKind::Wave => l / w,
            IdKind::NumWaves => self.lp / w,
            IdKind::WaveSize => w,
            IdKind::LocalId(d) => [l % sx, (l / sx) % sy, l / (sx * sy)][d.index()],
            IdKind::LocalLinear => l,
            IdKind::WorkgroupId(d) => return self.wg[d.index()],
            IdKind::WorkgroupSize(d) => return k.workgroup_size[d.index()],
            IdKind::NumWorkgroups(d) => return self.launch.grid[d.index()],
        }) as u32
    }

    fn site(&self, inst: Inst) -> Box<Site> {
        Box::new(Site {
            kernel: self.p.k.name.clone(),
            inst,
            op: crate::print::mnemonic(&self.p.k.insts[inst].op),
            workgroup: self.wg,
        })
    }

    fn lanes(&self, ids: impl IntoIterator<Item = usize>) -> Lanes {
        Lanes::new(ids.into_iter().map(|l| l as u32).collect(), self.w as u32)
    }

    fn unsupported(&self, inst: Inst, m: &Mask, message: String) -> InterpError {
        InterpError::Unsupported { site: self.site(inst), lanes: self.lanes(m.iter()), message }
    }

    fn exec_block(&mut self, b: Block, m: &Mask) -> Result<(), InterpError> {
        let p = self.p;
        for &inst in &p.code[b.index()] {
            self.lane_ops += m.count as u64;
            // (`code` holds no fixed value: `fill_fixed` writes those.)
            for &r in &p.k.insts[inst].results {
                self.touch(r, m);
            }
            self.exec_inst(inst, m)?;
        }
        Ok(())
    }

    /// Runs `f` on each element row of the result `dst` with the matching rows of `srcs`
    /// (`(slot, is_vector)`: a scalar source is used for every element), restricted to the span
    /// of active lanes; `f` also gets the mask over that span. False when `f` says so.
    fn lanewise<const N: usize>(
        &mut self,
        m: &Mask,
        dst: usize,
        srcs: [(usize, bool); N],
        elems: usize,
        mut f: impl FnMut(&mut [u64], [&[u64]; N], &[bool]) -> bool,
    ) -> bool {
        let (lo, hi) = (m.lo, m.hi);
        for e in 0..elems {
            let s = srcs.map(|(slot, vector)| if vector { slot + e } else { slot });
            let (d, a) = split_rows(&mut self.regs, self.lp, dst + e, s);
            if !f(&mut d[lo..hi], a.map(|r| &r[lo..hi]), &m.on[lo..hi]) {
                return false;
            }
        }
        true
    }

    /// Notes that LDS bytes `off..off + n` (or their shadow) change in this workgroup.
    #[inline]
    fn lds_used(&mut self, off: usize, n: usize) {
        let (lo, hi) = &mut self.lds_touched;
        *lo = (*lo).min(off);
        *hi = (*hi).max(off + n);
    }

    /// Notes that value `v`'s register rows are written in this workgroup, in the waves of `m`.
    #[inline]
    fn touch(&mut self, v: Value, m: &Mask) {
        let s = self.p.slot(v);
        let (lo, hi) = (m.lo / self.w * self.w, m.hi.div_ceil(self.w) * self.w);
        for e in s..s + lanes_of(self.p.k.ty(v)) {
            let span = &mut self.lanes[e];
            if !self.dirty[e] {
                self.dirty[e] = true;
                self.written.push(e);
                *span = (lo, hi);
            } else {
                *span = (span.0.min(lo), span.1.max(hi));
            }
        }
    }

    /// Copies value `src` into value `dst` for the lanes of `m`.
    fn copy_value(&mut self, dst: Value, src: Value, m: &Mask) {
        let (p, lp) = (self.p, self.lp);
        let n = lanes_of(p.k.ty(dst));
        for e in 0..n {
            let (d, [s]) = split_rows(&mut self.regs, lp, p.slot(dst) + e, [p.slot(src) + e]);
            for l in m.iter() {
                d[l] = s[l];
            }
        }
    }

    fn exec_inst(&mut self, inst: Inst, m: &Mask) -> Result<(), InterpError> {
        let p = self.p;
        let k = p.k;
        let data = &k.insts[inst];
        let res = |n: usize| data.results[n];
        match &data.op {
            Op::Const { .. } | Op::Arg(_) | Op::BufferAddr(_) | Op::Id(_) | Op::Yield(_) => {}
            Op::Fence(crate::Scope::Device) => self.sync_point(m, None),
            Op::Fence(crate::Scope::Workgroup) | Op::GridDependencyWait => {}
            // A hint: no value changes, but the address must be one a load could read.
            Op::Prefetch { mem, index } => {
                self.resolve(inst, m, *mem, *index, 1, 1, 1, "prefetch")?
            }
            Op::AsyncCopy { dst, dst_index, src, src_index, bytes } => {
                self.async_copy(inst, m, (*dst, *dst_index), (*src, *src_index), *bytes)?
            }
            Op::AsyncWait { pending } => self.async_wait(inst, m, *pending)?,
            Op::Unary { op, arg } => {
                let t = k.ty(*arg);
                let srcs = [(p.slot(*arg), true)];
                if !self.lanewise(m, p.slot(res(0)), srcs, lanes_of(t), |d, [a], _| {
                    arith::unary(*op, t.scalar, d, a)
                }) {
                    return Err(self.unsupported(inst, m, format!("not defined on {t}")));
                }
            }
            Op::Binary { op, lhs, rhs } => {
                let t = k.ty(*lhs);
                let srcs = [(p.slot(*lhs), true), (p.slot(*rhs), true)];
                let d = p.slot(res(0));
                if arith::is_int_division(*op, t.scalar) {
                    let mut zero = Vec::new();
                    let lo = m.lo;
                    self.lanewise(m, d, srcs, lanes_of(t), |d, [a, b], on| {
                        arith::int_divide(*op, t.scalar, d, a, b, on, &mut zero);
                        true
                    });
                    if self.launch.sanitize && !zero.is_empty() {
                        let lanes = self.lanes(zero.into_iter().map(|i| i + lo));
                        return Err(InterpError::DivByZero { site: self.site(inst), lanes });
                    }
                } else if !self.lanewise(m, d, srcs, lanes_of(t), |d, [a, b], _| {
                    arith::binary(*op, t.scalar, d, a, b)
                }) {
                    return Err(self.unsupported(inst, m, format!("not defined on {t}")));
                }
            }
            Op::Fma { a, b, c } => {
                let t = k.ty(*a);
                let srcs = [(p.slot(*a), true), (p.slot(*b), true), (p.slot(*c), true)];
                if !self.lanewise(m, p.slot(res(0)), srcs, lanes_of(t), |d, [a, b, c], _| {
                    arith::fma(t.scalar, d, a, b, c)
                }) {
                    return Err(self.unsupported(inst, m, format!("not defined on {t}")));
                }
            }
            Op::Cmp { op, lhs, rhs } => {
                let t = k.ty(*lhs);
                let srcs = [(p.slot(*lhs), true), (p.slot(*rhs), true)];
                self.lanewise(m, p.slot(res(0)), srcs, lanes_of(t), |d, [a, b], _| {
                    arith::cmp(*op, t.scalar, d, a, b);
                    true
                });
            }
            Op::Select { cond, if_true, if_false } => {
                let vector_cond = lanes_of(k.ty(*cond)) > 1;
                let srcs = [
                    (p.slot(*cond), vector_cond),
                    (p.slot(*if_true), true),
                    (p.slot(*if_false), true),
                ];
                self.lanewise(
                    m,
                    p.slot(res(0)),
                    srcs,
                    lanes_of(k.ty(res(0))),
                    |d, [c, t, f], _| {
                        for i in 0..d.len() {
                            d[i] = if c[i] & 1 != 0 { t[i] } else { f[i] };
                        }
                        true
                    },
                );
            }
            Op::Convert { to, arg } => {
                let from = k.ty(*arg).scalar;
                let srcs = [(p.slot(*arg), true)];
                self.lanewise(m, p.slot(res(0)), srcs, lanes_of(*to), |d, [a], _| {
                    arith::convert(from, to.scalar, d, a);
                    true
                });
            }
            Op::Bitcast { arg, .. } => self.bitcast(*arg, res(0), m),
            Op::Extract { vector, lane } => {
                let (d, s) = (p.slot(res(0)), p.slot(*vector) + *lane as usize);
                self.lanewise(m, d, [(s, false)], 1, |d, [a], _| {
                    d.copy_from_slice(a);
                    true
                });
            }
            Op::MakeVector { elems, .. } => {
                let d = p.slot(res(0));
                for (e, &v) in elems.iter().enumerate() {
                    self.lanewise(m, d + e, [(p.slot(v), false)], 1, |d, [a], _| {
                        d.copy_from_slice(a);
                        true
                    });
                }
            }
            Op::Load { mem, index, ty, align, unit } => {
                let how = How { unit: *unit, align: align.unwrap_or(natural_align(*ty)) };
                self.load(inst, m, *mem, *index, *ty, how, res(0))?
            }
            Op::Store { mem, index, value, align, unit } => {
                let ty = self.p.k.ty(*value);
                let how = How { unit: *unit, align: align.unwrap_or(natural_align(ty)) };
                self.store(inst, m, *mem, *index, *value, how)?
            }
            Op::Atomic { op, mem, index, value, scope } => {
                self.atomic(inst, m, *op, (*mem, *scope), *index, *value, res(0))?
            }
            Op::Barrier(kind) => {
                if self.launch.sanitize && m.count != self.l {
                    let lanes = self.lanes((0..self.l).filter(|&l| !m.on[l]));
                    return Err(InterpError::DivergentBarrier { site: self.site(inst), lanes });
                }
                self.epoch = self.epoch.wrapping_add(1) % NEVER;
                if *kind == crate::BarrierKind::All {
                    self.global_epoch = self.global_epoch.wrapping_add(1) % NEVER;
                }
                self.sync_point(m, Some(*kind == crate::BarrierKind::All));
            }
            Op::Shuffle { mode, value, offset } => {
                self.shuffle(inst, m, *mode, *value, *offset, res(0))?
            }
            Op::ShuffleIdx { value, lane } => self.shuffle_idx(inst, m, *value, *lane, res(0))?,
            Op::Broadcast { value, lane } => self.broadcast(inst, m, *value, *lane, res(0))?,
            Op::Ballot { cond } => self.ballot(inst, m, *cond, res(0))?,
            Op::WaveReduce { op, value } => self.wave_reduce(inst, m, *op, *value, res(0))?,
            Op::WaveArgmax { value, index } => {
                self.wave_argmax(inst, m, *value, *index, res(0), res(1))?
            }
            Op::Tsum { p: tokens, values } => self.tsum(inst, m, *tokens, values, res(0))?,
            Op::Mma { kind, a, b, c } => self.mma(inst, m, *kind, [*a, *b, *c], res(0))?,
            Op::LdMatrix { mem, index, matrices, trans } => {
                self.ld_matrix(inst, m, *mem, *index, *matrices, *trans, res(0))?
            }
            Op::If { cond, then_block, else_block } => {
                let c = &self.regs[p.slot(*cond) * self.lp..][..self.lp];
                let then_mask = m.subset(|l| c[l] & 1 != 0);
                let else_mask = m.subset(|l| c[l] & 1 == 0);
                for (b, bm) in [(*then_block, then_mask), (*else_block, else_mask)] {
                    if bm.count > 0 {
                        self.exec_block(b, &bm)?;
                        for (&y, &r) in p.yields[b.index()].iter().zip(&data.results) {
                            self.copy_value(r, y, &bm);
                        }
                    }
                }
            }
            Op::For { start, end, step, init, body, .. } => {
                self.exec_for(inst, m, [*start, *end, *step], init, *body)?
            }
            Op::Perm { a, b, sel } => {
                let srcs = [(p.slot(*a), false), (p.slot(*b), false)];
                self.lanewise(m, p.slot(res(0)), srcs, 1, |d, [a, b], _| {
                    for i in 0..d.len() {
                        d[i] = packed::perm(a[i] as u32, b[i] as u32, *sel) as u64;
                    }
                    true
                });
            }
            Op::Dot { op, a, b, acc } => {
                let (sa, sb, sc) = (p.slot(*a), p.slot(*b), p.slot(*acc));
                let d = p.slot(res(0));
                match op {
                    DotOp::I8 | DotOp::U8 | DotOp::I8U8 => {
                        let srcs = [(sa, false), (sb, false), (sc, false)];
                        self.lanewise(m, d, srcs, 1, |d, [a, b, c], _| {
                            for i in 0..d.len() {
                                d[i] =
                                    packed::dot4(*op, a[i] as u32, b[i] as u32, c[i] as u32) as u64;
                            }
                            true
                        });
                    }
                    DotOp::F16 | DotOp::F16Approx => {
                        let srcs = [(sa, false), (sa + 1, false), (sb, false), (sb + 1, false)];
                        let srcs = [srcs[0], srcs[1], srcs[2], srcs[3], (sc, false)];
                        self.lanewise(m, d, srcs, 1, |d, [a0, a1, b0, b1, c], _| {
                            for i in 0..d.len() {
                                let (a, b) = ([a0[i], a1[i]], [b0[i], b1[i]]);
                                d[i] =
                                    packed::fdot2(a.map(|x| x as u16), b.map(|x| x as u16), c[i]);
                            }
                            true
                        });
                    }
                }
            }
            Op::PackedConvert { op, arg } => {
                let (s, d) = (p.slot(*arg), p.slot(res(0)));
                match op {
                    PackedConvertOp::F32x2ToF16x2 => {
                        self.lanewise(m, d, [(s, true)], 2, |d, [a], _| {
                            arith::convert(ScalarType::F32, ScalarType::F16, d, a);
                            true
                        });
                    }
                    PackedConvertOp::I8x4ToF32x4 => {
                        for e in 0..4 {
                            self.lanewise(m, d + e, [(s, false)], 1, |d, [a], _| {
                                for i in 0..d.len() {
                                    d[i] = packed::i8_to_f32(a[i] as u32, e) as u64;
                                }
                                true
                            });
                        }
                    }
                    PackedConvertOp::NibblesLow | PackedConvertOp::NibblesHigh => {
                        let high = *op == PackedConvertOp::NibblesHigh;
                        self.lanewise(m, d, [(s, false)], 1, |d, [a], _| {
                            for i in 0..d.len() {
                                d[i] = packed::nibbles(a[i] as u32, high) as u64;
                            }
                            true
                        });
                    }
                }
            }
        }
        Ok(())
    }

    fn bitcast(&mut self, arg: Value, res: Value, m: &Mask) {
        let (p, lp) = (self.p, self.lp);
        let (ta, tb) = (p.k.ty(arg), p.k.ty(res));
        let (sa, sb) = (p.slot(arg), p.slot(res));
        let (ba, bb) = (ta.scalar.bytes() as usize * 8, tb.scalar.bytes() as usize * 8);
        let (ma, mb) = (width_mask(ta.scalar), width_mask(tb.scalar));
        for l in m.lo..m.hi {
            let mut v: u128 = 0;
            for e in 0..lanes_of(ta) {
                v |= ((self.regs[(sa + e) * lp + l] & ma) as u128) << (e * ba);
            }
            for e in 0..lanes_of(tb) {
                self.regs[(sb + e) * lp + l] = (v >> (e * bb)) as u64 & mb;
            }
        }
    }

    fn exec_for(
        &mut self,
        inst: Inst,
        m: &Mask,
        [start, end, step]: [Value; 3],
        init: &[Value],
        body: Block,
    ) -> Result<(), InterpError> {
        let (p, lp) = (self.p, self.lp);
        let k = p.k;
        let params = &k.blocks[body].params;
        for &v in params {
            self.touch(v, m);
        }
        let data = &k.insts[inst];
        let it = k.ty(params[0]).scalar;
        for (j, &v) in init.iter().enumerate() {
            self.copy_value(params[j + 1], v, m);
        }
        let (is, ss, es) = (p.slot(params[0]), p.slot(step), p.slot(end));
        {
            let (i, [s]) = split_rows(&mut self.regs, lp, is, [p.slot(start)]);
            for l in m.lo..m.hi {
                i[l] = s[l] & width_mask(it);
            }
        }
        let int = arith::int_reader(it);
        let row = |regs: &[u64], s: usize, l: usize| int(regs[s * lp + l]);
        let mut active = m.subset(|l| row(&self.regs, is, l) < row(&self.regs, es, l));
        let bad: Vec<usize> = active.iter().filter(|&l| row(&self.regs, ss, l) <= 0).collect();
        if !bad.is_empty() {
            return Err(InterpError::BadStep { site: self.site(inst), lanes: self.lanes(bad) });
        }
        let ys = &p.yields[body.index()];
        let carried = &params[1..];
        // A yielded value that is another body parameter must be read before any is written.
        let aliased = ys
            .iter()
            .enumerate()
            .any(|(j, y)| params.iter().enumerate().any(|(q, pv)| pv == y && q != j + 1));
        let mut keep = vec![false; lp];
        while active.count > 0 {
            self.exec_block(body, &active)?;
            if aliased {
                let saved: Vec<Vec<u64>> = ys
                    .iter()
                    .flat_map(|&y| {
                        let s = p.slot(y);
                        (0..lanes_of(k.ty(y))).map(move |e| s + e)
                    })
                    .map(|s| self.regs[s * lp..(s + 1) * lp].to_vec())
                    .collect();
                let mut rows = saved.into_iter();
                for &c in carried {
                    for e in 0..lanes_of(k.ty(c)) {
                        let src = rows.next().unwrap_or_default();
                        let d = (p.slot(c) + e) * lp;
                        for l in active.iter() {
                            self.regs[d + l] = src[l];
                        }
                    }
                }
            } else {
                for (&c, &y) in carried.iter().zip(ys) {
                    if c != y {
                        self.copy_value(c, y, &active);
                    }
                }
            }
            for l in active.iter() {
                let next = row(&self.regs, is, l) + row(&self.regs, ss, l);
                self.regs[is * lp + l] = next as u64 & width_mask(it);
                keep[l] = next < row(&self.regs, es, l);
            }
            active = active.subset(|l| keep[l]);
        }
        for (&r, &c) in data.results.iter().zip(carried) {
            self.copy_value(r, c, m);
        }
        Ok(())
    }
}
