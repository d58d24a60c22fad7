; i8x4 -> f32x4: v_bfe_i32 and v_cvt_f32_i32 a byte (no SDWA on gfx11+).
; kernel: packed
; variant: cvt_i8x4
; arch: gfx1100
; check: asm
; implicit-check-not: scratch_load|scratch_store|v_cvt
CHECK-LABEL: packed_cvt_i8x4:
CHECK: v_bfe_i32
CHECK-COUNT-4: v_cvt_f32_i32
CHECK: s_endpgm
