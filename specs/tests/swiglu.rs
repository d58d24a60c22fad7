//! swiglu and swiglu_quantize_q8_0: swiglu bitwise against the host model (silu with the portable
//! exp) and close to an f64 silu; the fused kernel, both variants, bitwise equal to the unfused
//! pair `swiglu` then `quantize_q8_0_f32`, run in the interpreter.

use crate::common;
use common::*;
use kiln_specs::math::silu_f32;
use rand::Rng;

fn inputs(rng: &mut impl Rng, n: usize) -> (Vec<f32>, Vec<f32>) {
    let gate = (0..n)
        .map(|i| match i % 97 {
            0 => -100.0, // e^100 overflows: silu = -0
            1 => 100.0,
            2 => 0.0,
            3 => -0.0,
            _ => rng.gen_range(-12.0f32..12.0),
        })
        .collect();
    let up = (0..n).map(|_| rng.gen_range(-3.0f32..3.0)).collect();
    (gate, up)
}

#[test]
fn swiglu_matches_model() {
    let mut rng = rng("swiglu_matches_model");
    for &n in &[1usize, 3, 4, 1000, 1027, 4096] {
        let (gate, up) = inputs(&mut rng, n);
        let want: Vec<f32> = gate.iter().zip(&up).map(|(&g, &u)| silu_f32(g) * u).collect();
        for (g, (&w, &u)) in gate.iter().zip(want.iter().zip(&up)) {
            let exact = (*g as f64) / (1.0 + (-*g as f64).exp()) * u as f64;
            assert!((w as f64 - exact).abs() <= 4e-7 * exact.abs() + 1e-30, "silu({g}) * {u}");
        }
        for (_, wave) in waves() {
            for (variant, k) in variants("swiglu", wave) {
                let call = Call::new()
                    .buf("gate", f32_bytes(&gate))
                    .buf("up", f32_bytes(&up))
                    .u32("n", n as u32);
                let args = run(&k, &call);
                let got = bytes_f32(out(&k, &args, "out"));
                for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                    assert!(same_f32(g, w), "{variant} wave {wave} n {n} [{i}]: {g} vs {w}");
                }
            }
        }
    }
}

#[test]
fn fused_equals_unfused_pair() {
    let mut rng = rng("fused_equals_unfused_pair");
    for &blocks in &[1usize, 5, 128, 129] {
        let n = blocks * 32;
        let (gate, up) = inputs(&mut rng, n);
        for (_, wave) in waves() {
            let sw = &variants("swiglu", wave)[0].1;
            let call = Call::new()
                .buf("gate", f32_bytes(&gate))
                .buf("up", f32_bytes(&up))
                .u32("n", n as u32);
            let h = out(sw, &run(sw, &call), "out").to_vec();
            let q = &variants("quantize_q8_0_f32", wave)[0].1;
            let want = out(q, &run(q, &Call::new().buf("x", h).u32("n", n as u32)), "out").to_vec();
            for (variant, k) in variants("swiglu_quantize_q8_0", wave) {
                let got = out(&k, &run(&k, &call), "out").to_vec();
                assert_eq!(got, want, "{variant} wave {wave} blocks {blocks}");
            }
        }
    }
}
