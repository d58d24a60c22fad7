; nibbles_high: a shift by 4 and an and with 0x0f0f0f0f.
; kernel: packed
; variant: nibbles_high
; arch: sm_90
; check: asm
; implicit-check-not: ld.local|st.local|prmt
CHECK-LABEL: .entry packed_nibbles_high(
CHECK: shr.u32
CHECK-SAME: 4;
CHECK-NEXT: and.b32
CHECK-SAME: 252645135
CHECK: ret;
