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
//! The pass's (token, virtual wave) pairs, "units", are dealt to the waves (unit
//! `s * waves + wave` in the wave's slot `s`, a static count of slots); a unit's lane holds the
//! vectors of its virtual lane. Phases:
//! 0. every load of `x` first, each vector of each slot (one round trip to memory for the
//!    whole prologue; the values stay in registers to the end). A workgroup with more than
//!    [`KEEP`] slots a wave (few waves, or many tokens a pass) runs the phases a slot at a
//!    time, loading its values again for phase 2;
//! 1. each unit's wave sum of squares to LDS (the idle virtual waves' `+0.0` too), an LDS barrier;
//! 2. each unit's `r = 1 / sqrt(mean + eps)` from its token's wave sums (every wave computes the
//!    `r` it needs, the same tree), its vectors scaled (the gains loaded here) and quantized
//!    (eight lanes of one unit a block), quants and scale words to LDS in the split layout of
//!    one pass; an LDS barrier.
//!
//! Tokens of the last pass past `t` are the last token again (what the unfused GEMV loads for
//! them: its token index is clamped the same way), so every LDS word the GEMV reads is written.
//! The LDS is static: rows of at most [`NORM_MAX_K`] values (`k` is checked at launch).

use super::format::{Acts, QK};
use crate::common::{lds_read_all, tree_sum};
use crate::quantize::{ds_word, pack_word, quantize_values, Quantized};
use crate::rmsnorm::{inverse_rms, load_vector_aligned, load_weights, scale, sum_squares, BLOCK};
use kiln_ir::{
    Access, BarrierKind, KernelBuilder, LdsSlot, Param, ReduceOp, ScalarRule, ScalarType,
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

/// Slots a wave keeps in registers (8 values each): a workgroup with more slots a pass runs
/// them one at a time and loads each one's values twice.
const KEEP: u32 = 4;

/// Tokens a pass up to which the values are kept (with more, the GEMV's accumulators are many
/// and the held values spill: `_qkv_cache_norm`'s 4-token pass under sm_75's 128 registers).
const KEEP_TOKENS: u32 = 2;

/// The prologue's parameters and LDS.
#[derive(Clone, Copy)]
pub(crate) struct Norm {
    x: Param,
    weight: Param,
    eps: Param,
    /// Tokens a pass.
    per: u32,
    /// The pass's quants, `u32` words (eight a block), block `j * k/32 + b` of token `j`.
    q: LdsSlot,
    /// The pass's scale words (`d | s << 16`), one a block.
    s: LdsSlot,
    /// The wave sums, `BLOCK / W` a token.
    sums: LdsSlot,
    /// `r` of each token of the pass.
    r: LdsSlot,
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
        let sums = b.lds("norm_wave_sums", ScalarType::F32, per * (BLOCK / wave));
        let r = b.lds("norm_r", ScalarType::F32, per);
        Norm { x, weight, eps, per, q, s, sums, r }
    }

    /// The activations the GEMV reads: the pass's blocks in LDS.
    pub(crate) fn acts(&self) -> Acts {
        Acts::Lds { q: self.q, s: self.s }
    }

    /// Normalizes and quantizes tokens `tok0 .. tok0 + per` (clamped to `t - 1`) of `x` (rows of
    /// `k`) into the LDS, in a workgroup of `waves` waves of `wave` lanes. Runs under
    /// workgroup-uniform control (barriers).
    pub(crate) fn prologue(
        &self,
        b: &mut KernelBuilder,
        (wave, waves): (u32, u32),
        tok0: Value,
        (k, t): (Value, Value),
    ) {
        let lane = b.lane();
        let wave_id = b.wave();
        let local = b.local_id();
        let zero = b.u32(0);
        let one = b.u32(1);
        let fz = b.f32(0.0);
        let vecv = b.u32(VEC);
        let nvec = b.div(k, vecv);
        let last_vec = b.sub(nvec, one);
        let last_tok = b.sub(t, one);
        let vwaves = BLOCK / wave;
        let vwv = b.u32(vwaves);
        let wv = b.u32(wave);
        let blockv = b.u32(BLOCK);
        const _: () = assert!(NORM_MAX_K / VEC <= 2 * BLOCK, "two vectors a virtual lane");
        // The virtual waves that hold a vector of the row: `used = min(ceil(nvec / W), BLOCK /
        // W)` a token. The pass's units (token, virtual wave) are dealt to the waves, unit
        // `s * waves + wave` in slot `s`; a unit's lane holds vector `vw * W + lane` and, for
        // rows past BLOCK vectors, that plus BLOCK.
        let used = ceil_div(b, nvec, wave);
        let used = b.min(used, vwv);
        let perv = b.u32(self.per);
        let units = b.mul(perv, used);
        let second = b.gt(nvec, blockv);
        let slots = (self.per * vwaves).div_ceil(waves);
        let wavesv = b.u32(waves);

        // A slot's unit and its `x` values (loads clamped into the row: the values past it are
        // never used).
        let slot = |b: &mut KernelBuilder, sv: Value| {
            let u = b.mul(sv, wavesv);
            let u = b.add(u, wave_id);
            // The same for every lane of the wave: the wave reduce and the quantize's shuffles
            // run with all of them.
            let live = b.lt(u, units);
            let j = b.div(u, used);
            let vw = b.rem(u, used);
            let v0 = b.mul(vw, wv);
            let v0 = b.add(v0, lane);
            let v1 = b.add(v0, blockv);
            let tok = b.add(tok0, j);
            let tok = b.min(tok, last_tok);
            let row_base = b.mul(tok, k);
            let vector = |b: &mut KernelBuilder, v: Value| {
                let vc = b.min(v, last_vec);
                load_vector_aligned(b, (self.x, ScalarType::F32), row_base, vc)
            };
            let zeros = vec![fz; VEC as usize];
            let vals = b.if_else(
                live,
                |b| {
                    let mut vals = vector(b, v0);
                    let z = zeros.clone();
                    vals.extend(b.if_else(second, |b| vector(b, v1), |_| z));
                    vals
                },
                |_| [zeros.clone(), zeros.clone()].concat(),
            );
            Unit { live, j, vw, v: [v0, v1], vals }
        };

        // 1. Each unit's wave sum: lane `l` adds the squares of its vectors in order (a vector
        // past the row adds nothing: `fma(0, 0, acc)` is `acc`), then the butterfly.
        let sums_of = |b: &mut KernelBuilder, units_of: &[Unit]| {
            for un in units_of {
                b.if_then(un.live, |b| {
                    let mut acc = fz;
                    for m in 0..2 {
                        let inside = b.lt(un.v[m], nvec);
                        let xs: Vec<Value> =
                            un.x(m).iter().map(|&x| b.select(inside, x, fz)).collect();
                        acc = sum_squares(b, &xs, acc);
                    }
                    let ws = b.wave_reduce(ReduceOp::Add, acc);
                    let first = b.eq(lane, zero);
                    b.if_then(first, |b| {
                        let at = b.mul(un.j, vwv);
                        let at = b.add(at, un.vw);
                        b.store(self.sums, at, ws);
                    });
                });
            }
        };
        // The virtual waves not run: their sum, +0.0 (other slots than the ones above).
        let nslots = b.u32(self.per * vwaves);
        let lanes = b.u32(waves * wave);
        let zero_idle = |b: &mut KernelBuilder| {
            b.for_range(local, nslots, lanes, 1, &[], |b, i, _| {
                let vw = b.rem(i, vwv);
                let idle = b.ge(vw, used);
                b.if_then(idle, |b| b.store(self.sums, i, fz));
                vec![]
            });
        };

        // 2. Each unit's `r` from its token's BLOCK / W wave sums (every wave computes the `r`
        // it needs: the same sums in the same tree), and its vectors scaled with their gains and
        // quantized by blocks of eight lanes (a block is eight consecutive vectors: eight lanes
        // of one unit, all inside the row or all past it).
        let group = QK / VEC;
        let r_of = |b: &mut KernelBuilder, j: Value| {
            let base = b.mul(j, vwv);
            let sums = lds_read_all(b, self.sums, base, vwaves, Type::F32);
            let ss = tree_sum(b, &sums);
            inverse_rms(b, ss, k, self.eps)
        };
        let quantize_of = |b: &mut KernelBuilder, units_of: &[Unit]| {
            // With one token a pass, every unit's `r` is token 0's: computed once.
            let r0 = (self.per == 1).then(|| r_of(b, zero));
            for un in units_of {
                b.if_then(un.live, |b| {
                    let r = match r0 {
                        Some(r) => r,
                        None => r_of(b, un.j),
                    };
                    // `r` of the token, for whoever reads it (the probe of the tests).
                    let head = b.eq(un.vw, zero);
                    let first = b.eq(lane, zero);
                    let head = b.and(head, first);
                    b.if_then(head, |b| b.store(self.r, un.j, r));
                    let quantize = |b: &mut KernelBuilder, m: usize| {
                        let v = un.v[m];
                        let vc = b.min(v, last_vec);
                        let ws = load_weights(b, self.weight, vc, VEC);
                        let ys: Vec<Value> = (0..VEC as usize)
                            .map(|e| scale(b, un.x(m)[e], r, ws[e], ScalarType::F32))
                            .collect();
                        let Quantized { d, d16, bytes, sum } = quantize_values(b, &ys, group, true);
                        let word = pack_word(b, &bytes);
                        let inside = b.lt(v, nvec);
                        b.if_then(inside, |b| {
                            // Word `at` is word `v % 8` of block `at / 8` (= `j * k/32 + v / 8`).
                            let at = b.mul(un.j, nvec);
                            let at = b.add(at, v);
                            b.store(self.q, at, word);
                            let g = b.u32(group);
                            let sub = b.rem(v, g);
                            let head = b.eq(sub, zero);
                            b.if_then(head, |b| {
                                let blk = b.div(at, g);
                                let dsw = ds_word(b, d, d16, sum);
                                b.store(self.s, blk, dsw);
                            });
                        });
                    };
                    quantize(b, 0);
                    b.if_then(second, |b| quantize(b, 1));
                });
            }
        };

        if slots <= KEEP && self.per <= KEEP_TOKENS {
            // Every `x` load first (one round trip for the prologue), kept in registers through
            // the barrier.
            let units_of: Vec<Unit> = (0..slots)
                .map(|s| {
                    let sv = b.u32(s);
                    slot(b, sv)
                })
                .collect();
            sums_of(b, &units_of);
            zero_idle(b);
            b.barrier(BarrierKind::Lds);
            quantize_of(b, &units_of);
        } else {
            // A slot an iteration, its values loaded again for phase 2 (all of them would not
            // fit in registers).
            let trips = ceil_div(b, units, waves);
            b.for_range(zero, trips, one, 1, &[], |b, s, _| {
                let un = slot(b, s);
                sums_of(b, &[un]);
                vec![]
            });
            zero_idle(b);
            b.barrier(BarrierKind::Lds);
            b.for_range(zero, trips, one, 1, &[], |b, s, _| {
                let un = slot(b, s);
                quantize_of(b, &[un]);
                vec![]
            });
        }
        b.barrier(BarrierKind::Lds);
    }
}

/// One slot of the prologue: a (token, virtual wave) unit of a wave, and its `x` values.
struct Unit {
    /// Whether the wave has a unit in this slot (wave-uniform).
    live: Value,
    /// The token of the pass.
    j: Value,
    /// The virtual wave.
    vw: Value,
    /// The lane's two vectors.
    v: [Value; 2],
    /// The four `x` values of each vector.
    vals: Vec<Value>,
}

impl Unit {
    fn x(&self, m: usize) -> &[Value] {
        &self.vals[m * VEC as usize..][..VEC as usize]
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
                let r = b.load(norm.r, local, Type::F32);
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
