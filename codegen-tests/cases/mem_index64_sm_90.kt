; A u64 element index on sm_90: the read-only buffer keeps noalias/readonly, so both loads (f32
; and the f32x4, narrowed to its used lane) are ld.global.nc; the store at the u64 index is plain.
; kernel: index64
; arch: sm_90
; check: asm
; implicit-check-not: ld.global|st.global|.local
CHECK-LABEL: .visible .entry index64(
CHECK: ld.global.nc.f32
CHECK: ld.global.nc.f32
CHECK-SAME: +12];
CHECK: st.global.f32
