; Library kernel attention_prefill_f16_d128/w4g on sm_90 (four waves share each staged K/V
; tile, the softmax in registers, the mask and rescale skips): the kernel issues 96 mma.sync
; m16n8k16 f32.f16.f16.f32, all in the tile loop: 32 for S = Q K^T of the tile's block of 32
; keys, and the 32 of O += P V twice (the branch with O * a and the one that skips it when no
; row's maximum moved); no local memory (230 registers, no spills).
; kernel: attention_prefill_f16_d128
; variant: w4g
; arch: sm_90
; check: asm
; implicit-check-not: mma.sync|.local
CHECK-COUNT-96: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
