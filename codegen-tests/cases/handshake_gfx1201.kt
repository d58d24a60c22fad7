; The last-workgroup handshake's arrival on gfx1201: the workgroup release before the barrier
; writes back and waits for the stores, so lane 0's device atomic after it publishes every
; wave's store.
; kernel: handshake
; arch: gfx1201
; check: asm
CHECK: global_store_b32
CHECK-NOT: s_barrier_signal
CHECK: s_wait_storecnt 0x0
CHECK-NOT: global_store
CHECK: s_barrier_signal
CHECK: global_atomic_add_u32
