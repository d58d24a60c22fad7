//! Portable `sin`/`cos` and `ln` for RoPE: built only from exact ops (add, mul, fma, a correctly
//! rounded division, round-to-even, bit operations), so every GPU and the interpreter give the
//! same bits. Each IR builder has a host twin with the same op sequence (the tests below measure
//! the host twins' error, and `kv_append`'s tests check that the IR gives the twins' bits).

use kiln_ir::{KernelBuilder, Type, UnaryOp, Value};

/// `pi / 2` in three f32 parts (`P1 + P2 + P3` is `pi / 2` to about 2^-75): Cody-Waite
/// reduction with fma, exact for the first step while `|n| < 2^17`.
const PIO2: [f32; 3] = [1.570_796_4, -4.371_139e-8, -1.715_124_5e-15];
/// Cephes' `sinf` polynomial on `[-pi/4, pi/4]`: `sin r = r + r z (S1 + z (S2 + z S3))`.
const SIN_POLY: [f32; 3] = [-1.666_665_5e-1, 8.332_161e-3, -1.951_529_6e-4];
/// Cephes' `cosf` polynomial: `cos r = 1 - z/2 + z^2 (C1 + z (C2 + z C3))`.
const COS_POLY: [f32; 3] = [4.166_664_6e-2, -1.388_731_6e-3, 2.443_315_7e-5];
/// Inputs up to this magnitude keep the stated error ([`SIN_COS_MAX_ABS`]); RoPE angles are
/// `pos * inv_freq <= pos`, so contexts up to 131,072 are inside.
pub const SIN_COS_RANGE: f32 = 131_072.0;
/// The measured bound of [`sin_cos_portable`] (absolute error against f64 `sin`/`cos` of the
/// same f32 input), over `[-SIN_COS_RANGE, SIN_COS_RANGE]` (the test samples 4M points and
/// checks it): less than one f32 ulp of 1.
pub const SIN_COS_MAX_ABS: f64 = 1.2e-7;
/// The measured bound of [`ln_portable`] in ulps of the result, over positive normal inputs.
pub const LN_MAX_ULP: f64 = 2.0;

/// `(sin x, cos x)` for `|x| <= SIN_COS_RANGE`, portable: `n = roundeven(x * 2/pi)`,
/// `r = x - n pi/2` (three fma steps), the Cephes polynomials on `r`, the quadrant `n & 3`.
pub fn sin_cos_portable(b: &mut KernelBuilder, x: Value) -> (Value, Value) {
    let two_over_pi = b.f32(std::f32::consts::FRAC_2_PI);
    let t = b.mul(x, two_over_pi);
    let n = b.unary(UnaryOp::RoundEven, t);
    let nn = b.neg(n);
    let mut r = x;
    for p in PIO2 {
        let c = b.f32(p);
        r = b.fma(nn, c, r);
    }
    let z = b.mul(r, r);
    let (s1, s2, s3) = (b.f32(SIN_POLY[0]), b.f32(SIN_POLY[1]), b.f32(SIN_POLY[2]));
    let ps = b.fma(s3, z, s2);
    let ps = b.fma(ps, z, s1);
    let ps = b.mul(ps, z);
    let s = b.fma(ps, r, r);
    let (c1, c2, c3) = (b.f32(COS_POLY[0]), b.f32(COS_POLY[1]), b.f32(COS_POLY[2]));
    let pc = b.fma(c3, z, c2);
    let pc = b.fma(pc, z, c1);
    let zz = b.mul(z, z);
    let mhalf = b.f32(-0.5);
    let one = b.f32(1.0);
    let w = b.fma(mhalf, z, one);
    let c = b.fma(pc, zz, w);
    let ni = b.convert(n, Type::I32);
    let three = b.i32(3);
    let q = b.and(ni, three);
    let ns = b.neg(s);
    let nc = b.neg(c);
    let pick = |b: &mut KernelBuilder, v: [Value; 4]| {
        let (one, two) = (b.i32(1), b.i32(2));
        let q1 = b.eq(q, one);
        let q2 = b.eq(q, two);
        let q3 = b.eq(q, three);
        let r = b.select(q1, v[1], v[0]);
        let r = b.select(q2, v[2], r);
        b.select(q3, v[3], r)
    };
    let sin = pick(b, [s, c, ns, nc]);
    let cos = pick(b, [c, ns, nc, s]);
    (sin, cos)
}

/// The host twin of [`sin_cos_portable`].
pub fn sin_cos_portable_f32(x: f32) -> (f32, f32) {
    let n = (x * std::f32::consts::FRAC_2_PI).round_ties_even();
    let mut r = x;
    for p in PIO2 {
        r = (-n).mul_add(p, r);
    }
    let z = r * r;
    let ps = SIN_POLY[2].mul_add(z, SIN_POLY[1]).mul_add(z, SIN_POLY[0]) * z;
    let s = ps.mul_add(r, r);
    let pc = COS_POLY[2].mul_add(z, COS_POLY[1]).mul_add(z, COS_POLY[0]);
    let w = (-0.5f32).mul_add(z, 1.0);
    let c = pc.mul_add(z * z, w);
    match (n as i32) & 3 {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    }
}

/// Cody-Waite split of ln 2 (as in [`crate::math::exp_portable`]).
const LN2_HI: f32 = 0.693_145_75;
/// See [`LN2_HI`].
const LN2_LO: f32 = 1.428_606_8e-6;
/// `ln m = 2s + s z P(z)`, `s = (m-1)/(m+1)`, `z = s^2`: the atanh series `2/3, 2/5, 2/7, 2/9`.
const LN_POLY: [f32; 4] = [0.666_666_7, 0.4, 0.285_714_3, 0.222_222_22];

/// `ln x` for a positive normal f32, portable: `x = 2^e m` with `m` in `[sqrt(1/2), sqrt 2)`,
/// `s = (m - 1) / (m + 1)` (correctly rounded), the atanh series, `e ln 2` in two parts.
pub fn ln_portable(b: &mut KernelBuilder, x: Value) -> Value {
    let bits = b.bitcast(x, Type::U32);
    let c23 = b.u32(23);
    let eb = b.shr(bits, c23);
    let eb = b.bitcast(eb, Type::I32);
    let bias = b.i32(127);
    let e = b.sub(eb, bias);
    let mask = b.u32(0x007f_ffff);
    let one_bits = b.u32(0x3f80_0000);
    let mb = b.and(bits, mask);
    let mb = b.or(mb, one_bits);
    let m = b.bitcast(mb, Type::F32);
    let sqrt2 = b.f32(std::f32::consts::SQRT_2);
    let big = b.gt(m, sqrt2);
    let half = b.f32(0.5);
    let mh = b.mul(m, half);
    let m = b.select(big, mh, m);
    let one_i = b.i32(1);
    let e1 = b.add(e, one_i);
    let e = b.select(big, e1, e);
    let one = b.f32(1.0);
    let f = b.sub(m, one);
    let two = b.f32(2.0);
    let den = b.add(f, two);
    let s = b.div(f, den);
    let z = b.mul(s, s);
    let mut p = b.f32(LN_POLY[3]);
    for &k in LN_POLY[..3].iter().rev() {
        let k = b.f32(k);
        p = b.fma(p, z, k);
    }
    let sz = b.mul(s, z);
    let s2 = b.add(s, s);
    let lnm = b.fma(sz, p, s2);
    let ef = b.convert(e, Type::F32);
    let lo = b.f32(LN2_LO);
    let hi = b.f32(LN2_HI);
    let t = b.fma(ef, lo, lnm);
    b.fma(ef, hi, t)
}

/// The host twin of [`ln_portable`].
pub fn ln_portable_f32(x: f32) -> f32 {
    let bits = x.to_bits();
    let mut e = (bits >> 23) as i32 - 127;
    let mut m = f32::from_bits((bits & 0x007f_ffff) | 0x3f80_0000);
    if m > std::f32::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let f = m - 1.0;
    let s = f / (f + 2.0);
    let z = s * s;
    let mut p = LN_POLY[3];
    for &k in LN_POLY[..3].iter().rev() {
        p = p.mul_add(z, k);
    }
    let lnm = (s * z).mul_add(p, s + s);
    let ef = e as f32;
    ef.mul_add(LN2_HI, ef.mul_add(LN2_LO, lnm))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::Rng;

    /// The stated bound holds over the whole range (4M random inputs, plus every multiple of
    /// pi/4 near the ends, where the reduction cancels most).
    #[test]
    fn sin_cos_error_bound() {
        let mut rng = Rng::new(11);
        let mut worst = 0.0f64;
        let mut check = |x: f32| {
            let (s, c) = sin_cos_portable_f32(x);
            let xd = x as f64;
            worst = worst.max((s as f64 - xd.sin()).abs()).max((c as f64 - xd.cos()).abs());
        };
        for _ in 0..4_000_000 {
            let x = ((rng.unit() * 2.0 - 1.0) * SIN_COS_RANGE as f64) as f32;
            check(x);
        }
        for k in -166_886i64..166_886 {
            if k.abs() < 200 || k.abs() > 166_600 {
                let x = (k as f64 * std::f64::consts::FRAC_PI_4) as f32;
                check(x);
                check(f32::from_bits(x.to_bits() + 1));
            }
        }
        for x in [0.0f32, -0.0, 1e-30, 1.0, -1.0, 3.0, 100.0] {
            check(x);
        }
        println!("sin/cos worst absolute error {worst:e}");
        assert!(worst <= SIN_COS_MAX_ABS, "worst {worst:e}");
        assert!(worst > 1e-9, "a bound this loose says nothing: worst {worst:e}");
    }

    #[test]
    fn sin_cos_small_angles_are_exact_where_they_must_be() {
        assert_eq!(sin_cos_portable_f32(0.0), (0.0, 1.0));
        let (s, c) = sin_cos_portable_f32(1e-20);
        assert_eq!((s, c), (1e-20, 1.0));
    }

    /// ulp error of `ln_portable_f32` over random positive normals and the RoPE bases.
    #[test]
    fn ln_error_bound() {
        let mut rng = Rng::new(12);
        let mut worst = 0.0f64;
        let mut check = |x: f32| {
            let y = ln_portable_f32(x) as f64;
            let t = (x as f64).ln();
            let ulp = if t == 0.0 {
                f64::from(f32::from_bits(1))
            } else {
                let tf = t as f32;
                (f32::from_bits(tf.abs().to_bits() + 1) - tf.abs()) as f64
            };
            worst = worst.max((y - t).abs() / ulp);
        };
        for _ in 0..2_000_000 {
            let bits = 0x0080_0000 + rng.below(0x7f00_0000 - 0x0080_0000) as u32;
            check(f32::from_bits(bits));
        }
        for x in [10_000.0f32, 500_000.0, 1_000_000.0, 1.0, 2.0, 0.5, 1.5] {
            check(x);
        }
        println!("ln worst {worst} ulp");
        assert!(worst <= LN_MAX_ULP, "worst {worst} ulp");
        assert_eq!(ln_portable_f32(1.0), 0.0);
    }
}
