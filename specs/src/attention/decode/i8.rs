//! `attention_decode_q8_0_i8_d{64,128}`: decode attention over a Q8_0 cache with both products
//! in 8-bit integers (q quantized a 32-dimension block, P quantized a chunk and V block), so that
//! NVIDIA's `mma.sync m16n8k32 s8` computes them exactly. The ABI, the splits, the workspaces
//! and step 3 (the combine) are `attention_decode_q8_0_d*`'s ([`super`]); steps 1 and 2 are
//! below. Every variant gives the baseline's bits, every device the interpreter's, at wave 32
//! and 64 alike (the chunk is 32 keys whatever the wave).
//!
//! # The order (part of the result; every variant keeps it)
//! Chunks of [`CHUNK`] = 32 keys (`n_chunks = ceil(kv_len / 32)`), splits of `cps =
//! ceil(n_chunks / MAX_SPLITS)` consecutive chunks. For every row:
//! 1. q of the row is quantized a 32-dimension block `b` as `quantize_q8_1s_f32` does (ggml's
//!    Q8_1): `d = amax / 127`, `id = d ? 1/d : 0`, `qq = roundf(x id)` (halves away from
//!    zero) as `i8`, and the block's scale `d_q(b) = f32(f16(d))`. The score of a key is,
//!    over the blocks in order from `s = +0`, `s = fma(f32(dot_b), d_q(b) * f32(d_k(b)), s)`
//!    with `dot_b` the exact `i32` dot product of `qq` and the key's quants over the block
//!    (`d_q * d_k` is exact: two f16 values); then `s * scale`, or `-inf` for a key the row
//!    does not see (row `t` sees keys `<= pos + t`).
//! 2. A split runs its chunks in order from `(m, l, acc) = (-inf, 0, 0)`: `mc` = the max of
//!    the chunk's 32 scores (exact), `m' = max(m, mc)`, `a = exp_sub(m, m')`, `p_j =
//!    exp_sub_i8(s_j, m')` (the cheaper exp of a weight quantized next, [`exp_sub_i8`], since
//!    the fortieth session; `p_j = 0` for a key past the context). `l = fma(l, a, l_chunk)` with
//!    `l_chunk` a fixed tree over the chunk's keys `j`: `u_t = ((p[4t] + p[4t+1]) + (p[4t+2] +
//!    p[4t+3])) + ((p[16+4t] + p[17+4t]) + (p[18+4t] + p[19+4t]))` for `t = 0..4`, `l_chunk =
//!    (u_0 + u_1) + (u_2 + u_3)`. For each V block `b` (32 dimensions): `w_j = p_j *
//!    f32(d_v(j, b))`, `amax = max_j |w_j|`, `sc = amax / 127`, `id = min(sc ? 1/sc : 0,
//!    f32::MAX)`, `qw_j` = the exact `w_j id` rounded to the nearest integer, ties to even
//!    ([`p_quant`]: one fma; before the fortieth session `roundf` of the rounded product), as
//!    `i8`, `dot_d = sum_j qw_j vq_j[d]` (exact `i32`) and `acc_d = fma(f32(dot_d), sc, acc_d *
//!    a)` for the block's dimensions `d`. The split's state `(m, l, acc)` goes to `partials`.
//! 3. The combine of [`super`] (maximum first, splits in order, `out = acc / L`), past 32
//!    splits in two levels with groups of [`MMA_WAVES`] = 4 consecutive splits at every wave
//!    size (since the thirty-ninth session; before, one level at every split count).
//!
//! Against float64 attention over the dequantized cache and the unquantized q (the derivation is
//! in docs/attention.md, "The i8 order"; `specs/tests/attention_i8.rs` and
//! `bench/attention_ref.py` check it), an output element is within
//! `max|v| (exp(2e) - 1 + (3 (n_s + 128 + 6) + 4) u) + 1.01 exp(2e) E_P`: `e` bounds a score's
//! error (q's rounding `scale sum_d delta_b |k_d|` with `delta_b = d_b (1/2 + 1e-5) + 127 |d_b -
//! d_q(b)|` a dimension of block `b`, the f32 fmas, the maximum's subtraction and the weight's
//! exp, 1e-5 relative: `2 n 4.5e-38 max|v|` more for its absolute error below -86),
//! `n_s` the f32 order's count of roundings, and `E_P = sum_chunks max_j W_j |d_v(j, b)| / 254
//! * sum_j |vq_j[d]| / L` P's rounding (half a step `sc / 2` a key, carried to the end with the
//! float64 weights `W_j = exp(S_j - M)`, over their sum `L`).
//!
//! # Variants
//! - `baseline` (every arch, wave 32 or 64): one wave a KV head, every row alone, its splits one
//!   after another. A lane a key of the chunk for the scores (lanes 32 and up idle at wave 64);
//!   `l_chunk` by xor shuffles 1, 2, 16, 4, 8 (the tree above, every addition commutes to the
//!   same bits); P's `amax` by a `u32` max butterfly over the 32 key lanes ([`abs_bits`]), each
//!   lane its key's quant ([`p_quant`]); lanes across dimensions for `P V` (each `qw_j` by a
//!   shuffle from lane `j`).
//! - `mma` (NVIDIA sm_80+; elsewhere the baseline's code, not routed): [`super::i8_mma`].
//! - `mma8` (NVIDIA sm_80+, routed; since 2026-12-06 for every `T group`, before only where
//!   `T <= 2` and `group <= 4`): `mma` with tiles of 8 rows (M's upper half zeros, never computed
//!   beyond the `mma`s nor stored): at `T group <= 8` the 16-row tile's second half is padding,
//!   and without its code the kernel fits in 128 registers on sm_90 at head dim 128 instead of
//!   255, so twice the warps an SM; more rows take more tiles.
//! - `mma_lds`: `mma` with each chunk's K rows staged in LDS by coalesced loads (two barriers a
//!   chunk), `mma8_lds`: `mma8` with K and V rows staged (no quant or scale load from the cache
//!   in the chunk's arithmetic); `mma8a`: `mma8_lds` with the chunks staged by async copies,
//!   each half a step ahead of the arithmetic that reads it. At head dim 128 `mma8a` is routed
//!   first for one or two tokens from about 4K keys (`pos >= 4000`) and for eight from `pos >=
//!   16384`; `mma`, `mma_lds` and `mma8_lds` come after `mma8`, so only forced calls take them
//!   (the bench). The figures are in `family.rs` (`i8_family`).

use super::combine::combine_direct;
use super::i8_mma;
use super::{
    attention_order, load_q, row, store_state, CacheType, Ctx, Io, Order, Row, Shape, THREADS,
};
use crate::math::{exp_sub, exp_sub_i8};
use crate::quantize::scale_of;
use kiln_ir::matrix::{MmaKind, MmaShape};
use kiln_ir::{
    BarrierKind, DotOp, IndexUnit, Kernel, KernelBuilder, MemRef, Param, ReduceOp, ScalarType,
    Target, Type, Value,
};

/// Keys a chunk (every variant, every wave size).
pub const CHUNK: u32 = 32;
/// Rows a workgroup of `mma` (M of the matrix shape).
pub const TILE_ROWS: u32 = 16;
/// Waves a workgroup of `mma` (a split each).
pub const MMA_WAVES: u32 = THREADS / 32;

/// The matrix kind of `mma` on `t` at `wave`, if it has it (NVIDIA sm_80+).
pub fn mma_kind(t: &Target, wave: u32) -> Option<MmaKind> {
    let ok = wave == 32
        && MmaShape::on_arch(t.name).contains(&MmaShape::NvM16n8k32I8)
        && t.sm().is_some_and(|sm| sm >= 80);
    ok.then(|| MmaKind::new(MmaShape::NvM16n8k32I8, ScalarType::I8, ScalarType::I8).ok()).flatten()
}

/// The archs where `mma` is routed (at their default wave).
pub fn mma_archs() -> Vec<String> {
    kiln_ir::TARGETS
        .iter()
        .filter(|t| mma_kind(t, t.default_wave()).is_some())
        .map(|t| t.name.to_string())
        .collect()
}

/// Chunks the `_lds` variants stage a wave: K, and V too with tiles of 8 rows.
pub(super) fn staged_chunks(shape: Shape) -> u32 {
    if shape.rows < TILE_ROWS {
        2
    } else {
        1
    }
}

/// Bytes of one staged chunk at head dim `d` (`CHUNK` cache rows).
pub(super) fn chunk_bytes(d: u32) -> u32 {
    CHUNK * CacheType::Q8_0.row_bytes(d)
}

/// Words of LDS the `mma` variants stage chunks in (`stage_k`: [`staged_chunks`] a wave),
/// before step 3's first level puts the waves' states there.
pub(super) fn stage_words(shape: Shape, stage_k: bool, d: u32) -> u32 {
    if stage_k {
        shape.waves * staged_chunks(shape) * chunk_bytes(d) / 4
    } else {
        0
    }
}

/// The `baseline` kernel at head dim `d`.
pub fn baseline_kernel(t: &Target, wave: u32, d: u32) -> Kernel {
    let shape = Shape::BASELINE;
    attention_order(t, wave, CacheType::Q8_0, d, shape, Io::Plain, Order::I8 { stage_k: false })
}

/// How the `mma` variants read the cache's K and V chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Staging {
    /// Every lane loads its keys' quants and scales from the cache (`mma`, `mma8`).
    Cache,
    /// Each chunk's K rows (and V with tiles of 8 rows) staged in the wave's LDS by coalesced
    /// loads, then read (`mma_lds`, `mma8_lds`).
    Lds,
    /// `mma8_lds`'s staging by async copies, K and V each issued half a step ahead of the
    /// arithmetic that reads it (`mma8a`; tiles of 8 rows).
    Async,
}

/// The `mma` kernel at head dim `d` with tiles of `rows` rows (16, or 8: `mma8`), its chunks
/// read as `staging` says: the baseline's code (renamed) where `t` has no [`mma_kind`].
pub fn mma_kernel(t: &Target, wave: u32, d: u32, rows: u32, staging: Staging) -> Kernel {
    assert!(rows == TILE_ROWS || rows == TILE_ROWS / 2, "mma tiles are 16 or 8 rows");
    assert!(staging != Staging::Async || rows < TILE_ROWS, "async staging takes tiles of 8 rows");
    let stage_k = staging != Staging::Cache;
    if mma_kind(t, wave).is_none() {
        let mut k = baseline_kernel(t, wave, d);
        k.name.push_str(match (rows, staging) {
            (TILE_ROWS, Staging::Lds) => "_mma_lds",
            (_, Staging::Lds) => "_mma8_lds",
            (_, Staging::Async) => "_mma8a",
            (TILE_ROWS, Staging::Cache) => "_mma",
            (_, Staging::Cache) => "_mma8",
        });
        return k;
    }
    let shape = Shape {
        rows,
        waves: MMA_WAVES,
        baseline: false,
        threads: THREADS,
        short: false,
        async_k: staging == Staging::Async,
        across: None,
    };
    let order = Order::I8 { stage_k };
    let mut k = attention_order(t, wave, CacheType::Q8_0, d, shape, Io::Plain, order);
    if staging == Staging::Async && t.name == "sm_90" {
        k.max_registers = Some(MMA8A_SM90_REGISTERS[usize::from(d > 64)]);
    } else if (d <= 64 || (rows < TILE_ROWS && !stage_k)) && t.name == "sm_90" {
        k.max_registers = Some(MMA_SM90_REGISTERS);
    } else if rows < TILE_ROWS && t.name == "sm_90" {
        k.max_registers = Some(MMA8_LDS_SM90_REGISTERS);
    }
    k
}

/// Registers a lane of the `mma` variants on sm_90 where that fits without spills: `mma` and
/// `mma_lds` at head dim 64 (176 uncapped) and `mma8` at both (166 uncapped at 128): 16 warps an
/// SM instead of 11-12. `mma` at head dim 128 uses 255 (8 warps), and 168 (12 warps) spills;
/// sm_80's ptxas spills 8 bytes at 128, so the other archs are uncapped (142-170).
pub const MMA_SM90_REGISTERS: u32 = 128;

/// Registers a lane of `mma8_lds` at head dim 128 on sm_90: 168 uncapped since the staging's
/// lane carries a zero the compiler cannot see (was 193, 10 warps an SM; 128 spills).
pub const MMA8_LDS_SM90_REGISTERS: u32 = 168;

/// Registers a lane of `mma8a` on sm_90: 168 at head dim 128 (as `mma8_lds`; 12 warps an SM)
/// and 128 at 64 (130 uncapped; 16 warps). Both fit without spills since the staging's lane
/// carries a zero the compiler cannot see (`i8_mma::scan_async`); before, its 17 copies' offsets
/// were hoisted out of the chunk loop and held: 220 / 213 registers uncapped.
pub const MMA8A_SM90_REGISTERS: [u32; 2] = [128, 168];

/// The kernel's body after [`super::attention_order`]'s declarations: the baseline's, or
/// `mma`'s (a workgroup a (row tile, KV head, group of splits), `counters` for the combine).
#[allow(clippy::too_many_arguments)]
pub(super) fn body(
    b: &mut KernelBuilder,
    c: &Ctx,
    t: &Target,
    shape: Shape,
    stage_k: bool,
    wave_id: Value,
    rg: Value,
    zg: Value,
    counters: Option<Param>,
) {
    match counters {
        None => baseline(b, c, t),
        Some(counters) => {
            let kind = mma_kind(t, c.wave).expect("mma is built where the shape exists");
            i8_mma::body(b, c, kind, shape, stage_k, wave_id, rg, zg, counters);
        }
    }
}

/// Byte offset of cache row `key` (clamped to the context by the caller) of the KV head.
pub(super) fn row_base(b: &mut KernelBuilder, c: &Ctx, key: Value) -> Value {
    let hr = b.mul(c.h, c.ctx_max);
    let r = b.add(hr, key);
    let rb = b.u32(c.cache.row_bytes(c.d));
    b.mul(r, rb)
}

/// The f32 value of the f16 scale at byte `at` of `p`.
pub(super) fn load_scale(b: &mut KernelBuilder, p: Param, at: Value) -> Value {
    let sc = b.load_with(p, at, ScalarType::U16, IndexUnit::Byte, Some(2));
    let sc = b.bitcast(sc, Type::F16);
    b.convert(sc, Type::F32)
}

/// The 4 bytes at byte `at` of `p` as a word (2-byte aligned: quants of a Q8_0 block).
pub(super) fn load_word(b: &mut KernelBuilder, p: Param, at: Value) -> Value {
    b.load_with(p, at, ScalarType::U32, IndexUnit::Byte, Some(2))
}

/// `n` words of the bytes at `base + o + x` of `p` (the cache, or a chunk's rows staged in LDS),
/// with `base` and `x` multiples of 4 and `o` even (Q8_0 quants: a row is `17 D / 16` bytes, a
/// multiple of 4; an even block's quants start 2 bytes into a word): aligned word loads, rebuilt
/// by byte permutes where `o % 4 == 2` (one word more, never past the row: the last block of a
/// row is odd).
pub(super) fn quant_words(
    b: &mut KernelBuilder,
    p: impl Into<MemRef> + Copy,
    base: Value,
    o: u32,
    x: Value,
    n: usize,
) -> Vec<Value> {
    assert!(o.is_multiple_of(2), "quant_words: offset {o} is odd");
    let shifted = o % 4 == 2;
    let ov = b.u32(o - o % 4);
    let at = b.add(base, ov);
    let at = b.add(at, x);
    let raw: Vec<Value> = (0..n + usize::from(shifted))
        .map(|i| {
            let iv = b.u32(4 * i as u32);
            let a = b.add(at, iv);
            b.load_with(p, a, ScalarType::U32, IndexUnit::Byte, Some(4))
        })
        .collect();
    if shifted {
        (0..n).map(|i| b.perm(raw[i], raw[i + 1], [2, 3, 4, 5])).collect()
    } else {
        raw
    }
}

/// Byte `e` of word `w` as a signed `i32`.
fn sbyte(b: &mut KernelBuilder, w: Value, e: u32) -> Value {
    let sh = b.u32(8 * e);
    let x = b.shr(w, sh);
    let x = b.convert(x, Type::scalar(ScalarType::U8));
    let x = b.bitcast(x, Type::scalar(ScalarType::I8));
    b.convert(x, Type::I32)
}

/// `acc + sum_e a[e] b[e]` over the signed bytes of two words: `dot4` where `t` has it, else
/// four products (exact either way).
fn dot4(b: &mut KernelBuilder, t: &Target, x: Value, y: Value, acc: Value) -> Value {
    if t.dot(kiln_ir::target::DotKind::I8).is_some() {
        return b.dot(DotOp::I8, x, y, acc);
    }
    let mut acc = acc;
    for e in 0..4 {
        let xe = sbyte(b, x, e);
        let ye = sbyte(b, y, e);
        let p = b.mul(xe, ye);
        acc = b.add(acc, p);
    }
    acc
}

/// `l_chunk` of the order from each key lane's `p` (lanes `0..32`): the fixed tree as xor
/// shuffles 1, 2, 16, 4, 8 (each addition commutes, so every lane of the 32 holds the same bits).
pub(super) fn chunk_sum_lanes(b: &mut KernelBuilder, p: Value) -> Value {
    let mut x = p;
    for o in [1, 2, 16, 4, 8] {
        let y = b.shuffle_xor(x, o);
        x = b.add(x, y);
    }
    x
}

/// `|w|` as its bits (`u32`): for values that are not NaN, the integer order of these bits is the
/// order of `|w|`, so P's `amax` is a `u32` max (one instruction; the IR's float max is four on
/// NVIDIA, for its NaN and signed-zero rules).
pub(super) fn abs_bits(b: &mut KernelBuilder, w: Value) -> Value {
    let a = b.abs(w);
    b.bitcast(a, Type::U32)
}

/// `(sc, id)` of a P block from the bits of its `amax` ([`abs_bits`]): the quantize's
/// `sc = amax / 127`, `id = sc ? 1/sc : 0`, with `id` at most `f32::MAX`: `1 / sc` overflows for
/// `sc < 2^-128`, where the capped `id` still keeps `|w id| <= amax f32::MAX < 127`, and `0 * id`
/// is 0, not a NaN (whose payload, read as a quant's byte, would differ between devices).
pub(super) fn p_scale(b: &mut KernelBuilder, amax_bits: Value) -> (Value, Value) {
    let amax = b.bitcast(amax_bits, Type::F32);
    let (sc, id) = scale_of(b, amax);
    let big = b.f32(f32::MAX);
    (sc, b.min(id, big))
}

/// P's quant of `w` with the block's `id`, in the low byte of a word (`u32`; the other bytes are
/// not the quant's): the exact product `w id` rounded to the nearest integer, ties to even, by one
/// `fma(w, id, 1.5 * 2^23)` (`|w id| <= 127` and a bit, so the sum lies in `[2^23, 2^24)`, where
/// the f32 spacing is 1; the integer's two's complement is the low byte of the bits). Since the
/// fortieth session; before, `roundf` of the rounded product (halves away from zero) in 7 ops.
pub(super) fn p_quant(b: &mut KernelBuilder, w: Value, id: Value) -> Value {
    let magic = b.f32(12_582_912.0);
    let r = b.fma(w, id, magic);
    b.bitcast(r, Type::U32)
}

/// The low bytes of four words ([`p_quant`]'s) as one word, the first lowest (3 byte permutes).
pub(super) fn pack_low_bytes(b: &mut KernelBuilder, w: &[Value]) -> Value {
    let lo = b.perm(w[0], w[1], [0, 4, 0, 4]);
    let hi = b.perm(w[2], w[3], [0, 4, 0, 4]);
    b.perm(lo, hi, [0, 1, 4, 5])
}

/// The baseline: every row alone, its splits in order, then the combine.
fn baseline(b: &mut KernelBuilder, c: &Ctx, t: &Target) {
    let (zero, one) = (b.u32(0), b.u32(1));
    b.for_range(zero, c.rows_per_head, one, 1, &[], |b, i, _| {
        load_q(b, c, i, 1);
        b.barrier(BarrierKind::Lds);
        let rows = [row(b, c, i)];
        let (zero, one) = (b.u32(0), b.u32(1));
        b.for_range(zero, c.n_splits, one, 1, &[], |b, s, _| {
            let st = scan(b, c, t, &rows[0], s);
            store_state(b, c, &rows, s, &st);
            vec![]
        });
        b.barrier(BarrierKind::All);
        combine_direct(b, c, &rows);
        // The next row writes the LDS and the workspace again.
        b.barrier(BarrierKind::All);
        vec![]
    });
}

/// Split `s`'s state of a row (step 2): `[m, l, acc[dpl]]` (lanes across dimensions).
fn scan(b: &mut KernelBuilder, c: &Ctx, t: &Target, rw: &Row, s: Value) -> Vec<Value> {
    let mut init = vec![b.f32(f32::NEG_INFINITY), b.f32(0.0)];
    init.extend((0..c.dpl).map(|_| b.f32(0.0)));
    let c0 = b.mul(s, c.cps);
    let (zero, one) = (b.u32(0), b.u32(1));
    b.for_range(zero, c.cps, one, 1, &init, |b, i, st| {
        let chunk = b.add(c0, i);
        let inside = b.lt(chunk, c.n_chunks);
        b.if_else(inside, |b| chunk_step(b, c, t, rw, chunk, st), |_| st.to_vec())
    })
}

/// One chunk folded into a row's state (the baseline).
fn chunk_step(
    b: &mut KernelBuilder,
    c: &Ctx,
    t: &Target,
    rw: &Row,
    chunk: Value,
    st: &[Value],
) -> Vec<Value> {
    let d = c.d;
    let blocks = d / 32;
    let ck = b.u32(CHUNK);
    let k0 = b.mul(chunk, ck);
    let one = b.u32(1);
    let last = b.sub(c.kv_len, one);
    // Step 1: lane `j < 32` scores key `k0 + j`.
    let key = b.add(k0, c.lane);
    let kc = b.min(key, last);
    let base = row_base(b, c, kc);
    let mut s = b.f32(0.0);
    for bi in 0..blocks {
        let o = b.u32(34 * bi);
        let blk = b.add(base, o);
        let dk = load_scale(b, c.k_cache, blk);
        let mut dot = b.i32(0);
        for g in 0..8 {
            let qa = b.u32(8 * bi + g);
            let qw = b.load(c.q_lds, qa, Type::U32);
            let ko = b.u32(2 + 4 * g);
            let ka = b.add(blk, ko);
            let kw = load_word(b, c.k_cache, ka);
            dot = dot4(b, t, qw, kw, dot);
        }
        let qda = b.u32(bi);
        let dq = b.load(c.qd_lds.expect("the i8 order's q scales"), qda, Type::F32);
        let f = b.mul(dq, dk);
        let fd = b.convert(dot, Type::F32);
        s = b.fma(fd, f, s);
    }
    let sv = b.mul(s, c.scale);
    let c32 = b.u32(CHUNK);
    let in_chunk = b.lt(c.lane, c32);
    let sees = b.le(key, rw.limit);
    let sees = b.and(sees, in_chunk);
    let ninf = b.f32(f32::NEG_INFINITY);
    let sv = b.select(sees, sv, ninf);
    // Step 2.
    let mc = b.wave_reduce(ReduceOp::Max, sv);
    let m2 = b.max(st[0], mc);
    let a = exp_sub(b, st[0], m2);
    let p = exp_sub_i8(b, sv, m2);
    let lc = chunk_sum_lanes(b, p);
    // Lane 0's (every lane of the first 32 holds it; lane 0 stores it).
    let l = b.fma(st[1], a, lc);
    // P quantized a V block: lane `j` holds key `j`'s `w`; the quantize's butterflies over the
    // 32 key lanes give every one of them the block's scale and its own quant.
    let mut scales = vec![];
    let mut quants = vec![];
    for bi in 0..blocks {
        let o = b.u32(34 * bi);
        let blk = b.add(base, o);
        let dv = load_scale(b, c.v_cache, blk);
        let w = b.mul(p, dv);
        // `amax` over the 32 key lanes (lanes 32 and up, at wave 64, hold their own zeros).
        let mut amax = abs_bits(b, w);
        for o in [16, 8, 4, 2, 1] {
            let y = b.shuffle_xor(amax, o);
            amax = b.max(amax, y);
        }
        let amax = b.broadcast(amax, 0);
        let (sc, id) = p_scale(b, amax);
        scales.push(sc);
        quants.push(p_quant(b, w, id));
    }
    // Lanes across dimensions: the lane's `dpl` dimensions `d0..` lie in one block.
    let c32v = b.u32(32);
    let bl = b.div(c.d0, c32v);
    let within = b.rem(c.d0, c32v);
    let pick = |b: &mut KernelBuilder, xs: &[Value]| {
        let mut v = xs[0];
        for (k, &x) in xs.iter().enumerate().skip(1) {
            let kv = b.u32(k as u32);
            let here = b.eq(bl, kv);
            v = b.select(here, x, v);
        }
        v
    };
    let sc = pick(b, &scales);
    let c34 = b.u32(34);
    let boff = b.mul(bl, c34);
    let two = b.u32(2);
    let qoff = b.add(boff, two);
    let qoff = b.add(qoff, within);
    let izero = b.i32(0);
    let init = vec![izero; c.dpl as usize];
    let (zero, c32e) = (b.u32(0), b.u32(CHUNK));
    let dots = b.for_range(zero, c32e, one, 1, &init, |b, j, acc| {
        let qs: Vec<Value> = quants.iter().map(|&q| b.shuffle_idx(q, j)).collect();
        let qj = pick(b, &qs);
        let qj = b.convert(qj, Type::scalar(ScalarType::U8));
        let qj = b.bitcast(qj, Type::scalar(ScalarType::I8));
        let qj = b.convert(qj, Type::I32);
        let kj = b.add(k0, j);
        let kj = b.min(kj, last);
        let vb = row_base(b, c, kj);
        let va = b.add(vb, qoff);
        (0..c.dpl)
            .map(|e| {
                let ev = b.u32(e);
                let at = b.add(va, ev);
                let x = b.load_with(c.v_cache, at, ScalarType::U8, IndexUnit::Byte, Some(1));
                let x = b.bitcast(x, Type::scalar(ScalarType::I8));
                let x = b.convert(x, Type::I32);
                let pr = b.mul(qj, x);
                b.add(acc[e as usize], pr)
            })
            .collect()
    });
    let mut next = vec![m2, l];
    for (e, &dot) in dots.iter().enumerate() {
        let fd = b.convert(dot, Type::F32);
        let ra = b.mul(st[2 + e], a);
        next.push(b.fma(fd, sc, ra));
    }
    next
}

#[cfg(test)]
mod tests {
    use crate::attention::decode::specs;

    /// The variant the family's admissions give a call ([`crate::KernelSpec::routed`]).
    fn routed(family: &str, arch: &str, n_tokens: u64, pos: u64) -> &'static str {
        let f = specs().into_iter().find(|f| f.name == family).expect("the family");
        f.routed(arch, &|name| match name {
            "n_tokens" => n_tokens,
            "pos" => pos,
            other => panic!("no shape rule on {other} expected"),
        })
    }

    /// The routes the H100 and H200 figures chose (`family.rs`, `i8_family`): at head dim 128
    /// `mma8a` for one or two tokens from the 4K bench case (`pos` 4095) on and for eight from
    /// `pos` 16384, `mma8` for the rest; at head dim 64 `mma8`; the baseline where the arch has
    /// no `mma`.
    #[test]
    fn the_i8_routes_follow_the_measurements() {
        let d128 = "attention_decode_q8_0_i8_d128";
        for (t, pos, want) in [
            (1, 4095, "mma8a"),
            (2, 32766, "mma8a"),
            (1, 3999, "mma8"),
            (1, 100, "mma8"),
            (3, 32765, "mma8"),
            (4, 4092, "mma8"),
            (8, 32760, "mma8a"),
            (8, 16384, "mma8a"),
            (8, 16383, "mma8"),
            (8, 4088, "mma8"),
            (7, 32761, "mma8"),
        ] {
            assert_eq!(routed(d128, "sm_90", t, pos), want, "d128 sm_90 T = {t} pos {pos}");
            assert_eq!(routed(d128, "sm_80", t, pos), want, "d128 sm_80 T = {t} pos {pos}");
            assert_eq!(routed(d128, "gfx1100", t, pos), "baseline", "d128 gfx1100 T = {t}");
        }
        let d64 = "attention_decode_q8_0_i8_d64";
        for (t, pos) in [(1, 4095), (1, 32767), (8, 100)] {
            assert_eq!(routed(d64, "sm_90", t, pos), "mma8", "d64 sm_90 T = {t} pos {pos}");
            assert_eq!(routed(d64, "gfx906", t, pos), "baseline", "d64 gfx906 T = {t}");
        }
    }

    /// [`super::p_scale`] then [`super::p_quant`] on the interpreter: each quant is the exact
    /// `w id` rounded to the nearest integer, ties to even (the product in float64 is exact), with
    /// `id` capped at `f32::MAX`; over random blocks, the ties `k + 1/2` (`id = 1`), zeros, and a
    /// block whose `1 / sc` overflows (`0 * id` is 0, not NaN).
    #[test]
    fn p_quant_rounds_the_exact_product_to_even() {
        use crate::cases::{probe, rng_for, run_probe};
        use kiln_ir::Type;
        // `y` holds the quant's word (bitcast); `amax` is the block's, as a float.
        let k = probe("p_quant_probe", &["w", "amax"], |b, v| {
            let a = b.bitcast(v[1], Type::U32);
            let (_, id) = super::p_scale(b, a);
            let q = super::p_quant(b, v[0], id);
            b.bitcast(q, Type::F32)
        });
        let mut rng = rng_for("p-quant", std::process::id() as u64);
        let mut ws = vec![];
        let mut amaxes = vec![];
        for _ in 0..500 {
            let block: Vec<f32> = (0..32).map(|_| (rng.unit() * 2.0 - 1.0) as f32).collect();
            let am = block.iter().fold(0.0f32, |m, x| m.max(x.abs()));
            ws.extend(&block);
            amaxes.extend([am; 32]);
        }
        // Ties: with amax = 127, id = 1 and `w id` is `w`.
        for k in -127..127 {
            for x in [k as f32 + 0.5, (k as f32 + 0.5).next_up(), (k as f32 + 0.5).next_down()] {
                ws.push(x);
                amaxes.push(127.0);
            }
        }
        // `sc = 1e-37 / 127` is below 2^-128: `1 / sc` overflows and `id` is capped.
        ws.extend([0.0, -0.0, 0.0, 1e-37, -5e-38, -1e-37]);
        amaxes.extend([1.0, 1.0, 1e-37, 1e-37, 1e-37, 1e-37]);
        assert!((1.0 / (1e-37f32 / 127.0)).is_infinite());
        let got = run_probe(&k, &[("w", &ws), ("amax", &amaxes)]);
        for ((&x, &am), &g) in ws.iter().zip(&amaxes).zip(&got) {
            let sc = am / 127.0;
            let id = if sc != 0.0 { (1.0 / sc).min(f32::MAX) } else { 0.0 };
            let want = (x as f64 * id as f64).round_ties_even();
            assert!(want.abs() <= 127.0, "w {x:e} amax {am:e}: {want}");
            assert_eq!(g as u8 as i8, want as i8, "w {x:e} amax {am:e} (id {id:e})");
        }
    }
}
