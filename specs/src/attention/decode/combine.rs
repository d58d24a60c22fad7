//! Step 3 of the order (the module docs of [`super`]): the splits' states combined maximum first,
//! past [`super::GROUPED_ABOVE`] splits in two levels. [`combine_groups`]: each group of `G`
//! consecutive splits (the splits a 128-lane workgroup holds: [`super::group_splits`]) by the
//! workgroup that ran them, from LDS, into a group state in `partials`. [`combine`]: the states
//! (the groups', or the splits' with one level), in order, by the workgroup that holds them all
//! (`short`, from LDS, one level) or by the last workgroup of a (row group, KV head) to finish
//! (the `rR` variants: a counter, no float atomics, through
//! [`crate::common::last_of_workgroups`]). [`combine_direct`]: both levels lane by lane from
//! `partials` (the baseline, and `short` where its splits do not fit). The i8 order's groups are
//! 4 splits at every wave size ([`super::group_splits`]). `w_lds` and `l_lds` hold
//! `Ctx::w_stride` states a row.

use super::{slot, Ctx, Output, Row, MAX_SPLITS};
use crate::math::exp_sub;
use crate::quantize::{ds_word, quantize_values, Quantized, QK};
use kiln_ir::{BarrierKind, KernelBuilder, ReduceOp, ScalarType, Type, Value};

/// States a trip of [`fold`] (loaded together; 64 was slower on the H200).
const COMBINE_LOADS: u32 = 32;
/// Unroll of [`fold_unrolled`]'s loop in [`Fold::UNROLLED`].
const COMBINE_UNROLL: u32 = 16;
/// Unroll of [`fold_unrolled`]'s loop in [`Fold::Batched`] with more than one pass, and in the
/// i8 `mma` variants: 32 states a trip made every `rR` variant timed 0.5-6% faster than 16 on
/// an H100, the i8 `mma` variants 4-9%; 64 made the `rR` variants 1.2-2x slower
/// (bench/results/i8-combine-2026-12-06.md, calls 5-8).
pub(super) const LONG_UNROLL: u32 = 32;

/// How [`combine`]'s lanes fold their `(row, dimension)` pairs over the states: the same ops in
/// the same order whichever it is, so the same bits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Fold {
    /// Pass after pass, each a loop over the states unrolled this many times
    /// ([`fold_unrolled`]; a trip waits for one round trip to its states).
    Unrolled(u32),
    /// States in `partials`: a lane with one pair in batches of [`COMBINE_LOADS`] states
    /// ([`fold`]); with more pairs `Unrolled(LONG_UNROLL)`.
    Batched,
    /// With f32 output, 4 dimensions a lane, pass after pass, each a loop over the states
    /// unrolled this many times ([`fold_quad`]); else as `Unrolled`.
    Quad(u32),
    /// `Batched` with one pass or without f32 output; else `Quad(LONG_UNROLL / 2)` (16-byte
    /// loads: the same bytes in flight as `Unrolled(LONG_UNROLL)`).
    BatchedQuad,
}

impl Fold {
    /// Pass after pass, unrolled [`COMBINE_UNROLL`] times.
    pub const UNROLLED: Fold = Fold::Unrolled(COMBINE_UNROLL);
}

/// States kept in `k_lds` (a word array) from word `base`: row `k`'s `acc[D]` of slot `s` at
/// `base + (k slots + s) D`, after all of them its `(m, l)` at `base + rows slots D + 2 (k slots
/// + s)`.
#[derive(Clone, Copy, Debug)]
pub(super) struct LdsStates {
    /// First word.
    pub base: u32,
    /// Rows.
    pub rows: u32,
    /// States a row.
    pub slots: u32,
}

impl LdsStates {
    /// Words it takes at head dim `d`.
    pub fn words(self, d: u32) -> u32 {
        self.rows * self.slots * (d + 2)
    }

    /// Word of slot `s`'s `acc[0]` of row `k`.
    pub fn acc(self, b: &mut KernelBuilder, c: &Ctx, k: Value, s: Value) -> Value {
        let sv = b.u32(self.slots);
        let x = b.mul(k, sv);
        let x = b.add(x, s);
        let dd = b.u32(c.d);
        let x = b.mul(x, dd);
        let bv = b.u32(self.base);
        b.add(x, bv)
    }

    /// Word of slot `s`'s `m` of row `k` (`l` is the next).
    pub fn ml(self, b: &mut KernelBuilder, c: &Ctx, k: Value, s: Value) -> Value {
        let sv = b.u32(self.slots);
        let x = b.mul(k, sv);
        let x = b.add(x, s);
        let two = b.u32(2);
        let x = b.mul(x, two);
        let bv = b.u32(self.base + self.rows * self.slots * c.d);
        b.add(x, bv)
    }
}

/// An f32 of a state in `k_lds` (a word array).
fn lds_load(b: &mut KernelBuilder, c: &Ctx, at: Value) -> Value {
    let w = b.load(c.k_lds, at, Type::U32);
    b.bitcast(w, Type::F32)
}

pub(super) fn lds_store(b: &mut KernelBuilder, c: &Ctx, at: Value, x: Value) {
    let w = b.bitcast(x, Type::U32);
    b.store(c.k_lds, at, w);
}

/// A split's states of the rows that exist (`st`, [`super::scan`]'s) into slot `s` of `to`
/// (lane `l` its `acc` dimensions, lane 0 `m` and `l`).
pub(super) fn store_lds(
    b: &mut KernelBuilder,
    c: &Ctx,
    rows: &[Row],
    to: LdsStates,
    s: Value,
    st: &[Value],
) {
    let n = rows.len();
    let dpl = c.dpl as usize;
    let first = c.state_writer(b);
    for (r, rw) in rows.iter().enumerate() {
        b.if_then(rw.valid, |b| {
            let k = b.u32(r as u32);
            let base = to.acc(b, c, k, s);
            let base = b.add(base, c.d0);
            for e in 0..dpl {
                let ev = b.u32(e as u32);
                let at = b.add(base, ev);
                lds_store(b, c, at, st[2 * n + r * dpl + e]);
            }
            b.if_then(first, |b| {
                let at = to.ml(b, c, k, s);
                lds_store(b, c, at, st[r]);
                let one = b.u32(1);
                let at = b.add(at, one);
                lds_store(b, c, at, st[n + r]);
            });
        });
    }
}

/// Where the states of [`combine`] are.
#[derive(Clone, Copy)]
pub(super) enum States {
    /// In `partials` ([`slot`]).
    Partials,
    /// In `k_lds` (`short`: every split in one workgroup, one level).
    Lds(LdsStates),
}

/// Step 3's first level, with every lane of the workgroup: the `groups` groups of `G =
/// c.group_splits` splits whose states are slots `0 .. groups G` of `from` (slot 0 is split
/// `s0`; a split at or past `n_splits` has no state and leaves the sums as they are), each
/// into one state: `m_g = max_s m_s`, `w_s = exp_sub(m_s, m_g)`, `L_g = fma(l_s, w_s, L_g)` and
/// `acc_g = fma(acc_s, w_s, acc_g)` over its splits in order from `(0, 0)`. A lane a (row,
/// group) finds `m_g`, the weights (into `w_lds`) and `L_g`; then lanes take `(row, group,
/// dimension)` triples. Ends with a barrier of the LDS (not of `partials`: the caller's).
pub(super) fn combine_groups(
    b: &mut KernelBuilder,
    c: &Ctx,
    rows: &[Row],
    from: LdsStates,
    s0: Value,
    groups: u32,
    g0: Value,
) {
    let g = c.group_splits;
    let nr = rows.len() as u32;
    assert!(nr * groups <= c.threads, "a lane a (row, group)");
    let d = c.d;
    // The group `j`'s first slot, first split and whether it has one.
    let group_of = |b: &mut KernelBuilder, j: Value| {
        let gv = b.u32(g);
        let jg = b.mul(j, gv);
        let first = b.add(s0, jg);
        let some = b.lt(first, c.n_splits);
        (jg, first, some)
    };
    // Split `i` of the group: whether it has a state, its slot, and the slot to read (the
    // group's first where it has none).
    let split = |b: &mut KernelBuilder, jg: Value, first: Value, i: u32| {
        let iv = b.u32(i);
        let s = b.add(first, iv);
        let here = b.lt(s, c.n_splits);
        let sl = b.add(jg, iv);
        (here, sl, b.select(here, sl, jg))
    };
    let tv = b.u32(nr * groups);
    let act = b.lt(c.tid, tv);
    // `(k, j)` of `x` (below `rows x groups`): row and group (constants where one is 1).
    let row_group = |b: &mut KernelBuilder, x: Value| match (nr, groups) {
        (_, 1) => (x, b.u32(0)),
        (1, _) => (b.u32(0), x),
        _ => {
            let gv = b.u32(groups);
            (b.div(x, gv), b.rem(x, gv))
        }
    };
    b.if_then(act, |b| {
        let (k, j) = row_group(b, c.tid);
        let (valid, global) = row_of(b, c, rows, k);
        let (jg, first, some) = group_of(b, j);
        let go = b.and(valid, some);
        b.if_then(go, |b| {
            let one = b.u32(1);
            let ninf = b.f32(f32::NEG_INFINITY);
            let held: Vec<_> = (0..g)
                .map(|i| {
                    let (here, sl, read) = split(b, jg, first, i);
                    let am = from.ml(b, c, k, read);
                    let m = lds_load(b, c, am);
                    let m = b.select(here, m, ninf);
                    let al = b.add(am, one);
                    (here, sl, m, lds_load(b, c, al))
                })
                .collect();
            let mut mg = held[0].2;
            for &(_, _, m, _) in &held[1..] {
                mg = b.max(mg, m);
            }
            let ms = b.u32(c.w_stride);
            let kb = b.mul(k, ms);
            let mut sum = b.f32(0.0);
            for &(here, sl, m, l) in &held {
                let w = exp_sub(b, m, mg);
                let at = b.add(kb, sl);
                b.store(c.w_lds, at, w);
                let s = b.fma(l, w, sum);
                sum = b.select(here, s, sum);
            }
            let gs = b.add(g0, j);
            let base = slot(b, c, global, gs);
            let dm = b.u32(d);
            let am = b.add(base, dm);
            b.store(c.partials, am, mg);
            let al = b.add(am, one);
            b.store(c.partials, al, sum);
        });
    });
    b.barrier(BarrierKind::Lds);
    // The groups' `acc`, 4 dimensions a lane and trip (16-byte LDS loads and stores to
    // `partials`: `from.base`, `D` and the `partials` stride are multiples of 4 words); each
    // dimension's sum as it was one a lane, so the same bits.
    assert!(from.base.is_multiple_of(4) && d.is_multiple_of(4), "16-byte group states");
    let v4 = Type::vector(ScalarType::U32, 4);
    let total = nr * groups * d / 4;
    for p in 0..total.div_ceil(c.threads) {
        let pv = b.u32(p * c.threads);
        let f = b.add(c.tid, pv);
        let tv = b.u32(total);
        let inside = b.lt(f, tv);
        let dd = b.u32(d / 4);
        let e = b.rem(f, dd);
        let four = b.u32(4);
        let e = b.mul(e, four);
        let rest = b.div(f, dd);
        let (k, j) = row_group(b, rest);
        let nm1 = b.u32(nr - 1);
        let k = b.min(k, nm1);
        let (valid, global) = row_of(b, c, rows, k);
        let (jg, first, some) = group_of(b, j);
        let go = b.and(inside, valid);
        let go = b.and(go, some);
        b.if_then(go, |b| {
            let ms = b.u32(c.w_stride);
            let kb = b.mul(k, ms);
            let mut acc = [b.f32(0.0); 4];
            for i in 0..g {
                let (here, _, read) = split(b, jg, first, i);
                let at = from.acc(b, c, k, read);
                let at = b.add(at, e);
                let v = b.load(c.k_lds, at, v4);
                let ws = b.add(kb, read);
                let w = b.load(c.w_lds, ws, Type::F32);
                for (x, a) in acc.iter_mut().enumerate() {
                    let vx = b.extract(v, x as u8);
                    let vx = b.bitcast(vx, Type::F32);
                    let y = b.fma(vx, w, *a);
                    *a = b.select(here, y, *a);
                }
            }
            let gs = b.add(g0, j);
            let base = slot(b, c, global, gs);
            let at = b.add(base, e);
            let x = b.make_vector(&acc);
            b.store(c.partials, at, x);
        });
    }
}

/// Whether the pass's row `k` (dynamic, at most the last) exists, and its index for
/// `partials` (clamped as [`super::row`] clamps it). The pass's first row always exists (a
/// workgroup's rows start inside the KV head's), so this is arithmetic on it, not a pick among
/// the rows' values (which keeps them all live: SGPR spills of `r8` on gfx906).
fn row_of(b: &mut KernelBuilder, c: &Ctx, rows: &[Row], k: Value) -> (Value, Value) {
    if let [only] = rows {
        return (only.valid, only.global);
    }
    let gk = b.add(rows[0].global, k);
    let hr = b.mul(c.h, c.rows_per_head);
    let end = b.add(hr, c.rows_per_head);
    let valid = b.lt(gk, end);
    let one = b.u32(1);
    let last = b.sub(end, one);
    (valid, b.min(gk, last))
}

/// Row `k`'s value of `get` (`k` dynamic, at most the last row).
fn pick(b: &mut KernelBuilder, rows: &[Row], k: Value, get: &dyn Fn(&Row) -> Value) -> Value {
    let mut v = get(&rows[0]);
    for (i, rw) in rows.iter().enumerate().skip(1) {
        let iv = b.u32(i as u32);
        let here = b.eq(k, iv);
        let x = get(rw);
        v = b.select(here, x, v);
    }
    v
}

/// Step 3's second level (or its only one) for the pass's rows, with every lane of the
/// workgroup, over the states in `from` ([`Ctx::n_groups`] of them: the groups' from
/// [`combine_groups`], or the splits' own): wave `k % N` finds row `k`'s maximum and weights
/// (lanes across states) into LDS; then each lane combines some `(row, dimension)` pairs over
/// the states in order, and stores `out`, folding as `how` says ([`Fold`]).
pub(super) fn combine(
    b: &mut KernelBuilder,
    c: &Ctx,
    rows: &[Row],
    wave_id: Value,
    waves: u32,
    from: States,
    how: Fold,
) {
    let d = c.d;
    let partials = c.partials;
    for (k, rw) in rows.iter().enumerate() {
        let kw = b.u32(k as u32 % waves);
        let mine = b.eq(wave_id, kw);
        let go = b.and(mine, rw.valid);
        b.if_then(go, |b| {
            let one = b.u32(1);
            let n_groups = c.n_groups(b);
            let lastv = b.sub(n_groups, one);
            let mut held = vec![];
            for j in 0..c.max_states.div_ceil(c.wave) {
                let jw = b.u32(j * c.wave);
                let s = b.add(c.lane, jw);
                let own = b.lt(s, n_groups);
                let sc = b.min(s, lastv);
                let (m, l) = match from {
                    States::Partials => {
                        let base = slot(b, c, rw.global, sc);
                        let dm = b.u32(d);
                        let am = b.add(base, dm);
                        let m = b.load(partials, am, Type::F32);
                        let al = b.add(am, one);
                        (m, b.load(partials, al, Type::F32))
                    }
                    States::Lds(st) => {
                        let kv = b.u32(k as u32);
                        let am = st.ml(b, c, kv, sc);
                        let m = lds_load(b, c, am);
                        let al = b.add(am, one);
                        (m, lds_load(b, c, al))
                    }
                };
                let ninf = b.f32(f32::NEG_INFINITY);
                let m = b.select(own, m, ninf);
                held.push((s, own, m, l));
            }
            let mut mx = held[0].2;
            for &(_, _, m, _) in &held[1..] {
                mx = b.max(mx, m);
            }
            let big = b.wave_reduce(ReduceOp::Max, mx);
            for &(s, own, m, l) in &held {
                let w = exp_sub(b, m, big);
                let (w_lds, l_lds) = (c.w_lds, c.l_lds);
                b.if_then(own, |b| {
                    let kb = b.u32(k as u32 * c.w_stride);
                    let at = b.add(kb, s);
                    b.store(w_lds, at, w);
                    b.store(l_lds, at, l);
                });
            }
        });
    }
    b.barrier(BarrierKind::Lds);
    let total = rows.len() as u32 * d;
    let passes = total.div_ceil(c.threads);
    // `Batched` (the `rR` variants) with one pass (`r1`): the batched fold. Else a loop a pass
    // (H200, 2026-12-02: two passes batched together made `r4t256` at head dim 128 ~19 us
    // slower; the batched fold pass by pass made it 2% faster but `r4` and `r8` 1.1-4.6x slower,
    // bench/results/attn-combine-passes-h200-2026-12-02.md; neither explained, measured with
    // 128 states a row; 8 spill the i8 `mma` at head dim 64. The i8 `mma` variants pass by pass
    // batched: 1.3-3.6x slower on an H100, bench/results/i8-combine-2026-12-06.md).
    let quad = matches!(c.out, Output::F32(_)) && d.is_multiple_of(4);
    let how = match how {
        Fold::BatchedQuad if passes > 1 && quad => Fold::Quad(LONG_UNROLL / 2),
        Fold::BatchedQuad => Fold::Batched,
        h => h,
    };
    let unroll = match how {
        Fold::Batched if passes == 1 => {
            let p = pair(b, c, rows, 0);
            let y = fold(b, c, rows, &p);
            output(b, c, total, &p, |_| y);
            return;
        }
        Fold::Batched => LONG_UNROLL,
        Fold::BatchedQuad => unreachable!("resolved above"),
        Fold::Unrolled(n) | Fold::Quad(n) => n,
    };
    if let (Fold::Quad(_), Output::F32(out), true) = (how, c.out, quad) {
        // 4 dimensions a lane: a quarter of the passes, one 16-byte load a state (`partials`'
        // stride and `D` are multiples of 4 words) and one `L` a state for the 4 (each
        // dimension's `acc` and `L` the same fmas in the same order: the same bits).
        let passes = (total / 4).div_ceil(c.threads);
        for j in 0..passes {
            let p = pair_by(b, c, rows, j, 4);
            b.if_then(p.go, |b| {
                let ys = fold_quad(b, c, &p, from, unroll);
                let o = b.add(p.at, p.e);
                for (i, &y) in ys.iter().enumerate() {
                    let iv = b.u32(i as u32);
                    let oi = b.add(o, iv);
                    b.store(out, oi, y);
                }
            });
        }
        return;
    }
    for j in 0..passes {
        let p = pair(b, c, rows, j);
        output(b, c, total, &p, |b| fold_unrolled(b, c, &p, from, unroll));
    }
}

/// Both levels of step 3 for one row (the baseline's: one wave), from the splits' states in
/// `partials`, written out as the order says and nothing shared: `M` by the wave's lanes
/// across the splits (the maximum of the groups' maxima is the splits'), then each lane, for
/// its dimensions, runs the groups in order, each group's `m_g`, weights, `L_g` and `acc_g`
/// from its splits and then `L = fma(L_g, w_g, L)`, `acc = fma(acc_g, w_g, acc)` with `w_g =
/// exp_sub(m_g, M)`. The same ops as [`combine_groups`] then [`combine`]: the same bits.
pub(super) fn combine_direct(b: &mut KernelBuilder, c: &Ctx, rows: &[Row; 1]) {
    let rw = &rows[0];
    let d = c.d;
    let (zero, one) = (b.u32(0), b.u32(1));
    let ninf = b.f32(f32::NEG_INFINITY);
    let lastv = b.sub(c.n_splits, one);
    // State `s`'s `(m, l)` and its `acc` word `e` (`s` clamped to the last split).
    let state = |b: &mut KernelBuilder, s: Value, e: Option<Value>| {
        let sc = b.min(s, lastv);
        let base = slot(b, c, rw.global, sc);
        let dm = b.u32(d);
        let am = b.add(base, dm);
        let m = b.load(c.partials, am, Type::F32);
        let one = b.u32(1);
        let al = b.add(am, one);
        let l = b.load(c.partials, al, Type::F32);
        let v = e.map(|e| {
            let av = b.add(base, e);
            b.load(c.partials, av, Type::F32)
        });
        (m, l, v)
    };
    let mut mx = ninf;
    for j in 0..MAX_SPLITS.div_ceil(c.wave) {
        let jw = b.u32(j * c.wave);
        let s = b.add(c.lane, jw);
        let own = b.lt(s, c.n_splits);
        let (m, _, _) = state(b, s, None);
        let m = b.select(own, m, ninf);
        mx = b.max(mx, m);
    }
    let big = b.wave_reduce(ReduceOp::Max, mx);
    // Groups of `g` splits (one: the single level, bit for bit, as `exp_sub(m, m)` is 1 and
    // `exp_sub(-inf, -inf)` 0: `math::tests`).
    let fold = |b: &mut KernelBuilder, p: &Pair, g: u32| {
        let fz = b.f32(0.0);
        let gm1 = b.u32(g - 1);
        let n_groups = b.add(c.n_splits, gm1);
        let gv = b.u32(g);
        let n_groups = b.div(n_groups, gv);
        let sums = b.for_range(zero, n_groups, one, 1, &[fz, fz], |b, gi, x| {
            let gv = b.u32(g);
            let s0 = b.mul(gi, gv);
            let held: Vec<_> = (0..g)
                .map(|i| {
                    let iv = b.u32(i);
                    let s = b.add(s0, iv);
                    let here = b.lt(s, c.n_splits);
                    let (m, l, v) = state(b, s, Some(p.e));
                    let m = b.select(here, m, ninf);
                    (here, m, l, v.expect("asked for"))
                })
                .collect();
            let mut mg = held[0].1;
            for &(_, m, _, _) in &held[1..] {
                mg = b.max(mg, m);
            }
            let (mut acc_g, mut sum_g) = (b.f32(0.0), b.f32(0.0));
            for &(here, m, l, v) in &held {
                let w = exp_sub(b, m, mg);
                let a = b.fma(v, w, acc_g);
                acc_g = b.select(here, a, acc_g);
                let s = b.fma(l, w, sum_g);
                sum_g = b.select(here, s, sum_g);
            }
            let wg = exp_sub(b, mg, big);
            vec![b.fma(acc_g, wg, x[0]), b.fma(sum_g, wg, x[1])]
        });
        b.div(sums[0], sums[1])
    };
    for j in 0..d.div_ceil(c.threads) {
        let p = pair(b, c, rows, j);
        output(b, c, d, &p, |b| {
            let grouped = c.grouped(b);
            let g = c.group_splits;
            b.if_else(grouped, |b| vec![fold(b, &p, g)], |b| vec![fold(b, &p, 1)])[0]
        });
    }
}

/// Stores the pair's output `value` (computed where the pair exists).
fn output(
    b: &mut KernelBuilder,
    c: &Ctx,
    total: u32,
    p: &Pair,
    value: impl FnOnce(&mut KernelBuilder) -> Value,
) {
    let Pair { e, valid, go, at, .. } = *p;
    match c.out {
        Output::F32(out) => b.if_then(go, |b| {
            let y = value(b);
            let o = b.add(at, e);
            b.store(out, o, y);
        }),
        Output::Q8_1s { q, s } => {
            // A Q8_1 block is 32 aligned lanes (`d` and the workgroup are multiples of 32), of
            // one row: all of them store or none. Its shuffles run outside `go` (not
            // wave-uniform); lanes that do not store quantize a 0. Where the passes cover the
            // rows exactly every lane is inside: `go` without the test (LLVM would share it
            // with `load_q`'s and keep that lane mask live across the scan: an SGPR spill of r8
            // on gfx90a).
            let go = if total.is_multiple_of(c.threads) { valid } else { go };
            let fz = b.f32(0.0);
            let y = b.if_else(go, |b| vec![value(b)], |_| vec![fz])[0];
            let Quantized { d: scale, d16, bytes, sum } = quantize_values(b, &[y], QK, true);
            let o = b.add(at, e);
            b.if_then(go, |b| {
                let byte = b.convert(bytes[0], Type::scalar(ScalarType::U8));
                b.store(q, o, byte);
                let qk = b.u32(QK);
                let j = b.rem(e, qk);
                let zero = b.u32(0);
                let head = b.eq(j, zero);
                b.if_then(head, |b| {
                    let ds = ds_word(b, scale, d16, sum);
                    let blk = b.div(o, qk);
                    b.store(s, blk, ds);
                });
            });
        }
    }
}

/// A lane's `(row, dimension)` pair of one pass of [`combine`].
#[derive(Clone, Copy)]
struct Pair {
    /// The dimension.
    e: Value,
    /// The row in the pass.
    kc: Value,
    /// The pair's row exists.
    valid: Value,
    /// The pair exists (inside the rows, its row valid).
    go: Value,
    /// The row's first element in `out`.
    at: Value,
    /// The row's index for `partials`.
    global: Value,
}

/// The lane's pair of pass `j` (pairs `tid + j threads` of the `rows x D` outputs).
fn pair(b: &mut KernelBuilder, c: &Ctx, rows: &[Row], j: u32) -> Pair {
    pair_by(b, c, rows, j, 1)
}

/// [`pair`] with `per` consecutive dimensions a lane (`per` divides `D`): `e` the first.
fn pair_by(b: &mut KernelBuilder, c: &Ctx, rows: &[Row], j: u32, per: u32) -> Pair {
    let total = rows.len() as u32 * c.d / per;
    let jj = b.u32(j * c.threads);
    let f = b.add(c.tid, jj);
    let tv = b.u32(total);
    let inside = b.lt(f, tv);
    let dd = b.u32(c.d / per);
    let k = b.div(f, dd);
    let e = b.rem(f, dd);
    let pv = b.u32(per);
    let e = b.mul(e, pv);
    // The row `k` (dynamic): its validity and places.
    let nr = b.u32(rows.len() as u32 - 1);
    let kc = b.min(k, nr);
    let valid = pick(b, rows, kc, &|r| r.valid);
    let at = pick(b, rows, kc, &|r| r.at);
    let global = pick(b, rows, kc, &|r| r.global);
    let go = b.and(inside, valid);
    Pair { e, kc, valid, go, at, global }
}

/// The fold of [`combine`] for the lane's pair `p`, `acc / L`: `acc = fma(acc_g, w_g, acc)` and
/// `L = fma(L_g, w_g, L)` over the states in order, `COMBINE_LOADS` states a trip with their
/// loads issued first (none depends on the sums), so a trip waits for one round trip to the
/// states, where [`fold_unrolled`] waits for one a state of its remainder. A state past the
/// last reads the last one (written) and leaves the sums as they are (`select`: the order's
/// sums, bit for bit). A pair without a row reads row 0's states (every pass's first row
/// exists; its own weights were never written).
fn fold(b: &mut KernelBuilder, c: &Ctx, rows: &[Row], p: &Pair) -> Value {
    let zero = b.u32(0);
    let kc = b.select(p.go, p.kc, zero);
    let global = b.select(p.go, p.global, rows[0].global);
    let ms = b.u32(c.w_stride);
    let kb = b.mul(kc, ms);
    let base = slot(b, c, global, zero);
    let base = b.add(base, p.e);
    let one = b.u32(1);
    let fz = b.f32(0.0);
    // Words from one state to the next.
    let stride = b.u32(c.d + 4);
    let uv = b.u32(COMBINE_LOADS);
    let um1 = b.u32(COMBINE_LOADS - 1);
    let n_groups = c.n_groups(b);
    let trips = b.add(n_groups, um1);
    let trips = b.div(trips, uv);
    let lastv = b.sub(n_groups, one);
    let sums = b.for_range(zero, trips, one, 1, &[fz, fz], |b, t, x| {
        let s0 = b.mul(t, uv);
        let loaded: Vec<[Value; 4]> = (0..COMBINE_LOADS)
            .map(|i| {
                let iv = b.u32(i);
                let s = b.add(s0, iv);
                let here = b.lt(s, n_groups);
                let s = b.min(s, lastv);
                let off = b.mul(s, stride);
                let ws = b.add(kb, s);
                let w = b.load(c.w_lds, ws, Type::F32);
                let l = b.load(c.l_lds, ws, Type::F32);
                let a = b.add(base, off);
                [here, w, l, b.load(c.partials, a, Type::F32)]
            })
            .collect();
        let (mut acc, mut sum) = (x[0], x[1]);
        for [here, w, l, v] in loaded {
            let a = b.fma(v, w, acc);
            acc = b.select(here, a, acc);
            let s = b.fma(l, w, sum);
            sum = b.select(here, s, sum);
        }
        vec![acc, sum]
    });
    b.div(sums[0], sums[1])
}

/// The fold of one pair as a loop unrolled `unroll` times (the same ops as [`fold`]): a trip of
/// the unrolled body waits for one round trip to the states, but each state of the remainder
/// (`n_groups % unroll`) for one of its own.
fn fold_unrolled(b: &mut KernelBuilder, c: &Ctx, p: &Pair, from: States, unroll: u32) -> Value {
    fold_dims(b, c, p, from, unroll, 1)[0]
}

/// [`fold_unrolled`] for 4 dimensions from `p.e` (one 16-byte load a state, `L` once a state
/// for the 4): `acc / L` of each.
fn fold_quad(b: &mut KernelBuilder, c: &Ctx, p: &Pair, from: States, unroll: u32) -> Vec<Value> {
    fold_dims(b, c, p, from, unroll, 4)
}

/// The fold of `n` (1 or 4) consecutive dimensions from `p.e` over the states, unrolled
/// `unroll` times: each dimension's `acc = fma(acc_g, w_g, acc)` and the shared `L = fma(L_g,
/// w_g, L)`, then `acc / L`.
fn fold_dims(
    b: &mut KernelBuilder,
    c: &Ctx,
    p: &Pair,
    from: States,
    unroll: u32,
    n: u32,
) -> Vec<Value> {
    let (zero, one) = (b.u32(0), b.u32(1));
    let fz = b.f32(0.0);
    let ms = b.u32(c.w_stride);
    let kb = b.mul(p.kc, ms);
    let n_groups = c.n_groups(b);
    let ty = |t| if n == 1 { Type::scalar(t) } else { Type::vector(t, n as u8) };
    let init = vec![fz; n as usize + 1];
    let sums = b.for_range(zero, n_groups, one, unroll, &init, |b, s, x| {
        let ws = b.add(kb, s);
        let w = b.load(c.w_lds, ws, Type::F32);
        let l = b.load(c.l_lds, ws, Type::F32);
        let v = match from {
            States::Partials => {
                let base = slot(b, c, p.global, s);
                let a = b.add(base, p.e);
                b.load(c.partials, a, ty(ScalarType::F32))
            }
            States::Lds(st) => {
                assert!(n == 1 || st.base.is_multiple_of(4), "16-byte states in LDS");
                let a = st.acc(b, c, p.kc, s);
                let a = b.add(a, p.e);
                b.load(c.k_lds, a, ty(ScalarType::U32))
            }
        };
        let mut next: Vec<Value> = (0..n as u8)
            .map(|i| {
                let vi = if n == 1 { v } else { b.extract(v, i) };
                let vi = match from {
                    States::Lds(_) => b.bitcast(vi, Type::F32),
                    States::Partials => vi,
                };
                b.fma(vi, w, x[i as usize])
            })
            .collect();
        next.push(b.fma(l, w, x[n as usize]));
        next
    });
    let sum = sums[n as usize];
    (0..n as usize).map(|i| b.div(sums[i], sum)).collect()
}
