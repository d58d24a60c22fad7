; kernel: workgroup_sum
; variant: all
; arch: gfx1100
; check: asm
CHECK: ds_store_b32
CHECK: s_waitcnt lgkmcnt(0)
CHECK-NEXT: s_barrier
CHECK-NEXT: buffer_gl0_inv
