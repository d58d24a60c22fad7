//! The `rRx` / `rRxP` variants (Q8_0, wave 32): a split's chunks across `P` waves (`rRx`: `P =
//! D / 32`, a block a wave; `rRx2`: two blocks a wave at head dim 128), so that a split's
//! serial work is about a `P`-th of an `rR` wave's and a KV head has `P` times the waves in
//! flight. At one token the order gives a (row group, KV head) at most [`super::MAX_SPLITS`]
//! splits: the `rR` variants run 1024 waves for the 32 q / 8 kv heads, 8 an H200 SM at
//! the register counts their V preload takes, each through about 2950 instructions a chunk
//! (docs/attention.md, "A split across waves").
//!
//! The split's `P` waves, chunk by chunk, with the order's ops (so the baseline's bits):
//! 1. stage the chunk's K rows in LDS together (coalesced);
//! 2. wave `p` takes the blocks `p D / (32 P) ..` of every key's dot products (lane `j` key
//!    `j`, as in [`super::scan`]) for every row: the blocks' sums `t` go to LDS; then it asks
//!    for the V values of its `D / (W P)` dimensions a lane ([`v_quants`], [`lane_scales`]);
//! 3. row `k`'s softmax step by the wave `k % P`: `dot = dot + t` over the blocks in order from
//!    `+0`, the maximum, `a`, `p` and `l_lane` as [`super::scan`] computes them; `p`, `a` and
//!    `m'` go to LDS;
//! 4. every wave: `acc = acc * a`, then `acc = fma(p_j, v_j, acc)` over the chunk's keys in
//!    order, for its dimensions.
//!
//! At the end the owner's `l = wave_reduce(add, l_lane)` goes through LDS, so every wave of the
//! split holds the split's whole state for its dimensions (the combine's code is the `rR`
//! variants'). A workgroup holds the 4 splits of a group of step 3's first level, `128 P`
//! lanes. Three workgroup barriers a chunk.

use super::scan::{
    aligned_word, block_dots, chunk_inside, quant_byte, scale_f32, stage_loads_by, stage_rows_by,
    stage_stores_by, v_lane_block_at, v_loads_clamped,
};
use super::{attention_io, CacheType, Ctx, Io, Row, Shape, THREADS};
use crate::math::exp_sub;
use kiln_ir::{
    BarrierKind, IndexUnit, Kernel, KernelBuilder, LdsSlot, ReduceOp, ScalarType, Target, Type,
    Value,
};

/// The `rRxP` kernel at wave 32 (`P` waves a split, `rows` rows, head dim `d`, Q8_0): the 4
/// splits of a group a workgroup, `128 P` lanes. On NVIDIA capped at what the workgroup can
/// launch with, or at two workgroups an SM where the split is across fewer waves than blocks
/// (`r4x2`: 128 registers on sm_90, no spills).
pub fn kernel(t: &Target, parts: u32, rows: u32, d: u32, io: Io) -> Kernel {
    let waves = (THREADS / 32) * parts;
    let shape = Shape {
        rows,
        waves,
        baseline: false,
        threads: waves * 32,
        short: false,
        async_k: false,
        across: Some(parts),
    };
    let mut k = attention_io(t, 32, CacheType::Q8_0, d, shape, io);
    if t.family == kiln_ir::target::Family::Nvidia {
        let wgs = if parts < d / 32 { 2 } else { 1 };
        k.max_registers = Some(t.registers_for_workgroup(wgs * waves * 32));
    }
    k
}

/// How the waves of a split share it.
pub(super) struct Across {
    /// Waves a split (`P`).
    parts: u32,
    /// The wave's part of its split (`wave % parts`).
    part: Value,
    /// The wave's split in the workgroup (`wave / parts`).
    split: Value,
    /// The lane among its split's (`part W + lane`): the staging's, and its first dimension
    /// over `dpl`.
    index: Value,
    /// The blocks' sums, `[split][block][row][key]`.
    sums: LdsSlot,
    /// The weights `p`, `[split][key][row]`.
    probs: LdsSlot,
    /// A chunk's `a` and `m'` and the split's `l`, `[split][3][row]`.
    shared: LdsSlot,
}

impl Across {
    /// The slots for `splits` splits of `rows` rows at head dim `d` and wave `wave`, and the
    /// wave's place.
    pub fn new(
        b: &mut KernelBuilder,
        (parts, splits): (u32, u32),
        rows: u32,
        (d, wave): (u32, u32),
        wave_id: Value,
    ) -> Across {
        let pv = b.u32(parts);
        let part = b.rem(wave_id, pv);
        let split = b.div(wave_id, pv);
        let wv = b.u32(wave);
        let pw = b.mul(part, wv);
        let lane = b.lane();
        let index = b.add(pw, lane);
        let sums = b.lds("block_sums", ScalarType::F32, splits * (d / 32) * rows * wave);
        let probs = b.lds("probs", ScalarType::F32, splits * wave * rows);
        let shared = b.lds("rescale", ScalarType::F32, splits * 3 * rows);
        Across { parts, part, split, index, sums, probs, shared }
    }

    /// The wave's split in the workgroup.
    pub fn split(&self) -> Value {
        self.split
    }

    /// The lane among its split's (its first dimension in the P.V product, over `dpl`).
    pub fn index(&self) -> Value {
        self.index
    }

    /// Element `k` of row `r` of `what` (0 `a`, 1 `m'`, 2 `l`) in [`Across::shared`].
    fn shared_at(&self, b: &mut KernelBuilder, rows: u32, what: u32, r: u32) -> Value {
        let per = b.u32(3 * rows);
        let x = b.mul(self.split, per);
        let o = b.u32(what * rows + r);
        b.add(x, o)
    }
}

/// `arm(k)`'s values for the wave's part `k` (a uniform branch a part: the blocks' byte offsets
/// and permutes are constants of the part).
fn by_part(
    b: &mut KernelBuilder,
    x: &Across,
    k: u32,
    arm: &dyn Fn(&mut KernelBuilder, u32) -> Vec<Value>,
) -> Vec<Value> {
    if k + 1 == x.parts {
        return arm(b, k);
    }
    let kv = b.u32(k);
    let is = b.eq(x.part, kv);
    b.if_else(is, |b| arm(b, k), |b| by_part(b, x, k + 1, arm))
}

/// A split's first chunk asked for before the rows' q (so that the latencies of q's loads, the
/// chunk's K rows and its V values overlap instead of following each other): the K units of
/// its staging by the split's lanes, not yet stored, and the lane's V quants and scales. Every
/// address is clamped into the caches, so a wave without a split loads harmlessly.
pub(super) struct First {
    k: Vec<Value>,
    vq: Vec<Value>,
    shift: Value,
    scales: Vec<Value>,
}

/// [`First`] of split `split` (built only here), where it was measured: on NVIDIA with one
/// row a workgroup (`r1x`; with more rows the loads would live across q's beside the rows'
/// state, not measured). On an H100 (bench/results/residual-2026-12-05.md, call 3) SmolLM2's
/// node 6.82 -> 6.64 us at ~587 positions, its Q8_0 step 593.0 -> 580.5 us at ~2013.
pub(super) fn first_loads(
    b: &mut KernelBuilder,
    c: &Ctx,
    x: &Across,
    rows: u32,
    split: impl FnOnce(&mut KernelBuilder) -> Value,
) -> Option<First> {
    if !c.nvidia || rows != 1 {
        return None;
    }
    let s = split(b);
    let c0 = b.mul(s, c.cps);
    let wv = b.u32(c.wave);
    let k0 = b.mul(c0, wv);
    let by = (x.index, x.parts * c.wave);
    let k = stage_loads_by(b, c, c.k_cache, k0, c.wave, by);
    let one = b.u32(1);
    let last = b.sub(c.kv_len, one);
    let (vq, shift) = v_quants(b, c, k0, last);
    let scales = lane_scales(b, c, x, k0, last);
    Some(First { k, vq, shift, scales })
}

/// Split `s`'s states of the rows (step 2), as [`super::scan`] returns them (`m[R]`, `l[R]`,
/// `acc[R][dpl]`: the wave's dimensions from `d0`), `m` and `l` the same in each of the split's
/// waves. `active` (uniform
/// over the split's waves): the split exists. Every wave runs `cps` steps (the barriers); a
/// chunk outside the split's computes on clamped reads and is dropped.
pub(super) fn scan(
    b: &mut KernelBuilder,
    c: &Ctx,
    x: &Across,
    rows: &[Row],
    s: Value,
    active: Value,
    first: Option<&First>,
) -> Vec<Value> {
    let n = rows.len();
    let nr = n as u32;
    let (w, d, dpl) = (c.wave, c.d, c.dpl as usize);
    assert_eq!(
        w, 32,
        "a split across waves is built at wave 32 (a wave's dimensions whole blocks)"
    );
    let nb = d / 32;
    let bpp = nb / x.parts;
    let mut init = vec![b.f32(f32::NEG_INFINITY); n];
    init.extend((0..n + n * dpl).map(|_| b.f32(0.0)));
    let c0 = b.mul(s, c.cps);
    let (zero, one) = (b.u32(0), b.u32(1));
    let wv = b.u32(w);
    let last = b.sub(c.kv_len, one);
    // Whether the wave owns row `r` (made where it is used: held through the loop, the rows'
    // flags are SGPRs the gfx906 build spills).
    let owner = |b: &mut KernelBuilder, r: u32| {
        let rp = b.u32(r % x.parts);
        b.eq(x.part, rp)
    };
    let step = |b: &mut KernelBuilder, i: Value, st: &[Value], first: Option<&First>| {
        let chunk = b.add(c0, i);
        let inside = b.lt(chunk, c.n_chunks);
        let go = b.and(active, inside);
        let k0 = b.mul(chunk, wv);
        // 1. The chunk's K rows by the split's lanes; the lane's V values (every address
        // clamped into the caches, so a chunk outside the split reads harmlessly). Chunk 0's
        // with [`First`] were asked for before q.
        let by = (x.index, x.parts * w);
        match first {
            Some(f) => stage_stores_by(b, c, (c.k_lds, c.region), &f.k, w, by),
            None => stage_rows_by(b, c, (c.k_cache, c.k_lds, c.region), k0, w, false, by),
        }
        b.barrier(BarrierKind::Lds);
        // 2. The part's blocks' sums of every row, to LDS.
        let key = b.add(k0, c.lane);
        let sums = by_part(b, x, 0, &|b, k| {
            let blocks = block_dots(b, c, nr, key, c.region, k * bpp..(k + 1) * bpp);
            blocks.into_iter().flatten().collect()
        });
        let per_split = b.u32(nb * nr * w);
        let sbase = b.mul(x.split, per_split);
        let bppv = b.u32(bpp);
        let first_block = b.mul(x.part, bppv);
        for j in 0..bpp {
            let jv = b.u32(j);
            let blk = b.add(first_block, jv);
            for r in 0..nr {
                let at = sum_at(b, (nr, w), sbase, blk, r, c.lane);
                b.store(x.sums, at, sums[(j * nr + r) as usize]);
            }
        }
        // The V values of the lane's dimensions, asked for once the scores' registers are
        // free: in flight through the softmax step. A wave's dimensions are `dpl` whole blocks:
        // lane `j` loads key `j`'s scales of them, which the keys' values take by a shuffle.
        let (vq, shift, scales) = match first {
            Some(f) => (f.vq.clone(), f.shift, f.scales.clone()),
            None => {
                let (vq, shift) = v_quants(b, c, k0, last);
                (vq, shift, lane_scales(b, c, x, k0, last))
            }
        };
        b.barrier(BarrierKind::Lds);
        // 3. The owned rows' softmax step; `p`, `a`, `m'` to LDS.
        let mut ls = vec![];
        for (r, rw) in rows.iter().enumerate() {
            let (m, l) = (st[r], st[n + r]);
            let mine = owner(b, r as u32);
            let lnext = b.if_else(
                mine,
                |b| {
                    let mut dot = b.f32(0.0);
                    for blk in 0..nb {
                        let bv = b.u32(blk);
                        let at = sum_at(b, (nr, w), sbase, bv, r as u32, c.lane);
                        let t = b.load(x.sums, at, Type::F32);
                        dot = b.add(dot, t);
                    }
                    let sv = b.mul(dot, c.scale);
                    let sees = b.le(key, rw.limit);
                    let ninf = b.f32(f32::NEG_INFINITY);
                    let sv = b.select(sees, sv, ninf);
                    let mc = b.wave_reduce(ReduceOp::Max, sv);
                    let m2 = b.max(m, mc);
                    let a = exp_sub(b, m, m2);
                    let p = exp_sub(b, sv, m2);
                    let pa = prob_at(b, c, x, nr, c.lane, r as u32);
                    b.store(x.probs, pa, p);
                    let first = b.eq(c.lane, zero);
                    b.if_then(first, |b| {
                        let at = x.shared_at(b, nr, 0, r as u32);
                        b.store(x.shared, at, a);
                        let at = x.shared_at(b, nr, 1, r as u32);
                        b.store(x.shared, at, m2);
                    });
                    vec![b.fma(l, a, p)]
                },
                |_| vec![l],
            )[0];
            ls.push(lnext);
        }
        b.barrier(BarrierKind::Lds);
        // 4. Every wave: its dimension's accumulators over the chunk's keys in order.
        let mut ms = vec![];
        let mut accs = vec![];
        for r in 0..nr {
            let at = x.shared_at(b, nr, 0, r);
            let a = b.load(x.shared, at, Type::F32);
            let at = x.shared_at(b, nr, 1, r);
            ms.push(b.load(x.shared, at, Type::F32));
            for e in 0..dpl {
                accs.push(b.mul(st[2 * n + r as usize * dpl + e], a));
            }
        }
        for (j, &q) in vq.iter().enumerate() {
            let jv = b.u32(j as u32);
            let scj = key_scale(b, c, &scales, jv);
            let ps = probs_of(b, c, x, nr, jv);
            for e in 0..dpl {
                // `f32(q) * f32(d)` (exact) of byte `shift / 8 + e` of the word.
                let sh = b.u32(8 * e as u32);
                let sh = b.add(shift, sh);
                let v = b.shr(q, sh);
                let v = b.convert(v, Type::scalar(ScalarType::U8));
                let v = b.bitcast(v, Type::scalar(ScalarType::I8));
                let v = b.convert(v, Type::F32);
                let v = b.mul(v, scj);
                for (r, &p) in ps.iter().enumerate() {
                    let i = r * dpl + e;
                    accs[i] = b.fma(p, v, accs[i]);
                }
            }
        }
        let next: Vec<Value> = ms.into_iter().chain(ls).chain(accs).collect();
        next.iter().zip(st).map(|(&new, &old)| b.select(go, new, old)).collect::<Vec<_>>()
    };
    let st = match first {
        // Chunk 0 (every split has one) from the loads issued before q's, then the rest.
        Some(f) => {
            let st = step(b, zero, &init, Some(f));
            b.for_range(one, c.cps, one, 1, &st, |b, i, st| step(b, i, st, None))
        }
        None => b.for_range(zero, c.cps, one, 1, &init, |b, i, st| step(b, i, st, None)),
    };
    // The owners' `l`, to every wave of the split.
    for r in 0..nr {
        let lane_sum = st[n + r as usize];
        let mine = owner(b, r);
        b.if_then(mine, |b| {
            let l = b.wave_reduce(ReduceOp::Add, lane_sum);
            let first = b.eq(c.lane, zero);
            b.if_then(first, |b| {
                let at = x.shared_at(b, nr, 2, r);
                b.store(x.shared, at, l);
            });
        });
    }
    b.barrier(BarrierKind::Lds);
    let mut out = st[..n].to_vec();
    for r in 0..nr {
        let at = x.shared_at(b, nr, 2, r);
        out.push(b.load(x.shared, at, Type::F32));
    }
    out.extend_from_slice(&st[2 * n..]);
    out
}

/// The scales (f32) of key `k0 + lane`'s V row (the last row past the context) in the wave's
/// `dpl` blocks of the P.V product (`W dpl` dimensions from the wave's first).
fn lane_scales(b: &mut KernelBuilder, c: &Ctx, x: &Across, k0: Value, last: Value) -> Vec<Value> {
    let kl = b.add(k0, c.lane);
    let kl = b.min(kl, last);
    let hr = b.mul(c.h, c.ctx_max);
    let r = b.add(hr, kl);
    let rb = b.u32(c.cache.row_bytes(c.d));
    let base = b.mul(r, rb);
    let dpl = c.dpl;
    let per = b.u32(dpl);
    let first = b.mul(x.part, per);
    (0..dpl)
        .map(|i| {
            let iv = b.u32(i);
            let blk = b.add(first, iv);
            let c34 = b.u32(34);
            let off = b.mul(blk, c34);
            let at = b.add(base, off);
            let bits = b.load_with(c.v_cache, at, ScalarType::U16, IndexUnit::Byte, Some(2));
            scale_f32(b, bits)
        })
        .collect()
}

/// Key `j`'s scale of the lane's block, from [`lane_scales`] (lane `l`'s dimensions are in the
/// wave's block `l / (W / dpl)`).
fn key_scale(b: &mut KernelBuilder, c: &Ctx, scales: &[Value], j: Value) -> Value {
    let got: Vec<Value> = scales.iter().map(|&s| b.shuffle_idx(s, j)).collect();
    let lanes = c.wave / c.dpl;
    let lv = b.u32(lanes);
    let i = b.div(c.lane, lv);
    let mut sc = got[0];
    for (k, &g) in got.iter().enumerate().skip(1) {
        let kv = b.u32(k as u32);
        let here = b.eq(i, kv);
        sc = b.select(here, g, sc);
    }
    sc
}

/// The lane's quants of the V rows of keys `k0 .. k0 + W`: a `u32` each, holding its `dpl`
/// quants from byte `shift / 8` (the second value). Where the chunk is inside the context
/// (every chunk but a split's last), the aligned word around them (`d0` is a multiple of
/// `dpl`, at most 2, so they do not cross a word), from one 64-bit index and constant offsets
/// (one load instruction a key on NVIDIA, where 32-bit indices cost an address computation a
/// load; a row is a multiple of 4 bytes, so the shift is the lane's for every key); else
/// [`v_loads_clamped`]' (a key past the context reads the last row; its p is 0), shift 0. (The paths
/// load different types, so LLVM does not merge their loads into one set behind a phi of 32
/// addresses.) Not [`super::scan::v_loads`]: that one loads each key's scale word too and
/// narrows the quants; taking its quants here (the scales are [`lane_scales`]') cost 12-15
/// more registers on sm_90 (`r1x` 103 -> 115-118).
fn v_quants(b: &mut KernelBuilder, c: &Ctx, k0: Value, last: Value) -> (Vec<Value>, Value) {
    let w = c.wave;
    let inside = chunk_inside(b, c, k0, last);
    let mut got = b.if_else(
        inside,
        |b| {
            assert!(c.dpl <= 2, "a lane's quants in one word");
            let (rb, block, o) = v_lane_block_at(b, c, k0);
            let at = quant_byte(b, block, o);
            let (word, shift) = aligned_word(b, at);
            let mut out: Vec<Value> = (0..w)
                .map(|j| {
                    let off = b.u64(u64::from(j * rb));
                    let aj = b.add(word, off);
                    b.load_with(c.v_cache, aj, ScalarType::U32, IndexUnit::Byte, Some(4))
                })
                .collect();
            out.push(shift);
            out
        },
        |b| {
            let mut out: Vec<Value> = v_loads_clamped(b, c, k0, last)
                .into_iter()
                .map(|raw| b.convert(raw[1], Type::U32))
                .collect();
            out.push(b.u32(0));
            out
        },
    );
    let shift = got.pop().expect("the shift");
    (got, shift)
}

/// Element of block `blk`'s sum of row `r` for key `lane` in [`Across::sums`] (`sbase`: the
/// split's first).
fn sum_at(
    b: &mut KernelBuilder,
    (rows, w): (u32, u32),
    sbase: Value,
    blk: Value,
    r: u32,
    lane: Value,
) -> Value {
    let per_block = b.u32(rows * w);
    let x = b.mul(blk, per_block);
    let o = b.u32(r * w);
    let x = b.add(x, o);
    let x = b.add(x, lane);
    b.add(sbase, x)
}

/// Element of key `key`'s `p` of row `r` in [`Across::probs`].
fn prob_at(b: &mut KernelBuilder, c: &Ctx, x: &Across, rows: u32, key: Value, r: u32) -> Value {
    let per_split = b.u32(c.wave * rows);
    let at = b.mul(x.split, per_split);
    let rv = b.u32(rows);
    let k = b.mul(key, rv);
    let at = b.add(at, k);
    let o = b.u32(r);
    b.add(at, o)
}

/// Key `key`'s `p` of every row (one LDS read of the rows' values where they make a vector).
fn probs_of(b: &mut KernelBuilder, c: &Ctx, x: &Across, rows: u32, key: Value) -> Vec<Value> {
    let at = prob_at(b, c, x, rows, key, 0);
    match rows {
        2 | 4 => {
            let v = b.load(x.probs, at, Type::vector(ScalarType::F32, rows as u8));
            (0..rows as u8).map(|e| b.extract(v, e)).collect()
        }
        _ => (0..rows)
            .map(|r| {
                let o = b.u32(r);
                let at = b.add(at, o);
                b.load(x.probs, at, Type::F32)
            })
            .collect(),
    }
}
