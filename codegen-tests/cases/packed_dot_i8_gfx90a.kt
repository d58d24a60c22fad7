; dot i8: sdot4 selects the accumulating VOP2 form on CDNA2.
; kernel: packed
; variant: dot_i8
; arch: gfx90a
; check: asm
; implicit-check-not: scratch_load|scratch_store|v_dot
CHECK-LABEL: packed_dot_i8:
CHECK: v_dot4c_i32_i8
CHECK: s_endpgm
