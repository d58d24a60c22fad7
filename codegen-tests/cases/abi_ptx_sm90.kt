; kernel: workgroup_sum
; arch: sm_90
; check: asm
CHECK: .version 7.8
CHECK: .target sm_90
CHECK: .visible .entry workgroup_sum(
CHECK-NOT: ntid
