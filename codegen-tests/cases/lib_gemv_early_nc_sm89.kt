; Library kernel gemv_q8_0_rp, early twin p1r2u8w2e, on sm_89, which waits for no grid: every
; read-only buffer keeps noalias and so ld.global.nc (the coherent loads are sm_90's rule for
; kernels with early reads).
; kernel: gemv_q8_0_rp
; variant: p1r2u8w2e
; arch: sm_89
; check: asm
; implicit-check-not: ld.global.v4.u32
CHECK-LABEL: .visible .entry gemv_q8_0_rp_p1r2u8w2e(
CHECK: ld.global.nc.v4.u32
