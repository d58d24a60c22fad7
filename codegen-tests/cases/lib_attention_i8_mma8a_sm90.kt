; Library kernel attention_decode_q8_0_i8_d128, variant mma8a, on sm_90: the K and V chunks
; staged by async copies half a step ahead (docs/attention.md, "`mma8a`"). The first chunk's K
; (17 eight-byte copies a lane) before the loop; in the loop: wait for it (wait_group 0) and
; the barrier, the chunk's V copies, the 16 mma.sync of the scores; wait for the V and the
; barrier, the next chunk's K copies, the 16 mma.sync of P V. No global load or shared store in
; the loop (the rows land by the copies), no local memory (164 registers).
; kernel: attention_decode_q8_0_i8_d128
; variant: mma8a
; arch: sm_90
; check: asm
; implicit-check-not: .local
CHECK-LABEL: .visible .entry attention_decode_q8_0_i8_d128_mma8a(
CHECK: bar.sync
CHECK-COUNT-17: cp.async.ca.shared.global
CHECK-NOT: ld.global
CHECK: cp.async.commit_group;
CHECK-NEXT: cp.async.wait_group 0;
CHECK: bar.sync
CHECK-COUNT-17: cp.async.ca.shared.global
CHECK-NOT: ld.global
CHECK-NOT: st.shared
CHECK-COUNT-16: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
CHECK-NOT: ld.global
CHECK-NOT: st.shared
CHECK: cp.async.commit_group;
CHECK-NEXT: cp.async.wait_group 0;
CHECK: bar.sync
CHECK-COUNT-17: cp.async.ca.shared.global
CHECK-NOT: ld.global
CHECK-NOT: st.shared
CHECK-COUNT-16: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
CHECK: bar.sync
