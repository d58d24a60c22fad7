; tsum<8> on NVIDIA: 9 shfl.sync.bfly (4 at 16, 2 at 8, then 4, 2, 1).
; kernel: tsum_tokens
; variant: p8
; arch: sm_90
; check: asm
; implicit-check-not: shfl.sync
CHECK-COUNT-9: shfl.sync.bfly.b32
