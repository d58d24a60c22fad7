; CDNA3 (gfx942, wave 64), every cross-lane flavour and the atomics of op_zoo in the ISA: a 16-byte
; global load; shuffle up, down and idx as ds_bpermute (the fourth is the wave reduction's 32);
; broadcast as v_readlane of lane 1; ballot as the 64-bit compare mask in vcc; the i64 xor-1
; shuffle as DPP quad_perm. Device-scope acq_rel atomic: buffer_wbl2 sc1 before, buffer_inv sc1
; after (gfx942's cache maintenance), with sc0 to return the old value; the workgroup-scope max
; needs no cache maintenance.
; kernel: op_zoo
; arch: gfx942
; check: asm
; implicit-check-not: ds_bpermute_b32|scratch_load|scratch_store|buffer_wbinvl1
CHECK-LABEL: op_zoo:
CHECK: global_load_dwordx4 v[
CHECK: ds_bpermute_b32
CHECK: ds_bpermute_b32
CHECK: ds_bpermute_b32
CHECK: v_readlane_b32 s0, v5, 1
CHECK: v_cmp_gt_f32_e32 vcc,
CHECK: v_mov_b32_dpp
CHECK-SAME: quad_perm:[1,0,3,2]
CHECK: v_lshl_add_u64 v[10:11], vcc, 0,
CHECK: buffer_wbl2 sc1
CHECK-NEXT: s_waitcnt vmcnt(0)
CHECK-NEXT: global_atomic_add
CHECK-SAME: sc0
CHECK-NEXT: s_waitcnt vmcnt(0)
CHECK-NEXT: buffer_inv sc1
CHECK: global_atomic_umax
CHECK-SAME: offset:4 sc0
CHECK-NOT: buffer_inv
CHECK: ds_bpermute_b32
CHECK-NEXT: buffer_wbl2 sc1
CHECK: buffer_inv sc1
CHECK: ds_swizzle_b32
CHECK: s_endpgm
CHECK-LABEL: .amdhsa_kernel op_zoo
CHECK: .amdhsa_next_free_vgpr
