; CDNA2 (gfx90a, wave 64), op_zoo's cross-lane ops and atomics in the ISA: a 16-byte global load;
; shuffle up, down and idx as ds_bpermute (the fourth is the wave reduction's 32); broadcast as
; v_readlane of lane 1; ballot as the compare mask in vcc; the i64 xor-1 shuffle as DPP quad_perm
; on both halves. Device-scope acq_rel atomic: wait for stores before, glc for the old value,
; buffer_wbinvl1_vol after (gfx90a's acquire; no gfx942 sc1 cache maintenance).
; kernel: op_zoo
; arch: gfx90a
; check: asm
; implicit-check-not: ds_bpermute_b32|scratch_load|scratch_store|buffer_wbl2|buffer_inv
CHECK-LABEL: op_zoo:
CHECK: global_load_dwordx4 v[
CHECK: ds_bpermute_b32
CHECK: ds_bpermute_b32
CHECK: ds_bpermute_b32
CHECK: v_readlane_b32 s0, v5, 1
CHECK-NEXT: v_mov_b32_dpp
CHECK-SAME: quad_perm:[1,0,3,2]
CHECK-NEXT: v_cmp_gt_f32_e32 vcc, s0,
CHECK: v_mov_b32_dpp
CHECK-SAME: quad_perm:[1,0,3,2]
CHECK: s_waitcnt vmcnt(0)
CHECK-NEXT: global_atomic_add
CHECK-SAME: glc
CHECK-NEXT: s_waitcnt vmcnt(0)
CHECK-NEXT: buffer_wbinvl1_vol
CHECK: global_atomic_umax
CHECK-SAME: offset:4 glc
CHECK: ds_bpermute_b32
CHECK: buffer_wbinvl1_vol
CHECK: ds_swizzle_b32
CHECK: s_endpgm
CHECK-LABEL: .amdhsa_kernel op_zoo
