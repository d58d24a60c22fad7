; dot f16_approx: fdot2 is v_dot2_f32_f16 on gfx12.
; kernel: packed
; variant: fdot2_approx
; arch: gfx1201
; check: asm
; implicit-check-not: scratch_load|scratch_store|v_dot|v_fma
CHECK-LABEL: packed_fdot2_approx:
CHECK: v_dot2_f32_f16 v
CHECK: s_endpgm
