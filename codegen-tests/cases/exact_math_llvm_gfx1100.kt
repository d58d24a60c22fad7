; No fast-math flags, IEEE denormals, min/max as compare + select, saturating conversions,
; scoped atomics on AMDGPU.
; kernel: op_zoo
; arch: gfx1100
; check: llvm
; implicit-check-not: fast|minnum|maxnum
CHECK: @llvm.fptosi.sat.i32.f32
CHECK: atomicrmw add ptr addrspace(1)
CHECK-SAME: syncscope("agent") acq_rel
CHECK: syncscope("workgroup") acq_rel
CHECK: fence syncscope("agent") acq_rel
CHECK: "denormal-fp-math-f32"="ieee,ieee"
