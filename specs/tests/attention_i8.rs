//! Decode attention in the i8 order (`attention_decode_q8_0_i8_d*`, issue 13): `mma` equal to
//! the baseline bit for bit (replayed on one workspace, its counters left zeroed), the baseline
//! at wave 64 equal to wave 32 (the chunk is 32 keys at both), and the baseline against float64
//! attention over the dequantized cache and the unquantized q within the bound of
//! `docs/attention.md` ("The i8 order").

use crate::common;
use common::*;
use half::f16;
use kiln_specs::attention::decode::{cache_bytes, MAX_SPLITS};
use kiln_specs::attention::CacheType;
use kiln_specs::math::{EXP_I8_MAX_ABS, EXP_I8_MAX_REL};
use rand::Rng;

fn normal(rng: &mut impl Rng, n: usize, scale: f32) -> Vec<f32> {
    (0..n)
        .map(|_| (rng.gen::<f32>() + rng.gen::<f32>() + rng.gen::<f32>() - 1.5) * 2.0 * scale)
        .collect()
}

/// Keys a chunk of the i8 order.
const CHUNK: usize = 32;

/// One problem: `(pos, T, kv, group, ctx_max)`, head dim, q and the cache bytes.
struct Problem {
    pos: u32,
    t: u32,
    kv: u32,
    group: u32,
    ctx: u32,
    d: u32,
    scale: f32,
    q: Vec<f32>,
    kb: Vec<u8>,
    vb: Vec<u8>,
}

impl Problem {
    fn call(&self) -> Call {
        Call::new()
            .buf("q", f32_bytes(&self.q))
            .buf("k_cache", self.kb.clone())
            .buf("v_cache", self.vb.clone())
            .u32("pos", self.pos)
            .u32("n_tokens", self.t)
            .u32("n_kv_heads", self.kv)
            .u32("group", self.group)
            .u32("ctx_max", self.ctx)
            .f32("scale", self.scale)
    }
}

/// A cache row's blocks: `(d, quants)` each.
fn blocks(bytes: &[u8], row: usize, d: usize) -> Vec<(f64, Vec<f64>)> {
    let rb = d / 32 * 34;
    bytes[row * rb..][..rb]
        .chunks(34)
        .map(|b| {
            let s = f16::from_le_bytes([b[0], b[1]]).to_f32() as f64;
            (s, b[2..].iter().map(|&q| q as i8 as f64).collect())
        })
        .collect()
}

/// `|x - d_q qq| <= delta` for every value of a q block quantized as `quantize_q8_1s_f32` does
/// (`d = amax / 127` in f32, `qq = roundf(x / d)`, the scale `d_q = f16(d)`): the rounding to an
/// integer (half a step, plus the f32 products' few ulps) and `|qq| <= 127` times the scale's f16
/// rounding.
fn q_delta(x: &[f32]) -> f64 {
    let amax = x.iter().fold(0.0f32, |a, &v| a.max(v.abs()));
    let d = amax / 127.0;
    let d16 = f16::from_f32(d).to_f32() as f64;
    let d = d as f64;
    d * (0.5 + 1e-5) + 127.0 * (d - d16).abs()
}

/// Float64 attention (the unquantized q, the dequantized cache) and each output element's bound:
/// `max|v| (exp(2 e) - 1 + (3 (n_s + MAX_SPLITS + 6) + 4) u + 2 n EXP_I8_MAX_ABS) + 1.01 exp(2 e)
/// E_P` (`n` keys), where
/// - `e` bounds a score's error in the exponent: q's rounding `scale sum_d delta_b |k_d|`, the
///   f32 fmas over the `B = D / 32` blocks `scale (B + 2) u sum_d (|q_d| + delta_b) |k_d|`, the
///   subtraction of the maximum and the weight's exp `2 u |s - m| + EXP_I8_MAX_REL` (the
///   rescale's portable exp, `2 u`, is less; below -86 the weight's exp is off by at most
///   `EXP_I8_MAX_ABS`, the `2 n` term);
/// - `n_s` the f32 order's count of roundings of `l` and `acc` a split (it covers the i8
///   order's tree of 5 additions and 2 roundings a chunk);
/// - `E_P` P's rounding: a chunk's block quantizes `w_j = p_j d_v(j)` with the step `sc =
///   max_j |w_j| / 127`, each quant off by at most `sc / 2`, times `|vq_j[d]|`; carried to the
///   end, `sc` of chunk `c` is `max_{j in c} W_j |d_v(j)| / 127` with `W_j = exp(S_j - M)` the
///   float64 weights, so `E_P = sum_c max_{j in c} W_j |d_v(j)| / 254 * sum_{j in c} |vq_j[d]| / L`.
///
/// Returns (want, tol) per element.
fn reference(p: &Problem) -> (Vec<f64>, Vec<f64>) {
    let u = f64::powi(2.0, -24);
    let d = p.d as usize;
    let nb = d / 32;
    let nq = (p.kv * p.group) as usize;
    let mut want = vec![0.0; p.t as usize * nq * d];
    let mut tol = vec![0.0; want.len()];
    for t in 0..p.t as usize {
        for qh in 0..nq {
            let h = qh / p.group as usize;
            let q = &p.q[(t * nq + qh) * d..][..d];
            let delta: Vec<f64> = q.chunks(32).map(q_delta).collect();
            let keys = (p.pos as usize + t + 1).min(p.ctx as usize);
            let row = |k: usize| h * p.ctx as usize + k;
            let kx: Vec<Vec<(f64, Vec<f64>)>> =
                (0..keys).map(|k| blocks(&p.kb, row(k), d)).collect();
            let vx: Vec<Vec<(f64, Vec<f64>)>> =
                (0..keys).map(|k| blocks(&p.vb, row(k), d)).collect();
            let val = |x: &[(f64, Vec<f64>)], dd: usize| x[dd / 32].0 * x[dd / 32].1[dd % 32];
            let sc = p.scale as f64;
            let s: Vec<f64> = (0..keys)
                .map(|k| sc * (0..d).map(|dd| q[dd] as f64 * val(&kx[k], dd)).sum::<f64>())
                .collect();
            let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let e = (0..keys)
                .map(|k| {
                    let (mut qr, mut fl) = (0.0, 0.0);
                    for dd in 0..d {
                        let kv = val(&kx[k], dd).abs();
                        qr += delta[dd / 32] * kv;
                        fl += (q[dd].abs() as f64 + delta[dd / 32]) * kv;
                    }
                    sc * qr
                        + sc * (nb + 2) as f64 * u * fl
                        + 2.0 * u * (s[k] - m).abs()
                        + EXP_I8_MAX_REL
                })
                .fold(0.0, f64::max);
            let w: Vec<f64> = s.iter().map(|x| (x - m).exp()).collect();
            let l: f64 = w.iter().sum();
            let n_s = (keys / MAX_SPLITS as usize + 128).min(keys);
            let vmax = (0..keys)
                .flat_map(|k| (0..d).map(move |dd| (k, dd)))
                .fold(0.0f64, |a, (k, dd)| a.max(val(&vx[k], dd).abs()));
            let grow = (2.0 * e).exp();
            let rounding = (3.0 * (n_s + MAX_SPLITS as usize + 6) as f64 + 4.0) * u;
            let base = vmax * (grow - 1.0 + rounding + 2.0 * keys as f64 * EXP_I8_MAX_ABS);
            for dd in 0..d {
                let o = (t * nq + qh) * d + dd;
                want[o] = (0..keys).map(|k| w[k] * val(&vx[k], dd)).sum::<f64>() / l;
                let b = dd / 32;
                let e_p: f64 = (0..keys)
                    .step_by(CHUNK)
                    .map(|c0| {
                        let ks = c0..(c0 + CHUNK).min(keys);
                        let big = ks.clone().map(|k| w[k] * vx[k][b].0.abs()).fold(0.0, f64::max);
                        let sum_q: f64 = ks.map(|k| vx[k][b].1[dd % 32].abs()).sum();
                        big / 254.0 * sum_q
                    })
                    .sum::<f64>()
                    / l;
                tol[o] = base + 1.01 * grow * e_p;
            }
        }
    }
    (want, tol)
}

/// `mma` gives the baseline's bits (twice on one workspace), the baseline at wave 64 gives wave
/// 32's, and the baseline is within the float64 bound; both head dims.
#[test]
fn i8_attention_variants_equal_the_baseline_and_float64() {
    let mut rng = rng("i8_attention_variants_equal_the_baseline_and_float64");
    // (pos, T, kv, group, ctx_max): one key; a causal block; a partial chunk and a row tile's
    // padding (T group = 15, 17); a clamped context; 130 chunks (two a split).
    let shapes = [
        (0u32, 1u32, 1u32, 3u32, 2u32),
        (2, 5, 2, 3, 9),
        (69, 3, 1, 5, 73),
        (40, 1, 2, 17, 44),
        (70, 2, 1, 4, 64),
        (4128, 2, 1, 2, 4133),
    ];
    for d in [64u32, 128] {
        let fam = format!("attention_decode_q8_0_i8_d{d}");
        let w32 = variants(&fam, 32);
        let w64 = variants(&fam, 64);
        assert!(w32.iter().any(|(n, _)| *n == "mma"), "{fam}: no mma variant");
        let mut worst = 0.0f64;
        for &(pos, t, kv, group, ctx) in &shapes {
            let nq = (t * kv * group * d) as usize;
            let nc = (kv * ctx * d) as usize;
            let p = Problem {
                pos,
                t,
                kv,
                group,
                ctx,
                d,
                scale: 1.0 / (d as f32).sqrt(),
                q: normal(&mut rng, nq, 1.0),
                kb: cache_bytes(CacheType::Q8_0, &normal(&mut rng, nc, 1.0)),
                vb: cache_bytes(CacheType::Q8_0, &normal(&mut rng, nc, 1.0)),
            };
            let call = p.call();
            let what = format!("{fam} pos {pos} T {t} kv {kv} group {group} ctx_max {ctx}");
            let base = &w32[0].1;
            let args = run(base, &call);
            let got = bytes_f32(out(base, &args, "out"));
            let (want, tol) = reference(&p);
            for (i, (&g, (&w, &e))) in got.iter().zip(want.iter().zip(&tol)).enumerate() {
                let err = (g as f64 - w).abs();
                assert!(err <= e, "{what}: out[{i}] = {g}, float64 {w}, bound {e:e}");
                worst = worst.max(err / e);
            }
            let same = |g: &[f32]| g.iter().zip(&got).all(|(x, y)| same_f32(*x, *y));
            let b64 = &w64[0].1;
            let a64 = run(b64, &call);
            assert!(same(&bytes_f32(out(b64, &a64, "out"))), "{what}: wave 64 differs");
            for (name, k) in &w32[1..] {
                let mut a = args_for(k, &call);
                for replay in 0..2 {
                    run_args(k, &mut a, &Default::default());
                    let g = bytes_f32(out(k, &a, "out"));
                    assert!(same(&g), "{what}: {name} run {replay} differs from the baseline");
                }
                for (i, prm) in k.params.values().enumerate() {
                    if prm.workspace && prm.name == "counters" {
                        if let kiln_ir::interp::Arg::Buffer(b) = &a[i] {
                            assert!(b.iter().all(|&x| x == 0), "{name}: counters not zeroed");
                        }
                    }
                }
            }
        }
        println!("{fam}: worst error {worst:.4} of the bound");
        assert!(worst > 0.0, "{fam}: exact everywhere is suspicious");
    }
}
