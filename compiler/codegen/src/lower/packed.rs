//! Ops on the four bytes of a `u32` or the two halves of an `f16x2`, written once as LLVM vector
//! operations where both back ends select their packed instructions from them (LLVM 19: a
//! `shufflevector` of two `<4 x i8>` becomes `prmt.b32` on NVPTX and `v_perm_b32` on AMDGPU), and
//! through [`Isa::dot`](crate::isa::Isa::dot) for the hardware dot products, which neither back
//! end forms from a multiply-add chain.

use super::{Bv, LResult, Lowering};
use inkwell::llvm_sys::LLVMOpcode;
use inkwell::types::BasicType;
use inkwell::values::BasicValue;
use kiln_ir::target::DotKind;
use kiln_ir::{DotOp, PackedConvertOp, ScalarType, Type};

impl<'ctx, 'k> Lowering<'ctx, 'k> {
    /// Byte permute: bitcast both words to `<4 x i8>` and shuffle with the selector (bytes 0-3
    /// are `a`'s, 4-7 `b`'s, as `shufflevector` numbers its two operands).
    pub(super) fn perm(&mut self, a: Bv<'ctx>, b: Bv<'ctx>, sel: [u8; 4]) -> LResult<Bv<'ctx>> {
        let bytes = self.ctx.i8_type().vec_type(4);
        let (va, vb) = (
            self.cast(LLVMOpcode::LLVMBitCast, a, bytes.as_basic_type_enum()),
            self.cast(LLVMOpcode::LLVMBitCast, b, bytes.as_basic_type_enum()),
        );
        let mask = inkwell::types::VectorType::const_vector(&sel.map(|s| self.i32c(s as u32)));
        let v = self.b.build_shuffle_vector(
            va.into_vector_value(),
            vb.into_vector_value(),
            mask,
            "",
        )?;
        Ok(self.cast(LLVMOpcode::LLVMBitCast, v.as_basic_value_enum(), self.ctx.i32_type().into()))
    }

    /// A dot product: the integer flavours and the approximate f16 one are the target's
    /// instruction; the exact f16 one is `fma(a0, b0, fma(a1, b1, acc))` in f32 on every target
    /// (the halves widen exactly, and the f32 fma is the `fma` op's).
    pub(super) fn dot(
        &mut self,
        op: DotOp,
        a: Bv<'ctx>,
        b: Bv<'ctx>,
        acc: Bv<'ctx>,
    ) -> LResult<Bv<'ctx>> {
        let kind = match op {
            DotOp::I8 => DotKind::I8,
            DotOp::U8 => DotKind::U8,
            DotOp::I8U8 => DotKind::I8U8,
            DotOp::F16Approx => DotKind::F16,
            DotOp::F16 => {
                let f32t = self.ty(Type::F32);
                let half = |l: &Self, v: Bv<'ctx>, i: u32| -> LResult<Bv<'ctx>> {
                    let e = l.b.build_extract_element(v.into_vector_value(), l.i32c(i), "")?;
                    Ok(l.cast(LLVMOpcode::LLVMFPExt, e, f32t))
                };
                let (a0, a1, b0, b1) =
                    (half(self, a, 0)?, half(self, a, 1)?, half(self, b, 0)?, half(self, b, 1)?);
                let inner = self.fma(a1, b1, acc, Type::F32)?;
                return self.fma(a0, b0, inner, Type::F32);
            }
        };
        let isa = self.isa;
        isa.dot(self, kind, a, b, acc)
    }

    /// A packed conversion, as LLVM vector casts: `fptrunc <2 x float>` (round to nearest even,
    /// as `convert`), a bit-field extract and `sitofp` a byte, and a shift and mask for the nibbles.
    pub(super) fn packed_convert(&mut self, op: PackedConvertOp, x: Bv<'ctx>) -> LResult<Bv<'ctx>> {
        Ok(match op {
            PackedConvertOp::F32x2ToF16x2 => {
                self.cast(LLVMOpcode::LLVMFPTrunc, x, self.ty(Type::vector(ScalarType::F16, 2)))
            }
            PackedConvertOp::I8x4ToF32x4 => {
                // Per byte `(x << (24 - 8i)) >> 24` (arithmetic) then `sitofp i32`: a bit-field
                // extract and one convert a lane on both back ends (`sitofp <4 x i8>` is
                // legalized through i16 and costs twice that).
                let f32t = self.ty(Type::F32);
                let mut v =
                    self.ty(Type::vector(ScalarType::F32, 4)).into_vector_type().get_poison();
                for i in 0..4 {
                    let up =
                        self.b.build_left_shift(x.into_int_value(), self.i32c(24 - 8 * i), "")?;
                    let byte = self.b.build_right_shift(up, self.i32c(24), true, "")?;
                    let f = self.cast(LLVMOpcode::LLVMSIToFP, byte.into(), f32t);
                    v = self.b.build_insert_element(v, f, self.i32c(i), "")?;
                }
                v.into()
            }
            PackedConvertOp::NibblesLow | PackedConvertOp::NibblesHigh => {
                let mut v = x.into_int_value();
                if op == PackedConvertOp::NibblesHigh {
                    v = self.b.build_right_shift(v, self.i32c(4), false, "")?;
                }
                self.b.build_and(v, self.i32c(0x0f0f_0f0f), "")?.into()
            }
        })
    }
}
