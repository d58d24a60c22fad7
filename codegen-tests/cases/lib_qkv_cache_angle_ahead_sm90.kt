; Library kernel gemv_q8_0_rp_qkv_cache_norm, early twin p1e, on sm_90: K's RoPE angle of the
; first pass (ln, the division, exp, sin/cos) is computed before griddepcontrol.wait and held
; there by the prefetch that depends on its bits; without the hold LLVM sank it to the cache
; epilogue, after the block loop (docs/gemv.md, "After the wait").
; kernel: gemv_q8_0_rp_qkv_cache_norm
; variant: p1e
; arch: sm_90
; check: asm
CHECK-LABEL: .visible .entry gemv_q8_0_rp_qkv_cache_norm_p1e(
CHECK: div.rn.f32
CHECK: div.rn.f32
CHECK: prefetch.global.L2
CHECK: griddepcontrol.wait;
