; perm: one prmt.b32 from the shared shufflevector (selector [1,6,3,4] = 0x4361).
; kernel: packed
; variant: perm
; arch: sm_90
; check: asm
; implicit-check-not: ld.local|st.local|prmt
CHECK-LABEL: .entry packed_perm(
CHECK: prmt.b32
CHECK-SAME: 17249;
CHECK: ret;
