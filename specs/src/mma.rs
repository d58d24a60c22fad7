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
use half::f16;
use kiln_ir::matrix::{FragLayout, FragmentRole, MmaInputs, MmaKind, MmaShape};
use kiln_ir::{Access, Kernel, KernelBuilder, ScalarType, ShapeExpr, Target};

/// Why f16 tiles are compared within a bound: neither vendor specifies the order or the
/// intermediate precision of the K-long sum inside the instruction; the interpreter sums in f64
/// from C and rounds once.
pub const F16_NOTE: &str =
    "f16 mma: hardware accumulation order is unspecified; compare within a measured bound";

/// K steps of the tiles built for devices.
pub const STEPS: u32 = 4;

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

/// The GEMM tile of `kind` over `steps` K steps. Parameters: `a`, `b` (read), `c` (read),
/// `d` (write); one workgroup of one wave.
pub fn tile(kind: MmaKind, steps: u32) -> Kernel {
    let shape = kind.shape();
    let (_, n, k) = shape.mnk();
    let kt = k * steps;
    let name = match shape.inputs() {
        MmaInputs::F16 => "mma_tile_f16",
        MmaInputs::Int8 => "mma_tile_i8",
    };
    let mut b = KernelBuilder::new(name, shape.wave_size());
    b.workgroup_size([shape.wave_size(), 1, 1]);
    b.grid([ShapeExpr::constant(1), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let (m, _, _) = shape.mnk();
    let pa = b.buffer_with_len("a", kind.a(), Access::Read, ShapeExpr::constant((m * kt) as u64));
    let pb = b.buffer_with_len("b", kind.b(), Access::Read, ShapeExpr::constant((kt * n) as u64));
    let acc = shape.accumulator();
    let pc = b.buffer_with_len("c", acc, Access::Read, ShapeExpr::constant((m * n) as u64));
    let pd = b.buffer_with_len("d", acc, Access::Write, ShapeExpr::constant((m * n) as u64));
    let (zero, nn, ktv, kv) = (b.u32(0), b.u32(n), b.u32(kt), b.u32(k));
    let c = b.frag_load(kind, FragmentRole::C, pc, zero, nn, FragLayout::RowMajor);
    let (end, one) = (b.u32(steps), b.u32(1));
    let d = b.for_range(zero, end, one, 1, &[c], |b, s, carried| {
        let base = b.mul(s, kv);
        let fa = b.frag_load(kind, FragmentRole::A, pa, base, ktv, FragLayout::RowMajor);
        let fb = b.frag_load(kind, FragmentRole::B, pb, base, ktv, FragLayout::ColMajor);
        vec![b.mma(kind, fa, fb, carried[0])]
    })[0];
    b.frag_store(pd, zero, nn, FragLayout::RowMajor, d);
    b.finish()
}

/// The int8 tile for a target (at its shape's wave size), if it has an int8 matrix shape.
pub fn tile_i8(t: &Target) -> Option<Kernel> {
    kind_for(t, MmaInputs::Int8).map(|k| tile(k, STEPS))
}

/// The f16 tile for a target, if it has an f16 matrix shape.
pub fn tile_f16(t: &Target) -> Option<Kernel> {
    kind_for(t, MmaInputs::F16).map(|k| tile(k, STEPS))
}

/// The kind a tile kernel multiplies, read back from its `mma` op.
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

/// Parity cases for the tile of `kind` over [`STEPS`] K steps (inputs `a`, `b`, `c` by ABI name):
/// random inputs, then edges. Int8: every product -128 x -128 (u8: 255 x 255), and accumulators
/// near `i32::MAX` / `i32::MIN` so that D wraps; the sums must equal the interpreter bit for bit.
/// f16: `f16::MAX` products (large but finite sums), an inf and a NaN in B (column 0 of D is NaN,
/// others stay finite), signed zeros, and subnormal halves.
pub fn cases(kind: MmaKind, seed: u64) -> Vec<Case> {
    let shape = kind.shape();
    let (m, n, k) = shape.mnk();
    let kt = k * STEPS;
    let (na, nb, nc) = ((m * kt) as usize, (kt * n) as usize, (m * n) as usize);
    let mut rng = Rng::new(seed);
    let case = |name: &str, a: Vec<u64>, b: Vec<u64>, c: Vec<u64>| Case {
        name: format!("{kind}: {name}"),
        scalars: vec![],
        inputs: vec![
            ("a".into(), kind.a(), bytes_of(kind.a(), &a)),
            ("b".into(), kind.b(), bytes_of(kind.b(), &b)),
            ("c".into(), shape.accumulator(), bytes_of(shape.accumulator(), &c)),
        ],
    };
    let mut out = Vec::new();
    match shape.inputs() {
        MmaInputs::Int8 => {
            let byte = |rng: &mut Rng, n: usize| (0..n).map(|_| rng.below(256)).collect::<Vec<_>>();
            let acc =
                |rng: &mut Rng, n: usize| (0..n).map(|_| rng.next_u64() & 0xffff_ffff).collect();
            let (a, b, c) = (byte(&mut rng, na), byte(&mut rng, nb), acc(&mut rng, nc));
            out.push(case("random", a, b, c));
            let (a, b) = (byte(&mut rng, na), byte(&mut rng, nb));
            out.push(case("random, zero accumulator", a, b, vec![0; nc]));
            let ext = |t: ScalarType| if t == ScalarType::U8 { 0xff } else { 0x80 };
            // Every product is 16384 (or 65025); accumulators just below i32::MAX wrap.
            let near_max: Vec<u64> = (0..nc as u64).map(|i| 0x7fff_ff00 + i % 256).collect();
            out.push(case(
                "-128 x -128, wrapping past i32::MAX",
                vec![ext(kind.a()); na],
                vec![ext(kind.b()); nb],
                near_max,
            ));
            // Products of -128 x 127 (negative sums) from accumulators at i32::MIN wrap upward.
            let b127 = if kind.b() == ScalarType::U8 { 0xff } else { 0x7f };
            out.push(case(
                "-128 x 127 from i32::MIN",
                vec![0x80; na],
                vec![b127; nb],
                vec![0x8000_0000; nc],
            ));
        }
        MmaInputs::F16 => {
            let half = |rng: &mut Rng, n: usize, scale: f32| {
                (0..n)
                    .map(|_| f16::from_f32(rng.normal(scale)).to_bits() as u64)
                    .collect::<Vec<_>>()
            };
            let acc = |rng: &mut Rng, n: usize| {
                (0..n).map(|_| rng.normal(10.0).to_bits() as u64).collect::<Vec<_>>()
            };
            let (a, b, c) = (half(&mut rng, na, 1.0), half(&mut rng, nb, 1.0), acc(&mut rng, nc));
            out.push(case("random", a, b, c));
            let (a, b) = (half(&mut rng, na, 100.0), half(&mut rng, nb, 100.0));
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
            let mut a = half(&mut rng, na, 1.0);
            for (i, x) in a.iter_mut().enumerate() {
                match i % 4 {
                    0 => *x = 0x8000, // -0
                    1 => *x = 0x0001, // the smallest subnormal
                    2 => *x = 0x03ff, // the largest subnormal
                    _ => {}
                }
            }
            let b = half(&mut rng, nb, 1.0);
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

    /// Every target with a matrix unit gets both tiles, each verifying there; gfx906 and gfx1030
    /// get none.
    #[test]
    fn tiles_verify_on_every_matrix_target() {
        for t in TARGETS.iter() {
            let has = !MmaShape::on_arch(t.name).is_empty();
            for k in [tile_i8(t), tile_f16(t)] {
                assert_eq!(k.is_some(), has, "{}", t.name);
                if let Some(k) = k {
                    assert_eq!(kiln_ir::verify(&k, Some(t)), Ok(()), "{} {}", t.name, k.name);
                }
            }
        }
        let sm90 = Target::by_name("sm_90").unwrap();
        assert_eq!(kind_for(sm90, MmaInputs::Int8).unwrap().shape(), MmaShape::NvM16n8k32I8);
        let sm75 = Target::by_name("sm_75").unwrap();
        assert_eq!(kind_for(sm75, MmaInputs::Int8).unwrap().shape(), MmaShape::NvM8n8k16I8);
    }

    /// Every case of every target's tiles runs on the interpreter; the int8 edges really wrap
    /// and the f16 edge really has NaN in column 0 and finite values elsewhere.
    #[test]
    fn cases_run_on_the_interpreter_and_hit_their_edges() {
        use kiln_ir::interp::{run, Arg, RunOptions};
        for arch in ["sm_90", "sm_75", "gfx1100", "gfx1201", "gfx90a", "gfx942"] {
            let t = Target::by_name(arch).unwrap();
            for k in [tile_i8(t).unwrap(), tile_f16(t).unwrap()] {
                let kind = kind_of(&k).unwrap();
                let (m, n, _) = kind.shape().mnk();
                for case in cases(kind, 7) {
                    let mut args: Vec<Arg> =
                        case.inputs.iter().map(|(_, _, b)| Arg::Buffer(b.clone())).collect();
                    args.push(Arg::Buffer(vec![0; (m * n * 4) as usize]));
                    run(&k, &mut args, &RunOptions::default()).unwrap();
                    let Arg::Buffer(d) = &args[3] else { unreachable!() };
                    let words: Vec<u32> = d
                        .chunks_exact(4)
                        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                        .collect();
                    if case.name.contains("wrapping past i32::MAX") {
                        assert!(words.iter().all(|&w| (w as i32) < 0), "{arch} {}", case.name);
                    }
                    if case.name.contains("from i32::MIN") && kind.b() == ScalarType::I8 {
                        assert!(words.iter().all(|&w| (w as i32) > 0), "{arch} {}", case.name);
                    }
                    if case.name.contains("column 0") {
                        let f = |i: usize| f32::from_bits(words[i]);
                        assert!(f(0).is_nan() && f(n as usize - 1).is_finite(), "{arch}");
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
