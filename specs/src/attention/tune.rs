//! The knob space of decode attention for `kiln tune`: rows a workgroup (`r`: the query rows of
//! a KV head that share each K/V read), lanes a workgroup (`n`: a wave a split) and whether the
//! K chunks come by async copies into two LDS buffers a wave (`a`: [`Shape::async_k`], Q8_0
//! caches only: two f16 chunks a wave do not fit the LDS with the rest) and across how many
//! waves a split runs (`x`: 0, one; else [`Shape::across`], Q8_0 at wave 32, 128 lanes a group:
//! the `rRx` variants). The family's order
//! (chunks of `W` keys, at most [`super::decode::MAX_SPLITS`] splits, the maximum-first combine)
//! depends on none of them, so every candidate gives the baseline's bits; the gate checks it.
//!
//! Buckets: one row, 2-5, 6-8, at a short and a long context. The head-dim-128 families are
//! timed at the issue's shape (32 q / 8 kv heads, 4K and 32K keys); the head-dim-64 ones at
//! SmolLM2-135M's (9 q / 3 kv heads, 512 and 2048 keys: the engine's contexts).

use super::decode::{attention, Io, Shape};
use super::CacheType;
use crate::bench::{f32_arg, u32_arg, BenchCase};
use crate::tune::{Bucket, Knob, TuneSpace};
use kiln_ir::{Kernel, ScalarType, Target};

/// A candidate: `r` rows and `n` lanes a workgroup, K chunks by async copies when `a` is 1, a
/// split across `x` waves when `x` is not 0 (then `n` is the 128 lanes of a group's waves at one
/// wave a split: the workgroup has `128 x`).
fn build<const Q8: bool, const D: u32>(t: &Target, wave: u32, k: &[u32]) -> Result<Kernel, String> {
    let (rows, threads, async_k, parts) = (k[0], k[1], k[2] == 1, k[3]);
    if parts > 0 {
        if !Q8 || wave != 32 || async_k || threads != super::decode::THREADS {
            return Err(format!(
                "a split across waves is built for Q8_0 at wave 32, staged K, n = {} (here {}, \
                 wave {wave}, a{}, n{threads})",
                super::decode::THREADS,
                if Q8 { "Q8_0" } else { "f16" },
                k[2]
            ));
        }
        if !(D / 32).is_multiple_of(parts) {
            return Err(format!(
                "{parts} waves a split at head dim {D}: a wave takes whole blocks of 32 dimensions"
            ));
        }
        if rows > 4 {
            return Err(format!(
                "{rows} rows a split across waves: the staged chunks, the blocks' sums and the \
                 weights pass the 48 KiB of LDS at head dim 128"
            ));
        }
        return Ok(super::decode::across::kernel(t, parts, rows, D, Io::Plain));
    }
    if threads < super::decode::THREADS {
        return Err(format!(
            "{threads} lanes are less than the {} of a group of the combine",
            super::decode::THREADS
        ));
    }
    if !Q8 && threads > 128 {
        // Eight f16 chunks a workgroup need 64 KiB of LDS.
        return Err(format!("{threads} lanes of f16 chunks do not fit the LDS"));
    }
    if async_k && (!Q8 || threads > super::decode::THREADS) {
        // Two K buffers a wave: with f16 chunks, or eight waves, past the 48 KiB a workgroup.
        return Err(format!(
            "two K chunks a wave (async copies) for {threads} lanes of {} do not fit the LDS",
            if Q8 { "Q8_0" } else { "f16" }
        ));
    }
    let cache = if Q8 { CacheType::Q8_0 } else { CacheType::F16 };
    let shape = Shape {
        rows,
        waves: threads / wave,
        baseline: false,
        threads,
        short: false,
        async_k,
        across: None,
    };
    Ok(attention(t, wave, cache, D, shape))
}

/// The timed call of a bucket: `t` rows at the end of a context of `ctx` keys.
fn case(cache: CacheType, d: u32, (kv, g): (u32, u32), ctx: u32, t: u32) -> BenchCase {
    let cache_elems = (kv * ctx * cache.row_bytes(d) / cache.elem().bytes()) as usize;
    let qn = (t * kv * g * d) as usize;
    BenchCase {
        flops: None,
        name: "attention_tune",
        scalars: vec![
            u32_arg("pos", ctx - t),
            u32_arg("n_tokens", t),
            u32_arg("n_kv_heads", kv),
            u32_arg("group", g),
            u32_arg("ctx_max", ctx),
            f32_arg("scale", 1.0 / (d as f32).sqrt()),
        ],
        inputs: vec![
            ("q", ScalarType::F32, qn),
            ("k_cache", cache.elem(), cache_elems),
            ("v_cache", cache.elem(), cache_elems),
        ],
        bytes: 2 * u64::from(kv * ctx * cache.row_bytes(d)) + 2 * qn as u64 * 4,
        values: vec![],
    }
}

fn space(
    family: &'static str,
    cache: CacheType,
    d: u32,
    build: crate::tune::TuneBuildFn,
) -> TuneSpace {
    let max = u64::from(u32::MAX);
    // (heads, short context, long context, the boundary between them).
    let (heads, short, long) = if d == 128 { ((8, 4), 4096, 32_768) } else { ((3, 3), 512, 2048) };
    let split = u64::from((short + long) / 2);
    let table: [(&'static str, (u64, u64, u32), bool); 6] = [
        ("t1_short", (1, 1, 1), false),
        ("t1_long", (1, 1, 1), true),
        ("t2_5_short", (2, 5, 4), false),
        ("t2_5_long", (2, 5, 4), true),
        ("t6_8_short", (6, 8, 8), false),
        ("t6_8_long", (6, 8, 8), true),
    ];
    let buckets = table
        .into_iter()
        .map(|(name, (lo, hi, t), is_long)| {
            let (pos, ctx) = if is_long { ((split, max), long) } else { ((0, split - 1), short) };
            Bucket {
                name,
                shapes: vec![("n_tokens".into(), lo, hi), ("pos".into(), pos.0, pos.1)],
                case: case(cache, d, heads, ctx, t),
            }
        })
        .collect();
    TuneSpace {
        family,
        knobs: vec![
            Knob { name: "r", values: vec![1, 4, 8], omitted: None },
            // At least 128 lanes: a workgroup holds whole groups of the combine's first
            // level (the splits of 128 lanes).
            Knob { name: "n", values: vec![128, 256], omitted: None },
            // K chunks by async copies (`cp.async` on sm_80+; the plain staging elsewhere,
            // so there a candidate with `a1` is its `a0` twin).
            Knob { name: "a", values: vec![0, 1], omitted: None },
            // A split across 2 or 4 waves (0: one wave; entries from before the knob: 0).
            Knob { name: "x", values: vec![0, 2, 4], omitted: Some(0) },
        ],
        buckets,
        build,
        fits: |_, _| true,
    }
}

/// The spaces of the four decode attention families.
pub fn tune_spaces() -> Vec<TuneSpace> {
    vec![
        space("attention_decode_q8_0_d128", CacheType::Q8_0, 128, build::<true, 128>),
        space("attention_decode_f16_d128", CacheType::F16, 128, build::<false, 128>),
        space("attention_decode_q8_0_d64", CacheType::Q8_0, 64, build::<true, 64>),
        space("attention_decode_f16_d64", CacheType::F16, 64, build::<false, 64>),
    ]
}
