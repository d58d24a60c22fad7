//! Quantized GEMV for decode: dense (`gemv_*`) and MoE (`gemv_moe_*`), the weight repack and the
//! split Q8_1 activation quantize they read.
//!
//! - [`format`]: weight formats (Q8_0, Q4_0, Q4_1, f16, bf16) and layouts (ggml's blocks, or
//!   repacked: quants 16-byte aligned, scales apart), block loads, and the one definition of a
//!   block's f32 arithmetic.
//! - [`dense`]: `gemv_<fmt>[_rp][_res|_swiglu]`, the order every variant keeps, variants `pN`.
//! - [`norm`] and [`res_norm`]: the norm folded in, before (`_norm`) or after
//!   (`_res_rmsnorm`) the GEMV.
//! - [`moe`]: `gemv_moe_<fmt>_rp`, per-token expert ids over stacked experts.
//! - [`repack`]: ggml blocks to the repacked layout.
//! - [`host`]: the cases' data.
//!
//! Every family here keeps the dense order, so the ggml and repacked layouts of the same bytes,
//! every `pN`, and each MoE output against the dense product of its expert are equal bit for
//! bit (tests below and `kiln parity`).

mod ahead;
mod cases;
pub mod dense;
pub mod format;
pub mod host;
pub mod k4;
pub mod moe;
pub mod norm;
mod qkv;
pub mod repack;
pub mod res_norm;
pub mod split_norm;
mod tile;
mod tune;
pub use tune::tune_spaces;

use crate::bench::{f32_arg, u32_arg, BenchCase};
use crate::cases::{floats, u32s, Case, Rng};
use crate::quantize::{build_body, Dest, Format, Source};
use crate::{Bench, BuildFn, KernelSpec, Parity, VariantSpec};
use cases::*;
use dense::{build, Epilogue, Gemv};
use format::{Layout, WType, QK};
use kiln_ir::package::Admission;
use kiln_ir::{Access, Kernel, KernelBuilder, ScalarType, ShapeExpr, Target};

/// The admission of `pN` in a family with variants `ps`: the `t` from just above the previous
/// variant's N up to N (the last takes every larger `t`).
pub(super) fn admit(ps: &[u32], p: u32) -> Admission {
    let mut distinct = ps.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let i = distinct.iter().position(|&x| x == p).expect("p is one of ps");
    let lo = if i == 0 { 1 } else { distinct[i - 1] as u64 + 1 };
    let hi = if i + 1 == distinct.len() { u32::MAX as u64 } else { p as u64 };
    Admission { archs: vec![], shapes: vec![("t".into(), lo, hi)] }
}

/// A dense family: `$name` (checked against [`dense::family_name_of`] by a test), its format,
/// layout, epilogue and the `pN` / `pNrR` variants (tokens a pass, rows a wave), admitted by `t`
/// in the order listed (see [`admit`]). `norm_family!` is the same with the norm prologue.
macro_rules! dense_family {
    ($($rest:tt)*) => { gemv_family!(false, $($rest)*) };
}
macro_rules! norm_family {
    ($($rest:tt)*) => { gemv_family!(true, $($rest)*) };
}
macro_rules! gemv_family {
    ($norm:literal, $name:literal, $wt:expr, $layout:expr, $epi:expr, [$(($vn:literal, $p:literal, $r:literal, $u:literal, $w:literal)),*], $bench:expr) => {{
        const PS: &[u32] = &[$($p),*];
        KernelSpec {
            name: $name,
            variants: vec![
                VariantSpec {
                    name: "baseline",
                    build: |t, w| build(t, w, Gemv { norm: $norm, ..Gemv::baseline($wt, $layout, $epi) }),
                    admit: Admission::default(),
                },
                $(VariantSpec {
                    name: $vn,
                    build: |t, w| build(t, w, Gemv { unroll: $u, waves: $w, norm: $norm, ..Gemv::tiled($wt, $layout, $epi, $p, $r) }),
                    admit: admit(PS, $p),
                },)*
            ],
            parity: Parity::Buffers(|rng, large| {
                if $epi == Epilogue::QkvCache {
                    qkv_cache_cases(rng, large, $wt, $layout, $norm)
                } else if $norm {
                    norm_cases(rng, large, $wt, $layout, $epi)
                } else {
                    dense_cases(rng, large, $wt, $layout, $epi)
                }
            }),
            bench: $bench,
            // The norm prologue, and the cache epilogue's three matrices in a 256-lane
            // workgroup, spill on the wave-64 archs (see `norm::archs`).
            archs: if $norm || $epi == Epilogue::QkvCache { Some(norm::archs()) } else { None },
            budgets: vec![],
        }
    }};
}

/// The families of this module.
pub fn specs() -> Vec<KernelSpec> {
    use Epilogue::{Plain, Qkv, QkvCache, Residual, ResidualNorm, Swiglu, SwigluQ8};
    use Layout::{Ggml, Repacked};
    use WType::{Bf16, F16, Q4_0, Q4_1, Q8_0};
    let mut v = vec![
        dense_family!(
            "gemv_q8_0",
            Q8_0,
            Ggml,
            Plain,
            [
                ("p1r2", 1, 2, 0, 0),
                ("p2r2", 2, 2, 0, 0),
                ("p4r4", 4, 4, 0, 0),
                ("p8r4", 8, 4, 0, 0)
            ],
            Bench::Cases(|| bench("gemv_q8_0"))
        ),
        dense_family!(
            "gemv_q4_0",
            Q4_0,
            Ggml,
            Plain,
            [
                ("p1r2", 1, 2, 0, 0),
                ("p2r2", 2, 2, 0, 0),
                ("p4r4", 4, 4, 0, 0),
                ("p8r4", 8, 4, 0, 0)
            ],
            Bench::Cases(|| bench("gemv_q4_0"))
        ),
        dense_family!(
            "gemv_q4_1",
            Q4_1,
            Ggml,
            Plain,
            [
                ("p1r2", 1, 2, 0, 0),
                ("p2r2", 2, 2, 0, 0),
                ("p4r4", 4, 4, 0, 0),
                ("p8r4", 8, 4, 0, 0)
            ],
            Bench::Cases(|| bench("gemv_q4_1"))
        ),
        dense_family!(
            "gemv_f16",
            F16,
            Ggml,
            Plain,
            [
                ("p1r4", 1, 4, 0, 0),
                ("p2r2", 2, 2, 0, 0),
                ("p4r2", 4, 2, 0, 0),
                ("p8r2", 8, 2, 0, 0)
            ],
            Bench::Cases(|| bench("gemv_f16"))
        ),
        dense_family!(
            "gemv_bf16",
            Bf16,
            Ggml,
            Plain,
            [
                ("p1r4", 1, 4, 0, 0),
                ("p2r2", 2, 2, 0, 0),
                ("p4r2", 4, 2, 0, 0),
                ("p8r2", 8, 2, 0, 0)
            ],
            Bench::Cases(|| bench("gemv_bf16"))
        ),
        dense_family!(
            "gemv_q8_0_rp",
            Q8_0,
            Repacked,
            Plain,
            [
                ("p1r2u8w2", 1, 2, 8, 2),
                ("p2r2", 2, 2, 0, 0),
                ("p4r2", 4, 2, 0, 0),
                ("p8r4", 8, 4, 0, 0)
            ],
            Bench::Cases(|| bench("gemv_q8_0_rp"))
        ),
        dense_family!(
            "gemv_q4_0_rp",
            Q4_0,
            Repacked,
            Plain,
            [("p1", 1, 1, 0, 0), ("p2r2", 2, 2, 0, 0), ("p4r2", 4, 2, 0, 0), ("p8r4", 8, 4, 0, 0)],
            Bench::Cases(|| bench("gemv_q4_0_rp"))
        ),
        dense_family!(
            "gemv_q4_1_rp",
            Q4_1,
            Repacked,
            Plain,
            [("p1", 1, 1, 0, 0), ("p2r2", 2, 2, 0, 0), ("p4r2", 4, 2, 0, 0), ("p8r4", 8, 4, 0, 0)],
            Bench::Cases(|| bench("gemv_q4_1_rp"))
        ),
        dense_family!(
            "gemv_q8_0_rp_res",
            Q8_0,
            Repacked,
            Residual,
            [
                ("p1u16w4", 1, 1, 16, 4),
                ("p2r2", 2, 2, 0, 0),
                ("p4r2", 4, 2, 0, 0),
                ("p8r4", 8, 4, 0, 0)
            ],
            Bench::Cases(|| bench("gemv_q8_0_rp_res"))
        ),
        dense_family!(
            "gemv_q4_0_rp_res",
            Q4_0,
            Repacked,
            Residual,
            [("p1", 1, 1, 0, 0), ("p2r2", 2, 2, 0, 0), ("p4r2", 4, 2, 0, 0), ("p8r4", 8, 4, 0, 0)],
            Bench::Without("timed as gemv_q8_0_rp_res: the same epilogue")
        ),
        dense_family!(
            "gemv_q4_1_rp_res",
            Q4_1,
            Repacked,
            Residual,
            [("p1", 1, 1, 0, 0), ("p2r2", 2, 2, 0, 0), ("p4r2", 4, 2, 0, 0), ("p8r4", 8, 4, 0, 0)],
            Bench::Without("timed as gemv_q8_0_rp_res: the same epilogue")
        ),
        // The residual GEMVs with the next norm in their last workgroup: the `_res` families'
        // variants and routes.
        dense_family!(
            "gemv_q8_0_rp_res_rmsnorm",
            Q8_0,
            Repacked,
            ResidualNorm,
            [
                ("p1u16w4", 1, 1, 16, 4),
                ("p2r2", 2, 2, 0, 0),
                ("p4r2", 4, 2, 0, 0),
                ("p8r4", 8, 4, 0, 0)
            ],
            Bench::Cases(|| bench("gemv_q8_0_rp_res_rmsnorm"))
        ),
        dense_family!(
            "gemv_q4_0_rp_res_rmsnorm",
            Q4_0,
            Repacked,
            ResidualNorm,
            [("p1", 1, 1, 0, 0), ("p2r2", 2, 2, 0, 0), ("p4r2", 4, 2, 0, 0), ("p8r4", 8, 4, 0, 0)],
            Bench::Without("timed as gemv_q8_0_rp_res_rmsnorm: the same epilogue")
        ),
        dense_family!(
            "gemv_q4_1_rp_res_rmsnorm",
            Q4_1,
            Repacked,
            ResidualNorm,
            [("p1", 1, 1, 0, 0), ("p2r2", 2, 2, 0, 0), ("p4r2", 4, 2, 0, 0), ("p8r4", 8, 4, 0, 0)],
            Bench::Without("timed as gemv_q8_0_rp_res_rmsnorm: the same epilogue")
        ),
        dense_family!(
            "gemv_q4_1_rp_swiglu",
            Q4_1,
            Repacked,
            Swiglu,
            [
                ("p1", 1, 1, 0, 0),
                ("p2", 2, 1, 0, 0),
                ("p3", 3, 1, 0, 0),
                ("p4", 4, 1, 0, 0),
                ("p5", 5, 1, 0, 0),
                ("p6", 6, 1, 0, 0),
                ("p7", 7, 1, 0, 0),
                ("p8", 8, 1, 0, 0)
            ],
            Bench::Without("timed as gemv_q4_0_rp_swiglu: the same epilogue")
        ),
        dense_family!(
            "gemv_q8_0_rp_swiglu",
            Q8_0,
            Repacked,
            Swiglu,
            [
                ("p1", 1, 1, 0, 0),
                ("p2", 2, 1, 0, 0),
                ("p3", 3, 1, 0, 0),
                ("p4", 4, 1, 0, 0),
                ("p5", 5, 1, 0, 0),
                ("p6", 6, 1, 0, 0),
                ("p7", 7, 1, 0, 0),
                ("p8", 8, 1, 0, 0)
            ],
            Bench::Cases(|| bench("gemv_q8_0_rp_swiglu"))
        ),
        dense_family!(
            "gemv_q4_0_rp_swiglu",
            Q4_0,
            Repacked,
            Swiglu,
            [
                ("p1", 1, 1, 0, 0),
                ("p2", 2, 1, 0, 0),
                ("p3", 3, 1, 0, 0),
                ("p4", 4, 1, 0, 0),
                ("p5", 5, 1, 0, 0),
                ("p6", 6, 1, 0, 0),
                ("p7", 7, 1, 0, 0),
                ("p8", 8, 1, 0, 0)
            ],
            Bench::Cases(|| bench("gemv_q4_0_rp_swiglu"))
        ),
    ];
    // One token: the block loop unrolled by 8 or 16 (LLVM's runtime unroll; a lane has only
    // `k / 32 / 32` blocks a row, so this puts all of them in flight before the first dot
    // product) with two or four waves a workgroup. Measured on the H200
    // (bench/results/gemv-t1-h200-2026-12-01.md, four calls): `gemv_q8_0_rp` `p1r2u8w2`
    // 15.56-15.75 us at N = 14336 (the previous routes' `p1r2u2` 17.2) and 5.88-5.91 at N = 4096
    // (`p1` 6.95); the residual GEMV `p1u16w2` 16.74-16.87 us at K = 14336 (`p1` 18.5-19.3),
    // `p1u16w4` 5.85 at K = 4096 (`p1` 7.0, `p1u16w2` 6.54): routed by `k`. Q4_0 / Q4_1 keep
    // `p1` (the same unrolls were 0.05-2 us slower there). The `_res_rmsnorm` family routes as
    // `_res` (the same GEMV).
    fn p1u16w2(t: &Target, w: u32, epi: Epilogue) -> Kernel {
        let g = Gemv::tiled(WType::Q8_0, Layout::Repacked, epi, 1, 1);
        build(t, w, Gemv { unroll: 16, waves: 2, ..g })
    }
    // A one-token variant routed by `k`, first in `family`'s list (after the baseline).
    let mut one_token_by_k = |family: &str, name, build, (klo, khi): (u64, u64)| {
        let f = v.iter_mut().find(|f| f.name == family).expect("registered above");
        let shapes = vec![("t".into(), 1, 1), ("k".into(), klo, khi)];
        f.variants
            .insert(1, VariantSpec { name, build, admit: Admission { archs: vec![], shapes } });
    };
    let long = (8192, u64::from(u32::MAX));
    one_token_by_k("gemv_q8_0_rp_res", "p1u16w2", |t, w| p1u16w2(t, w, Residual), long);
    one_token_by_k("gemv_q8_0_rp_res_rmsnorm", "p1u16w2", |t, w| p1u16w2(t, w, ResidualNorm), long);
    // One token over short rows (`k <= 1024`: at most one block a lane and row), four rows a
    // wave, so a lane has as many blocks in flight as at `k = 2048` with two. SmolLM2's LM head
    // (N = 49152, K = 576) on the H200 (bench/results/engine-h200-2026-12-02.md, weights
    // rotated): `p1r4w2` 12.31 us, `p1r2u8w2` 15.46, ggml's layout (`gemv_q8_0` `p1r2`) 13.40
    // (the 2-token tuned `p2r4u2w2`, 10.67, computes a second token: not routed at one).
    let p1r4w2: BuildFn = |t, w| {
        let g = Gemv::tiled(WType::Q8_0, Layout::Repacked, Plain, 1, 4);
        build(t, w, Gemv { waves: 2, ..g })
    };
    one_token_by_k("gemv_q8_0_rp", "p1r4w2", p1r4w2, (0, 1024));
    // A k4 variant admitted on `archs` (the baseline on every arch).
    let sm90 = || vec!["sm_90".to_string()];
    let k4v = |name, build: crate::BuildFn, archs| VariantSpec {
        name,
        build,
        admit: Admission { archs, shapes: vec![] },
    };
    v.push(KernelSpec {
        name: "gemv_q8_0_rp_k4",
        variants: vec![
            k4v("baseline", |t, w| k4::build(t, w, 0), vec![]),
            // Wide fragment loads, `g` groups of four blocks of a slot in flight (k4::build_wide): first where
            // the shape has a wide map (mma.sync m16n8k32 on sm_80+, WMMA gfx12, MFMA gfx942). Two
            // tiles a workgroup first: the fastest at N = 14336 for T = 1, 4 and 8 on the H200
            // (bench/results/gemv-k4-h200-2026-12-01.md). (Four tiles were slower still, 37-40
            // us, and spill under the cap on sm_86.)
            // Four groups in flight: the fastest on the H200 at every bench shape (N = 14336:
            // 18.14 / 19.05 / 20.28 us at T = 1 / 4 / 8 against `wide_t2_g1`'s 19.19 / 19.97 /
            // 21.01; N = 4096: 10.20 / 10.95 against 11.11 / 12.04;
            // bench/results/gemv-k4v-h200-2026-12-02.md; with the scales by tile 17.78 / 18.03 /
            // 18.35, bench/results/scales-h200-2026-12-03.md). Routed on sm_90 alone (measured
            // there); where four groups spill it is built with one (k4::DEEP_ARCHS).
            // (One tile, two groups, the next iteration's loads carried in registers,
            // `wide_t1_g2p`, 244 registers on sm_90, was routed first for n <= 4096 from
            // 2026-12-03 (N = 4096: 8.17 / 9.52 us at T = 1 / 8; at N = 14336 25.8 / 31.2 against
            // 18.0 / 20.1; bench/results/balance-h200-2026-12-03.md, call 3) until `wide_t2_g4`
            // with its first trip before the wait passed it (7.29 / 7.78 against 7.59 / 8.94,
            // bench/results/early-h200-2026-12-03.md, call 2); removed with the eight-slot order.)
            // Eight waves a workgroup, a slot each (k4::build_wide8), where the call has eight
            // slots (`n <= 8192`: k4::slots_for), a wave's whole first trip (four groups)
            // loaded before the grid-dependency wait: at N = 4096 on the H200 5.51 / 6.07 us at
            // T = 1 / 8, against 7.33 / 7.79 for `wide_t2_g4` under the four-slot order (the
            // eighteenth session); two groups (`wide_t1_g2_w8`, 5.88 / 7.32) and two tiles
            // (`wide_t2_g2_w8`, 6.05 / 6.82) were slower and are not kept
            // (bench/results/slots-h200-2026-12-03.md). Routed on every arch with a wide map
            // (measured on sm_90 only): at those `n` the four-wave variants take the `mma`
            // body (they are built for four slots).
            VariantSpec {
                name: "wide_t1_g4_w8",
                build: |t, w| k4::build_wide8(t, w, 1, 4),
                admit: Admission {
                    archs: k4::wide_archs(),
                    shapes: vec![("n".to_string(), 16, k4::MANY_SLOTS_UP_TO as u64)],
                },
            },
            k4v("wide_t2_g4", |t, w| k4::build_wide(t, w, 2, 4), sm90()),
            // Built 2026-12-05 (twenty-ninth session, no device lent): not timed, so after
            // `wide_t1_g4_w8`, which admits the same calls (bench and parity run them). Eight
            // waves under a register cap low enough that two calls' workgroups share an SM (at
            // 128 registers two of `wide_t1_g4_w8`'s fill an H200 SM's registers, so under
            // programmatic launch the next call's workgroups cannot start, and stream their
            // first trip, until these leave), holding one group and asking L2 for the rest of
            // the slot before the wait (k4::build_wide8_ahead).
            // Admitted on sm_90 only, where `wide_t1_g4_w8` and `wide_t2_g4` before them take
            // every call: never routed. (Until 2026-12-06 they admitted every arch, and so took
            // every call on the archs without a wide map and the calls past 8192 rows on the
            // wide archs other than sm_90; test `the_k4_measurement_variants_are_never_routed`.)
            k4v("wide_t1_g1_w8_r64", |t, w| k4::build_wide8_ahead(t, w, 1, 1, 64), sm90()),
            k4v("wide_t1_g1_w8_r80", |t, w| k4::build_wide8_ahead(t, w, 1, 1, 80), sm90()),
            // Built 2026-12-07 (forty-eighth session), not yet timed, so after the routed
            // `wide_t1_g4_w8` and `wide_t2_g4` (never routed): their held blocks' weight scales
            // loaded before the wait too, and with `x` their activation scales staged in LDS
            // after it (k4::build_wide_hs).
            k4v("wide_t1_g4_w8_hs", |t, w| k4::build_wide_hs(t, w, (1, 4), true, false), sm90()),
            k4v("wide_t1_g4_w8_hsx", |t, w| k4::build_wide_hs(t, w, (1, 4), true, true), sm90()),
            k4v("wide_t2_g4_hs", |t, w| k4::build_wide_hs(t, w, (2, 4), false, false), sm90()),
            k4v("wide_t2_g4_hsx", |t, w| k4::build_wide_hs(t, w, (2, 4), false, true), sm90()),
            // (`wide_t2_g4` that also asked L2 for the rest of each wave's slot before the wait,
            // `wide_t2_g4_a`, was slower on an H100: 31.2-31.8 us at N = 14336, T = 1 / 4 / 8,
            // against 23.2-24.1; removed. bench/results/h100-2026-12-07.md)
            // (The weight quants by async copies into LDS (`cp.async`), each lane its own
            // 16-byte chunks, some before the grid-dependency wait, were slower on an H100 at
            // every bench case: a ring of two to four trips (`ring_t1_s3_r64` and four
            // others) 4-25% at N = 14336 and 5-7% at N = 4096, and `wide_t2_g4` with the rest
            // of its first trip staged so (`wide_t2_g4_s`) 5%; removed.
            // bench/results/ring-2026-12-07.md)
            // (Eight waves over two tiles, so that a call's workgroups read the activations
            // half as often after the wait (`wide_t2_g2_w8`, `wide_t2_g1_w8`, and
            // `wide_t2_g4_w8_h32_r255` holding its whole slot under a cap of 255), were 0.5-8%
            // slower on an H100 at N = 4096 (9.09-9.80 us at T = 1 against 9.04) but the last
            // at T = 8 (9.81 against 9.90); `wide_t2_g4` holding all or three quarters of its
            // first trip across the wait under a cap of 255 / 160 (8 / 12 warps an SM) was
            // 14-21% slower at N = 14336. Removed. bench/results/held-2026-12-07.md)
            // (`wide_t1_g4_w8` and `wide_t2_g4` whose waves asked L2 for their slot's weight
            // scales before the wait (ptxas sinks those loads past it), `_ps`, were 0.7-4%
            // slower on an H100. Removed. bench/results/pdl-floor-2026-12-07.md, call 3)
            // (`wide_t1_g4_w8` with two row groups a workgroup one after another, half the
            // workgroups so that two calls' fit an SM at once, the second pass one group in
            // flight (more spilled under the cap of 128), `wide_t1_g4_w8_s2`, was slower on an
            // H100: 14.25 / 15.43 us at N = 4096, T = 1 / 8, against 9.06 / 9.80; removed.
            // bench/results/passes-h100-2026-12-06.md)
            k4v("wide_t2_g1", |t, w| k4::build_wide(t, w, 2, 1), k4::wide_archs()),
            k4v("wide_t1_g1", |t, w| k4::build_wide(t, w, 1, 1), k4::wide_archs()),
            k4v("wide_t1_g2", |t, w| k4::build_wide(t, w, 1, 2), k4::wide_archs()),
            k4v("mma", |t, w| k4::build(t, w, 1), k4::mma_archs()),
            // (One tile with four and three groups in flight, `wide_t1_g4` / `_g3` (126 / 128
            // registers on sm_90), twice the workgroups of `wide_t2_g4`, so that N = 14336's
            // 896 fall on the 132 SMs in finer units, were slower on the H200: 19.8 / 21.6 /
            // 24.5 us at T = 1 / 4 / 8 against 18.1 / 18.9 / 20.1; removed.
            // bench/results/tail-h200-2026-12-03.md, call 3)
            // (Four tiles, `mma_t4`, was slower, 32.6-35.7 us on the H200, and spills on gfx90a
            // with the tile layout's addressing: removed.)
            k4v("mma_t2", |t, w| k4::build(t, w, 2), k4::mma_archs()),
            // (With the scales by tile, the shapes that had lost while L1 was the bottleneck were
            // timed again on the H200, bench only: one tile with four / three groups
            // (`wide_t1_g4` / `_g3`), two tiles with two / three (`wide_t2_g2` / `_g3`), and the
            // pipelined one-group bodies (`wide_t2_g1p` / `wide_t1_g1p`): at N = 14336, T = 8,
            // 20.59 / 22.11 / 18.95 / 20.16 / 21.25 / 24.41 us against `wide_t2_g4`'s 18.36; none
            // won a bench shape; not kept. bench/results/scales-h200-2026-12-03.md, call 2)
            // (Two tiles with two and four groups in flight, `wide_t2_g2` / `_g4`, were timed on
            // the H200 at N = 14336: 19.17 / 18.27 us at T = 1, 21.38 / 20.24 at T = 8 against
            // this order's 19.35 / 21.01; the 4% at T = 8 did not pay for spills on sm_86,
            // gfx1100 and gfx1201 under the cap: removed. bench/results/pipeline-h200-2026-12-02.md)
        ],
        parity: Parity::Buffers(k4_cases),
        bench: Bench::Cases(|| bench("gemv_q8_0_rp_k4")),
        archs: None,
        budgets: vec![],
    });
    // Q, K and V in one launch (the attention's input projections): the plain GEMV's tiles,
    // but two rows a wave for 8 tokens (four spill 4 registers on gfx906: three copies of the
    // row block in one kernel).
    v.push(dense_family!(
        "gemv_q8_0_rp_qkv",
        Q8_0,
        Repacked,
        Qkv,
        [("p1", 1, 1, 0, 0), ("p2r2", 2, 2, 0, 0), ("p4r2", 4, 2, 0, 0), ("p8r2", 8, 2, 0, 0)],
        Bench::Without("timed in the engine's decode step (kiln generate --profile)")
    ));
    v.push(dense_family!(
        "gemv_q4_0_rp_qkv",
        Q4_0,
        Repacked,
        Qkv,
        [("p1", 1, 1, 0, 0), ("p2r2", 2, 2, 0, 0), ("p4r2", 4, 2, 0, 0), ("p8r2", 8, 2, 0, 0)],
        Bench::Without("timed in the engine's decode step (kiln generate --profile)")
    ));
    v.push(dense_family!(
        "gemv_q4_1_rp_qkv",
        Q4_1,
        Repacked,
        Qkv,
        [("p1", 1, 1, 0, 0), ("p2r2", 2, 2, 0, 0), ("p4r2", 4, 2, 0, 0), ("p8r2", 8, 2, 0, 0)],
        Bench::Without("timed in the engine's decode step (kiln generate --profile)")
    ));
    // (`p1` for one token was timed on the H200 and not kept: 45.41 us against `p2`'s 33.97 at
    // N = 14336, K = 4096, and the Llama-3-8B step 3017 us against 2682;
    // bench/results/engine-h200-2026-12-02.md.)
    v.push(dense_family!(
        "gemv_q8_0_rp_swiglu_q8_1s",
        Q8_0,
        Repacked,
        SwigluQ8,
        [("p2", 2, 1, 0, 0)],
        Bench::Cases(|| bench("gemv_q8_0_rp_swiglu_q8_1s"))
    ));
    v.push(dense_family!(
        "gemv_q4_0_rp_swiglu_q8_1s",
        Q4_0,
        Repacked,
        SwigluQ8,
        [("p2", 2, 1, 0, 0)],
        Bench::Without("timed as gemv_q8_0_rp_swiglu_q8_1s: the same epilogue")
    ));
    // `p1`, not q4_0's `p2`: two tokens a pass of Q4_1's gate and up (scales and mins) need 12
    // bytes of scratch on gfx906, over the no-scratch budget.
    v.push(dense_family!(
        "gemv_q4_1_rp_swiglu_q8_1s",
        Q4_1,
        Repacked,
        SwigluQ8,
        [("p1", 1, 1, 0, 0)],
        Bench::Without("timed as gemv_q8_0_rp_swiglu_q8_1s: the same epilogue")
    ));
    // The norm folded into the GEMVs that read it (the attention's Q/K/V and the gate/up): the
    // unfused families' tiles, each workgroup normalizing and quantizing its pass's tokens.
    v.push(norm_family!(
        "gemv_q8_0_rp_qkv_norm",
        Q8_0,
        Repacked,
        Qkv,
        [("p1", 1, 1, 0, 0), ("p2r2", 2, 2, 0, 0), ("p4r2", 4, 2, 0, 0), ("p8r2", 8, 2, 0, 0)],
        Bench::Without("timed in the engine's decode step (kiln generate --profile)")
    ));
    v.push(norm_family!(
        "gemv_q4_0_rp_qkv_norm",
        Q4_0,
        Repacked,
        Qkv,
        [("p1", 1, 1, 0, 0), ("p2r2", 2, 2, 0, 0), ("p4r2", 4, 2, 0, 0), ("p8r2", 8, 2, 0, 0)],
        Bench::Without("timed in the engine's decode step (kiln generate --profile)")
    ));
    v.push(norm_family!(
        "gemv_q4_1_rp_qkv_norm",
        Q4_1,
        Repacked,
        Qkv,
        [("p1", 1, 1, 0, 0), ("p2r2", 2, 2, 0, 0), ("p4r2", 4, 2, 0, 0), ("p8r2", 8, 2, 0, 0)],
        Bench::Without("timed in the engine's decode step (kiln generate --profile)")
    ));
    // Q, K and V with K and V written into the Q8_0 decode cache (K rotated): `_qkv` and
    // `kv_append_q8_0` in one launch, 32 rows a workgroup; with and without the norm prologue.
    v.push(dense_family!(
        "gemv_q8_0_rp_qkv_cache",
        Q8_0,
        Repacked,
        QkvCache,
        [("p1", 1, 1, 0, 0), ("p2r2w16", 2, 2, 0, 16), ("p4r2w16", 4, 2, 0, 16)],
        Bench::Without("timed in the engine's decode step (kiln generate --profile)")
    ));
    v.push(dense_family!(
        "gemv_q4_0_rp_qkv_cache",
        Q4_0,
        Repacked,
        QkvCache,
        [("p1", 1, 1, 0, 0), ("p2r2w16", 2, 2, 0, 16), ("p4r2w16", 4, 2, 0, 16)],
        Bench::Without("timed in the engine's decode step (kiln generate --profile)")
    ));
    v.push(dense_family!(
        "gemv_q4_1_rp_qkv_cache",
        Q4_1,
        Repacked,
        QkvCache,
        [("p1", 1, 1, 0, 0), ("p2r2w16", 2, 2, 0, 16), ("p4r2w16", 4, 2, 0, 16)],
        Bench::Without("timed in the engine's decode step (kiln generate --profile)")
    ));
    v.push(norm_family!(
        "gemv_q8_0_rp_qkv_cache_norm",
        Q8_0,
        Repacked,
        QkvCache,
        [("p1", 1, 1, 0, 0), ("p2r2w16", 2, 2, 0, 16)],
        Bench::Without("timed in the engine's decode step (kiln generate --profile)")
    ));
    v.push(norm_family!(
        "gemv_q4_0_rp_qkv_cache_norm",
        Q4_0,
        Repacked,
        QkvCache,
        [("p1", 1, 1, 0, 0), ("p2r2w16", 2, 2, 0, 16)],
        Bench::Without("timed in the engine's decode step (kiln generate --profile)")
    ));
    v.push(norm_family!(
        "gemv_q4_1_rp_qkv_cache_norm",
        Q4_1,
        Repacked,
        QkvCache,
        [("p1", 1, 1, 0, 0), ("p2r2w16", 2, 2, 0, 16)],
        Bench::Without("timed in the engine's decode step (kiln generate --profile)")
    ));
    v.push(norm_family!(
        "gemv_q8_0_rp_swiglu_q8_1s_norm",
        Q8_0,
        Repacked,
        SwigluQ8,
        [("p1", 1, 1, 0, 0), ("p2", 2, 1, 0, 0)],
        Bench::Without("timed in the engine's decode step (kiln generate --profile)")
    ));
    v.push(norm_family!(
        "gemv_q4_0_rp_swiglu_q8_1s_norm",
        Q4_0,
        Repacked,
        SwigluQ8,
        [("p1", 1, 1, 0, 0), ("p2", 2, 1, 0, 0)],
        Bench::Without("timed in the engine's decode step (kiln generate --profile)")
    ));
    v.push(norm_family!(
        "gemv_q4_1_rp_swiglu_q8_1s_norm",
        Q4_1,
        Repacked,
        SwigluQ8,
        [("p1", 1, 1, 0, 0)],
        Bench::Without("timed in the engine's decode step (kiln generate --profile)")
    ));
    // The seeds' fused tsum GEMV-up kernel used 45/59/68/77/86/95 VGPRs on gfx1201 for T = 1..6
    // (gfx1100 has the same register file): the fused variants must be at or under, with no
    // scratch and no spills.
    for f in v.iter_mut().filter(|f| f.name.ends_with("_swiglu")) {
        for (p, vgprs) in (1..).zip(dense::SEED_SWIGLU_VGPRS) {
            f.budgets.push(kiln_ir::package::Budget {
                kernel: f.name.into(),
                archs: vec!["gfx1100".into(), "gfx1201".into()],
                max_vgprs: Some(vgprs),
                max_scratch: Some(0),
                max_spills: Some(0),
                variants: vec![format!("p{p}")],
            });
        }
    }
    type CasesFn = fn(&mut Rng, bool) -> Vec<Case>;
    let repack = |name: &'static str, build: BuildFn, cases: CasesFn| KernelSpec {
        name,
        variants: vec![VariantSpec { name: "baseline", build, admit: Admission::default() }],
        parity: Parity::Buffers(cases),
        bench: Bench::Without("run once at load, not per decode step"),
        archs: None,
        budgets: vec![],
    };
    v.push(repack(
        "repack_q8_0",
        |t, w| repack::build(t, w, Q8_0),
        |r, l| repack_cases(r, l, Q8_0),
    ));
    v.push(repack("repack_q8_0_tile", repack::build_tile, repack_tile_cases));
    v.push(repack(
        "repack_q4_0",
        |t, w| repack::build(t, w, Q4_0),
        |r, l| repack_cases(r, l, Q4_0),
    ));
    v.push(repack(
        "repack_q4_1",
        |t, w| repack::build(t, w, Q4_1),
        |r, l| repack_cases(r, l, Q4_1),
    ));
    v.push(KernelSpec {
        name: "quantize_q8_1s_f32",
        variants: vec![
            VariantSpec {
                name: "baseline",
                build: |t, w| quantize_split(t, w, false),
                admit: Admission::default(),
            },
            VariantSpec {
                name: "wave",
                build: |t, w| quantize_split(t, w, true),
                admit: Admission::default(),
            },
        ],
        parity: Parity::Buffers(quantize_cases),
        bench: Bench::Without("timed as quantize_q8_0_f32: the same bytes"),
        archs: None,
        budgets: vec![],
    });
    v.extend(moe::specs());
    v.extend(split_norm::specs());
    ahead::add_early_twins(&mut v);
    v
}

/// `quantize_q8_1s_f32`: f32 activations `x` (`n`) to Q8_1 in the split layout (`xq`, `xs`),
/// with the quantize family's arithmetic (so its blocks equal `quantize_q8_1_f32`'s).
pub fn quantize_split(_t: &Target, wave: u32, by_wave: bool) -> Kernel {
    let suffix = if by_wave { "_wave" } else { "" };
    let mut b = KernelBuilder::new(format!("quantize_q8_1s_f32{suffix}"), wave);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let q = b.buffer("xq", ScalarType::U8, Access::Write);
    let s = b.buffer("xs", ScalarType::U32, Access::Write);
    let n = b.scalar_param("n", ScalarType::U32);
    b.set_buffer_len(x, ShapeExpr::scaled(&[n], 1, 1));
    build_body(
        &mut b,
        Format::Q8_1,
        Source::Buffer(x, ScalarType::F32),
        Dest::Split { q, s },
        n,
        by_wave,
    );
    b.finish()
}

/// `gemv_q8_0_rp_k4`'s cases: every `t` in 1..=8, `k` not a multiple of 256, a row count that
/// leaves a two-tile workgroup half full (`n / 16` odd); `n` is a multiple of 16 (the layout's
/// tiles). The weights in the tile layout.
fn k4_cases(rng: &mut Rng, large: bool) -> Vec<Case> {
    let mut shapes: Vec<(usize, usize, usize)> = (1..=8).map(|t| (48, 416, t)).collect();
    // Eight slots up to 8192 rows, four above (k4::slots_for).
    shapes.extend([(16, 32, 1), (80, 32 * 37, 6), (208, 4096 + 32, 5), (8208, 32 * 21, 2)]);
    if large {
        shapes.extend([(4096, 4096, 1), (1008, 4096, 8)]);
    }
    shapes
        .into_iter()
        .map(|(n, k, t)| Case {
            name: format!("n={n} k={k} t={t}"),
            scalars: vec![u32s("n", n as u32), u32s("k", k as u32), u32s("t", t as u32)],
            inputs: k4_inputs(rng, (n, k, t)),
        })
        .collect()
}

/// A `gemv_q8_0_rp_k4` case's inputs: the repacked family's, with `wq` in the tile layout.
pub(crate) fn k4_inputs(
    rng: &mut Rng,
    (n, k, t): (usize, usize, usize),
) -> Vec<(String, ScalarType, Vec<u8>)> {
    let inputs = dense_inputs(rng, WType::Q8_0, Layout::Repacked, Epilogue::Plain, (n, k, t));
    k4_inputs_from(inputs, n, k)
}

/// The repacked family's inputs with `wq` and `ws` turned into the tile layouts.
pub(crate) fn k4_inputs_from(
    mut inputs: Vec<(String, ScalarType, Vec<u8>)>,
    n: usize,
    k: usize,
) -> Vec<(String, ScalarType, Vec<u8>)> {
    for (name, _, bytes) in &mut inputs {
        match name.as_str() {
            "wq" => *bytes = k4::to_tile(bytes, n, k),
            "ws" => *bytes = k4::to_tile_scales(bytes, n, k),
            _ => {}
        }
    }
    inputs
}

fn quantize_cases(rng: &mut Rng, large: bool) -> Vec<Case> {
    let mut sizes = vec![32, 32 * 13, 4096 * 3];
    if large {
        sizes.push(14336 * 8);
    }
    sizes
        .into_iter()
        .map(|n| {
            let v = crate::cases::activations(rng, n, true);
            Case {
                name: format!("n={n} (edge blocks)"),
                scalars: vec![u32s("n", n as u32)],
                inputs: vec![floats("x", ScalarType::F32, &v)],
            }
        })
        .collect()
}

/// `repack_q8_0_tile`'s cases: `n` a multiple of 16 (one tile, three, a model width), `k` not a
/// multiple of 256.
fn repack_tile_cases(rng: &mut Rng, large: bool) -> Vec<Case> {
    let shapes = [(16, 32), (48, 416), (32, 4096 + 32)];
    repack_shape_cases(rng, large, WType::Q8_0, &shapes)
}

fn repack_cases(rng: &mut Rng, large: bool, wt: WType) -> Vec<Case> {
    repack_shape_cases(rng, large, wt, &[(1, 32), (7, 416), (33, 4096)])
}

/// Random ggml blocks of `wt` for each `(n, k)` of `shapes`, and `large` adds 4096 x 4096.
fn repack_shape_cases(
    rng: &mut Rng,
    large: bool,
    wt: WType,
    shapes: &[(usize, usize)],
) -> Vec<Case> {
    let large_shape = large.then_some((4096, 4096));
    shapes
        .iter()
        .copied()
        .chain(large_shape)
        .map(|(n, k)| Case {
            name: format!("n={n} k={k}"),
            scalars: vec![u32s("n", n as u32), u32s("k", k as u32)],
            inputs: vec![("w".into(), ScalarType::U8, host::weights(rng, wt, n, k, true))],
        })
        .collect()
}

/// The bytes one call of a dense family reads and writes at least.
pub fn dense_bytes(wt: WType, epi: Epilogue, n: u64, k: u64, t: u64) -> u64 {
    let mats = epi.matrices() as u64;
    let w = n * k / QK as u64 * wt.block_bytes() * mats;
    let x = if wt.is_quant() { t * k + t * k / QK as u64 * 4 } else { t * k * 4 };
    let q8 = t * n + t * n / QK as u64 * 4;
    let (res, out) = match epi {
        Epilogue::Residual => (t * n * 4, t * n * 4),
        // The norm's gain, and its blocks after `y`.
        Epilogue::ResidualNorm => (t * n * 4 + n * 4, t * n * 4 + q8),
        // The gain; `y`, the blocks of `y w` and their sums of squares.
        Epilogue::ResidualSquares => (t * n * 4 + n * 4, t * n * 4 + q8 + t * n / QK as u64 * 4),
        Epilogue::SwigluQ8 => (0, q8),
        Epilogue::Plain | Epilogue::Swiglu | Epilogue::Qkv | Epilogue::QkvCache => (0, t * n * 4),
    };
    w + x + res + out
}

/// The inputs of a dense bench case (element counts).
fn bench_inputs(
    wt: WType,
    layout: Layout,
    epi: Epilogue,
    n: usize,
    k: usize,
    t: usize,
) -> Vec<(&'static str, ScalarType, usize)> {
    let mut v = vec![];
    let names: &[(&'static str, &'static str, &'static str)] = match epi {
        Epilogue::Swiglu | Epilogue::SwigluQ8 => {
            &[("gate_w", "gate_wq", "gate_ws"), ("up_w", "up_wq", "up_ws")]
        }
        Epilogue::Plain
        | Epilogue::Residual
        | Epilogue::ResidualNorm
        | Epilogue::ResidualSquares => &[("w", "wq", "ws")],
        Epilogue::Qkv | Epilogue::QkvCache => {
            &[("q_w", "q_wq", "q_ws"), ("k_w", "k_wq", "k_ws"), ("v_w", "v_wq", "v_ws")]
        }
    };
    let blocks = n * k / QK as usize;
    for &(w, wq, ws) in names {
        match (layout, wt) {
            (Layout::Ggml, WType::F16) => v.push((w, ScalarType::F16, n * k)),
            (Layout::Ggml, WType::Bf16) => v.push((w, ScalarType::BF16, n * k)),
            (Layout::Ggml, WType::Q8_0 | WType::Q4_0 | WType::Q4_1) => {
                v.push((w, ScalarType::U8, blocks * wt.block_bytes() as usize))
            }
            (Layout::Repacked, _) => {
                v.push((wq, ScalarType::U8, blocks * wt.quant_bytes() as usize));
                v.push((ws, wt.scale_type(), blocks));
            }
        }
    }
    if wt.is_quant() {
        v.push(("xq", ScalarType::U8, t * k));
        v.push(("xs", ScalarType::U32, t * k / QK as usize));
    } else {
        v.push(("x", ScalarType::F32, t * k));
    }
    if matches!(epi, Epilogue::Residual | Epilogue::ResidualNorm | Epilogue::ResidualSquares) {
        v.push(("res", ScalarType::F32, t * n));
    }
    if epi == Epilogue::ResidualSquares {
        v.push(("weight", ScalarType::F32, n));
    }
    if epi == Epilogue::ResidualNorm {
        v.push(("weight", ScalarType::F32, n));
        // Read-write (the tail reads it back): the bench binds it as an input.
        v.push(("y", ScalarType::F32, t * n));
    }
    v
}

/// The decode shapes each dense family is timed at (llama.cpp's peer shapes: N = 14336 and 4096,
/// K = 4096; the down projection K = 14336 for the residual).
fn bench(family: &str) -> Vec<BenchCase> {
    let case = |name: &'static str, wt, layout, epi, n: usize, k: usize, t: usize| BenchCase {
        flops: None,
        name,
        scalars: vec![u32_arg("n", n as u32), u32_arg("k", k as u32), u32_arg("t", t as u32)],
        inputs: bench_inputs(wt, layout, epi, n, k, t),
        bytes: dense_bytes(wt, epi, n as u64, k as u64, t as u64),
        values: vec![],
    };
    use Epilogue::{Plain, Residual, Swiglu};
    use Layout::{Ggml, Repacked};
    use WType::{Bf16, F16, Q4_0, Q4_1, Q8_0};
    match family {
        "gemv_q8_0" => vec![
            case("gemv_q8_0_n14336_t1", Q8_0, Ggml, Plain, 14336, 4096, 1),
            case("gemv_q8_0_n14336_t8", Q8_0, Ggml, Plain, 14336, 4096, 8),
            // SmolLM2-135M's LM head (tied to the Q8_0 embedding).
            case("gemv_q8_0_n49152_k576_t1", Q8_0, Ggml, Plain, 49152, 576, 1),
        ],
        "gemv_q4_0" => vec![case("gemv_q4_0_n14336_t1", Q4_0, Ggml, Plain, 14336, 4096, 1)],
        "gemv_q4_1" => vec![case("gemv_q4_1_n14336_t1", Q4_1, Ggml, Plain, 14336, 4096, 1)],
        "gemv_f16" => vec![case("gemv_f16_n14336_t1", F16, Ggml, Plain, 14336, 4096, 1)],
        "gemv_bf16" => vec![case("gemv_bf16_n14336_t1", Bf16, Ggml, Plain, 14336, 4096, 1)],
        "gemv_q8_0_rp" => vec![
            case("gemv_q8_0_rp_n14336_t1", Q8_0, Repacked, Plain, 14336, 4096, 1),
            case("gemv_q8_0_rp_n14336_t2", Q8_0, Repacked, Plain, 14336, 4096, 2),
            case("gemv_q8_0_rp_n14336_t4", Q8_0, Repacked, Plain, 14336, 4096, 4),
            case("gemv_q8_0_rp_n14336_t8", Q8_0, Repacked, Plain, 14336, 4096, 8),
            case("gemv_q8_0_rp_n4096_t1", Q8_0, Repacked, Plain, 4096, 4096, 1),
            case("gemv_q8_0_rp_n4096_t8", Q8_0, Repacked, Plain, 4096, 4096, 8),
            // SmolLM2-135M's LM head (the engine's repacked copy of the tied embedding).
            case("gemv_q8_0_rp_n49152_k576_t1", Q8_0, Repacked, Plain, 49152, 576, 1),
        ],
        "gemv_q4_0_rp" => vec![
            case("gemv_q4_0_rp_n14336_t1", Q4_0, Repacked, Plain, 14336, 4096, 1),
            case("gemv_q4_0_rp_n14336_t8", Q4_0, Repacked, Plain, 14336, 4096, 8),
        ],
        "gemv_q4_1_rp" => {
            vec![case("gemv_q4_1_rp_n14336_t1", Q4_1, Repacked, Plain, 14336, 4096, 1)]
        }
        "gemv_q8_0_rp_res" => {
            vec![
                case("gemv_q8_0_rp_res_n4096_k14336_t1", Q8_0, Repacked, Residual, 4096, 14336, 1),
                case("gemv_q8_0_rp_res_n4096_k4096_t1", Q8_0, Repacked, Residual, 4096, 4096, 1),
            ]
        }
        "gemv_q8_0_rp_res_rmsnorm" => {
            let norm = |name, k, t| {
                let mut c = case(name, Q8_0, Repacked, Epilogue::ResidualNorm, 4096, k, t);
                c.scalars.push(f32_arg("eps", 1e-5));
                c
            };
            vec![
                norm("gemv_q8_0_rp_res_rmsnorm_n4096_k14336_t1", 14336, 1),
                norm("gemv_q8_0_rp_res_rmsnorm_n4096_k4096_t1", 4096, 1),
                norm("gemv_q8_0_rp_res_rmsnorm_n4096_k4096_t8", 4096, 8),
            ]
        }
        "gemv_q8_0_rp_swiglu" => vec![
            case("gemv_q8_0_rp_swiglu_n14336_t1", Q8_0, Repacked, Swiglu, 14336, 4096, 1),
            case("gemv_q8_0_rp_swiglu_n14336_t4", Q8_0, Repacked, Swiglu, 14336, 4096, 4),
        ],
        "gemv_q8_0_rp_k4" => vec![
            case("gemv_q8_0_rp_k4_n14336_t1", Q8_0, Repacked, Plain, 14336, 4096, 1),
            case("gemv_q8_0_rp_k4_n14336_t4", Q8_0, Repacked, Plain, 14336, 4096, 4),
            case("gemv_q8_0_rp_k4_n14336_t8", Q8_0, Repacked, Plain, 14336, 4096, 8),
            case("gemv_q8_0_rp_k4_n4096_t1", Q8_0, Repacked, Plain, 4096, 4096, 1),
            case("gemv_q8_0_rp_k4_n4096_t8", Q8_0, Repacked, Plain, 4096, 4096, 8),
            // At the most rows of eight slots (k4::slots_for).
            case("gemv_q8_0_rp_k4_n8192_t1", Q8_0, Repacked, Plain, 8192, 4096, 1),
            case("gemv_q8_0_rp_k4_n8192_t8", Q8_0, Repacked, Plain, 8192, 4096, 8),
            // Around N = 14336 (448 workgroups of `wide_t2_g4`, three or four an SM): 396
            // workgroups (three on every SM) and 528 (four): what the warps an SM hold do to
            // the time (bench/results/balance-h200-2026-12-03.md).
            case("gemv_q8_0_rp_k4_n12672_t1", Q8_0, Repacked, Plain, 12672, 4096, 1),
            case("gemv_q8_0_rp_k4_n12672_t8", Q8_0, Repacked, Plain, 12672, 4096, 8),
            case("gemv_q8_0_rp_k4_n16896_t1", Q8_0, Repacked, Plain, 16896, 4096, 1),
            case("gemv_q8_0_rp_k4_n16896_t8", Q8_0, Repacked, Plain, 16896, 4096, 8),
        ],
        "gemv_q8_0_rp_swiglu_q8_1s" => vec![case(
            "gemv_q8_0_rp_swiglu_q8_1s_n14336_t1",
            Q8_0,
            Repacked,
            Epilogue::SwigluQ8,
            14336,
            4096,
            1,
        )],
        "gemv_q4_0_rp_swiglu" => {
            vec![case("gemv_q4_0_rp_swiglu_n14336_t1", Q4_0, Repacked, Swiglu, 14336, 4096, 1)]
        }
        other => panic!("no bench cases for {other}"),
    }
}

#[cfg(test)]
mod tests;
