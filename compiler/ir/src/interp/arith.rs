//! Scalar semantics on bit patterns, and the lane loops that apply them.
//!
//! Every value lives in a `u64` holding its bits zero-extended (`i1` is 0 or 1). Each op is
//! dispatched once per instruction on its scalar type, then runs a monomorphic loop over the lanes.
//!
//! The numeric rules are listed in the module docs of `interp` (section "Numerics"); the
//! helpers that make f16 / bf16 round once (round-to-odd f32, the FMA two-sum) are here.

use crate::{BinaryOp, CmpOp, ReduceOp, ScalarType, TypeClass, UnaryOp};
use half::{bf16, f16};

/// A value widened for conversions: integers exactly, floats exactly as f64.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wide {
    /// An integer or `i1`.
    I(i128),
    /// A float.
    F(f64),
}

/// A scalar type's bit pattern conversions.
pub(crate) trait Num: Copy {
    fn get(bits: u64) -> Self;
    fn put(self) -> u64;
    fn wide(self) -> Wide;
    fn from_wide(w: Wide) -> Self;
}

/// Rounding to an integral value.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Rint {
    Floor,
    Ceil,
    Trunc,
    /// Halves away from zero.
    Round,
    /// Halves to even.
    Even,
}

/// Floating-point arithmetic with the IR's rules.
pub(crate) trait Float: Num {
    const SIGN: u64;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn fma(self, b: Self, c: Self) -> Self;
    fn sqrt(self) -> Self;
    fn rint(self, mode: Rint) -> Self;
    fn to_f64(self) -> f64;
    /// Correctly rounded (to nearest even) from f64.
    fn from_f64(x: f64) -> Self;
    fn is_nan(self) -> bool;
    fn lt(self, o: Self) -> bool;
    fn le(self, o: Self) -> bool;
    fn eq(self, o: Self) -> bool;
    /// [`BinaryOp::Max`]: `a > b || b is NaN ? a : b`.
    fn max(self, o: Self) -> Self {
        if o.lt(self) || o.is_nan() {
            self
        } else {
            o
        }
    }
    /// [`BinaryOp::Min`]: `a < b || b is NaN ? a : b`.
    fn min(self, o: Self) -> Self {
        if self.lt(o) || o.is_nan() {
            self
        } else {
            o
        }
    }
}

macro_rules! native_float {
    ($t:ty, $bits:ty, $sign:expr) => {
        impl Num for $t {
            #[inline(always)]
            fn get(bits: u64) -> $t {
                <$t>::from_bits(bits as $bits)
            }
            #[inline(always)]
            fn put(self) -> u64 {
                self.to_bits() as u64
            }
            fn wide(self) -> Wide {
                Wide::F(self as f64)
            }
            fn from_wide(w: Wide) -> $t {
                match w {
                    Wide::I(i) => i as $t,
                    Wide::F(f) => f as $t,
                }
            }
        }
        impl Float for $t {
            const SIGN: u64 = $sign;
            #[inline(always)]
            fn add(self, o: $t) -> $t {
                self + o
            }
            #[inline(always)]
            fn sub(self, o: $t) -> $t {
                self - o
            }
            #[inline(always)]
            fn mul(self, o: $t) -> $t {
                self * o
            }
            #[inline(always)]
            fn div(self, o: $t) -> $t {
                self / o
            }
            #[inline(always)]
            fn fma(self, b: $t, c: $t) -> $t {
                self.mul_add(b, c)
            }
            #[inline(always)]
            fn sqrt(self) -> $t {
                <$t>::sqrt(self)
            }
            fn rint(self, mode: Rint) -> $t {
                match mode {
                    Rint::Floor => self.floor(),
                    Rint::Ceil => self.ceil(),
                    Rint::Trunc => self.trunc(),
                    Rint::Round => self.round(),
                    Rint::Even => self.round_ties_even(),
                }
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_f64(x: f64) -> $t {
                x as $t
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline(always)]
            fn lt(self, o: $t) -> bool {
                self < o
            }
            #[inline(always)]
            fn le(self, o: $t) -> bool {
                self <= o
            }
            #[inline(always)]
            #[allow(clippy::float_cmp)]
            fn eq(self, o: $t) -> bool {
                self == o
            }
        }
    };
}
native_float!(f32, u32, 0x8000_0000);
native_float!(f64, u64, 0x8000_0000_0000_0000);

/// IEEE binary16, computed through f32.
#[derive(Clone, Copy, Debug)]
pub(crate) struct H16(pub f16);
/// bfloat16, computed through f32.
#[derive(Clone, Copy, Debug)]
pub(crate) struct B16(pub bf16);

macro_rules! narrow_float {
    ($name:ident, $half:ty) => {
        impl $name {
            #[inline(always)]
            fn f(self) -> f32 {
                self.0.to_f32()
            }
            #[inline(always)]
            fn r(x: f32) -> $name {
                $name(<$half>::from_f32(x))
            }
        }
        impl Num for $name {
            #[inline(always)]
            fn get(bits: u64) -> $name {
                $name(<$half>::from_bits(bits as u16))
            }
            #[inline(always)]
            fn put(self) -> u64 {
                self.0.to_bits() as u64
            }
            fn wide(self) -> Wide {
                Wide::F(self.to_f64())
            }
            fn from_wide(w: Wide) -> $name {
                match w {
                    Wide::I(i) => $name::from_f64(int_to_f64_odd(i)),
                    Wide::F(f) => $name::from_f64(f),
                }
            }
        }
        impl Float for $name {
            const SIGN: u64 = 0x8000;
            #[inline(always)]
            fn add(self, o: $name) -> $name {
                $name::r(self.f() + o.f())
            }
            #[inline(always)]
            fn sub(self, o: $name) -> $name {
                $name::r(self.f() - o.f())
            }
            #[inline(always)]
            fn mul(self, o: $name) -> $name {
                $name::r(self.f() * o.f())
            }
            #[inline(always)]
            fn div(self, o: $name) -> $name {
                $name::r(self.f() / o.f())
            }
            fn fma(self, b: $name, c: $name) -> $name {
                $name::from_f64(fma_odd(self.to_f64(), b.to_f64(), c.to_f64()))
            }
            fn sqrt(self) -> $name {
                $name::r(self.f().sqrt())
            }
            fn rint(self, mode: Rint) -> $name {
                $name::r(self.f().rint(mode))
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self.f() as f64
            }
            fn from_f64(x: f64) -> $name {
                $name::r(f64_to_f32_odd(x))
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                self.f().is_nan()
            }
            #[inline(always)]
            fn lt(self, o: $name) -> bool {
                self.f() < o.f()
            }
            #[inline(always)]
            fn le(self, o: $name) -> bool {
                self.f() <= o.f()
            }
            #[inline(always)]
            #[allow(clippy::float_cmp)]
            fn eq(self, o: $name) -> bool {
                self.f() == o.f()
            }
        }
    };
}
narrow_float!(H16, f16);
narrow_float!(B16, bf16);

/// `x` rounded to an f32 with round-to-odd: truncate toward zero and, when inexact, set the last
/// significand bit. Rounding that result to any format with at most 22 significand bits (f16,
/// bf16) to nearest even gives the correctly rounded value of `x` (no double-rounding error).
/// Finite values past the f32 range give the largest finite f32 (which then rounds to infinity).
pub(crate) fn f64_to_f32_odd(x: f64) -> f32 {
    let r = x as f32;
    if r.is_nan() || r as f64 == x {
        return r;
    }
    let toward_zero = if (r as f64).abs() > x.abs() { f32::from_bits(r.to_bits() - 1) } else { r };
    f32::from_bits(toward_zero.to_bits() | 1)
}

/// `s + e` (with `s = fl(s + e)`, `e` exact) rounded to odd in f64.
fn f64_odd(s: f64, e: f64) -> f64 {
    if e == 0.0 || s.to_bits() & 1 == 1 {
        return s;
    }
    // `s` is even; the other neighbour of the exact value lies in the direction of `e`.
    if (e > 0.0) == (s > 0.0) {
        f64::from_bits(s.to_bits() + 1)
    } else {
        f64::from_bits(s.to_bits() - 1)
    }
}

/// `a * b + c` for f16 / bf16 inputs, rounded to odd in f64. The product of two narrow values is
/// exact in f64, and so is the error of the sum (two-sum), since neither can leave f64's range.
pub(crate) fn fma_odd(a: f64, b: f64, c: f64) -> f64 {
    let p = a * b;
    let s = p + c;
    if !s.is_finite() {
        return s;
    }
    let bb = s - p;
    let e = (p - (s - bb)) + (c - bb);
    f64_odd(s, e)
}

/// An integer (at most 64 bits wide) rounded to odd in f64.
pub(crate) fn int_to_f64_odd(i: i128) -> f64 {
    let r = i as f64;
    let back = r as i128;
    if back == i {
        return r;
    }
    let toward_zero = if back.abs() > i.abs() { f64::from_bits(r.to_bits() - 1) } else { r };
    f64::from_bits(toward_zero.to_bits() | 1)
}

/// Integer arithmetic with the IR's rules (wrapping).
pub(crate) trait Int: Num + Ord {
    fn wadd(self, o: Self) -> Self;
    fn wsub(self, o: Self) -> Self;
    fn wmul(self, o: Self) -> Self;
    /// `None` on division by zero.
    fn div(self, o: Self) -> Option<Self>;
    /// `None` on division by zero.
    fn rem(self, o: Self) -> Option<Self>;
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    fn shl(self, o: Self) -> Self;
    fn shr(self, o: Self) -> Self;
    fn not(self) -> Self;
    fn neg(self) -> Self;
    fn abs(self) -> Self;
    fn popcount(self) -> u64;
    fn ctz(self) -> u64;
    /// All bits set (the result of division by zero when the sanitizer is off).
    fn ones() -> Self;
}

macro_rules! int_impl {
    ($($t:ty, $u:ty);* $(;)?) => { $(
        impl Num for $t {
            #[inline(always)]
            fn get(bits: u64) -> $t {
                bits as $t
            }
            #[inline(always)]
            fn put(self) -> u64 {
                self as $u as u64
            }
            fn wide(self) -> Wide {
                Wide::I(self as i128)
            }
            fn from_wide(w: Wide) -> $t {
                match w {
                    Wide::I(i) => i as $t,
                    Wide::F(f) => f as $t,
                }
            }
        }
        impl Int for $t {
            #[inline(always)]
            fn wadd(self, o: $t) -> $t {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn wsub(self, o: $t) -> $t {
                self.wrapping_sub(o)
            }
            #[inline(always)]
            fn wmul(self, o: $t) -> $t {
                self.wrapping_mul(o)
            }
            #[inline(always)]
            fn div(self, o: $t) -> Option<$t> {
                (o != 0).then(|| self.wrapping_div(o))
            }
            #[inline(always)]
            fn rem(self, o: $t) -> Option<$t> {
                (o != 0).then(|| self.wrapping_rem(o))
            }
            #[inline(always)]
            fn and(self, o: $t) -> $t {
                self & o
            }
            #[inline(always)]
            fn or(self, o: $t) -> $t {
                self | o
            }
            #[inline(always)]
            fn xor(self, o: $t) -> $t {
                self ^ o
            }
            #[inline(always)]
            fn shl(self, o: $t) -> $t {
                self.wrapping_shl(o as u32)
            }
            #[inline(always)]
            fn shr(self, o: $t) -> $t {
                self.wrapping_shr(o as u32)
            }
            #[inline(always)]
            fn not(self) -> $t {
                !self
            }
            #[inline(always)]
            fn neg(self) -> $t {
                self.wrapping_neg()
            }
            #[inline(always)]
            fn abs(self) -> $t {
                (self as i128).unsigned_abs() as $t
            }
            #[inline(always)]
            fn popcount(self) -> u64 {
                (self as $u).count_ones() as u64
            }
            #[inline(always)]
            fn ctz(self) -> u64 {
                self.trailing_zeros() as u64
            }
            fn ones() -> $t {
                !0
            }
        }
    )* };
}
int_impl!(i8, u8; u8, u8; i16, u16; u16, u16; i32, u32; u32, u32; i64, u64; u64, u64);

/// `i1`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bool(bool);

impl Num for Bool {
    fn get(bits: u64) -> Bool {
        Bool(bits & 1 != 0)
    }
    fn put(self) -> u64 {
        self.0 as u64
    }
    fn wide(self) -> Wide {
        Wide::I(self.0 as i128)
    }
    fn from_wide(w: Wide) -> Bool {
        match w {
            Wide::I(i) => Bool(i & 1 != 0),
            // Truncate toward zero, then saturate to 0..=1 (NaN gives 0).
            Wide::F(f) => Bool(f as u8 >= 1),
        }
    }
}

/// Runs `$body` with `$T` bound to the Rust type of a float scalar type, or evaluates `$other`.
macro_rules! float_type {
    ($s:expr, $T:ident, $body:expr, $other:expr) => {
        match $s {
            ScalarType::F16 => {
                type $T = H16;
                $body
            }
            ScalarType::BF16 => {
                type $T = B16;
                $body
            }
            ScalarType::F32 => {
                type $T = f32;
                $body
            }
            ScalarType::F64 => {
                type $T = f64;
                $body
            }
            ScalarType::I1
            | ScalarType::I8
            | ScalarType::U8
            | ScalarType::I16
            | ScalarType::U16
            | ScalarType::I32
            | ScalarType::U32
            | ScalarType::I64
            | ScalarType::U64 => $other,
        }
    };
}

/// Runs `$body` with `$T` bound to the Rust type of an integer scalar type, or evaluates `$other`.
macro_rules! int_type {
    ($s:expr, $T:ident, $body:expr, $other:expr) => {
        match $s {
            ScalarType::I8 => {
                type $T = i8;
                $body
            }
            ScalarType::U8 => {
                type $T = u8;
                $body
            }
            ScalarType::I16 => {
                type $T = i16;
                $body
            }
            ScalarType::U16 => {
                type $T = u16;
                $body
            }
            ScalarType::I32 => {
                type $T = i32;
                $body
            }
            ScalarType::U32 => {
                type $T = u32;
                $body
            }
            ScalarType::I64 => {
                type $T = i64;
                $body
            }
            ScalarType::U64 => {
                type $T = u64;
                $body
            }
            ScalarType::I1
            | ScalarType::F16
            | ScalarType::BF16
            | ScalarType::F32
            | ScalarType::F64 => $other,
        }
    };
}

/// Runs `$body` with `$T` bound to the Rust type of any scalar type.
macro_rules! any_type {
    ($s:expr, $T:ident, $body:expr) => {
        match $s {
            ScalarType::I1 => {
                type $T = Bool;
                $body
            }
            s => float_type!(s, $T, $body, int_type!(s, $T, $body, unreachable!())),
        }
    };
}

#[inline(always)]
fn map1(d: &mut [u64], a: &[u64], f: impl Fn(u64) -> u64) {
    for (d, &a) in d.iter_mut().zip(a) {
        *d = f(a);
    }
}

#[inline(always)]
fn map2(d: &mut [u64], a: &[u64], b: &[u64], f: impl Fn(u64, u64) -> u64) {
    for ((d, &a), &b) in d.iter_mut().zip(a).zip(b) {
        *d = f(a, b);
    }
}

#[inline(always)]
fn map3(d: &mut [u64], a: &[u64], b: &[u64], c: &[u64], f: impl Fn(u64, u64, u64) -> u64) {
    for (((d, &a), &b), &c) in d.iter_mut().zip(a).zip(b).zip(c) {
        *d = f(a, b, c);
    }
}

fn float_unary<T: Float>(op: UnaryOp, d: &mut [u64], a: &[u64]) -> bool {
    let approx = |f: fn(f64) -> f64| move |x: u64| T::from_f64(f(T::get(x).to_f64())).put();
    match op {
        UnaryOp::Neg => map1(d, a, |x| x ^ T::SIGN),
        UnaryOp::Abs => map1(d, a, |x| x & !T::SIGN),
        UnaryOp::Sqrt => map1(d, a, |x| T::get(x).sqrt().put()),
        UnaryOp::Floor => map1(d, a, |x| T::get(x).rint(Rint::Floor).put()),
        UnaryOp::Ceil => map1(d, a, |x| T::get(x).rint(Rint::Ceil).put()),
        UnaryOp::Trunc => map1(d, a, |x| T::get(x).rint(Rint::Trunc).put()),
        UnaryOp::Round => map1(d, a, |x| T::get(x).rint(Rint::Round).put()),
        UnaryOp::RoundEven => map1(d, a, |x| T::get(x).rint(Rint::Even).put()),
        UnaryOp::IsNan => map1(d, a, |x| T::get(x).is_nan() as u64),
        UnaryOp::Exp2Approx => map1(d, a, approx(f64::exp2)),
        UnaryOp::Log2Approx => map1(d, a, approx(f64::log2)),
        UnaryOp::RsqrtApprox => map1(d, a, approx(|x| 1.0 / x.sqrt())),
        UnaryOp::RcpApprox => map1(d, a, approx(|x| 1.0 / x)),
        UnaryOp::Not | UnaryOp::Popcount | UnaryOp::Ctz => return false,
    }
    true
}

fn int_unary<T: Int>(op: UnaryOp, d: &mut [u64], a: &[u64]) -> bool {
    match op {
        UnaryOp::Neg => map1(d, a, |x| T::get(x).neg().put()),
        UnaryOp::Not => map1(d, a, |x| T::get(x).not().put()),
        UnaryOp::Abs => map1(d, a, |x| T::get(x).abs().put()),
        UnaryOp::Popcount => map1(d, a, |x| T::get(x).popcount()),
        UnaryOp::Ctz => map1(d, a, |x| T::get(x).ctz()),
        UnaryOp::Sqrt
        | UnaryOp::Floor
        | UnaryOp::Ceil
        | UnaryOp::Trunc
        | UnaryOp::Round
        | UnaryOp::RoundEven
        | UnaryOp::Exp2Approx
        | UnaryOp::Log2Approx
        | UnaryOp::RsqrtApprox
        | UnaryOp::RcpApprox
        | UnaryOp::IsNan => return false,
    }
    true
}

/// One-operand op on one element row; false when the op is not defined on the type.
pub(crate) fn unary(op: UnaryOp, s: ScalarType, d: &mut [u64], a: &[u64]) -> bool {
    match s {
        ScalarType::I1 => match op {
            UnaryOp::Not => {
                map1(d, a, |x| x ^ 1);
                true
            }
            UnaryOp::Neg
            | UnaryOp::Abs
            | UnaryOp::Popcount
            | UnaryOp::Ctz
            | UnaryOp::Sqrt
            | UnaryOp::Floor
            | UnaryOp::Ceil
            | UnaryOp::Trunc
            | UnaryOp::Round
            | UnaryOp::RoundEven
            | UnaryOp::Exp2Approx
            | UnaryOp::Log2Approx
            | UnaryOp::RsqrtApprox
            | UnaryOp::RcpApprox
            | UnaryOp::IsNan => false,
        },
        s => float_type!(
            s,
            T,
            float_unary::<T>(op, d, a),
            int_type!(s, T, int_unary::<T>(op, d, a), false)
        ),
    }
}

fn float_binary<T: Float>(op: BinaryOp, d: &mut [u64], a: &[u64], b: &[u64]) -> bool {
    match op {
        BinaryOp::Add => map2(d, a, b, |x, y| T::get(x).add(T::get(y)).put()),
        BinaryOp::Sub => map2(d, a, b, |x, y| T::get(x).sub(T::get(y)).put()),
        BinaryOp::Mul => map2(d, a, b, |x, y| T::get(x).mul(T::get(y)).put()),
        BinaryOp::Div => map2(d, a, b, |x, y| T::get(x).div(T::get(y)).put()),
        BinaryOp::Min => map2(d, a, b, |x, y| T::get(x).min(T::get(y)).put()),
        BinaryOp::Max => map2(d, a, b, |x, y| T::get(x).max(T::get(y)).put()),
        BinaryOp::Rem
        | BinaryOp::And
        | BinaryOp::Or
        | BinaryOp::Xor
        | BinaryOp::Shl
        | BinaryOp::Shr => return false,
    }
    true
}

fn int_binary<T: Int>(op: BinaryOp, d: &mut [u64], a: &[u64], b: &[u64]) -> bool {
    match op {
        BinaryOp::Add => map2(d, a, b, |x, y| T::get(x).wadd(T::get(y)).put()),
        BinaryOp::Sub => map2(d, a, b, |x, y| T::get(x).wsub(T::get(y)).put()),
        BinaryOp::Mul => map2(d, a, b, |x, y| T::get(x).wmul(T::get(y)).put()),
        BinaryOp::Min => map2(d, a, b, |x, y| T::get(x).min(T::get(y)).put()),
        BinaryOp::Max => map2(d, a, b, |x, y| T::get(x).max(T::get(y)).put()),
        BinaryOp::And => map2(d, a, b, |x, y| T::get(x).and(T::get(y)).put()),
        BinaryOp::Or => map2(d, a, b, |x, y| T::get(x).or(T::get(y)).put()),
        BinaryOp::Xor => map2(d, a, b, |x, y| T::get(x).xor(T::get(y)).put()),
        BinaryOp::Shl => map2(d, a, b, |x, y| T::get(x).shl(T::get(y)).put()),
        BinaryOp::Shr => map2(d, a, b, |x, y| T::get(x).shr(T::get(y)).put()),
        BinaryOp::Div | BinaryOp::Rem => return false,
    }
    true
}

/// True for the ops that [`int_divide`] runs (masked, with a zero check).
pub(crate) fn is_int_division(op: BinaryOp, s: ScalarType) -> bool {
    matches!(op, BinaryOp::Div | BinaryOp::Rem) && s.is_int()
}

/// Two-operand op on one element row, except integer division (see [`int_divide`]);
/// false when the op is not defined on the type.
pub(crate) fn binary(op: BinaryOp, s: ScalarType, d: &mut [u64], a: &[u64], b: &[u64]) -> bool {
    match s {
        ScalarType::I1 => match op {
            BinaryOp::And | BinaryOp::Or | BinaryOp::Xor | BinaryOp::Min | BinaryOp::Max => {
                int_binary::<u8>(op, d, a, b)
            }
            BinaryOp::Add
            | BinaryOp::Sub
            | BinaryOp::Mul
            | BinaryOp::Div
            | BinaryOp::Rem
            | BinaryOp::Shl
            | BinaryOp::Shr => false,
        },
        s => float_type!(
            s,
            T,
            float_binary::<T>(op, d, a, b),
            int_type!(s, T, int_binary::<T>(op, d, a, b), false)
        ),
    }
}

fn int_divide_t<T: Int>(
    rem: bool,
    d: &mut [u64],
    a: &[u64],
    b: &[u64],
    on: &[bool],
    zero: &mut Vec<usize>,
) {
    for i in 0..d.len() {
        if !on[i] {
            continue;
        }
        let (x, y) = (T::get(a[i]), T::get(b[i]));
        let r = if rem { x.rem(y) } else { x.div(y) };
        d[i] = match r {
            Some(r) => r.put(),
            None => {
                zero.push(i);
                // With the sanitizer off: x / 0 is all ones, x % 0 is x (RISC-V's convention).
                if rem {
                    x.put()
                } else {
                    T::ones().put()
                }
            }
        };
    }
}

/// Integer `Div` / `Rem` over the active lanes (`on`); pushes the positions dividing by zero.
pub(crate) fn int_divide(
    op: BinaryOp,
    s: ScalarType,
    d: &mut [u64],
    a: &[u64],
    b: &[u64],
    on: &[bool],
    zero: &mut Vec<usize>,
) {
    let rem = op == BinaryOp::Rem;
    int_type!(s, T, int_divide_t::<T>(rem, d, a, b, on, zero), ())
}

/// `a * b + c` with one rounding; false unless the type is a float.
pub(crate) fn fma(s: ScalarType, d: &mut [u64], a: &[u64], b: &[u64], c: &[u64]) -> bool {
    float_type!(
        s,
        T,
        {
            map3(d, a, b, c, |x, y, z| T::get(x).fma(T::get(y), T::get(z)).put());
            true
        },
        false
    )
}

fn float_cmp<T: Float>(op: CmpOp, d: &mut [u64], a: &[u64], b: &[u64]) {
    match op {
        CmpOp::Eq => map2(d, a, b, |x, y| T::get(x).eq(T::get(y)) as u64),
        CmpOp::Ne => map2(d, a, b, |x, y| !T::get(x).eq(T::get(y)) as u64),
        CmpOp::Lt => map2(d, a, b, |x, y| T::get(x).lt(T::get(y)) as u64),
        CmpOp::Le => map2(d, a, b, |x, y| T::get(x).le(T::get(y)) as u64),
        CmpOp::Gt => map2(d, a, b, |x, y| T::get(y).lt(T::get(x)) as u64),
        CmpOp::Ge => map2(d, a, b, |x, y| T::get(y).le(T::get(x)) as u64),
    }
}

fn int_cmp<T: Int>(op: CmpOp, d: &mut [u64], a: &[u64], b: &[u64]) {
    match op {
        CmpOp::Eq => map2(d, a, b, |x, y| (T::get(x) == T::get(y)) as u64),
        CmpOp::Ne => map2(d, a, b, |x, y| (T::get(x) != T::get(y)) as u64),
        CmpOp::Lt => map2(d, a, b, |x, y| (T::get(x) < T::get(y)) as u64),
        CmpOp::Le => map2(d, a, b, |x, y| (T::get(x) <= T::get(y)) as u64),
        CmpOp::Gt => map2(d, a, b, |x, y| (T::get(x) > T::get(y)) as u64),
        CmpOp::Ge => map2(d, a, b, |x, y| (T::get(x) >= T::get(y)) as u64),
    }
}

/// A comparison on one element row (result `i1`).
pub(crate) fn cmp(op: CmpOp, s: ScalarType, d: &mut [u64], a: &[u64], b: &[u64]) {
    match s {
        ScalarType::I1 => int_cmp::<u8>(op, d, a, b),
        s => float_type!(
            s,
            T,
            float_cmp::<T>(op, d, a, b),
            int_type!(s, T, int_cmp::<T>(op, d, a, b), ())
        ),
    }
}

fn convert_t<F: Num, T: Num>(d: &mut [u64], a: &[u64]) {
    map1(d, a, |x| T::from_wide(F::get(x).wide()).put())
}

/// [`crate::Op::Convert`] on one element row.
pub(crate) fn convert(from: ScalarType, to: ScalarType, d: &mut [u64], a: &[u64]) {
    if from == to {
        d.copy_from_slice(a);
        return;
    }
    any_type!(from, F, any_type!(to, T, convert_t::<F, T>(d, a)))
}

fn add_f<T: Float>(a: u64, b: u64) -> u64 {
    T::get(a).add(T::get(b)).put()
}
fn min_f<T: Float>(a: u64, b: u64) -> u64 {
    T::get(a).min(T::get(b)).put()
}
fn max_f<T: Float>(a: u64, b: u64) -> u64 {
    T::get(a).max(T::get(b)).put()
}
fn add_i<T: Int>(a: u64, b: u64) -> u64 {
    T::get(a).wadd(T::get(b)).put()
}
fn min_i<T: Int>(a: u64, b: u64) -> u64 {
    T::get(a).min(T::get(b)).put()
}
fn max_i<T: Int>(a: u64, b: u64) -> u64 {
    T::get(a).max(T::get(b)).put()
}

/// The combine function `op(own, partner)` of a wave reduction, or `None` for `i1`.
pub(crate) fn reduce_fn(op: ReduceOp, s: ScalarType) -> Option<fn(u64, u64) -> u64> {
    float_type!(
        s,
        T,
        Some(match op {
            ReduceOp::Add => add_f::<T> as fn(u64, u64) -> u64,
            ReduceOp::Min => min_f::<T>,
            ReduceOp::Max => max_f::<T>,
        }),
        int_type!(
            s,
            T,
            Some(match op {
                ReduceOp::Add => add_i::<T> as fn(u64, u64) -> u64,
                ReduceOp::Min => min_i::<T>,
                ReduceOp::Max => max_i::<T>,
            }),
            None
        )
    )
}

/// The widened value of `bits` of type `s`.
pub(crate) fn wide(s: ScalarType, bits: u64) -> Wide {
    any_type!(s, T, T::get(bits).wide())
}

/// True when `(va, ia)` wins over `(vb, ib)` in an argmax: the larger value wins, NaN counts as
/// largest, ties (equal values, `-0 == +0`, or both NaN) go to the lower index, then to `a`.
pub(crate) fn argmax_wins(s: ScalarType, va: u64, ia: u32, vb: u64, ib: u32) -> bool {
    use std::cmp::Ordering;
    let order = match (wide(s, va), wide(s, vb)) {
        (Wide::F(a), Wide::F(b)) => match (a.is_nan(), b.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
        },
        (Wide::I(a), Wide::I(b)) => a.cmp(&b),
        (Wide::F(_), Wide::I(_)) | (Wide::I(_), Wide::F(_)) => Ordering::Equal,
    };
    match order {
        Ordering::Greater => true,
        Ordering::Less => false,
        Ordering::Equal => ia <= ib,
    }
}

/// Reads integers of type `s` (sign-extended when signed) as i128; decided once, used per lane.
#[inline]
pub(crate) fn int_reader(s: ScalarType) -> impl Fn(u64) -> i128 {
    let (signed, sh) = (s.is_signed(), 64 - s.bits().min(64));
    move |b| {
        if signed {
            (((b << sh) as i64) >> sh) as i128
        } else {
            (b & (u64::MAX >> sh)) as i128
        }
    }
}

/// Mask of a scalar type's bits in the `u64` form.
pub(crate) fn width_mask(s: ScalarType) -> u64 {
    match s.bits() {
        64 => u64::MAX,
        b => (1u64 << b) - 1,
    }
}

/// The value as a signed 128-bit integer (sign-extended for signed types).
#[inline]
pub(crate) fn as_i128(s: ScalarType, bits: u64) -> i128 {
    match s.class() {
        TypeClass::Signed => {
            let sh = 64 - s.bits();
            (((bits << sh) as i64) >> sh) as i128
        }
        TypeClass::Unsigned | TypeClass::Bool => bits as i128,
        TypeClass::Float => match wide(s, bits) {
            Wide::I(i) => i,
            Wide::F(f) => f as i128,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_to_odd_keeps_exact_values_and_sets_sticky() {
        assert_eq!(f64_to_f32_odd(1.5), 1.5);
        let x = 1.0 + 2f64.powi(-40);
        assert_eq!(f64_to_f32_odd(x).to_bits(), 1f32.to_bits() | 1);
        assert_eq!(f64_to_f32_odd(-x).to_bits(), (-1f32).to_bits() | 1);
        assert_eq!(f64_to_f32_odd(1e300), f32::MAX);
        assert_eq!(f64_to_f32_odd(f64::INFINITY), f32::INFINITY);
        assert_eq!(f64_to_f32_odd(1e-300).to_bits(), 1);
        assert!(f64_to_f32_odd(f64::NAN).is_nan());
    }

    #[test]
    fn f64_to_f16_rounds_once() {
        // 1 + 2^-11 + 2^-40: through f32 (RNE) it becomes the tie 1 + 2^-11 and then 1.0;
        // correctly rounded it is just above the tie, so 1 + 2^-10.
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(H16::from_f64(x).put(), 0x3C01);
        assert_eq!(half::f16::from_f32(x as f32).to_bits(), 0x3C00);
        // bf16: 1 + 2^-8 + 2^-40 rounds up to 1 + 2^-7.
        let y = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
        assert_eq!(B16::from_f64(y).put(), 0x3F81);
    }

    #[test]
    fn int_to_f64_odd_is_sticky() {
        let big = (1i128 << 62) + 1;
        let r = int_to_f64_odd(big);
        assert!(r > 2f64.powi(62));
        assert_eq!(int_to_f64_odd(12345), 12345.0);
        assert_eq!(int_to_f64_odd(-((1i128 << 62) + 1)), -r);
    }

    #[test]
    fn fma_odd_sees_the_tiny_product() {
        // c = 1, a*b = 2^-60: the exact sum is just above 1; round-to-odd keeps that.
        let r = fma_odd(2f64.powi(-30), 2f64.powi(-30), 1.0);
        assert!(r > 1.0);
        assert_eq!(fma_odd(2.0, 3.0, 1.0), 7.0);
    }
}
