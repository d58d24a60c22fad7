//! Step 3 of the order (the module docs of [`super`]): the splits' states combined maximum first,
//! in split order, by the workgroup that holds them all (`short`) or by the last workgroup of a
//! (row group, KV head) to finish (the `rR` variants: a counter, no float atomics, through
//! [`crate::common::last_of_workgroups`]).

use super::{short, slot, Ctx, Output, Row, COMBINE_UNROLL, MAX_SPLITS};
use crate::math::exp_sub;
use crate::quantize::{ds_word, quantize_values, Quantized, QK};
use kiln_ir::{BarrierKind, KernelBuilder, ReduceOp, ScalarType, Type, Value};

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
/// from `from`; the arithmetic is the same for both.
pub(super) fn combine(
    b: &mut KernelBuilder,
    c: &Ctx,
    rows: &[Row],
    wave_id: Value,
    waves: u32,
    from: States,
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
    for j in 0..total.div_ceil(c.threads) {
        let jj = b.u32(j * c.threads);
        let f = b.add(c.tid, jj);
        let tv = b.u32(total);
        let inside = b.lt(f, tv);
        let dd = b.u32(d);
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
        // `out` of element `(kc, e)`.
        let value = |b: &mut KernelBuilder| {
            let zero = b.u32(0);
            let one = b.u32(1);
            let fz = b.f32(0.0);
            let ms = b.u32(MAX_SPLITS);
            let kb = b.mul(kc, ms);
            let (w_lds, l_lds) = (c.w_lds, c.l_lds);
            let sums = b.for_range(zero, c.n_splits, one, COMBINE_UNROLL, &[fz, fz], |b, s, x| {
                let ws = b.add(kb, s);
                let w = b.load(w_lds, ws, Type::F32);
                let l = b.load(l_lds, ws, Type::F32);
                let v = match from {
                    States::Partials => {
                        let base = slot(b, c, global, s);
                        let a = b.add(base, e);
                        b.load(partials, a, Type::F32)
                    }
                    States::Lds { waves } => {
                        let a = short::lds_acc(b, c, waves, kc, s);
                        let a = b.add(a, e);
                        short::lds_load(b, c, a)
                    }
                };
                vec![b.fma(v, w, x[0]), b.fma(l, w, x[1])]
            });
            b.div(sums[0], sums[1])
        };
        match c.out {
            Output::F32(out) => b.if_then(go, |b| {
                let y = value(b);
                let o = b.add(at, e);
                b.store(out, o, y);
            }),
            Output::Q8_1s { q, s } => {
                // A Q8_1 block is 32 aligned lanes (`d` and the workgroup are multiples of 32),
                // of one row: all of them store or none. Its shuffles run outside `go` (not
                // wave-uniform); lanes that do not store quantize a 0. Where the passes cover
                // the rows exactly every lane is inside: `go` without the test (LLVM would
                // share it with `load_q`'s and keep that lane mask live across the scan: an
                // SGPR spill of r8 on gfx90a).
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
}
