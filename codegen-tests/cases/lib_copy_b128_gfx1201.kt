; Library kernel copy_from_mapped_multi on gfx1201: the 16-byte path is 1 + 4 (the unrolled loop and its remainder) global_load_b128 /
; global_store_b128 pairs, after the 1-, 4- and 8-byte paths; no scratch.
; kernel: copy_from_mapped_multi
; arch: gfx1201
; check: asm
; implicit-check-not: _b128|scratch_load|scratch_store
CHECK-LABEL: copy_from_mapped_multi:
CHECK: global_load_u8
CHECK: global_load_b32
CHECK: global_load_b64
CHECK: global_load_b128
CHECK: global_store_b128
CHECK: global_load_b128
CHECK: global_store_b128
CHECK: global_load_b128
CHECK: global_store_b128
CHECK: global_load_b128
CHECK: global_store_b128
CHECK: global_load_b128
CHECK: global_store_b128
CHECK: s_endpgm
