; Library kernel attention_prefill_f16_d128/w4qs on sm_90 (four waves share each staged K/V
; tile, the softmax in registers): each trip of the tile loop (label $L__BB0_4, its barrier, to
; the branch back to it) issues 64 mma.sync m16n8k16 f32.f16.f16.f32 for its block of 32
; keys: 32 for S = Q K^T (four 8-key tiles x 8 dim steps), then 32 for O += P V (16 8-dim
; tiles of O x two 16-key steps); none outside the loop, no local memory (166 registers, no
; spills).
; kernel: attention_prefill_f16_d128
; variant: w4qs
; arch: sm_90
; check: asm
; implicit-check-not: mma.sync|.local
CHECK: bar.sync
CHECK-COUNT-64: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
CHECK: $L__BB0_4;
CHECK: $L__BB0_4:
CHECK-NEXT: bar.sync
