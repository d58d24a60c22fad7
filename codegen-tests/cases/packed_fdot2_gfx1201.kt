; dot f16 (exact): two f32 fma, the high pair first; AMD folds the exact f16 widening into v_fma_mix_f32.
; kernel: packed
; variant: fdot2
; arch: gfx1201
; check: asm
; implicit-check-not: scratch_load|scratch_store|v_dot|v_fma_mix_f32
CHECK-LABEL: packed_fdot2:
CHECK: v_fma_mix_f32
CHECK-SAME: op_sel:[1,1,0]
CHECK: v_fma_mix_f32
CHECK: s_endpgm
