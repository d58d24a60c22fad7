; Q8_0 quants on gfx906: the HSA ABI runs in unaligned access mode (LLVM sets
; unaligned-access-mode for amdhsa), so a 2-byte aligned 16-byte global load is one
; global_load_dwordx4 with the SGPR base (32-bit index), and no scratch.
; kernel: q8_0_quants
; arch: gfx906
; check: asm
; implicit-check-not: global_load|global_store|scratch_load|scratch_store|buffer_
CHECK-LABEL: q8_0_quants:
CHECK: global_load_dwordx4
CHECK-SAME: s[0:1]
CHECK: global_load_dwordx4
CHECK-SAME: s[0:1]
CHECK: global_store_dwordx4
CHECK: global_store_dwordx4
CHECK-SAME: offset:16
