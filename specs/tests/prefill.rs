//! Prompt attention (issue 14): every arch's build (matrix unit or lanes) on the interpreter
//! against float64 attention over the dequantized cache within the stated bound, and every
//! variant equal to the baseline bit for bit.

use crate::common;
use common::*;
use half::{bf16, f16};
use kiln_ir::{ScalarType, Target};
use kiln_specs::attention::prefill::{case, case_shapes, dequantize, CaseShape, Io};
use kiln_specs::attention::CacheType;
use kiln_specs::cases::{Case, Rng};

/// Float64 attention of a case: `out[t][qh][d]`, and per output row `max_k sum_d |q k| * scale`
/// (the scale of its scores' rounding).
pub fn reference(c: &Case, cache: CacheType, d: usize, shape: CaseShape) -> (Vec<f64>, Vec<f64>) {
    let (pos, l, kv, g, ctx) = shape;
    let (pos, l, kv, g, ctx) = (pos as usize, l as usize, kv as usize, g as usize, ctx as usize);
    let input = |n: &str| &c.inputs.iter().find(|(x, _, _)| x == n).unwrap().2;
    let q: Vec<f64> =
        input("q").chunks_exact(2).map(|h| f16::from_le_bytes([h[0], h[1]]).to_f64()).collect();
    let kc = dequantize(cache, input("k_cache"));
    let vc = dequantize(cache, input("v_cache"));
    let scale = 1.0 / (d as f32).sqrt();
    let nq = kv * g;
    let mut out = vec![0f64; l * nq * d];
    let mut mag = vec![0f64; l * nq];
    for t in 0..l {
        for qh in 0..nq {
            let h = qh / g;
            let qr = &q[(t * nq + qh) * d..][..d];
            let n = (pos + t + 1).min(ctx);
            let row = |k: usize| (h * ctx + k) * d;
            let s: Vec<f64> = (0..n)
                .map(|k| (0..d).map(|x| qr[x] * kc[row(k) + x] as f64).sum::<f64>() * scale as f64)
                .collect();
            mag[t * nq + qh] = (0..n)
                .map(|k| (0..d).map(|x| (qr[x] * kc[row(k) + x] as f64).abs()).sum::<f64>())
                .fold(0.0, f64::max)
                * scale as f64;
            let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let p: Vec<f64> = s.iter().map(|x| (x - m).exp()).collect();
            let sum: f64 = p.iter().sum();
            for x in 0..d {
                let o: f64 = (0..n).map(|k| p[k] * vc[row(k) + x] as f64).sum();
                out[(t * nq + qh) * d + x] = o / sum;
            }
        }
    }
    (out, mag)
}

fn run_case(k: &kiln_ir::Kernel, c: &Case) -> Vec<f32> {
    bytes_f32(&run_raw(k, c))
}

/// `out`'s bytes after running `k` on case `c`.
fn run_raw(k: &kiln_ir::Kernel, c: &Case) -> Vec<u8> {
    let mut call = Call::new();
    for (n, _, b) in &c.inputs {
        let n: &'static str = Box::leak(n.clone().into_boxed_str());
        call = call.buf(n, b.clone());
    }
    for (n, ty, bits) in &c.scalars {
        let n: &'static str = Box::leak(n.clone().into_boxed_str());
        call = match ty {
            kiln_ir::ScalarType::F32 => call.f32(n, f32::from_bits(*bits as u32)),
            _ => call.u32(n, *bits as u32),
        };
    }
    let args = run(k, &call);
    out(k, &args, "out").to_vec()
}

/// The bound against float64 (`docs/prefill.md`): `|out - ref| <= (2^-9 + 2^-10 * mag) *
/// max|v|`, `mag` the row's largest `sum_d |q k| * scale`. Why: P enters the matrix unit as
/// f16 (2^-11 relative a weight), Q8_0 values as `f16(q d)` (2^-11 relative a value, so a score
/// moves by at most `2^-11 mag`, and a weight by twice that after the max is taken), the f32 sums
/// add far less; the output, a convex combination of V rows, moves by the weights' relative
/// error times `max|v|`, kept with a factor 2.
fn bound(mag: f64, vmax: f64) -> f64 {
    (2f64.powi(-9) + 2f64.powi(-10) * mag) * vmax
}

/// Every arch of `KILN_PREFILL_ARCHS` (else `default`, comma separated) x cache x head dim: the
/// f16 / f32 family's name and its variants built for the arch at its default wave.
fn each_family(
    default: &str,
    mut f: impl FnMut(&str, CacheType, u32, &str, &[(&'static str, kiln_ir::Kernel)]),
) {
    let archs = std::env::var("KILN_PREFILL_ARCHS").unwrap_or(default.into());
    for arch in archs.split(',') {
        let t = Target::by_name(arch).unwrap();
        let wave = t.default_wave();
        for cache in [CacheType::F16, CacheType::Q8_0] {
            for d in [64u32, 128] {
                let fam = fam(&format!("attention_prefill_{}_d{d}", cache.name()));
                let ks: Vec<_> =
                    fam.variants.iter().map(|v| (v.name, (v.build)(t, wave))).collect();
                f(arch, cache, d, fam.name, &ks);
            }
        }
    }
}

#[test]
fn prefill_matches_float64_and_variants_match_the_baseline() {
    let mut seed = rng("prefill_matches_float64_and_variants_match_the_baseline");
    let mut r = Rng::new(rand::Rng::gen(&mut seed));
    each_family("gfx1100,sm_90,gfx942,gfx906", |arch, cache, d, fam, ks| {
        // The parity cases, and L = 512 at head dim 128 too (too slow for `kiln parity`
        // on every variant, fine here once a case).
        let mut shapes = case_shapes(false, d);
        if d == 128 {
            shapes.push((3, 512, 1, 1, 515));
        }
        for shape in shapes {
            // L = 512 at one arch a wave size by default (the lanes fallback takes
            // about 20 s a family in the interpreter there): KILN_PREFILL_ALL=1 runs
            // it everywhere (`kiln parity --arch gfx906` always does).
            let long = matches!(arch, "gfx1100" | "gfx942" | "sm_90");
            if !long && shape.1 >= 512 && std::env::var("KILN_PREFILL_ALL").is_err() {
                continue;
            }
            let c = case(&mut r, cache, d, ScalarType::F16, shape);
            let t0 = std::time::Instant::now();
            let base = run_case(&ks[0].1, &c);
            let what = format!("{arch} {fam} {}", c.name);
            println!("{what}: {:?}", t0.elapsed());
            let (want, mag) = reference(&c, cache, d as usize, shape);
            let v = &c.inputs[2].2;
            let vmax = dequantize(cache, v).iter().fold(0f32, |m, x| m.max(x.abs())) as f64;
            let mut worst = 0f64;
            for (i, (&g, &w)) in base.iter().zip(&want).enumerate() {
                let e = bound(mag[i / d as usize], vmax);
                let err = (g as f64 - w).abs();
                assert!(err <= e, "{what}: out[{i}] = {g}, float64 {w}, bound {e:e}");
                worst = worst.max(err / e);
            }
            println!("  {:.3} of the float64 bound", worst);
            for (name, k) in &ks[1..] {
                let got = run_case(k, &c);
                assert!(
                    got.iter().zip(&base).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{what}: variant {name} differs from the baseline"
                );
            }
        }
    });
}

/// The case `c` with its input `name` replaced by `bytes` of type `ty`.
fn with_input(c: &Case, name: &str, ty: ScalarType, bytes: Vec<u8>) -> Case {
    let mut c = c.clone();
    let i = c.inputs.iter().position(|(n, _, _)| n == name).unwrap();
    c.inputs[i] = (name.into(), ty, bytes);
    c
}

/// The `_qbf16` families give their f16 family's bits on `f16(f32(q))` (Q values beyond f16's
/// range and in its subnormals included), and the `_of16` families their f32 family's bits
/// rounded to the nearest f16: every variant, on sm_90 and gfx1100. The conversions are in the
/// Q loads and the `out` store that every path shares; sm_90 runs all three ways of loading Q
/// (fragments into registers, the LDS tile at head dim 128 and in `m32`, 8-half vectors in
/// `w4qs`) and gfx1100 WMMA's lane maps. The lanes fallback loads Q as the LDS tile does (about
/// 35 s in the interpreter: `KILN_PREFILL_ARCHS=sm_90,gfx906` runs it).
#[test]
fn prefill_q_bf16_and_f16_out_are_the_f16_f32_families_converted() {
    let mut seed = rng("prefill_q_bf16_and_f16_out_are_the_f16_f32_families_converted");
    let mut r = Rng::new(rand::Rng::gen(&mut seed));
    let archs = std::env::var("KILN_PREFILL_ARCHS").unwrap_or("sm_90,gfx1100".into());
    for arch in archs.split(',') {
        let t = Target::by_name(arch).unwrap();
        let wave = t.default_wave();
        for cache in [CacheType::F16, CacheType::Q8_0] {
            for d in [64u32, 128] {
                let build = |io: Io| {
                    let f = fam(&io.family(cache, d));
                    f.variants.iter().map(|v| (v.name, (v.build)(t, wave))).collect::<Vec<_>>()
                };
                let (base, bf, of) = (build(Io::F16_F32), build(Io::BF16_F32), build(Io::F16_F16));
                assert!(bf.len() >= 2 && of.len() >= 2, "a wide variant in each family");
                for shape in case_shapes(false, d).into_iter().filter(|s| s.1 < 512) {
                    let what = format!("{arch} {} d{d} {shape:?}", cache.name());
                    // Q in bf16, with values past f16's range (inf there), in its subnormals
                    // (rounded) and a negative zero in the first row.
                    let c = case(&mut r, cache, d, ScalarType::BF16, shape);
                    let mut qb: Vec<bf16> = c.inputs[0]
                        .2
                        .chunks_exact(2)
                        .map(|h| bf16::from_le_bytes([h[0], h[1]]))
                        .collect();
                    for (i, x) in [70000.0f32, -3.1e-6, -0.0, 1.7e-7].into_iter().enumerate() {
                        qb[(i * 5) % d as usize] = bf16::from_f32(x);
                    }
                    let qb_bytes: Vec<u8> = qb.iter().flat_map(|x| x.to_le_bytes()).collect();
                    let c_bf = with_input(&c, "q", ScalarType::BF16, qb_bytes);
                    let qh: Vec<u8> =
                        qb.iter().flat_map(|x| f16::from_f32(x.to_f32()).to_le_bytes()).collect();
                    let c_h = with_input(&c, "q", ScalarType::F16, qh);
                    let want = run_raw(&base[0].1, &c_h);
                    for (name, k) in &bf {
                        assert!(run_raw(k, &c_bf) == want, "{what}: _qbf16 {name} differs");
                    }
                    // Out in f16: the f32 family's output rounded (nearest even).
                    let c = case(&mut r, cache, d, ScalarType::F16, shape);
                    let want: Vec<u8> = bytes_f32(&run_raw(&base[0].1, &c))
                        .into_iter()
                        .flat_map(|x| f16::from_f32(x).to_le_bytes())
                        .collect();
                    for (name, k) in &of {
                        assert!(run_raw(k, &c) == want, "{what}: _of16 {name} differs");
                    }
                }
            }
        }
    }
}

/// Every variant keeps the baseline's order where the order shows: with the softmax scale
/// multiplied by 8, a block's weights span many binades, so `l`'s sums of f16 weights in f32
/// round (at the parity cases' scale they are mostly exact, and a sum in another order gives
/// the same bits). Bit for bit on sm_90 (the wide variants, `m32`, `pipe`) and gfx1100 (WMMA's
/// `m32` and `pipe`), both caches, both head dims; a chain of adds instead of the lane's tree
/// in the wide variants' `l` fails it.
#[test]
fn prefill_variants_keep_the_order_on_sharp_weights() {
    let mut seed = rng("prefill_variants_keep_the_order_on_sharp_weights");
    let mut r = Rng::new(rand::Rng::gen(&mut seed));
    each_family("sm_90,gfx1100", |arch, cache, d, fam, ks| {
        for shape in [(5, 17, 8, 4, 30), (100, 33, 2, 2, 140), (9, 129, 1, 2, 140)] {
            let mut c = case(&mut r, cache, d, ScalarType::F16, shape);
            let s = c.scalars.iter_mut().find(|(n, _, _)| n == "scale").unwrap();
            s.2 = u64::from((8.0 / (d as f32).sqrt()).to_bits());
            let base = run_raw(&ks[0].1, &c);
            let what = format!("{arch} {fam} {}", c.name);
            for (name, k) in &ks[1..] {
                assert!(run_raw(k, &c) == base, "{what}: variant {name} differs");
            }
        }
    });
}
