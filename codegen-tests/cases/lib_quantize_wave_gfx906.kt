; Library kernel quantize_q8_0_f32/wave on gfx906 (wave 64): the cross-lane amax over the 8 lanes of
; a block is ds_swizzle (offset 4) then DPP quad_perm (2, 1), in the butterfly's descending order,
; with no LDS allocation and no scratch (no scratch instruction anywhere, no private segment).
; kernel: quantize_q8_0_f32
; variant: wave
; arch: gfx906
; check: asm
; implicit-check-not: scratch_load|scratch_store|buffer_store_dword
CHECK-LABEL: quantize_q8_0_f32_wave:
CHECK: offset:swizzle(SWAP,4)
CHECK: quad_perm:[2,3,0,1]
CHECK: quad_perm:[1,0,3,2]
CHECK: s_endpgm
CHECK-LABEL: .amdhsa_kernel quantize_q8_0_f32_wave
CHECK-NEXT: .amdhsa_group_segment_fixed_size 0
CHECK-NEXT: .amdhsa_private_segment_fixed_size 0
