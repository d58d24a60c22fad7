; Q8_0 quants on sm_90: two u8x16 loads at byte 34*l+2 and +18 with 2-byte alignment. PTX wants
; natural alignment and LLVM 19 would select a misaligned ld.global.nc.v4.u32, so the lowering
; splits each into 8 ld.global.nc.u16 (still the read-only path), then one 16-byte store each.
; kernel: q8_0_quants
; arch: sm_90
; check: asm
; implicit-check-not: ld.global|st.global|.local|v4.u32
CHECK-LABEL: .visible .entry q8_0_quants(
CHECK: ld.global.nc.u16
CHECK: ld.global.nc.u16
CHECK: ld.global.nc.u16
CHECK: ld.global.nc.u16
CHECK: ld.global.nc.u16
CHECK: ld.global.nc.u16
CHECK: ld.global.nc.u16
CHECK: ld.global.nc.u16
CHECK: st.global.v4.b32
CHECK: ld.global.nc.u16
CHECK: ld.global.nc.u16
CHECK: ld.global.nc.u16
CHECK: ld.global.nc.u16
CHECK: ld.global.nc.u16
CHECK: ld.global.nc.u16
CHECK: ld.global.nc.u16
CHECK: ld.global.nc.u16
CHECK: st.global.v4.b32
