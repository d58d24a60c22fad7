//! How fast the interpreter runs a real-size reduction: 8 rows of 248,320 f32, one workgroup a
//! row. Prints seconds and lane-ops per second. Run in release:
//!
//! ```text
//! cargo test --release -p kiln-ir --test ir interp_speed -- --ignored --nocapture --test-threads 1
//! ```

use crate::interp_util;

use interp_util::*;
use kiln_ir::examples::{argmax_row, wave_sum, workgroup_sum};
use kiln_ir::interp::{self, Arg, RunOptions};
use std::time::Instant;

const ROWS: usize = 8;
const N: usize = 248_320;

/// Best of three runs (the machine is shared): seconds, and the last run's statistics.
fn best_of_three(k: &kiln_ir::Kernel, args: &mut [Arg]) -> (f64, interp::RunStats) {
    let (mut s, mut stats) = (f64::MAX, Default::default());
    for _ in 0..3 {
        let t = Instant::now();
        stats = interp::run(k, args, &RunOptions::default()).unwrap();
        s = s.min(t.elapsed().as_secs_f64());
    }
    (s, stats)
}

#[test]
#[ignore = "timing; run in release with --ignored --nocapture"]
fn row_reduction_speed() {
    let (mut rng, _seed) = rng();
    let x: Vec<f32> = (0..ROWS * N).map(|_| wild_f32(&mut rng)).collect();
    let bytes = f32_bytes(&x);
    println!("{ROWS} x {N} f32, one workgroup a row, sanitizer on, parallel, best of 3");
    for (name, kernel) in [
        ("workgroup_sum", workgroup_sum as fn(u32, u32) -> kiln_ir::Kernel),
        ("argmax_row", argmax_row),
    ] {
        for wave in WAVES {
            for lanes in [256, 1024] {
                let k = kernel(wave, lanes);
                let mut args = [
                    Arg::Buffer(bytes.clone()),
                    Arg::Buffer(vec![0; 4 * ROWS]),
                    Arg::Scalar(N as u64),
                    Arg::Scalar(ROWS as u64),
                ];
                let (s, stats) = best_of_three(&k, &mut args);
                println!(
                    "{name:>14} wave {wave:2} lanes {lanes:4}: {s:7.3} s, {:6.1} M lane-ops, {:6.1} M lane-ops/s",
                    stats.lane_ops as f64 / 1e6,
                    stats.lane_ops as f64 / s / 1e6
                );
            }
        }
    }
}

#[test]
#[ignore = "timing; run in release with --ignored --nocapture"]
fn many_small_workgroups_speed() {
    let (mut rng, _seed) = rng();
    let groups = 100_000usize;
    for wave in WAVES {
        let x: Vec<f32> = (0..groups * wave as usize).map(|_| wild_f32(&mut rng)).collect();
        let k = wave_sum(wave);
        let mut args = [
            Arg::Buffer(f32_bytes(&x)),
            Arg::Buffer(vec![0; 4 * groups]),
            Arg::Scalar(groups as u64),
        ];
        let (s, stats) = best_of_three(&k, &mut args);
        println!(
            "wave_sum, {groups} workgroups of one wave {wave}: {s:.3} s, {:.1} us a workgroup, {:.1} M lane-ops/s",
            s / groups as f64 * 1e6,
            stats.lane_ops as f64 / s / 1e6
        );
    }
}
