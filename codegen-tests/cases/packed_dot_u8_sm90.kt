; dot u8: inline PTX dp4a.u32.u32.
; kernel: packed
; variant: dot_u8
; arch: sm_90
; check: asm
; implicit-check-not: ld.local|st.local|dp4a
CHECK-LABEL: .entry packed_dot_u8(
CHECK: dp4a.u32.u32
CHECK: ret;
