; RDNA3 wave 64: v_permlane64 for 32, then permlanex16 and row_xmask; no LDS.
; kernel: wave_sum
; arch: gfx1100
; wave: 64
; check: asm
; implicit-check-not: ds_
CHECK: v_permlane64_b32
CHECK: v_permlanex16_b32
CHECK: row_xmask:8
CHECK: row_xmask:1
CHECK: .amdhsa_wavefront_size32 0
