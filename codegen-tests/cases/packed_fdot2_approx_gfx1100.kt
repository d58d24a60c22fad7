; dot f16_approx: fdot2 selects v_dot2acc on gfx11.
; kernel: packed
; variant: fdot2_approx
; arch: gfx1100
; check: asm
; implicit-check-not: scratch_load|scratch_store|v_dot|v_fma
CHECK-LABEL: packed_fdot2_approx:
CHECK: v_dot2acc_f32_f16
CHECK: s_endpgm
