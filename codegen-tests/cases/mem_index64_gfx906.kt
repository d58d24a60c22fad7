; A u64 element index on gfx906: global loads and the store with a 64-bit VGPR address (`off`:
; the SGPR-base form takes a 32-bit offset, so a 64-bit index cannot use it), no scratch.
; kernel: index64
; arch: gfx906
; check: asm
; implicit-check-not: global_load|global_store|scratch_load|scratch_store|buffer_
CHECK-LABEL: index64:
CHECK: global_load_dword
CHECK-SAME: ], off
CHECK: global_load_dwordx4
CHECK-SAME: ], off
CHECK: global_store_dword
CHECK-SAME: , off
