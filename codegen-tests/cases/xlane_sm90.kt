; NVIDIA: shfl.sync.bfly with descending offsets and the full mask.
; kernel: wave_sum
; arch: sm_90
; check: asm
; implicit-check-not: shfl.sync
CHECK: shfl.sync.bfly.b32
CHECK-SAME: , 16, 31, -1;
CHECK: shfl.sync.bfly.b32
CHECK-SAME: , 8, 31, -1;
CHECK: shfl.sync.bfly.b32
CHECK-SAME: , 4, 31, -1;
CHECK: shfl.sync.bfly.b32
CHECK-SAME: , 2, 31, -1;
CHECK: shfl.sync.bfly.b32
CHECK-SAME: , 1, 31, -1;
