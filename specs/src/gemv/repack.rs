//! `repack_{q8_0,q4_0,q4_1}`: ggml blocks (`w`, the GGUF bytes) into the repacked layout
//! (`wq`: every block's quants, 16-byte aligned; `ws`: the scales, `u16` d or `u32` d | m << 16),
//! the layout the `gemv_*_rp` families read. One lane a block; pure byte movement, so exact.
//! An engine repacks once at load.

use super::format::{WType, QK};
const U16: Type = Type::scalar(ScalarType::U16);
use kiln_ir::{
    Access, Dim, IndexUnit, Kernel, KernelBuilder, Param, ScalarRule, ScalarType, ShapeExpr,
    Target, Type, Value,
};

/// Lanes a workgroup.
const BLOCK: u32 = 256;

/// What both repack kernels declare: `w`, `wq`, `ws`, `n` (a multiple of `n_multiple`), `k`; a
/// lane per `lane_values` values of `w` (its index `i`, u64); the blocks `n * k / 32` (u64).
struct Header {
    w: Param,
    wq: Param,
    ws: Param,
    i: Value,
    nb64: Value,
    blocks: Value,
}

fn header(b: &mut KernelBuilder, wt: WType, n_multiple: u64, lane_values: u32) -> Header {
    let w = b.buffer("w", ScalarType::U8, Access::Read);
    let wq = b.buffer("wq", ScalarType::U8, Access::Write);
    let ws = b.buffer("ws", wt.scale_type(), Access::Write);
    let n = b.scalar_param("n", ScalarType::U32);
    let k = b.scalar_param("k", ScalarType::U32);
    b.scalar_rule(n, ScalarRule::AtLeast(1));
    if n_multiple > 1 {
        b.scalar_rule(n, ScalarRule::MultipleOf(n_multiple));
    }
    b.scalar_rule(k, ScalarRule::AtLeast(QK as u64));
    b.scalar_rule(k, ScalarRule::MultipleOf(QK as u64));
    b.set_buffer_len(w, ShapeExpr::scaled(&[n, k], wt.block_bytes(), QK as u64));
    b.set_buffer_len(wq, ShapeExpr::scaled(&[n, k], wt.quant_bytes(), QK as u64));
    b.set_buffer_len(ws, ShapeExpr::scaled(&[n, k], 1, QK as u64));
    b.workgroup_size([BLOCK, 1, 1]);
    b.const_param("block", BLOCK as i64);
    b.grid([
        ShapeExpr::scaled(&[n, k], 1, (lane_values * BLOCK) as u64),
        ShapeExpr::constant(1),
        ShapeExpr::constant(1),
    ]);
    let nv = b.arg(n);
    let kv = b.arg(k);
    let qk = b.u32(QK);
    let nb = b.div(kv, qk);
    let n64 = b.convert(nv, Type::U64);
    let nb64 = b.convert(nb, Type::U64);
    let blocks = b.mul(n64, nb64);
    let wg = b.workgroup_id(Dim::X);
    let local = b.local_id();
    let bs = b.u32(BLOCK);
    let i = b.mul(wg, bs);
    let i = b.add(i, local);
    let i = b.convert(i, Type::U64);
    Header { w, wq, ws, i, nb64, blocks }
}

/// The repack kernel of `wt` (a quantized format): `w`, `wq`, `ws`, `n`, `k`.
pub fn build(_t: &Target, wave: u32, wt: WType) -> Kernel {
    let mut b = KernelBuilder::new(format!("repack_{}", wt.name()), wave);
    let Header { w, wq, ws, i, nb64: _, blocks } = header(&mut b, wt, 1, QK);
    let ok = b.lt(i, blocks);
    b.if_then(ok, |b| {
        let bb = b.u64(wt.block_bytes());
        let at = b.mul(i, bb);
        let (head_ty, head, align) = match wt {
            WType::Q4_1 => (Type::U32, 4u64, 4),
            WType::Q8_0 | WType::Q4_0 | WType::F16 | WType::Bf16 => (U16, 2, 2),
        };
        let s = b.load_with(w, at, head_ty, IndexUnit::Byte, Some(align));
        b.store(ws, i, s);
        let qb = b.u64(wt.quant_bytes());
        let to = b.mul(i, qb);
        for j in 0..wt.quant_bytes() / 4 {
            let off = b.u64(head + 4 * j);
            let a = b.add(at, off);
            let v = b.load_with(w, a, Type::U32, IndexUnit::Byte, Some(align));
            let off = b.u64(4 * j);
            let d = b.add(to, off);
            b.store_with(wq, d, v, IndexUnit::Byte, Some(4));
        }
    });
    b.finish()
}

/// `repack_q8_0_tile`: ggml's Q8_0 blocks (`w`) into the tile layout of `gemv_q8_0_rp_k4`
/// (`wq`, [`super::k4::tile_offset`]) and its scales by tile (`ws`, [`super::k4::scale_index`]).
/// One lane a 16-byte chunk of `wq` (8 bytes of row `g` of a tile, then of row `g + 8`); the
/// lane of the chunk `j = 0` also moves the two rows' scales. `n` a multiple of 16.
pub fn build_tile(_t: &Target, wave: u32) -> Kernel {
    let wt = WType::Q8_0;
    let mut b = KernelBuilder::new("repack_q8_0_tile", wave);
    // A lane a 16-byte chunk: two a row and block.
    let Header { w, wq, ws, i, nb64, blocks } = header(&mut b, wt, 16, 16);
    let two = b.u64(2);
    let chunks = b.mul(blocks, two);
    let ok = b.lt(i, chunks);
    let c32 = b.u64(32);
    let c16 = b.u64(16);
    b.if_then(ok, |b| {
        // Chunk c of tile block tb: rows 16 tile + g and + 8, bytes 8j.. of block blk.
        let c = b.rem(i, c32);
        let tb = b.div(i, c32);
        let tile = b.div(tb, nb64);
        let blk = b.rem(tb, nb64);
        let c4 = b.u64(4);
        let g = b.div(c, c4);
        let j = b.rem(c, c4);
        let row_a = b.mul(tile, c16);
        let row_a = b.add(row_a, g);
        let c8 = b.u64(8);
        let row_b = b.add(row_a, c8);
        let to = b.mul(i, c16);
        let bb = b.u64(wt.block_bytes());
        // The chunk's first quant in a block: past the 2-byte scale.
        let q = b.mul(j, c8);
        let q = b.add(q, two);
        for (h, row) in [row_a, row_b].into_iter().enumerate() {
            let blk_i = b.mul(row, nb64);
            let blk_i = b.add(blk_i, blk);
            let at = b.mul(blk_i, bb);
            let src = b.add(at, q);
            for word in 0..2u64 {
                let off = b.u64(4 * word);
                let a = b.add(src, off);
                let v = b.load_with(w, a, Type::U32, IndexUnit::Byte, Some(2));
                let off = b.u64(8 * h as u64 + 4 * word);
                let d = b.add(to, off);
                b.store_with(wq, d, v, IndexUnit::Byte, Some(4));
            }
            let zero = b.u64(0);
            let first = b.eq(j, zero);
            b.if_then(first, |b| {
                let s = b.load_with(w, at, U16, IndexUnit::Byte, Some(2));
                // Tile block tb's scales ([`super::k4::scale_index`]): row g + 8h of its 16.
                let si = b.mul(tb, c16);
                let r = b.u64(8 * h as u64);
                let si = b.add(si, g);
                let si = b.add(si, r);
                b.store(ws, si, s);
            });
        }
    });
    b.finish()
}
