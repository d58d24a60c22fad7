; gfx1100: u8 x i8 clears A's sign bit (neg_lo:[0,1,0]).
; kernel: mma_tile
; variant: gfx11_iu8_u8
; arch: gfx1100
; check: asm
; implicit-check-not: v_wmma|scratch_load|scratch_store|buffer_store|buffer_load
CHECK-LABEL: mma_i8:
CHECK: v_wmma_i32_16x16x16_iu8
CHECK-SAME: neg_lo:[0,1,0]
CHECK: v_wmma_i32_16x16x16_iu8
CHECK-SAME: neg_lo:[0,1,0]
