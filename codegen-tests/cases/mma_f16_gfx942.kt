; gfx942: the f16 tile is two v_mfma_f32_16x16x16_f16; no scratch.
; kernel: mma_tile
; variant: mfma_f16
; arch: gfx942
; check: asm
; implicit-check-not: v_mfma|scratch_load|scratch_store|buffer_store|buffer_load
CHECK-LABEL: mma_f16:
CHECK: v_mfma_f32_16x16x16_f16 a[0:3], v[
CHECK-SAME: a[0:3]
CHECK: v_mfma_f32_16x16x16_f16 a[0:3], v[
CHECK-SAME: a[0:3]
