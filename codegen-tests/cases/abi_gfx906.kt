; The AMDGPU kernel ABI: amdgpu_kernel, noalias buffers, flat workgroup size, wave 64 features.
; kernel: workgroup_sum
; arch: gfx906
; check: llvm
CHECK: define amdgpu_kernel void @workgroup_sum(ptr addrspace(1) noalias
CHECK: "amdgpu-flat-work-group-size"="256,256"
CHECK-SAME: "target-features"="+wavefrontsize64"
