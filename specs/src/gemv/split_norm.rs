//! The RMSNorm between two GEMVs of a decode layer, split between them so that no norm node runs
//! between them: the `_res_sq` families (the residual GEMV that writes the norm's input) and the
//! `_rms` families (the GEMV that reads its output).
//!
//! A norm `(x * r) * w`, `r = 1 / sqrt(sum(x^2) / n + eps)`, needs the whole row only for `r`,
//! and the GEMV after it is linear in its activations. So (the order, part of the result):
//!
//! 1. `_res_sq` ([`Epilogue::ResidualSquares`]): `x = res + W a`, bit for bit the `_res`
//!    kernel's, stored to `y`; then for each 32-row block of `x` (a workgroup owns one a token):
//!    `z = x * w` quantized to Q8_1 in the split layout (`norm_xq`, `norm_xs`) with
//!    `quantize_q8_1s_f32`'s arithmetic, and the block's sum of squares `ss_b` (each lane
//!    `x * x`, then the xor butterfly over offsets 16, 8, 4, 2, 1) into `norm_ss`.
//! 2. `_rms` ([`Gemv::rms`]): the GEMV's own order over `norm_xq` / `norm_xs`, and each output's
//!    sum `s` multiplied by the token's `r` before the epilogue (SwiGLU, the cache's RoPE and
//!    quantize): `ss = sum_b ss_b` (lane `l` of 32 adds blocks `l, l + 32, ...` in order from
//!    `+0`, then the xor butterfly over offsets 16..1; at wave 64 both halves do the same),
//!    `r = 1 / sqrt(ss / k + eps)` (exact division and square root, `rmsnorm`'s
//!    `inverse_rms`), `s * r`.
//!
//! Every step is an exact op, so every device gives the interpreter's bits. Against the norm node
//! followed by the plain GEMV (`rmsnorm_q8_1s_f32`, which quantizes `(x r) w`), the result is
//! another rounding of the same product: `z`'s quants are `(x r) w`'s up to the rounding of
//! `x w` versus `(x r) w` (each within half a quant step of the exact value in both), and `r`
//! multiplies the f32 sum once (half an ulp). The stated bound against float64 is the dense
//! family's (`gemv::tests`) with the activations' quantization error taken from `z`, plus 2 ulp
//! of the output for `r` and the product.
//!
//! Rows of at most [`RMS_MAX_K`] values (a lane loads a fixed count of block sums ahead of the
//! block loop: rule on `k`). Built for Q8_0 weights (the Llama-3-8B-shaped model of the engine
//! issue); other formats keep the norm node (the engine's `Norms::Apart`).

use super::cases::{dense_cases, qkv_cache_cases, res_norm_inputs};
use super::dense::{build, Epilogue, Gemv};
use super::format::{Layout, WType, QK};
use super::tile::{q8_lane, store_q8_lane, walk_tile_on, TileLane};
use super::{admit, norm};
use crate::cases::{floats, u32s, Case, Rng};
use crate::rmsnorm::inverse_rms;
use crate::{Bench, KernelSpec, Parity, VariantSpec};
use kiln_ir::package::Admission;
use kiln_ir::{
    Access, KernelBuilder, LdsSlot, Param, ScalarRule, ScalarType, ShapeExpr, Type, Value,
};

/// The longest row an `_rms` kernel takes.
pub const RMS_MAX_K: u32 = 8192;
/// Lanes whose order the block sums' addition follows.
const PART_LANES: u32 = 32;
/// Block sums a lane loads: enough for [`RMS_MAX_K`].
const PARTS_A_LANE: u32 = RMS_MAX_K / QK / PART_LANES;

/// The `_res_sq` outputs beside `y`.
#[derive(Clone, Copy)]
pub(crate) struct SquaresOut {
    /// The norm's gain (`n`).
    weight: Param,
    /// `norm_xq` (`t * n`).
    q: Param,
    /// `norm_xs` (`t * n / 32`).
    s: Param,
    /// `norm_ss` (`t * n / 32`).
    ss: Param,
}

impl SquaresOut {
    /// Declares `weight`, `norm_xq`, `norm_xs` and `norm_ss` for `t` rows of `n`.
    pub(crate) fn declare(b: &mut KernelBuilder, n: Param, t: Param) -> SquaresOut {
        let weight = b.buffer("weight", ScalarType::F32, Access::Read);
        b.set_buffer_len(weight, ShapeExpr::scaled(&[n], 1, 1));
        let q = b.buffer("norm_xq", ScalarType::U8, Access::Write);
        b.set_buffer_len(q, ShapeExpr::scaled(&[t, n], 1, 1));
        let s = b.buffer("norm_xs", ScalarType::U32, Access::Write);
        b.set_buffer_len(s, ShapeExpr::scaled(&[t, n], 1, QK as u64));
        let ss = b.buffer("norm_ss", ScalarType::F32, Access::Write);
        b.set_buffer_len(ss, ShapeExpr::scaled(&[t, n], 1, QK as u64));
        SquaresOut { weight, q, s, ss }
    }
}

/// Step 1's tail of a pass: the pass's tokens x 32 rows of `x` in `lds` (workgroup `wg`'s
/// block), each lane a row of a token, the tokens dealt to the workgroup's `waves` waves.
pub(super) fn squares_pass(
    b: &mut KernelBuilder,
    (out, lds): (SquaresOut, LdsSlot),
    (wave, waves): (u32, u32),
    per: u32,
    (n, t, tok0): (Value, Value, Value),
    wg: Value,
) {
    walk_tile_on(
        b,
        lds,
        (wave, waves),
        (per, tok0, t),
        |b, TileLane { tok, stores, r, v, .. }| {
            let c32 = b.u32(QK);
            let row0 = b.mul(wg, c32);
            let row = b.add(row0, r);
            let w = b.load(out.weight, row, Type::F32);
            let z = b.mul(v, w);
            let quant = q8_lane(b, z);
            let mut sq = b.mul(v, v);
            for o in [16, 8, 4, 2, 1] {
                let other = b.shuffle_xor(sq, o);
                sq = b.add(sq, other);
            }
            b.if_then(stores, |b| {
                store_q8_lane(b, (out.q, out.s), (n, tok, wg, r), quant);
                let zero = b.u32(0);
                let head = b.eq(r, zero);
                b.if_then(head, |b| {
                    let blocks = b.div(n, c32);
                    let at = b.mul(tok, blocks);
                    let at = b.add(at, wg);
                    b.store(out.ss, at, sq);
                });
            });
        },
    );
}

/// Step 2's inputs: the block sums and `eps`.
#[derive(Clone, Copy)]
pub(crate) struct RmsScale {
    ss: Param,
    eps: Param,
}

impl RmsScale {
    /// Declares `norm_ss` (`t * k / 32`) and `eps`, with the rule `k <=` [`RMS_MAX_K`].
    pub(crate) fn declare(b: &mut KernelBuilder, t: Param, k: Param) -> RmsScale {
        b.scalar_rule(k, ScalarRule::AtMost(RMS_MAX_K as u64));
        b.const_param("rms_max_k", RMS_MAX_K as i64);
        let ss = b.buffer("norm_ss", ScalarType::F32, Access::Read);
        b.set_buffer_len(ss, ShapeExpr::scaled(&[t, k], 1, QK as u64));
        let eps = b.scalar_param("eps", ScalarType::F32);
        RmsScale { ss, eps }
    }

    /// The block sums this lane adds for token `tok` (`+0` past the row's blocks).
    pub(crate) fn load(&self, b: &mut KernelBuilder, k: Value, tok: Value) -> Vec<Value> {
        let qk = b.u32(QK);
        let nb = b.div(k, qk);
        let one = b.u32(1);
        let last = b.sub(nb, one);
        let base = b.mul(tok, nb);
        let lane = b.lane();
        let lanes = b.u32(PART_LANES);
        let l = b.rem(lane, lanes);
        let fz = b.f32(0.0);
        (0..PARTS_A_LANE)
            .map(|i| {
                let off = b.u32(i * PART_LANES);
                let blk = b.add(l, off);
                let valid = b.lt(blk, nb);
                let c = b.min(blk, last);
                let at = b.add(base, c);
                let v = b.load(self.ss, at, Type::F32);
                b.select(valid, v, fz)
            })
            .collect()
    }

    /// `r` from a lane's block sums ([`RmsScale::load`]); the whole wave runs it.
    pub(crate) fn scale(&self, b: &mut KernelBuilder, parts: &[Value], k: Value) -> Value {
        let mut acc = b.f32(0.0);
        for &p in parts {
            acc = b.add(acc, p);
        }
        for o in [16, 8, 4, 2, 1] {
            let other = b.shuffle_xor(acc, o);
            acc = b.add(acc, other);
        }
        inverse_rms(b, acc, k, self.eps)
    }

    /// `r` of this lane's token in a pass of `per` tokens from `tok0` (lanes `[j W/P, (j+1)
    /// W/P)` hold token `j`'s sums after the pass's `tsum`, `P` the power of two at or above
    /// `per`): every token's block sums loaded first (one round trip), then the scales.
    pub(crate) fn lane_scale(
        &self,
        b: &mut KernelBuilder,
        (k, t): (Value, Value),
        (tok0, per): (Value, u32),
        wave: u32,
    ) -> Value {
        let one = b.u32(1);
        let tl = b.sub(t, one);
        let span = b.u32(wave / per.next_power_of_two());
        let lane = b.lane();
        let lane_tok = b.div(lane, span);
        let parts: Vec<Vec<Value>> = (0..per)
            .map(|j| {
                let jj = b.u32(j);
                let tok = b.add(tok0, jj);
                let tok = b.min(tok, tl);
                self.load(b, k, tok)
            })
            .collect();
        let mut lane_scale = self.scale(b, &parts[0], k);
        for (j, parts) in (1..per).zip(&parts[1..]) {
            let sc = self.scale(b, parts, k);
            let jj = b.u32(j);
            let here = b.eq(lane_tok, jj);
            lane_scale = b.select(here, sc, lane_scale);
        }
        lane_scale
    }
}

/// The host twin of step 2's `r` for one token's block sums.
pub fn rms_scale_f32(parts: &[f32], k: usize, eps: f32) -> f32 {
    let lanes = PART_LANES as usize;
    let mut v: Vec<f32> = (0..lanes)
        .map(|l| parts.iter().skip(l).step_by(lanes).fold(0.0f32, |acc, &p| acc + p))
        .collect();
    for o in [16, 8, 4, 2, 1] {
        v = (0..lanes).map(|i| v[i] + v[i ^ o]).collect();
    }
    1.0 / (v[0] / k as f32 + eps).sqrt()
}

/// The host twin of step 1's block sum of squares (32 values).
pub fn block_squares_f32(x: &[f32]) -> f32 {
    let mut v: Vec<f32> = x.iter().map(|a| a * a).collect();
    for o in [16, 8, 4, 2, 1] {
        v = (0..v.len()).map(|i| v[i] + v[i ^ o]).collect();
    }
    v[0]
}

/// The `_res_sq` and `_rms` families (Q8_0, repacked).
pub(super) fn specs() -> Vec<KernelSpec> {
    use Epilogue::{Plain, QkvCache, ResidualSquares, SwigluQ8};
    use Layout::Repacked;
    use WType::Q8_0;
    let engine = "timed in the engine's decode step (kiln generate --profile)";
    let t1_on = |archs: &[&str]| Admission {
        archs: archs.iter().map(|a| a.to_string()).collect(),
        shapes: vec![("t".into(), 1, 1)],
    };
    let v = |name, build: crate::BuildFn, admit| VariantSpec { name, build, admit };
    // The tokens a pass of each family's variants (each admitted by `t` up to its own).
    const EIGHT: &[u32] = &[1, 2, 4, 8];
    const FOUR: &[u32] = &[1, 2, 4];
    vec![
        KernelSpec {
            name: "gemv_q8_0_rp_res_sq",
            variants: vec![
                v(
                    "baseline",
                    |t, w| build(t, w, Gemv::baseline(Q8_0, Repacked, ResidualSquares)),
                    Admission::default(),
                ),
                // One token: eight waves of four rows, a lane's blocks of a row at k = 4096 in
                // flight (unroll 8), loaded before the wait on sm_90, after it elsewhere. In the
                // Llama-3-8B-shaped step on the H200 (split-h200-2026-12-04.md, call 2): 2366.5
                // us with the first, 2545.1 with the second forced, and 2506.1 with sixteen waves
                // of two rows (`p1r2u8w16`, removed).
                v("p1r4u8w8e", |t, w| build(t, w, res_sq(1, 4, 8, 8).early()), t1_on(&["sm_90"])),
                v("p1r4u8w8", |t, w| build(t, w, res_sq(1, 4, 8, 8)), admit(EIGHT, 1)),
                v("p2r4w8", |t, w| build(t, w, res_sq(2, 4, 0, 8)), admit(EIGHT, 2)),
                v("p4r4w8", |t, w| build(t, w, res_sq(4, 4, 0, 8)), admit(EIGHT, 4)),
                v("p8r4w8", |t, w| build(t, w, res_sq(8, 4, 0, 8)), admit(EIGHT, 8)),
            ],
            parity: Parity::Buffers(res_sq_cases),
            bench: Bench::Without(engine),
            // Where the `_rms` Q/K/V kernel is (the split needs both); 16 waves of 64 lanes
            // spill on gfx906.
            archs: Some(norm::archs()),
            budgets: vec![],
        },
        KernelSpec {
            name: "gemv_q8_0_rp_rms",
            variants: vec![
                v(
                    "baseline",
                    |t, w| build(t, w, Gemv::baseline(Q8_0, Repacked, Plain).scaled()),
                    Admission::default(),
                ),
                v("p1r2u8w2", |t, w| build(t, w, rms(Plain, 1, 2, 8, 2)), admit(EIGHT, 1)),
                v("p2r2", |t, w| build(t, w, rms(Plain, 2, 2, 0, 0)), admit(EIGHT, 2)),
                v("p4r2", |t, w| build(t, w, rms(Plain, 4, 2, 0, 0)), admit(EIGHT, 4)),
                v("p8r4", |t, w| build(t, w, rms(Plain, 8, 4, 0, 0)), admit(EIGHT, 8)),
            ],
            parity: Parity::Buffers(|rng, large| rms_cases(rng, large, Plain)),
            bench: Bench::Without(engine),
            archs: Some(norm::archs()),
            budgets: vec![],
        },
        KernelSpec {
            name: "gemv_q8_0_rp_swiglu_q8_1s_rms",
            variants: vec![
                v(
                    "baseline",
                    |t, w| build(t, w, Gemv::baseline(Q8_0, Repacked, SwigluQ8).scaled()),
                    Admission::default(),
                ),
                // The `_swiglu_q8_1s` family's tuned one-token form on sm_90.
                v(
                    "p1r4u8w8e",
                    |t, w| build(t, w, rms(SwigluQ8, 1, 4, 8, 8).early()),
                    t1_on(&["sm_90"]),
                ),
                // (The block sums loaded after the block loop, `p1r4u8w8el`, made the
                // Llama-3-8B-shaped step slower on the H200: 2401.3 against 2389.8-2391.9 us,
                // bench/results/split-h200-2026-12-04.md, call 3; removed.)
                v("p2", |t, w| build(t, w, rms(SwigluQ8, 2, 1, 0, 0)), Admission::default()),
            ],
            parity: Parity::Buffers(|rng, large| rms_cases(rng, large, SwigluQ8)),
            bench: Bench::Without(engine),
            archs: Some(norm::archs()),
            budgets: vec![],
        },
        KernelSpec {
            name: "gemv_q8_0_rp_qkv_cache_rms",
            variants: vec![
                v(
                    "baseline",
                    |t, w| build(t, w, Gemv::baseline(Q8_0, Repacked, QkvCache).scaled()),
                    Admission::default(),
                ),
                // One token: the block sums loaded after the block loop (its 512-lane workgroup
                // is capped at 128 registers; loaded ahead, `p1`, the Llama-3-8B-shaped step
                // took 2389.8-2391.9 us on the H200 against 2365.7: split-h200-2026-12-04.md,
                // call 3; removed).
                v("p1l", |t, w| build(t, w, late(rms(QkvCache, 1, 1, 0, 0))), admit(FOUR, 1)),
                v("p2r2w16", |t, w| build(t, w, rms(QkvCache, 2, 2, 0, 16)), admit(FOUR, 2)),
                v("p4r2w16", |t, w| build(t, w, rms(QkvCache, 4, 2, 0, 16)), admit(FOUR, 4)),
            ],
            parity: Parity::Buffers(|rng, large| rms_cases(rng, large, QkvCache)),
            bench: Bench::Without(engine),
            // As `_qkv_cache`: its three matrices in a 256-lane workgroup spill at wave 64.
            archs: Some(norm::archs()),
            budgets: vec![],
        },
    ]
}

/// A `_res_sq` variant: `p` tokens a pass, `w` waves of `r` rows (32 rows), unroll `u`.
fn res_sq(p: u32, r: u32, u: u32, w: u32) -> Gemv {
    let g = Gemv::tiled(WType::Q8_0, Layout::Repacked, Epilogue::ResidualSquares, p, r);
    Gemv { unroll: u, waves: w, ..g }
}

/// An `_rms` variant of `epi`.
fn rms(epi: Epilogue, p: u32, r: u32, u: u32, w: u32) -> Gemv {
    let g = Gemv::tiled(WType::Q8_0, Layout::Repacked, epi, p, r);
    Gemv { unroll: u, waves: w, ..g }.scaled()
}

/// `g` with its block sums loaded after the block loop.
fn late(g: Gemv) -> Gemv {
    Gemv { rms_late: true, ..g }
}

/// `_res_sq`'s cases: the `_res_rmsnorm` rows (a token of zeros, a NaN, a value near
/// `f32::MAX`, a gain near 1), `n` a multiple of 32 (odd block counts), `k` not a multiple of
/// 256, `t` = 1..8 and 11; `large` adds the Llama-3-8B shapes.
fn res_sq_cases(rng: &mut Rng, large: bool) -> Vec<Case> {
    let mut shapes: Vec<(usize, usize, usize)> = (1..=8).map(|t| (96, 416, t)).collect();
    shapes.extend([(32, 32, 1), (32 * 7, 32, 3), (4064, 96, 2), (64, 4096 + 32, 5), (96, 64, 11)]);
    if large {
        shapes.extend([(4096, 4096, 1), (4096, 14336, 1), (4096, 64, 8)]);
    }
    shapes
        .into_iter()
        .map(|(n, k, t)| {
            let mut inputs = res_norm_inputs(rng, WType::Q8_0, Layout::Repacked, (n, k, t));
            // The gain at token 3's huge residual (near `f32::MAX`) past 1: `x w` is infinite,
            // its block's scale too, and `s = 0 * inf` a NaN (stored canonical).
            if let Some(w) = inputs.iter_mut().find(|i| i.0 == "weight") {
                w.2[(n / 2) * 4..(n / 2) * 4 + 4].copy_from_slice(&2.0f32.to_le_bytes());
            }
            Case {
                name: format!("n={n} k={k} t={t}"),
                scalars: vec![u32s("n", n as u32), u32s("k", k as u32), u32s("t", t as u32)],
                inputs,
            }
        })
        .collect()
}

/// The block sums of `t` rows of `k`: sums of squares of unit-scale values (about 32), token 1
/// all zeros (`r = 1 / sqrt(eps)`), one large.
pub(crate) fn block_sums(rng: &mut Rng, t: usize, k: usize) -> Vec<f32> {
    let nb = k / QK as usize;
    let mut ss: Vec<f32> =
        (0..t * nb).map(|_| (0..32).map(|_| rng.normal(1.0).powi(2)).sum::<f32>()).collect();
    if t > 1 {
        ss[nb..2 * nb].fill(0.0);
    }
    if t > 2 {
        ss[2 * nb] = 1.0e6;
    }
    ss
}

/// The `_rms` cases: the plain family's (or `_qkv_cache`'s) with the block sums and `eps`.
fn rms_cases(rng: &mut Rng, large: bool, epi: Epilogue) -> Vec<Case> {
    let (wt, rp) = (WType::Q8_0, Layout::Repacked);
    let mut cases = match epi {
        Epilogue::QkvCache => qkv_cache_cases(rng, large, wt, rp, false),
        _ => dense_cases(rng, large, wt, rp, epi),
    };
    for c in &mut cases {
        let sc = |name: &str| c.scalars.iter().find(|s| s.0 == name).unwrap().2 as usize;
        let (t, k) = (sc("t"), sc("k"));
        c.inputs.push(floats("norm_ss", ScalarType::F32, &block_sums(rng, t, k)));
        c.scalars.push(("eps".into(), ScalarType::F32, 1e-5f32.to_bits() as u64));
    }
    cases
}

#[cfg(test)]
#[path = "split_norm_tests.rs"]
mod tests;
