; f32x2 -> f16x2: two round-to-nearest-even converts packed (never v_cvt_pkrtz, which truncates).
; kernel: packed
; variant: cvt_f16x2
; arch: gfx1201
; check: asm
; implicit-check-not: scratch_load|scratch_store|v_cvt_pkrtz|v_cvt_f16_f32
CHECK-LABEL: packed_cvt_f16x2:
CHECK: v_cvt_f16_f32
CHECK: v_cvt_f16_f32
CHECK: v_pack_b32_f16
CHECK: s_endpgm
