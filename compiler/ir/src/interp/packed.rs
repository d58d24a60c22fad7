//! Semantics of the packed ops, which treat a `u32` as four bytes or an `f16x2` as a pair: the
//! byte permute, the dot products, the packed conversions. Kept apart from `arith` (one scalar
//! type at a time) because these ops cross the elements of a packed word.

use super::arith;
use crate::{DotOp, ScalarType};
use half::f16;

/// Byte `i` of the result is byte `sel[i]` of the little-endian 8-byte value `b:a` (bytes 0-3
/// from `a`, 4-7 from `b`); a selector past 7 wraps (the verifier refuses it).
pub(crate) fn perm(a: u32, b: u32, sel: [u8; 4]) -> u32 {
    let v = (b as u64) << 32 | a as u64;
    sel.iter()
        .enumerate()
        .fold(0, |r, (i, &s)| r | (((v >> ((s & 7) * 8)) & 0xff) as u32) << (i * 8))
}

/// Lane `i` (byte `i`) of a packed word, sign-extended when `signed`.
fn lane(x: u32, i: usize, signed: bool) -> i32 {
    let byte = (x >> (i * 8)) as u8;
    if signed {
        byte as i8 as i32
    } else {
        byte as i32
    }
}

/// An integer [`DotOp`]: `acc + sum(a[i] * b[i])` modulo 2^32 (the sum of the four products
/// fits 32 bits; only the accumulation wraps). The f16 flavours go to [`fdot2`].
pub(crate) fn dot4(op: DotOp, a: u32, b: u32, acc: u32) -> u32 {
    let (sa, sb) = match op {
        DotOp::I8 => (true, true),
        DotOp::U8 => (false, false),
        DotOp::I8U8 => (true, false),
        DotOp::F16 | DotOp::F16Approx => unreachable!("fdot2 computes the f16 flavours"),
    };
    (0..4).fold(acc, |s, i| s.wrapping_add((lane(a, i, sa) * lane(b, i, sb)) as u32))
}

/// [`DotOp::F16`] on bit patterns: `fma(a0, b0, fma(a1, b1, acc))` in f32, the same f32 fma as
/// the `fma` op (so NaN results are the ones `fma` gives).
pub(crate) fn fdot2(a: [u16; 2], b: [u16; 2], acc: u64) -> u64 {
    let f = |h: u16| f16::from_bits(h).to_f32().to_bits() as u64;
    let mut inner = [0u64];
    arith::fma(ScalarType::F32, &mut inner, &[f(a[1])], &[f(b[1])], &[acc]);
    let mut out = [0u64];
    arith::fma(ScalarType::F32, &mut out, &[f(a[0])], &[f(b[0])], &inner);
    out[0]
}

/// The f32 bits of signed byte `i` of `x` (exact).
pub(crate) fn i8_to_f32(x: u32, i: usize) -> u32 {
    (lane(x, i, true) as f32).to_bits()
}

/// The low (or high) nibble of each byte, in the byte's low four bits.
pub(crate) fn nibbles(x: u32, high: bool) -> u32 {
    (if high { x >> 4 } else { x }) & 0x0f0f_0f0f
}
