; gfx1100 (wave 32): the i8 tile is two v_wmma_i32_16x16x16_iu8 with A and B signed (neg_lo:[1,1,0]), A/B 4 VGPRs (16 bytes, lanes 16-31 the copy), D accumulating in place; no scratch.
; kernel: mma_tile
; variant: gfx11_iu8
; arch: gfx1100
; check: asm
; implicit-check-not: v_wmma|scratch_load|scratch_store|buffer_store|buffer_load
CHECK-LABEL: mma_i8:
CHECK: v_wmma_i32_16x16x16_iu8 v[0:7], v[8:11], v[12:15], v[0:7] neg_lo:[1,1,0]
CHECK: v_wmma_i32_16x16x16_iu8 v[0:7], v[16:19], v[20:23], v[0:7] neg_lo:[1,1,0]
