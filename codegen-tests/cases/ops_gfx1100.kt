; RDNA3 (gfx1100, wave 32), op_zoo's cross-lane ops and atomics in the ISA: a 16-byte global load
; (b128); shuffle up, down and idx as ds_bpermute; broadcast as v_readlane of lane 1; ballot as the
; 32-bit compare mask in vcc_lo; the i64 xor-1 shuffle as DPP row_xmask:1; the wave reduction
; without LDS (permlanex16, then DPP). Device-scope acq_rel atomic: wait for stores, glc,
; invalidate gl1 and gl0; the workgroup-scope max invalidates gl0 only.
; kernel: op_zoo
; arch: gfx1100
; check: asm
; implicit-check-not: ds_bpermute_b32|scratch_load|scratch_store
CHECK-LABEL: op_zoo:
CHECK: global_load_b128 v[
CHECK: ds_bpermute_b32
CHECK: ds_bpermute_b32
CHECK: ds_bpermute_b32
CHECK: v_readlane_b32 s0, v6, 1
CHECK: v_mov_b32_dpp
CHECK-SAME: row_xmask:1
CHECK: v_cmp_gt_f32_e32 vcc_lo, s0,
CHECK: s_waitcnt_vscnt null, 0x0
CHECK-NEXT: global_atomic_add_u32
CHECK-SAME: glc
CHECK-NEXT: s_waitcnt vmcnt(0)
CHECK-NEXT: buffer_gl1_inv
CHECK-NEXT: buffer_gl0_inv
CHECK: s_waitcnt_vscnt null, 0x0
CHECK-NEXT: global_atomic_max_u32
CHECK-SAME: offset:4 glc
CHECK-NEXT: s_waitcnt vmcnt(0)
CHECK-NEXT: buffer_gl0_inv
CHECK: buffer_gl1_inv
CHECK-NEXT: buffer_gl0_inv
CHECK: v_permlanex16_b32
CHECK: row_xmask:8
CHECK: s_endpgm
