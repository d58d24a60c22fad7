; The LDS-only barrier in LLVM IR: workgroup fences tagged with LLVM 19's MMRA for local memory.
; kernel: workgroup_sum
; arch: gfx1201
; check: llvm
CHECK: fence syncscope("workgroup") release, !mmra !
CHECK-NEXT: call void @llvm.amdgcn.s.barrier()
CHECK-NEXT: fence syncscope("workgroup") acquire, !mmra !
CHECK: !{!"amdgpu-as", !"local"}
