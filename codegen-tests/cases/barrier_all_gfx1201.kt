; A full barrier keeps the workgroup fences: global write-back before, global invalidate after.
; kernel: workgroup_sum
; variant: all
; arch: gfx1201
; check: asm
CHECK: ds_store_b32
CHECK: global_wb scope:SCOPE_SE
CHECK-NEXT: s_wait_dscnt 0x0
CHECK-NEXT: s_barrier_signal -1
CHECK-NEXT: s_barrier_wait -1
CHECK-NEXT: global_inv scope:SCOPE_SE
