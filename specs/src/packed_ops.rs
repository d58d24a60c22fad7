//! Test kernels for the packed ops of issue 11 (not shipped in the library), and for the
//! 8- and 16-bit integer to f32 converts the dequantizing kernels run (every 16-bit value):
//! one family an op flavour, `out[i] = op(x[3i], x[3i+1], x[3i+2])` on `n` lanes' triples of
//! `u32` (two operands and an accumulator, bit patterns), so `kiln parity` compares each device
//! with the interpreter bit for bit on random and edge inputs ([`cases`]). Each family is
//! admitted only on the archs whose target table has the op's capability
//! ([`Requirement::archs`]).
//!
//! ABI of every family:
//!
//! | param | kind                 | meaning                                      |
//! |-------|----------------------|----------------------------------------------|
//! | `x`   | u32, read, `3 * n`   | operand a, operand b, accumulator, a lane    |
//! | `n`   | u32                  | lanes                                        |
//! | `out` | write, `w * n`       | the result: u32, or f32 (`w` = 4 for `i8x4_to_f32x4`) or f16 (`w` = 2) for float results |
//!
//! Registered in [`crate::checks`]; `specs/checks.ron` builds them.

use crate::cases::{Case, Rng};
use crate::{Bench, KernelSpec, Parity, VariantSpec};
use kiln_ir::package::Admission;
use kiln_ir::verifier::target::{op_requirement, Requirement};
use kiln_ir::*;

/// Lanes a workgroup.
const BLOCK: u32 = 64;

/// The flavours, by family name.
pub const FAMILIES: &[&str] = &[
    "packed_perm",
    "packed_dot_i8",
    "packed_dot_u8",
    "packed_dot_i8u8",
    "packed_dot_f16",
    "packed_dot_f16_approx",
    "packed_f32x2_to_f16x2",
    "packed_i8x4_to_f32x4",
    "packed_nibbles_low",
    "packed_nibbles_high",
    "convert_small_ints_f32",
];

/// The op a family applies to `(a, b, acc)`: integer results as `u32`, float results in their
/// own type ([`out_type`]), so parity compares them as floats (every NaN equal: NaN payload bits
/// differ between the CPU and GPUs and are not part of kiln's contract).
fn apply(b: &mut KernelBuilder, family: &str, [x, y, acc]: [Value; 3]) -> Value {
    let h2 = Type::vector(ScalarType::F16, 2);
    let int_dot = |b: &mut KernelBuilder, op| {
        let acc = if op == DotOp::U8 { acc } else { b.bitcast(acc, Type::I32) };
        let r = b.dot(op, x, y, acc);
        b.bitcast(r, Type::U32)
    };
    let f16_dot = |b: &mut KernelBuilder, op| {
        let (hx, hy, f) = (b.bitcast(x, h2), b.bitcast(y, h2), b.bitcast(acc, Type::F32));
        b.dot(op, hx, hy, f)
    };
    match family {
        "packed_perm" => b.perm(x, y, [1, 6, 3, 4]),
        "packed_dot_i8" => int_dot(b, DotOp::I8),
        "packed_dot_u8" => int_dot(b, DotOp::U8),
        "packed_dot_i8u8" => int_dot(b, DotOp::I8U8),
        "packed_dot_f16" => f16_dot(b, DotOp::F16),
        "packed_dot_f16_approx" => f16_dot(b, DotOp::F16Approx),
        "packed_f32x2_to_f16x2" => {
            let (fx, fy) = (b.bitcast(x, Type::F32), b.bitcast(y, Type::F32));
            let v = b.make_vector(&[fx, fy]);
            b.packed_convert(PackedConvertOp::F32x2ToF16x2, v)
        }
        "packed_i8x4_to_f32x4" => b.packed_convert(PackedConvertOp::I8x4ToF32x4, x),
        "packed_nibbles_low" => b.packed_convert(PackedConvertOp::NibblesLow, x),
        "packed_nibbles_high" => b.packed_convert(PackedConvertOp::NibblesHigh, x),
        "convert_small_ints_f32" => {
            // `[f32(i8 byte 0), f32(u8 byte 1), f32(i16 half 1), f32(u16 half 0)]`.
            let part = |b: &mut KernelBuilder, shift: u32, narrow: ScalarType, as_: ScalarType| {
                let sh = b.u32(shift);
                let v = b.shr(x, sh);
                let v = b.convert(v, Type::scalar(narrow));
                let v = b.bitcast(v, Type::scalar(as_));
                b.convert(v, Type::F32)
            };
            let vs = [
                part(b, 0, ScalarType::U8, ScalarType::I8),
                part(b, 8, ScalarType::U8, ScalarType::U8),
                part(b, 16, ScalarType::U16, ScalarType::I16),
                part(b, 0, ScalarType::U16, ScalarType::U16),
            ];
            b.make_vector(&vs)
        }
        other => panic!("no packed family {other}"),
    }
}

/// The output's element type and elements a lane.
fn out_type(family: &str) -> (ScalarType, u32) {
    match family {
        "packed_dot_f16" | "packed_dot_f16_approx" => (ScalarType::F32, 1),
        "packed_i8x4_to_f32x4" | "convert_small_ints_f32" => (ScalarType::F32, 4),
        "packed_f32x2_to_f16x2" => (ScalarType::F16, 2),
        _ => (ScalarType::U32, 1),
    }
}

/// Output bytes a lane.
#[cfg(test)]
fn out_bytes(family: &str) -> usize {
    let (elem, w) = out_type(family);
    elem.bytes() as usize * w as usize
}

/// The kernel of a family.
pub fn kernel(family: &str, wave: u32) -> Kernel {
    let mut b = KernelBuilder::new(family, wave);
    b.workgroup_size([BLOCK, 1, 1]);
    let x = b.buffer("x", ScalarType::U32, Access::Read);
    let n = b.scalar_param("n", ScalarType::U32);
    let (elem, w) = out_type(family);
    let out = b.buffer("out", elem, Access::Write);
    b.set_buffer_len(x, ShapeExpr::scaled(&[n], 3, 1));
    b.set_buffer_len(out, ShapeExpr::scaled(&[n], w as u64, 1));
    b.grid([
        ShapeExpr::scaled(&[n], 1, BLOCK as u64),
        ShapeExpr::constant(1),
        ShapeExpr::constant(1),
    ]);
    let wg = b.workgroup_id(Dim::X);
    let bl = b.u32(BLOCK);
    let base = b.mul(wg, bl);
    let lid = b.local_id();
    let i = b.add(base, lid);
    let nv = b.arg(n);
    let inside = b.lt(i, nv);
    let fam = family.to_string();
    b.if_then(inside, move |b| {
        let three = b.u32(3);
        let j = b.mul(i, three);
        let ins = [0, 1, 2].map(|k| {
            let k = b.u32(k);
            let jk = b.add(j, k);
            b.load(x, jk, Type::U32)
        });
        let r = apply(b, &fam, ins);
        let ww = b.u32(w);
        let o = b.mul(i, ww);
        b.store(out, o, r);
    });
    b.finish()
}

/// The archs that have every op of a family's kernel (all archs for ops without a requirement).
pub fn archs(family: &str) -> Vec<String> {
    let k = kernel(family, 32);
    let reqs: Vec<Requirement> = k.insts.values().filter_map(|d| op_requirement(&d.op)).collect();
    TARGETS
        .iter()
        .filter(|t| reqs.iter().all(|r| r.met_by(t)))
        .map(|t| t.name.to_string())
        .collect()
}

macro_rules! builders {
    ($($name:literal => $f:ident),* $(,)?) => {
        $(mod $f {
            use super::*;
            pub(super) fn build(_t: &Target, wave: u32) -> Kernel {
                kernel($name, wave)
            }
            pub(super) fn parity(rng: &mut Rng, _large: bool) -> Vec<Case> {
                cases($name, rng.next_u64())
            }
        })*
        /// The builder and the parity cases of a family.
        fn fns(family: &str) -> (crate::BuildFn, fn(&mut Rng, bool) -> Vec<Case>) {
            match family {
                $($name => ($f::build, $f::parity),)*
                other => panic!("no packed family {other}"),
            }
        }
    };
}

builders! {
    "packed_perm" => perm,
    "packed_dot_i8" => dot_i8,
    "packed_dot_u8" => dot_u8,
    "packed_dot_i8u8" => dot_i8u8,
    "packed_dot_f16" => dot_f16,
    "packed_dot_f16_approx" => dot_f16_approx,
    "packed_f32x2_to_f16x2" => f32x2_to_f16x2,
    "packed_i8x4_to_f32x4" => i8x4_to_f32x4,
    "packed_nibbles_low" => nibbles_low,
    "packed_nibbles_high" => nibbles_high,
    "convert_small_ints_f32" => convert_small_ints,
}

/// Every family (baseline only), built for and admitted on the archs that have its ops.
pub fn specs() -> Vec<KernelSpec> {
    FAMILIES
        .iter()
        .map(|&name| {
            let (build, parity) = fns(name);
            KernelSpec {
                name,
                variants: vec![VariantSpec {
                    name: "baseline",
                    build,
                    admit: Admission { archs: archs(name), shapes: vec![] },
                }],
                parity: Parity::Buffers(parity),
                bench: Bench::Without("an op check: its cases prove bits, not speed"),
                archs: Some(archs(name)),
                budgets: vec![],
            }
        })
        .collect()
}

/// Edge words: -128 and 255 bytes, i32::MAX / MIN accumulators, f16 NaN / inf / denormal halves,
/// f32 values that round to f16 infinity or ties.
const EDGE: &[u32] = &[
    0,
    0x8080_8080,
    0xffff_ffff,
    0x7f7f_7f7f,
    0x7fff_ffff,
    0x8000_0000,
    0x7c00_fc00,
    0x7e00_0001,
    0x83ff_7bff,
    0x3c00_4000,
    0x477f_f000, // 65520.0: rounds to f16 infinity
    0x3380_0000, // 2^-24: the smallest f16 denormal
    0x7f80_0000,
    0xc000_0000,
    0x0f0f_f0f0,
];

/// The parity cases of a family: every pair of edge words (with an edge accumulator), then
/// random triples; `n` is not a multiple of the workgroup.
pub fn cases(family: &str, seed: u64) -> Vec<Case> {
    let mut rng = Rng::new(seed ^ family.len() as u64);
    let mut words = vec![];
    for (i, &a) in EDGE.iter().enumerate() {
        for (j, &b) in EDGE.iter().enumerate() {
            words.extend([a, b, EDGE[(i + j) % EDGE.len()]]);
        }
    }
    let mut out = vec![];
    if family == "convert_small_ints_f32" {
        // Every 16-bit value in both halves (so every byte in both bytes), offset by a random
        // word's high half so the halves differ.
        let r = rng.next_u64() as u32;
        let n = 1 << 16;
        let bytes = (0..n as u32)
            .flat_map(|i| [i | ((i ^ r) << 16), r, i])
            .flat_map(|w| w.to_le_bytes())
            .collect();
        out.push(Case {
            name: format!("{family} n={n} (every 16-bit value)"),
            scalars: vec![("n".into(), ScalarType::U32, n as u64)],
            inputs: vec![("x".into(), ScalarType::U32, bytes)],
        });
    }
    for n in [EDGE.len() * EDGE.len(), 1000] {
        let mut v = words.clone();
        while v.len() < 3 * n {
            v.push(rng.next_u64() as u32);
        }
        v.truncate(3 * n);
        let bytes = v.iter().flat_map(|w| w.to_le_bytes()).collect();
        out.push(Case {
            name: format!("{family} n={n} (edge pairs, then random)"),
            scalars: vec![("n".into(), ScalarType::U32, n as u64)],
            inputs: vec![("x".into(), ScalarType::U32, bytes)],
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_family_verifies_where_admitted_and_is_refused_elsewhere() {
        for &f in FAMILIES {
            let admitted = archs(f);
            assert!(!admitted.is_empty(), "{f}");
            for t in TARGETS {
                for &w in t.wave_sizes {
                    let r = verify(&kernel(f, w), Some(t));
                    assert_eq!(r.is_ok(), admitted.contains(&t.name.to_string()), "{f} {t} {w}");
                }
            }
        }
        let i8u8 = archs("packed_dot_i8u8");
        assert!(!i8u8.contains(&"gfx906".into()) && !i8u8.contains(&"gfx1030".into()));
        assert!(i8u8.contains(&"gfx1100".into()) && i8u8.contains(&"sm_90".into()));
        assert!(!archs("packed_dot_f16_approx").iter().any(|a| a.starts_with("sm_")));
        assert_eq!(archs("packed_dot_f16").len(), TARGETS.len());
    }

    #[test]
    fn cases_run_on_the_interpreter() {
        use kiln_ir::interp::{self, Arg, RunOptions};
        for &f in FAMILIES {
            for w in [32, 64] {
                let k = kernel(f, w);
                for c in cases(f, 7) {
                    let n = c.scalars[0].2 as usize;
                    let mut args = [
                        Arg::Buffer(c.inputs[0].2.clone()),
                        Arg::Scalar(n as u64),
                        Arg::Buffer(vec![0; out_bytes(f) * n]),
                    ];
                    interp::run(&k, &mut args, &RunOptions::default()).unwrap();
                }
            }
        }
    }
}
