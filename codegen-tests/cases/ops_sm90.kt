; NVIDIA sm_90, op_zoo's cross-lane ops and atomics in the PTX: shuffle up (clamp 0), down and idx
; (clamp 31), broadcast as shfl idx of lane 1, the i64 xor-1 shuffle as two 32-bit bfly shuffles,
; all shuffles with the full mask; ballot as vote.sync.ballot over activemask; the device-scope atomic between membar.gl,
; the workgroup-scope one between membar.cta; the u32 max reduction as redux.sync.
; kernel: op_zoo
; arch: sm_90
; check: asm
; implicit-check-not: shfl.sync|vote.sync|membar|atom.
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
CHECK: membar.gl;
CHECK-NEXT: atom.global.add.u32
CHECK-NEXT: membar.gl;
CHECK: membar.cta;
CHECK-NEXT: atom.global.max.u32
CHECK-NEXT: membar.cta;
CHECK-NEXT: membar.gl;
CHECK: redux.sync.max.u32
