; kernel: workgroup_sum
; variant: all
; arch: sm_90
; check: asm
CHECK: st.shared.f32
CHECK: bar.sync 0;
CHECK: ld.shared.f32
