; nibbles_low: one and with 0x0f0f0f0f.
; kernel: packed
; variant: nibbles_low
; arch: sm_90
; check: asm
; implicit-check-not: ld.local|st.local|shr.u32
CHECK-LABEL: .entry packed_nibbles_low(
CHECK: and.b32
CHECK-SAME: 252645135
CHECK: ret;
