; LDS-only barrier on gfx12 in the example kernel: split wait counter and split barrier, no
; global_wb / global_inv. (The s_wait_kmcnt LLVM puts next to s_wait_dscnt waits for a pending
; scalar kernarg load: gfx11's single lgkmcnt(0) covers both.)
; kernel: workgroup_sum
; arch: gfx1201
; check: asm
CHECK: ds_store_b32
CHECK-NOT: global_wb
CHECK: s_wait_dscnt 0x0
CHECK-NOT: global_
CHECK: s_barrier_signal -1
CHECK-NEXT: s_barrier_wait -1
CHECK: ds_load_b32
CHECK-NOT: global_inv
