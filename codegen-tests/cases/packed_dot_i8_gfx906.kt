; dot i8: llvm.amdgcn.sdot4, clamp off.
; kernel: packed
; variant: dot_i8
; arch: gfx906
; check: asm
; implicit-check-not: scratch_load|scratch_store|v_dot
CHECK-LABEL: packed_dot_i8:
CHECK: v_dot4_i32_i8 v
CHECK: s_endpgm
