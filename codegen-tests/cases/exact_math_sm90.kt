; Exact math on NVIDIA: correctly rounded div and sqrt, no flush-to-zero, native bf16 fma (sm_80+),
; the device atomic as atom.acq_rel.gpu, redux.sync for the integer reduction.
; kernel: op_zoo
; arch: sm_90
; check: asm
; implicit-check-not: .ftz
CHECK: div.rn.f32
CHECK: sqrt.rn.f32
CHECK: ex2.approx.f32
CHECK: rcp.approx.f32
CHECK: fma.rn.f16
CHECK: fma.rn.bf16
CHECK: atom.acq_rel.gpu.global.add.u32
CHECK: fence.acq_rel.gpu;
CHECK: redux.sync.max.u32
