//! argmax_rows: both variants at wave 32 and 64 against torch.argmax semantics, on random rows
//! with ties, NaN, infinities, and sizes around every boundary (vector, chunk, split).

use crate::common;
use common::*;
use rand::Rng;

/// torch.argmax of one row: the first maximum; NaN is largest (first NaN wins).
fn reference(row: &[f32]) -> i32 {
    let mut best = row[0];
    let mut at = 0;
    for (i, &x) in row.iter().enumerate().skip(1) {
        if x > best || (x.is_nan() && !best.is_nan()) {
            best = x;
            at = i;
        }
    }
    at as i32
}

/// Runs every variant on `logits` (`rows x n`) and checks each against the reference; the split
/// variant runs twice on the same workspace (a graph replay) and must leave it zeroed.
fn check(logits: &[f32], rows: u32, n: u32, what: &str) {
    let want: Vec<i32> = logits.chunks(n as usize).map(reference).collect();
    for (_, wave) in waves() {
        for (variant, k) in variants("argmax_rows", wave) {
            let call = Call::new().buf("logits", f32_bytes(logits)).u32("rows", rows).u32("n", n);
            let mut args = args_for(&k, &call);
            for replay in 0..2 {
                run_args(&k, &mut args, &Default::default());
                let got = bytes_i32(out(&k, &args, "out"));
                assert_eq!(
                    got, want,
                    "{what}: {variant} wave {wave} rows {rows} n {n} run {replay}"
                );
                assert_workspaces_zero(&k, &args);
            }
        }
    }
}

fn random_row(rng: &mut impl Rng, n: usize, kind: u32) -> Vec<f32> {
    match kind {
        // Few distinct values: many ties.
        0 => (0..n).map(|_| rng.gen_range(-3..=3) as f32).collect(),
        // Continuous.
        1 => (0..n).map(|_| rng.gen_range(-20.0f32..20.0)).collect(),
        // Mostly -inf with a few values.
        2 => {
            (0..n)
                .map(|_| {
                    if rng.gen_ratio(1, 50) {
                        rng.gen_range(-1.0f32..1.0)
                    } else {
                        f32::NEG_INFINITY
                    }
                })
                .collect()
        }
        // Ties plus some NaN and +inf.
        _ => (0..n)
            .map(|_| match rng.gen_range(0..100) {
                0 => f32::NAN,
                1 => f32::INFINITY,
                _ => rng.gen_range(-2..=2) as f32,
            })
            .collect(),
    }
}

#[test]
fn argmax_random_shapes() {
    let mut rng = rng("argmax_random_shapes");
    for &n in &[1u32, 3, 4, 5, 31, 127, 1000, 1023, 1024, 1025, 4097, 32771] {
        let rows = rng.gen_range(1..=8);
        let kind = rng.gen_range(0..4);
        let logits: Vec<f32> =
            (0..rows).flat_map(|_| random_row(&mut rng, n as usize, kind)).collect();
        check(&logits, rows, n, &format!("kind {kind}"));
    }
}

#[test]
fn argmax_vocab_sized() {
    let mut rng = rng("argmax_vocab_sized");
    // Qwen-style vocabulary (n % 4 == 0) and an odd size near it.
    for &(rows, n) in &[(1u32, 248_320u32), (2, 248_319)] {
        let logits: Vec<f32> = (0..rows * n).map(|_| rng.gen_range(-30.0f32..30.0)).collect();
        check(&logits, rows, n, "vocab");
    }
}

#[test]
fn argmax_edge_cases() {
    let n = 4100u32;
    let ninf = f32::NEG_INFINITY;
    let mut rows: Vec<Vec<f32>> = vec![];
    rows.push(vec![ninf; n as usize]); // all -inf: 0
    let mut r = vec![ninf; n as usize];
    r[4099] = -1e30;
    rows.push(r); // one finite value at the end
    let mut r = vec![1.0; n as usize];
    r[7] = f32::NAN;
    r[3000] = f32::NAN;
    rows.push(r); // first NaN wins
    let mut r = vec![0.5; n as usize];
    r[2] = 2.0;
    r[4000] = 2.0;
    rows.push(r); // tie: lowest index
    let mut r = vec![-0.0; n as usize];
    r[9] = 0.0;
    rows.push(r); // -0 == +0: index 0
    let mut r = vec![f32::INFINITY; n as usize];
    r[0] = f32::NAN;
    rows.push(r); // NaN at 0 beats +inf
    let mut r = vec![f32::MIN; n as usize];
    r[1234] = f32::MAX;
    rows.push(r);
    let count = rows.len() as u32;
    let logits: Vec<f32> = rows.concat();
    check(&logits, count, n, "edges");
}
