; dot u8: llvm.amdgcn.udot4, clamp off.
; kernel: packed
; variant: dot_u8
; arch: gfx1100
; check: asm
; implicit-check-not: scratch_load|scratch_store|v_dot
CHECK-LABEL: packed_dot_u8:
CHECK: v_dot4_u32_u8
CHECK: s_endpgm
