; Library kernel argmax_rows/baseline on gfx1201: the wave argmax is a DPP/permlanex16 butterfly
; (value and index move together), partials cross waves through LDS behind the gfx12 LDS-only
; barrier (split wait counter, split barrier), and nothing invalidates the global caches.
; kernel: argmax_rows
; variant: baseline
; arch: gfx1201
; check: asm
; implicit-check-not: scratch_|global_inv
CHECK: v_permlanex16_b32
CHECK: row_xmask:8
CHECK: row_xmask:4
CHECK: row_xmask:2
CHECK: row_xmask:1
CHECK: s_wait_dscnt 0x0
CHECK-NEXT: s_barrier_signal -1
CHECK-NEXT: s_barrier_wait -1
CHECK: s_endpgm
