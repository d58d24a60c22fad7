; LDS-only barrier on gfx9: wait for the LDS write, s_barrier, no L1 invalidation.
; kernel: workgroup_sum
; arch: gfx906
; check: asm
CHECK: ds_write_b32
CHECK: s_waitcnt lgkmcnt(0)
CHECK-NEXT: s_barrier
CHECK-NOT: buffer_wbinvl1
CHECK-NOT: s_waitcnt vmcnt(0)
CHECK: ds_read_b32
