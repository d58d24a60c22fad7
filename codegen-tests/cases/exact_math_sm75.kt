; sm_75 has no correctly rounded bf16 fma: the software path (f64 product, TwoSum, round to odd).
; kernel: op_zoo
; arch: sm_75
; check: asm
; implicit-check-not: fma.rn.bf16|redux.sync
CHECK: mul.rn.f64
