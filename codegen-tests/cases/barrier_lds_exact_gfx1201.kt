; The LDS-only barrier on gfx12 with nothing else in flight: exactly s_wait_dscnt 0x0;
; s_barrier_signal -1; s_barrier_wait -1.
; kernel: workgroup_sum
; variant: lds
; arch: gfx1201
; check: asm
CHECK: ds_store_b32
CHECK-NOT: global_wb
CHECK: s_wait_dscnt 0x0
CHECK-NEXT: s_barrier_signal -1
CHECK-NEXT: s_barrier_wait -1
CHECK-NOT: global_inv
CHECK: ds_load_b32
CHECK-NOT: global_inv
