; NVIDIA sm_90, op_zoo's cross-lane ops and atomics in the PTX: shuffle up (clamp 0), down and idx
; (clamp 31), broadcast as shfl idx of lane 1, the i64 xor-1 shuffle as two 32-bit bfly shuffles,
; all shuffles with the full mask; ballot as vote.sync.ballot over activemask; the device-scope atomic on
; global memory as one atom.acq_rel.gpu (inline assembly, so comment lines sit between), the workgroup-scope
; one between membar.cta; the device fence as fence.acq_rel.gpu; the u32 max reduction as redux.sync.
; kernel: op_zoo
; arch: sm_90
; check: asm
; implicit-check-not: shfl.sync|vote.sync|membar|fence|atom.
CHECK-LABEL: .visible .entry op_zoo(
CHECK: shfl.sync.up.b32
CHECK-SAME: , 1, 0, -1;
CHECK-NEXT: shfl.sync.down.b32
CHECK-SAME: , 3, 31, -1;
CHECK: shfl.sync.idx.b32
CHECK-SAME: , 31, -1;
CHECK-NEXT: shfl.sync.idx.b32
CHECK-SAME: , 1, 31, -1;
CHECK: shfl.sync.bfly.b32
CHECK-SAME: , 1, 31, -1;
CHECK-NEXT: shfl.sync.bfly.b32
CHECK-SAME: , 1, 31, -1;
CHECK: activemask.b32
CHECK-NEXT: vote.sync.ballot.b32
CHECK: atom.acq_rel.gpu.global.add.u32
CHECK: membar.cta;
CHECK-NEXT: atom.global.max.u32
CHECK-NEXT: membar.cta;
CHECK: fence.acq_rel.gpu;
CHECK: redux.sync.max.u32
