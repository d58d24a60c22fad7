; perm: one v_perm_b32 from the shared shufflevector (selector [1,6,3,4] = 0x07020501 in v_perm's numbering).
; kernel: packed
; variant: perm
; arch: gfx1100
; check: asm
; implicit-check-not: scratch_load|scratch_store|v_perm_b32
CHECK-LABEL: packed_perm:
CHECK: v_perm_b32
CHECK: s_endpgm
