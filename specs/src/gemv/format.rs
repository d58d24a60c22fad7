//! Weight formats and layouts, the loads of one 32-value block, and the one definition of a
//! block's contribution to a dot product ([`accumulate`]), which every GEMV kernel shares.
//!
//! Quantized blocks (ggml's, 32 values each):
//! - Q8_0, 34 bytes: `{ f16 d; i8 qs[32]; }`, `x = d * q`;
//! - Q4_0, 18 bytes: `{ f16 d; u8 qs[16]; }`, value `j` is `qs[j] & 15` and value `j + 16` is
//!   `qs[j] >> 4`, `x = d * (q - 8)`;
//! - Q4_1, 20 bytes: `{ f16 d; f16 m; u8 qs[16]; }`, nibbles as Q4_0, `x = d * q + m`.
//!
//! Layouts: [`Layout::Ggml`] is the bytes of a GGUF tensor, row after row (`n` rows of `k / 32`
//! blocks); [`Layout::Repacked`] keeps the quants of every block in `wq` (32 or 16 bytes a block,
//! so every block's quants are 16-byte aligned) and the scales apart in `ws` (`u16` d, or `u32`
//! `d | m << 16` for Q4_1), both in the same block order. The repack kernel
//! ([`super::repack`]) makes the second from the first.
//!
//! Activations for quantized weights are Q8_1 (ggml's `d = amax / 127`, `s = d * sum q`) in the
//! split layout of `quantize_q8_1s_f32`: quants `xq` (`u8`, `t * k`) and scales `xs` (`u32`,
//! `d | s << 16`, `t * k / 32`). f16 / bf16 weights take f32 activations `x` (`t * k`).

const U16: Type = Type::scalar(ScalarType::U16);
use kiln_ir::{
    Access, DotOp, IndexUnit, KernelBuilder, LdsSlot, Param, ScalarType, ShapeExpr, Type, Value,
};

/// Values a block.
pub const QK: u32 = 32;

/// The weights' element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WType {
    /// ggml Q8_0.
    Q8_0,
    /// ggml Q4_0.
    Q4_0,
    /// ggml Q4_1.
    Q4_1,
    /// IEEE half.
    F16,
    /// bfloat16.
    Bf16,
}

impl WType {
    /// The name in kernel names (`q8_0`, ...).
    pub fn name(self) -> &'static str {
        match self {
            WType::Q8_0 => "q8_0",
            WType::Q4_0 => "q4_0",
            WType::Q4_1 => "q4_1",
            WType::F16 => "f16",
            WType::Bf16 => "bf16",
        }
    }
    /// True for the quantized formats (Q8_1 activations, integer dot products).
    pub fn is_quant(self) -> bool {
        match self {
            WType::Q8_0 | WType::Q4_0 | WType::Q4_1 => true,
            WType::F16 | WType::Bf16 => false,
        }
    }
    /// Bytes of a block of 32 values in ggml's layout.
    pub fn block_bytes(self) -> u64 {
        match self {
            WType::Q8_0 => 34,
            WType::Q4_0 => 18,
            WType::Q4_1 => 20,
            WType::F16 | WType::Bf16 => 64,
        }
    }
    /// Bytes of a block's quants in the repacked layout.
    pub fn quant_bytes(self) -> u64 {
        match self {
            WType::Q8_0 => 32,
            WType::Q4_0 | WType::Q4_1 => 16,
            WType::F16 | WType::Bf16 => 64,
        }
    }
    /// The element type of the repacked scales: `u16` d, or `u32` `d | m << 16`.
    pub fn scale_type(self) -> ScalarType {
        match self {
            WType::Q4_1 => ScalarType::U32,
            WType::Q8_0 | WType::Q4_0 | WType::F16 | WType::Bf16 => ScalarType::U16,
        }
    }
    /// The float element type of f16 / bf16 weights.
    fn float_elem(self) -> Option<ScalarType> {
        match self {
            WType::F16 => Some(ScalarType::F16),
            WType::Bf16 => Some(ScalarType::BF16),
            WType::Q8_0 | WType::Q4_0 | WType::Q4_1 => None,
        }
    }
}

/// How the weights lie in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// ggml's blocks (the GGUF bytes); f16 / bf16 row-major.
    Ggml,
    /// Quants and scales apart, quants 16-byte aligned.
    Repacked,
}

/// The weight parameters of one matrix.
#[derive(Clone, Copy)]
pub enum Weights {
    /// `w`: ggml blocks (`u8`) or f16 / bf16 values.
    Ggml(Param, WType),
    /// `wq` (`u8`) and `ws` (scales).
    Repacked {
        /// Quants.
        q: Param,
        /// Scales.
        s: Param,
        /// Format.
        wt: WType,
    },
}

impl Weights {
    /// Declares the parameters of one matrix (`prefix` names them: `w`, `wq`/`ws`, or
    /// `gate_w`...) with lengths for `rows` (a product of scalars) rows of `k` values.
    pub fn declare(
        b: &mut KernelBuilder,
        prefix: &str,
        wt: WType,
        layout: Layout,
        rows: &[Param],
        k: Param,
    ) -> Weights {
        let mut f = rows.to_vec();
        f.push(k);
        match (layout, wt.float_elem()) {
            (Layout::Ggml, Some(elem)) => {
                let w = b.buffer(prefix.to_string(), elem, Access::Read);
                b.set_buffer_len(w, ShapeExpr::scaled(&f, 1, 1));
                Weights::Ggml(w, wt)
            }
            (Layout::Ggml, None) => {
                let w = b.buffer(prefix.to_string(), ScalarType::U8, Access::Read);
                b.set_buffer_len(w, ShapeExpr::scaled(&f, wt.block_bytes(), QK as u64));
                Weights::Ggml(w, wt)
            }
            (Layout::Repacked, _) => {
                let q = b.buffer(format!("{prefix}q"), ScalarType::U8, Access::Read);
                b.set_buffer_len(q, ShapeExpr::scaled(&f, wt.quant_bytes(), QK as u64));
                let s = b.buffer(format!("{prefix}s"), wt.scale_type(), Access::Read);
                b.set_buffer_len(s, ShapeExpr::scaled(&f, 1, QK as u64));
                Weights::Repacked { q, s, wt }
            }
        }
    }

    /// The format.
    pub fn wt(self) -> WType {
        match self {
            Weights::Ggml(_, wt) | Weights::Repacked { wt, .. } => wt,
        }
    }

    /// The buffer holding the quants (or values): at least one block, so at least 16 bytes.
    pub fn first_param(self) -> Param {
        match self {
            Weights::Ggml(p, _) => p,
            Weights::Repacked { q, .. } => q,
        }
    }

    /// Loads block `blk` (a `u64` index over every block of the matrix, row-major).
    pub fn load(self, b: &mut KernelBuilder, blk: Value) -> WBlock {
        let u32t = Type::U32;
        match self {
            Weights::Ggml(w, wt) => match wt {
                WType::F16 | WType::Bf16 => {
                    let c = b.u64(QK as u64);
                    let first = b.mul(blk, c);
                    let elem = wt.float_elem().expect("a float format");
                    let mut vals = Vec::with_capacity(32);
                    for i in 0..4u64 {
                        let off = b.u64(8 * i);
                        let at = b.add(first, off);
                        let v = b.load_with(w, at, Type::vector(elem, 8), IndexUnit::Element, None);
                        for e in 0..8u8 {
                            let x = b.extract(v, e);
                            vals.push(b.convert(x, Type::F32));
                        }
                    }
                    WBlock::Float(vals)
                }
                WType::Q8_0 | WType::Q4_0 | WType::Q4_1 => {
                    let bb = b.u64(wt.block_bytes());
                    let at = b.mul(blk, bb);
                    // Q4_1's blocks are 20 bytes: every field is 4-byte aligned; Q8_0's and
                    // Q4_0's (34, 18) only 2-byte aligned.
                    let (align, qoff) = match wt {
                        WType::Q4_1 => (4, 4),
                        WType::Q8_0 | WType::Q4_0 | WType::F16 | WType::Bf16 => (2, 2),
                    };
                    let (d, m) = if wt == WType::Q4_1 {
                        let dm = b.load_with(w, at, u32t, IndexUnit::Byte, Some(4));
                        let (d, m) = halves(b, dm);
                        (d, Some(m))
                    } else {
                        let d = b.load_with(w, at, U16, IndexUnit::Byte, Some(2));
                        (f16_bits(b, d), None)
                    };
                    let nwords = (wt.quant_bytes() / 4) as u32;
                    let mut words = Vec::with_capacity(8);
                    for i in 0..nwords {
                        let off = b.u64(qoff + 4 * i as u64);
                        let a = b.add(at, off);
                        words.push(b.load_with(w, a, u32t, IndexUnit::Byte, Some(align)));
                    }
                    WBlock::quant(b, wt, words, d, m)
                }
            },
            Weights::Repacked { q, s, wt } => {
                let qb = b.u64(wt.quant_bytes());
                let at = b.mul(blk, qb);
                let mut words = Vec::with_capacity(8);
                for i in 0..wt.quant_bytes() / 16 {
                    let off = b.u64(16 * i);
                    let a = b.add(at, off);
                    let v =
                        b.load_with(q, a, Type::vector(ScalarType::U32, 4), IndexUnit::Byte, None);
                    for e in 0..4u8 {
                        words.push(b.extract(v, e));
                    }
                }
                let (d, m) = if wt == WType::Q4_1 {
                    let dm = b.load_with(s, blk, u32t, IndexUnit::Element, None);
                    let (d, m) = halves(b, dm);
                    (d, Some(m))
                } else {
                    let d = b.load_with(s, blk, U16, IndexUnit::Element, None);
                    (f16_bits(b, d), None)
                };
                WBlock::quant(b, wt, words, d, m)
            }
        }
    }
}

/// `f16` bits (`u16`) to f32 (exact).
pub(crate) fn f16_bits(b: &mut KernelBuilder, bits: Value) -> Value {
    let h = b.bitcast(bits, Type::F16);
    b.convert(h, Type::F32)
}

/// The two f16 halves of a `u32` (low first) as f32.
pub(crate) fn halves(b: &mut KernelBuilder, w: Value) -> (Value, Value) {
    let lo = b.convert(w, U16);
    let sixteen = b.u32(16);
    let hi = b.shr(w, sixteen);
    let hi = b.convert(hi, U16);
    (f16_bits(b, lo), f16_bits(b, hi))
}

/// One loaded weight block.
pub enum WBlock {
    /// Eight words of four signed (Q8_0) or unsigned 0..15 (Q4) values, word `i` holding values
    /// `4i..4i+4` (so it pairs with the activation's word `i`); `d`, and Q4_1's `m`, as f32.
    Quant {
        /// Format.
        wt: WType,
        /// Values.
        words: Vec<Value>,
        /// Scale.
        d: Value,
        /// Q4_1's minimum.
        m: Option<Value>,
    },
    /// 32 f32 values.
    Float(Vec<Value>),
}

impl WBlock {
    fn quant(
        b: &mut KernelBuilder,
        wt: WType,
        raw: Vec<Value>,
        d: Value,
        m: Option<Value>,
    ) -> WBlock {
        let words = match wt {
            WType::Q8_0 => raw,
            // Byte j of the 16 holds value j (low nibble) and value j + 16 (high nibble).
            WType::Q4_0 | WType::Q4_1 => {
                let mut w: Vec<Value> = raw
                    .iter()
                    .map(|&x| b.packed_convert(kiln_ir::PackedConvertOp::NibblesLow, x))
                    .collect();
                for &x in &raw {
                    w.push(b.packed_convert(kiln_ir::PackedConvertOp::NibblesHigh, x));
                }
                w
            }
            WType::F16 | WType::Bf16 => unreachable!("float blocks are not quantized"),
        };
        WBlock::Quant { wt, words, d, m }
    }
}

/// One loaded activation block of one token.
pub enum ABlock {
    /// Eight words of four Q8_1 quants, `d` and `s` as f32.
    Quant {
        /// Quants.
        words: Vec<Value>,
        /// Scale.
        d: Value,
        /// `d * sum q`, as ggml stores it (f16).
        s: Value,
    },
    /// 32 f32 values.
    Float(Vec<Value>),
}

/// The activation parameters.
#[derive(Clone, Copy)]
pub enum Acts {
    /// Q8_1 split: `xq`, `xs`.
    Quant {
        /// Quants.
        q: Param,
        /// Scales.
        s: Param,
    },
    /// f32 `x`.
    Float(Param),
    /// Split Q8_1 in LDS, written by the norm prologue ([`super::norm`]) for the tokens of a
    /// pass: `q` words (eight a block), `s` scale words; block `j * k/32 + b` of the pass's
    /// token `j`.
    Lds {
        /// Quants.
        q: LdsSlot,
        /// Scales.
        s: LdsSlot,
    },
}

impl Acts {
    /// Declares the activations of `t` tokens of `k` values.
    pub fn declare(b: &mut KernelBuilder, wt: WType, t: Param, k: Param) -> Acts {
        if wt.is_quant() {
            let q = b.buffer("xq", ScalarType::U8, Access::Read);
            b.set_buffer_len(q, ShapeExpr::scaled(&[t, k], 1, 1));
            let s = b.buffer("xs", ScalarType::U32, Access::Read);
            b.set_buffer_len(s, ShapeExpr::scaled(&[t, k], 1, QK as u64));
            Acts::Quant { q, s }
        } else {
            let x = b.buffer("x", ScalarType::F32, Access::Read);
            b.set_buffer_len(x, ShapeExpr::scaled(&[t, k], 1, 1));
            Acts::Float(x)
        }
    }

    /// Loads block `blk` (`u32`, over every block of every token: `tok * k / 32 + b`; for
    /// [`Acts::Lds`], of every token of the pass).
    pub fn load(self, b: &mut KernelBuilder, blk: Value) -> ABlock {
        match self {
            Acts::Lds { q, s } => {
                let c = b.u32(QK / 4);
                let at = b.mul(blk, c);
                let mut words = Vec::with_capacity(8);
                for i in 0..2u32 {
                    let off = b.u32(4 * i);
                    let a = b.add(at, off);
                    let v = b.load(q, a, Type::vector(ScalarType::U32, 4));
                    for e in 0..4u8 {
                        words.push(b.extract(v, e));
                    }
                }
                let ds = b.load(s, blk, Type::U32);
                let (d, s) = halves(b, ds);
                ABlock::Quant { words, d, s }
            }
            Acts::Quant { q, s } => {
                let c = b.u32(QK);
                let at = b.mul(blk, c);
                let mut words = Vec::with_capacity(8);
                for i in 0..2u32 {
                    let off = b.u32(16 * i);
                    let a = b.add(at, off);
                    let v =
                        b.load_with(q, a, Type::vector(ScalarType::U32, 4), IndexUnit::Byte, None);
                    for e in 0..4u8 {
                        words.push(b.extract(v, e));
                    }
                }
                let ds = b.load(s, blk, Type::U32);
                let (d, s) = halves(b, ds);
                ABlock::Quant { words, d, s }
            }
            Acts::Float(x) => {
                let c = b.u32(QK);
                let first = b.mul(blk, c);
                let mut vals = Vec::with_capacity(32);
                for i in 0..8u32 {
                    let off = b.u32(4 * i);
                    let at = b.add(first, off);
                    let v = b.load(x, at, Type::vector(ScalarType::F32, 4));
                    for e in 0..4u8 {
                        vals.push(b.extract(v, e));
                    }
                }
                ABlock::Float(vals)
            }
        }
    }
}

/// Q8_0's block term, `fma(dw * da, fs, acc)` with `fs = f32(sumi)`: shared with the
/// matrix-unit family (`super::k4`), whose sums come from the MMA.
pub(crate) fn q8_0_term(
    b: &mut KernelBuilder,
    dw: Value,
    da: Value,
    fs: Value,
    acc: Value,
) -> Value {
    let dd = b.mul(dw, da);
    b.fma(dd, fs, acc)
}

/// `acc` plus one block's contribution: the one definition of the f32 arithmetic, shared by
/// every GEMV variant (so they agree bit for bit). With `sumi` the exact integer dot product
/// of the block's quants (eight `dot4.i8`, order free: integers are exact):
/// - Q8_0: `fma(dw * da, f32(sumi), acc)`;
/// - Q4_0: `fma(dw, fma(f32(sumi), da, -8 * sa), acc)` (ggml's `d4 * (sumi * d8 - 8 * s8)`);
/// - Q4_1: `acc + fma(dw * da, f32(sumi), mw * sa)`;
/// - f16 / bf16: `acc = fma(w[j], x[j], acc)` for `j = 0..32` in order.
pub fn accumulate(b: &mut KernelBuilder, w: &WBlock, a: &ABlock, acc: Value) -> Value {
    match (w, a) {
        (WBlock::Quant { wt, words, d: dw, m }, ABlock::Quant { words: aw, d: da, s: sa }) => {
            let mut sumi = b.i32(0);
            for (&x, &y) in words.iter().zip(aw) {
                sumi = b.dot(DotOp::I8, x, y, sumi);
            }
            let fs = b.convert(sumi, Type::F32);
            match wt {
                WType::Q8_0 => q8_0_term(b, *dw, *da, fs, acc),
                WType::Q4_0 => {
                    let m8 = b.f32(-8.0);
                    let ms = b.mul(*sa, m8);
                    let inner = b.fma(fs, *da, ms);
                    b.fma(*dw, inner, acc)
                }
                WType::Q4_1 => {
                    let m = m.expect("Q4_1 has m");
                    let dd = b.mul(*dw, *da);
                    let ms = b.mul(m, *sa);
                    let inner = b.fma(dd, fs, ms);
                    b.add(acc, inner)
                }
                WType::F16 | WType::Bf16 => unreachable!("float weights take float activations"),
            }
        }
        (WBlock::Float(ws), ABlock::Float(xs)) => {
            let mut acc = acc;
            for (&w, &x) in ws.iter().zip(xs) {
                acc = b.fma(w, x, acc);
            }
            acc
        }
        (WBlock::Quant { .. }, ABlock::Float(_)) | (WBlock::Float(_), ABlock::Quant { .. }) => {
            unreachable!("weights and activations are declared together")
        }
    }
}
