; gfx942 (wave 64): the i8 tile is two v_mfma_i32_16x16x32_i8 (A/B 2 VGPRs of 8 bytes); no scratch.
; kernel: mma_tile
; variant: mfma_i8k32
; arch: gfx942
; check: asm
; implicit-check-not: v_mfma|scratch_load|scratch_store|buffer_store|buffer_load
CHECK-LABEL: mma_i8:
CHECK: v_mfma_i32_16x16x32_i8 a[0:3], v[
CHECK-SAME: a[0:3]
CHECK: v_mfma_i32_16x16x32_i8 a[0:3], v[
CHECK-SAME: a[0:3]
