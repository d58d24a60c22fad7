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
            pieces(b, c, c.kb * per_row)
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
            pieces(b, c, c.kb * blocks)
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
            CacheType::Q8_0 => q8_vectors(b, raw),
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
/// halves, `f16(f32(q) * f32(d))`, from [`q8_pairs`].
pub(super) fn q8_halves(b: &mut KernelBuilder, raw: &[Value]) -> Vec<Value> {
    q8_pairs(b, raw).into_iter().flat_map(|p| [b.extract(p, 0), b.extract(p, 1)]).collect()
}

/// The 32 values of a fetched Q8_0 block as four 8-half vectors (for row-major stores), from
/// [`q8_pairs`] without taking the pairs apart.
pub(super) fn q8_vectors(b: &mut KernelBuilder, raw: &[Value]) -> Vec<Value> {
    let words: Vec<Value> = q8_pairs(b, raw).into_iter().map(|p| b.bitcast(p, Type::U32)).collect();
    let h8 = Type::vector(ScalarType::F16, 8);
    words
        .chunks(4)
        .map(|four| {
            let v = b.make_vector(four);
            b.bitcast(v, h8)
        })
        .collect()
}

/// The 32 values of a fetched Q8_0 block as 16 `f16x2` pairs (values `2i`, `2i + 1`), each
/// `f16(f32(q) * f32(d))`, with no conversion instruction (since 2026-12-04; until then each
/// value was converted to f32, multiplied and converted back: the same bits, 2% slower at
/// L = 2048 on the H200, bench/results/magic-h200-2026-12-04.md). A quant byte `q` XOR `0x80`
/// is `q + 128` (`0..=255`), which in the low byte of `0x64__` is the half `1024 + q + 128`;
/// minus 1152 that is `q` exactly, and `q * d` in f16 is the correctly rounded product, as
/// `f16(f32(q) * f32(d))` is (the f32 product of an 8-bit and an 11-bit significand is exact,
/// so both round the same real number once).
pub(super) fn q8_pairs(b: &mut KernelBuilder, raw: &[Value]) -> Vec<Value> {
    let h2 = Type::vector(ScalarType::F16, 2);
    let sc = b.bitcast(raw[0], Type::F16);
    let dd = b.make_vector(&[sc, sc]);
    let magic = b.u32(0x6464_6464);
    let flip = b.u32(0x8080_8080);
    let bias = b.f16(1152.0);
    let bias = b.make_vector(&[bias, bias]);
    let mut pairs = Vec::with_capacity(16);
    for &w in &raw[1..] {
        let x = b.xor(w, flip);
        for sel in [[0, 4, 1, 5], [2, 6, 3, 7]] {
            let p = b.perm(x, magic, sel);
            let p = b.bitcast(p, h2);
            let q = b.sub(p, bias);
            pairs.push(b.mul(q, dd));
        }
    }
    pairs
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
            let n = b.u32(c.kb * per_row);
            let pr = b.u32(per_row);
            let dd = b.u32(c.d);
            b.for_range(c.lane, n, wv, (c.kb * per_row / c.wave).max(1), &[], |b, idx, _| {
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
            let n = b.u32(c.kb * blocks);
            let bv = b.u32(blocks);
            let dd = b.u32(c.d);
            let rb = b.u32(c.cache.row_bytes(c.d));
            b.for_range(c.lane, n, wv, (c.kb * blocks / c.wave).max(1), &[], |b, idx, _| {
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
                for (j, v) in q8_vectors(b, &raw).into_iter().enumerate() {
                    let o = b.u32(8 * j as u32);
                    let at = b.add(to, o);
                    b.store(dst, at, v);
                }
                vec![]
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::{over_lanes, run, u32s};
    use kiln_ir::{Access, ShapeExpr};

    /// [`q8_pairs`] on the interpreter gives `f16(f32(q) * f32(d))` for every quant byte
    /// (-128 included) with every f16 scale pattern (subnormals, infinities, NaNs: any NaN for
    /// a NaN), which is what the conversions it replaced computed.
    #[test]
    fn the_pairs_are_the_converted_products_for_every_byte_and_scale() {
        let mut b = KernelBuilder::new("q8_pairs_probe", 32);
        let n = b.scalar_param("n", ScalarType::U32);
        let d = b.buffer("d", ScalarType::U32, Access::Read);
        let y = b.buffer("y", ScalarType::U32, Access::Write);
        b.set_buffer_len(d, ShapeExpr::scaled(&[n], 1, 1));
        b.set_buffer_len(y, ShapeExpr::scaled(&[n], 128, 1));
        over_lanes(&mut b, n, |b, i| {
            let sc = b.load(d, i, ScalarType::U32);
            let sc = b.convert(sc, ScalarType::U16);
            // The 256 bytes in order, 32 a block: 8 blocks of 8 words.
            for blk in 0..8u32 {
                let mut raw = vec![sc];
                for w in 0..8u32 {
                    let x = (0..4).fold(0u32, |a, e| a | (blk * 32 + w * 4 + e) << (8 * e));
                    raw.push(b.u32(x));
                }
                for (j, p) in q8_pairs(b, &raw).into_iter().enumerate() {
                    let bits = b.bitcast(p, Type::U32);
                    let c128 = b.u32(128);
                    let at = b.mul(i, c128);
                    let o = b.u32(blk * 16 + j as u32);
                    let at = b.add(at, o);
                    b.store(y, at, bits);
                }
            }
        });
        let k = b.finish();
        let ds: Vec<u32> = (0..=u16::MAX as u32).collect();
        let bytes = ds.iter().flat_map(|x| x.to_le_bytes()).collect();
        let out = run(&k, &[("d".into(), ScalarType::U32, bytes)], &[u32s("n", ds.len() as u32)]);
        for (di, words) in out["y"].chunks(512).enumerate() {
            let d = half::f16::from_bits(di as u16).to_f32();
            for (j, h) in words.chunks(2).enumerate() {
                let q = j as u8 as i8;
                let got = half::f16::from_bits(u16::from_le_bytes([h[0], h[1]]));
                let want = half::f16::from_f32(f32::from(q) * d);
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "q {q} d {d:e} ({di:#06x}): {got} against {want}"
                );
            }
        }
    }
}
