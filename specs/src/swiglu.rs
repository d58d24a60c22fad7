//! `swiglu` and the fused `swiglu_quantize_q8_0`: the gated FFN activation
//! `h = silu(gate) * up`, `silu(x) = x / (1 + e^-x)` with the portable exp
//! ([`crate::math::silu`]), written as f32 (`swiglu`) or straight to Q8_0 blocks for the down
//! projection's quantized GEMV (`swiglu_quantize_q8_0`).
//!
//! The fused kernel is bitwise equal to `swiglu` followed by `quantize_q8_0_f32` (the unfused pair
//! is its reference; the tests prove it): `h` is computed with the same ops, and Q8_0 is exact.
//!
//! ABI of `swiglu`: `gate` (f32, read, `n`), `up` (f32, read, `n`), `out` (f32, write, `n`),
//! `n` (u32). ABI of `swiglu_quantize_q8_0`: `gate`, `up` as above, `out` (u8, write,
//! `n / 32 * 34`), `n` (u32, a multiple of 32).

use crate::bench::{u32_arg, BenchCase};
use crate::cases::{activations, floats, u32s, Case, Rng};
use crate::math::silu;
use crate::quantize::{build_body, Dest, Format, Source};
use crate::{Bench, KernelSpec, Parity, VariantSpec};
use kiln_ir::package::Admission;
use kiln_ir::{Access, Dim, Kernel, KernelBuilder, ScalarType, ShapeExpr, Target, Type};

/// Lanes a workgroup of `swiglu` (4 values a lane).
pub const BLOCK: u32 = 256;

/// The families `swiglu` (baseline only) and `swiglu_quantize_q8_0` (`baseline`: a lane a
/// block; `wave`: 8 lanes a block).
pub fn specs() -> Vec<KernelSpec> {
    vec![
        KernelSpec {
            name: "swiglu",
            variants: vec![VariantSpec {
                name: "baseline",
                build: swiglu,
                admit: Admission::default(),
            }],
            parity: Parity::Buffers(parity_cases),
            bench: Bench::Cases(|| bench_cases("swiglu_t1_d14336", 14336 * 4)),
            archs: None,
            budgets: vec![],
        },
        KernelSpec {
            name: "swiglu_quantize_q8_0",
            variants: vec![
                VariantSpec {
                    name: "baseline",
                    build: |t, w| fused(t, w, false),
                    admit: Admission::default(),
                },
                VariantSpec {
                    name: "wave",
                    build: |t, w| fused(t, w, true),
                    admit: Admission::default(),
                },
            ],
            parity: Parity::Buffers(parity_cases),
            bench: Bench::Cases(|| bench_cases("swiglu_quantize_q8_0_t1_d14336", 14336 / 32 * 34)),
            archs: None,
            budgets: vec![],
        },
    ]
}

/// Random gates and activations with the Q8 edge blocks; `large` adds model widths.
fn parity_cases(rng: &mut Rng, large: bool) -> Vec<Case> {
    let mut sizes = vec![32, 96, 4096];
    if large {
        sizes.extend([14336, 32 * 1001]);
    }
    sizes
        .into_iter()
        .map(|n| {
            let g: Vec<f32> = (0..n).map(|_| rng.normal(4.0)).collect();
            let u = activations(rng, n, true);
            Case {
                name: format!("n={n}"),
                scalars: vec![u32s("n", n as u32)],
                inputs: vec![
                    floats("gate", ScalarType::F32, &g),
                    floats("up", ScalarType::F32, &u),
                ],
            }
        })
        .collect()
}

/// One token of a 14,336-wide MLP: `gate` and `up` read, `out_bytes` written.
fn bench_cases(name: &'static str, out_bytes: u64) -> Vec<BenchCase> {
    let n = 14336u32;
    vec![BenchCase {
        flops: None,
        name,
        scalars: vec![u32_arg("n", n)],
        inputs: vec![("gate", ScalarType::F32, n as usize), ("up", ScalarType::F32, n as usize)],
        bytes: u64::from(n) * 8 + out_bytes,
        values: vec![],
    }]
}

/// `out[i] = silu(gate[i]) * up[i]`, 4 values a lane (an `f32x4` load when `n % 4 == 0`).
pub fn swiglu(_t: &Target, wave: u32) -> Kernel {
    let mut b = KernelBuilder::new("swiglu", wave);
    b.workgroup_size([BLOCK, 1, 1]);
    b.const_param("block", BLOCK as i64);
    b.const_param("values_per_lane", 4);
    let gate = b.buffer("gate", ScalarType::F32, Access::Read);
    let up = b.buffer("up", ScalarType::F32, Access::Read);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    let n = b.scalar_param("n", ScalarType::U32);
    for p in [gate, up, out] {
        b.set_buffer_len(p, ShapeExpr::scaled(&[n], 1, 1));
    }
    b.grid([
        ShapeExpr::scaled(&[n], 1, 4 * BLOCK as u64),
        ShapeExpr::constant(1),
        ShapeExpr::constant(1),
    ]);
    let n_v = b.arg(n);
    let wg = b.workgroup_id(Dim::X);
    let local = b.local_id();
    let bl = b.u32(BLOCK);
    let g = b.mul(wg, bl);
    let g = b.add(g, local);
    let four = b.u32(4);
    let first = b.mul(g, four);
    let three = b.u32(3);
    let last = b.add(first, three);
    let full = b.lt(last, n_v);
    let aligned = crate::common::is_multiple(&mut b, n_v, 4);
    let vec_ok = b.and(full, aligned);
    b.if_else(
        vec_ok,
        |b| {
            let g4 = b.load(gate, first, Type::vector(ScalarType::F32, 4));
            let u4 = b.load(up, first, Type::vector(ScalarType::F32, 4));
            let hs: Vec<_> = (0..4u8)
                .map(|e| {
                    let ge = b.extract(g4, e);
                    let ue = b.extract(u4, e);
                    let s = silu(b, ge);
                    b.mul(s, ue)
                })
                .collect();
            let h = b.make_vector(&hs);
            b.store(out, first, h);
            vec![]
        },
        |b| {
            for e in 0..4 {
                let ee = b.u32(e);
                let i = b.add(first, ee);
                let inside = b.lt(i, n_v);
                b.if_then(inside, |b| {
                    let ge = b.load(gate, i, Type::F32);
                    let ue = b.load(up, i, Type::F32);
                    let s = silu(b, ge);
                    let h = b.mul(s, ue);
                    b.store(out, i, h);
                });
            }
            vec![]
        },
    );
    b.finish()
}

/// `silu(gate) * up` quantized to Q8_0 (`by_wave`: 8 lanes a block, else a lane a block).
pub fn fused(_t: &Target, wave: u32, by_wave: bool) -> Kernel {
    let name = if by_wave { "swiglu_quantize_q8_0_wave" } else { "swiglu_quantize_q8_0" };
    let mut b = KernelBuilder::new(name, wave);
    let gate = b.buffer("gate", ScalarType::F32, Access::Read);
    let up = b.buffer("up", ScalarType::F32, Access::Read);
    let out = b.buffer("out", ScalarType::U8, Access::Write);
    let n = b.scalar_param("n", ScalarType::U32);
    b.set_buffer_len(gate, ShapeExpr::scaled(&[n], 1, 1));
    b.set_buffer_len(up, ShapeExpr::scaled(&[n], 1, 1));
    build_body(&mut b, Format::Q8_0, Source::Swiglu(gate, up), Dest::Blocks(out), n, by_wave);
    b.finish()
}
