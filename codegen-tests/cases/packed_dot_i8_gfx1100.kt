; dot i8: sdot4 is v_dot4_i32_iu8 with both operands signed (neg_lo bits 1,1).
; kernel: packed
; variant: dot_i8
; arch: gfx1100
; check: asm
; implicit-check-not: scratch_load|scratch_store|v_dot
CHECK-LABEL: packed_dot_i8:
CHECK: v_dot4_i32_iu8
CHECK-SAME: neg_lo:[1,1,0]
CHECK: s_endpgm
