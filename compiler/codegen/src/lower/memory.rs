//! Memory: the LDS array and private allocas, element and byte addresses in each address space,
//! and loads and stores at the alignment the op states or its natural one (`i1` is a byte in
//! memory). LLVM is told exactly that alignment, so an access below its natural alignment is
//! split by the back end into what the target can do (narrower loads), never assumed wider. The
//! index is sign- or zero-extended to 64 bits by its type and used in a GEP on the parameter's
//! own pointer, so a 64-bit index keeps the parameter's `noalias` / `readonly` (NVPTX still
//! selects `ld.global.nc`).

use super::{scalar_mem_type, Bv, LResult, LowerError, Lowering, AS_GLOBAL, AS_LDS};
use inkwell::llvm_sys::LLVMOpcode;
use inkwell::module::Linkage;
use inkwell::types::BasicType;
use inkwell::types::IntType;
use inkwell::values::{BasicValue, PointerValue};
use inkwell::AddressSpace as LlvmAs;
use kiln_ir::*;

impl<'ctx, 'k> Lowering<'ctx, 'k> {
    /// LDS as one addrspace(3) array laid out as `Kernel::lds_offsets` says; private arrays as
    /// allocas in the entry block (the alloca address space of the data layout: 5 on AMDGPU).
    pub(super) fn allocate_memory(&mut self) -> LResult<()> {
        let bytes = self.k.lds_bytes();
        if bytes > self.t.lds_per_workgroup {
            return Err(LowerError::Unsupported(format!(
                "{bytes} bytes of LDS (the target allows {})",
                self.t.lds_per_workgroup
            )));
        }
        if bytes > 0 {
            let ty = self.ctx.i8_type().array_type(bytes);
            let g = self.module.add_global(ty, Some(LlvmAs::from(AS_LDS)), "kiln.lds");
            g.set_initializer(&ty.get_poison());
            g.set_linkage(Linkage::Internal);
            g.set_alignment(16);
            self.lds = Some(g);
        }
        for p in self.k.private.values() {
            let ty = scalar_mem_type(self.ctx, p.elem).array_type(p.len);
            let a = self.b.build_alloca(ty, &p.name)?;
            a.as_instruction().map(|i| i.set_alignment(16));
            self.privates.push(a);
        }
        Ok(())
    }

    /// The address of `mem` at `index` (counting `unit`s of an access of `ty`), and its address
    /// space.
    pub(super) fn address(
        &mut self,
        mem: &MemRef,
        index: Value,
        ty: Type,
        unit: IndexUnit,
    ) -> LResult<(PointerValue<'ctx>, u16)> {
        let raw = self.val(index)?.into_int_value();
        let i64t = self.ctx.i64_type();
        let idx = match self.k.ty(index).scalar.bits() {
            64 => raw,
            _ if self.k.ty(index).scalar.is_signed() => self.b.build_int_s_extend(raw, i64t, "")?,
            _ => self.b.build_int_z_extend(raw, i64t, "")?,
        };
        let elem = match unit {
            IndexUnit::Element => scalar_mem_type(self.ctx, ty.scalar),
            IndexUnit::Byte => self.ctx.i8_type().into(),
        };
        let (base, space) = match mem {
            MemRef::Buffer(p) => {
                let v = self.params[p.as_u32() as usize];
                if !v.is_pointer_value() {
                    return Err(LowerError::Invalid(format!(
                        "memory access through scalar parameter {p}"
                    )));
                }
                (v.into_pointer_value(), AS_GLOBAL)
            }
            MemRef::Global(addr) => {
                let a = self.val(*addr)?.into_int_value();
                (
                    self.b.build_int_to_ptr(a, self.ctx.ptr_type(LlvmAs::from(AS_GLOBAL)), "")?,
                    AS_GLOBAL,
                )
            }
            MemRef::Lds(slot) => {
                let g =
                    self.lds.ok_or_else(|| LowerError::Invalid(format!("{slot} without LDS")))?;
                let off = self.k.lds_offsets()[slot.as_u32() as usize];
                // SAFETY: in-bounds offset of a slot inside the LDS array.
                let p = unsafe {
                    self.b.build_in_bounds_gep(
                        self.ctx.i8_type(),
                        g.as_pointer_value(),
                        &[self.i32c(off)],
                        "",
                    )?
                };
                (p, AS_LDS)
            }
            MemRef::Private(slot) => {
                let p = *self
                    .privates
                    .get(slot.as_u32() as usize)
                    .ok_or_else(|| LowerError::Invalid(format!("unknown private array {slot}")))?;
                (p, self.isa.private_address_space())
            }
        };
        // SAFETY: a plain element GEP; out-of-bounds indices are the kernel's (sanitizer-checked) bug.
        let ptr = unsafe { self.b.build_gep(elem, base, &[idx], "")? };
        Ok((ptr, space))
    }

    /// `bytes` (4, 8 or 16) from `src` to `dst` now, as `bytes / 4` 32-bit words aligned to
    /// `bytes` (the synchronous form of an async copy).
    pub(crate) fn copy_now(
        &mut self,
        dst: PointerValue<'ctx>,
        src: PointerValue<'ctx>,
        bytes: u32,
    ) -> LResult<()> {
        let ty = self.ctx.i32_type().vec_type(bytes / 4);
        let v = self.b.build_load(ty, src, "")?;
        if let Some(i) = v.as_instruction_value() {
            let _ = i.set_alignment(bytes);
        }
        let st = self.b.build_store(dst, v)?;
        let _ = st.set_alignment(bytes);
        Ok(())
    }

    pub(super) fn load(
        &mut self,
        mem: &MemRef,
        index: Value,
        ty: Type,
        align: Option<u32>,
        unit: IndexUnit,
    ) -> LResult<Bv<'ctx>> {
        let (ptr, _) = self.address(mem, index, ty, unit)?;
        let bool_scalar = ty.scalar == ScalarType::I1;
        let lty = if bool_scalar { self.ctx.i8_type().into() } else { self.ty(ty) };
        let align = align.unwrap_or(natural_align(ty));
        let v = match self.pieces(ty, align) {
            Some((piece, n)) => {
                let mut acc = piece.vec_type(n).get_poison();
                for k in 0..n {
                    let p = self.byte_offset(ptr, k * align)?;
                    let part = self.b.build_load(piece, p, "")?;
                    if let Some(i) = part.as_instruction_value() {
                        let _ = i.set_alignment(align);
                    }
                    acc = self.b.build_insert_element(
                        acc,
                        part.into_int_value(),
                        self.i32c(k),
                        "",
                    )?;
                }
                self.cast(LLVMOpcode::LLVMBitCast, acc.into(), lty)
            }
            None => {
                let v = self.b.build_load(lty, ptr, "")?;
                if let Some(i) = v.as_instruction_value() {
                    let _ = i.set_alignment(align);
                }
                v
            }
        };
        Ok(if bool_scalar {
            self.cast(LLVMOpcode::LLVMTrunc, v, self.ctx.bool_type().into())
        } else {
            v
        })
    }

    pub(super) fn store(
        &mut self,
        mem: &MemRef,
        index: Value,
        value: Value,
        align: Option<u32>,
        unit: IndexUnit,
    ) -> LResult<()> {
        let ty = self.k.ty(value);
        let (ptr, _) = self.address(mem, index, ty, unit)?;
        let mut v = self.val(value)?;
        if ty.scalar == ScalarType::I1 {
            v = self.cast(LLVMOpcode::LLVMZExt, v, self.ctx.i8_type().into());
        }
        let align = align.unwrap_or(natural_align(ty));
        match self.pieces(ty, align) {
            Some((piece, n)) => {
                let parts = self.cast(LLVMOpcode::LLVMBitCast, v, piece.vec_type(n).into());
                for k in 0..n {
                    let part = self.b.build_extract_element(
                        parts.into_vector_value(),
                        self.i32c(k),
                        "",
                    )?;
                    let p = self.byte_offset(ptr, k * align)?;
                    let st = self.b.build_store(p, part)?;
                    let _ = st.set_alignment(align);
                }
            }
            None => {
                let st = self.b.build_store(ptr, v)?;
                let _ = st.set_alignment(align);
            }
        }
        Ok(())
    }

    /// Where the target splits under-aligned accesses ([`crate::isa::Isa::splits_underaligned_access`])
    /// and `align` is below `ty`'s natural alignment: the piece (an integer of `align` bytes) and
    /// how many make the access. Both are powers of two, so `align` divides the natural
    /// alignment, which divides the size.
    fn pieces(&self, ty: Type, align: u32) -> Option<(IntType<'ctx>, u32)> {
        if !self.isa.splits_underaligned_access() || align >= natural_align(ty) {
            return None;
        }
        let piece = match align {
            1 => self.ctx.i8_type(),
            2 => self.ctx.i16_type(),
            4 => self.ctx.i32_type(),
            _ => self.ctx.i64_type(),
        };
        Some((piece, ty.bytes() / align))
    }

    /// `ptr + bytes`.
    fn byte_offset(&mut self, ptr: PointerValue<'ctx>, bytes: u32) -> LResult<PointerValue<'ctx>> {
        if bytes == 0 {
            return Ok(ptr);
        }
        // SAFETY: a byte offset inside the access being split.
        Ok(unsafe { self.b.build_in_bounds_gep(self.ctx.i8_type(), ptr, &[self.i32c(bytes)], "")? })
    }
}
