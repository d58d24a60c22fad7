; tsum<8> in a wave of 64 on gfx9: 7+3 = 10 exchanges: 4 ds_bpermute (32), 2+1+1 ds_swizzle
; (16, 8, 4), DPP quad_perm (2, 1).
; kernel: tsum_tokens
; variant: p8
; arch: gfx906
; check: asm
; implicit-check-not: ds_bpermute_b32|ds_swizzle|ds_write
CHECK-COUNT-4: ds_bpermute_b32
CHECK-COUNT-2: swizzle(SWAP,16)
CHECK: swizzle(SWAP,8)
CHECK: swizzle(SWAP,4)
CHECK: quad_perm:[2,3,0,1]
CHECK: quad_perm:[1,0,3,2]
