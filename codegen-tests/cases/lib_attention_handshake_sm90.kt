; Library kernel attention_decode_q8_0_d64, variant r4t256, on sm_90: the last-workgroup handshake
; (common::last_of_workgroups) has no fence before lane 0's one atom.acq_rel.gpu (a fence in every
; lane before the barrier and lane 0's own before the atomic were two more MEMBAR.ALL.GPU on its
; path), and a fence in every lane of the last workgroup after it (each wave acquires).
; kernel: attention_decode_q8_0_d64
; variant: r4t256
; arch: sm_90
; check: asm
CHECK-LABEL: .visible .entry attention_decode_q8_0_d64_r4t256(
CHECK-NOT: fence.acq_rel.gpu
CHECK: atom.acq_rel.gpu.global.add.u32
CHECK-NOT: fence.acq_rel.gpu
CHECK: bar.sync 0;
CHECK: fence.acq_rel.gpu;
