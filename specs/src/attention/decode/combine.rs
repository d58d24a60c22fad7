//! Step 3 of the order (the module docs of [`super`]): the splits' states combined maximum first,
//! in split order, by the workgroup that holds them all (`short`) or by the last workgroup of a
//! (row group, KV head) to finish (the `rR` variants: a counter, no float atomics, through
//! [`crate::common::last_of_workgroups`]).

use super::{short, slot, Ctx, Output, Row, MAX_SPLITS};
use crate::math::exp_sub;
use crate::quantize::{ds_word, quantize_values, Quantized, QK};
use kiln_ir::{BarrierKind, KernelBuilder, ReduceOp, ScalarType, Type, Value};

/// Splits a trip of [`fold`] (their states loaded together; 64 was slower on the H200).
const COMBINE_LOADS: u32 = 32;
/// Unroll of [`fold_unrolled`]'s loop.
const COMBINE_UNROLL: u32 = 16;

/// Where the splits' states are for [`combine`].
#[derive(Clone, Copy)]
pub(super) enum States {
    /// In `partials` ([`slot`]).
    Partials,
    /// In `k_lds`, for at most `waves` splits ([`short::lds_acc`], [`short::lds_ml`]).
    Lds { waves: u32 },
}

/// Step 3 for the pass's rows, with every lane of the workgroup: wave `k % N` finds row `k`'s
/// maximum and weights (lanes across splits) into LDS; then each lane combines some
/// `(row, dimension)` pairs over the splits in order, and stores `out`. The states are read
/// from `from`; the arithmetic is the same for both. `batched` (states in `partials`): a lane
/// with one pair folds the splits in batches ([`fold`]); else, and with more pairs, a loop
/// ([`fold_unrolled`]): the same ops in the same order.
pub(super) fn combine(
    b: &mut KernelBuilder,
    c: &Ctx,
    rows: &[Row],
    wave_id: Value,
    waves: u32,
    from: States,
    batched: bool,
) {
    let d = c.d;
    let partials = c.partials;
    for (k, rw) in rows.iter().enumerate() {
        let kw = b.u32(k as u32 % waves);
        let mine = b.eq(wave_id, kw);
        let go = b.and(mine, rw.valid);
        b.if_then(go, |b| {
            let one = b.u32(1);
            let lastv = b.sub(c.n_splits, one);
            let mut held = vec![];
            for j in 0..MAX_SPLITS.div_ceil(c.wave) {
                let jw = b.u32(j * c.wave);
                let s = b.add(c.lane, jw);
                let own = b.lt(s, c.n_splits);
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
                    States::Lds { waves } => {
                        let kv = b.u32(k as u32);
                        let am = short::lds_ml(b, c, rows.len() as u32, waves, kv, sc);
                        let m = short::lds_load(b, c, am);
                        let al = b.add(am, one);
                        (m, short::lds_load(b, c, al))
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
                    let kb = b.u32(k as u32 * MAX_SPLITS);
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
    // `batched` (the `rR` variants, whose states are in `partials`) with one pass (`r1`):
    // the batched fold. Else a loop a pass (H200, 2026-12-02: two passes batched together made
    // `r4t256` at head dim 128 ~19 us slower; the batched fold pass by pass made it 2% faster
    // but `r4` and `r8` 1.1-4.6x slower, bench/results/attn-combine-passes-h200-2026-12-02.md;
    // neither explained; 8 spill the i8 `mma` at head dim 64; the `short` variants' at most 8
    // splits in LDS gain nothing, and their fallback and the baselines spill on gfx906).
    if batched && passes == 1 {
        let p = pair(b, c, rows, 0);
        let y = fold(b, c, rows, &p);
        output(b, c, total, &p, |_| y);
    } else {
        for j in 0..passes {
            let p = pair(b, c, rows, j);
            output(b, c, total, &p, |b| fold_unrolled(b, c, &p, from));
        }
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
    let total = rows.len() as u32 * c.d;
    let jj = b.u32(j * c.threads);
    let f = b.add(c.tid, jj);
    let tv = b.u32(total);
    let inside = b.lt(f, tv);
    let dd = b.u32(c.d);
    let k = b.div(f, dd);
    let e = b.rem(f, dd);
    // The row `k` (dynamic): its validity and places.
    let nr = b.u32(rows.len() as u32 - 1);
    let kc = b.min(k, nr);
    let pick = |b: &mut KernelBuilder, get: &dyn Fn(&Row) -> Value| {
        let mut v = get(&rows[0]);
        for (i, rw) in rows.iter().enumerate().skip(1) {
            let iv = b.u32(i as u32);
            let here = b.eq(kc, iv);
            let x = get(rw);
            v = b.select(here, x, v);
        }
        v
    };
    let valid = pick(b, &|r| r.valid);
    let at = pick(b, &|r| r.at);
    let global = pick(b, &|r| r.global);
    let go = b.and(inside, valid);
    Pair { e, kc, valid, go, at, global }
}

/// The fold of step 3 for the lane's pair `p` (states in `partials`), `acc / L`: `acc =
/// fma(acc_s, w_s, acc)` and `L = fma(l_s, w_s, L)` over the splits in order, `COMBINE_LOADS`
/// splits a trip with their loads issued first (none depends on the sums), so a trip waits for
/// one round trip to the states, where [`fold_unrolled`] waits for one a split of its
/// remainder. A split past `n_splits` reads the last split's state (written) and leaves the
/// sums as they are (`select`: the order's sums, bit for bit). A pair without a row reads row
/// 0's states (every pass's first row exists; its own weights were never written).
fn fold(b: &mut KernelBuilder, c: &Ctx, rows: &[Row], p: &Pair) -> Value {
    let zero = b.u32(0);
    let kc = b.select(p.go, p.kc, zero);
    let global = b.select(p.go, p.global, rows[0].global);
    let ms = b.u32(MAX_SPLITS);
    let kb = b.mul(kc, ms);
    let base = slot(b, c, global, zero);
    let base = b.add(base, p.e);
    let one = b.u32(1);
    let fz = b.f32(0.0);
    // Words from one split's state to the next.
    let stride = b.u32(c.d + 4);
    let uv = b.u32(COMBINE_LOADS);
    let um1 = b.u32(COMBINE_LOADS - 1);
    let trips = b.add(c.n_splits, um1);
    let trips = b.div(trips, uv);
    let lastv = b.sub(c.n_splits, one);
    let sums = b.for_range(zero, trips, one, 1, &[fz, fz], |b, t, x| {
        let s0 = b.mul(t, uv);
        let loaded: Vec<[Value; 4]> = (0..COMBINE_LOADS)
            .map(|i| {
                let iv = b.u32(i);
                let s = b.add(s0, iv);
                let here = b.lt(s, c.n_splits);
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

/// The fold of one pair as a loop unrolled `COMBINE_UNROLL` times (the same ops as [`fold`]):
/// a trip of the unrolled body waits for one round trip to the states, but each split of the
/// remainder (`n_splits % COMBINE_UNROLL`) for one of its own.
fn fold_unrolled(b: &mut KernelBuilder, c: &Ctx, p: &Pair, from: States) -> Value {
    let (zero, one) = (b.u32(0), b.u32(1));
    let fz = b.f32(0.0);
    let ms = b.u32(MAX_SPLITS);
    let kb = b.mul(p.kc, ms);
    let sums = b.for_range(zero, c.n_splits, one, COMBINE_UNROLL, &[fz, fz], |b, s, x| {
        let ws = b.add(kb, s);
        let w = b.load(c.w_lds, ws, Type::F32);
        let l = b.load(c.l_lds, ws, Type::F32);
        let v = match from {
            States::Partials => {
                let base = slot(b, c, p.global, s);
                let a = b.add(base, p.e);
                b.load(c.partials, a, Type::F32)
            }
            States::Lds { waves } => {
                let a = short::lds_acc(b, c, waves, p.kc, s);
                let a = b.add(a, p.e);
                short::lds_load(b, c, a)
            }
        };
        vec![b.fma(v, w, x[0]), b.fma(l, w, x[1])]
    });
    b.div(sums[0], sums[1])
}
