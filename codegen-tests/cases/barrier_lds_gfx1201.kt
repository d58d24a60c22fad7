; LDS-only barrier on gfx12: split wait counter and split barrier, no global_wb / global_inv.
; kernel: workgroup_sum
; arch: gfx1201
; check: asm
CHECK-NOT: global_wb
CHECK: ds_store_b32
CHECK-NOT: global_wb
CHECK: s_wait_dscnt 0x0
CHECK-NEXT: s_barrier_signal -1
CHECK-NEXT: s_barrier_wait -1
CHECK: ds_load_b32
CHECK-NOT: global_inv
