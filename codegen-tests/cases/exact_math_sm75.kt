; sm_75 has no correctly rounded bf16 fma: the software path (f64 product, TwoSum, round to odd).
; kernel: op_zoo
; arch: sm_75
; check: asm
CHECK-NOT: fma.rn.bf16
CHECK: mul.rn.f64
CHECK-NOT: redux.sync
