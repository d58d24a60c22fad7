; dot i8u8: inline PTX dp4a with a signed, b unsigned.
; kernel: packed
; variant: dot_i8u8
; arch: sm_90
; check: asm
; implicit-check-not: ld.local|st.local|dp4a
CHECK-LABEL: .entry packed_dot_i8u8(
CHECK: dp4a.s32.u32
CHECK: ret;
