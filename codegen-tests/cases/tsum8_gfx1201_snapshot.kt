; Snapshot of every exchange of tsum<8> on gfx1201 (rewrite with KILN_BLESS=1).
; kernel: tsum_tokens
; variant: p8
; arch: gfx1201
; check: asm
; bless: v_permlanex16|row_xmask
CHECK: v_permlanex16_b32 v10, v10, s2, 0xfedcba98
CHECK: v_permlanex16_b32 v4, v4, s2, 0xfedcba98
CHECK: v_permlanex16_b32 v6, v6, s2, 0xfedcba98
CHECK: v_permlanex16_b32 v7, v7, s2, 0xfedcba98
CHECK: v_add_f32_dpp v1, v5, v1 row_xmask:8 row_mask:0xf bank_mask:0xf bound_ctrl:1
CHECK: v_add_f32_dpp v2, v3, v2 row_xmask:8 row_mask:0xf bank_mask:0xf bound_ctrl:1
CHECK: v_add_f32_dpp v1, v3, v1 row_xmask:4 row_mask:0xf bank_mask:0xf bound_ctrl:1
CHECK: v_add_f32_dpp v1, v1, v1 row_xmask:2 row_mask:0xf bank_mask:0xf bound_ctrl:1
CHECK: v_mov_b32_dpp v2, v1 row_xmask:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
