//! Host-side data for the GEMV cases: random ggml blocks with edge blocks, the repacked layout
//! of the same bytes, and Q8_1 activations in the split layout.

use super::format::{WType, QK};
use crate::cases::Rng;
use half::{bf16, f16};

/// Random ggml blocks of `wt` for `rows x k` values (f16 / bf16: the values). With `edges`,
/// some blocks are special: a zero scale, a negative scale, extreme quants (-128 / 127, nibbles
/// 0 / 15), a subnormal scale.
pub fn weights(rng: &mut Rng, wt: WType, rows: usize, k: usize, edges: bool) -> Vec<u8> {
    let nb = rows * k / QK as usize;
    let mut out = Vec::with_capacity(nb * wt.block_bytes() as usize);
    for i in 0..nb {
        let kind = if edges { i % 9 } else { 0 };
        match wt {
            WType::F16 | WType::Bf16 => {
                for j in 0..QK as usize {
                    let mut x = rng.normal(0.5);
                    if kind == 1 {
                        x = 0.0;
                    } else if kind == 2 && j % 3 == 0 {
                        x = -x * 1000.0;
                    }
                    if wt == WType::F16 {
                        out.extend(f16::from_f32(x).to_le_bytes());
                    } else {
                        out.extend(bf16::from_f32(x).to_le_bytes());
                    }
                }
            }
            WType::Q8_0 | WType::Q4_0 | WType::Q4_1 => {
                let d = match kind {
                    1 => 0.0,
                    2 => -rng.normal(0.01).abs(),
                    4 => 3.0e-6, // subnormal in f16
                    _ => rng.normal(0.01),
                };
                out.extend(f16::from_f32(d).to_le_bytes());
                if wt == WType::Q4_1 {
                    out.extend(f16::from_f32(rng.normal(0.1)).to_le_bytes());
                }
                let nq = wt.quant_bytes() as usize;
                for j in 0..nq {
                    let q = match (kind, wt) {
                        (3, WType::Q8_0) => {
                            if j % 2 == 0 {
                                0x80
                            } else {
                                0x7f
                            }
                        }
                        (3, _) => {
                            if j % 2 == 0 {
                                0x00
                            } else {
                                0xff
                            }
                        }
                        _ => rng.next_u64() as u8,
                    };
                    out.push(q);
                }
            }
        }
    }
    out
}

/// The repacked layout of ggml blocks: (quants, scales) bytes.
pub fn repack(wt: WType, ggml: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let bb = wt.block_bytes() as usize;
    let head = if wt == WType::Q4_1 { 4 } else { 2 };
    let mut q = Vec::with_capacity(ggml.len());
    let mut s = Vec::new();
    for block in ggml.chunks(bb) {
        s.extend_from_slice(&block[..head]);
        q.extend_from_slice(&block[head..]);
    }
    (q, s)
}

/// Q8_1 activations of `t x k` values in the split layout: (quants, scales as `d | s << 16`).
/// Quants are random in -127..=127 and `s = f16(d * sum q)` as ggml computes it; with `edges`,
/// some blocks have `d = 0` (all quants 0) or the quants at their extremes.
pub fn q8_1(rng: &mut Rng, t: usize, k: usize, edges: bool) -> (Vec<u8>, Vec<u8>) {
    let nb = t * k / QK as usize;
    let mut q = Vec::with_capacity(t * k);
    let mut s = Vec::with_capacity(nb * 4);
    for i in 0..nb {
        let kind = if edges { i % 7 } else { 0 };
        let mut sum = 0i32;
        let d = if kind == 1 { 0.0 } else { rng.normal(0.02).abs() };
        for j in 0..QK {
            let v: i8 = match kind {
                1 => 0,
                2 => {
                    if j % 2 == 0 {
                        -127
                    } else {
                        127
                    }
                }
                _ => (rng.below(255) as i32 - 127) as i8,
            };
            sum += v as i32;
            q.push(v as u8);
        }
        let dh = f16::from_f32(d);
        let sh = f16::from_f32(dh.to_f32() * sum as f32);
        s.extend(dh.to_le_bytes());
        s.extend(sh.to_le_bytes());
    }
    (q, s)
}

/// Random f32 activations (`t x k`).
pub fn floats(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.normal(1.0)).collect()
}
