; RDNA2 wave 64 has no cross-half exchange: xor 32 is readlane/writelane through SGPRs, not LDS.
; kernel: wave_sum
; arch: gfx1030
; wave: 64
; check: asm
; implicit-check-not: ds_
CHECK-COUNT-64: v_writelane_b32
CHECK: v_permlanex16_b32
CHECK: row_xmask:1
