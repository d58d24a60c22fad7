; kernel: workgroup_sum
; variant: all
; arch: gfx1100
; check: llvm
CHECK: fence syncscope("workgroup") release
CHECK-NOT: !mmra
CHECK: call void @llvm.amdgcn.s.barrier()
CHECK-NEXT: fence syncscope("workgroup") acquire
CHECK-NOT: amdgpu-as
