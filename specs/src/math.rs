//! Portable math: transcendentals built only from exact ops (add, mul, fma, round, shifts,
//! bitcasts), so they give the same bits on every GPU and in the interpreter (DESIGN.md section 2,
//! "Numbers are exact"). Each builder helper has a host twin with the same op sequence, so the
//! tests' reference models and the runtime can reproduce a kernel's numbers on the CPU.

use kiln_ir::{KernelBuilder, Type, UnaryOp, Value};

/// Most error of [`exp_portable`] against the true `e^x`, in units in the last place of the
/// correctly rounded result: every f32 input was checked (exhaustively, against an f64 `exp`);
/// the worst case is 0.988 ulp at `x = 59.275005`. Results are therefore faithfully rounded
/// (one of the two f32 neighbours of the true value). In the subnormal output range the ulp is the
/// subnormal spacing, `2^-149`.
pub const EXP_MAX_ULP: f64 = 0.988;

/// Cody-Waite split of ln 2: the high part has trailing zeros so `n * LN2_HI` is exact.
const LN2_HI: f32 = 0.693_145_75;
/// The rest of ln 2.
const LN2_LO: f32 = 1.428_606_8e-6;
/// Minimax coefficients of `(e^s - 1 - s) / s^2` on `|s| <= ln2 / 2`, highest degree first
/// (the polynomial of SLEEF's `expf_u10`).
const EXP_POLY: [f32; 6] =
    [1.985_276_2e-4, 1.393_043_6e-3, 8.333_361e-3, 4.166_648_5e-2, 0.166_666_67, 0.5];
/// Inputs are clamped to `[EXP_LO, EXP_HI]`: below, `e^x` rounds to 0; above, it overflows to inf.
const EXP_LO: f32 = -104.0;
/// See [`EXP_LO`].
const EXP_HI: f32 = 89.0;
/// `1.5 * 2^23`: adding it rounds an f32 of magnitude below `2^22` to an integer.
const EXP_ROUND: f32 = 12_582_912.0;

/// `e^x` for f32, portable (same bits everywhere), error below 1 ulp ([`EXP_MAX_ULP`]).
///
/// Method: clamp to `[-104, 89]`; `n = roundeven(x * log2 e)` (by the magic number
/// [`EXP_ROUND`]); `s = x - n ln2` with a two-part
/// Cody-Waite reduction (fma); `e^s = 1 + s + s^2 P(s)` with a degree-5 polynomial in Horner form
/// (fma); scale by `2^n` as two exact powers of two `2^(n>>1) * 2^(n - (n>>1))`, so the only
/// rounding of the scaling is the final one (which also rounds subnormal results correctly).
/// `exp(-inf) = 0`, `exp(+inf) = inf`, NaN is returned unchanged.
pub fn exp_portable(b: &mut KernelBuilder, x: Value) -> Value {
    let lo = b.f32(EXP_LO);
    let hi = b.f32(EXP_HI);
    let xc = b.max(x, lo);
    let xc = b.min(xc, hi);
    let log2e = b.f32(std::f32::consts::LOG2_E);
    let t = b.mul(xc, log2e);
    // `roundeven(t)` by the magic number `1.5 * 2^23`: `|t| < 151`, so `t + M` lies in
    // `[2^23, 2^24)`, where the f32 spacing is 1 and the addition rounds `t` to an integer
    // (nearest, ties to even); `n` is that integer exactly, and the integer part of its bits is
    // `n` too. Two adds and an integer subtraction instead of two conversions (a quarter of the
    // adds' rate on NVIDIA); the same values.
    let magic = b.f32(EXP_ROUND);
    let tm = b.add(t, magic);
    let n = b.sub(tm, magic);
    let c = b.f32(-LN2_HI);
    let s = b.fma(n, c, xc);
    let c = b.f32(-LN2_LO);
    let s = b.fma(n, c, s);
    let mut u = b.f32(EXP_POLY[0]);
    for &k in &EXP_POLY[1..] {
        let k = b.f32(k);
        u = b.fma(u, s, k);
    }
    let ss = b.mul(s, s);
    let t = b.fma(ss, u, s);
    let one = b.f32(1.0);
    let u = b.add(one, t);
    let tmb = b.bitcast(tm, Type::I32);
    let magic_bits = b.i32(EXP_ROUND.to_bits() as i32);
    let ni = b.sub(tmb, magic_bits);
    let one_i = b.i32(1);
    let n1 = b.shr(ni, one_i);
    let n2 = b.sub(ni, n1);
    let bias = b.i32(127);
    let mant = b.i32(23);
    let e1 = b.add(n1, bias);
    let e1 = b.shl(e1, mant);
    let p1 = b.bitcast(e1, Type::F32);
    let e2 = b.add(n2, bias);
    let e2 = b.shl(e2, mant);
    let p2 = b.bitcast(e2, Type::F32);
    let y = b.mul(u, p1);
    let y = b.mul(y, p2);
    let nan = b.unary(UnaryOp::IsNan, x);
    b.select(nan, x, y)
}

/// The host twin of [`exp_portable`]: the same op sequence, so the same bits.
pub fn exp_portable_f32(x: f32) -> f32 {
    let xc = ir_min(ir_max(x, EXP_LO), EXP_HI);
    let n = (xc * std::f32::consts::LOG2_E).round_ties_even();
    let s = n.mul_add(-LN2_HI, xc);
    let s = n.mul_add(-LN2_LO, s);
    let mut u = EXP_POLY[0];
    for &k in &EXP_POLY[1..] {
        u = u.mul_add(s, k);
    }
    let u = 1.0 + (s * s).mul_add(u, s);
    let ni = n as i32;
    let n1 = ni >> 1;
    let n2 = ni - n1;
    let p1 = f32::from_bits(((n1 + 127) << 23) as u32);
    let p2 = f32::from_bits(((n2 + 127) << 23) as u32);
    let y = u * p1 * p2;
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// `e^(x - r)`, with `r = -inf` read as 0 (so that a set of `-inf` logits contributes `e^-inf = 0`
/// rather than `e^NaN`). This is the scaling step of a softmax: `r` is a running maximum, `x <= r`.
pub fn exp_sub(b: &mut KernelBuilder, x: Value, r: Value) -> Value {
    let d = sub_max(b, x, r);
    exp_portable(b, d)
}

/// The host twin of [`exp_sub`].
pub fn exp_sub_f32(x: f32, r: f32) -> f32 {
    exp_portable_f32(sub_max_f32(x, r))
}

/// Most relative error of [`exp_sub_weight`] against the true `e^(x - r)` for `-18 <= x - r <=
/// 0`: checked on a dense sweep (`tests::exp_weight_error`; measured 3.4e-6). It is a weight's
/// exp to be rounded to f16 next (half an f16 ulp is 2^-12 = 2.4e-4), not an f32 `exp`.
pub const EXP_WEIGHT_MAX_REL: f64 = 4.0e-6;
/// Near-minimax coefficients (relative error) of `2^f` on `|f| <= 1/2`, highest degree first.
const EXP2_POLY: [f32; 5] = [9.570_101e-3, 5.591_786_3e-2, 0.240_247_44, 0.693_121_8, 0.999_999_3];
/// The weight exp's inputs are clamped to `[WEIGHT_LO, 0]`: below, `e^x` (`< 1.53e-8`) rounds
/// to an f16 zero, as the clamped value does.
const WEIGHT_LO: f32 = -18.0;

/// `e^(x - r)` for a softmax weight that is rounded to f16 next (`r = -inf` read as 0, as in
/// [`exp_sub`]): `d = x - r` clamped to `[-18, 0]`, then [`exp2_parts`] and `2^n` added to the
/// exponent bits. About 16 exact ops against [`exp_portable`]'s 30, with a relative error of at
/// most [`EXP_WEIGHT_MAX_REL`] (2^-17.9) instead of 1 ulp: far below the f16 rounding that
/// follows. NaN gives NaN; `x - r = -inf` gives `e^-18`, whose f16 is 0. Exact ops only, so every
/// device gives the interpreter's bits.
pub fn exp_sub_weight(b: &mut KernelBuilder, x: Value, r: Value) -> Value {
    let d = sub_max(b, x, r);
    let (p, ni) = exp2_parts(b, d, WEIGHT_LO);
    let mant = b.i32(23);
    let sh = b.shl(ni, mant);
    let pb = b.bitcast(p, Type::I32);
    let yb = b.add(pb, sh);
    let y = b.bitcast(yb, Type::F32);
    let nan = b.unary(UnaryOp::IsNan, d);
    b.select(nan, d, y)
}

/// The host twin of [`exp_sub_weight`]: the same op sequence, so the same bits.
pub fn exp_sub_weight_f32(x: f32, r: f32) -> f32 {
    let d = sub_max_f32(x, r);
    let (p, ni) = exp2_parts_f32(d, WEIGHT_LO);
    let y = f32::from_bits((p.to_bits() as i32).wrapping_add(ni << 23) as u32);
    if d.is_nan() {
        d
    } else {
        y
    }
}

/// Most relative error of [`exp_sub_i8`] against the true `e^(x - r)` for `-86 <= x - r <= 0`
/// (checked on a dense sweep, `tests::exp_i8_error`): the polynomial's 3.4e-6 and the rounding of
/// `t = d log2 e` (`ln 2 |t| 2^-24`, 5.1e-6 at `d = -86`). Below -86 its result is within
/// [`EXP_I8_MAX_ABS`] of the true value.
pub const EXP_I8_MAX_REL: f64 = 1.0e-5;
/// Most absolute error of [`exp_sub_i8`] for `x - r < -86` (`e^-86` is 4.5e-38): there the
/// result is `2^n` times the polynomial (subnormal from `n = -126`) or 0 from `t <= -126.5`.
pub const EXP_I8_MAX_ABS: f64 = 4.5e-38;
/// [`exp_sub_i8`]'s inputs are clamped to `[I8_LO, 0]`: `t = I8_LO log2 e` rounds to `n = -127`,
/// whose power of two is 0, so `-inf` (a key a row does not see) gives exactly 0.
const I8_LO: f32 = -88.0;

/// `e^(x - r)` for a softmax weight that is quantized to 8 bits next (the i8 decode attention's
/// `p`; `r = -inf` read as 0, as in [`exp_sub`]): `d = x - r` clamped to `[-88, 0]`,
/// [`exp2_parts`], and `2^n` as the float of exponent field `max(n + 127, 0)` (0 for `n <= -127`)
/// multiplied in. About 19 exact ops against [`exp_sub`]'s 33, with a relative error of at most
/// [`EXP_I8_MAX_REL`] for `d >= -86` and an absolute one of [`EXP_I8_MAX_ABS`] below. `-inf` gives
/// exactly 0, NaN gives NaN. Exact ops only, so every device gives the interpreter's bits.
pub fn exp_sub_i8(b: &mut KernelBuilder, x: Value, r: Value) -> Value {
    let d = sub_max(b, x, r);
    let (p, ni) = exp2_parts(b, d, I8_LO);
    let bias = b.i32(127);
    let e = b.add(ni, bias);
    let zero = b.i32(0);
    let e = b.max(e, zero);
    let mant = b.i32(23);
    let e = b.shl(e, mant);
    let two_n = b.bitcast(e, Type::F32);
    let y = b.mul(p, two_n);
    let nan = b.unary(UnaryOp::IsNan, d);
    b.select(nan, d, y)
}

/// The host twin of [`exp_sub_i8`]: the same op sequence, so the same bits.
pub fn exp_sub_i8_f32(x: f32, r: f32) -> f32 {
    let d = sub_max_f32(x, r);
    let (p, ni) = exp2_parts_f32(d, I8_LO);
    let two_n = f32::from_bits(((ni + 127).max(0) << 23) as u32);
    let y = p * two_n;
    if d.is_nan() {
        d
    } else {
        y
    }
}

/// `x - r` with `r = -inf` read as 0 (the step before every `exp_sub*`).
fn sub_max(b: &mut KernelBuilder, x: Value, r: Value) -> Value {
    let ninf = b.f32(f32::NEG_INFINITY);
    let zero = b.f32(0.0);
    let is_ninf = b.eq(r, ninf);
    let r = b.select(is_ninf, zero, r);
    b.sub(x, r)
}

/// The host twin of [`sub_max`].
fn sub_max_f32(x: f32, r: f32) -> f32 {
    let r = if r == f32::NEG_INFINITY { 0.0 } else { r };
    x - r
}

/// `(2^(t - n), n)` for `t = dc log2 e`, `dc = d` clamped to `[lo, 0]` and `n = roundeven(t)` (by
/// the magic number, as `i32`): `2^(t - n)` by a degree-4 polynomial in Horner form (fma).
fn exp2_parts(b: &mut KernelBuilder, d: Value, lo: f32) -> (Value, Value) {
    let lo = b.f32(lo);
    let zero = b.f32(0.0);
    let dc = b.max(d, lo);
    let dc = b.min(dc, zero);
    let log2e = b.f32(std::f32::consts::LOG2_E);
    let t = b.mul(dc, log2e);
    let magic = b.f32(EXP_ROUND);
    let tm = b.add(t, magic);
    let n = b.sub(tm, magic);
    let f = b.sub(t, n);
    let mut p = b.f32(EXP2_POLY[0]);
    for &k in &EXP2_POLY[1..] {
        let k = b.f32(k);
        p = b.fma(p, f, k);
    }
    let tmb = b.bitcast(tm, Type::I32);
    let magic_bits = b.i32(EXP_ROUND.to_bits() as i32);
    (p, b.sub(tmb, magic_bits))
}

/// The host twin of [`exp2_parts`].
fn exp2_parts_f32(d: f32, lo: f32) -> (f32, i32) {
    let dc = ir_min(ir_max(d, lo), 0.0);
    let t = dc * std::f32::consts::LOG2_E;
    let tm = t + EXP_ROUND;
    let n = tm - EXP_ROUND;
    let f = t - n;
    let mut p = EXP2_POLY[0];
    for &k in &EXP2_POLY[1..] {
        p = p.mul_add(f, k);
    }
    (p, (tm.to_bits() as i32).wrapping_sub(EXP_ROUND.to_bits() as i32))
}

/// `silu(x) = x / (1 + e^-x)`, with the portable exp and a correctly rounded division.
pub fn silu(b: &mut KernelBuilder, x: Value) -> Value {
    let nx = b.neg(x);
    let e = exp_portable(b, nx);
    let one = b.f32(1.0);
    let den = b.add(one, e);
    b.div(x, den)
}

/// The host twin of [`silu`].
pub fn silu_f32(x: f32) -> f32 {
    x / (1.0 + exp_portable_f32(-x))
}

/// The IR's float `max` ([`kiln_ir::BinaryOp::Max`]): `a > b || b is NaN ? a : b`.
pub fn ir_max(a: f32, b: f32) -> f32 {
    if a > b || b.is_nan() {
        a
    } else {
        b
    }
}

/// The IR's float `min` ([`kiln_ir::BinaryOp::Min`]): `a < b || b is NaN ? a : b`.
pub fn ir_min(a: f32, b: f32) -> f32 {
    if a < b || b.is_nan() {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Error of `exp_portable_f32(x)` in ulps of the correctly rounded result.
    fn ulp_error(x: f32) -> f64 {
        let y = exp_portable_f32(x) as f64;
        let t = (x as f64).exp();
        if t > f32::MAX as f64 {
            return if y.is_infinite() { 0.0 } else { f64::INFINITY };
        }
        let tf = t as f32;
        let ulp = if t < f32::MIN_POSITIVE as f64 {
            2f64.powi(-149)
        } else {
            2f64.powi(((tf.to_bits() >> 23) as i32) - 127 - 23)
        };
        (y - t).abs() / ulp
    }

    /// A weight of a maximum against itself is exactly 1, and of `-inf` against `-inf` exactly
    /// 0: decode attention's combine relies on it (a group of one split is the split itself).
    /// Over every float exponent, random mantissas, both signs (the IR exp is its twin).
    #[test]
    fn exp_sub_of_a_maximum_against_itself_is_one() {
        use crate::cases::rng_for;
        let mut rng = rng_for("exp-sub-one", std::process::id() as u64);
        for e in 0..255u32 {
            for sign in [0, 1u32 << 31] {
                let m = (rng.unit() * f64::from(1u32 << 23)) as u32;
                let x = f32::from_bits(sign | e << 23 | m);
                assert_eq!(exp_sub_f32(x, x), 1.0, "{x:e}");
            }
        }
        assert_eq!(exp_sub_f32(f32::NEG_INFINITY, f32::NEG_INFINITY), 0.0);
    }

    /// The IR's `exp_portable` on the interpreter gives the host twin's bits: a strided sweep
    /// of every f32 pattern (NaNs, infinities, subnormals, the clamps' outsides), the inputs
    /// whose `x log2 e` lies at a rounding tie (`k + 1/2`) or next to one, and random values.
    #[test]
    fn the_ir_exp_is_its_twin() {
        use crate::cases::{probe, rng_for, run_probe};
        let k = probe("exp_probe", &["x"], |b, v| exp_portable(b, v[0]));
        let mut xs: Vec<f32> = (0..=u32::MAX).step_by(4099).map(f32::from_bits).collect();
        for kk in -151..130 {
            let tie = (kk as f32 + 0.5) / std::f32::consts::LOG2_E;
            xs.extend([tie, f32::from_bits(tie.to_bits() + 1), f32::from_bits(tie.to_bits() - 1)]);
            xs.push(kk as f32 / std::f32::consts::LOG2_E);
        }
        let mut rng = rng_for("exp-twin", std::process::id() as u64);
        xs.extend((0..20_000).map(|_| (rng.unit() * 205.0 - 110.0) as f32));
        xs.extend([0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -104.0, 89.0, 88.72284]);
        let got = run_probe(&k, &[("x", &xs)]);
        for (&x, &g) in xs.iter().zip(&got) {
            let want = exp_portable_f32(x);
            assert!(
                g == want.to_bits() || (want.is_nan() && f32::from_bits(g).is_nan()),
                "exp({x:e}) = {:e} on the interpreter, {want:e} by the twin",
                f32::from_bits(g)
            );
        }
    }

    /// The pairs `(x, r)` of an `exp_sub*` sweep: `d = x - 0` every `1 / steps` over `[-span, 0]`,
    /// the rounding ties of `t = d log2 e` for `n` in `ties` and their neighbours, 20000 random
    /// pairs (`r` in `[-20, 20]`, `x` up to `span` below), then `edges`.
    fn exp_sub_pairs(
        seed: &str,
        span: f32,
        steps: u32,
        ties: std::ops::RangeInclusive<i32>,
        edges: &[(f32, f32)],
    ) -> Vec<(f32, f32)> {
        let mut rng = crate::cases::rng_for(seed, std::process::id() as u64);
        let n = (span * steps as f32) as u32;
        let mut pairs: Vec<(f32, f32)> =
            (0..=n).map(|i| (-(i as f32) / steps as f32, 0.0)).collect();
        for kk in ties {
            let tie = (kk as f32 - 0.5) / std::f32::consts::LOG2_E;
            for d in [tie, f32::from_bits(tie.to_bits() + 1), f32::from_bits(tie.to_bits() - 1)] {
                pairs.push((d, 0.0));
            }
        }
        pairs.extend((0..20_000).map(|_| {
            let r = (rng.unit() * 40.0 - 20.0) as f32;
            (r - (rng.unit() * span as f64) as f32, r)
        }));
        pairs.extend(edges);
        pairs
    }

    /// Runs `f(x, r)` on the interpreter over `pairs` and checks it against its host twin bit for
    /// bit (NaN for NaN); returns the twin's values.
    fn exp_sub_twin(
        name: &str,
        f: fn(&mut KernelBuilder, Value, Value) -> Value,
        twin: fn(f32, f32) -> f32,
        pairs: &[(f32, f32)],
    ) -> Vec<f32> {
        use crate::cases::{probe, run_probe};
        let k = probe(name, &["x", "r"], |b, v| f(b, v[0], v[1]));
        let xs: Vec<f32> = pairs.iter().map(|p| p.0).collect();
        let rs: Vec<f32> = pairs.iter().map(|p| p.1).collect();
        let got = run_probe(&k, &[("x", &xs), ("r", &rs)]);
        pairs
            .iter()
            .zip(&got)
            .map(|(&(x, r), &g)| {
                let want = twin(x, r);
                assert!(
                    g == want.to_bits() || (want.is_nan() && f32::from_bits(g).is_nan()),
                    "{name}({x:e}, {r:e}) = {:e} on the interpreter, {want:e} by the twin",
                    f32::from_bits(g)
                );
                want
            })
            .collect()
    }

    /// [`exp_sub_weight`] on the interpreter equals its host twin bit for bit, and the twin is
    /// within [`EXP_WEIGHT_MAX_REL`] of `e^(x - r)` in float64 on a dense sweep of `[-18, 0]`
    /// (every 2^-12, the rounding ties of `t` and their neighbours, random values), with the
    /// edges: `-inf` (an f16 zero), NaN, `r = -inf`, and a difference below -18.
    #[test]
    fn exp_weight_error() {
        let edges = [
            (f32::NEG_INFINITY, 3.0),
            (f32::NAN, 0.0),
            (1.5, f32::NEG_INFINITY),
            (-40.0, 0.0),
            (0.0, 0.0),
        ];
        let pairs = exp_sub_pairs("exp-weight", 18.0, 4096, -26..=0, &edges);
        let ys = exp_sub_twin("exp_sub_weight", exp_sub_weight, exp_sub_weight_f32, &pairs);
        let mut worst = 0f64;
        for (&(x, r), &want) in pairs.iter().zip(&ys) {
            let d = sub_max_f32(x, r);
            if d.is_finite() && (-18.0..=0.0).contains(&d) {
                let e = ((want as f64) / (d as f64).exp() - 1.0).abs();
                assert!(e <= EXP_WEIGHT_MAX_REL, "exp_sub_weight({x:e}, {r:e}): {e:e} relative");
                worst = worst.max(e);
            }
        }
        println!("exp_sub_weight: at most {worst:e} relative");
        assert_eq!(exp_sub_weight_f32(f32::NEG_INFINITY, 3.0), exp_sub_weight_f32(-18.0, 0.0));
        assert_eq!(half::f16::from_f32(exp_sub_weight_f32(f32::NEG_INFINITY, 0.0)).to_bits(), 0);
        assert!(exp_sub_weight_f32(f32::NAN, 0.0).is_nan());
        assert_eq!(exp_sub_weight_f32(0.0, 0.0), EXP2_POLY[4]);
    }

    /// [`exp_sub_i8`] on the interpreter equals its host twin bit for bit, and the twin is within
    /// [`EXP_I8_MAX_REL`] of `e^(x - r)` in float64 on `[-86, 0]` (every 2^-10, the rounding ties
    /// of `t` and their neighbours, random values) and within [`EXP_I8_MAX_ABS`] below, with the
    /// edges: `-inf` (exactly 0), NaN, `r = -inf`, a difference past the clamp.
    #[test]
    fn exp_i8_error() {
        let edges = [
            (f32::NEG_INFINITY, 3.0),
            (f32::NAN, 0.0),
            (0.0, f32::NAN),
            (1.5, f32::NEG_INFINITY),
            (f32::NEG_INFINITY, f32::NEG_INFINITY),
            (-200.0, 0.0),
            (0.0, 0.0),
        ];
        let pairs = exp_sub_pairs("exp-i8", 90.0, 1024, -128..=0, &edges);
        let ys = exp_sub_twin("exp_sub_i8", exp_sub_i8, exp_sub_i8_f32, &pairs);
        let mut worst = 0f64;
        for (&(x, r), &want) in pairs.iter().zip(&ys) {
            let d = sub_max_f32(x, r);
            if d.is_nan() {
                assert!(want.is_nan(), "exp_sub_i8({x:e}, {r:e}) = {want:e}, not NaN");
            } else if d > 0.0 {
                // Past the maximum (never in a softmax): clamped to 0.
                assert_eq!(want, exp_sub_i8_f32(0.0, 0.0), "exp_sub_i8({x:e}, {r:e})");
            } else if d >= -86.0 {
                let e = ((want as f64) / (d as f64).exp() - 1.0).abs();
                assert!(e <= EXP_I8_MAX_REL, "exp_sub_i8({x:e}, {r:e}): {e:e} relative");
                worst = worst.max(e);
            } else {
                let e = (want as f64 - (d as f64).exp()).abs();
                assert!(e <= EXP_I8_MAX_ABS, "exp_sub_i8({x:e}, {r:e}): {e:e} absolute");
            }
        }
        println!("exp_sub_i8: at most {worst:e} relative");
        assert_eq!(exp_sub_i8_f32(f32::NEG_INFINITY, 3.0).to_bits(), 0);
        assert_eq!(exp_sub_i8_f32(f32::NEG_INFINITY, f32::NEG_INFINITY).to_bits(), 0);
        assert_eq!(exp_sub_i8_f32(-88.0, 0.0).to_bits(), 0);
        assert!(exp_sub_i8_f32(f32::NAN, 0.0).is_nan());
        assert_eq!(exp_sub_i8_f32(0.0, 0.0), EXP2_POLY[4]);
    }

    /// The constants are the exact f32 values of SLEEF's `expf_u10` (written shortest).
    #[test]
    fn exp_constants() {
        assert_eq!(LN2_HI.to_bits(), 0x3f31_7200);
        assert_eq!(LN2_LO.to_bits(), 0x35bf_be8e);
        let bits = [0x3950_2bda, 0x3ab6_96c9, 0x3c08_88a6, 0x3d2a_aa7a, 0x3e2a_aaab, 0x3f00_0000];
        for (c, b) in EXP_POLY.iter().zip(bits) {
            assert_eq!(c.to_bits(), b);
        }
    }

    #[test]
    fn exp_special_values() {
        assert_eq!(exp_portable_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_portable_f32(f32::INFINITY), f32::INFINITY);
        assert!(exp_portable_f32(f32::NAN).is_nan());
        assert_eq!(exp_portable_f32(0.0), 1.0);
        assert_eq!(exp_portable_f32(-0.0), 1.0);
        assert_eq!(exp_portable_f32(-200.0), 0.0);
        assert_eq!(exp_portable_f32(100.0), f32::INFINITY);
        assert!(exp_portable_f32(88.72283).is_finite());
        assert_eq!(exp_portable_f32(88.72284), f32::INFINITY);
        assert_eq!(exp_sub_f32(f32::NEG_INFINITY, f32::NEG_INFINITY), 0.0);
        assert!(exp_sub_f32(f32::INFINITY, f32::INFINITY).is_nan());
    }

    /// A strided sweep over every f32 pattern (every 211th); the exhaustive sweep is the ignored test.
    #[test]
    fn exp_error_sampled() {
        let mut worst = 0.0f64;
        for bits in (0..=u32::MAX).step_by(211) {
            let x = f32::from_bits(bits);
            if x.is_finite() && (-104.0..=89.0).contains(&x) {
                worst = worst.max(ulp_error(x));
            }
        }
        assert!(worst <= EXP_MAX_ULP, "worst {worst} ulp");
    }

    /// Every f32 in `[-104, 89]` (about 2.2e9 inputs, a minute on one core).
    #[test]
    #[ignore]
    fn exp_error_exhaustive() {
        let mut worst = 0.0f64;
        for bits in 0..=u32::MAX {
            let x = f32::from_bits(bits);
            if x.is_finite() && (-104.0..=89.0).contains(&x) {
                worst = worst.max(ulp_error(x));
            }
        }
        assert!(worst <= EXP_MAX_ULP, "worst {worst} ulp");
    }
}
