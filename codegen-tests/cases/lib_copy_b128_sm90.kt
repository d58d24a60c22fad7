; Library kernel copy_from_mapped_multi on sm_90: the 16-byte path moves 16 bytes a lane (the remainder of the unrolled loop), then 4 x 16 bytes a lane as
; ld.global.v4.u32 / st.global.v4.u32 pairs (after the byte, 4-byte and 8-byte paths), and no other
; 16-byte access.
; kernel: copy_from_mapped_multi
; arch: sm_90
; check: asm
; implicit-check-not: .v4.
CHECK-LABEL: .visible .entry copy_from_mapped_multi(
CHECK: ld.global.u8
CHECK: ld.global.v4.u32
CHECK-NEXT: st.global.v4.u32
CHECK: ld.global.v4.u32
CHECK-NEXT: st.global.v4.u32
CHECK: ld.global.v4.u32
CHECK-NEXT: st.global.v4.u32
CHECK: ld.global.v4.u32
CHECK-NEXT: st.global.v4.u32
CHECK: ld.global.v4.u32
CHECK-NEXT: st.global.v4.u32
