; gfx1201: the i8 tile is two gfx12 v_wmma_i32_16x16x16_iu8, A/B 2 VGPRs (8 bytes), signed; no scratch.
; kernel: mma_tile
; variant: gfx12_iu8
; arch: gfx1201
; check: asm
; implicit-check-not: v_wmma|scratch_load|scratch_store|buffer_store|buffer_load
CHECK-LABEL: mma_i8:
CHECK: v_wmma_i32_16x16x16_iu8 v[0:7], v[8:9], v[10:11], v[0:7] neg_lo:[1,1,0]
CHECK: v_wmma_i32_16x16x16_iu8 v[0:7], v[12:13], v[14:15], v[0:7] neg_lo:[1,1,0]
