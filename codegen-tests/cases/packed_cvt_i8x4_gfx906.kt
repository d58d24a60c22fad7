; i8x4 -> f32x4: one v_cvt_f32_i32 a byte, the sign extension folded into SDWA byte selects.
; kernel: packed
; variant: cvt_i8x4
; arch: gfx906
; check: asm
; implicit-check-not: scratch_load|scratch_store|v_cvt
CHECK-LABEL: packed_cvt_i8x4:
CHECK: v_cvt_f32_i32_sdwa
CHECK-SAME: src0_sel:BYTE_0
CHECK: src0_sel:BYTE_1
CHECK: src0_sel:BYTE_2
CHECK: src0_sel:BYTE_3
CHECK: s_endpgm
