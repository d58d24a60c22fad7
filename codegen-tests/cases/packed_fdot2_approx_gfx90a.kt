; dot f16_approx: fdot2 selects the accumulating form on CDNA2.
; kernel: packed
; variant: fdot2_approx
; arch: gfx90a
; check: asm
; implicit-check-not: scratch_load|scratch_store|v_dot|v_fma
CHECK-LABEL: packed_fdot2_approx:
CHECK: v_dot2c_f32_f16
CHECK: s_endpgm
