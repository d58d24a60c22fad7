; NVIDIA sm_75: the f16 shape is mma.sync m16n8k8 (4 f32 D, 2 b32 A, 1 b32 B, 4 f32 C); no local memory.
; kernel: mma_tile
; variant: m16n8k8
; arch: sm_75
; check: asm
; implicit-check-not: mma.sync|.local
CHECK-LABEL: .visible .entry mma_f16(
CHECK: mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f13, %f14, %f15, %f16}, {%r1, %r2}, {%r3}, {%f5, %f6, %f7, %f8};
CHECK: mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f
CHECK-SAME: }, {%f13, %f14, %f15, %f16};
