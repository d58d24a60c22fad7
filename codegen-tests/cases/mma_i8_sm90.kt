; NVIDIA sm_90: the i8 GEMM tile (2 K steps) is two mma.sync m16n8k32 s8.s8, 4 s32 D, 4 b32 A, 2 b32 B, 4 s32 C registers each, the second's C the first's D; no local memory.
; kernel: mma_tile
; variant: m16n8k32
; arch: sm_90
; check: asm
; implicit-check-not: mma.sync|.local
CHECK-LABEL: .visible .entry mma_i8(
CHECK: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r25, %r26, %r27, %r28}, {%r
CHECK-SAME: }, {%r11, %r12, %r13, %r14};
CHECK: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r
CHECK-SAME: }, {%r25, %r26, %r27, %r28};
