; The DPP half of tsum<8> on gfx1201: exactly 5 row_xmask exchanges (2 x 8, 4, 2, 1).
; kernel: tsum_tokens
; variant: p8
; arch: gfx1201
; check: asm
CHECK-COUNT-2: row_xmask:8
CHECK: row_xmask:4
CHECK: row_xmask:2
CHECK: row_xmask:1
CHECK-NOT: row_xmask
