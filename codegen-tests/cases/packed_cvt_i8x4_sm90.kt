; i8x4 -> f32x4: a signed bit-field extract and cvt.rn.f32.s32 a byte.
; kernel: packed
; variant: cvt_i8x4
; arch: sm_90
; check: asm
; implicit-check-not: ld.local|st.local|cvt.rn.f32
CHECK-LABEL: .entry packed_cvt_i8x4(
CHECK-COUNT-4: cvt.rn.f32.s32
CHECK: ret;
