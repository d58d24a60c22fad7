; f32x2 -> f16x2: two cvt.rn.f16.f32 and a mov into one b32.
; kernel: packed
; variant: cvt_f16x2
; arch: sm_90
; check: asm
; implicit-check-not: ld.local|st.local|cvt.rz|cvt.rn
CHECK-LABEL: .entry packed_cvt_f16x2(
CHECK: cvt.rn.f16.f32
CHECK: cvt.rn.f16.f32
CHECK: mov.b32
CHECK: ret;
