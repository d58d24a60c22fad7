//! The wide variants (`w4g`, `w4qs`): four waves a workgroup (64 rows of a KV head) sharing
//! each staged K/V tile, with `S`, the softmax and `P` in registers (NVIDIA `mma.sync
//! m16n8k16`). They differ in where Q's fragments live, the skips and how `l` is summed
//! ([`Wide`]).
//!
//! The baseline's order, bit for bit on the interpreter (every step below is the baseline's op
//! on the same values):
//! - A wave owns the 16 rows the baseline's workgroup `4 y + w` owns; a row's last key is
//!   `min(pos + t, kv_len_w - 1)` as there (`kv_len_w` from the wave's own last row). The four
//!   waves walk the workgroup's blocks, up to its last row's key: a block past all of a wave's
//!   keys has every score masked, so `m' = m`, `a = exp(0) = 1`, every `p = 0`, and the state
//!   stays as it is, bit for bit (the baseline never folds that block).
//! - `S` of a block: per 16-key step two C tiles of 8 keys, each the chain of `D / 16`
//!   instructions of 16 dims from a zero accumulator, as the baseline's.
//! - The softmax on the C layout: lane `(g, t)` (`g = lane >> 2`, `t = lane & 3`) holds rows
//!   `g` and `g + 8`, keys `16 h + (2t, 2t + 1, 8 + 2t, 9 + 2t)` of the block (`h` = 0, 1).
//!   `mx` is the maximum of the row's 32 scaled and masked scores over the quad (a maximum is
//!   the same in any order), `m'`, `a` and the `p_j` are the baseline's ops, and `l' = l * a +
//!   w` with the block's tree `w` (`super::weights_sum`): each lane adds its own eight keys, the
//!   quad the lanes' sums by xor shuffles 1 and 2 (each addition commutes, so all four lanes
//!   hold the same bits).
//! - With the skips: a block every row of the wave sees whole skips the masks (`select` would
//!   return every value), and a block where no lane's maximum moved (`a = 1` for every row)
//!   skips `O * a` (`O * 1` is `O`'s bits).
//! - `P` of each step goes from the C tiles straight into an A fragment of `P V` (its lane map
//!   is the two C tiles' side by side); `O * a`, then the two steps' `P V` chained in key order
//!   on the matrix unit, a tile of 8 dims at a time.
//!
//! K/V tiles of [`KEY_TILE`] keys go through LDS once for the four waves (K row-major, V
//! transposed, so that each B fragment is two 32-bit LDS reads; rows padded so that a fragment's
//! reads hit 32 banks), and the next tile's global loads are in flight, in registers, while the
//! current one computes.
//!
//! One difference from the baseline outside finite data: the baseline reads keys past its own
//! last key as that key's row (clamped), while the waves here read the real rows up to the
//! workgroup's last key. Such keys get `p = 0`, so the two agree unless one of those V rows holds
//! an infinity or a NaN (`0 * inf`).

use super::stage::{carried, q8_block, q8_halves, q8_vectors, uncarried};
use super::*;
use kiln_ir::matrix::MmaShape;
use kiln_ir::PackedConvertOp;

/// Waves a workgroup (16 rows each) sharing the staged tiles.
pub const WAVES: u32 = 4;

/// A shape of the kernel: one variant each. Also measured on the H200 and not kept
/// (`bench/results/prefill-w4-h200-2026-12-02.md`): eight waves a workgroup, no register
/// prefetch, a 168-register cap with Q in registers (call 2), the other combinations of
/// `q_lds` and `skips` and two ways of summing `l` in key order (`w4`, `w4q`, `w4s`, `w4qg`:
/// calls 3 to 5; `l` is a tree since 2026-12-02), and the staged rows packed by fragment
/// (`bench/results/prefill-io-h200-2026-12-02.md`, call 2). On 2026-12-03
/// (`bench/results/tail-h200-2026-12-03.md`, call 4): `w4qs` with the mask skip alone (163
/// registers) 12% slower with a Q8_0 cache (445.9 against 397.3 us at L = 2048), and `w4qs`
/// capped at 128 registers (four workgroups an SM) spills 88 bytes.
#[derive(Clone, Copy, Debug)]
pub struct Wide {
    /// The variant's name.
    pub name: &'static str,
    /// The Q fragments read from LDS each block (else held in registers: `D / 4` a lane).
    pub q_lds: bool,
    /// A register cap a lane (NVIDIA), for more waves an SM.
    pub cap: Option<u32>,
    /// The mask skip for blocks every row sees whole, and the `O * a` skip when no maximum
    /// moved (wave-uniform branches).
    pub skips: bool,
    /// The fragments read from LDS by `ld_matrix` (four 8x8 matrices a lane's instruction: two
    /// B fragments, or Q's A fragment), V staged row-major like K (its B fragments by the
    /// transposed form) instead of transposed half by half. The same values in the same
    /// registers: the same bits.
    pub ldmatrix: bool,
    /// K and V tiles staged by async copies (`cp.async`, 16 bytes a copy) into two buffers
    /// each, the next tile's copies in flight while this one computes, instead of global loads
    /// held in registers and stored after the barrier. f16 caches only (the rows land as they
    /// are: a Q8_0 block needs converting), with [`Wide::ldmatrix`] (V row-major).
    pub async_kv: bool,
    /// The workgroups of the last rows (the most keys, causal) first: workgroup `y` takes row
    /// group `n - 1 - y`, so that the hardware, which starts workgroups in order of their ids,
    /// starts the longest ones first and the short ones fill the tail (the same rows, the same
    /// bits). Without it the longest start last: at L = 2048 (128 row groups a KV head, 396
    /// workgroups in flight on an H200 at 3 an SM) a list-scheduling model of the workgroups'
    /// keys gives 1.40x the ideal time in order against 1.12x longest first.
    pub heavy_first: bool,
    /// A register cap on sm_90 instead of [`Wide::cap`] (its ptxas fits where sm_80's,
    /// sm_86's and sm_89's spill).
    pub cap_sm90: Option<u32>,
}

/// Q fragments in registers, the mask and rescale skips: the fastest on the H200 with an f16
/// cache at L = 512, 2048 and 8192 (call 5).
pub const W4G: Wide = Wide {
    name: "w4g",
    q_lds: false,
    cap: None,
    skips: true,
    ldmatrix: false,
    async_kv: false,
    heavy_first: true,
    cap_sm90: None,
};
/// Q fragments from LDS (168 registers: three workgroups an SM on sm_90), no skips: the fastest
/// with a Q8_0 cache (call 5).
pub const W4QS: Wide = Wide { name: "w4qs", q_lds: true, cap: Some(168), skips: false, ..W4G };
/// [`W4G`] with its fragments by `ld_matrix` ([`Wide::ldmatrix`]).
pub const W4GX: Wide = Wide { name: "w4gx", ldmatrix: true, ..W4G };
/// [`W4QS`] with its fragments (and Q's) by `ld_matrix`.
pub const W4QSX: Wide = Wide { name: "w4qsx", ldmatrix: true, ..W4QS };
/// [`W4QSX`] capped at 128 registers on sm_90 (16 warps an SM; 12 at `w4qsx`'s 168), built for
/// Q8_0 caches: with an f16 cache it spills 32 bytes at 128 (and with Q8_0 on sm_80 to sm_89, 8
/// bytes: there it is `w4qsx`).
pub const W4QSXC: Wide = Wide { name: "w4qsxc", cap_sm90: Some(128), ..W4QSX };
/// [`W4GX`] with the row groups in order (light first: the workgroups of the first rows, the
/// fewest keys), to time [`Wide::heavy_first`] against.
pub const W4GXL: Wide = Wide { name: "w4gxl", heavy_first: false, ..W4GX };
/// [`W4GX`] with K and V staged by async copies ([`Wide::async_kv`]; f16 caches): without the
/// loads in flight, 165 registers instead of 227 at head dim 128 on sm_90 (12 warps an SM
/// instead of 8). Capped at 128 (16 warps) it spills 48 bytes; Q from LDS beside the two
/// buffers would take 51 KiB a workgroup, past sm_90's 48.
pub const W4GXA: Wide = Wide { name: "w4gxa", async_kv: true, ..W4GX };
/// Keys a staged tile: one softmax block ([`KEY_BLOCK_WIDE`], the order's block on the archs of
/// the wide variants).
pub const KEY_TILE: u32 = KEY_BLOCK_WIDE;
/// Halves of padding after each staged row.
const PAD: u32 = 8;

/// Whether the wide variants have their own code on `t` at `wave` (NVIDIA's m16n8k16 f16
/// shape); elsewhere they are the baseline's code, not routed.
pub fn wide_fits(t: &Target, wave: u32) -> bool {
    prefill_kind(t, wave).is_some_and(|k| k.shape() == MmaShape::NvM16n8k16F16)
}

/// The archs where the wide variants are routed.
pub fn wide_archs() -> Vec<String> {
    kiln_ir::TARGETS
        .iter()
        .filter(|t| wide_fits(t, t.default_wave()))
        .map(|t| t.name.to_string())
        .collect()
}

/// A tile's rows of one cache in flight: per piece, the tile key, the first dim, whether the lane
/// has the piece, and the raw loads (f16: one 8-half vector; Q8_0: a block's scale bits and 8
/// words of quants).
struct Tile {
    pieces: Vec<(Value, Value, Value, Vec<Value>)>,
}

impl Tile {
    fn values(&self) -> Vec<Value> {
        carried(self.pieces.iter().map(|(k, c, v, raw)| ([*k, *c, *v], raw.as_slice())))
    }

    fn from_values(like: &Tile, vals: &[Value]) -> Tile {
        let lens = like.pieces.iter().map(|(_, _, _, raw)| raw.len());
        let pieces = uncarried(lens, vals).map(|([k, c, v], raw)| (k, c, v, raw)).collect();
        Tile { pieces }
    }
}

/// One lane's piece of a staged tile ([`W::piece`]).
struct Piece {
    valid: Value,
    key: Value,
    part: Value,
    row: Value,
}

/// What the pieces of the kernel share.
struct W {
    cache: CacheType,
    d: u32,
    local: Value,
    /// `h * ctx_max`: the KV head's first cache row.
    head_row: Value,
    /// The workgroup's last key.
    last_key: Value,
    k_lds: LdsSlot,
    v_lds: LdsSlot,
    /// With [`Wide::ldmatrix`], the lane's part of the row index `ld_matrix` names in a staged
    /// `[row][D + PAD]` block: `(l % 8) (D + PAD) + 8 (l / 8)` (K^T: keys, dims of two k
    /// steps) and `(l % 8 + 8 ((l / 8) % 2)) (D + PAD) + 8 (l / 16)` (Q's A fragment, and V's
    /// rows: keys, dims of two n tiles).
    ldm: Option<(Value, Value)>,
}

impl W {
    /// Issues the loads of keys `kt0 .. kt0 + KEY_TILE` (clamped to the last key) of cache `p`:
    /// piece `local + j * lanes`, key `piece % 32` (consecutive lanes, consecutive keys: the
    /// transposed V stores hit distinct banks), f16 by 16-byte loads, Q8_0 a block a piece.
    fn fetch(&self, b: &mut KernelBuilder, p: Param, kt0: Value) -> Tile {
        let (per_key, row_elems) = match self.cache {
            CacheType::F16 => (self.d / 8, self.d),
            CacheType::Q8_0 => (self.d / 32, self.cache.row_bytes(self.d)),
        };
        let n = KEY_TILE * per_key;
        let pieces = (0..n.div_ceil(WAVES * 32))
            .map(|j| {
                let Piece { valid, key, part, row } = self.piece(b, j, n, kt0, true);
                let re = b.u32(row_elems);
                let base = b.mul(row, re);
                match self.cache {
                    CacheType::F16 => {
                        let c8 = b.u32(8);
                        let col = b.mul(part, c8);
                        let at = b.add(base, col);
                        let x = b.load(p, at, Type::vector(ScalarType::F16, 8));
                        (key, col, valid, vec![x])
                    }
                    CacheType::Q8_0 => {
                        let c34 = b.u32(34);
                        let boff = b.mul(part, c34);
                        let blk = b.add(base, boff);
                        let raw = q8_block(b, p, blk);
                        let c32 = b.u32(32);
                        let col = b.mul(part, c32);
                        (key, col, valid, raw)
                    }
                }
            })
            .collect();
        Tile { pieces }
    }

    /// Piece `local + j * lanes` of the `n` of a tile from key `kt0`: whether it exists (with
    /// `clamp`, the index is clamped for the loads; without, every lane's pieces exist), its
    /// tile key `piece % 32`, its part of the row `piece / 32`, and the cache row of its key
    /// (clamped to the last key).
    fn piece(&self, b: &mut KernelBuilder, j: u32, n: u32, kt0: Value, clamp: bool) -> Piece {
        let jl = b.u32(j * WAVES * 32);
        let idx = b.add(self.local, jl);
        let (valid, idx) = if clamp {
            let nv = b.u32(n);
            let valid = b.lt(idx, nv);
            let last = b.u32(n - 1);
            (valid, b.min(idx, last))
        } else {
            assert!(n.is_multiple_of(WAVES * 32), "every lane has its pieces");
            (b.bool(true), idx)
        };
        let kt = b.u32(KEY_TILE);
        let key = b.rem(idx, kt);
        let part = b.div(idx, kt);
        let k = b.add(kt0, key);
        let k = b.min(k, self.last_key);
        let row = b.add(self.head_row, k);
        Piece { valid, key, part, row }
    }

    /// Async copies of the f16 rows of keys `kt0 .. kt0 + KEY_TILE` (clamped to the last key) of
    /// cache `p` into buffer `buf` (`[key][D + PAD]`) of `slot`, 16 bytes a copy, the pieces of
    /// [`W::fetch`].
    fn copy(&self, b: &mut KernelBuilder, p: Param, slot: LdsSlot, kt0: Value, buf: Value) {
        assert_eq!(self.cache, CacheType::F16, "async staging copies f16 rows");
        let n = KEY_TILE * self.d / 8;
        for j in 0..n / (WAVES * 32) {
            let Piece { key, part, row, .. } = self.piece(b, j, n, kt0, false);
            let c8 = b.u32(8);
            let col = b.mul(part, c8);
            let dd = b.u32(self.d);
            let src = b.mul(row, dd);
            let src = b.add(src, col);
            let two = b.u32(2);
            let src = b.mul(src, two);
            let per_buf = b.u32(KEY_TILE);
            let at = b.mul(buf, per_buf);
            let at = b.add(at, key);
            let st = b.u32(self.d + PAD);
            let dst = b.mul(at, st);
            let dst = b.add(dst, col);
            let dst = b.mul(dst, two);
            b.async_copy(slot, dst, p, src, 16);
        }
    }

    /// The piece's values as halves (f16 as loaded; Q8_0 `f16(f32(q) * f32(d))`).
    fn halves(&self, b: &mut KernelBuilder, raw: &[Value]) -> Vec<Value> {
        match self.cache {
            CacheType::F16 => (0..8u8).map(|e| b.extract(raw[0], e)).collect(),
            CacheType::Q8_0 => q8_halves(b, raw),
        }
    }

    /// Stores K's tile row-major (`[key][D + PAD]`) by 8-half vectors.
    fn put_k(&self, b: &mut KernelBuilder, t: &Tile) {
        self.put_rows(b, t, self.k_lds)
    }

    /// Stores a tile row-major (`[key][D + PAD]`) into `slot` by 8-half vectors.
    fn put_rows(&self, b: &mut KernelBuilder, t: &Tile, slot: LdsSlot) {
        let stride = b.u32(self.d + PAD);
        for (key, col, valid, raw) in &t.pieces {
            let vecs: Vec<Value> = match self.cache {
                CacheType::F16 => raw.clone(),
                CacheType::Q8_0 => q8_vectors(b, raw),
            };
            let at = b.mul(*key, stride);
            let at = b.add(at, *col);
            b.if_then(*valid, |b| {
                for (j, &v) in vecs.iter().enumerate() {
                    let o = b.u32(8 * j as u32);
                    let a = b.add(at, o);
                    b.store(slot, a, v);
                }
            });
        }
    }

    /// Stores V's tile transposed (`[D][KEY_TILE + PAD]`), a half at a time; with `ld_matrix`
    /// row-major as K's.
    fn put_v(&self, b: &mut KernelBuilder, t: &Tile) {
        if self.ldm.is_some() {
            return self.put_rows(b, t, self.v_lds);
        }
        let stride = b.u32(KEY_TILE + PAD);
        for (key, col, valid, raw) in &t.pieces {
            let hs = self.halves(b, raw);
            let row = b.mul(*col, stride);
            let at = b.add(row, *key);
            b.if_then(*valid, |b| {
                for (e, &x) in hs.iter().enumerate() {
                    let o = b.u32(e as u32 * (KEY_TILE + PAD));
                    let a = b.add(at, o);
                    b.store(self.v_lds, a, x);
                }
            });
        }
    }

    /// The B fragment whose elements are the halves at `at`, `at + 1`, `at + 8`, `at + 9` of
    /// `slot` (`at` even): two 32-bit LDS reads. K's rows give K^T's (k: dim `2t..`, n: key
    /// `g`), V^T's rows V's (k: key `2t..`, n: dim `g`).
    fn b_fragment(&self, b: &mut KernelBuilder, kind: MmaKind, slot: LdsSlot, at: Value) -> Value {
        let pair = |b: &mut KernelBuilder, a: Value| {
            let v = b.load(slot, a, Type::vector(ScalarType::F16, 2));
            [b.extract(v, 0), b.extract(v, 1)]
        };
        let [x0, x1] = pair(b, at);
        let eight = b.u32(8);
        let at8 = b.add(at, eight);
        let [x2, x3] = pair(b, at8);
        b.fragment_of(kind, FragmentRole::B, &[x0, x1, x2, x3])
    }
}

/// A wide kernel (see the module doc); on an arch without NVIDIA's m16n8k16 f16 shape, the
/// baseline's code under this variant's name.
pub(super) fn attention_wide(
    t: &Target,
    wave: u32,
    cache: CacheType,
    d: u32,
    io: Io,
    shape: Wide,
) -> Kernel {
    let name = format!("{}_{}", io.family(cache, d), shape.name);
    let waves = WAVES;
    let kind = match prefill_kind(t, wave).filter(|_| wide_fits(t, wave)) {
        Some(kind) => kind,
        None => {
            let mut k = attention(t, wave, cache, d, io, 1, false);
            k.name = name;
            return k;
        }
    };
    check_lane_maps(kind);
    assert_eq!(key_block(t, wave), KEY_TILE, "a staged tile is one block of the order");
    let mut b = KernelBuilder::new(name, wave);
    b.workgroup_size([waves * wave, 1, 1]);
    let cap = if t.name == "sm_90" { shape.cap_sm90.or(shape.cap) } else { shape.cap };
    if let Some(cap) = cap {
        b.max_registers(cap);
    }
    b.const_param("head_dim", d as i64);
    b.const_param("waves", waves as i64);
    b.const_param("q_lds", shape.q_lds as i64);
    b.const_param("key_block", KEY_TILE as i64);
    b.const_param("key_tile", KEY_TILE as i64);
    let rows_wg = waves * TILE_ROWS;
    let abi = declare(&mut b, cache, d, io, rows_wg as u64);
    let (k_cache, v_cache) = (abi.k_cache, abi.v_cache);
    assert!(
        !shape.async_kv || (shape.ldmatrix && cache == CacheType::F16),
        "async staging is for f16 rows read by ld_matrix"
    );
    let bufs = if shape.async_kv { 2 } else { 1 };
    let k_lds = b.lds("k_tile", ScalarType::F16, bufs * KEY_TILE * (d + PAD));
    let v_lds = if shape.ldmatrix {
        b.lds("v_tile", ScalarType::F16, bufs * KEY_TILE * (d + PAD))
    } else {
        b.lds("vt_tile", ScalarType::F16, d * (KEY_TILE + PAD))
    };

    let lane = b.lane();
    let local = b.local_id();
    let wave_id = b.wave();
    let h = b.workgroup_id(Dim::X);
    let rg = row_group(&mut b, shape.heavy_first);
    let Args { pos: pos_v, group: g_v, ctx_max: ctx_v, scale: sc_v, n_q, rows } = abi.args(&mut b);
    let one = b.u32(1);
    let zero = b.u32(0);
    let rows_m1 = b.sub(rows, one);
    // `kv_len` of the rows `i0 .. i0 + n`: up to the last one's token, inside the cache.
    let kv_len_of = |b: &mut KernelBuilder, i0: Value, n: u32| {
        let span = b.u32(n - 1);
        let last_i = b.add(i0, span);
        let last_i = b.min(last_i, rows_m1);
        let t_last = b.div(last_i, g_v);
        let end = b.add(pos_v, t_last);
        let end = b.add(end, one);
        b.min(end, ctx_v)
    };
    let rwg = b.u32(rows_wg);
    let i0_wg = b.mul(rg, rwg);
    let kv_len = kv_len_of(&mut b, i0_wg, rows_wg);
    let last_key = b.sub(kv_len, one);
    let ktv = b.u32(KEY_TILE);
    let kt_m1 = b.u32(KEY_TILE - 1);
    let n_tiles = b.add(kv_len, kt_m1);
    let n_tiles = b.div(n_tiles, ktv);
    // The wave's rows (the baseline's workgroup `4 y + w`) and their last key.
    let c16 = b.u32(TILE_ROWS);
    let woff = b.mul(wave_id, c16);
    let i0 = b.add(i0_wg, woff);
    let kv_len_w = kv_len_of(&mut b, i0, TILE_ROWS);
    let last_key_w = b.sub(kv_len_w, one);
    // Lane `(g, t)`: rows `g` and `g + 8` of the wave's tile, their last keys and output rows.
    let two = b.u32(2);
    let three = b.u32(3);
    let g = b.shr(lane, two);
    let t4 = b.and(lane, three);
    let two_t = b.mul(t4, two);
    let lim_first = {
        let (_, tok, _) = row_of(&mut b, i0, rows, g_v, h, n_q, d);
        let l = b.add(pos_v, tok);
        b.min(l, last_key_w)
    };
    // (The output rows are found again after the loop: held across it, they take registers.)
    let row_r = |b: &mut KernelBuilder, r: u32| {
        let off = b.u32(8 * r);
        let rr = b.add(g, off);
        let i = b.add(i0, rr);
        row_of(b, i, rows, g_v, h, n_q, d)
    };
    let lim: Vec<Value> = (0..2u32)
        .map(|r| {
            let (_, tok, _) = row_r(&mut b, r);
            let l = b.add(pos_v, tok);
            b.min(l, last_key_w)
        })
        .collect();
    let qf = if shape.q_lds {
        // The workgroup's Q rows staged once (`[row][D + PAD]`) by 8-half vectors.
        let slot = b.lds("q_tile", ScalarType::F16, rows_wg * (d + PAD));
        let per_row = d / 8;
        let n = b.u32(rows_wg * per_row);
        let lanes = b.u32(waves * wave);
        let pr = b.u32(per_row);
        let qst = b.u32(d + PAD);
        b.for_range(local, n, lanes, 1, &[], |b, idx, _| {
            let r = b.div(idx, pr);
            let ch = b.rem(idx, pr);
            let c8 = b.u32(8);
            let col = b.mul(ch, c8);
            let i = b.add(i0_wg, r);
            let (_, _, at) = row_of(b, i, rows, g_v, h, n_q, d);
            let at = b.add(at, col);
            let x = abi.q_halves8(b, at);
            let to = b.mul(r, qst);
            let to = b.add(to, col);
            b.store(slot, to, x);
            vec![]
        });
        QSrc::Lds { slot, base: woff, ldm: shape.ldmatrix }
    } else {
        QSrc::Regs(q_fragments(&mut b, kind, &abi, i0, (rows, g_v, h, n_q), d))
    };
    let head_row = b.mul(h, ctx_v);
    let ldm = shape.ldmatrix.then(|| {
        let (c3, c4, c7, c8) = (b.u32(3), b.u32(4), b.u32(7), b.u32(8));
        let st = b.u32(d + PAD);
        let r8 = b.and(lane, c7);
        let m = b.shr(lane, c3);
        let k_off = b.mul(r8, st);
        let m8 = b.mul(m, c8);
        let k_off = b.add(k_off, m8);
        let hi = b.and(m, one);
        let hi = b.mul(hi, c8);
        let r = b.add(r8, hi);
        let a_off = b.mul(r, st);
        let q = b.shr(lane, c4);
        let q8 = b.mul(q, c8);
        let a_off = b.add(a_off, q8);
        (k_off, a_off)
    });
    let w = W { cache, d, local, head_row, last_key, k_lds, v_lds, ldm };

    let fz = b.f32(0.0);
    let ninf = b.f32(f32::NEG_INFINITY);
    // State: `m` and `l` of both rows, then `O` (`D / 8` C tiles of 4), then the next tile's
    // loads (K, then V).
    let n_o = (d / 8 * 4) as usize;
    let mut init = vec![ninf, fz, ninf, fz];
    init.extend(std::iter::repeat_n(fz, n_o));
    let block = |b: &mut KernelBuilder, kt0: Value, kv_base: Option<Value>, st: &[Value]| {
        // Both 16-key steps' scores first (four independent chains of instructions), then the
        // block's softmax and P V.
        let ctx = Block {
            kind,
            qf: &qf,
            w: &w,
            lim: &lim,
            lim_first,
            shape,
            g,
            two_t,
            scale: sc_v,
            kv_base,
        };
        let s: Vec<[Value; 2]> = (0..KEY_TILE / MMA_K).map(|sub| scores(b, &ctx, sub)).collect();
        fold(b, &ctx, kt0, &s, st)
    };
    let state = if shape.async_kv {
        // Tile `i` in buffer `i % 2`: tile `i + 1`'s copies are issued (after the last step's
        // barrier: nobody reads that buffer) before tile `i` is waited for.
        let copy = |b: &mut KernelBuilder, tile: Value| {
            let kt0 = b.mul(tile, ktv);
            let two = b.u32(2);
            let buf = b.rem(tile, two);
            w.copy(b, k_cache, k_lds, kt0, buf);
            w.copy(b, v_cache, v_lds, kt0, buf);
        };
        copy(&mut b, zero);
        b.async_wait(1);
        let st = b.for_range(zero, n_tiles, one, 1, &init, |b, tile, st| {
            let kt0 = b.mul(tile, ktv);
            let t1 = b.add(tile, one);
            copy(b, t1);
            b.async_wait(1);
            b.barrier(BarrierKind::Lds);
            let two = b.u32(2);
            let buf = b.rem(tile, two);
            let per_buf = b.u32(KEY_TILE * (d + PAD));
            let base = b.mul(buf, per_buf);
            let next = block(b, kt0, Some(base), st);
            // The next step copies into the buffer this one read.
            b.barrier(BarrierKind::Lds);
            next
        });
        b.async_wait(0);
        st
    } else {
        let width = init.len();
        let k_like = w.fetch(&mut b, k_cache, zero);
        let v_like = w.fetch(&mut b, v_cache, zero);
        let k_width = k_like.values().len();
        init.extend(k_like.values());
        init.extend(v_like.values());
        b.for_range(zero, n_tiles, one, 1, &init, |b, tile, st| {
            let (st, ahead) = st.split_at(width);
            let kt0 = b.mul(tile, ktv);
            // The previous tile's LDS reads are done before this tile's writes; this tile's
            // loads were issued during the previous one.
            b.barrier(BarrierKind::Lds);
            let k_now = Tile::from_values(&k_like, &ahead[..k_width]);
            let v_now = Tile::from_values(&v_like, &ahead[k_width..]);
            w.put_k(b, &k_now);
            w.put_v(b, &v_now);
            b.barrier(BarrierKind::Lds);
            let kt1 = b.add(kt0, ktv);
            let mut ahead = w.fetch(b, k_cache, kt1).values();
            ahead.extend(w.fetch(b, v_cache, kt1).values());
            let mut st = block(b, kt0, None, st);
            st.extend(ahead);
            st
        })
    };
    // `out = o / l`.
    let out_row: Vec<(Value, Value)> = (0..2u32)
        .map(|r| {
            let (valid, _, at) = row_r(&mut b, r);
            (valid, at)
        })
        .collect();
    for dn in 0..d / 8 {
        for e in 0..4u32 {
            let r = (e / 2) as usize;
            let o = state[4 + (dn * 4 + e) as usize];
            let y = b.div(o, state[2 * r + 1]);
            let dim = b.u32(dn * 8 + e % 2);
            let dim = b.add(dim, two_t);
            let (valid, at) = out_row[r];
            let at = b.add(at, dim);
            abi.store_out(&mut b, valid, at, y);
        }
    }
    b.finish()
}

/// Where the A fragments of Q come from.
enum QSrc {
    /// Registers, a dim step each.
    Regs(Vec<Value>),
    /// The staged Q rows (`[row][D + PAD]`), the wave's from row `base`; `ldm`: read by
    /// `ld_matrix` (the lane's offset is [`W::ldm`]'s second).
    Lds { slot: LdsSlot, base: Value, ldm: bool },
}

impl QSrc {
    /// The A fragment of dims `16 ds ..`: rows `g`, `g + 8`, dims `2t`, `2t + 1`, `2t + 8`,
    /// `2t + 9` (four pairs of halves).
    #[allow(clippy::too_many_arguments)]
    fn frag(
        &self,
        b: &mut KernelBuilder,
        kind: MmaKind,
        w: &W,
        ds: u32,
        g: Value,
        two_t: Value,
    ) -> Value {
        let d = w.d;
        match self {
            QSrc::Regs(f) => f[ds as usize],
            QSrc::Lds { slot, base, ldm: true } => {
                let (_, a_off) = w.ldm.expect("the lane offsets of ld_matrix");
                let st = b.u32(d + PAD);
                let at = b.mul(*base, st);
                let o = b.u32(ds * MMA_K);
                let at = b.add(at, o);
                let at = b.add(at, a_off);
                let m = b.ld_matrix(*slot, at, 4, false);
                let els: Vec<Value> = (0..8u8).map(|e| b.extract(m, e)).collect();
                b.fragment_of(kind, FragmentRole::A, &els)
            }
            QSrc::Lds { slot, base, ldm: false } => {
                let row = b.add(*base, g);
                let st = b.u32(d + PAD);
                let at = b.mul(row, st);
                let o = b.u32(ds * MMA_K);
                let at = b.add(at, o);
                let at = b.add(at, two_t);
                let mut els = vec![];
                for (dr, dc) in [(0, 0), (8, 0), (0, 8), (8, 8)] {
                    let o = b.u32(dr * (d + PAD) + dc);
                    let a = b.add(at, o);
                    let v = b.load(*slot, a, Type::vector(ScalarType::F16, 2));
                    els.push(b.extract(v, 0));
                    els.push(b.extract(v, 1));
                }
                b.fragment_of(kind, FragmentRole::A, &els)
            }
        }
    }
}

/// What [`fold`] and [`scores`] read.
struct Block<'a> {
    kind: MmaKind,
    qf: &'a QSrc,
    w: &'a W,
    /// The last key of rows `g` and `g + 8`.
    lim: &'a [Value],
    /// The last key of the wave's first row (the fewest).
    lim_first: Value,
    shape: Wide,
    g: Value,
    two_t: Value,
    scale: Value,
    /// The staged K and V tiles' first element in their slots (the buffer of an async tile).
    kv_base: Option<Value>,
}

impl Block<'_> {
    /// A lane's `ld_matrix` row offset in the staged K or V tile: `off` in the tile's buffer
    /// ([`Block::kv_base`]).
    fn in_tile(&self, b: &mut KernelBuilder, off: Value) -> Value {
        match self.kv_base {
            Some(x) => b.add(off, x),
            None => off,
        }
    }
}

/// `S` of block `sub` of the staged tile: two tiles of 8 keys, each a chain of `D / 16`
/// instructions from a zero accumulator; the K^T fragment (k: dim, n: key `g`) from K's rows.
fn scores(b: &mut KernelBuilder, c: &Block, sub: u32) -> [Value; 2] {
    let (kind, d) = (c.kind, c.w.d);
    let kst = b.u32(d + PAD);
    let z = b.f32(0.0);
    let mut s = [z; 2];
    for (ns, sn) in s.iter_mut().enumerate() {
        let base = match c.w.ldm {
            Some((k_off, _)) => LaneBase::LdMatrix(c.in_tile(b, k_off)),
            None => {
                let key = b.u32(sub * MMA_K + ns as u32 * 8);
                let key = b.add(key, c.g);
                let row = b.mul(key, kst);
                LaneBase::Reads(b.add(row, c.two_t))
            }
        };
        let mut acc = b.fragment_splat(kind, FragmentRole::C, z);
        // With `ld_matrix`: the K^T fragments of two dim steps a load (the second kept).
        let mut next_kb = None;
        for ds in 0..d / MMA_K {
            let qa = c.qf.frag(b, kind, c.w, ds, c.g, c.two_t);
            let kb = match (base, next_kb.take()) {
                (_, Some(kb)) => kb,
                (LaneBase::LdMatrix(k_off), None) => {
                    let o = b.u32((sub * MMA_K + ns as u32 * 8) * (d + PAD) + ds * MMA_K);
                    let at = b.add(k_off, o);
                    let [f0, f1] = two_b_fragments(b, kind, c.w.k_lds, at, false);
                    next_kb = Some(f1);
                    f0
                }
                (LaneBase::Reads(row), None) => {
                    let o = b.u32(ds * MMA_K);
                    let at = b.add(row, o);
                    c.w.b_fragment(b, kind, c.w.k_lds, at)
                }
            };
            acc = b.mma(kind, qa, kb, acc);
        }
        *sn = acc;
    }
    s
}

/// Where a lane's B fragments of a block are read from in LDS: its part of the `ld_matrix` row
/// index ([`W::ldm`]), or the first element of its two 32-bit reads ([`W::b_fragment`]).
#[derive(Clone, Copy)]
enum LaneBase {
    LdMatrix(Value),
    Reads(Value),
}

/// Two B fragments by one `ld_matrix` of four matrices from the lane's row index `at`: matrices
/// 0-1 the first fragment's (its k rows 0-7 and 8-15), 2-3 the second's.
fn two_b_fragments(
    b: &mut KernelBuilder,
    kind: MmaKind,
    slot: LdsSlot,
    at: Value,
    trans: bool,
) -> [Value; 2] {
    let m = b.ld_matrix(slot, at, 4, trans);
    [0u8, 4].map(|o| {
        let els: Vec<Value> = (o..o + 4).map(|e| b.extract(m, e)).collect();
        b.fragment_of(kind, FragmentRole::B, &els)
    })
}

/// `x` of the four lanes of a quad (`g` fixed) combined by `op` with xor shuffles 1 and 2:
/// `op(op(x_t, x_t^1), op(x_t^2, x_t^3))` in every lane, the same bits in all four where `op`
/// commutes (the IR's `max` and `add` do).
fn over_quad(
    b: &mut KernelBuilder,
    x: Value,
    op: fn(&mut KernelBuilder, Value, Value) -> Value,
) -> Value {
    let o1 = b.shuffle_xor(x, 1);
    let x = op(b, x, o1);
    let o2 = b.shuffle_xor(x, 2);
    op(b, x, o2)
}

/// The softmax of the block at `k0` (its 16-key steps' scores `s`) for both rows, then
/// `O * a + P V`. `st` is `(m, l)` of both rows, then `O`. A block past a wave's keys leaves `st`
/// as it is (every score masked: `m' = m`, `a = 1`, `p = 0`), as long as the V rows are finite.
fn fold(b: &mut KernelBuilder, c: &Block, k0: Value, s: &[[Value; 2]], st: &[Value]) -> Vec<Value> {
    let (kind, d) = (c.kind, c.w.d);
    // The softmax of rows g (C elements 0, 1) and g + 8 (2, 3).
    let ninf = b.f32(f32::NEG_INFINITY);
    let mut next = Vec::with_capacity(st.len());
    let mut alphas = vec![];
    let mut ps = vec![];
    // Keys `16 sub + (2t, 2t + 1, 8 + 2t, 9 + 2t)` of the block for both rows (`sub` the 16-key
    // step), scaled, then masked (`-inf` past a row's last key). A block every row of the wave
    // sees whole (its last key at most the wave's first row's last key) skips the masks:
    // `select` would return every value.
    let keys: Vec<(usize, usize, u32)> = (0..s.len())
        .flat_map(|sub| [(0, 0u32), (0, 1), (1, 0), (1, 1)].map(|(ns, odd)| (sub, ns, odd)))
        .collect();
    let per_row = keys.len();
    let scaled: Vec<Value> = (0..2u32)
        .flat_map(|r| keys.iter().map(move |&k| (r, k)))
        .map(|(r, (sub, ns, odd))| {
            let x = b.extract(s[sub][ns], (2 * r + odd) as u8);
            b.mul(x, c.scale)
        })
        .collect();
    let mask = |b: &mut KernelBuilder| -> Vec<Value> {
        (0..2usize)
            .flat_map(|r| keys.iter().map(move |&k| (r, k)))
            .zip(&scaled)
            .map(|((r, (sub, ns, odd)), &x)| {
                let off = b.u32(sub as u32 * MMA_K + ns as u32 * 8 + odd);
                let key = b.add(k0, off);
                let key = b.add(key, c.two_t);
                let sees = b.le(key, c.lim[r]);
                b.select(sees, x, ninf)
            })
            .collect()
    };
    let masked = if c.shape.skips {
        let last = b.u32(KEY_TILE - 1);
        let last = b.add(k0, last);
        let whole = b.le(last, c.lim_first);
        b.if_else(whole, |_| scaled.clone(), mask)
    } else {
        mask(b)
    };
    for r in 0..2usize {
        let (m, l) = (st[2 * r], st[2 * r + 1]);
        let sv = &masked[per_row * r..per_row * (r + 1)];
        let mx = tree(b, sv, KernelBuilder::max);
        let mx = over_quad(b, mx, KernelBuilder::max);
        let m2 = b.max(m, mx);
        let a = exp_sub(b, m, m2);
        // p of keys (2t, 2t + 1) and (8 + 2t, 9 + 2t) of each step as f16 pairs (packed
        // conversions).
        let pairs: Vec<Value> = (0..per_row / 2)
            .map(|i| {
                let x0 = exp_sub_weight(b, sv[2 * i], m2);
                let x1 = exp_sub_weight(b, sv[2 * i + 1], m2);
                let v = b.make_vector(&[x0, x1]);
                b.packed_convert(PackedConvertOp::F32x2ToF16x2, v)
            })
            .collect();
        let p: Vec<Value> = pairs.iter().flat_map(|&v| [0u8, 1].map(|e| b.extract(v, e))).collect();
        // l' = l a + w, w the block's tree (`super::weights_sum`): each lane adds its own keys,
        // then the quad by xor shuffles 1 and 2 (each addition commutes, so every lane of the
        // quad holds the same bits).
        let own: Vec<Value> = p.iter().map(|&h| b.convert(h, Type::F32)).collect();
        let u = tree(b, &own, KernelBuilder::add);
        let w = over_quad(b, u, KernelBuilder::add);
        let la = b.mul(l, a);
        let l2 = b.add(la, w);
        next.push(m2);
        next.push(l2);
        alphas.push(a);
        ps.push(p);
    }
    // P of each step as the A fragment: (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1), then keys
    // + 8.
    let pa: Vec<Value> = (0..s.len())
        .map(|sub| {
            let q = |r: usize, i: usize| ps[r][4 * sub + i];
            let els = [q(0, 0), q(0, 1), q(1, 0), q(1, 1), q(0, 2), q(0, 3), q(1, 2), q(1, 3)];
            b.fragment_of(kind, FragmentRole::A, &els)
        })
        .collect();
    // O * a + P V, a tile of 8 dims at a time, the steps chained in key order; V's rows give
    // the B fragment (k: key, n: dim g).
    let bases: Vec<LaneBase> = (0..s.len() as u32)
        .map(|sub| match c.w.ldm {
            Some((_, a_off)) => LaneBase::LdMatrix(c.in_tile(b, a_off)),
            None => {
                let vst = b.u32(KEY_TILE + PAD);
                let col0 = b.mul(c.g, vst);
                let key0 = b.u32(sub * MMA_K);
                let col0 = b.add(col0, key0);
                LaneBase::Reads(b.add(col0, c.two_t))
            }
        })
        .collect();
    let o = &st[4..];
    let pv = |b: &mut KernelBuilder, scale: bool| -> Vec<Value> {
        let mut out = Vec::with_capacity(o.len());
        // With `ld_matrix`: V's fragments of two dim tiles a load (the second kept).
        let mut next_vb: Vec<Option<Value>> = vec![None; s.len()];
        for dn in 0..d / 8 {
            let base = dn as usize * 4;
            let els: Vec<Value> = (0..4)
                .map(|e| if scale { b.mul(o[base + e], alphas[e / 2]) } else { o[base + e] })
                .collect();
            let mut acc = b.fragment_of(kind, FragmentRole::C, &els);
            for (sub, lb) in bases.iter().enumerate() {
                let vb = match (*lb, next_vb[sub].take()) {
                    (_, Some(vb)) => vb,
                    (LaneBase::LdMatrix(a_off), None) => {
                        let o = b.u32(sub as u32 * MMA_K * (d + PAD) + dn * 8);
                        let at = b.add(a_off, o);
                        let [f0, f1] = two_b_fragments(b, kind, c.w.v_lds, at, true);
                        next_vb[sub] = Some(f1);
                        f0
                    }
                    (LaneBase::Reads(col0), None) => {
                        let off = b.u32(dn * 8 * (KEY_TILE + PAD));
                        let at = b.add(col0, off);
                        c.w.b_fragment(b, kind, c.w.v_lds, at)
                    }
                };
                acc = b.mma(kind, pa[sub], vb, acc);
            }
            out.extend((0..4u8).map(|e| b.extract(acc, e)));
        }
        out
    };
    // `O * a` is `O` where `a = 1` (its bits, whatever `O`): when every lane's two rows have
    // `a = 1` (the running maxima did not move), the wave skips the 64 multiplies.
    let new_o = if c.shape.skips {
        let one = b.f32(1.0);
        let same0 = b.eq(alphas[0], one);
        let same1 = b.eq(alphas[1], one);
        let same = b.and(same0, same1);
        let moved = b.not(same);
        let moved = b.ballot(moved);
        let none = b.u64(0);
        let still = b.eq(moved, none);
        b.if_else(still, |b| pv(b, false), |b| pv(b, true))
    } else {
        pv(b, true)
    };
    next.extend(new_o);
    next
}

/// The lane maps this kernel is written for (NVIDIA m16n8k16: `g = lane >> 2`, `t = lane & 3`):
/// A `(g + 8((e/2)%2), 2t + e%2 + 8(e/4))`, B `(2t + e%2 + 8(e/2), g)`, C `(g + 8(e/2), 2t + e%2)`.
fn check_lane_maps(kind: MmaKind) {
    let s = kind.shape();
    for lane in 0..32u32 {
        let (g, t) = (lane >> 2, lane & 3);
        for e in 0..8 {
            let want = (g + 8 * ((e / 2) % 2), 2 * t + e % 2 + 8 * (e / 4));
            assert_eq!(
                s.coord(FragmentRole::A, lane, e).ok(),
                Some(want),
                "A lane {lane} element {e}"
            );
        }
        for e in 0..4 {
            let want = (2 * t + e % 2 + 8 * (e / 2), g);
            assert_eq!(
                s.coord(FragmentRole::B, lane, e).ok(),
                Some(want),
                "B lane {lane} element {e}"
            );
            let want = (g + 8 * (e / 2), 2 * t + e % 2);
            assert_eq!(
                s.coord(FragmentRole::C, lane, e).ok(),
                Some(want),
                "C lane {lane} element {e}"
            );
        }
    }
}
