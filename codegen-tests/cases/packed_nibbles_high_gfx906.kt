; nibbles_high: a shift by 4 and an and with 0x0f0f0f0f.
; kernel: packed
; variant: nibbles_high
; arch: gfx906
; check: asm
; implicit-check-not: scratch_load|scratch_store|v_perm
CHECK-LABEL: packed_nibbles_high:
CHECK: v_lshrrev_b32_e32
CHECK-SAME: 4,
CHECK: v_and_b32_e32
CHECK-SAME: 0xf0f0f0f
CHECK: s_endpgm
