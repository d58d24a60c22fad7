; Both barrier kinds are bar.sync 0 on NVIDIA.
; kernel: workgroup_sum
; arch: sm_90
; check: asm
CHECK: st.shared.f32
CHECK: bar.sync 0;
CHECK-NOT: membar
CHECK: ld.shared.f32
