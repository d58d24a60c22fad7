; Library kernel attention_prefill_q8_0_d128/baseline on gfx942: the key-block loop (its header
; .LBB0_2 to the backward s_branch) issues every v_mfma_f32_16x16x16_f16 of the kernel: 8 for
; S = Q K^T (16 dims each, K^T from the LDS-staged block), then 8 for O += P V (one a 16-dim
; tile of O); none outside the loop, and no scratch.
; kernel: attention_prefill_q8_0_d128
; variant: baseline
; arch: gfx942
; check: asm
; implicit-check-not: v_mfma|scratch_
CHECK: .LBB0_2:
CHECK-COUNT-8: v_mfma_f32_16x16x16_f16
CHECK-COUNT-8: v_mfma_f32_16x16x16_f16
CHECK: s_branch .LBB0_2
