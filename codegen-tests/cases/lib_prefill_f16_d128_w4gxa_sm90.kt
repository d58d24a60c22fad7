; Library kernel attention_prefill_f16_d128/w4gxa on sm_90 (the wide variant with K and V staged
; by async copies into two buffers each): eight 16-byte cp.async a lane for the first tile,
; closed and left in flight (wait_group 1); in the tile loop eight more for the next tile, then
; wait_group 1 (this tile landed) and the barrier before its 96 mma.sync (32 for S, the 32 of
; P V twice: with and without O * a), which ld_matrix reads; no store to shared memory (the
; rows land by the copies), wait_group 0 after the loop, no local memory (165 registers).
; kernel: attention_prefill_f16_d128
; variant: w4gxa
; arch: sm_90
; check: asm
; implicit-check-not: mma.sync|.local|st.shared|cp.async.cg
CHECK-COUNT-8: cp.async.cg.shared.global
CHECK: cp.async.commit_group;
CHECK-NEXT: cp.async.wait_group 1;
CHECK: cp.async.wait_group 0;
CHECK-COUNT-32: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
CHECK: bar.sync 0;
CHECK-COUNT-8: cp.async.cg.shared.global
CHECK: cp.async.commit_group;
CHECK-NEXT: cp.async.wait_group 1;
CHECK: bar.sync 0;
CHECK-COUNT-64: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
