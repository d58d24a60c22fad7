//! Semantics of the packed ops, which treat a `u32` as four bytes: the byte permute. Kept apart
//! from `arith` (one scalar type at a time) because these ops cross lanes of a packed word.

/// Byte `i` of the result is byte `sel[i]` of the little-endian 8-byte value `b:a` (bytes 0-3
/// from `a`, 4-7 from `b`); a selector past 7 wraps (the verifier refuses it).
pub(crate) fn perm(a: u32, b: u32, sel: [u8; 4]) -> u32 {
    let v = (b as u64) << 32 | a as u64;
    sel.iter()
        .enumerate()
        .fold(0, |r, (i, &s)| r | (((v >> ((s & 7) * 8)) & 0xff) as u32) << (i * 8))
}
