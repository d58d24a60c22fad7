; gfx90a: the f16 tile is two v_mfma_f32_16x16x16f16 (A/B 2 VGPRs of 4 halves); no scratch.
; kernel: mma_tile
; variant: mfma_f16
; arch: gfx90a
; check: asm
; implicit-check-not: v_mfma|scratch_load|scratch_store|buffer_store|buffer_load
CHECK-LABEL: mma_f16:
CHECK: v_mfma_f32_16x16x16f16 a[0:3], v[
CHECK-SAME: a[0:3]
CHECK: v_mfma_f32_16x16x16f16 a[0:3], v[
CHECK-SAME: a[0:3]
