; tsum<8> in a wave of 32: P-1+log2(W/P) = 7+2 = 9 exchanges: 4 permlanex16 (offset 16),
; then DPP row_xmask 8, 8, 4, 2, 1. No LDS.
; kernel: tsum_tokens
; variant: p8
; arch: gfx1201
; check: asm
; implicit-check-not: ds_|v_permlanex16_b32
CHECK-COUNT-4: v_permlanex16_b32
