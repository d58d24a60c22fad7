//! The norm prologue of the `gemv_*_norm` families: each workgroup computes, for the tokens of
//! its pass, the RMSNorm of the f32 rows `x` (gain `weight`, `eps`) and its split Q8_1 quantize
//! into LDS, and the GEMV's pass reads its activation blocks from there. It stands in for a
//! `rmsnorm_q8_1s_f32` launch whose output only the next GEMV reads: a decode step of a small
//! model is bound by launches (every node costs at least ~1.2 us on the H200, the norm 2.2 us),
//! while a row of SmolLM2 (576 values, 2.3 KB) is cheap to read again from L2 in every workgroup.
//!
//! The result is bit for bit `rmsnorm_q8_1s_f32` followed by the unfused GEMV. The norm's sum of
//! squares has the order of its [`BLOCK`]-lane workgroup (see `rmsnorm.rs`): lane `l` adds the
//! squares of the vectors `l, l + BLOCK, ...` in order, each wave of `W` lanes sums its lanes
//! with `wave_reduce(add)`, and `tree_sum` adds the `BLOCK / W` wave sums. The prologue runs
//! those virtual lanes on fewer: a virtual wave (its `W` lanes, the same values in the same
//! lanes) is run by one wave of this workgroup, whose `wave_reduce` is the same butterfly, and
//! the wave sums go through LDS to the same `tree_sum`. A virtual wave with no vector of the row
//! sums `+0.0` squares, so its sum is `+0.0`: the prologue puts `+0.0` in its place without
//! running it (phase 1 writes that). Then the norm's own builders: `inverse_rms`, `scale` and the quantize family's
//! `quantize_values` (eight lanes of four values a block, as the norm's).
//!
//! Phases, each closed by an LDS barrier:
//! 1. sums of squares: the pass's (token, virtual wave) pairs dealt to the waves;
//! 2. `r = 1 / sqrt(mean + eps)`: lane `j` for token `j` of the pass;
//! 3. quantize: the pass's (token, vector) pairs dealt to the lanes (eight consecutive lanes one
//!    block), quants and scale words to LDS in the split layout of one pass.
//!
//! Tokens of the last pass past `t` are the last token again (what the unfused GEMV loads for
//! them: its token index is clamped the same way), so every LDS word the GEMV reads is written.
//! The LDS is static: rows of at most [`NORM_MAX_K`] values (`k` is checked at launch).
//!
//! The same phases ([`RowNorm`]) also write to global memory ([`Blocks::Global`]): the
//! `_res_rmsnorm` epilogue ([`super::res_norm`]) normalizes the rows of its own `y` there.

use super::format::{Acts, QK};
use crate::common::{lds_read_all, tree_sum};
use crate::quantize::{ds_word, pack_word, quantize_values, Quantized};
use crate::rmsnorm::{inverse_rms, load_vector_aligned, load_weights, scale, sum_squares, BLOCK};
use kiln_ir::{
    Access, BarrierKind, KernelBuilder, LdsSlot, MemRef, Param, ReduceOp, ScalarRule, ScalarType,
    ShapeExpr, Type, Value,
};

/// Longest row the prologue takes (the LDS holds a pass's tokens of this many values): Llama 3
/// 8B's hidden size. A pass of 8 tokens then holds 36 KB of LDS.
pub const NORM_MAX_K: u32 = 4096;

/// The archs the `_norm` families are built for: every arch but the wave-64 GCN / CDNA ones
/// (gfx906, gfx90a, gfx942), where the Q/K/V kernel's three matrices and the prologue need more
/// than their 102 SGPRs (3 to 8 spilled to VGPR lanes; the unfused kernel needs 75) and the
/// gate/up kernel's 512-lane workgroup more than gfx906's 128 VGPRs: the budgets allow no
/// spills. (The example engine asks for the `_norm` kernels, so a gfx9 package refuses it,
/// naming them, until it falls back to `rmsnorm_q8_1s_f32` and the unfused GEMVs there.)
pub fn archs() -> Vec<String> {
    kiln_ir::TARGETS.iter().filter(|t| t.default_wave() == 32).map(|t| t.name.to_string()).collect()
}

/// Values a vector (one 16-byte load of f32).
const VEC: u32 = 4;

/// Where [`RowNorm::run`] puts the quantized blocks.
#[derive(Clone, Copy)]
pub(crate) enum Blocks {
    /// The pass's blocks in LDS (the prologue): quants as `u32` words (eight a block), block
    /// `j * k/32 + b` of token `j` of the pass, and the scale words (`d | s << 16`), one a block.
    /// Tokens past `t` are the last token again.
    Lds {
        /// Quants.
        q: LdsSlot,
        /// Scale words.
        s: LdsSlot,
    },
    /// The split Q8_1 rows of `rmsnorm_q8_1s_f32` in global memory (the `_res_rmsnorm`
    /// epilogue, [`RowNorm::run_row`]): token `tok` at its own row.
    Global {
        /// Quants (`u8`, `t * k`).
        q: Param,
        /// Scale words (`u32`, `t * k / 32`).
        s: Param,
    },
}

/// Loop trips of [`RowNorm::run_row`] whose loads are issued together, before their
/// arithmetic: one memory round trip for that many (a trip's two vectors of `x` in phase 1, its
/// vector of `x` and of `weight` in phase 3: 32 f32 a lane in flight).
const ROW_BATCH: u32 = 4;

/// The norm of `t` f32 rows `x` of `k` values (gain `weight`, `eps`) and its split Q8_1 quantize
/// in `rmsnorm_q8_1s_f32`'s order, on a workgroup of any number of waves, `per` tokens a pass.
#[derive(Clone, Copy)]
pub(crate) struct RowNorm {
    x: Param,
    weight: Param,
    eps: Param,
    /// Tokens a pass.
    per: u32,
    /// The wave sums, `BLOCK / W` a token.
    sums: LdsSlot,
    /// `r` of each token of the pass.
    r: LdsSlot,
}

/// The prologue's parameters and LDS.
#[derive(Clone, Copy)]
pub(crate) struct Norm {
    /// The norm of `x`.
    rows: RowNorm,
    /// The pass's quants ([`Blocks::Lds`]).
    q: LdsSlot,
    /// The pass's scale words.
    s: LdsSlot,
}

impl RowNorm {
    /// The norm of rows `x` (`f32`) with `weight` and `eps`, and its LDS for a pass of `per`
    /// tokens at wave size `wave`. The caller declares the rule `k <=` [`NORM_MAX_K`].
    pub(crate) fn new(
        b: &mut KernelBuilder,
        wave: u32,
        per: u32,
        (x, weight, eps): (Param, Param, Param),
    ) -> RowNorm {
        let sums = b.lds("norm_wave_sums", ScalarType::F32, per * (BLOCK / wave));
        let r = b.lds("norm_r", ScalarType::F32, per);
        RowNorm { x, weight, eps, per, sums, r }
    }

    /// Normalizes and quantizes tokens `tok0 .. tok0 + per` (clamped to `t - 1`) of `x` (rows of
    /// `k`) into `blocks`, in a workgroup of `waves` waves of `wave` lanes. Runs under
    /// workgroup-uniform control (barriers).
    pub(crate) fn run(
        &self,
        b: &mut KernelBuilder,
        (wave, waves): (u32, u32),
        tok0: Value,
        (k, t): (Value, Value),
        blocks: Blocks,
    ) {
        let Frame { lane, wave_id, local, zero, one, fz, nvec, last_vec } = Frame::new(b, k);
        let last_tok = b.sub(t, one);
        let perv = b.u32(self.per);
        // Every token of the pass is worked on (the GEMV reads every token's words).
        let live = perv;
        let Blocks::Lds { q, s } = blocks else {
            unreachable!("global rows are normalized by run_row");
        };
        let vwaves = BLOCK / wave;
        let row_of = |b: &mut KernelBuilder, j: Value| {
            let tok = b.add(tok0, j);
            let tok = b.min(tok, last_tok);
            b.mul(tok, k)
        };

        // 1. The wave sums of the virtual waves that hold a vector of the row:
        // `used = min(ceil(nvec / W), BLOCK / W)` a token.
        let used = ceil_div(b, nvec, wave);
        let vwv = b.u32(vwaves);
        let used = b.min(used, vwv);
        let pairs = b.mul(live, used);
        let trips = ceil_div(b, pairs, waves);
        const _: () = assert!(NORM_MAX_K / VEC <= 2 * BLOCK, "two vectors a virtual lane");
        let blockv = b.u32(BLOCK);
        let second = b.gt(nvec, blockv);
        let wavesv = b.u32(waves);
        let wv = b.u32(wave);
        b.for_range(zero, trips, one, 1, &[], |b, i, _| {
            let p = b.mul(i, wavesv);
            let p = b.add(p, wave_id);
            // The same for every lane of the wave: the wave reduce runs with all of them.
            let live = b.lt(p, pairs);
            b.if_then(live, |b| {
                let j = b.div(p, used);
                let vw = b.rem(p, used);
                let row_base = row_of(b, j);
                let vlane = b.mul(vw, wv);
                let vlane = b.add(vlane, lane);
                // Vector `vlane + m * BLOCK` for m = 0, 1 (k <= 4096: at most two a lane); the
                // second only for rows past BLOCK vectors.
                let add_vector = |b: &mut KernelBuilder, m: u32, acc: Value| {
                    let off = b.u32(m * BLOCK);
                    let v = b.add(vlane, off);
                    let inside = b.lt(v, nvec);
                    let vc = b.min(v, last_vec);
                    let xs = load_vector_aligned(b, (self.x, ScalarType::F32), row_base, vc);
                    let xs: Vec<Value> = xs.into_iter().map(|x| b.select(inside, x, fz)).collect();
                    sum_squares(b, &xs, acc)
                };
                let acc = add_vector(b, 0, fz);
                let acc = b.if_else(second, |b| vec![add_vector(b, 1, acc)], |_| vec![acc])[0];
                let ws = b.wave_reduce(ReduceOp::Add, acc);
                let first = b.eq(lane, zero);
                b.if_then(first, |b| {
                    let at = b.mul(j, vwv);
                    let at = b.add(at, vw);
                    b.store(self.sums, at, ws);
                });
            });
            vec![]
        });
        // The virtual waves not run: their sum, +0.0 (other slots than the ones above).
        let slots = b.u32(self.per * vwaves);
        let lanes = b.u32(waves * wave);
        b.for_range(local, slots, lanes, 1, &[], |b, i, _| {
            let vw = b.rem(i, vwv);
            let idle = b.ge(vw, used);
            b.if_then(idle, |b| b.store(self.sums, i, fz));
            vec![]
        });
        b.barrier(BarrierKind::Lds);

        // 2. r of token j from its BLOCK / W wave sums.
        self.inverse_rms_of(b, wave, live, k);

        // 3. The normalized values of (token, vector) pairs, quantized by blocks of eight lanes.
        // Lanes past the pairs work on the last pair and store nothing (a trip count the same
        // for every lane: the quantize's shuffles need the whole wave).
        let vectors = b.mul(live, nvec);
        let trips = ceil_div(b, vectors, waves * wave);
        let last_pair = b.sub(vectors, one);
        b.for_range(zero, trips, one, 1, &[], |b, i, _| {
            let p = b.mul(i, lanes);
            let p = b.add(p, local);
            let inside = b.lt(p, vectors);
            let pc = b.min(p, last_pair);
            let j = b.div(pc, nvec);
            let v = b.rem(pc, nvec);
            let row_base = row_of(b, j);
            let xs = load_vector_aligned(b, (self.x, ScalarType::F32), row_base, v);
            let ws = load_weights(b, self.weight, v, VEC);
            let r = b.load(self.r, j, Type::F32);
            // Word `pc` of the pass is word `v % 8` of block `pc / 8` (= `j * k/32 + v / 8`).
            quantize_vector(b, (&xs, &ws, r), v, (q.into(), s.into(), pc), inside);
            vec![]
        });
        b.barrier(BarrierKind::Lds);
    }

    /// Phase 2 of a pass of `live` tokens: lane `j` finds token `j`'s `r` from its `BLOCK / W`
    /// wave sums; then a barrier.
    fn inverse_rms_of(&self, b: &mut KernelBuilder, wave: u32, live: Value, k: Value) {
        let local = b.local_id();
        let vwaves = BLOCK / wave;
        let vwv = b.u32(vwaves);
        let mine = b.lt(local, live);
        b.if_then(mine, |b| {
            let base = b.mul(local, vwv);
            let sums = lds_read_all(b, self.sums, base, vwaves, Type::F32);
            let ss = tree_sum(b, &sums);
            let r = inverse_rms(b, ss, k, self.eps);
            b.store(self.r, local, r);
        });
        b.barrier(BarrierKind::Lds);
    }

    /// The three phases of [`RowNorm::run`] for one token `tok` of `x` (rows of `k`) into its
    /// row of `blocks` ([`Blocks::Global`]), in a workgroup of `waves` waves of `wave` lanes,
    /// with the same values in the same (virtual) lanes, so the same bits. A phase's loop trips
    /// are run [`ROW_BATCH`] at a time, every load of a batch issued before its arithmetic (the
    /// tail of a residual GEMV: a few memory round trips instead of one a trip). Runs under
    /// workgroup-uniform control (barriers); needs a [`RowNorm`] of one token a pass.
    pub(crate) fn run_row(
        &self,
        b: &mut KernelBuilder,
        (wave, waves): (u32, u32),
        tok: Value,
        k: Value,
        blocks: Blocks,
    ) {
        assert_eq!(self.per, 1, "run_row normalizes one token a pass");
        let Blocks::Global { q, s } = blocks else {
            unreachable!("run_row writes global rows");
        };
        let Frame { lane, wave_id, local, zero, one, fz, nvec, last_vec } = Frame::new(b, k);
        let row_base = b.mul(tok, k);
        let vwaves = BLOCK / wave;
        let wv = b.u32(wave);
        let blockv = b.u32(BLOCK);
        let lanes = waves * wave;

        // 1. Virtual wave `i * waves + wave_id` at trip `i` (its lane: vectors `vlane` and
        // `vlane + BLOCK`), a virtual wave with no vector of the row (`vw >= used`) skipped.
        let used = ceil_div(b, nvec, wave);
        let vwv = b.u32(vwaves);
        let used = b.min(used, vwv);
        let wavesv = b.u32(waves);
        // Batches of ROW_BATCH trips, a loop trip each (so the compiler does not hoist one
        // batch's loads above another's: the registers of one batch at a time).
        let trips1 = ceil_div(b, used, waves);
        let batches1 = ceil_div(b, trips1, ROW_BATCH);
        let batchv = b.u32(ROW_BATCH);
        b.for_range(zero, batches1, one, 1, &[], |b, bi, _| {
            let i0 = b.mul(bi, batchv);
            // Every load of the batch first (clamped indices: always inside the row).
            let loaded: Vec<(Value, Value, Vec<Value>)> = (0..ROW_BATCH)
                .flat_map(|j| {
                    let jv = b.u32(j);
                    let i = b.add(i0, jv);
                    let vw = b.mul(i, wavesv);
                    let vw = b.add(vw, wave_id);
                    let vlane = b.mul(vw, wv);
                    let vlane = b.add(vlane, lane);
                    [0, 1]
                        .into_iter()
                        .map(|m| {
                            let v = if m == 0 { vlane } else { b.add(vlane, blockv) };
                            let inside = b.lt(v, nvec);
                            let vc = b.min(v, last_vec);
                            let xs =
                                load_vector_aligned(b, (self.x, ScalarType::F32), row_base, vc);
                            (vw, inside, xs)
                        })
                        .collect::<Vec<_>>()
                })
                .collect();
            for pair in loaded.chunks(2) {
                let vw = pair[0].0;
                let mut acc = fz;
                for (_, inside, xs) in pair {
                    let xs: Vec<Value> = xs.iter().map(|&x| b.select(*inside, x, fz)).collect();
                    acc = sum_squares(b, &xs, acc);
                }
                // Wave-uniform: the wave reduce runs with every lane.
                let live = b.lt(vw, used);
                b.if_then(live, |b| {
                    let ws = b.wave_reduce(ReduceOp::Add, acc);
                    let first = b.eq(lane, zero);
                    b.if_then(first, |b| b.store(self.sums, vw, ws));
                });
            }
            vec![]
        });
        // The virtual waves not run: their sum, +0.0.
        let idle = b.ge(local, used);
        let slot = b.lt(local, vwv);
        let idle = b.and(idle, slot);
        b.if_then(idle, |b| b.store(self.sums, local, fz));
        b.barrier(BarrierKind::Lds);

        // 2. r.
        self.inverse_rms_of(b, wave, one, k);

        // 3. Vector `i * lanes + local` at trip `i`; lanes past the row work on its last
        // vector and store nothing (the quantize's shuffles need the whole wave).
        let r = b.load(self.r, zero, Type::F32);
        let lanesv = b.u32(lanes);
        let trips3 = ceil_div(b, nvec, lanes);
        let batches3 = ceil_div(b, trips3, ROW_BATCH);
        let out_base = b.mul(tok, nvec);
        b.for_range(zero, batches3, one, 1, &[], |b, bi, _| {
            let i0 = b.mul(bi, batchv);
            let loaded: Vec<(Value, Value, Vec<Value>, Vec<Value>)> = (0..ROW_BATCH)
                .map(|j| {
                    let jv = b.u32(j);
                    let i = b.add(i0, jv);
                    let p = b.mul(i, lanesv);
                    let p = b.add(p, local);
                    let inside = b.lt(p, nvec);
                    let v = b.min(p, last_vec);
                    let xs = load_vector_aligned(b, (self.x, ScalarType::F32), row_base, v);
                    let ws = load_weights(b, self.weight, v, VEC);
                    (v, inside, xs, ws)
                })
                .collect();
            for (v, inside, xs, ws) in loaded {
                let at = b.add(out_base, v);
                quantize_vector(b, (&xs, &ws, r), v, (q.into(), s.into(), at), inside);
            }
            vec![]
        });
        b.barrier(BarrierKind::Lds);
    }
}

/// The ids and constants both [`RowNorm`] passes start from, for rows of `k` values.
struct Frame {
    lane: Value,
    wave_id: Value,
    local: Value,
    zero: Value,
    one: Value,
    fz: Value,
    /// Vectors a row (`k / 4`).
    nvec: Value,
    last_vec: Value,
}

impl Frame {
    fn new(b: &mut KernelBuilder, k: Value) -> Frame {
        let (lane, wave_id, local) = (b.lane(), b.wave(), b.local_id());
        let (zero, one, fz) = (b.u32(0), b.u32(1), b.f32(0.0));
        let vecv = b.u32(VEC);
        let nvec = b.div(k, vecv);
        let last_vec = b.sub(nvec, one);
        Frame { lane, wave_id, local, zero, one, fz, nvec, last_vec }
    }
}

/// Phase 3 for one vector `v` of a row (`xs`, its `weight` values `ws`, the row's `r`):
/// normalized, quantized by blocks of eight lanes (every lane of the wave runs it), and, where
/// `stores`, its quant word stored at word `at` of `q` and, by the block's first lane, the
/// block's scale word at `at / 8` of `s`.
fn quantize_vector(
    b: &mut KernelBuilder,
    (xs, ws, r): (&[Value], &[Value], Value),
    v: Value,
    (q, s, at): (MemRef, MemRef, Value),
    stores: Value,
) {
    let group = QK / VEC;
    let ys: Vec<Value> =
        xs.iter().zip(ws).map(|(&x, &w)| scale(b, x, r, w, ScalarType::F32)).collect();
    let Quantized { d, d16, bytes, sum } = quantize_values(b, &ys, group, true);
    let word = pack_word(b, &bytes);
    b.if_then(stores, |b| {
        b.store(q, at, word);
        let g = b.u32(group);
        let sub = b.rem(v, g);
        let zero = b.u32(0);
        let head = b.eq(sub, zero);
        b.if_then(head, |b| {
            let blk = b.div(at, g);
            let dsw = ds_word(b, d, d16, sum);
            b.store(s, blk, dsw);
        });
    });
}

impl Norm {
    /// Declares `x` (`t` rows of `k`), `weight` (`k`) and `eps`, with the rule `k <=`
    /// [`NORM_MAX_K`], and the LDS of a pass of `per` tokens at wave size `wave`.
    pub(crate) fn declare(b: &mut KernelBuilder, wave: u32, per: u32, t: Param, k: Param) -> Norm {
        let x = b.buffer("x", ScalarType::F32, Access::Read);
        b.set_buffer_len(x, ShapeExpr::scaled(&[t, k], 1, 1));
        let weight = b.buffer("weight", ScalarType::F32, Access::Read);
        b.set_buffer_len(weight, ShapeExpr::scaled(&[k], 1, 1));
        let eps = b.scalar_param("eps", ScalarType::F32);
        b.scalar_rule(k, ScalarRule::AtMost(NORM_MAX_K as u64));
        b.const_param("norm_max_k", NORM_MAX_K as i64);
        let q = b.lds("norm_q", ScalarType::U32, per * NORM_MAX_K / 4);
        let s = b.lds("norm_s", ScalarType::U32, per * NORM_MAX_K / QK);
        let rows = RowNorm::new(b, wave, per, (x, weight, eps));
        Norm { rows, q, s }
    }

    /// The activations the GEMV reads: the pass's blocks in LDS.
    pub(crate) fn acts(&self) -> Acts {
        Acts::Lds { q: self.q, s: self.s }
    }

    /// [`RowNorm::run`] of tokens `tok0 ..` into the pass's LDS ([`Blocks::Lds`]).
    pub(crate) fn prologue(
        &self,
        b: &mut KernelBuilder,
        (wave, waves): (u32, u32),
        tok0: Value,
        (k, t): (Value, Value),
    ) {
        let blocks = Blocks::Lds { q: self.q, s: self.s };
        self.rows.run(b, (wave, waves), tok0, (k, t), blocks);
    }
}

/// `ceil(a / c)` of a `u32` value and a constant.
fn ceil_div(b: &mut KernelBuilder, a: Value, c: u32) -> Value {
    let cm1 = b.u32(c - 1);
    let cv = b.u32(c);
    let s = b.add(a, cm1);
    b.div(s, cv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::{floats, rng_for, run, u32s};
    use kiln_ir::{Kernel, Target};

    /// A kernel of one workgroup (`waves` waves) that runs the prologue over `t` tokens in passes
    /// of `per` and writes each token's `r`.
    fn probe(wave: u32, waves: u32, per: u32) -> Kernel {
        let mut b = KernelBuilder::new("norm_probe", wave);
        let k = b.scalar_param("k", ScalarType::U32);
        let t = b.scalar_param("t", ScalarType::U32);
        let norm = Norm::declare(&mut b, wave, per, t, k);
        let out = b.buffer("r", ScalarType::F32, Access::Write);
        b.set_buffer_len(out, ShapeExpr::scaled(&[t], 1, 1));
        b.workgroup_size([waves * wave, 1, 1]);
        b.grid([ShapeExpr::constant(1), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
        let (kv, tv) = (b.arg(k), b.arg(t));
        let zero = b.u32(0);
        let step = b.u32(per);
        b.for_range(zero, tv, step, 1, &[], |b, tok0, _| {
            norm.prologue(b, (wave, waves), tok0, (kv, tv));
            let local = b.local_id();
            let perv = b.u32(per);
            let tok = b.add(tok0, local);
            let mine = b.lt(local, perv);
            let inside = b.lt(tok, tv);
            let ok = b.and(mine, inside);
            b.if_then(ok, |b| {
                let r = b.load(norm.rows.r, local, Type::F32);
                b.store(out, tok, r);
            });
            vec![]
        });
        b.finish()
    }

    /// The prologue's `r` of every token is, bit for bit, the `r` of `rmsnorm_f32` at the same
    /// wave size (read from its output where `x = 1` and `w = 1`), for workgroups of 1, 4 and 8
    /// waves and passes of 1, 3 and 8 tokens: a sum of squares in another order fails here,
    /// where the quantized blocks would mostly hide it (Q8_1's quants do not depend on the
    /// scale, and `d` is stored as f16).
    #[test]
    fn the_prologue_keeps_the_norms_order() {
        let mut rng = rng_for("gemv-norm-order", std::process::id() as u64);
        let eps = ("eps".to_string(), ScalarType::F32, 1e-5f32.to_bits() as u64);
        for (arch, wave) in [("gfx1100", 32), ("gfx906", 64)] {
            let tg = Target::by_name(arch).unwrap();
            for (k, t) in [(576, 8), (32, 3), (32 * 13, 5), (1536, 8), (2048 + 32, 2), (4096, 6)] {
                let mut x = crate::rmsnorm::q8_1s_rows(&mut rng, t, k);
                for row in 0..t {
                    x[row * k] = 1.0;
                }
                let inputs = vec![
                    floats("x", ScalarType::F32, &x),
                    floats("weight", ScalarType::F32, &vec![1.0; k]),
                ];
                let y = run(
                    &crate::rmsnorm::rmsnorm(tg, wave, ScalarType::F32),
                    &inputs,
                    &[u32s("rows", t as u32), u32s("n", k as u32), eps.clone()],
                )["out"]
                    .clone();
                let want: Vec<u32> = (0..t)
                    .map(|row| u32::from_le_bytes(y[row * k * 4..][..4].try_into().unwrap()))
                    .collect();
                for (waves, per) in [(1, 1), (4, 3), (8, 8)] {
                    let got = run(
                        &probe(wave, waves, per),
                        &inputs,
                        &[u32s("k", k as u32), u32s("t", t as u32), eps.clone()],
                    )["r"]
                        .chunks(4)
                        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                        .collect::<Vec<u32>>();
                    assert_eq!(got, want, "wave {wave}, {waves} waves, {per} a pass, k={k} t={t}");
                }
            }
        }
    }
}
