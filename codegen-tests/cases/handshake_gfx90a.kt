; The last-workgroup handshake's arrival on gfx90a (wave 64): every lane's store, then `barrier all`
; waits for the wave's vector memory (vmcnt counts stores on gfx9) before s_barrier, so lane 0's
; device atomic after it publishes every wave's store (the IR's rule; LLVM 19's workgroup release
; on gfx90a and gfx942 does not wait by itself).
; kernel: handshake
; arch: gfx90a
; check: asm
CHECK: global_store_dword
CHECK-NOT: s_barrier
CHECK: s_waitcnt vmcnt(0)
CHECK-NOT: global_
CHECK: s_barrier
CHECK: global_atomic_add
