; LDS-only barrier on gfx11: s_waitcnt lgkmcnt(0); s_barrier, and no buffer_gl0_inv after it.
; kernel: workgroup_sum
; arch: gfx1100
; check: asm
CHECK: ds_store_b32
CHECK-NOT: buffer_gl0_inv
CHECK: s_waitcnt lgkmcnt(0)
CHECK-NEXT: s_barrier
CHECK: ds_load_b32
CHECK-NOT: buffer_gl0_inv
