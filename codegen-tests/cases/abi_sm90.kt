; The NVPTX kernel ABI: ptx_kernel, reqntid from the static workgroup size.
; kernel: workgroup_sum
; arch: sm_90
; check: llvm
CHECK: define ptx_kernel void @workgroup_sum(ptr addrspace(1) noalias
CHECK: !{ptr @workgroup_sum, !"reqntidx", i32 256}
