; dot i8: inline PTX dp4a (LLVM 19 has no dp4a intrinsic).
; kernel: packed
; variant: dot_i8
; arch: sm_90
; check: asm
; implicit-check-not: ld.local|st.local|dp4a
CHECK-LABEL: .entry packed_dot_i8(
CHECK: dp4a.s32.s32
CHECK: ret;
