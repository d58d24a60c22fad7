; gfx1201: the f16 tile is two v_wmma_f32_16x16x16_f16 with A/B 4 VGPRs (8 halves); no scratch.
; kernel: mma_tile
; variant: gfx12_f16
; arch: gfx1201
; check: asm
; implicit-check-not: v_wmma|scratch_load|scratch_store|buffer_store|buffer_load
CHECK-LABEL: mma_f16:
CHECK: v_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], v[0:7]
CHECK: v_wmma_f32_16x16x16_f16 v[0:7], v[16:19], v[20:23], v[0:7]
