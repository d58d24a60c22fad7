//! Steps 1 and 2 of the order (the module docs of [`super`]) for the `rR`, `short` and
//! baseline variants: a split's chunks staged in LDS, each lane's key's scores against the
//! rows' q, the maximum-first rescale and the P.V accumulation, into the split's state.

use super::{CacheType, Ctx, Row};
use crate::math::exp_sub;
use kiln_ir::{
    BarrierKind, IndexUnit, KernelBuilder, LdsSlot, PackedConvertOp, Param, ReduceOp, ScalarType,
    Type, Value,
};

/// Waves up to this size load a chunk's V rows before its scores (straight-line P.V)...
const PRELOAD_WAVE: u32 = 32;
/// ... for up to this many rows (R8 spills on sm_90 with them).
const PRELOAD_ROWS: usize = 4;
/// Unroll of the P.V loop where the rows are not preloaded (more spills on gfx906).
const PV_UNROLL_W64: u32 = 8;

/// The lane's key's dot products with the rows' q (step 1, before the scale): for each block
/// of 32 dimensions, `t = fma(q_d, x_d, t)` over its dimensions in order from `+0`; then
/// `dot = dot + t` over the blocks in order from `+0`. The key's row is read from the wave's
/// staged chunk ([`stage_rows`]); the blocks' chains (and the rows') are independent.
fn dots(b: &mut KernelBuilder, c: &Ctx, rows: u32, key: Value, region: Value) -> Vec<Value> {
    let blocks = block_dots(b, c, rows, key, region, 0..c.d / 32);
    let fz = b.f32(0.0);
    (0..rows as usize)
        .map(|rr| {
            let mut dot = fz;
            for t in &blocks {
                dot = b.add(dot, t[rr]);
            }
            dot
        })
        .collect()
}

/// The sums `t` of [`dots`] of the blocks `blocks` (32 dimensions each; all of them with an f16
/// cache), `[block][row]`: each block's chain `t = fma(q_d, x_d, t)` over its dimensions in
/// order from `+0`. A Q8_0 key's row words are read from LDS where a block needs them.
pub(super) fn block_dots(
    b: &mut KernelBuilder,
    c: &Ctx,
    rows: u32,
    key: Value,
    region: Value,
    blocks: std::ops::Range<u32>,
) -> Vec<Vec<Value>> {
    let (q_lds, d) = (c.q_lds, c.d);
    let first_block = blocks.start;
    // The q loads' index carries a zero that changes with the key (`(key >> 31) & (n_tokens >>
    // 4)`: `n_tokens <= 8` is an ABI rule), so the compiler keeps them in the chunk loop
    // instead of hoisting all of q into registers (which spills on every arch).
    let kz = c.opaque_zero(b, key);
    let fz = b.f32(0.0);
    let mut sums: Vec<Vec<Value>> = vec![vec![fz; rows as usize]; blocks.len()];
    let mut fold = |b: &mut KernelBuilder, d0: u32, xs: &[Value]| {
        let t = &mut sums[(d0 / 32 - first_block) as usize];
        for (rr, acc) in t.iter_mut().enumerate() {
            let at = b.u32(rr as u32 * d + d0);
            let at = b.add(at, kz);
            let qv = b.load(q_lds, at, Type::vector(ScalarType::F32, 4));
            for (e, &x) in xs.iter().enumerate() {
                let qe = b.extract(qv, e as u8);
                *acc = b.fma(qe, x, *acc);
            }
        }
    };
    // The lane's row in the wave's staged chunk.
    let rb = c.cache.row_bytes(d);
    let rbv = b.u32(rb);
    let base = b.mul(c.lane, rbv);
    let base = b.add(region, base);
    let k_lds = c.k_lds;
    match c.cache {
        CacheType::Q8_0 => {
            // A row is `17 D / 16` bytes (a multiple of 4): its words are read aligned, and
            // the quants of an even block (2 bytes into a word) rebuilt by byte permutes. The
            // blocks' words, in order (every word of the row for all the blocks).
            let w0 = 34 * blocks.start / 4;
            let w1 = (34 * blocks.end).div_ceil(4);
            let mut words: Vec<Option<Value>> = vec![None; (rb / 4) as usize];
            for (w, slot) in words.iter_mut().enumerate().take(w1 as usize).skip(w0 as usize) {
                let ov = b.u32(4 * w as u32);
                let at = b.add(base, ov);
                *slot = Some(b.load_with(k_lds, at, ScalarType::U32, IndexUnit::Byte, Some(4)));
            }
            let words: Vec<Value> = words.into_iter().map(|w| w.unwrap_or(fz)).collect();
            for bi in blocks.clone() {
                let o = 34 * bi;
                let w = words[(o / 4) as usize];
                let sh = b.u32(8 * (o % 4));
                let sc = b.shr(w, sh);
                let sc = b.convert(sc, Type::scalar(ScalarType::U16));
                let sc = b.bitcast(sc, Type::F16);
                let sc = b.convert(sc, Type::F32);
                for g in 0..8 {
                    let at = o + 2 + 4 * g;
                    let wi = (at / 4) as usize;
                    let x = if at % 4 == 0 {
                        words[wi]
                    } else {
                        b.perm(words[wi], words[wi + 1], [2, 3, 4, 5])
                    };
                    let f = b.packed_convert(PackedConvertOp::I8x4ToF32x4, x);
                    let xs: Vec<Value> = (0..4)
                        .map(|e| {
                            let v = b.extract(f, e);
                            b.mul(v, sc)
                        })
                        .collect();
                    fold(b, 32 * bi + 4 * g, &xs);
                }
            }
        }
        CacheType::F16 => {
            assert!(blocks == (0..d / 32), "an f16 key's dot products are taken whole");
            for g in 0..d / 8 {
                let ov = b.u32(16 * g);
                let at = b.add(base, ov);
                let ty = Type::vector(ScalarType::F16, 8);
                let x = b.load_with(k_lds, at, ty, IndexUnit::Byte, Some(16));
                let xs: Vec<Value> = (0..8)
                    .map(|e| {
                        let h = b.extract(x, e);
                        b.convert(h, Type::F32)
                    })
                    .collect();
                fold(b, 8 * g, &xs[..4]);
                fold(b, 8 * g + 4, &xs[4..]);
            }
        }
    }
    sums
}

/// Copies the cache rows of keys `k0 .. k0 + rows` (contiguous) of `p` to byte `to` of `lds`,
/// lane `l` moving units `l, l + W, ...` of 8 bytes (4 when a row is not a multiple of 8):
/// coalesced, where a lane reading its own key's row would touch `W` rows a load. Units past the
/// cache's end are read clamped (their keys are never seen). The f32 order stages a chunk of
/// `W` K rows into the wave's region of `k_lds`; the i8 order 32 K (and V) rows. With
/// `copy_async` each unit is an async copy (landing by the lane's next `async_wait`).
pub(super) fn stage_rows(
    b: &mut KernelBuilder,
    c: &Ctx,
    (p, lds, to): (Param, LdsSlot, Value),
    k0: Value,
    rows: u32,
    copy_async: bool,
) {
    stage_rows_by(b, c, (p, lds, to), k0, rows, copy_async, (c.lane, c.wave));
}

/// [`stage_rows`] by `lanes` lanes, this one the `index`-th (lane `index` moves units `index,
/// index + lanes, ...`; the last trip only where there is a unit left).
pub(super) fn stage_rows_by(
    b: &mut KernelBuilder,
    c: &Ctx,
    (p, lds, to): (Param, LdsSlot, Value),
    k0: Value,
    rows: u32,
    copy_async: bool,
    by: (Value, u32),
) {
    let (unit, ty) = (stage_unit(c), stage_type(c));
    stage_units(b, c, k0, rows, by, false, |b, at, off| {
        let dst = b.add(to, off);
        if copy_async {
            b.async_copy(lds, dst, p, at, unit);
        } else {
            let x = b.load_with(p, at, ty, IndexUnit::Byte, Some(unit));
            b.store_with(lds, dst, x, IndexUnit::Byte, Some(unit));
        }
    });
}

/// Bytes a lane moves a staging load: 8, or 4 where a row is not a multiple of 8.
fn stage_unit(c: &Ctx) -> u32 {
    if c.cache.row_bytes(c.d).is_multiple_of(8) {
        8
    } else {
        4
    }
}

/// The type of a staging unit: two words, or one.
fn stage_type(c: &Ctx) -> Type {
    if stage_unit(c) == 8 {
        Type::vector(ScalarType::U32, 2)
    } else {
        Type::U32
    }
}

/// Calls `each` with the lane's units of [`stage_rows`] in order: the (clamped) byte address in
/// the cache and the byte offset in the staged rows. A last trip with units for only some lanes
/// runs in those lanes, or with `whole` in every lane (a lane past the units gets a clamped
/// address too).
fn stage_units(
    b: &mut KernelBuilder,
    c: &Ctx,
    k0: Value,
    rows: u32,
    (index, lanes): (Value, u32),
    whole: bool,
    mut each: impl FnMut(&mut KernelBuilder, Value, Value),
) {
    let rb = c.cache.row_bytes(c.d);
    let unit = stage_unit(c);
    let rbv = b.u32(rb);
    let hr = b.mul(c.h, c.ctx_max);
    let row0 = b.add(hr, k0);
    let base = b.mul(row0, rbv);
    let all = b.mul(c.n_kv, c.ctx_max);
    let all = b.mul(all, rbv);
    let uv = b.u32(unit);
    let last = b.sub(all, uv);
    let units = rows * rb / unit;
    for j in 0..units.div_ceil(lanes) {
        let jw = b.u32(j * lanes);
        let u = b.add(jw, index);
        let off = b.mul(u, uv);
        let at = b.add(base, off);
        let at = b.min(at, last);
        if whole || (j + 1) * lanes <= units {
            each(b, at, off);
        } else {
            let uv = b.u32(units);
            let some = b.lt(u, uv);
            b.if_then(some, |b| each(b, at, off));
        }
    }
}

/// The loads of [`stage_rows`] (every address in the cache: any `k0` is safe), not yet stored.
fn stage_loads(b: &mut KernelBuilder, c: &Ctx, p: Param, k0: Value, rows: u32) -> Vec<Value> {
    stage_loads_by(b, c, p, k0, rows, (c.lane, c.wave))
}

/// [`stage_loads`] by `lanes` lanes, this one the `index`-th ([`stage_rows_by`]'s units): a
/// last trip with units for only some lanes loads a clamped unit in the others (stored by none).
pub(super) fn stage_loads_by(
    b: &mut KernelBuilder,
    c: &Ctx,
    p: Param,
    k0: Value,
    rows: u32,
    (index, lanes): (Value, u32),
) -> Vec<Value> {
    let (unit, ty) = (stage_unit(c), stage_type(c));
    let mut loaded = vec![];
    stage_units(b, c, k0, rows, (index, lanes), true, |b, at, _| {
        loaded.push(b.load_with(p, at, ty, IndexUnit::Byte, Some(unit)));
    });
    loaded
}

/// The stores of [`stage_rows`]: [`stage_loads`]' values to byte `to` of `lds`. The offsets are
/// rebuilt here rather than kept from the loads: kept, they live across q's loads, and the PTX
/// the H200 timed is the one with them rebuilt.
fn stage_stores(b: &mut KernelBuilder, c: &Ctx, (lds, to): (LdsSlot, Value), loaded: &[Value]) {
    stage_stores_by(b, c, (lds, to), loaded, c.wave, (c.lane, c.wave));
}

/// [`stage_stores`] of [`stage_loads_by`]'s values for `rows` rows (the units past them not
/// stored).
pub(super) fn stage_stores_by(
    b: &mut KernelBuilder,
    c: &Ctx,
    (lds, to): (LdsSlot, Value),
    loaded: &[Value],
    rows: u32,
    (index, lanes): (Value, u32),
) {
    let unit = stage_unit(c);
    let units = rows * c.cache.row_bytes(c.d) / unit;
    let uv = b.u32(unit);
    let lo = b.mul(index, uv);
    for (j, &x) in loaded.iter().enumerate() {
        let j = j as u32;
        let off = b.u32(j * lanes * unit);
        let off = b.add(off, lo);
        let dst = b.add(to, off);
        if (j + 1) * lanes <= units {
            b.store_with(lds, dst, x, IndexUnit::Byte, Some(unit));
        } else {
            let jl = b.u32(j * lanes);
            let u = b.add(jl, index);
            let n = b.u32(units);
            let some = b.lt(u, n);
            b.if_then(some, |b| b.store_with(lds, dst, x, IndexUnit::Byte, Some(unit)));
        }
    }
}

/// A split's first chunk, loaded before the rows' q (so that the two loads' latencies overlap
/// instead of following each other: q's loads end in a barrier before the scan's staging): the
/// K units of its staging, not yet stored, and the chunk's V rows' raw loads. Every address is
/// clamped into the caches, so a wave without a split loads harmlessly (and stores nothing).
pub(super) struct First {
    k: Vec<Value>,
    v: Vec<Vec<Value>>,
}

/// Lanes of the workgroups that load their first chunk early ([`first_loads`]).
const FIRST_THREADS: u32 = 256;

/// [`First`] for the split `split` builds the index of, where it was measured faster: on
/// NVIDIA, a Q8_0 cache whose chunk's V rows are preloaded (wave 32, up to 4 rows), 256 lanes
/// (`short`, `short_r1`, `r4t256`), K staged by plain loads; else `None` (and `split` is not
/// called). On the H200 (bench/results/bias-h200-2026-12-04.md, calls 2 and 3) `r4t256` at 4K
/// keys and one row went from 13.2 to 12.3 us (32K: the same) and SmolLM2's step at ~173
/// positions (`short_r1`) from 476 to 466 us, while the 128-lane variants and the f16 cache lost:
/// `r8` 305 -> 323 us at 32K keys and 8 rows, f16 `r4` 16.0 -> 17.0 us at 4K, and `r1` in
/// SmolLM2's step at ~2013 positions 601 -> 622 us (the node alone 7.43 -> 7.27 us: not
/// explained). The split across waves has its own ([`super::across::first_loads`]).
pub(super) fn first_loads(
    b: &mut KernelBuilder,
    c: &Ctx,
    split: impl FnOnce(&mut KernelBuilder) -> Value,
    rows: usize,
) -> Option<First> {
    let measured =
        c.nvidia && c.cache == CacheType::Q8_0 && preloads(c, rows) && c.threads == FIRST_THREADS;
    if !measured || c.k_second.is_some() || c.across.is_some() {
        return None;
    }
    let s = split(b);
    let c0 = b.mul(s, c.cps);
    let wv = b.u32(c.wave);
    let k0 = b.mul(c0, wv);
    let k = stage_loads(b, c, c.k_cache, k0, c.wave);
    let one = b.u32(1);
    let last = b.sub(c.kv_len, one);
    let v = v_loads(b, c, k0, last);
    Some(First { k, v })
}

/// Whether a chunk's V rows are loaded before its scores (wave 32, up to 4 rows).
fn preloads(c: &Ctx, rows: usize) -> bool {
    c.wave <= PRELOAD_WAVE && rows <= PRELOAD_ROWS
}

/// The raw loads of the V rows of keys `k0 .. k0 + W` ([`load_row_raw`]'s values a key). With a
/// Q8_0 cache, where the chunk is inside the context (every chunk but a split's last), from
/// 64-bit indices and constant offsets ([`v_rows_inside`]); else [`v_loads_clamped`].
pub(super) fn v_loads(b: &mut KernelBuilder, c: &Ctx, k0: Value, last: Value) -> Vec<Vec<Value>> {
    if c.cache != CacheType::Q8_0 {
        return v_loads_clamped(b, c, k0, last);
    }
    let inside = chunk_inside(b, c, k0, last);
    let flat = b.if_else(
        inside,
        |b| v_rows_inside(b, c, k0).concat(),
        |b| v_loads_clamped(b, c, k0, last).concat(),
    );
    flat.chunks(2).map(<[Value]>::to_vec).collect()
}

/// The raw loads of the V rows of keys `k0 .. k0 + W` (a key past the context reads the last
/// row; its p is 0).
pub(super) fn v_loads_clamped(
    b: &mut KernelBuilder,
    c: &Ctx,
    k0: Value,
    last: Value,
) -> Vec<Vec<Value>> {
    (0..c.wave)
        .map(|j| {
            let jj = b.u32(j);
            let kj = b.add(k0, jj);
            let kj = b.min(kj, last);
            load_row_raw(b, c, c.v_cache, kj)
        })
        .collect()
}

/// [`load_row_raw`]'s values (the scale bits, `u16`; the lane's `dpl` quants, `u8` / `u16` /
/// `u32`) of the Q8_0 V rows of keys `k0 .. k0 + W`, every one inside the context: the aligned
/// words around them, from 64-bit indices plus constant offsets (a row is a multiple of 4
/// bytes, so a key's words are the first key's plus `j` rows: one load instruction each on
/// NVIDIA, where a 32-bit index costs an address computation a load), shifted into place. Four
/// quants may straddle two words; the second is the word at `qa` rounded up, the first again
/// where `qa` is aligned (never past the row). The loads are of other types than
/// [`v_loads_clamped`]'s, so LLVM does not merge the two paths' loads behind phis of addresses.
fn v_rows_inside(b: &mut KernelBuilder, c: &Ctx, k0: Value) -> Vec<Vec<Value>> {
    let (rb, sa, o) = v_lane_block_at(b, c, k0);
    let (sw, ssh) = aligned_word(b, sa);
    let qa = quant_byte(b, sa, o);
    let (qw, qsh) = aligned_word(b, qa);
    let qw1 = (c.dpl == 4).then(|| {
        let three = b.u32(3);
        let up = b.add(qa, three);
        aligned_word(b, up).0
    });
    let load = |b: &mut KernelBuilder, at: Value, j: u32| {
        let off = b.u64(u64::from(j * rb));
        let aj = b.add(at, off);
        b.load_with(c.v_cache, aj, ScalarType::U32, IndexUnit::Byte, Some(4))
    };
    (0..c.wave)
        .map(|j| {
            let s = load(b, sw, j);
            let s = b.shr(s, ssh);
            let sc = b.convert(s, Type::scalar(ScalarType::U16));
            let w0 = load(b, qw, j);
            let q = match qw1 {
                // `(w1 w0) >> qsh` of the two words as one 64-bit value.
                Some(qw1) => {
                    let w1 = load(b, qw1, j);
                    let lo = b.convert(w0, Type::U64);
                    let hi = b.convert(w1, Type::U64);
                    let c32 = b.u64(32);
                    let hi = b.shl(hi, c32);
                    let both = b.or(hi, lo);
                    let sh = b.convert(qsh, Type::U64);
                    let q = b.shr(both, sh);
                    b.convert(q, Type::U32)
                }
                None => {
                    let q = b.shr(w0, qsh);
                    let ty = if c.dpl == 2 { ScalarType::U16 } else { ScalarType::U8 };
                    b.convert(q, Type::scalar(ty))
                }
            };
            vec![sc, q]
        })
        .collect()
}

/// Whether keys `k0 .. k0 + W` are all inside the context (`last`: its last key).
pub(super) fn chunk_inside(b: &mut KernelBuilder, c: &Ctx, k0: Value, last: Value) -> Value {
    let wm1 = b.u32(c.wave - 1);
    let end = b.add(k0, wm1);
    b.le(end, last)
}

/// Where the lane's block starts in key `k0`'s V row (Q8_0): `(row bytes, the block's byte in
/// the cache, the lane's first quant's index in the block)`. Key `k0 + j`'s is `row bytes * j`
/// further on.
pub(super) fn v_lane_block_at(b: &mut KernelBuilder, c: &Ctx, k0: Value) -> (u32, Value, Value) {
    let rb = c.cache.row_bytes(c.d);
    let hr = b.mul(c.h, c.ctx_max);
    let r0 = b.add(hr, k0);
    let rbv = b.u32(rb);
    let base = b.mul(r0, rbv);
    let (boff, o) = lane_block(b, c);
    (rb, b.add(base, boff), o)
}

/// The byte of quant `o` of the Q8_0 block at byte `block` (past its 2-byte scale).
pub(super) fn quant_byte(b: &mut KernelBuilder, block: Value, o: Value) -> Value {
    let two = b.u32(2);
    let at = b.add(block, two);
    b.add(at, o)
}

/// The aligned 32-bit word at or below byte `at` (u32), as a 64-bit byte index, and `at`'s bit
/// offset in it.
pub(super) fn aligned_word(b: &mut KernelBuilder, at: Value) -> (Value, Value) {
    let three = b.u32(3);
    let sub = b.and(at, three);
    let w = b.sub(at, sub);
    (b.convert(w, Type::U64), b.shl(sub, three))
}

/// Split `s`'s states of the rows (step 2): `m[R]`, `l[R]`, `acc[R][dpl]`. `active`
/// (wave-uniform): the wave has a split. Every wave of the workgroup runs `cps` steps (the
/// staging's barriers), computing only on its split's chunks.
pub(super) fn scan(
    b: &mut KernelBuilder,
    c: &Ctx,
    rows: &[Row],
    s: Value,
    active: Value,
    first: Option<&First>,
) -> Vec<Value> {
    let n = rows.len();
    let dpl = c.dpl as usize;
    let mut init = vec![b.f32(f32::NEG_INFINITY); n];
    init.extend((0..n + n * dpl).map(|_| b.f32(0.0)));
    let c0 = b.mul(s, c.cps);
    let (zero, one) = (b.u32(0), b.u32(1));
    let wv = b.u32(c.wave);
    // Chunk `i` of the split: whether this wave computes it, and its first key.
    let chunk_of = |b: &mut KernelBuilder, i: Value| {
        let chunk = b.add(c0, i);
        let inside = b.lt(chunk, c.n_chunks);
        let go = b.and(active, inside);
        (go, b.mul(chunk, wv))
    };
    // Where chunk `i` is staged: the wave's region, or with async K chunks buffer `i % 2`.
    let buffer = |b: &mut KernelBuilder, i: Value| match c.k_second {
        Some(second) => {
            let two = b.u32(2);
            let odd = b.rem(i, two);
            let off = b.mul(odd, second);
            b.add(c.region, off)
        }
        None => c.region,
    };
    let st = if c.k_second.is_some() {
        // Chunk `i + 1`'s copies are issued before chunk `i` is waited for, so they are in
        // flight while it computes.
        let stage = |b: &mut KernelBuilder, i: Value| {
            let (go, k0) = chunk_of(b, i);
            let in_split = b.lt(i, c.cps);
            let go = b.and(go, in_split);
            let to = buffer(b, i);
            b.if_then(go, |b| stage_rows(b, c, (c.k_cache, c.k_lds, to), k0, c.wave, true));
        };
        stage(b, zero);
        // Closes chunk 0's group (nothing waits yet).
        b.async_wait(1);
        let st = b.for_range(zero, c.cps, one, 1, &init, |b, i, st| {
            let (go, k0) = chunk_of(b, i);
            // After the last step's barrier: nobody reads the buffer these copies fill.
            let i1 = b.add(i, one);
            stage(b, i1);
            b.async_wait(1);
            b.barrier(BarrierKind::Lds);
            let region = buffer(b, i);
            let next =
                b.if_else(go, |b| chunk_step(b, c, rows, k0, region, st, None), |_| st.to_vec());
            // The next step stages into the buffer this one read.
            b.barrier(BarrierKind::Lds);
            next
        });
        b.async_wait(0);
        st
    } else {
        let step = |b: &mut KernelBuilder, i: Value, st: &[Value], first: Option<&First>| {
            let (go, k0) = chunk_of(b, i);
            let region = buffer(b, i);
            b.if_then(go, |b| match first {
                Some(f) => stage_stores(b, c, (c.k_lds, region), &f.k),
                None => stage_rows(b, c, (c.k_cache, c.k_lds, region), k0, c.wave, false),
            });
            b.barrier(BarrierKind::Lds);
            let v = first.map(|f| f.v.as_slice());
            let next =
                b.if_else(go, |b| chunk_step(b, c, rows, k0, region, st, v), |_| st.to_vec());
            // The next step stages into the same region.
            b.barrier(BarrierKind::Lds);
            next
        };
        match first {
            // Chunk 0 (every split has one) from the loads issued before q's, then the rest.
            Some(f) => {
                let st = step(b, zero, &init, Some(f));
                b.for_range(one, c.cps, one, 1, &st, |b, i, st| step(b, i, st, None))
            }
            None => b.for_range(zero, c.cps, one, 1, &init, |b, i, st| step(b, i, st, None)),
        }
    };
    let mut out = st[..n].to_vec();
    for r in 0..n {
        out.push(b.wave_reduce(ReduceOp::Add, st[n + r]));
    }
    out.extend_from_slice(&st[2 * n..]);
    out
}

/// One chunk (keys `k0 .. k0 + W`, staged) folded into the rows' states (step 2).
fn chunk_step(
    b: &mut KernelBuilder,
    c: &Ctx,
    rows: &[Row],
    k0: Value,
    region: Value,
    st: &[Value],
    v_first: Option<&[Vec<Value>]>,
) -> Vec<Value> {
    let n = rows.len();
    let dpl = c.dpl as usize;
    let key = b.add(k0, c.lane);
    let (zero, one) = (b.u32(0), b.u32(1));
    let last = b.sub(c.kv_len, one);
    // At wave 32 and up to 4 rows the chunk's V rows are loaded first, so they are in flight
    // during the scores (chunk 0's before q's: [`First`]).
    let preload = preloads(c, n);
    let vraw: Vec<Vec<Value>> = match v_first {
        Some(v) => v.to_vec(),
        None if preload => v_loads(b, c, k0, last),
        None => vec![],
    };
    let ds = dots(b, c, n as u32, key, region);
    let ninf = b.f32(f32::NEG_INFINITY);
    let mut next = vec![];
    let mut ps = vec![];
    let mut ls = vec![];
    let mut accs = vec![];
    for (r, rw) in rows.iter().enumerate() {
        let sv = b.mul(ds[r], c.scale);
        let sees = b.le(key, rw.limit);
        let sv = b.select(sees, sv, ninf);
        let mc = b.wave_reduce(ReduceOp::Max, sv);
        let m = st[r];
        let m2 = b.max(m, mc);
        let a = exp_sub(b, m, m2);
        let p = exp_sub(b, sv, m2);
        ls.push(b.fma(st[n + r], a, p));
        next.push(m2);
        ps.push(p);
        for e in 0..dpl {
            accs.push(b.mul(st[2 * n + r * dpl + e], a));
        }
    }
    next.extend(ls);
    // The chunk's keys in order, lanes across dimensions (p_j from lane j; a key past the
    // context has p = 0 and reads the last row).
    let step = |b: &mut KernelBuilder, j: Value, v: &[Value], accs: &mut [Value]| {
        for (r, &p) in ps.iter().enumerate() {
            let pj = b.shuffle_idx(p, j);
            for (e, &ve) in v.iter().enumerate() {
                let i = r * dpl + e;
                accs[i] = b.fma(pj, ve, accs[i]);
            }
        }
    };
    let accs = if preload {
        let mut accs = accs;
        for (j, raw) in vraw.iter().enumerate() {
            let v = dequantize(b, c, raw);
            let jj = b.u32(j as u32);
            step(b, jj, &v, &mut accs);
        }
        accs
    } else {
        // Wave 64 or R8: a loop (the whole chunk's rows in flight spill), with a constant trip
        // count (a loop with a shuffle is only unrolled when no remainder is needed).
        let wv = b.u32(c.wave);
        b.for_range(zero, wv, one, PV_UNROLL_W64, &accs, |b, j, accs| {
            let mut accs = accs.to_vec();
            let kj = b.add(k0, j);
            let kj = b.min(kj, last);
            let v = load_row(b, c, c.v_cache, kj);
            step(b, j, &v, &mut accs);
            accs
        })
    };
    next.extend(accs);
    next
}

/// The lane's `dpl` values of cache row `key` of head `h`, as f32.
fn load_row(b: &mut KernelBuilder, c: &Ctx, p: Param, key: Value) -> Vec<Value> {
    let raw = load_row_raw(b, c, p, key);
    dequantize(b, c, &raw)
}

/// The loads of [`load_row`], not yet converted (Q8_0: the block's scale bits and the lane's
/// quants; f16: the lane's halves), so that a chunk's rows can be in flight together.
pub(super) fn load_row_raw(b: &mut KernelBuilder, c: &Ctx, p: Param, key: Value) -> Vec<Value> {
    let hr = b.mul(c.h, c.ctx_max);
    let r = b.add(hr, key);
    match c.cache {
        CacheType::Q8_0 => {
            let rb = b.u32(c.cache.row_bytes(c.d));
            let base = b.mul(r, rb);
            let (boff, o) = lane_block(b, c);
            let blk = b.add(base, boff);
            let sc = b.load_with(p, blk, ScalarType::U16, IndexUnit::Byte, Some(2));
            let two = b.u32(2);
            let qa = b.add(blk, two);
            let qa = b.add(qa, o);
            let (ty, align) = match c.dpl {
                4 => (ScalarType::U32, 2),
                2 => (ScalarType::U16, 2),
                _ => (ScalarType::U8, 1),
            };
            vec![sc, b.load_with(p, qa, ty, IndexUnit::Byte, Some(align))]
        }
        CacheType::F16 => {
            let dd = b.u32(c.d);
            let at = b.mul(r, dd);
            let at = b.add(at, c.d0);
            if c.dpl == 1 {
                vec![b.load(p, at, Type::F16)]
            } else {
                vec![b.load(p, at, Type::vector(ScalarType::F16, c.dpl as u8))]
            }
        }
    }
}

/// Where the lane's quants (dimensions `d0 ..`) are in a Q8_0 row: the bytes to their block
/// (`34 (d0 / 32)`: its scale, then its quants) and the first one's index in the block's quants
/// (`d0 % 32`).
pub(super) fn lane_block(b: &mut KernelBuilder, c: &Ctx) -> (Value, Value) {
    let c32 = b.u32(32);
    let bi = b.div(c.d0, c32);
    let o = b.rem(c.d0, c32);
    let c34 = b.u32(34);
    (b.mul(bi, c34), o)
}

/// A Q8_0 block's scale bits (`u16`) as f32 (exact).
pub(super) fn scale_f32(b: &mut KernelBuilder, bits: Value) -> Value {
    let sc = b.bitcast(bits, Type::F16);
    b.convert(sc, Type::F32)
}

/// The lane's `dpl` quants of a Q8_0 row ([`load_row_raw`]'s second value) times the block's
/// scale `sc` (f32): `f32(q) * f32(d)`, exact.
fn q8_values(b: &mut KernelBuilder, c: &Ctx, w: Value, sc: Value) -> Vec<Value> {
    let w = if c.dpl == 4 { w } else { b.convert(w, Type::U32) };
    (0..c.dpl)
        .map(|e| {
            let sh = b.u32(8 * e);
            let x = b.shr(w, sh);
            let x = b.convert(x, Type::scalar(ScalarType::U8));
            let x = b.bitcast(x, Type::scalar(ScalarType::I8));
            let x = b.convert(x, Type::F32);
            b.mul(x, sc)
        })
        .collect()
}

/// [`load_row_raw`]'s values as f32 (Q8_0: `f32(q) * f32(d)`, exact).
pub(super) fn dequantize(b: &mut KernelBuilder, c: &Ctx, raw: &[Value]) -> Vec<Value> {
    match c.cache {
        CacheType::Q8_0 => {
            let sc = scale_f32(b, raw[0]);
            q8_values(b, c, raw[1], sc)
        }
        CacheType::F16 => {
            let xs: Vec<Value> = if c.dpl == 1 {
                vec![raw[0]]
            } else {
                (0..c.dpl as u8).map(|e| b.extract(raw[0], e)).collect()
            };
            xs.into_iter().map(|x| b.convert(x, Type::F32)).collect()
        }
    }
}
