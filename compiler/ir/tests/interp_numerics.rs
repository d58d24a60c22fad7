//! Numerics: f16 / bf16 conversions and arithmetic rounded once (against an exact integer
//! reference written here), FMA rounding, Min/Max with NaN and signed zeros, float -> int
//! saturation, rounding modes, the approximate ops within their bound. At wave 32 and 64.

use crate::interp_util;

use half::{bf16, f16};
use interp_util::*;
use kiln_ir::interp::Arg;
use kiln_ir::*;
use rand::rngs::StdRng;
use rand::Rng;
use ScalarType::*;

/// A kernel applying `f` elementwise: one lane per element, inputs `in0..` of the given types,
/// output `out`, `n` elements.
fn map_kernel(
    w: u32,
    ins: &[ScalarType],
    out: ScalarType,
    f: impl FnOnce(&mut KernelBuilder, &[Value]) -> Value,
) -> Kernel {
    let mut b = KernelBuilder::new("map", w);
    let bufs: Vec<Param> =
        ins.iter().enumerate().map(|(i, &t)| b.buffer(format!("in{i}"), t, Access::Read)).collect();
    let o = b.buffer("out", out, Access::Write);
    let n = b.scalar_param("n", U32);
    b.grid([ShapeExpr::scaled(&[n], 1, w as u64), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let g = b.workgroup_id(Dim::X);
    let lane = b.lane();
    let wv = b.u32(w);
    let base = b.mul(g, wv);
    let i = b.add(base, lane);
    let nv = b.arg(n);
    let inside = b.lt(i, nv);
    b.if_then(inside, |b| {
        let vals: Vec<Value> = bufs.iter().zip(ins).map(|(&p, &t)| b.load(p, i, t)).collect();
        let r = f(b, &vals);
        b.store(o, i, r);
    });
    b.finish()
}

/// Runs `f` over the inputs (bit patterns) at both wave sizes; checks both agree; returns the
/// output bit patterns.
fn apply(
    ins: &[(ScalarType, Vec<u64>)],
    out: ScalarType,
    f: impl Fn(&mut KernelBuilder, &[Value]) -> Value,
) -> Vec<u64> {
    let n = ins[0].1.len();
    let mut results = Vec::new();
    for w in WAVES {
        let tys: Vec<ScalarType> = ins.iter().map(|(t, _)| *t).collect();
        let k = map_kernel(w, &tys, out, &f);
        let mut args: Vec<Arg> =
            ins.iter().map(|(t, v)| Arg::Buffer(bits_bytes(v, t.bytes() as usize))).collect();
        args.push(Arg::Buffer(vec![0; n * out.bytes() as usize]));
        args.push(Arg::Scalar(n as u64));
        run(&k, &mut args).unwrap();
        results.push(bytes_bits(buffer(&args[ins.len()]), out.bytes() as usize));
    }
    assert_eq!(results[0], results[1], "wave 32 and wave 64 differ");
    results.pop().unwrap()
}

// ---- an exact reference: values as mag * 2^exp, rounded with integer arithmetic ----

#[derive(Clone, Copy, Debug)]
struct Exact {
    neg: bool,
    mag: u128,
    exp: i32,
}

fn exact_of(x: f64) -> Exact {
    assert!(x.is_finite());
    let b = x.to_bits();
    let neg = b >> 63 == 1;
    let e = ((b >> 52) & 0x7ff) as i32;
    let m = b & ((1 << 52) - 1);
    let (mag, exp) = if e == 0 { (m, -1074) } else { (m | 1 << 52, e - 1075) };
    if mag == 0 {
        return Exact { neg, mag: 0, exp: 0 };
    }
    let tz = mag.trailing_zeros();
    Exact { neg, mag: (mag >> tz) as u128, exp: exp + tz as i32 }
}

fn exact_int(i: i128) -> Exact {
    Exact { neg: i < 0, mag: i.unsigned_abs(), exp: 0 }
}

fn mul(a: Exact, b: Exact) -> Exact {
    Exact { neg: a.neg != b.neg, mag: a.mag * b.mag, exp: a.exp + b.exp }
}

fn add(a: Exact, b: Exact) -> Exact {
    if a.mag == 0 && b.mag == 0 {
        return Exact { neg: a.neg && b.neg, mag: 0, exp: 0 };
    }
    let e = if a.mag == 0 {
        b.exp
    } else if b.mag == 0 {
        a.exp
    } else {
        a.exp.min(b.exp)
    };
    let signed = |x: Exact| {
        let m = if x.mag == 0 { 0 } else { (x.mag << (x.exp - e) as u32) as i128 };
        if x.neg {
            -m
        } else {
            m
        }
    };
    let s = signed(a) + signed(b);
    Exact { neg: s < 0, mag: s.unsigned_abs(), exp: e }
}

/// A binary format: `p` significand bits, smallest normal exponent `emin`, largest finite value.
#[derive(Clone, Copy)]
struct Format {
    p: u32,
    emin: i32,
    max: f64,
}

const F16: Format = Format { p: 11, emin: -14, max: 65504.0 };
const BF16_FMT: Format = Format { p: 8, emin: -126, max: 3.3895313892515355e38 };
const F32_FMT: Format = Format { p: 24, emin: -126, max: f32::MAX as f64 };

/// Rounds to nearest even in the format; the result is exact in f64 (infinite on overflow).
fn round_ref(x: Exact, f: Format) -> f64 {
    let s = if x.neg { -1.0 } else { 1.0 };
    if x.mag == 0 {
        return s * 0.0;
    }
    assert!(x.mag < 1 << 120);
    let top = x.exp + 127 - x.mag.leading_zeros() as i32;
    let qe = top.max(f.emin) - (f.p as i32 - 1);
    let shift = qe - x.exp;
    let r: u128 = if shift <= 0 {
        x.mag << (-shift) as u32
    } else if shift > 127 {
        0
    } else {
        let q = x.mag >> shift;
        let rem = x.mag & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        if rem > half || (rem == half && q & 1 == 1) {
            q + 1
        } else {
            q
        }
    };
    let v = r as f64 * 2f64.powi(qe);
    if v > f.max {
        s * f64::INFINITY
    } else {
        s * v
    }
}

fn f16_bits(v: f64) -> u64 {
    // `v` is exactly representable, so any conversion is exact.
    f16::from_f64(v).to_bits() as u64
}

fn bf16_bits(v: f64) -> u64 {
    bf16::from_f64(v).to_bits() as u64
}

fn f16_val(bits: u64) -> f64 {
    f16::from_bits(bits as u16).to_f64()
}

fn bf16_val(bits: u64) -> f64 {
    bf16::from_bits(bits as u16).to_f64()
}

fn same_float(got: u64, want: u64, val: fn(u64) -> f64) -> bool {
    got == want || (val(got).is_nan() && val(want).is_nan())
}

/// A random finite f16 bit pattern.
fn rand_f16(rng: &mut StdRng) -> u64 {
    loop {
        let b: u16 = rng.gen();
        if f16::from_bits(b).is_finite() {
            return b as u64;
        }
    }
}

/// A random bf16 with an exponent in -20..20 (the exact reference stays within 128 bits).
fn rand_bf16(rng: &mut StdRng) -> u64 {
    let m: f32 = rng.gen_range(1.0..2.0);
    let e = rng.gen_range(-20..20);
    let s = if rng.gen() { -1.0 } else { 1.0 };
    bf16::from_f32(s * m * 2f32.powi(e)).to_bits() as u64
}

/// Values just around the ties of a narrow format: grid points plus or minus half an ulp and a
/// little more or less.
fn near_ties(rng: &mut StdRng, fmt: Format, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let e = rng.gen_range(fmt.emin - 3..16);
            let m = rng.gen_range(1u64 << (fmt.p - 1)..1 << fmt.p) as f64;
            let ulp = 2f64.powi(e - (fmt.p as i32 - 1));
            let tie = (m + 0.5) * ulp;
            let tiny = ulp * 2f64.powi(-rng.gen_range(14..40));
            let s = if rng.gen() { -1.0 } else { 1.0 };
            s * match rng.gen_range(0..3) {
                0 => tie,
                1 => tie + tiny,
                _ => tie - tiny,
            }
        })
        .collect()
}

#[test]
fn conversions_to_f16_and_bf16_round_once() {
    let (mut rng, _seed) = rng();
    for (fmt, to, bits) in
        [(F16, ScalarType::F16, f16_bits as fn(f64) -> u64), (BF16_FMT, BF16, bf16_bits)]
    {
        let mut xs = near_ties(&mut rng, fmt, 3000);
        xs.extend((0..2000).map(|_| wild_f32(&mut rng) as f64 * 2f64.powi(rng.gen_range(-30..30))));
        xs.extend([
            0.0,
            -0.0,
            65504.0,
            65519.99,
            65520.0,
            1e30,
            -1e300,
            2f64.powi(-24),
            2f64.powi(-25),
        ]);
        xs.extend([3.0 * 2f64.powi(-26), 1.0 + 2f64.powi(-11) + 2f64.powi(-40), 2f64.powi(-133)]);
        xs.extend([2f64.powi(-134), 3.0 * 2f64.powi(-135), f32::MAX as f64, 1e-320]);
        // From f64: rounded once.
        let got = apply(&[(F64, xs.iter().map(|x| x.to_bits()).collect())], to, |b, v| {
            b.convert(v[0], to)
        });
        for (x, g) in xs.iter().zip(&got) {
            assert_eq!(*g, bits(round_ref(exact_of(*x), fmt)), "{x:e} (f64) -> {to}");
        }
        // From f32.
        let fs: Vec<f32> = xs.iter().map(|&x| x as f32).filter(|x| x.is_finite()).collect();
        let got = apply(&[(F32, fs.iter().map(|x| x.to_bits() as u64).collect())], to, |b, v| {
            b.convert(v[0], to)
        });
        for (x, g) in fs.iter().zip(&got) {
            assert_eq!(*g, bits(round_ref(exact_of(*x as f64), fmt)), "{x:e} (f32) -> {to}");
        }
        // NaN stays NaN, infinities stay.
        let special = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
        let got = apply(&[(F64, special.iter().map(|x| x.to_bits()).collect())], to, |b, v| {
            b.convert(v[0], to)
        });
        let val = if to == ScalarType::F16 { f16_val as fn(u64) -> f64 } else { bf16_val };
        assert!(val(got[0]).is_nan());
        assert_eq!(val(got[1]), f64::INFINITY);
        assert_eq!(val(got[2]), f64::NEG_INFINITY);
    }
}

#[test]
fn f16_edge_cases_by_hand() {
    let cases: [(f32, u64); 10] = [
        (1.0 + 2f32.powi(-11), 0x3C00),       // a tie: to even
        (1.0 + 3.0 * 2f32.powi(-11), 0x3C02), // a tie: to even, upward
        (65504.0, 0x7BFF),
        (65519.0, 0x7BFF),
        (65520.0, 0x7C00), // the tie past the largest finite: infinity
        (2f32.powi(-24), 0x0001),
        (2f32.powi(-25), 0x0000), // a tie with zero: to even
        (3.0 * 2f32.powi(-26), 0x0001),
        (-0.0, 0x8000),
        (6.1035156e-5, 0x0400), // the smallest normal
    ];
    let got = apply(
        &[(F32, cases.iter().map(|c| c.0.to_bits() as u64).collect())],
        ScalarType::F16,
        |b, v| b.convert(v[0], ScalarType::F16),
    );
    for ((x, want), g) in cases.iter().zip(got) {
        assert_eq!(g, *want, "{x:e}: got {g:#06x}, want {want:#06x}");
    }
}

#[test]
fn integers_to_narrow_floats_round_once() {
    let (mut rng, _seed) = rng();
    let mut xs: Vec<i64> = (0..2000).map(|_| rng.gen::<i64>() >> rng.gen_range(0..60)).collect();
    // Near bf16 ties among large integers: (m + 1/2) * 2^k +- 1.
    for _ in 0..500 {
        let k = rng.gen_range(8..55);
        let m = rng.gen_range(128i64..256);
        let tie = ((2 * m + 1) << k) >> 1;
        xs.extend([tie, tie + 1, tie - 1]);
    }
    xs.extend([0, 1, -1, 2047, 2049, 65519, 65520, i64::MIN, i64::MAX]);
    let input = vec![(I64, xs.iter().map(|&x| x as u64).collect())];
    for (fmt, to, bits) in [
        (F16, ScalarType::F16, f16_bits as fn(f64) -> u64),
        (BF16_FMT, BF16, bf16_bits),
        (F32_FMT, F32, |v: f64| (v as f32).to_bits() as u64),
    ] {
        let got = apply(&input, to, |b, v| b.convert(v[0], to));
        for (x, g) in xs.iter().zip(&got) {
            assert_eq!(*g, bits(round_ref(exact_int(*x as i128), fmt)), "{x} -> {to}");
        }
    }
    let us: Vec<u64> = (0..1000).map(|_| rng.gen::<u64>() >> rng.gen_range(0..60)).collect();
    let got = apply(&[(U64, us.clone())], BF16, |b, v| b.convert(v[0], BF16));
    for (x, g) in us.iter().zip(&got) {
        assert_eq!(*g, bf16_bits(round_ref(exact_int(*x as i128), BF16_FMT)), "{x} -> bf16");
    }
}

#[test]
fn every_f16_and_bf16_widens_exactly() {
    let all: Vec<u64> = (0..=u16::MAX as u64).collect();
    let got = apply(&[(ScalarType::F16, all.clone())], F32, |b, v| b.convert(v[0], F32));
    for (&x, &g) in all.iter().zip(&got) {
        let want = f16::from_bits(x as u16).to_f32();
        let g = f32::from_bits(g as u32);
        assert!(g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()), "f16 {x:#06x}");
    }
    let got = apply(&[(BF16, all.clone())], F64, |b, v| b.convert(v[0], F64));
    for (&x, &g) in all.iter().zip(&got) {
        let want = f32::from_bits((x as u32) << 16) as f64;
        let g = f64::from_bits(g);
        assert!(g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()), "bf16 {x:#06x}");
    }
    // And back: narrowing a widened value is the identity (NaNs stay NaN).
    let back = apply(
        &[(F32, got.iter().map(|&g| (f64::from_bits(g) as f32).to_bits() as u64).collect())],
        BF16,
        |b, v| b.convert(v[0], BF16),
    );
    for (&x, &g) in all.iter().zip(&back) {
        assert!(same_float(g, x, bf16_val), "bf16 {x:#06x} came back as {g:#06x}");
    }
}

#[test]
fn narrow_arithmetic_is_correctly_rounded() {
    let (mut rng, _seed) = rng();
    let n = 4000;
    for (fmt, ty, gen, bits, val) in [
        (
            F16,
            ScalarType::F16,
            rand_f16 as fn(&mut StdRng) -> u64,
            f16_bits as fn(f64) -> u64,
            f16_val as fn(u64) -> f64,
        ),
        (BF16_FMT, BF16, rand_bf16, bf16_bits, bf16_val),
    ] {
        let a: Vec<u64> = (0..n).map(|_| gen(&mut rng)).collect();
        let b: Vec<u64> = (0..n).map(|_| gen(&mut rng)).collect();
        let ins = [(ty, a.clone()), (ty, b.clone())];
        for op in [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div] {
            let got = apply(&ins, ty, |k, v| k.binary(op, v[0], v[1]));
            for i in 0..n {
                let (x, y) = (val(a[i]), val(b[i]));
                let want = match op {
                    BinaryOp::Add => round_ref(add(exact_of(x), exact_of(y)), fmt),
                    BinaryOp::Sub => round_ref(add(exact_of(x), exact_of(-y)), fmt),
                    BinaryOp::Mul => round_ref(mul(exact_of(x), exact_of(y)), fmt),
                    // f64 has more than 2p + 2 bits: rounding its quotient again is exact.
                    _ if y == 0.0 || !(x / y).is_finite() => x / y,
                    _ => round_ref(exact_of(x / y), fmt),
                };
                assert!(
                    same_float(got[i], bits(want), val),
                    "{x:e} {op:?} {y:e}: got {:e}, want {want:e}",
                    val(got[i])
                );
            }
        }
        let got = apply(&[(ty, a.clone())], ty, |k, v| k.sqrt(v[0]));
        for i in 0..n {
            let x = val(a[i]);
            let want = if x < 0.0 { f64::NAN } else { round_ref(exact_of(x.sqrt()), fmt) };
            assert!(same_float(got[i], bits(want), val), "sqrt {x:e}");
        }
    }
}

#[test]
fn narrow_fma_rounds_once() {
    let (mut rng, _seed) = rng();
    // Found by search: rounding a*b+c to f32 first, then to the narrow type, gives the wrong value.
    let f16_cases = [(-3876.0, -12.0, -61.0 * 2f64.powi(-19), 46496.0)];
    let bf16_cases = [
        (-54784.0, -3.0 * 2f64.powi(-10), 5.0 * 2f64.powi(-20), 161.0),
        (3328.0, 496.0, -157.0 * 2f64.powi(-21), 1646592.0),
    ];
    for (fmt, ty, gen, bits, val, cases) in [
        (
            F16,
            ScalarType::F16,
            rand_f16 as fn(&mut StdRng) -> u64,
            f16_bits as fn(f64) -> u64,
            f16_val as fn(u64) -> f64,
            &f16_cases[..],
        ),
        (BF16_FMT, BF16, rand_bf16, bf16_bits, bf16_val, &bf16_cases[..]),
    ] {
        let mut t: Vec<[u64; 3]> =
            cases.iter().map(|c| [bits(c.0), bits(c.1), bits(c.2)]).collect();
        for _ in 0..6000 {
            let (a, b) = (gen(&mut rng), gen(&mut rng));
            // c near a*b's magnitude or far below it, where rounding twice goes wrong.
            let ab = val(a) * val(b);
            let c = if rng.gen() {
                gen(&mut rng)
            } else {
                bits(ab * 2f64.powi(-rng.gen_range(9..30)) * rng.gen_range(-1.0..1.0))
            };
            t.push([a, b, c]);
        }
        let col = |j: usize| t.iter().map(|x| x[j]).collect::<Vec<_>>();
        let got =
            apply(&[(ty, col(0)), (ty, col(1)), (ty, col(2))], ty, |k, v| k.fma(v[0], v[1], v[2]));
        for (i, x) in t.iter().enumerate() {
            let (a, b, c) = (val(x[0]), val(x[1]), val(x[2]));
            if !c.is_finite() {
                continue;
            }
            let want = round_ref(add(mul(exact_of(a), exact_of(b)), exact_of(c)), fmt);
            assert!(
                same_float(got[i], bits(want), val),
                "fma({a:e}, {b:e}, {c:e}): got {:e}, want {want:e}",
                val(got[i])
            );
            if i < cases.len() {
                assert_eq!(want, cases[i].3);
            }
        }
    }
}

#[test]
fn f32_fma_rounds_once() {
    let a = 1.0f32 + 2f32.powi(-23);
    let b = 1.0f32 - 2f32.powi(-23);
    let got = apply(
        &[
            (F32, vec![a.to_bits() as u64]),
            (F32, vec![b.to_bits() as u64]),
            (F32, vec![(-1.0f32).to_bits() as u64]),
        ],
        F32,
        |k, v| k.fma(v[0], v[1], v[2]),
    );
    assert_eq!(f32::from_bits(got[0] as u32), -(2f32.powi(-46)));
    assert_eq!(a * b - 1.0, 0.0, "separately rounded it would be 0");
}

#[test]
fn min_max_with_nan_and_signed_zeros() {
    let nan = f64::NAN;
    // (a, b, max, min) by `a > b || b is NaN ? a : b` and `a < b || b is NaN ? a : b`.
    let table: [(f64, f64, f64, f64); 8] = [
        (nan, 1.0, 1.0, 1.0),
        (1.0, nan, 1.0, 1.0),
        (nan, nan, nan, nan),
        (-0.0, 0.0, 0.0, 0.0),
        (0.0, -0.0, -0.0, -0.0),
        (2.0, 1.0, 2.0, 1.0),
        (f64::NEG_INFINITY, nan, f64::NEG_INFINITY, f64::NEG_INFINITY),
        (-1.0, -1.0, -1.0, -1.0),
    ];
    for ty in [ScalarType::F16, BF16, F32, F64] {
        let enc = |x: f64| match ty {
            ScalarType::F16 => f16::from_f64(x).to_bits() as u64,
            BF16 => bf16::from_f64(x).to_bits() as u64,
            F32 => (x as f32).to_bits() as u64,
            _ => x.to_bits(),
        };
        let a: Vec<u64> = table.iter().map(|r| enc(r.0)).collect();
        let b: Vec<u64> = table.iter().map(|r| enc(r.1)).collect();
        let ins = [(ty, a), (ty, b)];
        let max = apply(&ins, ty, |k, v| k.max(v[0], v[1]));
        let min = apply(&ins, ty, |k, v| k.min(v[0], v[1]));
        for (i, r) in table.iter().enumerate() {
            let (wmax, wmin) = (enc(r.2), enc(r.3));
            let is_nan = |x: u64| match ty {
                ScalarType::F16 => f16_val(x).is_nan(),
                BF16 => bf16_val(x).is_nan(),
                F32 => f32::from_bits(x as u32).is_nan(),
                _ => f64::from_bits(x).is_nan(),
            };
            assert!(
                max[i] == wmax || (is_nan(max[i]) && is_nan(wmax)),
                "{ty}: max({}, {}) = {:#x}",
                r.0,
                r.1,
                max[i]
            );
            assert!(
                min[i] == wmin || (is_nan(min[i]) && is_nan(wmin)),
                "{ty}: min({}, {}) = {:#x}",
                r.0,
                r.1,
                min[i]
            );
        }
    }
}

#[test]
fn float_to_int_truncates_and_saturates() {
    let xs = [
        3e9f32,
        -3e9,
        f32::NAN,
        -1.9,
        1.9,
        2.5e9,
        -1.0,
        300.0,
        -200.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.0,
    ];
    let input = [(F32, xs.iter().map(|x| x.to_bits() as u64).collect::<Vec<_>>())];
    let i32s = apply(&input, I32, |b, v| b.convert(v[0], I32));
    let want_i32 = [i32::MAX, i32::MIN, 0, -1, 1, i32::MAX, -1, 300, -200, i32::MAX, i32::MIN, 0];
    assert_eq!(i32s, want_i32.map(|x| x as u32 as u64));
    let u32s = apply(&input, U32, |b, v| b.convert(v[0], U32));
    assert_eq!(
        u32s,
        [3_000_000_000u64, 0, 0, 0, 1, 2_500_000_000, 0, 300, 0, u32::MAX as u64, 0, 0]
    );
    let u8s = apply(&input, U8, |b, v| b.convert(v[0], U8));
    assert_eq!(u8s, [255, 0, 0, 0, 1, 255, 0, 255, 0, 255, 0, 0]);
    let i8s = apply(&input, I8, |b, v| b.convert(v[0], I8));
    assert_eq!(
        i8s,
        [127i8, -128, 0, -1, 1, 127, -1, 127, -128, 127, -128, 0].map(|x| x as u8 as u64)
    );
    let i64s = apply(&input, I64, |b, v| b.convert(v[0], I64));
    assert_eq!(i64s[0], 3_000_000_000);
    assert_eq!(i64s[2], 0);
    // From f16: 65504 saturates i16.
    let h = [(
        ScalarType::F16,
        vec![f16::from_f32(65504.0).to_bits() as u64, f16::from_f32(-2.75).to_bits() as u64],
    )];
    assert_eq!(
        apply(&h, I16, |b, v| b.convert(v[0], I16)),
        [i16::MAX as u16 as u64, (-2i16) as u16 as u64]
    );
}

#[test]
fn rounding_modes() {
    let xs = [0.5f32, -0.5, 1.5, 2.5, -2.5, 2.4999998, -1.25, 7.0, -0.0, 0.49999997];
    let ops = [
        (UnaryOp::Round, [1.0f32, -1.0, 2.0, 3.0, -3.0, 2.0, -1.0, 7.0, -0.0, 0.0]),
        (UnaryOp::RoundEven, [0.0, -0.0, 2.0, 2.0, -2.0, 2.0, -1.0, 7.0, -0.0, 0.0]),
        (UnaryOp::Floor, [0.0, -1.0, 1.0, 2.0, -3.0, 2.0, -2.0, 7.0, -0.0, 0.0]),
        (UnaryOp::Ceil, [1.0, -0.0, 2.0, 3.0, -2.0, 3.0, -1.0, 7.0, -0.0, 1.0]),
        (UnaryOp::Trunc, [0.0, -0.0, 1.0, 2.0, -2.0, 2.0, -1.0, 7.0, -0.0, 0.0]),
    ];
    for (op, want) in ops {
        let got = apply(&[(F32, xs.iter().map(|x| x.to_bits() as u64).collect())], F32, |b, v| {
            b.unary(op, v[0])
        });
        for i in 0..xs.len() {
            assert_eq!(got[i], want[i].to_bits() as u64, "{op:?}({})", xs[i]);
        }
        // The same in f16 (every input and result is exact there, except 2.4999998 and
        // 0.49999997, which round to 2.5 and 0.5 on conversion).
        let hs: Vec<u64> = xs.iter().map(|&x| f16::from_f32(x).to_bits() as u64).collect();
        let got =
            apply(&[(ScalarType::F16, hs.clone())], ScalarType::F16, |b, v| b.unary(op, v[0]));
        for i in 0..xs.len() {
            let x = f16::from_bits(hs[i] as u16).to_f32();
            let want = match op {
                UnaryOp::Round => x.round(),
                UnaryOp::RoundEven => x.round_ties_even(),
                UnaryOp::Floor => x.floor(),
                UnaryOp::Ceil => x.ceil(),
                _ => x.trunc(),
            };
            assert_eq!(got[i], f16::from_f32(want).to_bits() as u64, "f16 {op:?}({x})");
        }
    }
}

/// Distance in ulps between two finite f32 of the same sign.
fn ulps(a: f32, b: f32) -> u32 {
    (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
}

#[test]
fn approximate_ops_within_one_ulp() {
    let (mut rng, _seed) = rng();
    let pos: Vec<f32> = (0..2000)
        .map(|_| rng.gen_range(1e-30f32..1e30).abs())
        .chain([1.0, 4.0, 0.25, 2f32.powi(-130)])
        .collect();
    let any: Vec<f32> = (0..2000)
        .map(|_| rng.gen_range(-120.0f32..120.0))
        .chain([0.0, -0.0, 1.0, -1.0, 0.5])
        .collect();
    let cases: [(UnaryOp, &[f32], fn(f64) -> f64); 4] = [
        (UnaryOp::Exp2Approx, &any, f64::exp2),
        (UnaryOp::Log2Approx, &pos, f64::log2),
        (UnaryOp::RsqrtApprox, &pos, |x| 1.0 / x.sqrt()),
        (UnaryOp::RcpApprox, &any, |x| 1.0 / x),
    ];
    for (op, xs, exact) in cases {
        let got = apply(&[(F32, xs.iter().map(|x| x.to_bits() as u64).collect())], F32, |b, v| {
            b.unary(op, v[0])
        });
        for (x, g) in xs.iter().zip(got) {
            let g = f32::from_bits(g as u32);
            let want = exact(*x as f64);
            if !want.is_finite() || want == 0.0 {
                assert_eq!(g as f64, want as f32 as f64, "{op:?}({x})");
                continue;
            }
            assert!(ulps(g, want as f32) <= 1, "{op:?}({x}) = {g}, within 1 ulp of {want}");
        }
    }
    // Exact at the points where the functions are exact.
    let got = apply(
        &[(F32, [3.0f32, -2.0].iter().map(|x| x.to_bits() as u64).collect())],
        F32,
        |b, v| b.unary(UnaryOp::Exp2Approx, v[0]),
    );
    assert_eq!(got, [8.0f32.to_bits() as u64, 0.25f32.to_bits() as u64]);
}
