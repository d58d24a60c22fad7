; The last-workgroup handshake's arrival on gfx1100 (WGP mode): the workgroup release before
; s_barrier waits for the stores (vscnt), so lane 0's device atomic after it publishes every
; wave's store.
; kernel: handshake
; arch: gfx1100
; check: asm
CHECK: global_store_b32
CHECK-NOT: s_barrier
CHECK: s_waitcnt_vscnt null, 0x0
CHECK-NOT: global_
CHECK: s_barrier
CHECK: global_atomic_add_u32
