//! The parity and bench cases of the decode attention families (their shapes, caches built by
//! quantizing random values, the bench shapes).

use crate::attention::kv_append::quantize_q8_0_block;
use crate::attention::CacheType;
use crate::bench::{f32_arg, u32_arg, BenchCase};
use crate::cases::{floats, u32s, Case, Rng};
use half::f16;
use kiln_ir::ScalarType;

/// One case: `(pos, T, n_kv, group, ctx_max)`.
type CaseShape = (u32, u32, u32, u32, u32);

/// T = 1..8 at contexts up to 10, then longer ones: 9 q / 3 kv heads at head dim 64 and
/// 32 q / 8 kv at 128; Q8_0 adds the `short` variant's boundary (256 and 257 keys). The
/// interpreter runs each case up to 17 times (8 variants, twice each, and the reference), so without `large` only `attention_decode_q8_0_d64` goes to 4099 keys (65
/// chunks: residue 0 folds chunks 0 and 64), with one row; every family has 108 or 69 keys
/// (two chunks) with 8 or 3 rows, and head dim 128 1099 keys with one row. `large` adds 4099 with 1, 5 and 8 rows and 32768 with 1
/// and 8 for every family.
pub fn case_shapes(large: bool, q8: bool, d: u32) -> Vec<CaseShape> {
    let (kv, g) = if d == 64 { (3, 3) } else { (8, 4) };
    let mut v: Vec<CaseShape> = [
        (0, 1, 3),
        (6, 1, 9),
        (5, 2, 7),
        (4, 3, 7),
        (3, 4, 8),
        (2, 5, 7),
        (1, 6, 10),
        (0, 7, 7),
        (0, 8, 8),
    ]
    .into_iter()
    .map(|(p, t, c)| (p, t, kv, g, c))
    .collect();
    if q8 {
        // The `short` variant's boundary: `THREADS` keys (every split in its wave, at wave 32
        // and 64) and one more (a pass more); T = 1..8 at head dim 64, 1 and 8 at 128; one
        // context clamped by `ctx_max`.
        let n = super::short::THREADS;
        let ts: &[u32] = if d == 64 { &[1, 2, 3, 4, 5, 6, 7, 8] } else { &[1, 8] };
        v.extend(ts.iter().map(|&t| (n - t, t, kv, g, n + 5)));
        v.extend([(n, 1, kv, g, n + 5), (n - 7, 8, kv, g, n + 5), (n + 20, 2, kv, g, n)]);
    }
    if d == 64 {
        v.push((100, 8, kv, g, 108));
        if q8 {
            v.push((4098, 1, kv, g, 4101));
        }
    } else {
        v.push((66, 3, kv, g, 70));
        // Past `GROUPED_ABOVE` splits at wave 32 (35: the combine's two levels, the last
        // group of 3); at wave 64 4099 keys at head dim 64 is (65 splits).
        v.push((1098, 1, kv, g, 1100));
    }
    if large {
        if !(d == 64 && q8) {
            v.push((4098, 1, kv, g, 4101));
        }
        v.extend([
            (4094, 5, kv, g, 4099),
            (4091, 8, kv, g, 4099),
            (32_767, 1, kv, g, 32_768),
            (32_760, 8, kv, g, 32_768),
        ]);
    }
    v
}

/// Builds the cache bytes of `n` rows of `d` values from `x` (Q8_0 blocks by ggml's rules, or
/// f16).
pub fn cache_bytes(cache: CacheType, x: &[f32]) -> Vec<u8> {
    match cache {
        CacheType::Q8_0 => x.chunks(32).flat_map(quantize_q8_0_block).collect(),
        CacheType::F16 => x.iter().flat_map(|&v| f16::from_f32(v).to_le_bytes()).collect(),
    }
}

pub(super) fn parity_cases(rng: &mut Rng, large: bool, q8: bool, d: u32) -> Vec<Case> {
    let cache = if q8 { CacheType::Q8_0 } else { CacheType::F16 };
    case_shapes(large, q8, d)
        .into_iter()
        .map(|(pos, t, kv, g, ctx)| {
            let nq = (t * kv * g * d) as usize;
            let q: Vec<f32> = (0..nq).map(|_| rng.normal(1.0)).collect();
            let ncache = (kv * ctx * d) as usize;
            let kx: Vec<f32> = (0..ncache).map(|_| rng.normal(1.0)).collect();
            let vx: Vec<f32> = (0..ncache).map(|_| rng.normal(1.0)).collect();
            let scale = 1.0 / (d as f32).sqrt();
            Case {
                name: format!("ctx={} pos={pos} T={t} kv={kv} group={g} ctx_max={ctx}", pos + t),
                scalars: vec![
                    u32s("pos", pos),
                    u32s("n_tokens", t),
                    u32s("n_kv_heads", kv),
                    u32s("group", g),
                    u32s("ctx_max", ctx),
                    ("scale".into(), ScalarType::F32, u64::from(scale.to_bits())),
                ],
                inputs: vec![
                    floats("q", ScalarType::F32, &q),
                    ("k_cache".into(), cache.elem(), cache_bytes(cache, &kx)),
                    ("v_cache".into(), cache.elem(), cache_bytes(cache, &vx)),
                ],
            }
        })
        .collect()
}

/// 32 q / 8 kv heads, head dim 128, contexts 4096 and 32768 (the goals; Q8_0 also 1K,
/// 2K, 8K and 16K, for time against context), T = 1, 4, 8: the K/V bytes of the context read
/// once, plus Q read and out written. The harness fills the caches with random bytes: a Q8_0
/// block's f16 scale may then be inf or NaN (fine for timing, not for values).
pub(super) fn bench_cases(cache: CacheType) -> Vec<BenchCase> {
    let names: &[(u32, [&'static str; 3])] = match cache {
        CacheType::Q8_0 => &[
            (1024, ["attn_q8_0_ctx1k_t1", "attn_q8_0_ctx1k_t4", "attn_q8_0_ctx1k_t8"]),
            (2048, ["attn_q8_0_ctx2k_t1", "attn_q8_0_ctx2k_t4", "attn_q8_0_ctx2k_t8"]),
            (4096, ["attn_q8_0_ctx4k_t1", "attn_q8_0_ctx4k_t4", "attn_q8_0_ctx4k_t8"]),
            (8192, ["attn_q8_0_ctx8k_t1", "attn_q8_0_ctx8k_t4", "attn_q8_0_ctx8k_t8"]),
            (16_384, ["attn_q8_0_ctx16k_t1", "attn_q8_0_ctx16k_t4", "attn_q8_0_ctx16k_t8"]),
            (32_768, ["attn_q8_0_ctx32k_t1", "attn_q8_0_ctx32k_t4", "attn_q8_0_ctx32k_t8"]),
        ],
        CacheType::F16 => &[
            (4096, ["attn_f16_ctx4k_t1", "attn_f16_ctx4k_t4", "attn_f16_ctx4k_t8"]),
            (32_768, ["attn_f16_ctx32k_t1", "attn_f16_ctx32k_t4", "attn_f16_ctx32k_t8"]),
        ],
    };
    named_bench_cases(cache, names)
}

/// [`bench_cases`] of the i8 order's family (Q8_0 head dim 128: the same shapes, contexts and
/// bytes).
pub(super) fn i8_bench_cases() -> Vec<BenchCase> {
    let names = [
        (1024, ["attn_q8_0_i8_ctx1k_t1", "attn_q8_0_i8_ctx1k_t4", "attn_q8_0_i8_ctx1k_t8"]),
        (2048, ["attn_q8_0_i8_ctx2k_t1", "attn_q8_0_i8_ctx2k_t4", "attn_q8_0_i8_ctx2k_t8"]),
        (4096, ["attn_q8_0_i8_ctx4k_t1", "attn_q8_0_i8_ctx4k_t4", "attn_q8_0_i8_ctx4k_t8"]),
        (8192, ["attn_q8_0_i8_ctx8k_t1", "attn_q8_0_i8_ctx8k_t4", "attn_q8_0_i8_ctx8k_t8"]),
        (16_384, ["attn_q8_0_i8_ctx16k_t1", "attn_q8_0_i8_ctx16k_t4", "attn_q8_0_i8_ctx16k_t8"]),
        (32_768, ["attn_q8_0_i8_ctx32k_t1", "attn_q8_0_i8_ctx32k_t4", "attn_q8_0_i8_ctx32k_t8"]),
    ];
    named_bench_cases(CacheType::Q8_0, &names)
}

/// The bench cases with their names (`(context, [T = 1, 4, 8])`).
fn named_bench_cases(cache: CacheType, names: &[(u32, [&'static str; 3])]) -> Vec<BenchCase> {
    let (kv, g, d) = (8u32, 4u32, 128u32);
    let mut v = vec![];
    for &(ctx, ref by_t) in names {
        for (ti, t) in [1u32, 4, 8].into_iter().enumerate() {
            let cache_elems = (kv * ctx * cache.row_bytes(d) / cache.elem().bytes()) as usize;
            let qn = (t * kv * g * d) as u64;
            v.push(BenchCase {
                flops: None,
                name: by_t[ti],
                scalars: vec![
                    u32_arg("pos", ctx - t),
                    u32_arg("n_tokens", t),
                    u32_arg("n_kv_heads", kv),
                    u32_arg("group", g),
                    u32_arg("ctx_max", ctx),
                    f32_arg("scale", 1.0 / (d as f32).sqrt()),
                ],
                inputs: vec![
                    ("q", ScalarType::F32, qn as usize),
                    ("k_cache", cache.elem(), cache_elems),
                    ("v_cache", cache.elem(), cache_elems),
                ],
                bytes: 2 * u64::from(kv * ctx * cache.row_bytes(d)) + 2 * qn * 4,
                values: vec![],
            });
        }
    }
    v
}
