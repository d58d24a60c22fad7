//! The prefill families' parity cases (random caches by quantizing random values), the bounded
//! device-against-interpreter comparison, the bench shapes and their FLOPs.

use super::Io;
use crate::attention::decode::cache_bytes;
use crate::attention::CacheType;
use crate::bench::{f32_arg, u32_arg, BenchCase};
use crate::cases::{floats, u32s, Case, Rng};
use half::f16;
use kiln_ir::ScalarType;

/// One case: `(pos, L, n_kv, group, ctx_max)`.
pub type CaseShape = (u32, u32, u32, u32, u32);

/// L = 1 and 17 with 32 q / 8 kv and 9 q / 3 kv heads (a prefix before the chunk, a cache
/// larger than the context, and one filled to the end); at head dim 64, L = 512 with one KV head
/// of one q head and L = 33 (two `m32` tiles); at 128, L = 129 with 2 q heads (the interpreter's
/// time: `kiln parity` runs every case on every variant); `large` adds 4096 + 5 with 32 q / 8 kv
/// and 9 q / 3 kv heads.
pub fn case_shapes(large: bool, d: u32) -> Vec<CaseShape> {
    let mut v = vec![
        (0, 1, 8, 4, 1),
        (37, 1, 3, 3, 40),
        (0, 17, 3, 3, 17),
        (5, 17, 8, 4, 30),
        (20, 17, 3, 3, 37),
    ];
    if d == 64 {
        v.push((3, 512, 1, 1, 515));
        v.push((100, 33, 2, 2, 140));
    } else {
        v.push((9, 129, 1, 2, 140));
    }
    if large {
        v.push((0, 4101, 8, 4, 4101));
        v.push((7, 4101, 3, 3, 4200));
    }
    v
}

/// The inputs of one case (also what `bench/prefill_ref.py` builds on its side), with `q` of
/// `q_type` (f16 or bf16: the same random values, rounded to it).
pub fn case(rng: &mut Rng, cache: CacheType, d: u32, q_type: ScalarType, shape: CaseShape) -> Case {
    let (pos, l, kv, g, ctx) = shape;
    let nq = (l * kv * g * d) as usize;
    let q: Vec<f32> = (0..nq).map(|_| rng.normal(1.0)).collect();
    let ncache = (kv * ctx * d) as usize;
    let kx: Vec<f32> = (0..ncache).map(|_| rng.normal(1.0)).collect();
    let vx: Vec<f32> = (0..ncache).map(|_| rng.normal(1.0)).collect();
    let scale = 1.0 / (d as f32).sqrt();
    Case {
        name: format!("pos={pos} L={l} kv={kv} group={g} ctx_max={ctx}"),
        scalars: vec![
            u32s("pos", pos),
            u32s("n_tokens", l),
            u32s("n_kv_heads", kv),
            u32s("group", g),
            u32s("ctx_max", ctx),
            ("scale".into(), ScalarType::F32, u64::from(scale.to_bits())),
        ],
        inputs: vec![
            floats("q", q_type, &q),
            ("k_cache".into(), cache.elem(), cache_bytes(cache, &kx)),
            ("v_cache".into(), cache.elem(), cache_bytes(cache, &vx)),
        ],
    }
}

/// The parity cases of a family: [`case_shapes`], and for the `_qbf16` and `_of16` families
/// only those with L <= 17 (`large`: and L = 4101). Their code is the f16 / f32 family's but
/// for the Q loads and the `out` store, which every case exercises. The longer cases cost the
/// lanes fallback about 10 s a variant in the interpreter, in every CI run.
pub(super) fn parity_cases(rng: &mut Rng, large: bool, q8: bool, d: u32, io: Io) -> Vec<Case> {
    let cache = if q8 { CacheType::Q8_0 } else { CacheType::F16 };
    case_shapes(large, d)
        .into_iter()
        .filter(|s| io == Io::F16_F32 || s.1 <= 17 || s.1 > 4096)
        .map(|s| case(rng, cache, d, io.q, s))
        .collect()
}

/// The dequantized values of a cache (what the kernel multiplies, before its f16 rounding).
pub fn dequantize(cache: CacheType, bytes: &[u8]) -> Vec<f32> {
    match cache {
        CacheType::Q8_0 => bytes
            .chunks_exact(34)
            .flat_map(|blk| {
                let d = f16::from_le_bytes([blk[0], blk[1]]).to_f32();
                blk[2..].iter().map(move |&q| q as i8 as f32 * d)
            })
            .collect(),
        CacheType::F16 => {
            bytes.chunks_exact(2).map(|h| f16::from_le_bytes([h[0], h[1]]).to_f32()).collect()
        }
    }
}

/// The bound of the device against the interpreter: `|out_dev - out_interp| <= 2^-8 * max|v|`
/// over the case's V cache. Why: the two differ only in the matrix unit's sums. A score then
/// differs by at most `2^-16 sum_d |q_d k_d| * scale` (see [`crate::mma::check_f16`]), a few
/// 1e-4 here, which moves each weight `p` by that relative amount, and may flip the f16 rounding
/// of `p` (2^-11 relative) and of `o` chained through the instructions (2^-23 each); the output,
/// a convex combination of V rows, moves by at most about `2^-10 max|v|`; the bound keeps a
/// factor 4 over that. NaN and infinities must agree (none in these cases).
pub fn check(case: &Case, output: &str, reference: &[u8], device: &[u8]) -> Result<String, String> {
    within(case, output, reference, device, ScalarType::F32)
}

/// [`check`] for the `_of16` families: both sides rounded to f16 add at most half an f16 ulp
/// each (`2^-11` relative, at most `2^-11 max|v|`), so the bound is `(2^-8 + 2^-10) max|v|`.
pub fn check_f16(
    case: &Case,
    output: &str,
    reference: &[u8],
    device: &[u8],
) -> Result<String, String> {
    within(case, output, reference, device, ScalarType::F16)
}

/// `|out_dev - out_interp|` within the bound for `out` of type `ty` (f32 or f16).
fn within(
    case: &Case,
    output: &str,
    reference: &[u8],
    device: &[u8],
    ty: ScalarType,
) -> Result<String, String> {
    let v = case
        .inputs
        .iter()
        .find(|(n, _, _)| n == "v_cache")
        .ok_or_else(|| format!("case {}: no input `v_cache`", case.name))?;
    let cache = match v.1 {
        ScalarType::U8 => CacheType::Q8_0,
        _ => CacheType::F16,
    };
    let vmax = dequantize(cache, &v.2).iter().fold(0f32, |m, x| m.max(x.abs())) as f64;
    if reference.len() != device.len() {
        return Err(format!(
            "{output}: {} bytes from the interpreter, {} from the device",
            reference.len(),
            device.len()
        ));
    }
    let (size, bound) = match ty {
        ScalarType::F16 => (2, vmax * (2f64.powi(-8) + 2f64.powi(-10))),
        _ => (4, vmax * 2f64.powi(-8)),
    };
    let value = |c: &[u8]| match ty {
        ScalarType::F16 => f16::from_le_bytes([c[0], c[1]]).to_f32(),
        _ => f32::from_le_bytes(c.try_into().expect("4 bytes")),
    };
    let mut worst = 0f64;
    for (i, (r, x)) in reference.chunks_exact(size).zip(device.chunks_exact(size)).enumerate() {
        let (r, x) = (value(r), value(x));
        if !r.is_finite() || !x.is_finite() {
            if !(r.is_nan() && x.is_nan()) && r != x {
                return Err(format!("{output}[{i}]: interpreter {r}, device {x}"));
            }
            continue;
        }
        let diff = (r as f64 - x as f64).abs();
        if diff > bound {
            return Err(format!(
                "{output}[{i}]: interpreter {r:e}, device {x:e}: |difference| {diff:e} over the \
                 bound {bound:e} (max|v| {vmax:e})"
            ));
        }
        worst = worst.max(diff);
    }
    Ok(format!("max |difference| {worst:e}, {:.3} of the bound", worst / bound))
}

/// Bench lengths `L` (their case names: [`bench_names`]).
const BENCH_L: [u32; 5] = [512, 1024, 2048, 4096, 8192];

/// A family's bench case names, one a length of [`BENCH_L`] in its order.
macro_rules! bench_names {
    ($family:literal) => {
        [
            concat!($family, "_l512"),
            concat!($family, "_l1k"),
            concat!($family, "_l2k"),
            concat!($family, "_l4k"),
            concat!($family, "_l8k"),
        ]
    };
}

/// 32 q / 8 kv heads, head dim 128, L = 512, 1024, 2048, 4096, 8192 from position 0 (the cache
/// holds the chunk): bytes are Q and the K/V of the chunk read once and out written; the FLOPs
/// (causal, `4 n_q D L (L + 1) / 2`) are in `docs/prefill.md`. The harness fills the inputs with
/// random bytes (a Q8_0 scale may be inf or NaN: fine for timing).
pub(super) fn bench_cases(cache: CacheType, io: Io) -> Vec<BenchCase> {
    let names: [&'static str; 5] = match (cache, io.q, io.out) {
        (CacheType::Q8_0, ScalarType::BF16, _) => bench_names!("prefill_q8_0_qbf16"),
        (CacheType::F16, ScalarType::BF16, _) => bench_names!("prefill_f16_qbf16"),
        (CacheType::Q8_0, _, ScalarType::F16) => bench_names!("prefill_q8_0_of16"),
        (CacheType::F16, _, ScalarType::F16) => bench_names!("prefill_f16_of16"),
        (CacheType::Q8_0, _, _) => bench_names!("prefill_q8_0"),
        (CacheType::F16, _, _) => bench_names!("prefill_f16"),
    };
    let (kv, g, d) = (8u32, 4u32, 128u32);
    BENCH_L
        .iter()
        .zip(names)
        .map(|(&l, name)| {
            let cache_elems = (kv * l * cache.row_bytes(d) / cache.elem().bytes()) as usize;
            let qn = (l * kv * g * d) as u64;
            BenchCase {
                flops: Some(flops(u64::from(kv * g), u64::from(d), u64::from(l))),
                name,
                scalars: vec![
                    u32_arg("pos", 0),
                    u32_arg("n_tokens", l),
                    u32_arg("n_kv_heads", kv),
                    u32_arg("group", g),
                    u32_arg("ctx_max", l),
                    f32_arg("scale", 1.0 / (d as f32).sqrt()),
                ],
                inputs: vec![
                    ("q", io.q, qn as usize),
                    ("k_cache", cache.elem(), cache_elems),
                    ("v_cache", cache.elem(), cache_elems),
                ],
                bytes: 2 * u64::from(kv * l * cache.row_bytes(d))
                    + qn * u64::from(io.q.bytes() + io.out.bytes()),
                values: vec![],
            }
        })
        .collect()
}

/// FLOPs of a causal prefill from position 0 (QK^T and PV, two a multiply-add).
pub fn flops(n_q: u64, d: u64, l: u64) -> u64 {
    4 * n_q * d * l * (l + 1) / 2
}
