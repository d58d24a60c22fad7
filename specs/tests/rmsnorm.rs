//! rmsnorm from f32, f16 and bf16 at wave 32 and 64: bitwise against a host model of the
//! documented order (src/rmsnorm.rs), and close to an f64 rmsnorm.

use crate::common;
use common::*;
use half::{bf16, f16};
use kiln_specs::rmsnorm::BLOCK;
use rand::Rng;

#[derive(Clone, Copy, Debug)]
enum Dt {
    F32,
    F16,
    Bf16,
}

impl Dt {
    fn family(self) -> &'static str {
        match self {
            Dt::F32 => "rmsnorm_f32",
            Dt::F16 => "rmsnorm_f16",
            Dt::Bf16 => "rmsnorm_bf16",
        }
    }
    fn vec(self) -> usize {
        match self {
            Dt::F32 => 4,
            _ => 8,
        }
    }
    /// Rounds to the type (as f32 value) and its bytes.
    fn round(self, v: f32) -> (f32, Vec<u8>) {
        match self {
            Dt::F32 => (v, v.to_le_bytes().to_vec()),
            Dt::F16 => {
                let h = f16::from_f32(v);
                (h.to_f32(), h.to_le_bytes().to_vec())
            }
            Dt::Bf16 => {
                let h = bf16::from_f32(v);
                (h.to_f32(), h.to_le_bytes().to_vec())
            }
        }
    }
}

/// The documented order: per lane fma over its vectors, xor butterfly per wave, tree over waves.
fn model(x: &[f32], w: &[f32], eps: f32, wave: usize, dt: Dt) -> Vec<f32> {
    let n = x.len();
    let vl = dt.vec();
    let block = BLOCK as usize;
    let nvec = n.div_ceil(vl);
    let lanes: Vec<f32> = (0..block)
        .map(|l| {
            let mut acc = 0.0f32;
            for v in (l..nvec).step_by(block) {
                for e in 0..vl {
                    let i = v * vl + e;
                    let xv = if i < n { x[i] } else { 0.0 };
                    acc = xv.mul_add(xv, acc);
                }
            }
            acc
        })
        .collect();
    let waves: Vec<f32> = lanes.chunks(wave).map(tree_sum).collect();
    let ss = tree_sum(&waves);
    let r = 1.0 / (ss / n as f32 + eps).sqrt();
    x.iter().zip(w).map(|(&xv, &wv)| dt.round(xv * r * wv).0).collect()
}

fn check(dt: Dt, rows: usize, n: usize, rng: &mut impl Rng, scale: f32) {
    let eps = 1e-6f32;
    let mut x = vec![];
    let mut xb = vec![];
    for _ in 0..rows * n {
        let (v, b) = dt.round(rng.gen_range(-scale..scale));
        x.push(v);
        xb.extend(b);
    }
    let w: Vec<f32> = (0..n).map(|_| rng.gen_range(0.5f32..1.5)).collect();
    for (_, wave) in waves() {
        let want: Vec<f32> =
            x.chunks(n).flat_map(|r| model(r, &w, eps, wave as usize, dt)).collect();
        for (row, r) in x.chunks(n).enumerate() {
            let ms = r.iter().map(|&v| (v as f64) * (v as f64)).sum::<f64>() / n as f64;
            let inv = 1.0 / (ms + eps as f64).sqrt();
            for i in 0..n {
                let e = r[i] as f64 * inv * w[i] as f64;
                let got = want[row * n + i] as f64;
                let tol = match dt {
                    Dt::F32 => 1e-5,
                    Dt::F16 => 1e-3,
                    Dt::Bf16 => 8e-3,
                };
                assert!((got - e).abs() <= tol * e.abs() + 1e-6, "{dt:?} model {got} vs {e}");
            }
        }
        for (variant, k) in variants(dt.family(), wave) {
            let call = Call::new()
                .buf("x", xb.clone())
                .buf("weight", f32_bytes(&w))
                .u32("rows", rows as u32)
                .u32("n", n as u32)
                .f32("eps", eps);
            let args = run(&k, &call);
            let o = out(&k, &args, "out");
            let got: Vec<f32> = match dt {
                Dt::F32 => bytes_f32(o),
                Dt::F16 => bytes_u16(o).into_iter().map(|b| f16::from_bits(b).to_f32()).collect(),
                Dt::Bf16 => bytes_u16(o).into_iter().map(|b| bf16::from_bits(b).to_f32()).collect(),
            };
            for (i, (&g, &m)) in got.iter().zip(&want).enumerate() {
                assert!(
                    same_f32(g, m),
                    "{variant} {dt:?} wave {wave} rows {rows} n {n} [{i}]: {g:e} vs model {m:e}"
                );
            }
        }
    }
}

#[test]
fn rmsnorm_all_dtypes() {
    let mut rng = rng("rmsnorm_all_dtypes");
    for dt in [Dt::F32, Dt::F16, Dt::Bf16] {
        for &(rows, n) in &[
            (1usize, 4096usize),
            (8, 4096),
            (3, 5120),
            (2, 1000),
            (1, 4099),
            (2, 7),
            (1, 12288),
            (1, 20480),
        ] {
            let scale = [0.01f32, 1.0, 30.0][rng.gen_range(0..3)];
            check(dt, rows, n, &mut rng, scale);
        }
    }
}
