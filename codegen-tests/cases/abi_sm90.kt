; The NVPTX kernel ABI: ptx_kernel, the kernel annotation only (no ntid: ptxas would cap registers and spill).
; kernel: workgroup_sum
; arch: sm_90
; check: llvm
CHECK: define ptx_kernel void @workgroup_sum(ptr addrspace(1) noalias
CHECK: !{ptr @workgroup_sum, !"kernel", i32 1}
CHECK-NOT: ntid
