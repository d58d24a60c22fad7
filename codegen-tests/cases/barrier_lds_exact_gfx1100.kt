; kernel: workgroup_sum
; variant: lds
; arch: gfx1100
; check: asm
CHECK: ds_store_b32
CHECK-NOT: buffer_gl0_inv
CHECK: s_waitcnt lgkmcnt(0)
CHECK-NEXT: s_barrier
CHECK-NOT: buffer_gl0_inv
CHECK: ds_load_b32
CHECK-NOT: buffer_gl0_inv
