; Library kernel attention_prefill_q8_0_d128/baseline on gfx942: the key-block loop (from the
; loop label to its backward branch) issues every v_mfma_f32_16x16x16_f16 of the kernel: 8 for
; O += P V (one a 16-dim tile of O, accumulators in AGPRs; the loop's rotated tail) and 8 for
; S = Q K^T; none outside the loop, and no scratch.
; kernel: attention_prefill_q8_0_d128
; variant: baseline
; arch: gfx942
; check: asm
; implicit-check-not: v_mfma|scratch_
CHECK: s_branch .LBB0_3
CHECK-NEXT: .LBB0_2:
CHECK-COUNT-8: v_mfma_f32_16x16x16_f16
CHECK: .LBB0_3:
CHECK-COUNT-8: v_mfma_f32_16x16x16_f16
CHECK: s_branch .LBB0_2
