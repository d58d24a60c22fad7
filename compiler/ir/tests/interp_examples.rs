//! The example kernels against plain-Rust references, at wave 32 and 64: bitwise against a model
//! of the same reduction order, argmax exact, and tsum<P> against an xor butterfly per token.

use crate::interp_util;

use interp_util::*;
use kiln_ir::examples::{argmax_row, tsum_tokens, wave_sum, workgroup_sum};
use kiln_ir::interp::{self, Arg, RunOptions};
use kiln_ir::{verify, Access, KernelBuilder, ScalarType, ShapeExpr, Type};
use rand::Rng;

#[test]
fn examples_verify() {
    for w in WAVES {
        for k in [
            wave_sum(w),
            workgroup_sum(w, 256),
            argmax_row(w, 1024),
            tsum_tokens(w, 8, 5),
            tsum_tokens(w, w, w),
        ] {
            verify(&k, None).unwrap_or_else(|e| panic!("{}: {e}", k.name));
        }
    }
}

#[test]
fn wave_sum_is_a_butterfly_per_wave() {
    let (mut rng, _seed) = rng();
    for w in WAVES {
        let waves = rng.gen_range(1..9u32);
        let x: Vec<f32> = (0..waves * w).map(|_| wild_f32(&mut rng)).collect();
        let mut args = [
            Arg::Buffer(f32_bytes(&x)),
            Arg::Buffer(vec![0; 4 * waves as usize]),
            Arg::Scalar(waves as u64),
        ];
        let stats = run(&wave_sum(w), &mut args).unwrap();
        assert_eq!(stats.workgroups, waves as u64);
        let out = bytes_f32(buffer(&args[1]));
        for g in 0..waves as usize {
            let want = butterfly(&x[g * w as usize..(g + 1) * w as usize], |a, b| a + b)[0];
            assert_eq!(out[g].to_bits(), want.to_bits(), "wave {w}, group {g}");
        }
    }
}

/// The model of `workgroup_sum`'s order: per-lane strided sums, a butterfly per wave, then a
/// butterfly over the partials padded with +0.
fn workgroup_sum_model(row: &[f32], wave: usize, lanes: usize) -> f32 {
    let acc: Vec<f32> =
        (0..lanes).map(|t| row.iter().skip(t).step_by(lanes).fold(0.0f32, |a, &x| a + x)).collect();
    let mut partials: Vec<f32> = acc.chunks(wave).map(|c| butterfly(c, |a, b| a + b)[0]).collect();
    partials.resize(wave, 0.0);
    butterfly(&partials, |a, b| a + b)[0]
}

#[test]
fn workgroup_sum_matches_the_model_bitwise() {
    let (mut rng, _seed) = rng();
    for w in WAVES {
        for lanes in [w as usize, 2 * w as usize, 256, 1024] {
            for n in [0usize, 1, 7, lanes - 1, lanes, lanes + 3, rng.gen_range(1..5000)] {
                let rows = rng.gen_range(1..4usize);
                let x: Vec<f32> = (0..rows * n).map(|_| wild_f32(&mut rng)).collect();
                let k = workgroup_sum(w, lanes as u32);
                let mut args = [
                    Arg::Buffer(f32_bytes(&x)),
                    Arg::Buffer(vec![0xff; 4 * rows]),
                    Arg::Scalar(n as u64),
                    Arg::Scalar(rows as u64),
                ];
                run(&k, &mut args).unwrap();
                let out = bytes_f32(buffer(&args[1]));
                for r in 0..rows {
                    let want = workgroup_sum_model(&x[r * n..(r + 1) * n], w as usize, lanes);
                    assert_eq!(
                        out[r].to_bits(),
                        want.to_bits(),
                        "wave {w}, {lanes} lanes, n {n}, row {r}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_sum_model_is_order_sensitive() {
    // Guard against a vacuous bitwise test: a different order must give different bits often.
    let (mut rng, _seed) = rng();
    let mut differs = 0;
    for _ in 0..20 {
        let x: Vec<f32> = (0..3000).map(|_| wild_f32(&mut rng)).collect();
        let sequential = x.iter().fold(0.0f32, |a, &b| a + b);
        if sequential.to_bits() != workgroup_sum_model(&x, 32, 256).to_bits() {
            differs += 1;
        }
    }
    assert!(differs >= 10, "only {differs} of 20 sums depend on the order");
}

/// torch.argmax: NaN largest, first index among equals.
fn argmax_model(row: &[f32]) -> u32 {
    if row.is_empty() {
        return u32::MAX;
    }
    let mut best = 0;
    for (i, &x) in row.iter().enumerate() {
        let b = row[best];
        if !b.is_nan() && (x.is_nan() || x > b) {
            best = i;
        }
    }
    best as u32
}

#[test]
fn argmax_row_matches_torch_rules() {
    let (mut rng, _seed) = rng();
    let palette = [1.0f32, -1.0, 0.0, -0.0, 3.5, f32::NEG_INFINITY, f32::INFINITY, f32::NAN];
    for w in WAVES {
        for lanes in [w as usize, 256, 1024] {
            for case in 0..8 {
                let n = [1usize, 3, 33, lanes, lanes + 1, 1000, 2047, rng.gen_range(1..9000)][case];
                let rows = 6;
                let mut x = Vec::new();
                for r in 0..rows {
                    x.extend((0..n).map(|_| match r {
                        0 => f32::NEG_INFINITY,
                        1 => wild_f32(&mut rng),
                        // Few distinct values: many ties.
                        2 => palette[rng.gen_range(0..5)],
                        // Ties with the zeros and infinities, sometimes NaN.
                        3 => {
                            let without_nan = usize::from(rng.gen_bool(0.9));
                            palette[rng.gen_range(0..palette.len() - without_nan)]
                        }
                        4 => [0.0, -0.0][rng.gen_range(0..2)],
                        _ => f32::NAN,
                    }));
                }
                // A late NaN and a late maximum in row 1.
                if n > 10 {
                    x[n + n - 3] = f32::NAN;
                    x[n + n - 7] = f32::MAX;
                }
                let k = argmax_row(w, lanes as u32);
                let mut args = [
                    Arg::Buffer(f32_bytes(&x)),
                    Arg::Buffer(vec![0; 4 * rows]),
                    Arg::Scalar(n as u64),
                    Arg::Scalar(rows as u64),
                ];
                run(&k, &mut args).unwrap();
                let out = bytes_u32(buffer(&args[1]));
                for r in 0..rows {
                    let want = argmax_model(&x[r * n..(r + 1) * n]);
                    assert_eq!(out[r], want, "wave {w}, {lanes} lanes, n {n}, row {r}");
                }
                assert_eq!(out[0], 0, "a row of -inf gives 0");
            }
        }
    }
}

/// The tsum<p> powers of two for a wave.
fn powers(w: u32) -> Vec<u32> {
    (0..=w.trailing_zeros()).map(|s| 1 << s).collect()
}

#[test]
fn tsum_owner_lanes_equal_a_butterfly_of_each_token() {
    let (mut rng, _seed) = rng();
    for w in WAVES {
        for p in powers(w) {
            let mut ts = vec![p, rng.gen_range(1..=p)];
            if p > 1 {
                ts.push(p - 1);
            }
            for t in ts {
                let groups = 3usize;
                let (wu, tu) = (w as usize, t as usize);
                let x: Vec<f32> = (0..groups * tu * wu).map(|_| wild_f32(&mut rng)).collect();
                let k = tsum_tokens(w, p, t);
                let mut args = [
                    Arg::Buffer(f32_bytes(&x)),
                    Arg::Buffer(vec![0xff; 4 * groups * tu]),
                    Arg::Scalar(groups as u64),
                ];
                run(&k, &mut args).unwrap();
                let out = bytes_f32(buffer(&args[1]));
                for g in 0..groups {
                    for tok in 0..tu {
                        let row = &x[(g * tu + tok) * wu..][..wu];
                        let owner = tok * wu / p as usize;
                        let want = butterfly(row, |a, b| a + b)[owner];
                        let got = out[g * tu + tok];
                        assert_eq!(
                            got.to_bits(),
                            want.to_bits(),
                            "wave {w}, p {p}, t {t}, group {g}, token {tok}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn tsum_every_lane_holds_its_tokens_butterfly() {
    // Every lane of [k*W/p, (k+1)*W/p) holds token k's butterfly value at that lane; tokens past
    // t are +0.
    let (mut rng, _seed) = rng();
    for w in WAVES {
        for p in powers(w) {
            let t = rng.gen_range(1..=p);
            let mut b = KernelBuilder::new("tsum_all_lanes", w);
            b.workgroup_size([w, 1, 1]);
            let x = b.buffer("x", ScalarType::F32, Access::Read);
            let out = b.buffer("out", ScalarType::F32, Access::Write);
            b.set_buffer_len(x, ShapeExpr::constant((t * w) as u64));
            let lane = b.lane();
            let wv = b.u32(w);
            let vals: Vec<_> = (0..t)
                .map(|k| {
                    let kv = b.u32(k);
                    let r = b.mul(kv, wv);
                    let i = b.add(r, lane);
                    b.load(x, i, Type::F32)
                })
                .collect();
            let s = b.tsum(p, &vals);
            b.store(out, lane, s);
            let k = b.finish();
            let xs: Vec<f32> = (0..t * w).map(|_| wild_f32(&mut rng)).collect();
            let mut args = [Arg::Buffer(f32_bytes(&xs)), Arg::Buffer(vec![0xff; 4 * w as usize])];
            run(&k, &mut args).unwrap();
            let got = bytes_f32(buffer(&args[1]));
            let per = (w / p) as usize;
            for (lane, got) in got.iter().enumerate() {
                let tok = lane / per;
                let want = if tok < t as usize {
                    butterfly(&xs[tok * w as usize..][..w as usize], |a, b| a + b)[lane]
                } else {
                    0.0
                };
                assert_eq!(got.to_bits(), want.to_bits(), "wave {w}, p {p}, t {t}, lane {lane}");
            }
        }
    }
}

#[test]
fn parallel_and_sequential_runs_agree() {
    let (mut rng, _seed) = rng();
    let (rows, n) = (16usize, 3001usize);
    let x: Vec<f32> = (0..rows * n).map(|_| wild_f32(&mut rng)).collect();
    let k = workgroup_sum(64, 256);
    let mut outs = Vec::new();
    for parallel in [true, false] {
        let mut args = [
            Arg::Buffer(f32_bytes(&x)),
            Arg::Buffer(vec![0; 4 * rows]),
            Arg::Scalar(n as u64),
            Arg::Scalar(rows as u64),
        ];
        let opts = RunOptions { parallel, ..RunOptions::default() };
        let stats = interp::run(&k, &mut args, &opts).unwrap();
        outs.push((buffer(&args[1]).to_vec(), stats));
    }
    assert_eq!(outs[0], outs[1]);
}
