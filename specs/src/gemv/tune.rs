//! The `kiln tune` knob spaces of the dense GEMV families (`specs/src/tune.rs` gathers them).

use super::dense::{build, EarlyLoads, Epilogue, Gemv};
use super::format::{Layout, WType};
use super::{bench_inputs, dense_bytes};
use crate::bench::{f32_arg, u32_arg, BenchCase};

/// The knob spaces of `kiln tune` for the repacked dense families (the layout the engine
/// runs): tokens a pass, rows a wave, unroll, waves a workgroup, and early loads. Every combination keeps the
/// dense order (block `b` to slot `b mod W`, whatever the tile), so the gate passes them all.
/// Buckets by tokens (1, 2, 3-4, 5-8) and rows (fewer than 8192, or more), timed at K = 4096 and
/// N = 4096 or 14336; a bucket times the passes of `t/2..=t` tokens.
pub fn tune_spaces() -> Vec<crate::tune::TuneSpace> {
    use crate::tune::{Bucket, Knob, TuneSpace};
    use Epilogue::Plain;
    use Layout::Repacked;
    fn space(family: &'static str, wt: WType, build: crate::tune::TuneBuildFn) -> TuneSpace {
        let max = u64::from(u32::MAX);
        let (lo, hi) = ((1, 8191, 4096u32), (8192, max, 14336u32));
        let table: [(&'static str, (u64, u64, u32), (u64, u64, u32)); 8] = [
            ("t1_nlo", (1, 1, 1), lo),
            ("t1_nhi", (1, 1, 1), hi),
            ("t2_nlo", (2, 2, 2), lo),
            ("t2_nhi", (2, 2, 2), hi),
            ("t3_4_nlo", (3, 4, 4), lo),
            ("t3_4_nhi", (3, 4, 4), hi),
            ("t5_8_nlo", (5, max, 8), lo),
            ("t5_8_nhi", (5, max, 8), hi),
        ];
        let buckets = table
            .into_iter()
            .map(|(name, (tlo, thi, t), (nlo, nhi, n))| {
                let (n, k, t) = (n as usize, 4096usize, t as usize);
                Bucket {
                    name,
                    shapes: vec![("t".into(), tlo, thi), ("n".into(), nlo, nhi)],
                    case: BenchCase {
                        flops: None,
                        name: "gemv_tune",
                        scalars: vec![
                            u32_arg("n", n as u32),
                            u32_arg("k", k as u32),
                            u32_arg("t", t as u32),
                        ],
                        inputs: bench_inputs(wt, Repacked, Plain, n, k, t),
                        bytes: dense_bytes(wt, Plain, n as u64, k as u64, t as u64),
                        values: vec![],
                    },
                }
            })
            .collect();
        TuneSpace {
            family,
            knobs: vec![
                Knob { name: "p", values: vec![1, 2, 4, 8], omitted: None },
                Knob { name: "r", values: vec![1, 2, 4], omitted: None },
                // 8: a lane's whole row in flight at k = 4096 (the T = 1 routes' unroll).
                Knob { name: "u", values: vec![1, 2, 8], omitted: None },
                Knob { name: "w", values: vec![2, 4, 8], omitted: None },
                // 1: the first trips' weights loaded before the grid-dependency wait and held
                // there (`EarlyLoads::Held`; one token a pass only). Entries from before it: 0.
                // 2: also the rest of the rows asked of L2 there (`EarlyLoads::HeldAhead`).
                Knob { name: "e", values: vec![0, 1, 2], omitted: Some(0) },
            ],
            buckets,
            build,
            fits: |b, k| {
                let t = b.case.scalars.iter().find(|s| s.0 == "t").map_or(1, |s| s.2 as u32);
                k[0] <= t && 2 * k[0] >= t && (k[4] == 0 || k[0] == 1)
            },
        }
    }
    fn tiled(wt: WType, k: &[u32]) -> Gemv {
        let g = Gemv {
            unroll: k[2],
            waves: k[3],
            ..Gemv::tiled(wt, Layout::Repacked, Epilogue::Plain, k[0], k[1])
        };
        with_early(g, k[4])
    }
    vec![
        space("gemv_q8_0_rp", WType::Q8_0, |t, w, k| Ok(build(t, w, tiled(WType::Q8_0, k)))),
        space("gemv_q4_0_rp", WType::Q4_0, |t, w, k| Ok(build(t, w, tiled(WType::Q4_0, k)))),
        space("gemv_q4_1_rp", WType::Q4_1, |t, w, k| Ok(build(t, w, tiled(WType::Q4_1, k)))),
        one_token_space("gemv_q8_0_rp_res", Epilogue::Residual, |t, w, k| {
            Ok(build(t, w, one_token(Epilogue::Residual, k)))
        }),
        one_token_space("gemv_q8_0_rp_res_rmsnorm", Epilogue::ResidualNorm, |t, w, k| {
            Ok(build(t, w, one_token(Epilogue::ResidualNorm, k)))
        }),
        one_token_space("gemv_q8_0_rp_swiglu_q8_1s", Epilogue::SwigluQ8, |t, w, k| {
            Ok(build(t, w, one_token(Epilogue::SwigluQ8, k)))
        }),
    ]
}

/// A one-token candidate of a Q8_0 epilogue family: knobs `p` (tokens a pass), `r` (rows a
/// wave), `u` (the block loop's unroll), `w` (waves a workgroup), `e` (early loads).
fn one_token(epi: Epilogue, k: &[u32]) -> Gemv {
    let g = Gemv::tiled(WType::Q8_0, Layout::Repacked, epi, k[0], k[1]);
    with_early(Gemv { unroll: k[2], waves: k[3], ..g }, k[4])
}

/// `g` with the early loads of knob `e`'s value ([`EarlyLoads::from_knob`]).
fn with_early(g: Gemv, e: u32) -> Gemv {
    let early = EarlyLoads::from_knob(e).unwrap_or_else(|| panic!("knob e is 0, 1 or 2, not {e}"));
    Gemv { early, ..g }
}

/// The one-token space of a Q8_0 epilogue family, at the shapes of a Llama-3-8B-shaped decode
/// step (the families' bench shapes): the residual GEMVs by `k` (the attention output's 4096,
/// the down projection's 14336: their routes differ by `k`), the gate/up at N = 14336, K = 4096.
/// A pass of two tokens is a candidate for one (the gate/up's route, `p2`, is one).
fn one_token_space(
    family: &'static str,
    epi: Epilogue,
    build: crate::tune::TuneBuildFn,
) -> crate::tune::TuneSpace {
    use crate::tune::{Bucket, Knob, TuneSpace};
    let max = u64::from(u32::MAX);
    let case = |n: usize, k: usize| {
        let mut c = BenchCase {
            flops: None,
            name: "gemv_tune",
            scalars: vec![u32_arg("n", n as u32), u32_arg("k", k as u32), u32_arg("t", 1)],
            inputs: bench_inputs(WType::Q8_0, Layout::Repacked, epi, n, k, 1),
            bytes: dense_bytes(WType::Q8_0, epi, n as u64, k as u64, 1),
            values: vec![],
        };
        if epi == Epilogue::ResidualNorm {
            c.scalars.push(f32_arg("eps", 1e-5));
        }
        c
    };
    let one = ("t".to_string(), 1, 1);
    let buckets = if epi == Epilogue::SwigluQ8 {
        vec![Bucket { name: "t1", shapes: vec![one], case: case(14336, 4096) }]
    } else {
        vec![
            Bucket {
                name: "t1_klo",
                shapes: vec![one.clone(), ("k".into(), 1, 8191)],
                case: case(4096, 4096),
            },
            Bucket {
                name: "t1_khi",
                shapes: vec![one, ("k".into(), 8192, max)],
                case: case(4096, 14336),
            },
        ]
    };
    TuneSpace {
        family,
        knobs: vec![
            Knob { name: "p", values: vec![1, 2], omitted: None },
            Knob { name: "r", values: vec![1, 2, 4], omitted: None },
            // 16: a lane's whole row in flight at k = 14336.
            Knob { name: "u", values: vec![1, 2, 8, 16], omitted: None },
            Knob { name: "w", values: vec![2, 4, 8], omitted: None },
            Knob { name: "e", values: vec![0, 1], omitted: Some(0) },
        ],
        buckets,
        build,
        // The early form only matters with one token a pass.
        fits: |_, k| k[4] == 0 || k[0] == 1,
    }
}
