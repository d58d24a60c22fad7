//! The parity cases of the dense families (plain, residual, SwiGLU, Q/K/V, the cache and norm
//! variants) and the inputs they share with the tests: weights in either layout, activations,
//! norm rows.

use super::dense::Epilogue;
use super::format::{Layout, WType, QK};
use super::host;
use crate::cases::{floats, u32s, Case, Rng};
use kiln_ir::ScalarType;

/// The inputs of a dense case: weights (one or two matrices), activations, residual.
pub(crate) fn dense_inputs(
    rng: &mut Rng,
    wt: WType,
    layout: Layout,
    epi: Epilogue,
    (n, k, t): (usize, usize, usize),
) -> Vec<(String, ScalarType, Vec<u8>)> {
    let mut inputs = vec![];
    let prefixes: &[&str] = match epi {
        Epilogue::Swiglu | Epilogue::SwigluQ8 => &["gate_w", "up_w"],
        Epilogue::Plain
        | Epilogue::Residual
        | Epilogue::ResidualNorm
        | Epilogue::ResidualSquares => &["w"],
        Epilogue::Qkv => return qkv_inputs(rng, wt, layout, (n, n, k, t)),
        Epilogue::QkvCache => unreachable!("the cache epilogue has its own cases"),
    };
    for p in prefixes {
        inputs.extend(weight_inputs(rng, wt, layout, p, n, k));
    }
    if wt.is_quant() {
        let (q, s) = host::q8_1(rng, t, k, true);
        inputs.push(("xq".into(), ScalarType::U8, q));
        inputs.push(("xs".into(), ScalarType::U32, s));
    } else {
        inputs.push(floats("x", ScalarType::F32, &host::floats(rng, t * k)));
    }
    if matches!(epi, Epilogue::Residual | Epilogue::ResidualNorm | Epilogue::ResidualSquares) {
        inputs.push(floats("res", ScalarType::F32, &host::floats(rng, t * n)));
    }
    inputs
}

/// The inputs of a `_res_rmsnorm` case: the residual GEMV's, with rows of `y` as
/// `rmsnorm_q8_1s_f32`'s cases make them (token 1 zeros: its activations and residual zero;
/// token 2 with a NaN and token 3 with a value near `f32::MAX`, through the residual), and the
/// norm's gain near 1 (`n` values).
pub(crate) fn res_norm_inputs(
    rng: &mut Rng,
    wt: WType,
    layout: Layout,
    (n, k, t): (usize, usize, usize),
) -> Vec<(String, ScalarType, Vec<u8>)> {
    let mut inputs = dense_inputs(rng, wt, layout, Epilogue::ResidualNorm, (n, k, t));
    for (name, _, bytes) in &mut inputs {
        let row = |per_token: usize| per_token..2 * per_token;
        match name.as_str() {
            "xq" if t > 1 => bytes[row(k)].fill(0),
            "xs" if t > 1 => bytes[row(k / QK as usize * 4)].fill(0),
            "res" => {
                let mut res: Vec<f32> =
                    bytes.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
                if t > 1 {
                    res[row(n)].fill(0.0);
                }
                if t > 2 {
                    res[2 * n + n / 3] = f32::NAN;
                }
                if t > 3 {
                    res[3 * n + n / 2] = 3.0e38;
                }
                *bytes = res.iter().flat_map(|v| v.to_le_bytes()).collect();
            }
            _ => {}
        }
    }
    let w: Vec<f32> = (0..n).map(|_| 1.0 + rng.normal(0.1)).collect();
    inputs.push(floats("weight", ScalarType::F32, &w));
    inputs
}

/// The `_res_rmsnorm` cases: `n` a multiple of 32 (an odd number of blocks: SmolLM2's 576 and
/// 4064), `k` not a multiple of 256, `t` = 1, 2, 3, 4, 5, 8 and 11 (two passes of the tail; the
/// rows of [`res_norm_inputs`]); `large` adds the other `t` up to 8, the longest row (4096, two
/// vectors a lane of the norm) and model widths.
pub(crate) fn res_norm_cases(rng: &mut Rng, large: bool, wt: WType, layout: Layout) -> Vec<Case> {
    // A few shapes a run (the families are not in the engine's default step, and each case
    // runs every variant at two wave sizes in CI; the unit test
    // `the_res_norm_gemvs_equal_the_gemv_then_the_norm` checks them against the unfused pair).
    let mut shapes: Vec<(usize, usize, usize)> = [1, 4, 8].map(|t| (576, 416, t)).to_vec();
    shapes.extend([(32, 32, 1), (32 * 7, 32, 3), (4064, 96, 5), (96, 4096 + 32, 2), (160, 96, 11)]);
    if large {
        shapes.extend((2..=7).filter(|t| *t != 4).map(|t| (576, 416, t)));
        shapes.extend([(4096, 64, 8), (4096, 4096, 1), (4096, 14336, 8), (576, 1536, 8)]);
    }
    shapes
        .into_iter()
        .map(|(n, k, t)| Case {
            name: format!("n={n} k={k} t={t}"),
            scalars: vec![
                u32s("n", n as u32),
                u32s("k", k as u32),
                u32s("t", t as u32),
                ("eps".into(), ScalarType::F32, 1e-5f32.to_bits() as u64),
            ],
            inputs: res_norm_inputs(rng, wt, layout, (n, k, t)),
        })
        .collect()
}

/// The inputs of a Q/K/V case: `q_w` with `n_q` rows, `k_w` and `v_w` with `n_kv`, activations.
pub(crate) fn qkv_inputs(
    rng: &mut Rng,
    wt: WType,
    layout: Layout,
    (n_q, n_kv, k, t): (usize, usize, usize, usize),
) -> Vec<(String, ScalarType, Vec<u8>)> {
    let mut inputs = vec![];
    for (p, rows) in [("q_w", n_q), ("k_w", n_kv), ("v_w", n_kv)] {
        inputs.extend(weight_inputs(rng, wt, layout, p, rows, k));
    }
    let (q, s) = host::q8_1(rng, t, k, true);
    inputs.push(("xq".into(), ScalarType::U8, q));
    inputs.push(("xs".into(), ScalarType::U32, s));
    inputs
}

/// The Q/K/V cases: every `t` in 1..=8 with odd `n_q` and `n_kv` and `k` not a multiple of 256,
/// SmolLM2's 576 / 192, one row each, and more K/V rows than Q rows (a workgroup then runs
/// several row blocks); `large` adds model widths.
pub(crate) fn qkv_cases(rng: &mut Rng, large: bool, wt: WType, layout: Layout) -> Vec<Case> {
    let mut shapes: Vec<(usize, usize, usize, usize)> = (1..=8).map(|t| (37, 13, 416, t)).collect();
    shapes.extend([(9, 3, 32, 1), (1, 1, 32, 2), (5, 11, 32 * 13, 3), (576, 192, 576, 2)]);
    if large {
        shapes.extend([(576, 192, 576, 8), (4097, 1025, 4096, 1)]);
    }
    shapes
        .into_iter()
        .map(|(n_q, n_kv, k, t)| Case {
            name: format!("n_q={n_q} n_kv={n_kv} k={k} t={t}"),
            scalars: vec![
                u32s("n_q", n_q as u32),
                u32s("n_kv", n_kv as u32),
                u32s("k", k as u32),
                u32s("t", t as u32),
            ],
            inputs: qkv_inputs(rng, wt, layout, (n_q, n_kv, k, t)),
        })
        .collect()
}

/// The cache-writing Q/K/V cases (`_qkv_cache`, with `norm` the `_norm` family's inputs):
/// SmolLM2's shape, head dims 32, 64 and 128, partial rotation, every `t` in 1..=8, tokens
/// past `ctx_max` (not written), a cache of random bytes (every other row must stay as it was).
pub(crate) fn qkv_cache_cases(
    rng: &mut Rng,
    large: bool,
    wt: WType,
    layout: Layout,
    norm: bool,
) -> Vec<Case> {
    // (n_q, n_kv_heads, head_dim, k, t, pos, ctx_max, n_dims)
    let mut shapes: Vec<(usize, usize, usize, usize, usize, u32, usize, u32)> = vec![
        (576, 3, 64, 576, 1, 5, 16, 64),
        (37, 2, 32, 416, 2, 0, 8, 32),
        (40, 1, 64, 416, 3, 4, 9, 32),
        (9, 1, 128, 32, 4, 100, 130, 128),
        (64, 2, 64, 96, 5, 7, 20, 64),
        (32, 1, 32, 64, 6, 1, 5, 16),
        (33, 3, 32, 32 * 13, 7, 0, 7, 32),
        (96, 1, 64, 128, 8, 2, 30, 64),
    ];
    if large {
        shapes
            .extend([(4096, 8, 128, 4096, 1, 1000, 2048, 128), (576, 3, 64, 576, 8, 60, 512, 64)]);
    }
    shapes
        .into_iter()
        .map(|(n_q, heads, hd, k, t, pos, ctx, n_dims)| {
            let mut inputs = qkv_inputs(rng, wt, layout, (n_q, heads * hd, k, t));
            let mut scalars = vec![
                u32s("n_q", n_q as u32),
                u32s("n_kv_heads", heads as u32),
                u32s("head_dim", hd as u32),
                u32s("k", k as u32),
                u32s("t", t as u32),
                u32s("pos", pos),
                u32s("ctx_max", ctx as u32),
                u32s("n_dims", n_dims),
                ("base".into(), ScalarType::F32, 10_000f32.to_bits() as u64),
            ];
            if norm {
                inputs.retain(|(name, _, _)| name != "xq" && name != "xs");
                inputs.extend(norm_inputs(rng, t, k));
                scalars.push(("eps".into(), ScalarType::F32, 1e-5f32.to_bits() as u64));
            }
            for c in ["k_cache", "v_cache"] {
                let bytes =
                    (0..heads * ctx * hd / QK as usize * 34).map(|_| rng.next_u64() as u8).collect();
                inputs.push((c.into(), ScalarType::U8, bytes));
            }
            let name = format!(
                "n_q={n_q} heads={heads} head_dim={hd} k={k} t={t} pos={pos} ctx_max={ctx} n_dims={n_dims}"
            );
            Case { name, scalars, inputs }
        })
        .collect()
}

/// One matrix's inputs named with `prefix`.
pub(crate) fn weight_inputs(
    rng: &mut Rng,
    wt: WType,
    layout: Layout,
    prefix: &str,
    rows: usize,
    k: usize,
) -> Vec<(String, ScalarType, Vec<u8>)> {
    let bytes = host::weights(rng, wt, rows, k, true);
    match (layout, wt) {
        (Layout::Ggml, WType::F16) => vec![(prefix.into(), ScalarType::F16, bytes)],
        (Layout::Ggml, WType::Bf16) => vec![(prefix.into(), ScalarType::BF16, bytes)],
        (Layout::Ggml, WType::Q8_0 | WType::Q4_0 | WType::Q4_1) => {
            vec![(prefix.into(), ScalarType::U8, bytes)]
        }
        (Layout::Repacked, _) => {
            let (q, s) = host::repack(wt, &bytes);
            vec![
                (format!("{prefix}q"), ScalarType::U8, q),
                (format!("{prefix}s"), wt.scale_type(), s),
            ]
        }
    }
}

/// Odd `n`, `k` not a multiple of 256, every `t` in 1..=8; `large` adds a model width.
pub(crate) fn dense_cases(
    rng: &mut Rng,
    large: bool,
    wt: WType,
    layout: Layout,
    epi: Epilogue,
) -> Vec<Case> {
    match epi {
        Epilogue::Qkv => return qkv_cases(rng, large, wt, layout),
        Epilogue::ResidualNorm => return res_norm_cases(rng, large, wt, layout),
        Epilogue::ResidualSquares => unreachable!("the squares epilogue has its own cases"),
        Epilogue::Plain
        | Epilogue::Residual
        | Epilogue::Swiglu
        | Epilogue::SwigluQ8
        | Epilogue::QkvCache => {}
    }
    let mut shapes: Vec<(usize, usize, usize)> = (1..=8).map(|t| (37, 416, t)).collect();
    shapes.extend([(1, 32, 1), (5, 32, 3), (67, 4096 + 32, 5)]);
    if large {
        shapes.extend([(4097, 4096, 1), (1000, 4096, 8)]);
    }
    if epi == Epilogue::SwigluQ8 {
        // A workgroup quantizes 32 rows: n is a multiple of 32 (refused otherwise).
        shapes.iter_mut().for_each(|s| s.0 = s.0.div_ceil(32) * 32);
    }
    shapes
        .into_iter()
        .map(|(n, k, t)| Case {
            name: format!("n={n} k={k} t={t}"),
            scalars: vec![u32s("n", n as u32), u32s("k", k as u32), u32s("t", t as u32)],
            inputs: dense_inputs(rng, wt, layout, epi, (n, k, t)),
        })
        .collect()
}

/// The norm families' cases: the unfused family's weights with f32 rows `x` (`t x k`) and a gain
/// for the prologue in place of the Q8_1 activations; rows as `rmsnorm_q8_1s_f32`'s cases (one
/// of zeros, one with a NaN, one with a value near `f32::MAX`), SmolLM2's 576 (18 blocks, an
/// odd number), its FFN's 1536 and `k` up to the longest the prologue takes, every `t` in 1..=8.
pub(crate) fn norm_cases(
    rng: &mut Rng,
    large: bool,
    wt: WType,
    layout: Layout,
    epi: Epilogue,
) -> Vec<Case> {
    // (rows: n_q or n, n_kv, k, t)
    let mut shapes: Vec<(usize, usize, usize, usize)> =
        (1..=8).map(|t| (37, 13, 32 * 13, t)).collect();
    shapes.extend([(9, 3, 32, 1), (40, 8, 576, 2), (5, 11, 1536, 5), (64, 192, 576, 8)]);
    if large {
        shapes.extend([(576, 192, 576, 1), (576, 192, 576, 8), (33, 9, 4096, 3)]);
    }
    shapes
        .into_iter()
        .map(|(n, n_kv, k, t)| {
            let (mut inputs, mut scalars) = match epi {
                Epilogue::Qkv | Epilogue::QkvCache => (
                    qkv_inputs(rng, wt, layout, (n, n_kv, k, t)),
                    vec![u32s("n_q", n as u32), u32s("n_kv", n_kv as u32)],
                ),
                Epilogue::ResidualNorm | Epilogue::ResidualSquares => {
                    unreachable!("the residual norm epilogues have their own cases")
                }
                Epilogue::Plain | Epilogue::Residual | Epilogue::Swiglu | Epilogue::SwigluQ8 => {
                    // The quantizing epilogue takes whole blocks of rows.
                    let n = if epi == Epilogue::SwigluQ8 { n.div_ceil(32) * 32 } else { n };
                    (dense_inputs(rng, wt, layout, epi, (n, k, t)), vec![u32s("n", n as u32)])
                }
            };
            inputs.retain(|(name, _, _)| name != "xq" && name != "xs");
            inputs.extend(norm_inputs(rng, t, k));
            scalars.extend([
                u32s("k", k as u32),
                u32s("t", t as u32),
                ("eps".into(), ScalarType::F32, 1e-5f32.to_bits() as u64),
            ]);
            let name = match epi {
                Epilogue::Qkv => format!("n_q={n} n_kv={n_kv} k={k} t={t}"),
                _ => format!("n={} k={k} t={t}", scalars[0].2),
            };
            Case { name, scalars, inputs }
        })
        .collect()
}

/// The prologue's inputs: `t` rows of `k` as `rmsnorm_q8_1s_f32`'s cases make them (a zero row,
/// a NaN, a huge value) and a gain near 1.
pub(crate) fn norm_inputs(rng: &mut Rng, t: usize, k: usize) -> Vec<(String, ScalarType, Vec<u8>)> {
    let x = crate::rmsnorm::q8_1s_rows(rng, t, k);
    let w: Vec<f32> = (0..k).map(|_| 1.0 + rng.normal(0.1)).collect();
    vec![floats("x", ScalarType::F32, &x), floats("weight", ScalarType::F32, &w)]
}
