; gfx9 wave 64 reduction: ds_bpermute for 32, ds_swizzle xor for 16..4, DPP quad_perm for 2 and 1.
; kernel: wave_sum
; arch: gfx906
; check: asm
; implicit-check-not: ds_bpermute_b32|ds_write
CHECK: ds_bpermute_b32
CHECK: offset:swizzle(SWAP,16)
CHECK: offset:swizzle(SWAP,8)
CHECK: offset:swizzle(SWAP,4)
CHECK: quad_perm:[2,3,0,1]
CHECK: quad_perm:[1,0,3,2]
