; dot f16 (exact): two fma.rn.f32 after exact f16 widening.
; kernel: packed
; variant: fdot2
; arch: sm_90
; check: asm
; implicit-check-not: ld.local|st.local|fma.rn
CHECK-LABEL: .entry packed_fdot2(
CHECK: fma.rn.f32
CHECK: fma.rn.f32
CHECK: ret;
