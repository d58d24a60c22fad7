//! `attention_decode_rope_q8_0_d{64,128}_q8_1s`: decode attention with the two kernels that
//! stood on either side of it in a decoder layer folded in. A layer ran `rope_f32` (Q into a
//! rotated copy), the attention, then `quantize_q8_1s_f32` of its output for the output
//! projection's GEMV: three launches where the two small ones cost about a microsecond each of
//! pure launch latency in a decode graph. Here the attention rotates q as it loads it into LDS
//! and writes its output as split Q8_1: one launch, the same bytes.
//!
//! Bit for bit `quantize_q8_1s_f32(attention_decode_q8_0_d{D}(rope_f32(q)))`: the rotation is
//! `rope_f32`'s builder ([`super::super::rope::Rope`]) on the same element and its partner at the
//! same position, the attention is the plain family's code (every variant, the same order,
//! [`super`]), and the quantization is `quantize.rs`'s ([`crate::quantize::quantize_values`],
//! [`crate::quantize::ds_word`]) over the 32 lanes that hold a block of the output (a head is
//! `D / 32` whole blocks, so a workgroup that owns a row owns its blocks). The variants and
//! their routes are the plain family's, so a call routes alike.
//!
//! ABI (the plain family's, with `out` replaced and `rope_f32`'s scalars added):
//!
//! | param        | kind                                    | meaning                           |
//! |--------------|-----------------------------------------|-----------------------------------|
//! | `q`          | f32, read, `n_tokens*n_kv_heads*group*D`| `[T][n_q][D]`, not rotated        |
//! | `k_cache`, `v_cache` | u8, read                        | the Q8_0 caches, as the plain family |
//! | `xq`         | u8, write, like `q`                     | the output's Q8_1 quants          |
//! | `xs`         | u32, write, `n_tokens*n_kv_heads*group*D/32` | its scales, `d \| s << 16` a block |
//! | `pos`, `n_tokens`, `n_kv_heads`, `group`, `ctx_max`, `scale` | | as the plain family     |
//! | `head_dim`   | u32, `D`                                | `rope_f32`'s; any other is refused |
//! | `n_dims`     | u32, even                               | rotated dimensions (`rope_f32`)   |
//! | `base`       | f32                                     | the rope base                     |
//! | `neox`       | u32                                     | 0 normal, 1 neox pairing          |

use super::family;
use crate::attention::kv_append::quantize_q8_0_block;
use crate::attention::CacheType;
use crate::cases::{floats, u32s, Case, Rng};
use crate::{Bench, KernelSpec, Parity};
use kiln_ir::ScalarType;

/// The family's name at cache type `cache` and head dim `d`.
pub fn name(cache: CacheType, d: u32) -> String {
    format!("attention_decode_rope_{}_d{d}_q8_1s", cache.name())
}

/// The family at head dim `D` (64 or 128), Q8_0 cache.
pub fn spec<const D: u32>() -> KernelSpec {
    let name = match D {
        64 => "attention_decode_rope_q8_0_d64_q8_1s",
        128 => "attention_decode_rope_q8_0_d128_q8_1s",
        _ => panic!("the fused attention is built at head dims 64 and 128, not {D}"),
    };
    debug_assert_eq!(name, self::name(CacheType::Q8_0, D));
    family::<true, D, true>(
        name,
        Parity::Buffers(|rng, large| parity_cases(rng, large, D)),
        Bench::Without(
            "timed in the engine's decode step (`kiln generate --profile`): against the plain \
             family it saves two launches, not bandwidth",
        ),
    )
}

/// One case: `(pos, T, ctx_max, n_dims, neox)`.
type FusedShape = (u32, u32, u32, u32, u32);

/// The cases: at head dim 64 SmolLM2's heads (9 q / 3 kv), contexts 1, 7 (T = 1..7), 200
/// (T = 1..8), the `short` variant's edge (256 keys, and 257: its fallback), 4099 (65 chunks
/// at wave 64, 129 at wave 32: two chunks a split) with 1 and 8 rows; both pairings, one
/// partial rotation, two bases. At head dim 128 (8 q / 2 kv heads) a few short contexts.
/// `large` adds 32K keys.
pub fn fused_shapes(large: bool, d: u32) -> Vec<FusedShape> {
    let mut v: Vec<FusedShape> = vec![];
    if d == 64 {
        v.push((0, 1, 1, 64, 0));
        v.extend((1..=7).map(|t| (7 - t, t, 7 + t % 3, 64, t % 2)));
        v.extend((1..=8).map(|t| (200 - t, t, 203, if t == 5 { 32 } else { 64 }, (t + 1) % 2)));
        v.extend([(248, 8, 256, 64, 1), (254, 3, 260, 64, 0)]);
        v.extend([(4098, 1, 4099, 64, 1), (4091, 8, 4102, 64, 0)]);
    } else {
        v.extend([
            (0, 1, 3, 128, 1),
            (3, 4, 7, 64, 0),
            (192, 8, 200, 128, 1),
            (254, 3, 257, 128, 0),
        ]);
    }
    if large {
        v.extend([(32_767, 1, 32_768, d, 1), (32_760, 8, 32_768, d, 0)]);
    }
    v
}

/// `(n_kv_heads, group)` of the cases at head dim `d`.
pub fn fused_heads(d: u32) -> (u32, u32) {
    if d == 64 {
        (3, 3)
    } else {
        (2, 4)
    }
}

/// The rope base of case `i` (SmolLM2's and llama's).
pub fn fused_base(i: usize) -> f32 {
    if i.is_multiple_of(2) {
        100_000.0
    } else {
        10_000.0
    }
}

fn parity_cases(rng: &mut Rng, large: bool, d: u32) -> Vec<Case> {
    let (kv, g) = fused_heads(d);
    fused_shapes(large, d)
        .into_iter()
        .enumerate()
        .map(|(i, (pos, t, ctx, nd, neox))| {
            let q: Vec<f32> = (0..t * kv * g * d).map(|_| rng.normal(1.0)).collect();
            let n = (kv * ctx * d) as usize;
            let mut cache = || -> Vec<u8> {
                let x: Vec<f32> = (0..n).map(|_| rng.normal(1.0)).collect();
                x.chunks(32).flat_map(quantize_q8_0_block).collect()
            };
            let (k_cache, v_cache) = (cache(), cache());
            let scale = 1.0 / (d as f32).sqrt();
            let base = fused_base(i);
            Case {
                name: format!(
                    "ctx={} pos={pos} T={t} kv={kv} group={g} ctx_max={ctx} n_dims={nd} base={base} {}",
                    pos + t,
                    if neox == 1 { "neox" } else { "normal" }
                ),
                scalars: vec![
                    u32s("pos", pos),
                    u32s("n_tokens", t),
                    u32s("n_kv_heads", kv),
                    u32s("group", g),
                    u32s("ctx_max", ctx),
                    ("scale".into(), ScalarType::F32, u64::from(scale.to_bits())),
                    u32s("head_dim", d),
                    u32s("n_dims", nd),
                    ("base".into(), ScalarType::F32, u64::from(base.to_bits())),
                    u32s("neox", neox),
                ],
                inputs: vec![
                    floats("q", ScalarType::F32, &q),
                    ("k_cache".into(), ScalarType::U8, k_cache),
                    ("v_cache".into(), ScalarType::U8, v_cache),
                ],
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::decode::{attention, Shape};
    use crate::attention::rope::rope;
    use crate::cases::{rng_for, run};
    use crate::gemv::quantize_split;
    use kiln_ir::Target;

    /// The fused families write, bit for bit, the quants and scales of
    /// `quantize_q8_1s_f32(attention_decode_q8_0_d{D}(rope_f32(q)))` (the plain baseline) on
    /// the interpreter at wave 32 (gfx1100) and 64 (gfx906), on the parity cases' shapes
    /// (contexts 1 to 4099, T = 1..8, both pairings, a partial rotation): the fused baseline and
    /// the routed variant on every case. `kiln parity` (scripts/test.sh, wave 32 and 64) holds
    /// every variant to the fused baseline on these very cases, so the other variants equal the
    /// unfused kernels too; running them here as well took 70 s of CI's 30 minutes.
    #[test]
    fn the_fused_kernel_equals_rope_then_attention_then_quantize() {
        let mut rng = rng_for("attention-rope-q8_1s", std::process::id() as u64);
        for d in [64u32, 128] {
            let fam = if d == 64 { spec::<64>() } else { spec::<128>() };
            let (kv, g) = fused_heads(d);
            for (arch, wave) in [("gfx1100", 32u32), ("gfx906", 64)] {
                let tg = Target::by_name(arch).unwrap();
                for case in parity_cases(&mut rng, false, d) {
                    let sc = |n: &str| case.scalars.iter().find(|s| s.0 == n).unwrap().clone();
                    let input = |n: &str| case.inputs.iter().find(|s| s.0 == n).unwrap().clone();
                    let t = sc("n_tokens").2 as u32;
                    let rope_scalars = vec![
                        sc("pos"),
                        sc("n_tokens"),
                        u32s("n_heads", kv * g),
                        sc("head_dim"),
                        sc("n_dims"),
                        sc("base"),
                        sc("neox"),
                    ];
                    let q = input("q");
                    let x = vec![("x".to_string(), q.1, q.2)];
                    let qr = run(&rope(tg, wave), &x, &rope_scalars)["out"].clone();
                    let baseline = Shape::BASELINE;
                    let plain = attention(tg, wave, CacheType::Q8_0, d, baseline);
                    let mut inputs = case.inputs.clone();
                    inputs[0] = ("q".to_string(), ScalarType::F32, qr);
                    let att = run(&plain, &inputs, &case.scalars)["out"].clone();
                    let n = u32s("n", t * kv * g * d);
                    let att = vec![("x".to_string(), ScalarType::F32, att)];
                    let want = run(&quantize_split(tg, wave, true), &att, &[n]);
                    // The fused kernels' counters start (and are left) zeroed.
                    let mut inputs = case.inputs.clone();
                    let counters = (kv * t * g * 4) as usize;
                    inputs.push(("counters".to_string(), ScalarType::U32, vec![0; counters]));
                    let routed = fam.variants.iter().find(|v| {
                        v.name != "baseline"
                            && v.admit.shapes.iter().all(|(n, lo, hi)| {
                                (*lo..=*hi)
                                    .contains(&case.scalars.iter().find(|s| &s.0 == n).unwrap().2)
                            })
                    });
                    let routed = routed.expect("a variant admits every call").name;
                    for v in
                        fam.variants.iter().filter(|v| v.name == "baseline" || v.name == routed)
                    {
                        let got = run(&(v.build)(tg, wave), &inputs, &case.scalars);
                        let at = format!("{} {} wave {wave}, {}", fam.name, v.name, case.name);
                        assert_eq!(got["xq"], want["xq"], "{at}: quants");
                        assert_eq!(got["xs"], want["xs"], "{at}: scales");
                    }
                }
            }
        }
    }

    /// The rotation is not a no-op on these cases: without it (q taken as rotated) the quants
    /// differ, so the test above sees a kernel that skips or misplaces it.
    #[test]
    fn the_rotation_changes_the_output() {
        let mut rng = rng_for("attention-rope-q8_1s-noop", 7);
        let tg = Target::by_name("gfx1100").unwrap();
        let case = &parity_cases(&mut rng, false, 64)[5];
        let fused = spec::<64>();
        let short = fused.variants.iter().find(|v| v.name == "short").unwrap();
        let got = run(&(short.build)(tg, 32), &case.inputs, &case.scalars);
        let baseline = Shape::BASELINE;
        let att =
            run(&attention(tg, 32, CacheType::Q8_0, 64, baseline), &case.inputs, &case.scalars);
        let n = (att["out"].len() / 4) as u32;
        let att = vec![("x".to_string(), ScalarType::F32, att["out"].clone())];
        let unrotated = run(&quantize_split(tg, 32, true), &att, &[u32s("n", n)]);
        assert_ne!(got["xq"], unrotated["xq"]);
    }
}
