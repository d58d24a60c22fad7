; NVIDIA sm_75: the int8 shape is mma.sync m8n8k16 (2 s32 D, 1 b32 A, 1 b32 B, 2 s32 C); no local memory.
; kernel: mma_tile
; variant: m8n8k16
; arch: sm_75
; check: asm
; implicit-check-not: mma.sync|.local
CHECK-LABEL: .visible .entry mma_i8(
CHECK: mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%r11, %r12}, {%r3}, {%r4}, {%r5, %r6};
CHECK: mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%r
CHECK-SAME: }, {%r11, %r12};
