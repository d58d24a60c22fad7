//! The split norm's families against the kernels they split: `_res_sq` against `_res` and the
//! host's quantize of `x w` and block sums; each `_rms` family against the plain GEMV's sums
//! scaled by the host's `r` (then SwiGLU and the quantize, or the cache append), bit for bit on
//! the interpreter at wave 32 and 64, every variant.

use super::*;
use crate::cases::{rng_for, run, run_written};
use crate::gemv::{quantize_split, specs as gemv_specs};
use crate::math::silu_f32;
use kiln_ir::{Target, TARGETS};

type Inputs = Vec<(String, ScalarType, Vec<u8>)>;

fn fam(name: &str) -> KernelSpec {
    gemv_specs().into_iter().find(|f| f.name == name).unwrap()
}

fn target(wave: u32) -> &'static Target {
    let name = if wave == 64 { "gfx906" } else { "gfx1100" };
    TARGETS.iter().find(|t| t.name == name).unwrap()
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn input<'a>(inputs: &'a Inputs, name: &str) -> &'a [u8] {
    &inputs.iter().find(|i| i.0 == name).unwrap_or_else(|| panic!("no input {name}")).2
}

fn scalar(case: &Case, name: &str) -> usize {
    case.scalars.iter().find(|s| s.0 == name).unwrap().2 as usize
}

/// `r` of each token of a case, by the host twin.
fn scales(case: &Case, k: usize) -> Vec<f32> {
    let ss = f32s(input(&case.inputs, "norm_ss"));
    ss.chunks(k / 32).map(|p| rms_scale_f32(p, k, 1e-5)).collect()
}

/// The quantize kernel's `xq`, `xs` of `x`.
fn quantize(wave: u32, x: &[f32]) -> (Vec<u8>, Vec<u8>) {
    let out = run(
        &quantize_split(target(wave), wave, false),
        &[("x".to_string(), ScalarType::F32, bytes(x))],
        &[u32s("n", x.len() as u32)],
    );
    (out["xq"].clone(), out["xs"].clone())
}

/// The plain GEMV's `y` over matrix `prefix` of a case (renamed to `w`), `rows` rows.
fn plain(case: &Case, wave: u32, prefix: &str, rows: usize) -> Vec<f32> {
    let mut inputs: Inputs = vec![];
    for (suffix, ty) in [("q", ScalarType::U8), ("s", ScalarType::F16)] {
        let data = input(&case.inputs, &format!("{prefix}{suffix}")).to_vec();
        inputs.push((format!("w{suffix}"), ty, data));
    }
    for name in ["xq", "xs"] {
        inputs.push(case.inputs.iter().find(|i| i.0 == name).unwrap().clone());
    }
    let scalars = vec![
        u32s("n", rows as u32),
        u32s("k", scalar(case, "k") as u32),
        u32s("t", scalar(case, "t") as u32),
    ];
    let k = (fam("gemv_q8_0_rp").baseline().build)(target(wave), wave);
    f32s(&run(&k, &inputs, &scalars)["y"])
}

/// Every `_res_sq` variant: `y` as `gemv_q8_0_rp_res`'s baseline, `norm_xq` / `norm_xs` as
/// `quantize_q8_1s_f32` of `y * weight`, `norm_ss` as the host's block sums of squares (zeros,
/// NaN and a value near `f32::MAX` among the rows).
#[test]
fn the_squares_gemv_equals_the_residual_gemv_then_its_norm_parts() {
    let mut rng = rng_for("gemv-res-sq", std::process::id() as u64);
    let (res, sq) = (fam("gemv_q8_0_rp_res"), fam("gemv_q8_0_rp_res_sq"));
    for wave in [32, 64] {
        let tg = target(wave);
        for case in res_sq_cases(&mut rng, false) {
            let n = scalar(&case, "n");
            let y =
                run(&(res.baseline().build)(tg, wave), &case.inputs, &case.scalars)["y"].clone();
            let yv = f32s(&y);
            let w = f32s(input(&case.inputs, "weight"));
            let z: Vec<f32> = yv.iter().enumerate().map(|(i, v)| v * w[i % n]).collect();
            let (xq, xs) = quantize(wave, &z);
            let ss: Vec<f32> = yv.chunks(32).map(block_squares_f32).collect();
            assert!(ss.iter().any(|v| v.is_nan()) || scalar(&case, "t") < 3, "{}", case.name);
            for v in &sq.variants {
                let got = run(&(v.build)(tg, wave), &case.inputs, &case.scalars);
                let at = format!("{}/{}, wave {wave}, {}", sq.name, v.name, case.name);
                assert!(got["y"] == y, "{at}: y differs from the `_res` kernel's");
                assert!(got["norm_xq"] == xq, "{at}: norm_xq");
                assert!(got["norm_xs"] == xs, "{at}: norm_xs");
                assert_eq!(got["norm_ss"], bytes(&ss), "{at}: norm_ss");
            }
        }
    }
}

/// Every variant of `gemv_q8_0_rp_rms` gives the plain GEMV's sums times the host's `r`, of
/// `_swiglu_q8_1s_rms` the quantize of `silu(g r) (u r)`, and of `_qkv_cache_rms` `q r` and the
/// caches `kv_append_q8_0` writes from `k r`, `v r`; a token's block sums zero (`r` =
/// `1 / sqrt(eps)`) and one large among the cases.
#[test]
fn the_rms_gemvs_equal_the_plain_gemv_scaled() {
    let mut rng = rng_for("gemv-rms", std::process::id() as u64);
    let append = crate::attention::kv_append::specs()
        .into_iter()
        .find(|f| f.name == "kv_append_q8_0")
        .unwrap();
    let lanes = append.variants.iter().find(|v| v.name == "lanes").unwrap();
    for wave in [32, 64] {
        let tg = target(wave);
        let scaled = |y: &[f32], r: &[f32], rows: usize| -> Vec<f32> {
            y.iter().enumerate().map(|(i, v)| v * r[i / rows]).collect()
        };
        let f = fam("gemv_q8_0_rp_rms");
        for case in rms_cases(&mut rng, false, Epilogue::Plain) {
            let (n, k) = (scalar(&case, "n"), scalar(&case, "k"));
            let want = bytes(&scaled(&plain(&case, wave, "w", n), &scales(&case, k), n));
            for v in &f.variants {
                let got = run(&(v.build)(tg, wave), &case.inputs, &case.scalars);
                assert!(got["y"] == want, "{}/{}, wave {wave}, {}", f.name, v.name, case.name);
            }
        }
        let f = fam("gemv_q8_0_rp_swiglu_q8_1s_rms");
        for case in rms_cases(&mut rng, false, Epilogue::SwigluQ8) {
            let (n, k) = (scalar(&case, "n"), scalar(&case, "k"));
            let r = scales(&case, k);
            let g = scaled(&plain(&case, wave, "gate_w", n), &r, n);
            let u = scaled(&plain(&case, wave, "up_w", n), &r, n);
            let h: Vec<f32> = g.iter().zip(&u).map(|(g, u)| silu_f32(*g) * u).collect();
            let (q, s) = quantize(wave, &h);
            for v in &f.variants {
                let got = run(&(v.build)(tg, wave), &case.inputs, &case.scalars);
                let at = format!("{}/{}, wave {wave}, {}", f.name, v.name, case.name);
                assert!(got["yq"] == q && got["ys"] == s, "{at}: the quantized SwiGLU differs");
            }
        }
        if wave == 64 {
            continue; // `_qkv_cache_rms` is built for wave-32 archs (as `_qkv_cache`).
        }
        let f = fam("gemv_q8_0_rp_qkv_cache_rms");
        for case in rms_cases(&mut rng, false, Epilogue::QkvCache) {
            let (n_q, k) = (scalar(&case, "n_q"), scalar(&case, "k"));
            let n_kv = scalar(&case, "n_kv_heads") * scalar(&case, "head_dim");
            let r = scales(&case, k);
            let q = bytes(&scaled(&plain(&case, wave, "q_w", n_q), &r, n_q));
            let kv = |p: &str| bytes(&scaled(&plain(&case, wave, p, n_kv), &r, n_kv));
            let cache = |name: &str| case.inputs.iter().find(|i| i.0 == name).unwrap().clone();
            let append_in = vec![
                ("k".to_string(), ScalarType::F32, kv("k_w")),
                ("v".to_string(), ScalarType::F32, kv("v_w")),
                cache("k_cache"),
                cache("v_cache"),
            ];
            let mut append_sc = case.scalars.clone();
            append_sc.push(u32s("n_tokens", scalar(&case, "t") as u32));
            append_sc.push(u32s("neox", 0));
            let want = run_written(&(lanes.build)(tg, wave), &append_in, &append_sc);
            for v in &f.variants {
                let got = run_written(&(v.build)(tg, wave), &case.inputs, &case.scalars);
                let at = format!("{}/{}, wave {wave}, {}", f.name, v.name, case.name);
                assert!(got["q_y"] == q, "{at}: q_y");
                for c in ["k_cache", "v_cache"] {
                    assert!(got[c] == want[c], "{at}: {c}");
                }
            }
        }
    }
}

/// The host twin of `r` is `rmsnorm`'s `1 / sqrt(mean + eps)` of the row's blocks, summed in the
/// 32-lane order: on rows whose sum is exact in f32 (integers), the same value as the plain
/// formula.
#[test]
fn the_host_scale_is_the_inverse_rms() {
    let parts: Vec<f32> = (0..128).map(|i| (i % 7) as f32 * 32.0).collect();
    let total: f32 = parts.iter().sum();
    let want = 1.0 / (total / 4096.0 + 1e-5f32).sqrt();
    assert_eq!(rms_scale_f32(&parts, 4096, 1e-5), want);
    assert_eq!(block_squares_f32(&[2.0; 32]), 128.0);
}
