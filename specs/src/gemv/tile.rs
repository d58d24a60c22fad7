//! The epilogues of the dense GEMVs whose outputs go through an LDS tile of 32 rows x the
//! pass's tokens: the split Q8_1 quantize ([`Out::Q8`], the gate/up GEMV's) and the decode cache
//! ([`Out::Cache`], the Q/K/V GEMV's K/V append), both walked by wave 0 after a barrier.

use super::dense::Out;
use super::format::QK;
use crate::attention::kv_append::{q8_0_lane, store_q8_0_lane};
use crate::attention::rope::Rope;
use crate::quantize::{ds_word, quant_byte, scale_of};
use kiln_ir::{BarrierKind, KernelBuilder, Param, ScalarType, Type, Value};

/// The cache epilogue's scalars: `pos`, `head_dim`, `ctx_max`, and RoPE's `n_dims` and `base`.
#[derive(Clone, Copy)]
pub(crate) struct CacheAt {
    pub(super) pos: Param,
    pub(super) head_dim: Param,
    pub(super) ctx_max: Param,
    pub(super) n_dims: Param,
    pub(super) base: Param,
}

/// K's rotation for a lane of the cache epilogue's first pass (token 0) of row block `wg`,
/// computed ahead: it reads only scalars, so an early kernel computes it before its
/// grid-dependency wait and the epilogue after the block loop only applies it.
#[derive(Clone, Copy)]
pub(crate) struct FirstAngle {
    /// The row block it is for.
    wg: Value,
    /// The rotation's constants.
    rope: Rope,
    /// The lane's `(sin, cos)` ([`Rope::angle`]).
    sc: (Value, Value),
}

impl FirstAngle {
    /// The values computed ahead, for [`crate::prefetch::hold`] (which keeps them before the
    /// wait: without it LLVM sinks their arithmetic to where they are used).
    pub(super) fn values(&self) -> [Value; 3] {
        [self.sc.0, self.sc.1, self.rope.ln_base]
    }
}

/// [`FirstAngle`] of row block `wg` for this lane: the pair of the lane's row of the tile at
/// the position [`walk_tile`] gives it at token 0 (`pos` plus the lane's token of the pass).
pub(super) fn first_angle(b: &mut KernelBuilder, at: CacheAt, wg: Value) -> FirstAngle {
    let zero = b.u32(0);
    let c32 = b.u32(QK);
    let lane = b.lane();
    let sub = b.div(lane, c32);
    let r = b.rem(lane, c32);
    let (hd, pos) = (b.arg(at.head_dim), b.arg(at.pos));
    let (_, d) = head_dim_of(b, wg, r, hd);
    let p = b.add(pos, sub);
    let (nd, bs) = (b.arg(at.n_dims), b.arg(at.base));
    let rope = Rope::new(b, nd, hd, bs, zero);
    let (i, ..) = rope.pair(b, d);
    let sc = rope.angle(b, i, p);
    FirstAngle { wg, rope, sc }
}

/// Row `r` of row block `wg`'s tile in the cache's rows (`head_dim` a head): its head and its
/// dimension in the head.
fn head_dim_of(b: &mut KernelBuilder, wg: Value, r: Value, hd: Value) -> (Value, Value) {
    let c32 = b.u32(QK);
    let row0 = b.mul(wg, c32);
    let row = b.add(row0, r);
    (b.div(row, hd), b.rem(row, hd))
}

/// One lane's place in a tile epilogue.
#[derive(Clone, Copy)]
pub(super) struct TileLane {
    /// The token (`tok0` plus the token of the pass).
    pub(super) tok: Value,
    /// Whether the lane stores: its token is in the pass (not the idle half of a wave-64 wave)
    /// and below `t`.
    pub(super) stores: Value,
    /// The row of the tile (0..32).
    pub(super) r: Value,
    /// The index of the token's first value in the tile.
    pub(super) base: Value,
    /// The value.
    pub(super) v: Value,
}

/// The frame of the tile epilogues: after an LDS barrier, wave 0 walks the pass's `per`
/// tokens x 32 rows in `lds` (lanes `32i..32i+32` one token, lane `r` row `r`), calling `each`
/// with each lane's [`TileLane`]; then a barrier (the next pass writes the tile again). Every
/// lane of the wave runs `each` (the block's butterflies need them all).
pub(super) fn walk_tile(
    b: &mut KernelBuilder,
    lds: kiln_ir::LdsSlot,
    wave: u32,
    (per, tok0, t): (u32, Value, Value),
    each: impl Fn(&mut KernelBuilder, TileLane),
) {
    walk_tile_on(b, lds, (wave, 1), (per, tok0, t), each)
}

/// [`walk_tile`] with the tokens dealt to `waves` waves (step `i` of the walk on wave
/// `i mod waves`) instead of wave 0 alone.
pub(super) fn walk_tile_on(
    b: &mut KernelBuilder,
    lds: kiln_ir::LdsSlot,
    (wave, waves): (u32, u32),
    (per, tok0, t): (u32, Value, Value),
    each: impl Fn(&mut KernelBuilder, TileLane),
) {
    b.barrier(BarrierKind::Lds);
    let wave_id = b.wave();
    let halves = wave / QK;
    let walk = |b: &mut KernelBuilder, only: Option<Value>| {
        let lane = b.lane();
        let c32 = b.u32(QK);
        let sub = b.div(lane, c32);
        let r = b.rem(lane, c32);
        for (i, j0) in (0..per).step_by(halves as usize).enumerate() {
            let one_step = |b: &mut KernelBuilder| {
                let j0v = b.u32(j0);
                let j = b.add(j0v, sub);
                let last = b.u32(per - 1);
                let jc = b.min(j, last);
                let base = b.mul(jc, c32);
                let i = b.add(base, r);
                let v = b.load(lds, i, Type::F32);
                let tok = b.add(tok0, j);
                let perv = b.u32(per);
                let in_pass = b.lt(j, perv);
                let in_t = b.lt(tok, t);
                let stores = b.and(in_pass, in_t);
                each(b, TileLane { tok, stores, r, base, v });
            };
            match only {
                None => one_step(b),
                Some(wave_id) => {
                    let mine = b.u32(i as u32 % waves);
                    let mine = b.eq(wave_id, mine);
                    b.if_then(mine, one_step);
                }
            }
        }
    };
    // One step (a pass of one token, or two at wave 64): wave 0, as without spreading.
    if waves == 1 || per <= halves {
        let zero = b.u32(0);
        let first = b.eq(wave_id, zero);
        b.if_then(first, |b| walk(b, None));
    } else {
        walk(b, Some(wave_id));
    }
    b.barrier(BarrierKind::Lds);
}

/// The epilogue of a pass whose outputs went to an LDS tile: the quantize ([`Out::Q8`]) or the
/// cache ([`Out::Cache`]); nothing for f32 outputs.
#[allow(clippy::too_many_arguments)]
pub(super) fn quantize_pass(
    b: &mut KernelBuilder,
    out: Out,
    (wave, waves): (u32, u32),
    per: u32,
    n: Value,
    t: Value,
    tok0: Value,
    wg: Value,
) {
    match out {
        Out::F32(_) => {}
        Out::Q8 { q, s, lds } => q8_pass(b, (q, s, lds), wave, per, n, t, tok0, wg),
        Out::Cache { .. } => cache_pass(b, out, wave, per, t, tok0, wg),
        Out::Squares { norm, lds, .. } => {
            super::split_norm::squares_pass(b, (norm, lds), (wave, waves), per, (n, t, tok0), wg)
        }
    }
}

/// The quantizing epilogue of a pass: the pass's tokens x 32 rows in LDS become Q8_1 blocks,
/// with `quantize_q8_1s_f32`'s arithmetic.
#[allow(clippy::too_many_arguments)]
fn q8_pass(
    b: &mut KernelBuilder,
    (q, s, lds): (Param, Param, kiln_ir::LdsSlot),
    wave: u32,
    per: u32,
    n: Value,
    t: Value,
    tok0: Value,
    wg: Value,
) {
    walk_tile(b, lds, wave, (per, tok0, t), |b, TileLane { tok, stores, r, v, .. }| {
        let (q8, ds) = q8_lane(b, v);
        b.if_then(stores, |b| store_q8_lane(b, (q, s), (n, tok, wg, r), (q8, ds)));
    });
}

/// Lane `r` of a 32-lane block of `v` (the whole wave runs it: xor butterflies over the block)
/// quantized with `quantize_q8_1s_f32`'s arithmetic: the lane's quant (`u8`) and the block's
/// `d | s << 16` word.
pub(super) fn q8_lane(b: &mut KernelBuilder, v: Value) -> (Value, Value) {
    let mut amax = b.abs(v);
    for o in [16, 8, 4, 2, 1] {
        let other = b.shuffle_xor(amax, o);
        amax = b.max(amax, other);
    }
    let (d, id) = scale_of(b, amax);
    let (byte, q32) = quant_byte(b, v, id, true);
    let mut sum = q32.expect("asked for the signed value");
    for o in [16, 8, 4, 2, 1] {
        let other = b.shuffle_xor(sum, o);
        sum = b.add(sum, other);
    }
    let d16 = b.convert(d, Type::F16);
    let d16 = b.bitcast(d16, Type::scalar(ScalarType::U16));
    let ds = ds_word(b, d, d16, sum);
    (b.convert(byte, Type::scalar(ScalarType::U8)), ds)
}

/// Stores lane `r`'s quant of block `wg` of token `tok` (rows of `n`) into `q`, and its scale
/// word into `s` from lane 0 of the block.
pub(super) fn store_q8_lane(
    b: &mut KernelBuilder,
    (q, s): (Param, Param),
    (n, tok, wg, r): (Value, Value, Value, Value),
    (q8, ds): (Value, Value),
) {
    let zero = b.u32(0);
    let c32 = b.u32(QK);
    let row0 = b.mul(wg, c32);
    let at = b.mul(tok, n);
    let at = b.add(at, row0);
    let at = b.add(at, r);
    b.store(q, at, q8);
    let head = b.eq(r, zero);
    b.if_then(head, |b| {
        let blocks = b.div(n, c32);
        let at = b.mul(tok, blocks);
        let at = b.add(at, wg);
        b.store(s, at, ds);
    });
}

/// The cache epilogue of a pass: the pass's tokens x 32 rows in LDS (one block of a head a
/// token) are rotated, for K, as `kv_append` does (the partner, the other lane of the pair, read
/// from the tile), and stored into the cache with `kv_append_q8_0`'s arithmetic
/// (`q8_0_lane`, `store_q8_0_lane`). Tokens past `t`, and positions past `ctx_max`, are not
/// written.
fn cache_pass(
    b: &mut KernelBuilder,
    out: Out,
    wave: u32,
    per: u32,
    t: Value,
    tok0: Value,
    wg: Value,
) {
    let Out::Cache { cache, lds, rope, at, first } = out else { return };
    walk_tile(b, lds, wave, (per, tok0, t), |b, TileLane { tok, stores, r, base, v: x }| {
        let zero = b.u32(0);
        let c32 = b.u32(QK);
        let hd = b.arg(at.head_dim);
        let ctx = b.arg(at.ctx_max);
        let pos = b.arg(at.pos);
        let (h, d) = head_dim_of(b, wg, r, hd);
        let p = b.add(pos, tok);
        let x = if rope {
            // The normal pairing: (2i, 2i + 1), in the same block.
            let rp = match first {
                Some(f) => f.rope,
                None => {
                    let (nd, bs) = (b.arg(at.n_dims), b.arg(at.base));
                    Rope::new(b, nd, hd, bs, zero)
                }
            };
            let (i, is_first, partner, rotated) = rp.pair(b, d);
            // The partner's lane in the block: `r + partner - d` (`partner` is `d ^ 1` or `d`).
            let pr = b.add(r, partner);
            let pr = b.sub(pr, d);
            let pi = b.add(base, pr);
            let pv = b.load(lds, pi, Type::F32);
            let sc = match first {
                // The angle computed ahead, in the pass and row block it was computed for.
                Some(f) => {
                    let first_pass = b.eq(tok0, zero);
                    let same = b.eq(wg, f.wg);
                    let ahead = b.and(first_pass, same);
                    let v = b.if_else(
                        ahead,
                        |_| vec![f.sc.0, f.sc.1],
                        |b| {
                            let (s, c) = rp.angle(b, i, p);
                            vec![s, c]
                        },
                    );
                    (v[0], v[1])
                }
                None => rp.angle(b, i, p),
            };
            rp.rotate(b, (x, pv), sc, is_first, rotated)
        } else {
            x
        };
        let (d16, byte) = q8_0_lane(b, x);
        let fits = b.lt(p, ctx);
        let ok = b.and(stores, fits);
        b.if_then(ok, |b| {
            // Block (h * ctx_max + p) * head_dim / 32 + d / 32 of the cache.
            let hr = b.mul(h, ctx);
            let drow = b.add(hr, p);
            let nb = b.div(hd, c32);
            let blk = b.mul(drow, nb);
            let bi = b.div(d, c32);
            let blk = b.add(blk, bi);
            store_q8_0_lane(b, cache, blk, r, (d16, byte));
        });
    });
}
