; Library kernel gemv_q4_1_rp_res, early twin p1u16w4e, on sm_90: with one token a pass the
; row's residual is loaded right after griddepcontrol.wait, beside the activations, not after
; the cross-lane sum (docs/gemv.md, "After the wait").
; kernel: gemv_q4_1_rp_res
; variant: p1u16w4e
; arch: sm_90
; check: asm
CHECK-LABEL: .visible .entry gemv_q4_1_rp_res_p1u16w4e(
CHECK: griddepcontrol.wait;
CHECK-NOT: shfl.sync
CHECK: ld.global.f32
CHECK: shfl.sync
