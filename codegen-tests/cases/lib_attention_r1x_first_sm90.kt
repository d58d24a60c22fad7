; Library kernel attention_decode_rope_q8_0_d64_q8_1s, variant r1x, on sm_90: the split's first
; chunk (its K staging words, its V quants and the V blocks' scales) is asked for before q's
; loads, so the three latencies overlap (docs/attention.md, "`r1x`'s first chunk before q").
; kernel: attention_decode_rope_q8_0_d64_q8_1s
; variant: r1x
; arch: sm_90
; check: asm
CHECK-LABEL: .visible .entry attention_decode_rope_q8_0_d64_q8_1s_r1x(
CHECK-NOT: ld.global.nc.f32
CHECK: ld.global.nc.u32
CHECK-NOT: ld.global.nc.f32
CHECK: ld.global.nc.u16
CHECK: ld.global.nc.f32
CHECK: bar.sync
