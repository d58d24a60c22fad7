; dot i8u8: llvm.amdgcn.sudot4, a signed and b unsigned (neg_lo bits 1,0).
; kernel: packed
; variant: dot_i8u8
; arch: gfx1201
; check: asm
; implicit-check-not: scratch_load|scratch_store|v_dot
CHECK-LABEL: packed_dot_i8u8:
CHECK: v_dot4_i32_iu8
CHECK-SAME: neg_lo:[1,0,0]
CHECK: s_endpgm
