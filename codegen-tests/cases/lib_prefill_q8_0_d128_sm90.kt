; Library kernel attention_prefill_q8_0_d128/baseline on sm_90: the key-block loop (label
; $L__BB0_3, and its latch $L__BB0_13, placed before it, whose branch goes back to it) issues
; every mma.sync m16n8k16 f32.f16.f16.f32 of the kernel: 32 for S = Q K^T (four 8-key tiles of
; the 32-key block x 8 dim steps) and 32 for O += P V (16 8-dim tiles of O x the block's two
; 16-key steps); none outside the loop, no local memory.
; kernel: attention_prefill_q8_0_d128
; variant: baseline
; arch: sm_90
; check: asm
; implicit-check-not: mma.sync|.local
CHECK: $L__BB0_13:
CHECK-COUNT-32: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
CHECK: bra $L__BB0_3;
CHECK: $L__BB0_3:
CHECK-COUNT-32: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
CHECK: bra $L__BB0_4;
