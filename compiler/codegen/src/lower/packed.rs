//! Ops on the four bytes of a `u32`, written once as LLVM vector operations: both back ends
//! select their byte instructions from them (LLVM 19: a `shufflevector` of two `<4 x i8>` becomes
//! `prmt.b32` on NVPTX and `v_perm_b32` on AMDGPU), so there is no vendor code here.

use super::{Bv, LResult, Lowering};
use inkwell::llvm_sys::LLVMOpcode;
use inkwell::types::BasicType;
use inkwell::values::BasicValue;

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
}
