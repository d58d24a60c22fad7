//! `gemv_q8_0_rp_k4`: the Q8_0 GEMV for 1..=8 tokens on the matrix units (integer MMA), with
//! its own f32 order, chosen so that an MMA tile and a plain lane can both keep it.
//!
//! The order (every variant of this family): a call of `n` rows has `S` slots, 8 when `n <=
//! 8192` ([`MANY_SLOTS_UP_TO`]) and 4 above ([`slots_for`]). For each output `(row, token)`,
//! block `b` of the `k / 32` goes to slot `(b / 4) mod S` (groups of four blocks, 128 bytes of a
//! row, dealt to the slots in turn, so a wave reads whole 128-byte lines); a slot adds its blocks
//! in increasing `b` with the dense family's block term `fma(dw * da, f32(sumi), acc)` from
//! `+0.0`; four slots are added as `(s0 + s1) + (s2 + s3)`, eight as `((s0 + s1) + (s2 + s3)) +
//! ((s4 + s5) + (s6 + s7))`. Eight slots at small `n` give a call twice the waves (a wave a
//! slot): N = 4096 has 256 tiles of 16 rows, 1024 waves with four slots, too few to keep the
//! H200's 132 SMs streaming. It differs from `gemv_q8_0_rp`'s (W slots and a butterfly), so the
//! two families differ in the last bits; within this one, every variant is bit for bit the same.
//!
//! The weights are in the tile layout (`wq`; [`tile_offset`], [`to_tile`]): rows in tiles of
//! 16, and for each tile and block its 512 quant bytes as 32 chunks of 16 bytes, chunk `4g + j`
//! holding bytes `8j..8j + 8` of row `g` of the tile, then of row `g + 8`. A lane of NVIDIA's
//! `m16n8k32` A fragment (with the K permutation of [`WideMap`]) holds exactly one chunk, so a
//! warp fills the fragment of a tile and block with one 16-byte load a lane, 512 contiguous bytes;
//! every other shape reads it in 8-byte pieces (each 8 bytes of a row are contiguous). The scales
//! are by tile too (`ws`, [`scale_index`], [`to_tile_scales`]): for each tile and block the 16
//! rows' f16 scales, 32 contiguous bytes, so the lanes of a warp that need a tile's scales of a
//! block read one sector (as `[row][block]` they read sixteen, and 35% of `wide_t2_g4`'s global
//! sectors were excess: bench/results/scales-h200-2026-12-03.md). `n` must be a multiple of 16
//! (whole tiles; refused at launch otherwise).
//!
//! Variants:
//! - `baseline`: a lane per (row, token, slot) with `dot4.i8`; the slot sums by two xor shuffles.
//! - `wide_t{T}_g{G}`: a workgroup of four waves owns `T` tiles of 16 rows; wave `w` is slot `w`
//!   (`wide_t{T}_g{G}_w8`: eight waves, a slot each). At a call of the other slot count (eight
//!   for four waves, four for eight) the wide path runs over no blocks and the `mma` body takes
//!   the wave's slots after it (`w` and `w + 4`; or `w` for the first four waves): correct, not
//!   routed there.
//!   A wave loads the fragments of its next `G` groups of four blocks (a 16-byte load a lane,
//!   tile and block on NVIDIA, 8-byte pieces elsewhere) and the activations, then takes the
//!   exact integer `sumi` of every (row, token) from the integer MMA (one or two a block: `k` is
//!   32 or 16) and applies the block term to its accumulator elements in increasing block order.
//!   The slot partials meet in LDS. Where the 8-bit shape has no wide map the variant is the
//!   `mma` body; without an 8-bit shape, the baseline's code (not routed there).
//! - `mma`, `mma_t2`: as `wide`, but each lane fills its fragments with 32-bit loads
//!   (each lane's elements come in runs of four consecutive bytes in every shape's lane map), one
//!   block at a time. On archs without an 8-bit matrix shape (gfx906, gfx1030) the variant is the
//!   baseline's code, and it is not routed there.
//!
//! ABI as `gemv_q8_0_rp` (`wq`, `ws`, `xq`, `xs`, `y`, `n`, `k`, `t`), with `t <= 8`, `wq` in the
//! tile layout and `n` a multiple of 16.

use super::dense::declare_nkt;
use super::format::{f16_bits, halves, q8_0_term, WType, QK};
use crate::mma::kind_for;
use kiln_ir::matrix::{FragmentRole, MmaInputs, MmaKind};
use kiln_ir::{
    Access, BarrierKind, Dim, DotOp, IndexUnit, Kernel, KernelBuilder, Param, ScalarRule,
    ScalarType, ShapeExpr, Target, Type, Value,
};

mod wide;
pub use wide::{
    build_wide, build_wide8, build_wide8_ahead, build_wide_hs, wide_archs, wide_map, WideMap,
    DEEP_ARCHS,
};

/// K slots of a call of more than [`MANY_SLOTS_UP_TO`] rows.
pub const FEW_SLOTS: u32 = 4;
/// K slots of a call of at most [`MANY_SLOTS_UP_TO`] rows.
pub const MANY_SLOTS: u32 = 8;
/// The most rows a call has eight slots at.
pub const MANY_SLOTS_UP_TO: u32 = 8192;

/// The slots of the order for a call of `n` rows.
pub fn slots_for(n: usize) -> u32 {
    if n <= MANY_SLOTS_UP_TO as usize {
        MANY_SLOTS
    } else {
        FEW_SLOTS
    }
}

/// [`slots_for`] in the IR: the slot count (u32) and whether it is eight (bool, uniform).
fn slots_of(b: &mut KernelBuilder, n: Value) -> (Value, Value) {
    let up_to = b.u32(MANY_SLOTS_UP_TO);
    let many = b.le(n, up_to);
    let eight = b.u32(MANY_SLOTS);
    let four = b.u32(FEW_SLOTS);
    (b.select(many, eight, four), many)
}

/// Four slot partials added as the order says: `(s0 + s1) + (s2 + s3)`.
fn add4(b: &mut KernelBuilder, s: &[Value]) -> Value {
    let x = b.add(s[0], s[1]);
    let y = b.add(s[2], s[3]);
    b.add(x, y)
}
/// The register cap of the wide variants on NVIDIA ([`build_wide`]).
pub const WIDE_MAX_REGISTERS: u32 = 128;
/// Consecutive blocks a slot takes at a time.
pub const GROUP: u32 = 4;
/// Tokens a call at most.
pub const MAX_T: u32 = 8;
/// Rows a tile of the tile layout.
pub const TILE_ROWS: u32 = 16;
/// Quant bytes of a tile and block.
const TILE_BLOCK: u64 = (TILE_ROWS * QK) as u64;

/// The byte of the tile layout holding quant byte `byte` (`0..k`) of row `row`, for `nb = k / 32`
/// blocks a row.
pub fn tile_offset(row: usize, byte: usize, nb: usize) -> usize {
    let (tile, blk, inb) = (row / 16, byte / 32, byte % 32);
    (tile * nb + blk) * TILE_BLOCK as usize
        + 64 * (row % 8)
        + 8 * ((row / 8) % 2)
        + 16 * (inb / 8)
        + inb % 8
}

/// `gemv_q8_0_rp`'s quants (`[row][k]`, `n` a multiple of 16) in the tile layout.
pub fn to_tile(wq: &[u8], n: usize, k: usize) -> Vec<u8> {
    assert!(n.is_multiple_of(TILE_ROWS as usize) && wq.len() == n * k, "n={n} k={k}");
    let mut out = vec![0; wq.len()];
    for row in 0..n {
        for byte in 0..k {
            out[tile_offset(row, byte, k / QK as usize)] = wq[row * k + byte];
        }
    }
    out
}

/// The element of the tile scale layout holding the scale of block `blk` of row `row`, for `nb`
/// blocks a row: `(tile * nb + blk) * 16 + row % 16`.
pub fn scale_index(row: usize, blk: usize, nb: usize) -> usize {
    ((row / 16) * nb + blk) * TILE_ROWS as usize + row % 16
}

/// `gemv_q8_0_rp`'s scales (`[row][block]`, 2 bytes each, `n` a multiple of 16) in the tile
/// scale layout.
pub fn to_tile_scales(ws: &[u8], n: usize, k: usize) -> Vec<u8> {
    let nb = k / QK as usize;
    assert!(n.is_multiple_of(TILE_ROWS as usize) && ws.len() == 2 * n * nb, "n={n} k={k}");
    let mut out = vec![0; ws.len()];
    for row in 0..n {
        for blk in 0..nb {
            let o = 2 * scale_index(row, blk, nb);
            out[o..o + 2].copy_from_slice(&ws[2 * (row * nb + blk)..][..2]);
        }
    }
    out
}

/// `(row / 16) * nb * unit` (u64) for `row` (u32): where tile `row / 16` starts in a layout of
/// `unit` elements a tile and block ([`tile_row_base`], [`scale_row_base`]).
fn tile_start(b: &mut KernelBuilder, row: Value, nb64: Value, unit: u64) -> Value {
    let c16 = b.u32(TILE_ROWS);
    let tile = b.div(row, c16);
    let tile = b.convert(tile, Type::U64);
    let x = b.mul(tile, nb64);
    let c = b.u64(unit);
    b.mul(x, c)
}

/// `blk * unit` (u64) for block `blk` (u32): what a block adds in a layout of `unit` elements a
/// tile and block ([`tile_block`], [`scale_block`]).
fn block_start(b: &mut KernelBuilder, blk: Value, unit: u64) -> Value {
    let blk64 = b.convert(blk, Type::U64);
    let c = b.u64(unit);
    b.mul(blk64, c)
}

/// [`scale_index`] in the IR, of block 0 of `row` (u32): the u64 to which a block adds its
/// [`scale_block`].
fn scale_row_base(b: &mut KernelBuilder, row: Value, nb64: Value) -> Value {
    let x = tile_start(b, row, nb64, TILE_ROWS as u64);
    let c16 = b.u32(TILE_ROWS);
    let r = b.rem(row, c16);
    let r = b.convert(r, Type::U64);
    b.add(x, r)
}

/// What block `blk` (u32) adds to a row's [`scale_row_base`]: `blk * 16` (u64), once a block
/// for every row.
fn scale_block(b: &mut KernelBuilder, blk: Value) -> Value {
    block_start(b, blk, TILE_ROWS as u64)
}

/// [`tile_offset`] in the IR, of byte 0 of block 0 of `row` (u32): the u64 to which a block adds
/// `blk * 512` and a byte [`tile_byte`].
fn tile_row_base(b: &mut KernelBuilder, row: Value, nb64: Value) -> Value {
    let x = tile_start(b, row, nb64, TILE_BLOCK);
    let c8 = b.u32(8);
    let g = b.rem(row, c8);
    let c64 = b.u32(64);
    let g = b.mul(g, c64);
    let h = b.div(row, c8);
    let c2 = b.u32(2);
    let h = b.rem(h, c2);
    let h = b.mul(h, c8);
    let part = b.add(g, h);
    let part = b.convert(part, Type::U64);
    b.add(x, part)
}

/// The offset in a tile block of byte `byte` (u32, `0..32`) of a row: `16 (byte / 8) + byte % 8`.
fn tile_byte(b: &mut KernelBuilder, byte: Value) -> Value {
    let c8 = b.u32(8);
    let hi = b.div(byte, c8);
    let c16 = b.u32(16);
    let hi = b.mul(hi, c16);
    let lo = b.rem(byte, c8);
    let x = b.add(hi, lo);
    b.convert(x, Type::U64)
}

/// `blk * 512` (u64) for block `blk` (u32).
fn tile_block(b: &mut KernelBuilder, blk: Value) -> Value {
    block_start(b, blk, TILE_BLOCK)
}

/// Rows a workgroup of the baseline (times 8 tokens times 4 slots = 128 lanes).
const BASE_ROWS: u32 = 4;

struct Params {
    wq: Param,
    ws: Param,
    xq: Param,
    xs: Param,
    y: Param,
    n: Param,
    k: Param,
    t: Param,
}

fn declare(b: &mut KernelBuilder) -> Params {
    let (n, k, t) = declare_nkt(b, Some(MAX_T));
    b.scalar_rule(n, ScalarRule::MultipleOf(TILE_ROWS as u64));
    let wt = WType::Q8_0;
    let wq = b.buffer("wq", ScalarType::U8, Access::Read);
    b.set_buffer_len(wq, ShapeExpr::scaled(&[n, k], 1, 1));
    let ws = b.buffer("ws", wt.scale_type(), Access::Read);
    b.set_buffer_len(ws, ShapeExpr::scaled(&[n, k], 1, QK as u64));
    let xq = b.buffer("xq", ScalarType::U8, Access::Read);
    b.set_buffer_len(xq, ShapeExpr::scaled(&[t, k], 1, 1));
    let xs = b.buffer("xs", ScalarType::U32, Access::Read);
    b.set_buffer_len(xs, ShapeExpr::scaled(&[t, k], 1, QK as u64));
    let y = b.buffer("y", ScalarType::F32, Access::Write);
    b.set_buffer_len(y, ShapeExpr::scaled(&[t, n], 1, 1));
    Params { wq, ws, xq, xs, y, n, k, t }
}

/// The block term of the dense family, from the integer dot product `sumi`.
fn term(b: &mut KernelBuilder, dw: Value, da: Value, sumi: Value, acc: Value) -> Value {
    let fs = b.convert(sumi, Type::F32);
    q8_0_term(b, dw, da, fs, acc)
}

/// Builds `gemv_q8_0_rp_k4`'s baseline (`tiles == 0`) or an `mma` variant with `tiles` row
/// tiles of the shape's `m` rows a workgroup (the activation fragments shared by them).
pub fn build(t: &Target, wave: u32, tiles: u32) -> Kernel {
    let kind = if tiles > 0 { kind_for(t, MmaInputs::Int8) } else { None };
    let kind = kind.filter(|k| k.shape().wave_size() == wave);
    let name = match tiles {
        0 => "gemv_q8_0_rp_k4_baseline".to_string(),
        1 => "gemv_q8_0_rp_k4_mma".to_string(),
        n => format!("gemv_q8_0_rp_k4_mma_t{n}"),
    };
    let mut b = KernelBuilder::new(name, wave);
    let p = declare(&mut b);
    match kind {
        Some(kind) => body_mma(&mut b, &p, wave, kind, tiles),
        None => body_lanes(&mut b, &p),
    }
    b.finish()
}

/// A lane per (row, token, slot of four): 4 rows x 8 tokens x 4 lanes a workgroup; with eight
/// slots a lane takes slot `s` and then slot `s + 4`.
fn body_lanes(b: &mut KernelBuilder, p: &Params) {
    let lanes = BASE_ROWS * MAX_T * FEW_SLOTS;
    b.workgroup_size([lanes, 1, 1]);
    b.const_param("rows", BASE_ROWS as i64);
    b.grid([
        ShapeExpr::scaled(&[p.n], 1, BASE_ROWS as u64),
        ShapeExpr::constant(1),
        ShapeExpr::constant(1),
    ]);
    let n = b.arg(p.n);
    let k = b.arg(p.k);
    let t = b.arg(p.t);
    let qk = b.u32(QK);
    let nb = b.div(k, qk);
    let local = b.local_id();
    let four = b.u32(FEW_SLOTS);
    let slot = b.rem(local, four);
    let pair = b.div(local, four);
    let tokens = b.u32(MAX_T);
    let tok = b.rem(pair, tokens);
    let rloc = b.div(pair, tokens);
    let wg = b.workgroup_id(Dim::X);
    let rows = b.u32(BASE_ROWS);
    let row0 = b.mul(wg, rows);
    let row = b.add(row0, rloc);
    let one = b.u32(1);
    let last = b.sub(n, one);
    let row_c = b.min(row, last);
    let tl = b.sub(t, one);
    let tok_c = b.min(tok, tl);
    let nb64 = b.convert(nb, Type::U64);
    let wrow = scale_row_base(b, row_c, nb64);
    let qrow = tile_row_base(b, row_c, nb64);
    let abase = b.mul(tok_c, nb);
    let fz = b.f32(0.0);
    let group = b.u32(GROUP);
    let ng = b.add(nb, group);
    let ng = b.sub(ng, one);
    let ng = b.div(ng, group);
    let (slots, many) = slots_of(b, n);
    // Slot `s`: its groups `s, s + S, ...`, each block in increasing order.
    let slot_sum = |b: &mut KernelBuilder, s: Value| {
        b.for_range(s, ng, slots, 1, &[fz], |b, g, acc| {
            let first = b.mul(g, group);
            let end = b.add(first, group);
            let end = b.min(end, nb);
            b.for_range(first, end, one, 1, acc, |b, blk, acc| {
                let sblk = scale_block(b, blk);
                let wb = b.add(wrow, sblk);
                let tb = tile_block(b, blk);
                let wat = b.add(qrow, tb);
                let ab = b.add(abase, blk);
                let aat = b.mul(ab, qk);
                let mut sumi = b.i32(0);
                for i in 0..8u64 {
                    let off = b.u64(16 * (i / 2) + 4 * (i % 2));
                    let a = b.add(wat, off);
                    let w = b.load_with(p.wq, a, Type::U32, IndexUnit::Byte, Some(4));
                    let off = b.u32(4 * i as u32);
                    let a = b.add(aat, off);
                    let x = b.load_with(p.xq, a, Type::U32, IndexUnit::Byte, Some(4));
                    sumi = b.dot(DotOp::I8, w, x, sumi);
                }
                let dwb = b.load(p.ws, wb, Type::scalar(ScalarType::U16));
                let dw = f16_bits(b, dwb);
                let ds = b.load(p.xs, ab, Type::U32);
                let (da, _) = halves(b, ds);
                vec![term(b, dw, da, sumi, acc[0])]
            })
        })[0]
    };
    let low = slot_sum(b, slot);
    let high = b.if_else(
        many,
        |b| {
            let s = b.add(slot, four);
            vec![slot_sum(b, s)]
        },
        |_| vec![fz],
    )[0];
    // (s0 + s1) + (s2 + s3) of each four: lanes 4i..4i+4 are the slots of one output.
    let tree = |b: &mut KernelBuilder, acc: Value| {
        let o1 = b.shuffle_xor(acc, 1);
        let s = b.add(acc, o1);
        let o2 = b.shuffle_xor(s, 2);
        b.add(s, o2)
    };
    let low = tree(b, low);
    let high = tree(b, high);
    let both = b.add(low, high);
    let s = b.select(many, both, low);
    let zero = b.u32(0);
    let head = b.eq(slot, zero);
    let in_t = b.lt(tok, t);
    let in_n = b.lt(row, n);
    let ok = b.and(head, in_t);
    let ok = b.and(ok, in_n);
    b.if_then(ok, |b| {
        let i = b.mul(tok, n);
        let i = b.add(i, row);
        b.store(p.y, i, s);
    });
}

/// Runs of four consecutive elements along K in `role`'s lane map (A: same row, columns `k..k+4`;
/// B: same column, rows `k..k+4`) at every lane: what lets a 32-bit load fill four elements.
pub fn runs_of_four(kind: MmaKind, role: FragmentRole) -> bool {
    let shape = kind.shape();
    let per = shape.elements_per_lane(role);
    per.is_multiple_of(4)
        && (0..shape.wave_size()).all(|lane| {
            (0..per).step_by(4).all(|e0| {
                let (r0, c0) = shape.coord(role, lane, e0).expect("in range");
                (1..4).all(|d| {
                    let (r, c) = shape.coord(role, lane, e0 + d).expect("in range");
                    match role {
                        FragmentRole::A => r == r0 && c == c0 + d,
                        FragmentRole::B => c == c0 && r == r0 + d,
                        FragmentRole::C => false,
                    }
                })
            })
        })
}

/// Four signed bytes of a `u32` word, low first.
fn bytes_of(b: &mut KernelBuilder, w: Value) -> [Value; 4] {
    let v = b.bitcast(w, Type::vector(ScalarType::I8, 4));
    [0u8, 1, 2, 3].map(|i| b.extract(v, i))
}

/// What the `mma` and `wide` bodies share: `waves` waves a workgroup (4 or 8) own `tiles * m`
/// rows (wave `w` is slot `w`; with four waves and eight slots, slot `w + 4` too), the common
/// values, each C element's scale bases, and the LDS the slot partials meet in.
struct Frame {
    part: kiln_ir::LdsSlot,
    n: Value,
    k: Value,
    qk: Value,
    nb: Value,
    row0: Value,
    rows: u32,
    tokens: u32,
    slot: Value,
    one: Value,
    last: Value,
    tl: Value,
    nb64: Value,
    /// Whether the call has eight slots ([`slots_of`]).
    many: Value,
    /// Waves a workgroup.
    waves: u32,
    /// Per tile and C element: its row's [`scale_row_base`] (u64), its token's first scale, and its
    /// (row in the workgroup, token).
    c_elems: Vec<(Value, Value, Value, Value)>,
}

impl Frame {
    fn new(
        b: &mut KernelBuilder,
        p: &Params,
        (wave, waves): (u32, u32),
        kind: MmaKind,
        tiles: u32,
    ) -> Frame {
        assert!(waves == FEW_SLOTS || waves == MANY_SLOTS, "{waves} waves");
        let (m, nt, _) = kind.shape().mnk();
        let rows = tiles * m;
        b.workgroup_size([waves * wave, 1, 1]);
        b.const_param("rows", rows as i64);
        b.const_param("tiles", tiles as i64);
        b.const_param("tokens", nt as i64);
        b.grid([
            ShapeExpr::scaled(&[p.n], 1, rows as u64),
            ShapeExpr::constant(1),
            ShapeExpr::constant(1),
        ]);
        let part = b.lds("slot_sums", ScalarType::F32, MANY_SLOTS * rows * nt);
        let n = b.arg(p.n);
        let k = b.arg(p.k);
        let t = b.arg(p.t);
        let qk = b.u32(QK);
        let nb = b.div(k, qk);
        let wg = b.workgroup_id(Dim::X);
        let rv = b.u32(rows);
        let row0 = b.mul(wg, rv);
        let slot = b.wave();
        let one = b.u32(1);
        let last = b.sub(n, one);
        let tl = b.sub(t, one);
        let nb64 = b.convert(nb, Type::U64);
        let (_, many) = slots_of(b, n);
        let per_c = kind.shape().elements_per_lane(FragmentRole::C);
        let c_elems = (0..tiles)
            .flat_map(|ti| (0..per_c).map(move |e| (ti, e)))
            .map(|(ti, e)| {
                let (r, c) = b.fragment_coord(kind, FragmentRole::C, e);
                let off = b.u32(ti * m);
                let rl = b.add(r, off);
                let row = b.add(row0, rl);
                let row = b.min(row, last);
                let wbase = scale_row_base(b, row, nb64);
                let tok = b.min(c, tl);
                let abase = b.mul(tok, nb);
                (wbase, abase, rl, c)
            })
            .collect();
        Frame {
            part,
            n,
            k,
            qk,
            nb,
            row0,
            rows,
            tokens: nt,
            slot,
            one,
            last,
            tl,
            nb64,
            many,
            waves,
            c_elems,
        }
    }

    /// Slot `s`'s partials `accs` (one a C element) to LDS (`[slot][row][token]`).
    fn store(&self, b: &mut KernelBuilder, s: Value, accs: &[Value]) {
        let rv = b.u32(self.rows);
        let ntv = b.u32(self.tokens);
        for (i, &(_, _, r, c)) in self.c_elems.iter().enumerate() {
            let at = b.mul(s, rv);
            let at = b.add(at, r);
            let at = b.mul(at, ntv);
            let at = b.add(at, c);
            b.store(self.part, at, accs[i]);
        }
    }

    /// Runs `slot` for each slot this wave owns and stores its partials: `slot(b, s, S)` gives
    /// slot `s`'s partials for a call of `S` slots (a constant in each of the two paths, so
    /// strides and offsets fold). With four waves and eight slots a wave takes `w` and then
    /// `w + 4`; with eight waves and four slots the last four waves idle.
    fn slots(
        &self,
        b: &mut KernelBuilder,
        slot: &dyn Fn(&mut KernelBuilder, Value, u32) -> Vec<Value>,
    ) {
        let native = self.native(b);
        b.if_then(native, |b| {
            let accs = slot(b, self.slot, self.waves);
            self.store(b, self.slot, &accs);
        });
        self.other_slots(b, native, slot);
    }

    /// Whether the call has the slot count the workgroup is built for (one slot a wave).
    fn native(&self, b: &mut KernelBuilder) -> Value {
        if self.waves == MANY_SLOTS {
            self.many
        } else {
            b.not(self.many)
        }
    }

    /// Where the call's slot count is not the one the workgroup is built for (`native` false):
    /// `slot` for each slot this wave owns, stored.
    fn other_slots(
        &self,
        b: &mut KernelBuilder,
        native: Value,
        slot: &dyn Fn(&mut KernelBuilder, Value, u32) -> Vec<Value>,
    ) {
        let other = b.not(native);
        b.if_then(other, |b| {
            let own = |b: &mut KernelBuilder, s: Value, sc: u32| {
                let accs = slot(b, s, sc);
                self.store(b, s, &accs);
            };
            let four = b.u32(FEW_SLOTS);
            if self.waves == FEW_SLOTS {
                own(b, self.slot, MANY_SLOTS);
                let s = b.add(self.slot, four);
                own(b, s, MANY_SLOTS);
            } else {
                let active = b.lt(self.slot, four);
                b.if_then(active, |b| own(b, self.slot, FEW_SLOTS));
            }
        });
    }

    /// The partials stored, then added and stored to `y` by [`combine_slots`].
    fn finish(&self, b: &mut KernelBuilder, p: &Params, wave: u32) {
        b.barrier(BarrierKind::Lds);
        combine_slots(b, p, self, self.waves * wave);
    }
}

/// Four waves own `tiles * m` rows; wave `w` takes the blocks of slot `w`.
fn body_mma(b: &mut KernelBuilder, p: &Params, wave: u32, kind: MmaKind, tiles: u32) {
    assert!(
        runs_of_four(kind, FragmentRole::A) && runs_of_four(kind, FragmentRole::B),
        "{kind:?}: the lane map has no runs of four along K"
    );
    let f = Frame::new(b, p, (wave, FEW_SLOTS), kind, tiles);
    f.slots(b, &|b, s, sc| mma_slot(b, p, &f, kind, tiles, (s, sc)));
    f.finish(b, p, wave);
}

/// Slot `s`'s partials for a call of `sc` slots, the `mma` way: 32-bit fragment loads, a block
/// at a time (the `mma` variants' body, and the wide variants' where the call's slot count is
/// not the one they are built for).
fn mma_slot(
    b: &mut KernelBuilder,
    p: &Params,
    f: &Frame,
    kind: MmaKind,
    tiles: u32,
    (s, sc): (Value, u32),
) -> Vec<Value> {
    let (m, nt, kk) = kind.shape().mnk();
    assert!(nt >= MAX_T && QK.is_multiple_of(kk), "{kind:?}: shape {m}x{nt}x{kk}");
    let (k, qk, nb, row0) = (f.k, f.qk, f.nb, f.row0);
    let (one, last, tl, nb64) = (f.one, f.last, f.tl, f.nb64);
    let per_a = kind.shape().elements_per_lane(FragmentRole::A);
    let per_b = kind.shape().elements_per_lane(FragmentRole::B);
    let per_c = kind.shape().elements_per_lane(FragmentRole::C);
    // Per tile and word of A: the byte of block 0 of its row (u64) and its column in the block.
    let a_words: Vec<Vec<(Value, Value)>> = (0..tiles)
        .map(|ti| {
            (0..per_a)
                .step_by(4)
                .map(|e| {
                    let (r, c) = b.fragment_coord(kind, FragmentRole::A, e);
                    let off = b.u32(ti * m);
                    let row = b.add(row0, off);
                    let row = b.add(row, r);
                    let row = b.min(row, last);
                    (tile_row_base(b, row, nb64), c)
                })
                .collect()
        })
        .collect();
    // Per word of B: its token's first quant and its row (K) in the block.
    let b_words: Vec<(Value, Value)> = (0..per_b)
        .step_by(4)
        .map(|e| {
            let (r, c) = b.fragment_coord(kind, FragmentRole::B, e);
            let tok = b.min(c, tl);
            let base = b.mul(tok, k);
            (base, r)
        })
        .collect();
    let fz = b.f32(0.0);
    let init = vec![fz; (tiles * per_c) as usize];
    let iz = b.i32(0);
    let group = b.u32(GROUP);
    let ng = b.add(nb, group);
    let ng = b.sub(ng, one);
    let ng = b.div(ng, group);
    let slots = b.u32(sc);
    b.for_range(s, ng, slots, 1, &init, |b, g, acc| {
        let first = b.mul(g, group);
        let end = b.add(first, group);
        let end = b.min(end, nb);
        b.for_range(first, end, one, 1, acc, |b, blk, acc| {
            let sblk = scale_block(b, blk);
            let wblk = tile_block(b, blk);
            let ablk = b.mul(blk, qk);
            let mut cs: Vec<Value> =
                (0..tiles).map(|_| b.fragment_splat(kind, FragmentRole::C, iz)).collect();
            for kc in 0..QK / kk {
                let mut b_el = Vec::with_capacity(per_b as usize);
                for &(base, row) in &b_words {
                    let at = b.add(base, ablk);
                    let off = b.u32(kc * kk);
                    let row = b.add(row, off);
                    let at = b.add(at, row);
                    let w = b.load_with(p.xq, at, Type::U32, IndexUnit::Byte, Some(4));
                    b_el.extend(bytes_of(b, w));
                }
                let bf = b.fragment_of(kind, FragmentRole::B, &b_el);
                for (ti, words) in a_words.iter().enumerate() {
                    let mut a_el = Vec::with_capacity(per_a as usize);
                    for &(base, col) in words {
                        let at = b.add(base, wblk);
                        let off = b.u32(kc * kk);
                        let col = b.add(col, off);
                        let col64 = tile_byte(b, col);
                        let at = b.add(at, col64);
                        let w = b.load_with(p.wq, at, Type::U32, IndexUnit::Byte, Some(4));
                        a_el.extend(bytes_of(b, w));
                    }
                    let af = b.fragment_of(kind, FragmentRole::A, &a_el);
                    cs[ti] = b.mma(kind, af, bf, cs[ti]);
                }
            }
            let mut next = Vec::with_capacity(acc.len());
            for (i, &(wbase, abase, _, _)) in f.c_elems.iter().enumerate() {
                let (ti, e) = (i / per_c as usize, i % per_c as usize);
                let wi = b.add(wbase, sblk);
                let dwb = b.load(p.ws, wi, Type::scalar(ScalarType::U16));
                let dw = f16_bits(b, dwb);
                let ai = b.add(abase, blk);
                let ds = b.load(p.xs, ai, Type::U32);
                let (da, _) = halves(b, ds);
                let sumi = b.extract(cs[ti], e as u8);
                next.push(term(b, dw, da, sumi, acc[i]));
            }
            next
        })
    })
}

/// The slot partials in LDS (`[slot][row][token]`) added as the order says
/// (`(s0 + s1) + (s2 + s3)`, with eight slots plus `(s4 + s5) + (s6 + s7)`) and stored.
fn combine_slots(b: &mut KernelBuilder, p: &Params, f: &Frame, lanes: u32) {
    let (rows, nt) = (f.rows, f.tokens);
    let n = b.arg(p.n);
    let t = b.arg(p.t);
    let ntv = b.u32(nt);
    let local = b.local_id();
    let pairs = b.u32(rows * nt);
    let step = b.u32(lanes);
    b.for_range(local, pairs, step, 1, &[], |b, pi, _| {
        let r = b.div(pi, ntv);
        let tok = b.rem(pi, ntv);
        let four = |b: &mut KernelBuilder, from: u32| {
            let s: Vec<Value> = (from..from + FEW_SLOTS)
                .map(|w| {
                    let off = b.u32(w * rows * nt);
                    let i = b.add(pi, off);
                    b.load(f.part, i, Type::F32)
                })
                .collect();
            add4(b, &s)
        };
        let low = four(b, 0);
        let sum = b.if_else(
            f.many,
            |b| {
                let high = four(b, FEW_SLOTS);
                vec![b.add(low, high)]
            },
            |_| vec![low],
        )[0];
        let row = b.add(f.row0, r);
        let in_n = b.lt(row, n);
        let in_t = b.lt(tok, t);
        let ok = b.and(in_n, in_t);
        b.if_then(ok, |b| {
            let i = b.mul(tok, n);
            let i = b.add(i, row);
            b.store(p.y, i, sum);
        });
        vec![]
    });
}

/// The archs the `mma` variant is routed on: those with an 8-bit matrix shape at their default
/// wave size.
pub fn mma_archs() -> Vec<String> {
    kiln_ir::TARGETS
        .iter()
        .filter(|t| {
            kind_for(t, MmaInputs::Int8).is_some_and(|k| k.shape().wave_size() == t.default_wave())
        })
        .map(|t| t.name.to_string())
        .collect()
}
