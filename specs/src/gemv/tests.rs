//! The identities that hold across families because they share the dense order: the ggml and
//! repacked layouts of the same bytes, the repack kernel, and MoE against the dense product of
//! each output's expert, all bit for bit on the interpreter at wave 32 and 64; plus the
//! arithmetic against a float64 model of ggml's formats with the stated bound.

use super::*;
use crate::cases::{rng_for, run, run_written, u32s};
use kiln_ir::TARGETS;
use std::collections::BTreeMap;

type Bytes = Vec<u8>;

fn fam(name: &str) -> KernelSpec {
    specs().into_iter().find(|f| f.name == name).unwrap()
}

fn target(wave: u32) -> &'static Target {
    let name = if wave == 64 { "gfx906" } else { "gfx1100" };
    TARGETS.iter().find(|t| t.name == name).unwrap()
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// The same random bytes in ggml's layout and repacked give the same `y`, bit for bit, for every
/// quantized format, at both wave sizes; and the repack kernel makes the host's repacked bytes.
#[test]
fn ggml_and_repacked_layouts_agree_bit_for_bit() {
    let mut rng = rng_for("gemv-layouts", std::process::id() as u64);
    for (wt, ggml, rp, rk) in [
        (WType::Q8_0, "gemv_q8_0", "gemv_q8_0_rp", "repack_q8_0"),
        (WType::Q4_0, "gemv_q4_0", "gemv_q4_0_rp", "repack_q4_0"),
        (WType::Q4_1, "gemv_q4_1", "gemv_q4_1_rp", "repack_q4_1"),
    ] {
        for wave in [32, 64] {
            let tg = target(wave);
            let (n, k, t) = (19, 32 * 11, 3);
            let w = host::weights(&mut rng, wt, n, k, true);
            let (q, s) = host::q8_1(&mut rng, t, k, true);
            let scalars = vec![u32s("n", n as u32), u32s("k", k as u32), u32s("t", t as u32)];
            let acts =
                vec![("xq".to_string(), ScalarType::U8, q), ("xs".to_string(), ScalarType::U32, s)];
            let mut gi = vec![("w".to_string(), ScalarType::U8, w.clone())];
            gi.extend(acts.clone());
            let (hq, hs) = host::repack(wt, &w);
            let mut ri = vec![
                ("wq".to_string(), ScalarType::U8, hq.clone()),
                ("ws".to_string(), wt.scale_type(), hs.clone()),
            ];
            ri.extend(acts);
            let yg = run(&(fam(ggml).variant("p4r4").unwrap().build)(tg, wave), &gi, &scalars);
            let yr = run(&(fam(rp).variant("p2r2").unwrap().build)(tg, wave), &ri, &scalars);
            assert_eq!(yg["y"], yr["y"], "{ggml} vs {rp} at wave {wave}");
            assert!(f32s(&yg["y"]).iter().any(|v| *v != 0.0 && v.is_finite()), "{ggml}: all zero?");
            let rep = run(
                &(fam(rk).baseline().build)(tg, wave),
                &[("w".into(), ScalarType::U8, w)],
                &scalars,
            );
            assert_eq!(rep["wq"], hq, "{rk} quants");
            assert_eq!(rep["ws"], hs, "{rk} scales");
        }
    }
}

/// Each MoE output equals the dense GEMV of its expert's rows, bit for bit, for every variant:
/// a short row (7 blocks, most lanes of the peeled trips past it), and rows of 70 and 133 blocks
/// (the peeled variants' loop after their trips at wave 32, and at wave 64 for 133), odd `n`.
#[test]
fn moe_outputs_equal_the_dense_product_of_their_expert() {
    let mut rng = rng_for("gemv-moe", std::process::id() as u64);
    let shapes = [(5, 2, 13, 32 * 7, 6), (6, 3, 9, 32 * 70, 2), (4, 2, 11, 32 * 133, 1)];
    for ((e, topk, n, k, t), wave) in shapes.into_iter().flat_map(|s| [(s, 32), (s, 64)]) {
        let tg = target(wave);
        let w = host::weights(&mut rng, WType::Q8_0, e * n, k, true);
        let (hq, hs) = host::repack(WType::Q8_0, &w);
        let (q, s) = host::q8_1(&mut rng, t, k, true);
        let ids = moe::routing(&mut rng, t, topk, e, (t * topk).min(4));
        let ids_b: Bytes = ids.iter().flat_map(|x| x.to_le_bytes()).collect();
        let scalars = vec![
            u32s("n", n as u32),
            u32s("k", k as u32),
            u32s("t", t as u32),
            u32s("e", e as u32),
            u32s("topk", topk as u32),
        ];
        let inputs = vec![
            ("wq".to_string(), ScalarType::U8, hq.clone()),
            ("ws".to_string(), ScalarType::U16, hs.clone()),
            ("xq".to_string(), ScalarType::U8, q.clone()),
            ("xs".to_string(), ScalarType::U32, s.clone()),
            ("ids".to_string(), ScalarType::U32, ids_b),
        ];
        // Dense reference: every expert on every token.
        let qb = k;
        let sb = k / 32 * 2;
        let dense = fam("gemv_q8_0_rp").variant("p8r4").unwrap().build;
        let mut per_expert = vec![];
        for ex in 0..e {
            let di = vec![
                ("wq".to_string(), ScalarType::U8, hq[ex * n * qb..(ex + 1) * n * qb].to_vec()),
                ("ws".to_string(), ScalarType::U16, hs[ex * n * sb..(ex + 1) * n * sb].to_vec()),
                ("xq".to_string(), ScalarType::U8, q.clone()),
                ("xs".to_string(), ScalarType::U32, s.clone()),
            ];
            let ds = vec![u32s("n", n as u32), u32s("k", k as u32), u32s("t", t as u32)];
            per_expert.push(f32s(&run(&dense(tg, wave), &di, &ds)["y"]));
        }
        let moe = fam("gemv_moe_q8_0_rp");
        assert!(moe.variants.len() >= 7, "the peeled variants are there");
        for spec in &moe.variants {
            let v = spec.name;
            let kernel = (spec.build)(tg, wave);
            assert_eq!(kernel.name, format!("gemv_moe_q8_0_rp_{v}"), "the variant's name");
            let y = f32s(&run(&kernel, &inputs, &scalars)["y"]);
            for tok in 0..t {
                for j in 0..topk {
                    let ex = ids[tok * topk + j] as usize;
                    for r in 0..n {
                        let got = y[(tok * topk + j) * n + r];
                        let want = per_expert[ex][tok * n + r];
                        assert_eq!(
                            got.to_bits(),
                            want.to_bits(),
                            "{v} wave {wave} t{tok} slot{j} row{r}"
                        );
                    }
                }
            }
        }
    }
}

/// `routing` uses exactly the number of experts asked, distinct within each token.
#[test]
fn routing_uses_the_asked_number_of_experts() {
    let mut rng = rng_for("routing", std::process::id() as u64);
    for (t, topk, e) in [(1, 8, 128), (8, 8, 128), (8, 2, 8), (3, 2, 5)] {
        let used = moe::expected_used(e, topk, t);
        let ids = moe::routing(&mut rng, t, topk, e, used);
        let distinct: std::collections::BTreeSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), used);
        for tok in ids.chunks(topk) {
            let d: std::collections::BTreeSet<_> = tok.iter().collect();
            assert_eq!(d.len(), topk, "{tok:?}");
            assert!(tok.iter().all(|&i| (i as usize) < e));
        }
    }
}

/// Every dense family's name is the one its shape gives, and every variant verifies on every
/// target at its default wave size.
#[test]
fn family_names_match_their_shapes_and_every_variant_verifies() {
    for f in specs() {
        for t in TARGETS {
            for v in &f.variants {
                let k = (v.build)(t, t.default_wave());
                kiln_ir::verify(&k, Some(t))
                    .unwrap_or_else(|e| panic!("{}/{} on {t}: {e:?}", f.name, v.name));
            }
        }
    }
    assert_eq!(
        dense::family_name(WType::Q4_1, Layout::Repacked, dense::Epilogue::Residual),
        "gemv_q4_1_rp_res"
    );
    assert!(specs().iter().any(|f| f.name == "gemv_q8_0_rp_swiglu"));
}

/// Every dense variant's name is the one its shape gives ([`dense::variant_name`]): the macro
/// lists both, and a typo would route a name to another shape.
#[test]
fn dense_variant_names_match_their_shapes() {
    for f in
        specs().iter().filter(|f| f.name.starts_with("gemv_") && !f.name.starts_with("gemv_moe"))
    {
        for v in &f.variants {
            let k = (v.build)(target(32), 32);
            assert_eq!(k.name, format!("{}_{}", f.name, v.name), "{}", f.name);
        }
    }
}

/// The quantizing gate/up kernel of each format gives, bit for bit, `quantize_q8_1s_f32` of the
/// plain fused kernel's `y`, for every variant, at both wave sizes (tokens past a pass, t = 1..8).
#[test]
fn the_quantizing_swiglu_equals_swiglu_then_quantize() {
    let mut rng = rng_for("gemv-swiglu-q8", std::process::id() as u64);
    for wt in [WType::Q8_0, WType::Q4_0, WType::Q4_1] {
        let plain = dense::family_name(wt, Layout::Repacked, dense::Epilogue::Swiglu);
        let fused = dense::family_name(wt, Layout::Repacked, dense::Epilogue::SwigluQ8);
        for wave in [32, 64] {
            let tg = target(wave);
            for (n, k, t) in [(64, 32 * 9, 5), (32, 64, 8), (96, 128, 1), (32, 32 * 3, 2)] {
                let inputs = dense_inputs(
                    &mut rng,
                    wt,
                    Layout::Repacked,
                    dense::Epilogue::Swiglu,
                    (n, k, t),
                );
                let scalars = vec![u32s("n", n as u32), u32s("k", k as u32), u32s("t", t as u32)];
                let y =
                    run(&(fam(&plain).baseline().build)(tg, wave), &inputs, &scalars)["y"].clone();
                let qs = run(
                    &quantize_split(tg, wave, false),
                    &[("x".to_string(), ScalarType::F32, y)],
                    &[u32s("n", (t * n) as u32)],
                );
                for v in &fam(&fused).variants {
                    let got = run(&(v.build)(tg, wave), &inputs, &scalars);
                    let at = format!("{fused} {}, wave {wave}, n={n} k={k} t={t}", v.name);
                    assert_eq!(got["yq"], qs["xq"], "{at}: quants");
                    assert_eq!(got["ys"], qs["xs"], "{at}: scales");
                }
            }
        }
    }
}

/// The wide loads' K permutation exists where it is routed: NVIDIA's m16n8k32 (lists
/// `4t..4t+4, 4t+16..4t+20` stored at byte `8t`), and every shape that has one partitions K.
#[test]
fn the_wide_map_of_each_int8_shape() {
    use kiln_ir::matrix::MmaKind;
    let nv =
        crate::mma::kind_for(Target::by_name("sm_90").unwrap(), kiln_ir::matrix::MmaInputs::Int8)
            .unwrap();
    assert_eq!(k4::wide_map(nv), Some(k4::WideMap { bytes: 8, alpha: 2 }));
    let wide = k4::wide_archs();
    for a in ["sm_80", "sm_86", "sm_89", "sm_90"] {
        assert!(wide.iter().any(|w| w == a), "{a} not in {wide:?}");
    }
    for kind in MmaKind::all().into_iter().filter(|k| k.a() != ScalarType::F16) {
        println!("{kind:?}: {:?}", k4::wide_map(kind));
    }
}

/// Every 8-bit MMA shape's A and B lane maps come in runs of four consecutive elements along K
/// (what the `gemv_q8_0_rp_k4` `mma` variant's 32-bit fragment loads rely on).
#[test]
fn every_int8_lane_map_has_runs_of_four_along_k() {
    use kiln_ir::matrix::{FragmentRole, MmaKind};
    for kind in MmaKind::all().into_iter().filter(|k| k.a() != ScalarType::F16) {
        assert!(k4::runs_of_four(kind, FragmentRole::A), "{kind:?} A");
        assert!(k4::runs_of_four(kind, FragmentRole::B), "{kind:?} B");
    }
}

/// `gemv_q8_0_rp_k4`'s `mma` variant equals its baseline bit for bit on the interpreter, on every
/// arch with an 8-bit matrix shape (WMMA gfx11 / gfx12, MFMA gfx90a / gfx942, mma.sync sm_75 /
/// sm_80+), for t = 1..8 and rows that leave the last workgroup's tiles part empty.
#[test]
fn the_k4_mma_variant_equals_its_baseline_on_every_matrix_arch() {
    let mut rng = rng_for("gemv-k4", std::process::id() as u64);
    let f = fam("gemv_q8_0_rp_k4");
    let archs = k4::mma_archs();
    assert!(archs.len() >= 9, "{archs:?}");
    for arch in &archs {
        let tg = Target::by_name(arch).unwrap();
        let wave = tg.default_wave();
        for (n, k, t) in
            [(48, 32 * 9, 8), (16, 32 * 5, 3), (16, 32, 1), (80, 32 * 37, 6), (32, 32 * 130, 2)]
                .into_iter()
                // Four slots (past 8192 rows): the eight-wave variants' idle waves.
                .chain((arch == "sm_90").then_some((8208, 32 * 9, 3)))
        {
            let inputs = super::k4_inputs(&mut rng, (n, k, t));
            let scalars = vec![u32s("n", n as u32), u32s("k", k as u32), u32s("t", t as u32)];
            let base = run(&(f.baseline().build)(tg, wave), &inputs, &scalars);
            for v in [
                "mma",
                "mma_t2",
                "wide_t1_g1",
                "wide_t2_g1",
                "wide_t1_g2",
                "wide_t2_g4",
                "wide_t1_g4_w8",
                "wide_t1_g4_w8_hs",
                "wide_t1_g4_w8_hsx",
                "wide_t2_g4_hs",
                "wide_t2_g4_hsx",
            ] {
                let kernel = (f.variant(v).unwrap().build)(tg, wave);
                let mma = run(&kernel, &inputs, &scalars);
                assert_eq!(base["y"], mma["y"], "{v} on {arch} n={n} k={k} t={t}");
                let issues_mma =
                    kernel.insts.values().any(|d| matches!(d.op, kiln_ir::Op::Mma { .. }));
                assert!(issues_mma, "{arch}: {v} issues no mma");
            }
        }
    }
}

/// Every variant of the Q/K/V kernel gives, bit for bit, the plain `gemv_<fmt>_rp` baseline of
/// each of its three matrices, at both wave sizes: odd row counts, `k` not a multiple of 256,
/// t = 1..8, more K/V rows than Q rows.
#[test]
fn the_qkv_gemv_equals_three_plain_gemvs() {
    let mut rng = rng_for("gemv-qkv", std::process::id() as u64);
    for (wt, plain, qkv) in [
        (WType::Q8_0, "gemv_q8_0_rp", "gemv_q8_0_rp_qkv"),
        (WType::Q4_0, "gemv_q4_0_rp", "gemv_q4_0_rp_qkv"),
        (WType::Q4_1, "gemv_q4_1_rp", "gemv_q4_1_rp_qkv"),
    ] {
        for wave in [32, 64] {
            let tg = target(wave);
            for (n_q, n_kv, k, t) in
                [(37, 13, 416, 1), (9, 3, 32 * 9, 8), (5, 11, 64, 3), (19, 7, 160, 6)]
            {
                let inputs = qkv_inputs(&mut rng, wt, Layout::Repacked, (n_q, n_kv, k, t));
                let acts: Vec<_> =
                    inputs.iter().filter(|x| x.0.starts_with('x')).cloned().collect();
                let mut want = BTreeMap::new();
                for (m, n) in [("q", n_q), ("k", n_kv), ("v", n_kv)] {
                    let mut ins: Vec<_> = inputs
                        .iter()
                        .filter_map(|(name, ty, b)| {
                            let rest = name.strip_prefix(&format!("{m}_"))?;
                            Some((rest.to_string(), *ty, b.clone()))
                        })
                        .collect();
                    ins.extend(acts.iter().cloned());
                    let scalars =
                        vec![u32s("n", n as u32), u32s("k", k as u32), u32s("t", t as u32)];
                    let y = run(&(fam(plain).baseline().build)(tg, wave), &ins, &scalars);
                    assert_eq!(y["y"].len(), t * n * 4);
                    want.insert(format!("{m}_y"), y["y"].clone());
                }
                let scalars = vec![
                    u32s("n_q", n_q as u32),
                    u32s("n_kv", n_kv as u32),
                    u32s("k", k as u32),
                    u32s("t", t as u32),
                ];
                for v in &fam(qkv).variants {
                    let got = run(&(v.build)(tg, wave), &inputs, &scalars);
                    assert_eq!(
                        got, want,
                        "{qkv}/{}, wave {wave}, {n_q}/{n_kv} k={k} t={t}",
                        v.name
                    );
                }
            }
        }
    }
}

/// Every variant of every `_norm` family gives, bit for bit, `rmsnorm_q8_1s_f32` of the rows
/// followed by its unfused family's baseline on the norm's blocks, at both wave sizes (the
/// prologue's sum of squares emulates the norm's 512 lanes at each): SmolLM2's 576 (18 blocks)
/// and 1536, odd block counts, the longest row taken, t = 1..8 with passes of fewer tokens, and
/// rows of zeros, with a NaN and with a value near `f32::MAX`.
#[test]
fn the_norm_gemvs_equal_the_norm_then_the_gemv() {
    use dense::Epilogue::{Qkv, SwigluQ8};
    let mut rng = rng_for("gemv-norm", std::process::id() as u64);
    let shapes: [(usize, usize, usize, usize); 4] =
        [(37, 13, 576, 1), (9, 3, 32 * 13, 8), (40, 7, 1536, 3), (5, 11, 96, 6)];
    for wt in [WType::Q8_0, WType::Q4_0, WType::Q4_1] {
        for epi in [Qkv, SwigluQ8] {
            let unfused = dense::family_name(wt, Layout::Repacked, epi);
            let fused = format!("{unfused}_norm");
            for wave in [32, 64] {
                let tg = target(wave);
                for (i, &(n, n_kv, k, t)) in shapes.iter().enumerate() {
                    // One case a pair at the longest row the prologue takes (slow to run).
                    let (k, t) = if i == 0 && epi == Qkv && wt == WType::Q4_1 {
                        (norm::NORM_MAX_K as usize, 5)
                    } else {
                        (k, t)
                    };
                    let n = if epi == SwigluQ8 { n.div_ceil(32) * 32 } else { n };
                    let x = norm_inputs(&mut rng, t, k);
                    let eps = ("eps".to_string(), ScalarType::F32, 1e-5f32.to_bits() as u64);
                    let normed = run(
                        &crate::rmsnorm::rmsnorm_q8_1s(tg, wave),
                        &x,
                        &[u32s("rows", t as u32), u32s("n", k as u32), eps.clone()],
                    );
                    let (mut inputs, mut scalars) = match epi {
                        Qkv => (
                            qkv_inputs(&mut rng, wt, Layout::Repacked, (n, n_kv, k, t)),
                            vec![u32s("n_q", n as u32), u32s("n_kv", n_kv as u32)],
                        ),
                        _ => (
                            dense_inputs(&mut rng, wt, Layout::Repacked, epi, (n, k, t)),
                            vec![u32s("n", n as u32)],
                        ),
                    };
                    scalars.extend([u32s("k", k as u32), u32s("t", t as u32)]);
                    inputs.retain(|(name, _, _)| name != "xq" && name != "xs");
                    let mut fused_inputs = inputs.clone();
                    inputs.push(("xq".into(), ScalarType::U8, normed["xq"].clone()));
                    inputs.push(("xs".into(), ScalarType::U32, normed["xs"].clone()));
                    let want = run(&(fam(&unfused).baseline().build)(tg, wave), &inputs, &scalars);
                    fused_inputs.extend(x);
                    scalars.push(eps);
                    for v in &fam(&fused).variants {
                        let got = run(&(v.build)(tg, wave), &fused_inputs, &scalars);
                        let at = format!("{fused}/{}, wave {wave}, n={n} k={k} t={t}", v.name);
                        assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
                        for (name, bytes) in &want {
                            assert!(got[name] == *bytes, "{at}: {name} differs");
                        }
                    }
                }
            }
        }
    }
}

/// The tile layout is a permutation of the repacked quants, and chunk `4g + j` of a tile and
/// block holds bytes `8j..8j + 8` of row `g` then of row `g + 8` (what a lane of `m16n8k32`
/// loads); the tile scale layout a permutation of the scales, a tile and block's 16 together.
#[test]
fn the_tile_layout_is_the_m16n8k32_chunks_of_the_repacked_rows() {
    let (n, k) = (48, 32 * 5);
    let wq: Vec<u8> = (0..n * k).map(|i| (i % 251) as u8).collect();
    let tile = k4::to_tile(&wq, n, k);
    let mut seen = vec![false; n * k];
    for row in 0..n {
        for byte in 0..k {
            let o = k4::tile_offset(row, byte, k / 32);
            assert!(!seen[o], "offset {o} twice");
            seen[o] = true;
        }
    }
    let nb = k / 32;
    for (tile_i, blk, g, j) in [(0, 0, 0, 0), (1, 3, 5, 2), (2, 4, 7, 3)] {
        let chunk = ((tile_i * nb + blk) * 32 + 4 * g + j) * 16;
        let row = |r: usize| &wq[r * k + blk * 32 + 8 * j..][..8];
        assert_eq!(&tile[chunk..chunk + 8], row(tile_i * 16 + g));
        assert_eq!(&tile[chunk + 8..chunk + 16], row(tile_i * 16 + g + 8));
    }
    // The scales: a permutation too, and a tile's 16 scales of a block are 32 contiguous bytes.
    let ws: Vec<u8> = (0..2 * n * nb).map(|i| (i % 253) as u8).collect();
    let ts = k4::to_tile_scales(&ws, n, k);
    let mut seen = vec![false; n * nb];
    for row in 0..n {
        for blk in 0..nb {
            let o = k4::scale_index(row, blk, nb);
            assert!(!seen[o], "scale {o} twice");
            seen[o] = true;
            assert_eq!(o / 16, (row / 16) * nb + blk, "row {row} block {blk}");
            assert_eq!(ts[2 * o..2 * o + 2], ws[2 * (row * nb + blk)..][..2]);
        }
    }
}

/// `gemv_q8_0_rp_k4`'s baseline reads the tile layout as the family's order says, against a host
/// model of that order over the repacked (row-major) quants: block `b` in slot `(b / 4) mod S`
/// (`S` = 8 up to 8192 rows, else 4), `fma(dw * da, sumi, acc)` in increasing `b`, `(s0 + s1) +
/// (s2 + s3)` (plus `(s4 + s5) + (s6 + s7)`); bit for bit, at both wave sizes, on both sides of
/// 8192 rows, with the edge values of the weights (zero, NaN and infinite scales).
#[test]
fn the_k4_baseline_reads_the_tile_layout_in_the_family_order() {
    use half::f16;
    let mut rng = rng_for("gemv-k4-host", std::process::id() as u64);
    let f = fam("gemv_q8_0_rp_k4");
    for wave in [32, 64] {
        for (n, k, t) in [(32, 32 * 9, 8), (16, 32 * 13, 3), (48, 32, 1), (8208, 32 * 9, 2)] {
            let s = k4::slots_for(n);
            assert_eq!(s, if n <= 8192 { 8 } else { 4 });
            let rp = dense_inputs(
                &mut rng,
                WType::Q8_0,
                Layout::Repacked,
                dense::Epilogue::Plain,
                (n, k, t),
            );
            let get = |name: &str| rp.iter().find(|i| i.0 == name).unwrap().2.clone();
            let (wq, ws, xq, xs) = (get("wq"), get("ws"), get("xq"), get("xs"));
            let nb = k / 32;
            let mut want = vec![0f32; t * n];
            for tok in 0..t {
                for row in 0..n {
                    let mut slots = [0f32; 8];
                    for blk in 0..nb {
                        let mut sumi = 0i32;
                        for i in 0..32 {
                            let w = wq[row * k + blk * 32 + i] as i8 as i32;
                            let x = xq[tok * k + blk * 32 + i] as i8 as i32;
                            sumi += w * x;
                        }
                        let dwb = u16::from_le_bytes([
                            ws[2 * (row * nb + blk)],
                            ws[2 * (row * nb + blk) + 1],
                        ]);
                        let dw = f16::from_bits(dwb).to_f32();
                        let a = 4 * (tok * nb + blk);
                        let da = f16::from_bits(u16::from_le_bytes([xs[a], xs[a + 1]])).to_f32();
                        let slot = &mut slots[(blk / 4) % s as usize];
                        *slot = (dw * da).mul_add(sumi as f32, *slot);
                    }
                    let low = (slots[0] + slots[1]) + (slots[2] + slots[3]);
                    let high = (slots[4] + slots[5]) + (slots[6] + slots[7]);
                    want[tok * n + row] = if s == 8 { low + high } else { low };
                }
            }
            let inputs = super::k4_inputs_from(rp.clone(), n, k);
            let scalars = vec![u32s("n", n as u32), u32s("k", k as u32), u32s("t", t as u32)];
            let got = f32s(&run(&(f.baseline().build)(target(wave), wave), &inputs, &scalars)["y"]);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                    "wave {wave} n={n} k={k} t={t} output {i}: kernel {g}, host {w}"
                );
            }
        }
    }
}

/// `repack_q8_0_tile` makes, from ggml's blocks, the host's tile layouts of the repacked quants and
/// scales, at both wave sizes (one tile, odd tile counts, `k` not a multiple of 256).
#[test]
fn the_tile_repack_kernel_makes_the_tile_layout() {
    let mut rng = rng_for("gemv-repack-tile", std::process::id() as u64);
    let f = fam("repack_q8_0_tile");
    for wave in [32, 64] {
        for (n, k) in [(16, 32), (48, 416), (80, 32 * 37)] {
            let w = host::weights(&mut rng, WType::Q8_0, n, k, true);
            let (hq, hs) = host::repack(WType::Q8_0, &w);
            let scalars = vec![u32s("n", n as u32), u32s("k", k as u32)];
            let got = run(
                &(f.baseline().build)(target(wave), wave),
                &[("w".into(), ScalarType::U8, w)],
                &scalars,
            );
            assert_eq!(got["wq"], k4::to_tile(&hq, n, k), "wq, wave {wave} n={n} k={k}");
            assert_eq!(got["ws"], k4::to_tile_scales(&hs, n, k), "ws, wave {wave} n={n} k={k}");
        }
    }
}

/// The cache-writing Q/K/V families (`_qkv_cache`, `_qkv_cache_norm`) equal, bit for bit, the
/// Q/K/V GEMV they extend (`_qkv`, `_qkv_norm`) followed by `kv_append_q8_0` (K rotated with the
/// normal pairing, both caches as Q8_0 blocks at `pos..pos+t`), at wave 32 and 64: `q_y` and the
/// whole of both caches (the other rows left as they were, tokens past `ctx_max` not written),
/// on every case of the families' parity set (t = 1..8, head dims 32/64/128, partial rotation),
/// for every variant of `_qkv_cache` (Q8_0) and `_qkv_cache_norm` (Q4_1).
#[test]
fn the_cache_gemvs_equal_the_gemv_then_the_append() {
    let mut rng = rng_for("gemv-qkv-cache", std::process::id() as u64);
    let append = crate::attention::kv_append::specs()
        .into_iter()
        .find(|f| f.name == "kv_append_q8_0")
        .unwrap();
    // One format a prologue (the epilogue does not depend on the weights' format), and
    // `kv_append`'s routed variant (its family's parity proves the baseline equal to it).
    for (wt, norm) in [(WType::Q8_0, false), (WType::Q4_1, true)] {
        let sfx = if norm { "_norm" } else { "" };
        let base = dense::family_name(wt, Layout::Repacked, dense::Epilogue::Qkv);
        let fused = fam(&format!(
            "{}{sfx}",
            dense::family_name(wt, Layout::Repacked, dense::Epilogue::QkvCache)
        ));
        let unfused = fam(&format!("{base}{sfx}"));
        let Parity::Buffers(cases) = fused.parity else {
            panic!("{} has buffer cases", fused.name)
        };
        for wave in [32, 64] {
            let tg = target(wave);
            for case in cases(&mut rng, false) {
                let sc = |name: &str| case.scalars.iter().find(|s| s.0 == name).unwrap().2;
                let n_kv = sc("n_kv_heads") * sc("head_dim");
                let mut scalars = case.scalars.clone();
                scalars.push(u32s("n_kv", n_kv as u32));
                let proj = run(&(unfused.variants[0].build)(tg, wave), &case.inputs, &scalars);
                let cache_in =
                    |name: &str| case.inputs.iter().find(|i| i.0 == name).unwrap().clone();
                let append_in = vec![
                    ("k".to_string(), ScalarType::F32, proj["k_y"].clone()),
                    ("v".to_string(), ScalarType::F32, proj["v_y"].clone()),
                    cache_in("k_cache"),
                    cache_in("v_cache"),
                ];
                let mut append_sc = scalars.clone();
                append_sc.push(u32s("n_tokens", sc("t") as u32));
                append_sc.push(u32s("neox", 0));
                for av in append.variants.iter().filter(|v| v.name == "lanes") {
                    let want = run_written(&(av.build)(tg, wave), &append_in, &append_sc);
                    for v in &fused.variants {
                        let got = run_written(&(v.build)(tg, wave), &case.inputs, &case.scalars);
                        let at = format!("{}/{}, wave {wave}, {}", fused.name, v.name, case.name);
                        assert!(got["q_y"] == proj["q_y"], "{at}: q_y differs");
                        for c in ["k_cache", "v_cache"] {
                            assert!(got[c] == want[c], "{at}: {c} differs from {}", av.name);
                        }
                    }
                }
            }
        }
    }
}

/// Every variant of every `_res_rmsnorm` family gives, bit for bit, its `_res` family's baseline
/// `y` and `rmsnorm_q8_1s_f32` of that `y` (`norm_xq`, `norm_xs`), at both wave sizes (the tail's
/// sum of squares emulates the norm's 512 lanes at each), and leaves its counter at 0: odd block
/// counts (SmolLM2's 576, 4064), the longest row the tail takes (four batches of loads a phase
/// at 64 lanes), t = 1..8 and 11 (a token a pass of the tail), a row of zeros, one with a NaN and one with a value near `f32::MAX`.
#[test]
fn the_res_norm_gemvs_equal_the_gemv_then_the_norm() {
    let mut rng = rng_for("gemv-res-norm", std::process::id() as u64);
    let shapes: [(usize, usize, usize); 6] = [
        (576, 416, 1),
        (32 * 7, 32 * 9, 8),
        (32, 64, 3),
        (1536, 96, 6),
        (4064, 32, 5),
        (96, 64, 11),
    ];
    for wt in [WType::Q8_0, WType::Q4_0, WType::Q4_1] {
        let unfused = dense::family_name(wt, Layout::Repacked, dense::Epilogue::Residual);
        let fused = dense::family_name(wt, Layout::Repacked, dense::Epilogue::ResidualNorm);
        assert_eq!(fused, format!("{unfused}_rmsnorm"));
        let names = |f: &KernelSpec| f.variants.iter().map(|v| v.name).collect::<Vec<_>>();
        assert_eq!(names(&fam(&fused)), names(&fam(&unfused)), "{fused}: the `_res` variants");
        for wave in [32, 64] {
            let tg = target(wave);
            for (i, &(n, k, t)) in shapes.iter().enumerate() {
                // One case a wave at the longest row the tail takes (slow to run).
                let (n, t) = if i == 0 && wt == WType::Q8_0 {
                    (norm::NORM_MAX_K as usize, 7)
                } else {
                    (n, t)
                };
                let inputs = res_norm_inputs(&mut rng, wt, Layout::Repacked, (n, k, t));
                let eps = ("eps".to_string(), ScalarType::F32, 1e-5f32.to_bits() as u64);
                let scalars =
                    vec![u32s("n", n as u32), u32s("k", k as u32), u32s("t", t as u32), eps];
                let y = run(&(fam(&unfused).baseline().build)(tg, wave), &inputs, &scalars)["y"]
                    .clone();
                let gain: Vec<_> = inputs.iter().filter(|x| x.0 == "weight").cloned().collect();
                let mut norm_in = vec![("x".to_string(), ScalarType::F32, y.clone())];
                norm_in.extend(gain);
                let mut norm_sc = vec![u32s("rows", t as u32), u32s("n", n as u32)];
                norm_sc.push(scalars[3].clone());
                let normed = run(&crate::rmsnorm::rmsnorm_q8_1s(tg, wave), &norm_in, &norm_sc);
                let mut fused_in = inputs.clone();
                fused_in.push(("counters".to_string(), ScalarType::U32, vec![0; 4]));
                for v in &fam(&fused).variants {
                    let got = run_written(&(v.build)(tg, wave), &fused_in, &scalars);
                    let at = format!("{fused}/{}, wave {wave}, n={n} k={k} t={t}", v.name);
                    assert!(got["y"] == y, "{at}: y differs from {unfused}'s");
                    assert!(got["norm_xq"] == normed["xq"], "{at}: norm_xq differs");
                    assert!(got["norm_xs"] == normed["xs"], "{at}: norm_xs differs");
                    assert_eq!(got["counters"], vec![0; 4], "{at}: the counter");
                }
            }
        }
    }
}

/// What each GEMV reads before its grid-dependency wait (`Kernel::reads_before_grid_wait`, which
/// the runtime weighs before overlapping a launch): the early twins and the k4 wide variants
/// their weights (the MoE early variants the expert ids too) and nothing else (never the
/// activations, which the grid before may write); the plain variants nothing. On every NVIDIA arch and one AMD arch of each wave size (where the
/// wait lowers to nothing, the same IR).
#[test]
fn early_loads_read_only_weights_before_the_wait() {
    let names = |k: &kiln_ir::Kernel| -> Vec<String> {
        k.reads_before_grid_wait().iter().map(|&p| k.params[p].name.clone()).collect()
    };
    let archs =
        TARGETS.iter().filter(|t| t.sm().is_some() || ["gfx906", "gfx1100"].contains(&t.name));
    for t in archs {
        let w = t.default_wave();
        let check = |family: &str, variant: &str, want: &[&str]| {
            let f = fam(family);
            let v = f.variants.iter().find(|v| v.name == variant).expect("a variant of the family");
            let k = (v.build)(t, w);
            assert_eq!(names(&k), want, "{family}/{variant} on {t}");
        };
        check("gemv_q8_0_rp", "p1r2u8w2e", &["wq", "ws"]);
        check("gemv_q8_0_rp", "p1r2u8w2", &[]);
        check("gemv_q8_0_rp_res", "p1u16w4e", &["wq", "ws"]);
        check("gemv_q8_0_rp_res_rmsnorm", "p1u16w4e", &["wq", "ws"]);
        check("gemv_q8_0_rp_swiglu_q8_1s_norm", "p1e", &["gate_wq", "gate_ws", "up_wq", "up_ws"]);
        check("gemv_q8_0_rp_swiglu_q8_1s_norm", "p1", &[]);
        // The MoE early variants read the expert ids too (the runtime weighs them alike).
        check("gemv_moe_q8_0_rp", "slot_r2w4u2e", &["wq", "ws", "ids"]);
        check("gemv_moe_q8_0_rp", "slot_r2w4u2", &[]);
        check("gemv_moe_q8_0_rp", "slot", &[]);
        if k4::wide_archs().iter().any(|a| a == t.name) {
            check("gemv_q8_0_rp_k4", "wide_t2_g4", &["wq", "ws"]);
        }
    }
}

/// The k4 variants built for a measurement only (`wide_t1_g1_w8_r64`, `_r80`) are never what a
/// call is routed to: on sm_90 the variants before them take every call, elsewhere they are not
/// admitted. (Until 2026-12-06 they admitted every arch, so a call past 8192 rows on sm_80,
/// sm_86, sm_89, gfx942 or gfx12 took `_r64`, never measured there.) First admitted wins, as
/// the runtime's router does.
#[test]
fn the_k4_measurement_variants_are_never_routed() {
    let f = fam("gemv_q8_0_rp_k4");
    for t in TARGETS {
        for n in [16u64, 4096, 8192, 8208, 14336, 65536] {
            for tok in [1u64, 4, 8] {
                let shape = |name: &str| match name {
                    "n" => n,
                    "k" => 4096,
                    "t" => tok,
                    other => panic!("no shape rule on {other} expected"),
                };
                let chosen = f.routed(t.name, &shape);
                assert!(
                    !chosen.contains("_r") && !chosen.contains("_hs"),
                    "{} n={n} t={tok}: routed to {chosen}, a variant built for a measurement",
                    t.name
                );
            }
        }
    }
}

/// Prefetches issued before a kernel's grid-dependency wait (nested blocks included).
fn prefetches_before_the_wait(k: &kiln_ir::Kernel) -> usize {
    let mut count = 0;
    let waits = k.before_grid_wait(|_, d| {
        count += usize::from(matches!(d.op, kiln_ir::Op::Prefetch { .. }));
    });
    assert!(waits, "{}: a wait", k.name);
    count
}

/// The dense twins that also ask L2 for the rest of their rows before the wait
/// (`EarlyLoads::HeldAhead`, knob `e=2`) issue more prefetches there than the twins without it,
/// read the same buffers before it, and write the same bits on fresh random inputs (odd `n`, `k`
/// not a multiple of 256, one token).
#[test]
fn ahead_twins_prefetch_the_rest_and_keep_the_bits() {
    let mut rng = rng_for("gemv-ahead", std::process::id() as u64);
    let t = TARGETS.iter().find(|t| t.name == "sm_90").unwrap();
    let reads = |k: &kiln_ir::Kernel| -> Vec<String> {
        k.reads_before_grid_wait().iter().map(|&p| k.params[p].name.clone()).collect()
    };
    let g = dense::Gemv {
        unroll: 8,
        waves: 2,
        ..dense::Gemv::tiled(WType::Q8_0, Layout::Repacked, dense::Epilogue::Plain, 1, 4)
    };
    let (held, ahead) = (dense::build(t, 32, g.early()), dense::build(t, 32, g.early_ahead()));
    assert!(ahead.name.ends_with("p1r4u8w2ea"), "{}", ahead.name);
    assert_eq!(reads(&ahead), reads(&held));
    assert!(prefetches_before_the_wait(&ahead) > prefetches_before_the_wait(&held));
    for (n, k) in [(77, 4096 + 96), (8, 32), (300, 2048)] {
        let epi = dense::Epilogue::Plain;
        let inputs = dense_inputs(&mut rng, WType::Q8_0, Layout::Repacked, epi, (n, k, 1));
        let scalars = vec![u32s("n", n as u32), u32s("k", k as u32), u32s("t", 1)];
        let want = run(&held, &inputs, &scalars)["y"].clone();
        assert!(run(&ahead, &inputs, &scalars)["y"] == want, "n={n} k={k}");
    }
}
