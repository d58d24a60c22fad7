; gfx1100: the f16 tile is two v_wmma_f32_16x16x16_f16 with A/B 8 VGPRs (16 halves); no scratch.
; kernel: mma_tile
; variant: gfx11_f16
; arch: gfx1100
; check: asm
; implicit-check-not: v_wmma|scratch_load|scratch_store|buffer_store|buffer_load
CHECK-LABEL: mma_f16:
CHECK: v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]
CHECK: v_wmma_f32_16x16x16_f16 v[0:7], v[24:31], v[32:39], v[0:7]
