//! Runs one workgroup: every instruction over all lanes of the workgroup at once, with an active
//! mask. Values live in a register file laid out `[slot][lane]` (`u64` bit patterns).
//!
//! Arithmetic runs over the span of active lanes without looking at the mask: a value defined in a
//! block is read only by lanes active in that block, so what an inactive lane computes is never
//! seen (except by a cross-lane read of an inactive lane, which the sanitizer reports). Everything
//! that can fail or be seen elsewhere looks at the mask: memory, division, cross-lane ops, the
//! merge of `if` results and the loop-carried values.

use super::arith::{self, as_i128, width_mask};
use super::error::{InterpError, Lanes, Site};
use super::prepare::Prepared;
use super::Launch;
use crate::{
    AtomicOp, Block, IdKind, Inst, MemRef, Op, Param, ParamKind, ReduceOp, ScalarType, ShuffleMode,
    Type, TypeClass, Value,
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

#[inline(always)]
fn little_endian(bytes: impl Iterator<Item = u8>) -> u128 {
    let mut buf = [0u8; 16];
    for (d, b) in buf.iter_mut().zip(bytes) {
        *d = b;
    }
    u128::from_le_bytes(buf)
}

fn lanes_of(t: Type) -> usize {
    t.lanes.max(1) as usize
}

const NEVER: u32 = u32::MAX;

/// Sanitizer state of one LDS byte: who wrote, read and atomically updated it in which barrier
/// interval (epoch).
#[derive(Clone, Copy)]
struct Shadow {
    init: bool,
    w_epoch: u32,
    w_wave: u32,
    r_epoch: u32,
    r_mask: u64,
    a_epoch: u32,
    a_mask: u64,
}

const FRESH: Shadow = Shadow {
    init: false,
    w_epoch: NEVER,
    w_wave: 0,
    r_epoch: NEVER,
    r_mask: 0,
    a_epoch: NEVER,
    a_mask: 0,
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Touch {
    Read,
    Write,
    Atomic,
}

impl Touch {
    fn verb(self) -> &'static str {
        match self {
            Touch::Read => "read",
            Touch::Write => "written",
            Touch::Atomic => "updated atomically",
        }
    }
}

/// What the LDS sanitizer found on one access.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Issue {
    Uninit { byte: usize },
    Race { byte: usize, other_wave: u32, other: Touch },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A span of global memory (an index into the launch's spans).
    Global(usize),
    Lds,
    Private,
}

/// One lane's resolved access.
#[derive(Clone, Copy)]
struct Loc {
    lane: usize,
    place: Place,
    off: usize,
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
    epoch: u32,
    private: Vec<u8>,
    wg: [u32; 3],
    /// Active lanes summed over every executed instruction.
    pub lane_ops: u64,
    locs: Vec<Loc>,
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
            epoch: 0,
            private: vec![0; p.private_bytes * lp],
            wg: [0; 3],
            lane_ops: 0,
            locs: Vec::new(),
        }
    }

    /// Runs workgroup `wg` to the end.
    pub fn run_workgroup(&mut self, wg: [u32; 3]) -> Result<(), InterpError> {
        self.wg = wg;
        self.regs.fill(0);
        self.lds.fill(0);
        self.shadow.fill(FRESH);
        self.private.fill(0);
        self.epoch = 0;
        self.fill_fixed();
        let m = Mask::full(self.l, self.lp);
        self.exec_block(self.p.k.entry, &m)
    }

    fn fill_fixed(&mut self) {
        let (p, lp) = (self.p, self.lp);
        let k = p.k;
        for &inst in &p.fixed {
            let data = &k.insts[inst];
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
                _ => {}
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
            Op::Fence(_) => {}
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
            Op::Load { mem, index, ty } => self.load(inst, m, *mem, *index, *ty, res(0))?,
            Op::Store { mem, index, value } => self.store(inst, m, *mem, *index, *value)?,
            Op::Atomic { op, mem, index, value, .. } => {
                self.atomic(inst, m, *op, *mem, *index, *value, res(0))?
            }
            Op::Barrier(_) => {
                if self.launch.sanitize && m.count != self.l {
                    let lanes = self.lanes((0..self.l).filter(|&l| !m.on[l]));
                    return Err(InterpError::DivergentBarrier { site: self.site(inst), lanes });
                }
                self.epoch = self.epoch.wrapping_add(1) % NEVER;
            }
            Op::Shuffle { mode, value, offset } => {
                let (w, off) = (self.w, *offset as usize);
                let src = |l: usize| {
                    let (base, i) = (l - l % w, l % w);
                    base + match mode {
                        ShuffleMode::Xor => (i ^ off) % w,
                        ShuffleMode::Up if i >= off => i - off,
                        ShuffleMode::Down if i + off < w => i + off,
                        ShuffleMode::Up | ShuffleMode::Down => i,
                    }
                };
                let srcs: Vec<usize> = (0..self.lp).map(src).collect();
                self.gather(inst, m, *value, res(0), &srcs)?;
            }
            Op::ShuffleIdx { value, lane } => {
                let w = self.w;
                let row = &self.regs[p.slot(*lane) * self.lp..][..self.lp];
                let srcs: Vec<usize> =
                    (0..self.lp).map(|l| l - l % w + (row[l] as u32 as usize) % w).collect();
                self.gather(inst, m, *value, res(0), &srcs)?;
            }
            Op::Broadcast { value, lane } => {
                let (w, src) = (self.w, *lane as usize % self.w);
                let srcs: Vec<usize> = (0..self.lp).map(|l| l - l % w + src).collect();
                self.gather(inst, m, *value, res(0), &srcs)?;
            }
            Op::Ballot { cond } => {
                let (w, lp) = (self.w, self.lp);
                let (d, [c]) = split_rows(&mut self.regs, lp, p.slot(res(0)), [p.slot(*cond)]);
                for base in (0..lp).step_by(w) {
                    let bits = (0..w)
                        .filter(|&i| m.on[base + i] && c[base + i] & 1 != 0)
                        .fold(0u64, |acc, i| acc | 1 << i);
                    for i in 0..w {
                        if m.on[base + i] {
                            d[base + i] = bits;
                        }
                    }
                }
            }
            Op::WaveReduce { op, value } => self.wave_reduce(inst, m, *op, *value, res(0))?,
            Op::WaveArgmax { value, index } => {
                self.wave_argmax(inst, m, *value, *index, res(0), res(1))?
            }
            Op::Tsum { p: tokens, values } => self.tsum(inst, m, *tokens, values, res(0))?,
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

    /// Cross-lane read: lane `l` takes the value of lane `srcs[l]`.
    fn gather(
        &mut self,
        inst: Inst,
        m: &Mask,
        value: Value,
        res: Value,
        srcs: &[usize],
    ) -> Result<(), InterpError> {
        if self.launch.sanitize {
            let bad: Vec<usize> = m.iter().filter(|&l| srcs[l] != l && !m.on[srcs[l]]).collect();
            if !bad.is_empty() {
                let sources = self.lanes(bad.iter().map(|&l| srcs[l]));
                return Err(InterpError::InactiveLane {
                    site: self.site(inst),
                    lanes: self.lanes(bad),
                    sources,
                });
            }
        }
        let (p, lp) = (self.p, self.lp);
        for e in 0..lanes_of(p.k.ty(value)) {
            let (d, [v]) = split_rows(&mut self.regs, lp, p.slot(res) + e, [p.slot(value) + e]);
            for l in m.iter() {
                d[l] = v[srcs[l]];
            }
        }
        Ok(())
    }

    /// The waves with at least one active lane; with the sanitizer, an error unless each of them
    /// is fully active (a butterfly over the wave reads every lane).
    fn whole_waves(&self, inst: Inst, m: &Mask) -> Result<Vec<usize>, InterpError> {
        let w = self.w;
        let waves: Vec<usize> =
            (0..self.lp / w).filter(|&v| m.on[v * w..(v + 1) * w].iter().any(|&a| a)).collect();
        if self.launch.sanitize {
            let (mut readers, mut inactive) = (Vec::new(), Vec::new());
            for &v in &waves {
                let lanes = v * w..(v + 1) * w;
                if lanes.clone().any(|l| !m.on[l]) {
                    readers.extend(lanes.clone().filter(|&l| m.on[l]));
                    inactive.extend(lanes.filter(|&l| !m.on[l]));
                }
            }
            if !readers.is_empty() {
                return Err(InterpError::InactiveLane {
                    site: self.site(inst),
                    lanes: self.lanes(readers),
                    sources: self.lanes(inactive),
                });
            }
        }
        Ok(waves)
    }

    fn wave_reduce(
        &mut self,
        inst: Inst,
        m: &Mask,
        op: ReduceOp,
        value: Value,
        res: Value,
    ) -> Result<(), InterpError> {
        let (p, w, lp) = (self.p, self.w, self.lp);
        let t = p.k.ty(value);
        let Some(f) = arith::reduce_fn(op, t.scalar) else {
            return Err(self.unsupported(inst, m, format!("not defined on {t}")));
        };
        let waves = self.whole_waves(inst, m)?;
        let (mut cur, mut next) = (vec![0u64; w], vec![0u64; w]);
        for e in 0..lanes_of(t) {
            let (d, [v]) = split_rows(&mut self.regs, lp, p.slot(res) + e, [p.slot(value) + e]);
            for &wave in &waves {
                let base = wave * w;
                cur.copy_from_slice(&v[base..base + w]);
                let mut o = w / 2;
                while o >= 1 {
                    for i in 0..w {
                        next[i] = f(cur[i], cur[i ^ o]);
                    }
                    std::mem::swap(&mut cur, &mut next);
                    o /= 2;
                }
                d[base..base + w].copy_from_slice(&cur);
            }
        }
        Ok(())
    }

    fn wave_argmax(
        &mut self,
        inst: Inst,
        m: &Mask,
        value: Value,
        index: Value,
        res_value: Value,
        res_index: Value,
    ) -> Result<(), InterpError> {
        let (p, w, lp) = (self.p, self.w, self.lp);
        let s = p.k.ty(value).scalar;
        if s == ScalarType::I1 {
            return Err(self.unsupported(inst, m, "not defined on i1".into()));
        }
        let waves = self.whole_waves(inst, m)?;
        let (sv, si) = (p.slot(value), p.slot(index));
        let (dv, di) = (p.slot(res_value), p.slot(res_index));
        let mut cur = vec![(0u64, 0u32); w];
        let mut next = cur.clone();
        for wave in waves {
            let base = wave * w;
            for (i, c) in cur.iter_mut().enumerate() {
                *c = (self.regs[sv * lp + base + i], self.regs[si * lp + base + i] as u32);
            }
            let mut o = w / 2;
            while o >= 1 {
                for i in 0..w {
                    let (own, partner) = (cur[i], cur[i ^ o]);
                    let wins = arith::argmax_wins(s, own.0, own.1, partner.0, partner.1);
                    next[i] = if wins { own } else { partner };
                }
                std::mem::swap(&mut cur, &mut next);
                o /= 2;
            }
            for (i, &(v, x)) in cur.iter().enumerate() {
                self.regs[dv * lp + base + i] = v;
                self.regs[di * lp + base + i] = x as u64;
            }
        }
        Ok(())
    }

    /// `tsum<P>` as the transposed butterfly of DESIGN.md section 2: in the first log2(P) steps
    /// each lane keeps half of its tokens (the lower half where the offset bit of its lane id is 0)
    /// and adds the partner's copy of that half to its own; then a plain xor butterfly.
    fn tsum(
        &mut self,
        inst: Inst,
        m: &Mask,
        tokens: u32,
        values: &[Value],
        res: Value,
    ) -> Result<(), InterpError> {
        let (p, w, lp) = (self.p, self.w, self.lp);
        let np = tokens as usize;
        let t = p.k.ty(res);
        if !np.is_power_of_two() || np > w || values.len() > np {
            let msg = format!("tsum<{tokens}> over {} values in wave {w}", values.len());
            return Err(self.unsupported(inst, m, msg));
        }
        let Some(add) = arith::reduce_fn(ReduceOp::Add, t.scalar) else {
            return Err(self.unsupported(inst, m, format!("not defined on {t}")));
        };
        let waves = self.whole_waves(inst, m)?;
        let slots: Vec<usize> = values.iter().map(|&v| p.slot(v)).collect();
        for wave in waves {
            let base = wave * w;
            // cur[lane * held + j]: the lane's partial sum of the j-th token it still holds.
            let mut held = np;
            let mut cur = vec![0u64; w * held];
            for i in 0..w {
                for (j, &s) in slots.iter().enumerate() {
                    cur[i * held + j] = self.regs[s * lp + base + i];
                }
            }
            let mut o = w / 2;
            while held > 1 {
                let half = held / 2;
                let mut next = vec![0u64; w * half];
                for i in 0..w {
                    let partner = i ^ o;
                    let keep = if i & o != 0 { half } else { 0 };
                    for j in 0..half {
                        next[i * half + j] =
                            add(cur[i * held + keep + j], cur[partner * held + keep + j]);
                    }
                }
                cur = next;
                held = half;
                o /= 2;
            }
            let mut next = vec![0u64; w];
            while o >= 1 {
                for i in 0..w {
                    next[i] = add(cur[i], cur[i ^ o]);
                }
                std::mem::swap(&mut cur, &mut next);
                o /= 2;
            }
            let d = p.slot(res);
            self.regs[d * lp + base..d * lp + base + w].copy_from_slice(&cur);
        }
        Ok(())
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

    // ---- memory ----

    /// Resolves every active lane's access of `bytes` bytes into `self.locs`; an error if any is
    /// out of bounds (all lanes are checked before anything is read or written).
    fn resolve(
        &mut self,
        inst: Inst,
        m: &Mask,
        mem: MemRef,
        index: Value,
        elem_bytes: usize,
        bytes: usize,
        verb: &str,
    ) -> Result<(), InterpError> {
        let (p, lp) = (self.p, self.lp);
        let k = p.k;
        let index_of = arith::int_reader(k.ty(index).scalar);
        let irow = p.slot(index) * lp;
        let mut bad = Vec::new();
        let mut detail = String::new();
        self.locs.clear();
        // Per instruction: the place, its start and length (private: per lane, below).
        let spans = &self.launch.spans;
        let (place, base, len) = match mem {
            MemRef::Buffer(q) => match self.launch.params[q.index()] {
                Some(s) => (Place::Global(s), 0, spans[s].bytes.len()),
                None => (Place::Lds, 0, 0),
            },
            MemRef::Lds(s) => (Place::Lds, p.lds_offsets[s.index()], k.lds[s].bytes() as usize),
            MemRef::Private(s) => {
                let d = &k.private[s];
                (Place::Private, p.private_offsets[s.index()], (d.elem.bytes() * d.len) as usize)
            }
            MemRef::Global(_) => (Place::Lds, 0, 0),
        };
        let what = || match mem {
            MemRef::Buffer(q) => format!("buffer `{}`", k.params[q].name),
            MemRef::Lds(s) => format!("LDS `{}`", k.lds[s].name),
            MemRef::Private(s) => format!("private `{}`", k.private[s].name),
            MemRef::Global(_) => String::new(),
        };
        let lane_base = |l: usize| if place == Place::Private { l * p.private_bytes } else { 0 };
        for l in m.iter() {
            let rel = index_of(self.regs[irow + l]) * elem_bytes as i128;
            if let MemRef::Global(a) = mem {
                let addr = self.regs[p.slot(a) * lp + l] as i128 + rel;
                let below = u64::try_from(addr).ok().and_then(|a| self.launch.span_below(a));
                let past = |s: usize| addr - spans[s].base as i128 - spans[s].bytes.len() as i128;
                let Some(s) = below.filter(|&s| past(s) < 0) else {
                    if bad.is_empty() {
                        // An overrun a little past an end: name what it overran.
                        let near = match below {
                            Some(s) if past(s) < 1 << 20 => format!(
                                ": byte {} of {} ({} bytes) is past its end",
                                addr - spans[s].base as i128,
                                spans[s].what(),
                                spans[s].bytes.len()
                            ),
                            _ => String::new(),
                        };
                        detail = format!(
                            "{verb} of {bytes} bytes at address {addr:#x}, in no buffer or region{near}"
                        );
                    }
                    bad.push(l);
                    continue;
                };
                let off = (addr - spans[s].base as i128) as usize;
                let len = spans[s].bytes.len();
                if off + bytes > len {
                    if bad.is_empty() {
                        detail = format!(
                            "{verb} of {bytes} bytes at address {addr:#x}, byte {off} of {} ({len} bytes)",
                            spans[s].what()
                        );
                    }
                    bad.push(l);
                } else {
                    self.locs.push(Loc { lane: l, place: Place::Global(s), off });
                }
            } else if rel >= 0 && rel + bytes as i128 <= len as i128 {
                self.locs.push(Loc { lane: l, place, off: lane_base(l) + base + rel as usize });
            } else {
                if bad.is_empty() {
                    detail = format!(
                        "{verb} of {bytes} bytes at byte {rel} of {} ({len} bytes)",
                        what()
                    );
                }
                bad.push(l);
            }
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(InterpError::OutOfBounds { site: self.site(inst), lanes: self.lanes(bad), detail })
        }
    }

    fn read_bytes(&self, place: Place, off: usize, n: usize) -> u128 {
        match place {
            Place::Global(s) => little_endian(
                self.launch.spans[s].bytes[off..off + n].iter().map(|b| b.load(Relaxed)),
            ),
            Place::Lds => little_endian(self.lds[off..off + n].iter().copied()),
            Place::Private => little_endian(self.private[off..off + n].iter().copied()),
        }
    }

    fn write_bytes(&mut self, place: Place, off: usize, n: usize, v: u128) {
        for i in 0..n {
            let b = (v >> (8 * i)) as u8;
            match place {
                Place::Global(s) => self.launch.spans[s].bytes[off + i].store(b, Relaxed),
                Place::Lds => self.lds[off + i] = b,
                Place::Private => self.private[off + i] = b,
            }
        }
    }

    /// Records an LDS access of wave `wave` in the sanitizer's shadow; the first problem found.
    fn lds_touch(&mut self, wave: u32, off: usize, n: usize, touch: Touch) -> Option<Issue> {
        let e = self.epoch;
        let bit = 1u64 << (wave % 64);
        let mut issue = None;
        for byte in off..off + n {
            let s = &mut self.shadow[byte];
            let others = |mask: u64| (mask & !bit).trailing_zeros();
            if issue.is_none() {
                issue = if touch != Touch::Write && !s.init {
                    Some(Issue::Uninit { byte })
                } else if s.w_epoch == e && s.w_wave != wave {
                    Some(Issue::Race { byte, other_wave: s.w_wave, other: Touch::Write })
                } else if touch != Touch::Read && s.r_epoch == e && s.r_mask & !bit != 0 {
                    Some(Issue::Race { byte, other_wave: others(s.r_mask), other: Touch::Read })
                } else if touch != Touch::Atomic && s.a_epoch == e && s.a_mask & !bit != 0 {
                    Some(Issue::Race { byte, other_wave: others(s.a_mask), other: Touch::Atomic })
                } else {
                    None
                };
            }
            match touch {
                Touch::Read => {
                    if s.r_epoch != e {
                        s.r_epoch = e;
                        s.r_mask = 0;
                    }
                    s.r_mask |= bit;
                }
                Touch::Write => {
                    s.init = true;
                    s.w_epoch = e;
                    s.w_wave = wave;
                }
                Touch::Atomic => {
                    s.init = true;
                    if s.a_epoch != e {
                        s.a_epoch = e;
                        s.a_mask = 0;
                    }
                    s.a_mask |= bit;
                }
            }
        }
        issue
    }

    /// Sanitizer bookkeeping for the resolved LDS accesses in `self.locs`.
    fn check_lds(&mut self, inst: Inst, touch: Touch, bytes: usize) -> Result<(), InterpError> {
        if !self.launch.sanitize {
            return Ok(());
        }
        let mut found: Option<(Issue, u32)> = None;
        let mut lanes = Vec::new();
        for n in 0..self.locs.len() {
            let loc = self.locs[n];
            if loc.place != Place::Lds {
                continue;
            }
            let wave = (loc.lane / self.w) as u32;
            if let Some(issue) = self.lds_touch(wave, loc.off, bytes, touch) {
                let same_kind = matches!(
                    (found, issue),
                    (None, _)
                        | (Some((Issue::Uninit { .. }, _)), Issue::Uninit { .. })
                        | (Some((Issue::Race { .. }, _)), Issue::Race { .. })
                );
                if same_kind {
                    found.get_or_insert((issue, wave));
                    lanes.push(loc.lane);
                }
            }
        }
        let Some((issue, wave)) = found else { return Ok(()) };
        let site = self.site(inst);
        let lanes = self.lanes(lanes);
        let k = self.p.k;
        let name_at = |byte: usize| {
            let s = (0..k.lds.len()).rev().find(|&s| self.p.lds_offsets[s] <= byte).unwrap_or(0);
            let name = k.lds.values().nth(s).map_or("?", |d| d.name.as_str());
            format!("LDS `{name}` byte {}", byte - self.p.lds_offsets.get(s).copied().unwrap_or(0))
        };
        Err(match issue {
            Issue::Uninit { byte } => InterpError::LdsUninit { site, lanes, detail: name_at(byte) },
            Issue::Race { byte, other_wave, other } => InterpError::LdsRace {
                site,
                lanes,
                detail: format!(
                    "{} {} by wave {wave} and {} by wave {other_wave} with no barrier between",
                    name_at(byte),
                    touch.verb(),
                    other.verb()
                ),
            },
        })
    }

    /// With the sanitizer: no lane of `self.locs` writes a read-only buffer, through its
    /// parameter or through a raw address into its span.
    fn check_writable(&self, inst: Inst, mem: MemRef) -> Result<(), InterpError> {
        if !self.launch.sanitize {
            return Ok(());
        }
        let k = self.p.k;
        let read_only = |q: Param| match &k.params[q].kind {
            ParamKind::Buffer { access, .. } => !access.writes(),
            ParamKind::Scalar(_) => false,
        };
        let (mut lanes, mut buffer) = (Vec::new(), None);
        for loc in &self.locs {
            let Place::Global(s) = loc.place else { continue };
            let param = match mem {
                MemRef::Buffer(q) => Some(q).filter(|&q| read_only(q)),
                _ if self.launch.spans[s].access.writes() => None,
                _ => self.launch.params.iter().position(|&x| x == Some(s)).map(Param::new),
            };
            if let Some(q) = param {
                buffer.get_or_insert_with(|| k.params[q].name.clone());
                lanes.push(loc.lane);
            }
        }
        match buffer {
            None => Ok(()),
            Some(buffer) => Err(InterpError::ReadOnly {
                site: self.site(inst),
                lanes: self.lanes(lanes),
                buffer,
            }),
        }
    }

    fn load(
        &mut self,
        inst: Inst,
        m: &Mask,
        mem: MemRef,
        index: Value,
        ty: Type,
        res: Value,
    ) -> Result<(), InterpError> {
        let eb = ty.scalar.bytes() as usize;
        let n = eb * lanes_of(ty);
        self.resolve(inst, m, mem, index, eb, n, "load")?;
        let (d, lp, mask) = (self.p.slot(res), self.lp, width_mask(ty.scalar));
        for i in 0..self.locs.len() {
            let loc = self.locs[i];
            let v = self.read_bytes(loc.place, loc.off, n);
            for e in 0..lanes_of(ty) {
                self.regs[(d + e) * lp + loc.lane] = (v >> (e * eb * 8)) as u64 & mask;
            }
        }
        self.check_lds(inst, Touch::Read, n)
    }

    fn store(
        &mut self,
        inst: Inst,
        m: &Mask,
        mem: MemRef,
        index: Value,
        value: Value,
    ) -> Result<(), InterpError> {
        let ty = self.p.k.ty(value);
        let eb = ty.scalar.bytes() as usize;
        let n = eb * lanes_of(ty);
        self.resolve(inst, m, mem, index, eb, n, "store")?;
        self.check_writable(inst, mem)?;
        let (s, lp, mask) = (self.p.slot(value), self.lp, width_mask(ty.scalar));
        for i in 0..self.locs.len() {
            let loc = self.locs[i];
            let mut v = 0u128;
            for e in 0..lanes_of(ty) {
                v |= ((self.regs[(s + e) * lp + loc.lane] & mask) as u128) << (e * eb * 8);
            }
            self.write_bytes(loc.place, loc.off, n, v);
        }
        self.check_lds(inst, Touch::Write, n)
    }

    fn atomic(
        &mut self,
        inst: Inst,
        m: &Mask,
        op: AtomicOp,
        mem: MemRef,
        index: Value,
        value: Value,
        res: Value,
    ) -> Result<(), InterpError> {
        let t = self.p.k.ty(value).scalar;
        if !matches!(t.bits(), 32 | 64) || t.class() == TypeClass::Float {
            return Err(self.unsupported(inst, m, format!("not defined on {t}")));
        }
        let n = t.bytes() as usize;
        self.resolve(inst, m, mem, index, n, n, "atomic")?;
        self.check_writable(inst, mem)?;
        let (sv, d, lp, mask) = (self.p.slot(value), self.p.slot(res), self.lp, width_mask(t));
        // Lanes apply their updates one after another in lane order.
        for i in 0..self.locs.len() {
            let loc = self.locs[i];
            let old = self.read_bytes(loc.place, loc.off, n) as u64;
            let v = self.regs[sv * lp + loc.lane];
            let (a, b) = (as_i128(t, old), as_i128(t, v));
            let new = match op {
                AtomicOp::Add => old.wrapping_add(v),
                AtomicOp::Min => (a.min(b)) as u64,
                AtomicOp::Max => (a.max(b)) as u64,
                AtomicOp::Exchange => v,
                AtomicOp::And => old & v,
                AtomicOp::Or => old | v,
            } & mask;
            self.write_bytes(loc.place, loc.off, n, new as u128);
            self.regs[d * lp + loc.lane] = old;
        }
        self.check_lds(inst, Touch::Atomic, n)
    }
}
