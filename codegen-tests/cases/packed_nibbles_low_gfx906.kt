; nibbles_low: one and with 0x0f0f0f0f.
; kernel: packed
; variant: nibbles_low
; arch: gfx906
; check: asm
; implicit-check-not: scratch_load|scratch_store|v_lshr
CHECK-LABEL: packed_nibbles_low:
CHECK: v_and_b32_e32
CHECK-SAME: 0xf0f0f0f
CHECK: s_endpgm
