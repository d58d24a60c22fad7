; The last-workgroup handshake's arrival on sm_90: every lane's store, bar.sync, then lane 0's one
; atom.acq_rel.gpu, no fence anywhere before it: bar.sync and the atomic's release are cumulative
; in the PTX memory model (CUTLASS's split-K semaphore is the same pattern).
; kernel: handshake
; arch: sm_90
; check: asm
CHECK: st.global.u32
CHECK-NOT: fence
CHECK: bar.sync 0;
CHECK-NOT: fence
CHECK: atom.acq_rel.gpu.global.add.u32
