//! Decode attention (issue 13): `kv_append` and `rope_f32` against their host models bit for
//! bit (which fixes the IR's portable sin/cos/ln/exp to the twins' bits), RoPE against float64,
//! and `attention_decode`: every variant equal to the baseline bit for bit, replayed on the same
//! workspace (its counters left zeroed), and the baseline against float64 attention over the
//! dequantized cache within the bound of `docs/attention.md`.

use crate::common;
use common::*;
use half::f16;
use kiln_specs::attention::decode::{cache_bytes, MAX_SPLITS};
use kiln_specs::attention::kv_append::kv_append_host;
use kiln_specs::attention::rope::rope_row_f32;
use kiln_specs::attention::trig::SIN_COS_MAX_ABS;
use kiln_specs::attention::CacheType;
use rand::Rng;

fn normal(rng: &mut impl Rng, n: usize, scale: f32) -> Vec<f32> {
    (0..n)
        .map(|_| (rng.gen::<f32>() + rng.gen::<f32>() + rng.gen::<f32>() - 1.5) * 2.0 * scale)
        .collect()
}

#[test]
fn kv_append_equals_its_host_model() {
    let mut rng = rng("kv_append_equals_its_host_model");
    // (pos, T, n_kv, head_dim, ctx_max, n_dims, neox)
    let shapes = [
        (0u32, 1u32, 2u32, 64u32, 4u32, 64u32, false),
        (3, 8, 3, 128, 12, 128, true),
        (17, 5, 1, 64, 20, 32, true),
        (9, 4, 2, 96, 11, 66, false),
        (30_000, 2, 1, 128, 30_002, 128, true),
        // K and V of 96 and 288 values: a wave-64 wave holds K lanes and V lanes
        (5, 3, 1, 32, 9, 32, false),
        (2, 1, 3, 96, 4, 64, true),
    ];
    for cache in [CacheType::Q8_0, CacheType::F16] {
        let fam = format!("kv_append_{}", cache.name());
        for (_, wave) in waves() {
            for (name, k) in &variants(&fam, wave) {
                for &(pos, t, kv, hd, ctx, nd, neox) in &shapes {
                    let n = (t * kv * hd) as usize;
                    let mut kx = normal(&mut rng, n, 2.0);
                    kx[0] = 0.0;
                    let mut vx = normal(&mut rng, n, 2.0);
                    // Non-finite values: a NaN and an inf in one block of V (and of K, where RoPE
                    // spreads them to the partners), an all-NaN block of V, a huge value.
                    vx[3] = f32::NAN;
                    vx[7] = f32::INFINITY;
                    vx[40] = f32::NEG_INFINITY;
                    kx[5] = f32::NAN;
                    kx[n - 1] = 3.0e38;
                    if n >= 96 {
                        vx[64..96].fill(f32::NAN);
                    }
                    let cache_len = (kv * ctx * cache.row_bytes(hd)) as usize;
                    let fill: Vec<u8> = (0..cache_len).map(|_| rng.gen()).collect();
                    let (mut kc, mut vc) = (fill.clone(), fill.clone());
                    kv_append_host(
                        cache,
                        &kx,
                        &vx,
                        (pos, t, kv, hd, ctx),
                        (nd, 10_000.0, neox),
                        &mut kc,
                        &mut vc,
                    );
                    let call = Call::new()
                        .buf("k", f32_bytes(&kx))
                        .buf("v", f32_bytes(&vx))
                        .buf("k_cache", fill.clone())
                        .buf("v_cache", fill.clone())
                        .u32("pos", pos)
                        .u32("n_tokens", t)
                        .u32("n_kv_heads", kv)
                        .u32("head_dim", hd)
                        .u32("ctx_max", ctx)
                        .u32("n_dims", nd)
                        .f32("base", 10_000.0)
                        .u32("neox", neox as u32);
                    let args = run(k, &call);
                    let what = format!(
                        "{fam} {name} wave {wave} pos {pos} T {t} hd {hd} nd {nd} neox {neox}"
                    );
                    assert!(
                        same_cache(cache, hd, out(k, &args, "k_cache"), &kc),
                        "{what}: k_cache"
                    );
                    assert!(
                        same_cache(cache, hd, out(k, &args, "v_cache"), &vc),
                        "{what}: v_cache"
                    );
                }
            }
        }
    }
}

#[test]
fn rope_equals_its_host_model_and_float64() {
    let mut rng = rng("rope_equals_its_host_model_and_float64");
    for (_, wave) in waves() {
        let k = &variants("rope_f32", wave)[0].1;
        for &(pos, t, heads, hd, nd, neox) in &[
            (0u32, 2u32, 3u32, 64u32, 64u32, false),
            (4095, 3, 2, 128, 128, true),
            (32_000, 1, 2, 128, 64, false),
            (77, 2, 1, 64, 20, true),
        ] {
            let x = normal(&mut rng, (t * heads * hd) as usize, 1.0);
            let call = Call::new()
                .buf("x", f32_bytes(&x))
                .u32("pos", pos)
                .u32("n_tokens", t)
                .u32("n_heads", heads)
                .u32("head_dim", hd)
                .u32("n_dims", nd)
                .f32("base", 10_000.0)
                .u32("neox", neox as u32);
            let args = run(k, &call);
            let got = bytes_f32(out(k, &args, "out"));
            for (r, row) in x.chunks(hd as usize).enumerate() {
                let p = pos + r as u32 / heads;
                let want = rope_row_f32(row, p, nd, 10_000.0, neox);
                let g = &got[r * hd as usize..(r + 1) * hd as usize];
                assert!(
                    g.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "rope wave {wave} pos {p} row {r}"
                );
                check_rope_f64(row, g, p, nd, neox);
            }
        }
    }
}

/// RoPE against float64: the angle `p * base^(-2i/n)` in f32 is off by at most
/// `p * |d inv| + ulp(theta)/2` with `|d inv| <= 4 ulp(inv)` (ln, the f32 division and product,
/// exp_portable), and sin/cos add [`SIN_COS_MAX_ABS`]; so a rotated value is within
/// `(|x0| + |x1|) * (dtheta + SIN_COS_MAX_ABS) + 2 ulp` of the exact rotation of the same inputs.
fn check_rope_f64(x: &[f32], got: &[f32], p: u32, nd: u32, neox: bool) {
    let u = f64::powi(2.0, -24);
    let n = nd.min(x.len() as u32) & !1;
    for d in 0..x.len() as u32 {
        let (g, xv) = (got[d as usize] as f64, x[d as usize] as f64);
        if d >= n {
            assert_eq!(g, xv);
            continue;
        }
        let (i, first, partner) = if neox {
            let h = n / 2;
            if d < h {
                (d, true, d + h)
            } else {
                (d - h, false, d - h)
            }
        } else {
            (d / 2, d % 2 == 0, d ^ 1)
        };
        let pv = x[partner as usize] as f64;
        let inv = 10_000f64.powf(-2.0 * i as f64 / n as f64);
        let theta = p as f64 * inv;
        let (s, c) = theta.sin_cos();
        let want = if first { xv * c - pv * s } else { pv * s + xv * c };
        let dtheta = p as f64 * 4.0 * u * 2.0 * inv + theta * u;
        let tol =
            (xv.abs() + pv.abs()) * (dtheta + SIN_COS_MAX_ABS) + 4.0 * u * want.abs().max(1e-30);
        assert!((g - want).abs() <= tol, "rope p {p} d {d}: {g} vs {want} (tol {tol:e})");
    }
}

/// The cache values as f32 (Q8_0 dequantized as ggml does: `q * d`).
/// Cache bytes equal, every NaN half (an f16 value, or a Q8_0 block's scale) equal to any other:
/// a NaN's sign and payload are not part of the contract (README, "Numbers are exact"), and the
/// host model's depend on how the compiler evaluates `-(x * s)` of a NaN (they differ between
/// debug and release builds).
fn same_cache(cache: CacheType, hd: u32, got: &[u8], want: &[u8]) -> bool {
    let nan = |b: &[u8]| f16::from_le_bytes([b[0], b[1]]).is_nan();
    let same_half = |g: &[u8], w: &[u8]| g == w || (nan(g) && nan(w));
    if got.len() != want.len() {
        return false;
    }
    let row = cache.row_bytes(hd) as usize;
    got.chunks(row).zip(want.chunks(row)).all(|(g, w)| match cache {
        CacheType::F16 => g.chunks(2).zip(w.chunks(2)).all(|(g, w)| same_half(g, w)),
        CacheType::Q8_0 => g
            .chunks(34)
            .zip(w.chunks(34))
            .all(|(g, w)| same_half(&g[..2], &w[..2]) && g[2..] == w[2..]),
    })
}

fn dequantize(cache: CacheType, bytes: &[u8]) -> Vec<f32> {
    match cache {
        CacheType::Q8_0 => bytes
            .chunks(34)
            .flat_map(|b| {
                let d = f16::from_le_bytes([b[0], b[1]]).to_f32();
                b[2..].iter().map(move |&q| q as i8 as f32 * d).collect::<Vec<_>>()
            })
            .collect(),
        CacheType::F16 => {
            bytes.chunks(2).map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32()).collect()
        }
    }
}

/// The `counters` workspace is left zeroed (`partials` is written before it is read).
fn assert_counters_zero(k: &kiln_ir::Kernel, args: &[kiln_ir::interp::Arg]) {
    for (i, p) in k.params.values().enumerate() {
        if p.workspace && p.name == "counters" {
            if let kiln_ir::interp::Arg::Buffer(b) = &args[i] {
                assert!(b.iter().all(|&x| x == 0), "{}: counters not left zeroed", k.name);
            }
        }
    }
}

/// One attention problem.
struct Problem {
    pos: u32,
    t: u32,
    kv: u32,
    group: u32,
    ctx: u32,
    d: u32,
    scale: f32,
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
}

/// Float64 attention over the (dequantized) cache and the bound of each output element:
/// `max|v| * (2 e + (3 (n_s + MAX_SPLITS + 6) + 4) u)`, with `e` the largest error of a score
/// (`scale * gamma_{D+6} * sum |q k| + 2 u |s - m| + 2 u`: the f32 dot product, the
/// subtraction of the maximum and `exp_portable`'s 0.988 ulp) and `n_s` a bound on the keys one
/// split holds at wave 32 or 64 (`keys / MAX_SPLITS + 128`): each key, chunk rescale, wave sum
/// step and combine step rounds `l` and `acc` once. Returns (want, tol) per element.
fn reference(p: &Problem) -> (Vec<f64>, Vec<f64>) {
    let u = f64::powi(2.0, -24);
    let d = p.d as usize;
    let nq = (p.kv * p.group) as usize;
    let mut want = vec![0.0; p.t as usize * nq * d];
    let mut tol = vec![0.0; want.len()];
    for t in 0..p.t as usize {
        for qh in 0..nq {
            let h = qh / p.group as usize;
            let q = &p.q[(t * nq + qh) * d..][..d];
            let keys = (p.pos as usize + t + 1).min(p.ctx as usize);
            let krow = |k: usize| &p.k[(h * p.ctx as usize + k) * d..][..d];
            let vrow = |k: usize| &p.v[(h * p.ctx as usize + k) * d..][..d];
            let s: Vec<f64> = (0..keys)
                .map(|k| {
                    p.scale as f64
                        * q.iter().zip(krow(k)).map(|(&a, &b)| a as f64 * b as f64).sum::<f64>()
                })
                .collect();
            let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let gamma = (p.d + 6) as f64 * u;
            let e = (0..keys)
                .map(|k| {
                    let sa: f64 =
                        q.iter().zip(krow(k)).map(|(&a, &b)| (a as f64 * b as f64).abs()).sum();
                    p.scale as f64 * gamma * sa + 2.0 * u * (s[k] - m).abs() + 2.0 * u
                })
                .fold(0.0, f64::max);
            let w: Vec<f64> = s.iter().map(|x| (x - m).exp()).collect();
            let l: f64 = w.iter().sum();
            let n_s = (keys / MAX_SPLITS as usize + 128).min(keys);
            let vmax = (0..keys)
                .flat_map(|k| vrow(k).iter())
                .fold(0.0f64, |a, &b| a.max((b as f64).abs()));
            let bound = vmax * (2.0 * e + (3.0 * (n_s + MAX_SPLITS as usize + 6) as f64 + 4.0) * u);
            for dd in 0..d {
                let o = (t * nq + qh) * d + dd;
                want[o] = (0..keys).map(|k| w[k] * vrow(k)[dd] as f64).sum::<f64>() / l;
                tol[o] = bound;
            }
        }
    }
    (want, tol)
}

fn attention_call(p: &Problem, cache: CacheType) -> (Call, Vec<f32>, Vec<f32>) {
    let kb = cache_bytes(cache, &p.k);
    let vb = cache_bytes(cache, &p.v);
    let (kd, vd) = (dequantize(cache, &kb), dequantize(cache, &vb));
    let call = Call::new()
        .buf("q", f32_bytes(&p.q))
        .buf("k_cache", kb)
        .buf("v_cache", vb)
        .u32("pos", p.pos)
        .u32("n_tokens", p.t)
        .u32("n_kv_heads", p.kv)
        .u32("group", p.group)
        .u32("ctx_max", p.ctx)
        .f32("scale", p.scale);
    (call, kd, vd)
}

/// Every variant gives the baseline's bits (twice on one workspace: its counters left zeroed),
/// and the baseline is within the float64 bound; at wave 32 and 64, both caches, both dims.
#[test]
fn attention_variants_equal_the_baseline_and_float64() {
    let mut rng = rng("attention_variants_equal_the_baseline_and_float64");
    // (pos, T, kv, group, ctx_max): one key, a causal block, several chunks and residues.
    // (4128, ...) has 130 chunks at wave 32: two chunks a split (65 splits); (8300, ...) 260:
    // three a split, so the async variants' two K buffers are each filled again (only the
    // family that has them, Q8_0 at head dim 128: the longest case, kept out of the others').
    let shapes = [
        (0u32, 1u32, 1u32, 3u32, 2u32),
        (2, 5, 2, 2, 9),
        (69, 3, 1, 2, 73),
        (4128, 2, 1, 2, 4133),
        (8300, 1, 1, 1, 8301),
    ];
    for cache in [CacheType::Q8_0, CacheType::F16] {
        for d in [64u32, 128] {
            let fam = format!("attention_decode_{}_d{d}", cache.name());
            for (_, wave) in waves() {
                let vs = variants(&fam, wave);
                let mut worst = 0.0f64;
                for &(pos, t, kv, group, ctx) in &shapes {
                    if pos == 8300 && (cache != CacheType::Q8_0 || d != 128) {
                        continue;
                    }
                    let nq = (t * kv * group * d) as usize;
                    let nc = (kv * ctx * d) as usize;
                    let mut p = Problem {
                        pos,
                        t,
                        kv,
                        group,
                        ctx,
                        d,
                        scale: 1.0 / (d as f32).sqrt(),
                        q: normal(&mut rng, nq, 1.0),
                        k: normal(&mut rng, nc, 1.0),
                        v: normal(&mut rng, nc, 1.0),
                    };
                    let (call, kd, vd) = attention_call(&p, cache);
                    p.k = kd;
                    p.v = vd;
                    let (want, tol) = reference(&p);
                    let what = format!("{fam} wave {wave} pos {pos} T {t} kv {kv} group {group}");
                    let base = &vs[0].1;
                    let args = run(base, &call);
                    let got = bytes_f32(out(base, &args, "out"));
                    for (i, (&g, (&w, &e))) in got.iter().zip(want.iter().zip(&tol)).enumerate() {
                        let err = (g as f64 - w).abs();
                        assert!(err <= e, "{what}: out[{i}] = {g}, float64 {w}, bound {e:e}");
                        worst = worst.max(err / e);
                    }
                    for (name, k) in &vs[1..] {
                        let mut a = args_for(k, &call);
                        for replay in 0..2 {
                            run_args(k, &mut a, &Default::default());
                            let g = bytes_f32(out(k, &a, "out"));
                            assert!(
                                g.iter().zip(&got).all(|(x, y)| same_f32(*x, *y)),
                                "{what}: {name} run {replay} differs from the baseline"
                            );
                            assert_counters_zero(k, &a);
                        }
                    }
                }
                println!("{fam} wave {wave}: worst error {worst:.3} of the bound");
                assert!(worst > 0.0, "{fam} wave {wave}: exact everywhere is suspicious");
            }
        }
    }
}

/// The `short` variants (Q8_0) give the baseline's bits at their boundary (`THREADS` keys, or
/// `WIDE_THREADS` for `short_r1t640` at head dim 64: a split a wave, the states in LDS; one more
/// key: the passes through `partials`), T = 1..8, a context clamped by `ctx_max` and a NaN query
/// element, replayed on the same workspace (its counters left zeroed); `short_r1` and `short`
/// are routed first, on `pos` only up to where every `T` fits.
#[test]
fn short_attention_equals_the_baseline_at_its_boundary() {
    use kiln_specs::attention::decode::short::{MAX_POS, THREADS, WIDE_THREADS};
    let mut rng = rng("short_attention_equals_the_baseline_at_its_boundary");
    let n = THREADS;
    assert!(MAX_POS + 8 <= u64::from(n), "pos {MAX_POS} with 8 rows is over {n} keys");
    for d in [64u32, 128] {
        let fam_name = format!("attention_decode_q8_0_d{d}");
        let spec = fam(&fam_name);
        // `short_r1` (one or two tokens) then `short`: the first routes, both to `MAX_POS`.
        for (i, name) in [(1, "short_r1"), (2, "short")] {
            let v = &spec.variants[i];
            assert_eq!(v.name, name, "{fam_name}: route {i} is not {name}");
            assert!(v.admit.shapes.contains(&("pos".into(), 0, MAX_POS)), "{fam_name}");
        }
        let group = if d == 64 { 3 } else { 4 };
        let shapes_at = |n: u32| {
            let mut shapes: Vec<(u32, u32, u32)> = (1..=8).map(|t| (n - t, t, n + 3)).collect();
            shapes.extend([(n, 1, n + 3), (n - 7, 8, n + 3), (n + 9, 2, n)]);
            shapes
        };
        let lanes = |name: &str| match name {
            "short" | "short_r1" => Some(n),
            "short_r1t640" => Some(WIDE_THREADS),
            _ => None,
        };
        for (_, wave) in waves() {
            let vs = variants(&fam_name, wave);
            let base = &vs[0].1;
            for (variant, short) in vs.iter().filter(|(n, _)| lanes(n).is_some()) {
                let shapes = shapes_at(lanes(variant).unwrap());
                for (i, &(pos, t, ctx)) in shapes.iter().enumerate() {
                    let kv = 2;
                    let mut q = normal(&mut rng, (t * kv * group * d) as usize, 1.0);
                    if i == 2 {
                        q[d as usize + 5] = f32::NAN;
                    }
                    let nc = (kv * ctx * d) as usize;
                    let p = Problem {
                        pos,
                        t,
                        kv,
                        group,
                        ctx,
                        d,
                        scale: 1.0 / (d as f32).sqrt(),
                        q,
                        k: normal(&mut rng, nc, 1.0),
                        v: normal(&mut rng, nc, 1.0),
                    };
                    let (call, _, _) = attention_call(&p, CacheType::Q8_0);
                    let what =
                        format!("{fam_name}/{variant} wave {wave} pos {pos} T {t} ctx_max {ctx}");
                    let want = bytes_f32(out(base, &run(base, &call), "out"));
                    let nan = want.iter().filter(|x| x.is_nan()).count();
                    assert_eq!(nan, if i == 2 { d as usize } else { 0 }, "{what}: NaN outputs");
                    let mut a = args_for(short, &call);
                    for replay in 0..2 {
                        run_args(short, &mut a, &Default::default());
                        let g = bytes_f32(out(short, &a, "out"));
                        let bad = g.iter().zip(&want).position(|(x, y)| !same_f32(*x, *y));
                        assert_eq!(
                            bad, None,
                            "{what}: short run {replay} differs from the baseline"
                        );
                        assert_counters_zero(short, &a);
                    }
                }
            }
        }
    }
}
