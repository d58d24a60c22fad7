; NVIDIA sm_90: u8 x i8 selects the u8.s8 form of mma.sync m16n8k32.
; kernel: mma_tile
; variant: m16n8k32_u8
; arch: sm_90
; check: asm
; implicit-check-not: mma.sync|.local
CHECK-LABEL: .visible .entry mma_i8(
CHECK: mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32
CHECK: mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32
