; Library kernel gemv_q8_0_rp, early twin p1r2u8w2e, on sm_90: its weights (the early reads) are
; ld.global.nc before griddepcontrol.wait; its activations, which the grid before may still be
; writing, are coherent ld.global after it (ptxas moves .nc loads above the wait: docs/gemv.md,
; "The activations stay after the wait").
; kernel: gemv_q8_0_rp
; variant: p1r2u8w2e
; arch: sm_90
; check: asm
CHECK-LABEL: .visible .entry gemv_q8_0_rp_p1r2u8w2e(
CHECK: ld.global.nc.v4.u32
CHECK-NOT: ld.global.v4.u32
CHECK: griddepcontrol.wait;
CHECK: ld.global.v4.u32
