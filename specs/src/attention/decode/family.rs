//! The decode-attention families: their variants, routes (first admitted wins), budgets, parity
//! and bench cases. The kernels are [`super::attention_io`]'s.

use super::cases::{bench_cases, i8_bench_cases, parity_cases};
use super::{attention_io, fused, i8, short, CacheType, Io, Shape, THREADS};
use crate::{Bench, Budget, KernelSpec, Parity, VariantSpec};
use kiln_ir::package::Admission;
use kiln_ir::{Kernel, Target};

/// Builds one variant: cache type (`Q8`: Q8_0, else f16), head dim `D`, rows `R`, `N` lanes a
/// workgroup (`N = 0`: the baseline, one wave), `FUSED` ([`Io::RopeQ8_1s`]).
fn build<const Q8: bool, const D: u32, const R: u32, const N: u32, const FUSED: bool>(
    t: &Target,
    wave: u32,
) -> Kernel {
    let cache = if Q8 { CacheType::Q8_0 } else { CacheType::F16 };
    let shape = Shape {
        rows: R,
        waves: (N / wave).max(1),
        baseline: N == 0,
        threads: N,
        short: false,
        async_k: false,
        across: None,
    };
    attention_io(t, wave, cache, D, shape, Io::of(FUSED))
}

/// Builds an `rR` variant of 128 lanes whose K chunks come by async copies
/// ([`Shape::async_k`]).
fn build_async<const Q8: bool, const D: u32, const R: u32>(t: &Target, wave: u32) -> Kernel {
    let cache = if Q8 { CacheType::Q8_0 } else { CacheType::F16 };
    let shape = Shape {
        rows: R,
        waves: THREADS / wave,
        baseline: false,
        threads: THREADS,
        short: false,
        async_k: true,
        across: None,
    };
    attention_io(t, wave, cache, D, shape, Io::Plain)
}

/// Builds an `rRxP` variant (Q8_0, head dim `D`, `R` rows a workgroup, [`Shape::across`]): the
/// 4 splits of a group, each across `P` waves (`P = 0`: `D / 32`, a block a wave, named `rRx`).
/// At wave 64 (gfx9, where the gfx906 build spilled SGPRs) the name builds `rR`'s code.
fn build_across<const D: u32, const R: u32, const P: u32, const FUSED: bool>(
    t: &Target,
    wave: u32,
) -> Kernel {
    let p = if P == 0 { D / 32 } else { P };
    if wave != 32 {
        let mut k = build::<true, D, R, THREADS, FUSED>(t, wave);
        k.name.push('x');
        if P != 0 {
            k.name.push_str(&P.to_string());
        }
        return k;
    }
    super::across::kernel(t, p, R, D, Io::of(FUSED))
}

/// Builds a `short` variant (Q8_0, head dim `D`, `R` rows a workgroup: `short` has
/// [`short::ROWS`], `short_r1` one; `N` lanes).
fn build_short<const D: u32, const R: u32, const N: u32, const FUSED: bool>(
    t: &Target,
    wave: u32,
) -> Kernel {
    let nvidia = t.family == kiln_ir::target::Family::Nvidia;
    // The wide workgroup on NVIDIA only where its register cap fits without spilling
    // ([`short::WIDE_NVIDIA_ARCHS`]); elsewhere there this name builds the 256-lane code (not
    // routed there).
    let wide_fits = !nvidia || short::WIDE_NVIDIA_ARCHS.contains(&t.name);
    let n = if N > short::THREADS && !wide_fits { short::THREADS } else { N };
    let shape = Shape {
        rows: R,
        waves: n / wave,
        baseline: false,
        threads: n,
        short: true,
        async_k: false,
        across: None,
    };
    let mut k = attention_io(t, wave, CacheType::Q8_0, D, shape, Io::of(FUSED));
    if n > short::THREADS && nvidia {
        k.max_registers = Some(t.registers_for_workgroup(n));
    }
    k
}

/// Where head dim 64's one-token calls on Q8_0 caches take `r1x`: from this position on ...
pub const R1X_FROM_POS: u64 = 512;
/// ... on the archs it was measured on.
pub const R1X_ARCHS: &[&str] = &["sm_90"];

/// The variants of a family and their routes (the fused families share them, so both route a
/// call alike); parity and bench cases are the caller's.
pub(super) fn family<const Q8: bool, const D: u32, const FUSED: bool>(
    name: &'static str,
    parity: Parity,
    bench: Bench,
) -> KernelSpec {
    let max = u64::from(u32::MAX);
    let admit = |shapes: Vec<(String, u64, u64)>| Admission { archs: vec![], shapes };
    let v = |name, build: crate::BuildFn, admit| VariantSpec { name, build, admit };
    // Q8_0 at head dim 64 takes `r1` past the short contexts, for every T: in the SmolLM2-shaped
    // decode graph on the H200 (9 q / 3 kv) it beat the router's `r4t256` / `r8` at 512, 1024
    // and 2048 keys, one token a step (1337 / 1246 / 1248 against 1224 / 1168 / 1144 tokens/s)
    // and in the prompt's 8-token steps (bench/results/engine-h200-2026-12-01.md): a workgroup
    // a row has the least serial work, and the rows' repeated K/V reads come from L2. Head dim
    // 128 keeps the measured `r4t256` / `r8` (the 32 q / 8 kv shape at 4K and 32K).
    // (`r1t256`, `r1` with 256 lanes loading its first chunk before q, was timed in that step
    // by forcing its route and dropped: 537 -> 601 us at ~587 positions, 607 -> 623 at ~2013,
    // Q4_1; bench/results/bias-h200-2026-12-04.md, call 3.)
    let r1_first = Q8 && D == 64;
    let r1 = || v("r1", build::<Q8, D, 1, THREADS, FUSED>, Admission::default());
    KernelSpec {
        name,
        variants: vec![v("baseline", build::<Q8, D, 1, 0, FUSED>, Admission::default())]
            .into_iter()
            // Short contexts first (Q8_0: the 256 lanes' LDS, as `r4t256`): a workgroup a row
            // for one or two tokens (three times the workgroups of `short` at group 3, each
            // with a third of the serial work: a short context is latency bound), else four.
            .chain(Q8.then(|| {
                let shapes = vec![
                    ("n_tokens".into(), 1, short::R1_MAX_TOKENS),
                    ("pos".into(), 0, short::MAX_POS),
                ];
                v("short_r1", build_short::<D, 1, { short::THREADS }, FUSED>, admit(shapes))
            }))
            .chain(Q8.then(|| {
                let shapes = vec![("group".into(), 2, max), ("pos".into(), 0, short::MAX_POS)];
                v(
                    "short",
                    build_short::<D, { short::ROWS }, { short::THREADS }, FUSED>,
                    admit(shapes),
                )
            }))
            // One token past 512 positions at head dim 64: the split across two waves
            // ([`super::across`], `r1x`), each wave the dot products of one of the row's two
            // blocks, so a split's chain is half as long. In SmolLM2's decode step on the H200
            // (bench/results/across-2026-12-05.md, calls 4-6, against the routes of the time in
            // the same calls): at ~587 positions the Q4_1 step 571.0 against `short_r1t640`'s
            // 605.6 us and Q8_0 535.0 against 591.2; at ~1094 574.5 / 558.0 against `r1`'s
            // 625.9 / 595.0; at ~2013 573.2 / 563.6 against `r1`'s 642.1 / 608.5. At ~173
            // `short_r1` keeps it (535.7 against 557.4 us). Decode steps only (one token):
            // the prompt's 8-token steps were not timed with it. Routed where measured
            // ([`R1X_ARCHS`]); elsewhere `kiln bench` times it and the router does not take it.
            .chain((Q8 && D == 64).then(|| {
                let shapes = vec![("n_tokens".into(), 1, 1), ("pos".into(), R1X_FROM_POS, max)];
                let archs = R1X_ARCHS.iter().map(|a| a.to_string()).collect();
                v("r1x", build_across::<D, 1, 0, FUSED>, Admission { archs, shapes })
            }))
            // Past the short contexts at head dim 64 (SmolLM2's 9 q / 3 kv): `short_r1` with 640
            // lanes (20 waves, 96 registers on sm_90, 44.8 KB of LDS), so every split of up to
            // 632 positions has its wave and the states stay in LDS (no `partials` round trip, no
            // counter). On the H200 (bench/results/engine-h200-2026-12-02b.md, 587 positions,
            // against `r1` forced in the same call): the Q4_1 step 597.9 against 617.3 us (decode
            // 1675 against 1606 tokens/s), the Q8_0 step 603.3 against 593.3 (1652 against 1658
            // tokens/s); the node alone 7.01 us against `r1`'s 6.32 (nine workgroups on nine SMs:
            // in the step the next node's workgroups start beside them). Routed where it was
            // measured and fits (`short::WIDE_NVIDIA_ARCHS`).
            .chain((Q8 && D == 64).then(|| {
                let shapes = vec![
                    ("n_tokens".into(), 1, short::R1_MAX_TOKENS),
                    ("pos".into(), 0, u64::from(short::WIDE_THREADS - 8)),
                ];
                let archs = short::WIDE_NVIDIA_ARCHS.iter().map(|a| a.to_string()).collect();
                let admit = Admission { archs, shapes };
                v("short_r1t640", build_short::<D, 1, { short::WIDE_THREADS }, FUSED>, admit)
            }))
            .chain(r1_first.then(r1))
            .chain([v(
                "r8",
                build::<Q8, D, 8, THREADS, FUSED>,
                admit(vec![("n_tokens".into(), 6, 8)]),
            )])
            // 256 lanes only for Q8_0 (eight f16 chunks need 64 KiB of LDS).
            .chain(Q8.then(|| {
                v("r4t256", build::<Q8, D, 4, 256, FUSED>, admit(vec![("group".into(), 2, max)]))
            }))
            .chain([v(
                "r4",
                build::<Q8, D, 4, THREADS, FUSED>,
                admit(vec![("group".into(), 2, max)]),
            )])
            .chain((!r1_first).then(r1))
            // `r8` with the K chunks by async copies, double-buffered (sm_80+; the plain staging
            // elsewhere). After `r1`, which admits every call: `kiln bench` times it, the router
            // does not take it. On the H200 (bench/results/balance-h200-2026-12-03.md, call 4)
            // the fastest at 32K keys with 4 rows (177.98 us against the routed 205.96 and
            // `r4t256`'s 188.34), slower than the routes at 32K with 1 and 8 rows and at 4K:
            // routing it needs the tuner's buckets re-timed with it. Q8_0 at head dim 128 only
            // (the bench shape). Not kept: `r1a` (slower than `r1` everywhere) and `r4a` (spills
            // 32 bytes on sm_90: the chunk's V rows preloaded beside the copies).
            .chain(
                (Q8 && D == 128 && !FUSED)
                    .then(|| v("r8a", build_async::<Q8, D, 8>, Admission::default())),
            )
            // A split across `D / W` waves ([`super::across`]): a `P`-th of the serial work a
            // split and `P` times the waves, for the latency-bound calls (one row a KV head's
            // pass at 4K keys, SmolLM2's step at ~2013 positions). After `r1`, so `kiln bench`
            // times them and the router does not take them: head dim 64's `r1x` is routed above;
            // at head dim 128 the tuner's `x` knob routes the same code (`tuned_t1_short` and
            // `tuned_t1_long` of sm_90 are `r4x2`'s knobs: 12.72 / 49.10 us against `r4t256`'s
            // 13.01 / 58.00 at 4K / 32K keys on the H200, bench/results/across-2026-12-05.md).
            .chain(
                (Q8 && D != 64)
                    .then(|| v("r1x", build_across::<D, 1, 0, FUSED>, Admission::default())),
            )
            .chain(Q8.then(|| v("r4x", build_across::<D, 4, 0, FUSED>, Admission::default())))
            // Two waves a split at head dim 128 (two blocks a wave, two dimensions a lane):
            // 256 lanes a workgroup, two workgroups an H200 SM where `r4x`'s 512 lanes fit one.
            .chain(
                (Q8 && D == 128)
                    .then(|| v("r4x2", build_across::<D, 4, 2, FUSED>, Admission::default())),
            )
            .collect(),
        parity,
        bench,
        archs: None,
        budgets: vec![Budget {
            kernel: name.to_string(),
            archs: vec!["gfx1100".into(), "gfx1201".into()],
            max_vgprs: Some(MAX_VGPRS_RDNA),
            max_scratch: None,
            max_spills: None,
            variants: vec![],
        }],
    }
}

/// VGPR budget of every variant on gfx1100 and gfx1201 (wave 32, a 1536-register file a SIMD):
/// two waves a SIMD allow the architectural 256 (R8 uses 165 to 228, R4 up to 225; LDS, not
/// registers, is what limits their occupancy there: docs/attention.md).
pub const MAX_VGPRS_RDNA: u32 = 256;

/// A plain family's cases: [`parity_cases`], and the bench at head dim 128.
fn plain<const Q8: bool, const D: u32>(name: &'static str) -> KernelSpec {
    let parity = Parity::Buffers(|rng, large| parity_cases(rng, large, Q8, D));
    let bench = if D == 128 {
        Bench::Cases(|| bench_cases(if Q8 { CacheType::Q8_0 } else { CacheType::F16 }))
    } else {
        Bench::Without("timed at head dim 128 (the issue's 32 q / 8 kv shape)")
    };
    family::<Q8, D, false>(name, parity, bench)
}

/// Builds a variant of the i8 order ([`i8`]) at head dim `D`: `V` 0 `baseline`, 1 `mma`, 2
/// `mma_lds`, 3 `mma8`, 4 `mma8_lds`, 5 `mma8a`.
fn build_i8<const D: u32, const V: u8>(t: &Target, wave: u32) -> Kernel {
    use i8::Staging::{Async, Cache, Lds};
    let tile = i8::TILE_ROWS;
    match V {
        0 => i8::baseline_kernel(t, wave, D),
        1 => i8::mma_kernel(t, wave, D, tile, Cache),
        2 => i8::mma_kernel(t, wave, D, tile, Lds),
        3 => i8::mma_kernel(t, wave, D, tile / 2, Cache),
        4 => i8::mma_kernel(t, wave, D, tile / 2, Lds),
        _ => i8::mma_kernel(t, wave, D, tile / 2, Async),
    }
}

/// A family of the i8 order: the plain Q8_0 family's ABI and parity cases; where the arch has
/// `mma` (NVIDIA sm_80+) `mma8` routed (and at head dim 128 `mma8a` first for one or two tokens
/// from about 4K keys and for eight from 16K), else the baseline.
///
/// Measured on an H100 (bench/results/i8-routes-h100-2026-12-06.md, us, 32 q / 8 kv heads):
/// `mma8` beat `mma` at every case (4K T = 8 69.3 against 110.8; 32K T = 1 / 4 / 8 94.5 / 112.2
/// / 196.0 against 94.3 / 172.7 / 252.3), and `mma8_lds` was faster still at 32K with 1 and 8
/// tokens (69.6, 184.6) and slower with 4 (130.5). On the H200 (2026-12-01) `mma8` had beaten
/// `mma` at 4K with 4 and 8 tokens too (50.1 / 71.0 against 80.0 / 102.6). Until then `mma8`
/// was routed only where `T group <= 8` (one tile) and `mma` elsewhere. `mma8_lds` is also
/// ahead with one token at 4K: 27.7 against 30.0-30.4 us in two H100 calls of 2026-12-06 (two
/// runs each; bench/results/i8-combine-2026-12-06.md), 27.6 against 31.8 on the H200
/// (2026-12-01), so since then it took one or two tokens from `pos` 4000 (was 16384).
///
/// With step 3 in two levels (thirty-ninth session, bench/results/i8-groups-2026-12-06.md, H100,
/// two runs): `mma8_lds` / `mma8` 4K T = 1 19.1 / 22.1-22.3, T = 4 34.1-34.2 / 26.4, T = 8 45.9 /
/// 42.2-42.4; 32K T = 1 60.0 / 87.4, T = 4 103.9-104.1 / 95.1-95.3, T = 8 148.8-149.9 /
/// 168.1-170.4. So `mma8_lds` was listed twice: for one or two tokens from `pos` 4000, and for
/// eight from `pos` 16384 (measured at 32760 only; 5-7 tokens are not measured and take `mma8`).
///
/// `mma8a` (forty-first session, bench/results/i8-async-2026-12-06.md, H100, four runs):
/// `mma8a` / `mma8_lds` 4K T = 1 13.4-14.2 / 14.6-15.1, 32K T = 1 39.7-39.9 / 49.1-50.0, but
/// 32K T = 8 137.6-140.1 / 121.6-125.8 and 4K T = 4, 8 24.0-25.2, 38.1-40.3 (`mma8` 20.4-21.1,
/// 31.1-32.8). So `mma8a` takes the one- and two-token admission, `mma8_lds` keeps eight.
///
/// The committed `mma8a` (168 registers, 12 warps an SM; the one above had 176) on the H200
/// (forty-second session, bench/results/h200-2026-12-06b.md, two runs): 32K T = 8 113.1-114.1
/// against `mma8_lds` 123.4-123.6 and `mma8` 131.8-132.1, so `mma8a` takes eight tokens from 16K
/// as well (listed twice) and `mma8_lds` is only forced. At 32K T = 4 it ties `mma8` (74.5
/// against 73.5-74.1), at 4K T = 8 it is behind (32.7 against 31.6-31.7): `mma8` keeps them.
fn i8_family<const D: u32>(name: &'static str) -> KernelSpec {
    let v = |name, build: crate::BuildFn, admit| VariantSpec { name, build, admit };
    let mma = |shapes| Admission { archs: i8::mma_archs(), shapes };
    // K and V chunks staged in LDS by async copies: at head dim 128 for one or two tokens from
    // about 4K keys (the 4K bench case is at `pos` 4095; the figures above) and for eight from
    // 16K (the variant listed twice); at head dim 64 last, so only taken when forced (for the
    // bench). `mma8_lds` (staged by loads) is only forced.
    let long = vec![("n_tokens".to_string(), 1, 2), ("pos".to_string(), 4000, u32::MAX as u64)];
    let eight = vec![("n_tokens".to_string(), 8, 8), ("pos".to_string(), 16384, u32::MAX as u64)];
    let staged: Vec<VariantSpec> = if D == 128 {
        vec![v("mma8a", build_i8::<D, 5>, mma(long)), v("mma8a", build_i8::<D, 5>, mma(eight))]
    } else {
        vec![v("mma8a", build_i8::<D, 5>, mma(vec![]))]
    };
    let mut variants = vec![
        v("baseline", build_i8::<D, 0>, Admission::default()),
        // Tiles of 8 rows, as many as `T group` needs.
        v("mma8", build_i8::<D, 3>, mma(vec![])),
        // After `mma8`, which takes every call: for the bench. Tiles of 16 rows, and 8 rows
        // staged by loads.
        v("mma", build_i8::<D, 1>, mma(vec![])),
        v("mma_lds", build_i8::<D, 2>, mma(vec![])),
        v("mma8_lds", build_i8::<D, 4>, mma(vec![])),
    ];
    let at = if D == 128 { 1 } else { variants.len() };
    variants.splice(at..at, staged);
    KernelSpec {
        name,
        variants,
        parity: Parity::Buffers(|rng, large| parity_cases(rng, large, true, D)),
        bench: if D == 128 {
            Bench::Cases(i8_bench_cases)
        } else {
            Bench::Without("timed at head dim 128 (the issue's 32 q / 8 kv shape)")
        },
        archs: None,
        budgets: vec![Budget {
            kernel: name.to_string(),
            archs: vec!["gfx1100".into(), "gfx1201".into()],
            max_vgprs: Some(MAX_VGPRS_RDNA),
            max_scratch: None,
            max_spills: None,
            variants: vec![],
        }],
    }
}

/// The four plain families, the two of the i8 order ([`i8`]) and the two fused ones
/// ([`fused`]).
pub fn specs() -> Vec<KernelSpec> {
    vec![
        plain::<true, 64>("attention_decode_q8_0_d64"),
        plain::<true, 128>("attention_decode_q8_0_d128"),
        plain::<false, 64>("attention_decode_f16_d64"),
        plain::<false, 128>("attention_decode_f16_d128"),
        i8_family::<64>("attention_decode_q8_0_i8_d64"),
        i8_family::<128>("attention_decode_q8_0_i8_d128"),
        fused::spec::<64>(),
        fused::spec::<128>(),
    ]
}
