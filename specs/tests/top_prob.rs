//! row_top_prob: both variants at wave 32 and 64, bitwise against a host model of the documented
//! summation order (src/top_prob.rs), bitwise against each other, and within a few ulp of an f64
//! softmax.

use crate::common;
use common::*;
use kiln_specs::math::{exp_sub_f32, ir_max};
use kiln_specs::top_prob::{SEGMENT, SEGMENT_LANES};
use rand::Rng;

/// The documented order, on the host.
fn model(row: &[f32], wave: usize) -> f32 {
    let n = row.len();
    let lanes = SEGMENT_LANES as usize;
    let groups = lanes / wave;
    let seg = SEGMENT as usize;
    let mut mu = vec![f32::NEG_INFINITY; lanes];
    let mut a = vec![0.0f32; lanes];
    for j in 0..n.div_ceil(seg) {
        let x = |i: usize| if i < n { row[i] } else { f32::NEG_INFINITY };
        let xs: Vec<[f32; 4]> =
            (0..lanes).map(|t| std::array::from_fn(|e| x(j * seg + 4 * t + e))).collect();
        let m = xs.iter().flatten().fold(f32::NEG_INFINITY, |m, &v| ir_max(m, v));
        let s: Vec<f32> = xs
            .iter()
            .map(|v| {
                let e: Vec<f32> = v.iter().map(|&x| exp_sub_f32(x, m)).collect();
                ((e[0] + e[1]) + e[2]) + e[3]
            })
            .collect();
        let ws: Vec<f32> = s.chunks(wave).map(tree_sum).collect();
        let sigma = tree_sum(&ws);
        let r = j % lanes;
        let mu2 = ir_max(mu[r], m);
        a[r] = a[r] * exp_sub_f32(mu[r], mu2) + sigma * exp_sub_f32(m, mu2);
        mu[r] = mu2;
    }
    let big_m = mu.iter().fold(f32::NEG_INFINITY, |m, &v| ir_max(m, v));
    let u: Vec<f32> = (0..lanes).map(|r| a[r] * exp_sub_f32(mu[r], big_m)).collect();
    let w: Vec<f32> = u.chunks(wave).map(tree_sum).collect();
    assert_eq!(w.len(), groups);
    let total = tree_sum(&w);
    if big_m == f32::NEG_INFINITY {
        f32::NAN
    } else {
        1.0 / total
    }
}

/// 1 / sum exp(l - max) in f64.
fn exact(row: &[f32]) -> f64 {
    let m = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
    1.0 / row.iter().map(|&v| (v as f64 - m).exp()).sum::<f64>()
}

/// Returns the wave-32 model results.
fn check(logits: &[f32], rows: u32, n: u32, what: &str) -> Vec<f32> {
    let mut first = None;
    for (_, wave) in waves() {
        let want: Vec<f32> = logits.chunks(n as usize).map(|r| model(r, wave as usize)).collect();
        for (row, (&w, r)) in want.iter().zip(logits.chunks(n as usize)).enumerate() {
            let e = exact(r);
            if e.is_finite() && r.iter().all(|v| v.is_finite()) {
                let rel = ((w as f64 - e) / e).abs();
                assert!(rel < 1e-5, "{what}: model {w} vs exact {e} (row {row}, n {n})");
            }
        }
        first.get_or_insert_with(|| want.clone());
        let mut results = vec![];
        for (variant, k) in variants("row_top_prob", wave) {
            let call = Call::new().buf("logits", f32_bytes(logits)).u32("rows", rows).u32("n", n);
            let mut args = args_for(&k, &call);
            for replay in 0..2 {
                run_args(&k, &mut args, &Default::default());
                let got = bytes_f32(out(&k, &args, "out"));
                for (row, (&g, &w)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        same_f32(g, w),
                        "{what}: {variant} wave {wave} row {row} n {n} run {replay}: {g:e} ({:#x}) vs model {w:e} ({:#x})",
                        g.to_bits(),
                        w.to_bits()
                    );
                }
                assert_workspaces_zero(&k, &args);
            }
            results.push(bytes_f32(out(&k, &args, "out")));
        }
        for r in &results[1..] {
            assert!(
                r.iter().zip(&results[0]).all(|(a, b)| same_f32(*a, *b)),
                "{what}: variants differ"
            );
        }
    }
    first.unwrap()
}

#[test]
fn top_prob_random_shapes() {
    let mut rng = rng("top_prob_random_shapes");
    for &n in &[1u32, 2, 5, 100, 1023, 1024, 1025, 3000, 4096, 5001, 33_000] {
        let rows = rng.gen_range(1..=8);
        let spread = [1.0f32, 10.0, 100.0][rng.gen_range(0..3)];
        let logits: Vec<f32> = (0..rows * n).map(|_| rng.gen_range(-spread..spread)).collect();
        check(&logits, rows, n, &format!("spread {spread}"));
    }
}

#[test]
fn top_prob_vocab_sized() {
    let mut rng = rng("top_prob_vocab_sized");
    for &(rows, n) in &[(1u32, 248_320u32), (1, 262_144 + 1027), (2, 151_937)] {
        let logits: Vec<f32> = (0..rows * n).map(|_| rng.gen_range(-15.0f32..25.0)).collect();
        check(&logits, rows, n, "vocab");
    }
}

#[test]
fn top_prob_edge_cases() {
    let n = 5000usize;
    let ninf = f32::NEG_INFINITY;
    let mut rows: Vec<Vec<f32>> = vec![];
    rows.push(vec![ninf; n]); // all -inf: NaN (torch)
    let mut r = vec![ninf; n];
    r[4999] = 3.0;
    rows.push(r); // one finite value: 1
    let mut r: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    for v in &mut r[1024..2048] {
        *v = ninf; // a whole masked segment
    }
    rows.push(r);
    let mut r = vec![0.0; n];
    r[17] = f32::NAN;
    rows.push(r); // NaN
    let mut r = vec![0.0; n];
    r[4000] = f32::INFINITY;
    rows.push(r); // +inf: NaN
    rows.push(vec![1.5; n]); // uniform: 1/n
    let mut r = vec![-1e30; n];
    r[2500] = 1e30;
    rows.push(r); // dominant: 1
    let mut r = vec![-80.0; n];
    r[3] = 0.0;
    rows.push(r); // subnormal exps
    let count = rows.len() as u32;
    let got = check(&rows.concat(), count, n as u32, "edges");
    assert!(got[0].is_nan(), "all -inf");
    assert_eq!(got[1], 1.0, "one finite value");
    assert!(got[3].is_nan() && got[4].is_nan(), "NaN and +inf");
    assert!((got[5] * n as f32 - 1.0).abs() < 1e-5, "uniform row: {}", got[5]);
    assert_eq!(got[6], 1.0, "dominant");
}
