; Library kernel attention_prefill_q8_0_d128/baseline on sm_90: the key-block loop (label
; $L__BB0_5 to the branch back to it) issues every mma.sync m16n8k16 f32.f16.f16.f32 of the
; kernel: 16 for S = Q K^T (two 8-key halves of the block x 8 dim steps), then 16 for
; O += P V (one a 8-dim tile of O); none outside the loop, no local memory.
; kernel: attention_prefill_q8_0_d128
; variant: baseline
; arch: sm_90
; check: asm
; implicit-check-not: mma.sync|.local
CHECK: $L__BB0_5:
CHECK-COUNT-16: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
CHECK: $L__BB0_3:
CHECK-COUNT-16: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
CHECK: $L__BB0_5;
