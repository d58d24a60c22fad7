; RDNA2 wave 32 reduction: v_permlanex16 for 16, DPP row_xmask for 8..1, no LDS traffic.
; kernel: wave_sum
; arch: gfx1030
; check: asm
; implicit-check-not: ds_
CHECK: v_permlanex16_b32
CHECK: row_xmask:8
CHECK: row_xmask:4
CHECK: row_xmask:2
CHECK: row_xmask:1
