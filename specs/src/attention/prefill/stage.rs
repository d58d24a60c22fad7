//! Staging a block of K or V rows into LDS as f16: wide loads (f16 rows 16 bytes a lane, a Q8_0
//! block a lane), carried in registers when the pipe variant holds the next block.

// The kernel builder's context (`Ctx`) and the IR types, as the parent module has them.
use super::*;

/// A block's K or V rows in flight: the lane's raw loads (f16: 8-half vectors; Q8_0: per block,
/// its scale bits and 8 words of quants), with where they go in the staging buffer and whether
/// the lane has that piece (`n` pieces over the wave).
pub(super) struct Fetched {
    pieces: Vec<(Value, Value, Vec<Value>)>,
}

/// The lane's pieces of a block: piece `lane + j W` of `n` (clamped for loads; `valid` says
/// whether it exists).
fn pieces(b: &mut KernelBuilder, c: &Ctx, n: u32) -> Vec<(Value, Value)> {
    (0..n.div_ceil(c.wave))
        .map(|j| {
            let jw = b.u32(j * c.wave);
            let idx = b.add(c.lane, jw);
            let nv = b.u32(n);
            let valid = b.lt(idx, nv);
            let last = b.u32(n - 1);
            (b.min(idx, last), valid)
        })
        .collect()
}

/// Issues the global loads of keys `k0 .. k0 + 16` (clamped to the last key) of cache `p`:
/// f16 rows by 16-byte loads (8 halves a piece), Q8_0 a 34-byte block a piece (its scale, its
/// quants by 4-byte loads of 2-byte alignment). [`put`] converts and stores them.
pub(super) fn fetch(b: &mut KernelBuilder, c: &Ctx, p: Param, k0: Value) -> Fetched {
    let hr = b.mul(c.h, c.ctx_max);
    let row_of_key = |b: &mut KernelBuilder, key: Value| {
        let key = b.add(k0, key);
        let key = b.min(key, c.last_key);
        b.add(hr, key)
    };
    let dd = b.u32(c.d);
    let pieces = match c.cache {
        CacheType::F16 => {
            let per_row = c.d / 8;
            let pr = b.u32(per_row);
            pieces(b, c, KEY_BLOCK * per_row)
                .into_iter()
                .map(|(idx, valid)| {
                    let key = b.div(idx, pr);
                    let ch = b.rem(idx, pr);
                    let r = row_of_key(b, key);
                    let at = b.mul(r, dd);
                    let c8 = b.u32(8);
                    let off = b.mul(ch, c8);
                    let at = b.add(at, off);
                    let x = b.load(p, at, Type::vector(ScalarType::F16, 8));
                    let to = b.mul(key, dd);
                    let to = b.add(to, off);
                    (to, valid, vec![x])
                })
                .collect()
        }
        CacheType::Q8_0 => {
            let blocks = c.d / 32;
            let bv = b.u32(blocks);
            let rb = b.u32(c.cache.row_bytes(c.d));
            pieces(b, c, KEY_BLOCK * blocks)
                .into_iter()
                .map(|(idx, valid)| {
                    let key = b.div(idx, bv);
                    let bi = b.rem(idx, bv);
                    let r = row_of_key(b, key);
                    let base = b.mul(r, rb);
                    let c34 = b.u32(34);
                    let boff = b.mul(bi, c34);
                    let blk = b.add(base, boff);
                    let raw = q8_block(b, p, blk);
                    let to = b.mul(key, dd);
                    let c32 = b.u32(32);
                    let doff = b.mul(bi, c32);
                    (b.add(to, doff), valid, raw)
                })
                .collect()
        }
    };
    Fetched { pieces }
}

/// Stores a fetched block into `dst` (`[key][D]` f16): f16 vectors as they are; Q8_0 values as
/// `f16(f32(q) * f32(d))`, four 8-half vectors a block.
pub(super) fn put(b: &mut KernelBuilder, c: &Ctx, f: &Fetched, dst: LdsSlot) {
    for (to, valid, raw) in &f.pieces {
        let halves: Vec<Value> = match c.cache {
            CacheType::F16 => raw.clone(),
            CacheType::Q8_0 => {
                let hs = q8_halves(b, raw);
                hs.chunks(8).map(|eight| b.make_vector(eight)).collect()
            }
        };
        let to = *to;
        b.if_then(*valid, |b| {
            for (j, &v) in halves.iter().enumerate() {
                let o = b.u32(8 * j as u32);
                let at = b.add(to, o);
                b.store(dst, at, v);
            }
        });
    }
}

/// The loads of the Q8_0 block at byte `blk` of `p`: its scale bits (`u16`), then its 32
/// quants as 8 words (4-byte loads of 2-byte alignment).
pub(super) fn q8_block(b: &mut KernelBuilder, p: Param, blk: Value) -> Vec<Value> {
    let mut raw = vec![b.load_with(p, blk, ScalarType::U16, IndexUnit::Byte, Some(2))];
    for w in 0..8u32 {
        let o = b.u32(2 + 4 * w);
        let at = b.add(blk, o);
        raw.push(b.load_with(p, at, ScalarType::U32, IndexUnit::Byte, Some(2)));
    }
    raw
}

/// The 32 values of a fetched Q8_0 block (`raw`: its scale bits, then 8 words of quants) as
/// halves, `f16(f32(q) * f32(d))`.
pub(super) fn q8_halves(b: &mut KernelBuilder, raw: &[Value]) -> Vec<Value> {
    let sc = b.bitcast(raw[0], Type::F16);
    let sc = b.convert(sc, Type::F32);
    let mut hs = Vec::with_capacity(32);
    for &w in &raw[1..] {
        let v = b.bitcast(w, Type::vector(ScalarType::I8, 4));
        for e in 0..4u8 {
            let q = b.extract(v, e);
            let q = b.convert(q, Type::F32);
            let q = b.mul(q, sc);
            hs.push(b.convert(q, Type::F16));
        }
    }
    hs
}

/// Values a [`Fetched`] carries through a loop.
pub(super) fn fetched_values(f: &Fetched) -> Vec<Value> {
    carried(f.pieces.iter().map(|(to, valid, raw)| ([*to, *valid], raw.as_slice())))
}

/// A [`Fetched`] of `like`'s shape from carried values.
pub(super) fn fetched_from(like: &Fetched, vals: &[Value]) -> Fetched {
    let lens = like.pieces.iter().map(|(_, _, raw)| raw.len());
    let pieces = uncarried(lens, vals).map(|([to, valid], raw)| (to, valid, raw)).collect();
    Fetched { pieces }
}

/// Pieces of loads in flight as the values a loop carries: each piece's `N` head values, then
/// its raw loads.
pub(super) fn carried<'a, const N: usize>(
    pieces: impl Iterator<Item = ([Value; N], &'a [Value])>,
) -> Vec<Value> {
    pieces.flat_map(|(head, raw)| head.into_iter().chain(raw.iter().copied())).collect()
}

/// The pieces [`carried`] flattened, back from `vals`, given each piece's number of raw loads.
pub(super) fn uncarried<'a, const N: usize>(
    raw_lens: impl Iterator<Item = usize> + 'a,
    vals: &'a [Value],
) -> impl Iterator<Item = ([Value; N], Vec<Value>)> + 'a {
    let mut at = 0;
    raw_lens.map(move |n| {
        let head: [Value; N] = std::array::from_fn(|i| vals[at + i]);
        let raw = vals[at + N..at + N + n].to_vec();
        at += N + n;
        (head, raw)
    })
}

/// Stages the f16 values of keys `k0 .. k0 + 16` (clamped to the last key) of cache `p` into
/// `dst` (`[key][D]`) in one go (the unpipelined variants; `pipe` splits it into [`fetch`] and
/// [`put`]): f16 rows by 16-byte loads (8 halves a lane a step), Q8_0 by a block a lane
/// a step (its scale, then its 32 quants by 4-byte loads of 2-byte alignment, each value
/// `f16(f32(q) * f32(d))`, stored as four 8-half vectors).
pub(super) fn stage(b: &mut KernelBuilder, c: &Ctx, p: Param, dst: LdsSlot, k0: Value) {
    let wv = b.u32(c.wave);
    let hr = b.mul(c.h, c.ctx_max);
    let row_of_key = |b: &mut KernelBuilder, key: Value| {
        let key = b.add(k0, key);
        let key = b.min(key, c.last_key);
        b.add(hr, key)
    };
    match c.cache {
        CacheType::F16 => {
            let per_row = c.d / 8;
            let n = b.u32(KEY_BLOCK * per_row);
            let pr = b.u32(per_row);
            let dd = b.u32(c.d);
            b.for_range(c.lane, n, wv, (KEY_BLOCK * per_row / c.wave).max(1), &[], |b, idx, _| {
                let key = b.div(idx, pr);
                let ch = b.rem(idx, pr);
                let r = row_of_key(b, key);
                let at = b.mul(r, dd);
                let c8 = b.u32(8);
                let off = b.mul(ch, c8);
                let at = b.add(at, off);
                let x = b.load(p, at, Type::vector(ScalarType::F16, 8));
                let to = b.mul(key, dd);
                let to = b.add(to, off);
                b.store(dst, to, x);
                vec![]
            });
        }
        CacheType::Q8_0 => {
            let blocks = c.d / 32;
            let n = b.u32(KEY_BLOCK * blocks);
            let bv = b.u32(blocks);
            let dd = b.u32(c.d);
            let rb = b.u32(c.cache.row_bytes(c.d));
            b.for_range(c.lane, n, wv, (KEY_BLOCK * blocks / c.wave).max(1), &[], |b, idx, _| {
                let key = b.div(idx, bv);
                let bi = b.rem(idx, bv);
                let r = row_of_key(b, key);
                let base = b.mul(r, rb);
                let c34 = b.u32(34);
                let boff = b.mul(bi, c34);
                let blk = b.add(base, boff);
                let raw = q8_block(b, p, blk);
                let to = b.mul(key, dd);
                let c32 = b.u32(32);
                let doff = b.mul(bi, c32);
                let to = b.add(to, doff);
                let halves = q8_halves(b, &raw);
                for (j, eight) in halves.chunks(8).enumerate() {
                    let v = b.make_vector(eight);
                    let o = b.u32(8 * j as u32);
                    let at = b.add(to, o);
                    b.store(dst, at, v);
                }
                vec![]
            });
        }
    }
}
