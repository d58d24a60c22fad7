; Snapshot of every exchange of tsum<8> on gfx1201 (rewrite with KILN_BLESS=1).
; kernel: tsum_tokens
; variant: p8
; arch: gfx1201
; check: asm
; bless: v_permlanex16|row_xmask
CHECK: v_permlanex16_b32 v8, v8, s2, 0xfedcba98
CHECK: v_permlanex16_b32 v10, v10, s2, 0xfedcba98
CHECK: v_permlanex16_b32 v11, v11, s2, 0xfedcba98
CHECK: v_permlanex16_b32 v5, v7, s2, 0xfedcba98
CHECK: v_add_f32_dpp v3, v5, v3 row_xmask:8 row_mask:0xf bank_mask:0xf bound_ctrl:1
CHECK: v_add_f32_dpp v0, v6, v0 row_xmask:8 row_mask:0xf bank_mask:0xf bound_ctrl:1
CHECK: v_add_f32_dpp v0, v4, v0 row_xmask:4 row_mask:0xf bank_mask:0xf bound_ctrl:1
CHECK: v_add_f32_dpp v3, v0, v0 row_xmask:2 row_mask:0xf bank_mask:0xf bound_ctrl:1
CHECK: v_mov_b32_dpp v4, v3 row_xmask:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
