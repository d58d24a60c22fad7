//! Matrix multiply-accumulate test kernels: one wave computes a GEMM tile with the target's
//! matrix instruction (WMMA, MFMA or `mma.sync`), through the builder's fragment loads, `mma`
//! and fragment store. Not part of the shipped library: these kernels prove the lowering of
//! `mma` on a device against the interpreter (integer kinds bit for bit; f16 kinds within a
//! bound measured on the GPU, see [`F16_NOTE`]).
//!
//! The tile: D (M x N, row-major) is A (M x K*steps, row-major) times B (K*steps x N,
//! column-major) plus C (M x N, row-major), K (the shape's k) at a time, the accumulator carried
//! by a loop, so that the loads of every step and the chaining of D into C are exercised.

use crate::cases::{Case, Rng};
use crate::{Bench, KernelSpec, Parity, VariantSpec};
use half::f16;
use kiln_ir::matrix::{FragLayout, FragmentRole, MmaInputs, MmaKind, MmaShape};
use kiln_ir::package::Admission;
use kiln_ir::{Access, Kernel, KernelBuilder, ScalarType, ShapeExpr, Target};

/// Why f16 tiles are compared within a bound: neither vendor specifies the order or the
/// intermediate precision of the K-long sum inside the instruction; the interpreter sums in f64
/// from C and rounds once.
pub const F16_NOTE: &str =
    "f16 mma: hardware accumulation order is unspecified; compare within a measured bound";

/// The GEMM every target's test kernel computes: D (16 x 16) = A (16 x 64) x B (64 x 16) + C,
/// whatever its shape, so that one set of parity cases serves every arch.
pub const GEMM: (u32, u32, u32) = (16, 16, 64);

/// The kind the tile of `inputs` uses on `t` (signed bytes for the int8 shapes), if `t` has one.
pub fn kind_for(t: &Target, inputs: MmaInputs) -> Option<MmaKind> {
    let shape = MmaShape::on_arch(t.name).into_iter().find(|s| {
        s.inputs() == inputs
            // sm_80+ has both generations: take the newer, larger shapes.
            && !(t.sm().is_some_and(|sm| sm >= 80)
                && matches!(s, MmaShape::NvM16n8k8F16 | MmaShape::NvM8n8k16I8))
    })?;
    let elem = match inputs {
        MmaInputs::F16 => ScalarType::F16,
        MmaInputs::Int8 => ScalarType::I8,
    };
    MmaKind::new(shape, elem, elem).ok()
}

/// A GEMM of `tiles_m * m` x `tiles_n * n` over `steps * k` with `kind`'s instruction, one wave:
/// D = A (row-major) x B (column-major) + C (row-major), each shape-sized tile of D loaded from
/// C, accumulated over the K steps in a loop and stored. Parameters `a`, `b`, `c` (read), `d`
/// (write); one workgroup of one wave.
pub fn gemm(kind: MmaKind, tiles_m: u32, tiles_n: u32, steps: u32) -> Kernel {
    let shape = kind.shape();
    let (m, n, k) = shape.mnk();
    let (rows, cols, kt) = (m * tiles_m, n * tiles_n, k * steps);
    let name = match shape.inputs() {
        MmaInputs::F16 => "mma_f16",
        MmaInputs::Int8 => "mma_i8",
    };
    let mut b = KernelBuilder::new(name, shape.wave_size());
    b.workgroup_size([shape.wave_size(), 1, 1]);
    b.grid([ShapeExpr::constant(1), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let len = |x: u32| ShapeExpr::constant(x as u64);
    let pa = b.buffer_with_len("a", kind.a(), Access::Read, len(rows * kt));
    let pb = b.buffer_with_len("b", kind.b(), Access::Read, len(kt * cols));
    let acc = shape.accumulator();
    let pc = b.buffer_with_len("c", acc, Access::Read, len(rows * cols));
    let pd = b.buffer_with_len("d", acc, Access::Write, len(rows * cols));
    let (ldc, lda, kv) = (b.u32(cols), b.u32(kt), b.u32(k));
    for ti in 0..tiles_m {
        for tj in 0..tiles_n {
            let (zero, end, one) = (b.u32(0), b.u32(steps), b.u32(1));
            let cbase = b.u32(ti * m * cols + tj * n);
            let (abase, bbase) = (b.u32(ti * m * kt), b.u32(tj * n * kt));
            let c = b.frag_load(kind, FragmentRole::C, pc, cbase, ldc, FragLayout::RowMajor);
            let d = b.for_range(zero, end, one, 1, &[c], |b, s, carried| {
                let koff = b.mul(s, kv);
                let ab = b.add(abase, koff);
                let bb = b.add(bbase, koff);
                let fa = b.frag_load(kind, FragmentRole::A, pa, ab, lda, FragLayout::RowMajor);
                let fb = b.frag_load(kind, FragmentRole::B, pb, bb, lda, FragLayout::ColMajor);
                vec![b.mma(kind, fa, fb, carried[0])]
            })[0];
            b.frag_store(pd, cbase, ldc, FragLayout::RowMajor, d);
        }
    }
    b.finish()
}

/// One shape-sized tile over `steps` K steps (what the codegen tests look at).
pub fn tile(kind: MmaKind, steps: u32) -> Kernel {
    gemm(kind, 1, 1, steps)
}

/// The [`GEMM`] with `kind`'s instruction.
pub fn gemm16(kind: MmaKind) -> Kernel {
    let (m, n, k) = kind.shape().mnk();
    gemm(kind, GEMM.0 / m, GEMM.1 / n, GEMM.2 / k)
}

/// The family's build: the [`GEMM`] with the target's shape of `inputs`. A target without one
/// gets the sm_90 shape, which the verifier refuses there naming the archs that have it.
fn build(t: &Target, inputs: MmaInputs) -> Kernel {
    let fallback = Target::by_name("sm_90").expect("sm_90 is in the table");
    let kind = kind_for(t, inputs)
        .or_else(|| kind_for(fallback, inputs))
        .expect("sm_90 has every matrix kind");
    gemm16(kind)
}

/// The archs with a matrix shape of `inputs`.
pub fn archs(inputs: MmaInputs) -> Vec<String> {
    kiln_ir::TARGETS
        .iter()
        .filter(|t| kind_for(t, inputs).is_some())
        .map(|t| t.name.to_string())
        .collect()
}

/// The families, registered in [`crate::checks`]: `mma_i8` (parity bit for bit) and `mma_f16`
/// (device results within [`check_f16`]'s bound of the interpreter's; see [`F16_NOTE`]). Built
/// only for the archs with a matrix unit.
pub fn specs() -> Vec<KernelSpec> {
    let spec = |name, build: crate::BuildFn, inputs, parity| KernelSpec {
        name,
        variants: vec![VariantSpec {
            name: "baseline",
            build,
            admit: Admission { archs: archs(inputs), shapes: vec![] },
        }],
        parity,
        bench: Bench::Without("a correctness test of mma, not a decode kernel"),
        archs: Some(archs(inputs)),
        budgets: vec![],
    };
    vec![
        spec(
            "mma_i8",
            |t, _| build(t, MmaInputs::Int8),
            MmaInputs::Int8,
            Parity::Buffers(|rng, _| cases(MmaInputs::Int8, rng)),
        ),
        spec(
            "mma_f16",
            |t, _| build(t, MmaInputs::F16),
            MmaInputs::F16,
            Parity::Within { cases: |rng, _| cases(MmaInputs::F16, rng), check: check_f16 },
        ),
    ]
}

/// The bound of an f16 tile's element: `2^-16 * (sum_k |a_ik * b_kj| + |c_ij|)`. Why: every
/// product of two halves is exact in f32, so the only error is in the sums. The tile chains
/// K / k instructions of k products each through the accumulator: 64 additions an element in
/// all, each rounding (to nearest, or toward zero) by at most 2^-23 of a partial sum that is at
/// most the sum of magnitudes; 64 x 2^-23 = 2^-17, doubled for the second-order terms and any
/// internal order. The interpreter sums in f64 and rounds once. Specials must agree: a NaN meets
/// a NaN, an infinity the same infinity.
pub fn check_f16(
    case: &Case,
    output: &str,
    reference: &[u8],
    device: &[u8],
) -> Result<String, String> {
    let (m, n, kt) = (GEMM.0 as usize, GEMM.1 as usize, GEMM.2 as usize);
    let input = |name: &str| {
        case.inputs
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, _, b)| b.as_slice())
            .ok_or_else(|| format!("case {} has no input `{name}`", case.name))
    };
    let half = |b: &[u8], i: usize| f16::from_le_bytes([b[2 * i], b[2 * i + 1]]).to_f64();
    let word = |b: &[u8], i: usize| f32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
    let (a, b, c) = (input("a")?, input("b")?, input("c")?);
    if reference.len() != 4 * m * n || device.len() != 4 * m * n {
        return Err(format!(
            "{output}: expected {} bytes, found {} and {}",
            4 * m * n,
            reference.len(),
            device.len()
        ));
    }
    let (mut worst, mut worst_abs) = (0.0f64, 0.0f64);
    for i in 0..m {
        for j in 0..n {
            let magnitude: f64 =
                (0..kt).map(|k| (half(a, i * kt + k) * half(b, j * kt + k)).abs()).sum::<f64>()
                    + (word(c, i * n + j) as f64).abs();
            let (r, d) = (word(reference, i * n + j), word(device, i * n + j));
            let at = format!("{output}[{i}][{j}]");
            if r.is_nan() || d.is_nan() || r.is_infinite() || d.is_infinite() {
                let same = (r.is_nan() && d.is_nan()) || r == d;
                if !same {
                    return Err(format!("{at}: interpreter {r}, device {d}"));
                }
                continue;
            }
            let diff = (r as f64 - d as f64).abs();
            let bound = magnitude * 2f64.powi(-16);
            if diff > bound {
                return Err(format!(
                    "{at}: interpreter {r:e}, device {d:e}: |difference| {diff:e} over the bound \
                     {bound:e} (2^-16 x sum of magnitudes {magnitude:e})"
                ));
            }
            worst_abs = worst_abs.max(diff);
            if bound > 0.0 {
                worst = worst.max(diff / bound);
            }
        }
    }
    let ulp = f32_diff(reference, device).max_ulp;
    Ok(format!("max |difference| {worst_abs:e}, max ulp {ulp}, {:.3} of the bound at worst", worst))
}

/// The kind a GEMM kernel multiplies, read back from its `mma` op.
pub fn kind_of(k: &Kernel) -> Option<MmaKind> {
    k.insts.values().find_map(|d| {
        if let kiln_ir::Op::Mma { kind, .. } = &d.op {
            Some(*kind)
        } else {
            None
        }
    })
}

fn bytes_of(t: ScalarType, bits: &[u64]) -> Vec<u8> {
    let n = t.bytes() as usize;
    bits.iter().flat_map(|b| b.to_le_bytes()[..n].to_vec()).collect()
}

/// Parity cases for the [`GEMM`] (inputs `a`, `b`, `c` by ABI name): random inputs, then edges.
/// Int8 (`i8 x i8`): every product -128 x -128 with accumulators near `i32::MAX` so that D wraps,
/// and -128 x 127 from `i32::MIN`; the sums must equal the interpreter bit for bit. f16:
/// `f16::MAX` products (large but finite sums), an inf and a NaN in B (column 0 of D is NaN,
/// the others stay finite), signed zeros and subnormal halves.
pub fn cases(inputs: MmaInputs, rng: &mut Rng) -> Vec<Case> {
    let (m, n, kt) = GEMM;
    let (na, nb, nc) = ((m * kt) as usize, (kt * n) as usize, (m * n) as usize);
    let (elem, acc) = match inputs {
        MmaInputs::Int8 => (ScalarType::I8, ScalarType::I32),
        MmaInputs::F16 => (ScalarType::F16, ScalarType::F32),
    };
    let case = |name: &str, a: Vec<u64>, b: Vec<u64>, c: Vec<u64>| Case {
        name: name.to_string(),
        scalars: vec![],
        inputs: vec![
            ("a".into(), elem, bytes_of(elem, &a)),
            ("b".into(), elem, bytes_of(elem, &b)),
            ("c".into(), acc, bytes_of(acc, &c)),
        ],
    };
    let mut out = Vec::new();
    match inputs {
        MmaInputs::Int8 => {
            let byte = |rng: &mut Rng, n: usize| (0..n).map(|_| rng.below(256)).collect::<Vec<_>>();
            let word =
                |rng: &mut Rng, n: usize| (0..n).map(|_| rng.next_u64() & 0xffff_ffff).collect();
            let (a, b, c) = (byte(rng, na), byte(rng, nb), word(rng, nc));
            out.push(case("random", a, b, c));
            let (a, b) = (byte(rng, na), byte(rng, nb));
            out.push(case("random, zero accumulator", a, b, vec![0; nc]));
            let near_max: Vec<u64> = (0..nc as u64).map(|i| 0x7fff_ff00 + i % 256).collect();
            out.push(case(
                "-128 x -128, wrapping past i32::MAX",
                vec![0x80; na],
                vec![0x80; nb],
                near_max,
            ));
            out.push(case(
                "-128 x 127 from i32::MIN",
                vec![0x80; na],
                vec![0x7f; nb],
                vec![0x8000_0000; nc],
            ));
        }
        MmaInputs::F16 => {
            let half = |rng: &mut Rng, n: usize, scale: f32| {
                (0..n)
                    .map(|_| f16::from_f32(rng.normal(scale)).to_bits() as u64)
                    .collect::<Vec<_>>()
            };
            let word = |rng: &mut Rng, n: usize| {
                (0..n).map(|_| rng.normal(10.0).to_bits() as u64).collect::<Vec<_>>()
            };
            let (a, b, c) = (half(rng, na, 1.0), half(rng, nb, 1.0), word(rng, nc));
            out.push(case("random", a, b, c));
            let (a, b) = (half(rng, na, 100.0), half(rng, nb, 100.0));
            out.push(case("random, wide", a, b, vec![0; nc]));
            let max = f16::MAX.to_bits() as u64;
            let mut b = vec![max; nb];
            // B is column-major: B[0][0] and B[1][0] lie in column 0 of D.
            b[0] = f16::INFINITY.to_bits() as u64;
            b[1] = f16::NAN.to_bits() as u64;
            out.push(case(
                "f16::MAX products, inf and NaN in column 0",
                vec![max; na],
                b,
                vec![0; nc],
            ));
            let mut a = half(rng, na, 1.0);
            for (i, x) in a.iter_mut().enumerate() {
                match i % 4 {
                    0 => *x = 0x8000, // -0
                    1 => *x = 0x0001, // the smallest subnormal
                    2 => *x = 0x03ff, // the largest subnormal
                    _ => {}
                }
            }
            let b = half(rng, nb, 1.0);
            out.push(case("signed zeros and subnormals", a, b, vec![0x8000_0000; nc]));
        }
    }
    out
}

/// How far an f32 result is from the reference, as `kiln parity` reports it for f16 MMA.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct F32Diff {
    /// Largest absolute difference over finite pairs.
    pub max_abs: f64,
    /// Largest difference in units in the last place (distance in the ordered f32 encoding).
    pub max_ulp: u64,
    /// Elements where one side is NaN and the other not, or infinities that differ.
    pub special_mismatches: usize,
}

/// Compares little-endian f32 outputs: NaN must meet NaN and an infinity the same infinity
/// ([`F32Diff::special_mismatches`]); finite values report the largest absolute and ulp distance.
pub fn f32_diff(reference: &[u8], device: &[u8]) -> F32Diff {
    let ord = |x: f32| {
        let b = x.to_bits() as i64;
        if b < 0x8000_0000 {
            b
        } else {
            0x8000_0000 - b
        }
    };
    let mut d = F32Diff::default();
    for (r, x) in reference.chunks_exact(4).zip(device.chunks_exact(4)) {
        let r = f32::from_le_bytes(r.try_into().expect("4 bytes"));
        let x = f32::from_le_bytes(x.try_into().expect("4 bytes"));
        if r.is_nan() || x.is_nan() || r.is_infinite() || x.is_infinite() {
            if !(r.is_nan() && x.is_nan()) && r != x {
                d.special_mismatches += 1;
            }
            continue;
        }
        d.max_abs = d.max_abs.max((r as f64 - x as f64).abs());
        d.max_ulp = d.max_ulp.max(ord(r).abs_diff(ord(x)));
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_ir::TARGETS;

    /// Every target with a matrix unit gets both GEMMs, each verifying there; gfx906 and gfx1030
    /// get none, and the families' fallback kernel is refused there naming the archs with one.
    #[test]
    fn gemms_verify_on_every_matrix_target() {
        for t in TARGETS.iter() {
            let has = !MmaShape::on_arch(t.name).is_empty();
            for inputs in [MmaInputs::Int8, MmaInputs::F16] {
                assert_eq!(kind_for(t, inputs).is_some(), has, "{}", t.name);
                let k = build(t, inputs);
                let r = kiln_ir::verify(&k, Some(t));
                if has {
                    assert_eq!(r, Ok(()), "{} {}", t.name, k.name);
                } else {
                    let text = r.unwrap_err().to_string();
                    assert!(text.contains("gfx90a") && text.contains("sm_90"), "{text}");
                }
            }
        }
        let sm90 = Target::by_name("sm_90").unwrap();
        assert_eq!(kind_for(sm90, MmaInputs::Int8).unwrap().shape(), MmaShape::NvM16n8k32I8);
        let sm75 = Target::by_name("sm_75").unwrap();
        assert_eq!(kind_for(sm75, MmaInputs::Int8).unwrap().shape(), MmaShape::NvM8n8k16I8);
        assert!(!archs(MmaInputs::Int8).contains(&"gfx906".to_string()));
    }

    /// The plain product's bits, with `|c| + sum |a * b|` of each element (the scale of its
    /// rounding error).
    fn plain(inputs: MmaInputs, case: &Case) -> (Vec<u32>, Vec<f64>) {
        let (m, n, kt) = GEMM;
        let (m, n, kt) = (m as usize, n as usize, kt as usize);
        let (a, b, c) = (&case.inputs[0].2, &case.inputs[1].2, &case.inputs[2].2);
        let word = |v: &[u8], i: usize| u32::from_le_bytes(v[4 * i..4 * i + 4].try_into().unwrap());
        let mut d = vec![0u32; m * n];
        let mut mag = vec![0f64; m * n];
        for i in 0..m {
            for j in 0..n {
                d[i * n + j] = match inputs {
                    MmaInputs::Int8 => {
                        let s: i64 = (0..kt)
                            .map(|kk| a[i * kt + kk] as i8 as i64 * b[j * kt + kk] as i8 as i64)
                            .sum();
                        (word(c, i * n + j) as i32).wrapping_add(s as i32) as u32
                    }
                    MmaInputs::F16 => {
                        let h = |v: &[u8], x: usize| {
                            f16::from_le_bytes([v[2 * x], v[2 * x + 1]]).to_f64()
                        };
                        let p = |kk: usize| h(a, i * kt + kk) * h(b, j * kt + kk);
                        let s: f64 = (0..kt).map(p).sum();
                        let c = f32::from_bits(word(c, i * n + j)) as f64;
                        mag[i * n + j] = c.abs() + (0..kt).map(|kk| p(kk).abs()).sum::<f64>();
                        (c + s) as f32
                    }
                    .to_bits(),
                };
            }
        }
        (d, mag)
    }

    /// Every case on every matrix target's GEMM runs on the interpreter: int8 equals the plain
    /// product bit for bit (and the edges wrap), f16 is within a few ulps of a one-rounding sum
    /// (the interpreter rounds once a K step) with NaN in column 0 of the NaN case.
    #[test]
    fn cases_run_on_the_interpreter_and_hit_their_edges() {
        use kiln_ir::interp::{run, Arg, RunOptions};
        for arch in ["sm_90", "sm_75", "gfx1100", "gfx1201", "gfx90a", "gfx942"] {
            let t = Target::by_name(arch).unwrap();
            for inputs in [MmaInputs::Int8, MmaInputs::F16] {
                let k = build(t, inputs);
                for case in cases(inputs, &mut Rng::new(7)) {
                    let mut args: Vec<Arg> =
                        case.inputs.iter().map(|(_, _, b)| Arg::Buffer(b.clone())).collect();
                    args.push(Arg::Buffer(vec![0; 16 * 16 * 4]));
                    run(&k, &mut args, &RunOptions::default()).unwrap();
                    let Arg::Buffer(d) = &args[3] else { unreachable!() };
                    let words: Vec<u32> = d
                        .chunks_exact(4)
                        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                        .collect();
                    let (want, mag) = plain(inputs, &case);
                    let what = format!("{arch} {}", case.name);
                    match inputs {
                        MmaInputs::Int8 => assert_eq!(words, want, "{what}"),
                        MmaInputs::F16 => {
                            let bytes = |v: &[u32]| {
                                v.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>()
                            };
                            let diff = f32_diff(&bytes(&want), &bytes(&words));
                            assert_eq!(diff.special_mismatches, 0, "{what}");
                            // One rounding a K step (at most 4 here) against one in all.
                            for (e, (&w, &g)) in want.iter().zip(&words).enumerate() {
                                let (w, g) = (f32::from_bits(w) as f64, f32::from_bits(g) as f64);
                                if w.is_finite() && g.is_finite() {
                                    let bound = 5.0 * f32::EPSILON as f64 * mag[e];
                                    assert!((w - g).abs() <= bound, "{what}: D[{e}] {g} vs {w}");
                                }
                            }
                        }
                    }
                    if case.name.contains("wrapping past i32::MAX") {
                        assert!(words.iter().all(|&w| (w as i32) < 0), "{what}");
                    }
                    if case.name.contains("from i32::MIN") {
                        assert!(words.iter().all(|&w| (w as i32) > 0), "{what}");
                    }
                    if case.name.contains("column 0") {
                        let f = |i: usize| f32::from_bits(words[i]);
                        assert!(f(0).is_nan() && f(15).is_finite(), "{what}");
                    }
                }
            }
        }
    }

    #[test]
    fn f32_diff_reports_ulps_and_special_mismatches() {
        let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let one_up = f32::from_bits(1.0f32.to_bits() + 3);
        let r = bytes(&[1.0, -0.0, f32::NAN, f32::INFINITY, 2.0]);
        let x = bytes(&[one_up, 0.0, f32::NAN, f32::INFINITY, 2.0]);
        let d = f32_diff(&r, &x);
        assert_eq!((d.max_ulp, d.special_mismatches), (3, 0));
        assert!(d.max_abs > 0.0 && d.max_abs < 1e-6);
        let x = bytes(&[1.0, 0.0, 1.0, f32::NEG_INFINITY, 2.0]);
        assert_eq!(f32_diff(&r, &x).special_mismatches, 2);
        assert_eq!(f32_diff(&bytes(&[-1.0]), &bytes(&[1.0])).max_ulp, 2 * 0x3f80_0000);
    }
}
