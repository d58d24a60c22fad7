//! `attention_decode_{q8_0,f16}_d{64,128}`: decode attention of `T = 1..8` query rows at
//! positions `pos..pos+T` (row `t` sees keys `0..=pos+t`), grouped-query (`group` q heads a KV
//! head), over a Q8_0 or f16 cache (`[kv_head][ctx_max][head_dim]`, see
//! [`super::kv_append`]), with the portable exp: every variant gives the baseline's bits, and
//! every device the interpreter's.
//!
//! ABI (every variant; the workspaces `partials` and `counters` are the runtime's; `counters`
//! is left zeroed, `partials` is written before it is read in every call):
//!
//! | param        | kind                                          | meaning                      |
//! |--------------|-----------------------------------------------|------------------------------|
//! | `q`          | f32, read, `n_tokens*n_kv_heads*group*D`      | `[T][n_q][D]`, rotated       |
//! | `k_cache`, `v_cache` | u8 `n_kv*ctx_max*D/32*34` (q8_0) or f16 `n_kv*ctx_max*D`, read | the caches |
//! | `out`        | f32, write, like `q`                          | `[T][n_q][D]`                |
//! | `pos`        | u32                                           | position of row 0            |
//! | `n_tokens`   | u32, 1..=8                                    | query rows a head `T`        |
//! | `n_kv_heads` | u32                                           | KV heads                     |
//! | `group`      | u32, >= 1                                     | q heads a KV head            |
//! | `ctx_max`    | u32                                           | cache capacity (rows)        |
//! | `scale`      | f32                                           | softmax scale                |
//!
//! Query head `qh = kv * group + j`; row `i` of a KV head (`0..T group`) is token `i / group`,
//! q head `kv * group + i % group`. Keys past `ctx_max` are never read (`kv_len = min(pos + T,
//! ctx_max)`).
//!
//! # The order (part of the result; every variant keeps it)
//! `W` is the wave size. The context is cut into chunks of `W` keys (`n_chunks = ceil(kv_len /
//! W)`), the chunks into splits of `cps = ceil(n_chunks / MAX_SPLITS)` consecutive chunks
//! (`n_splits = ceil(n_chunks / cps)`, at most [`MAX_SPLITS`]). For every row:
//! 1. Score of key `k` (lane `k % W` of its chunk): the dequantized key `x_d` (Q8_0: `f32(q) *
//!    f32(d)`, exact as ggml; f16 widens exactly); for each block of 32 dimensions `t =
//!    fma(q_d, x_d, t)` over its dimensions in order from `+0`, then `dot = dot + t` over the
//!    blocks in order from `+0`; `s = dot * scale`, or `-inf` for a key the row does not see.
//! 2. A split runs its chunks in order from `(m, l_lane, acc) = (-inf, 0, 0)`: `mc` = the wave
//!    max of the chunk's `s` (`wave_reduce(max)`), `m' = max(m, mc)`, `a = exp_sub(m, m')`, each
//!    lane `p = exp_sub(s, m')` and `l_lane = fma(l_lane, a, p)`; then, lanes across dimensions,
//!    `acc = acc * a` and `acc = fma(p_j, v_j, acc)` for the chunk's keys `j = 0..W` in order
//!    (`p_j = 0` past the context).
//!    The split's state is `(m, l = wave_reduce(add, l_lane), acc)`.
//! 3. The splits combine with the maximum first, past [`GROUPED_ABOVE`] splits in two levels.
//!    The splits are taken in groups of `G = 128 / W` consecutive splits (4 at wave 32, 2 at
//!    wave 64: a workgroup of [`THREADS`] lanes' splits; `group_splits`), the last group
//!    holding what is left; up to [`GROUPED_ABOVE`] splits, `G = 1`. A group: `m_g = max m_s`
//!    (exact), `w_s = exp_sub(m_s, m_g)`, `L_g = fma(l_s, w_s, L_g)` and `acc_g = fma(acc_s,
//!    w_s, acc_g)` over its splits in order from `(0, 0)`. Then the groups, the same way: `M =
//!    max_g m_g`, `w_g = exp_sub(m_g, M)`, `L = fma(L_g, w_g, L)` and `acc = fma(acc_g, w_g,
//!    acc)` over `g = 0..ceil(n_splits / G)` in order from 0; `out = acc / L`. A group of one
//!    split is the split (`exp_sub(m, m)` is exactly 1, `exp_sub(-inf, -inf)` 0), so `G = 1` is
//!    the one-level fold. (The first level is what each workgroup does with its own waves'
//!    states in LDS, so the last workgroup folds at most 32 states a row where it folded 128.)
//!
//! `exp_sub` is the portable exp ([`crate::math::exp_sub`]); every step is an exact op, so the
//! bits are the same on every device (at the same wave size: `W` sets the chunks).
//!
//! The `attention_decode_q8_0_i8_*` families ([`i8`], [`Order::I8`]) share this ABI, the splits
//! and the workspaces, with steps 1 and 2 in 8-bit integers (q and P quantized, 32-key chunks at
//! every wave size) for NVIDIA's integer `mma.sync`, and step 3 with groups of `G = 4` splits
//! at every wave size (the splits of an `mma` workgroup's 4 waves; since the thirty-ninth
//! session, before it `G = 1`), so its bits do not depend on the wave size.
//!
//! # Variants
//! - `baseline`: one workgroup of one wave a KV head; every row alone, its splits one after
//!   another, stored in `partials`, then both levels of step 3 lane by lane, as written above.
//! - `rR` (R = 1, 4, 8; `rRtN`: N lanes a workgroup, else [`THREADS`]): a workgroup a (row
//!   group of `R` rows, KV head, group of `N / W` splits); a wave a split. The `R` rows share
//!   each K/V read (q in LDS, read by broadcast). A chunk's K rows are staged in LDS by
//!   coalesced loads (a lane reading its own key's row would touch `W` rows a load); up to 4
//!   rows at wave 32, its V rows are loaded before the scores (in flight during them). `N` is a
//!   multiple of [`THREADS`], so a workgroup holds whole groups: with two levels the waves put
//!   their states in LDS and the workgroup folds its groups (step 3's first level) into
//!   `partials` (with one, each wave stores its state there), and the last workgroup of a (row
//!   group, KV head) (a counter in `counters`) folds the states (the second level) with all its
//!   lanes. No float atomics.
//! - `short` (Q8_0; 4 rows, 256 lanes): for contexts whose splits all fit in one workgroup (a
//!   wave a split, at most 20: one level), the states stay in LDS and the workgroup combines
//!   them at once: no `partials`, no counter ([`short`]). `short_r1`: the same, one row a
//!   workgroup;
//!   `short_r1t640` (head dim 64): one row, 640 lanes, splits of up to 632 positions.
//! - `rRx`, `rRxP` (Q8_0, wave 32; [`across`]): `rR` with a split across `P` waves (`rRx`: `D /
//!   32`, a block a wave): the scores' blocks, the rows' softmax steps and the P.V dimensions
//!   shared out, through LDS; a workgroup holds a group's 4 splits. Not routed (not timed).
//!
//! # Routes (first admitted wins; `baseline` is the reference, taken only when forced)
//! `short_r1` (Q8_0, T <= [`short::R1_MAX_TOKENS`], `pos <=` [`short::MAX_POS`]), `short`
//! (Q8_0, group >= 2, `pos <=` [`short::MAX_POS`]), `short_r1t640` (Q8_0, head dim 64,
//! sm_90, T <= [`short::R1_MAX_TOKENS`], `pos <= 632`), then Q8_0 at head dim 64 `r1`; else
//! `r8` (T >= 6), `r4t256` (Q8_0,
//! group >= 2), `r4` (group >= 2), `r1`; measured on the H200
//! (docs/attention.md): at T = 8, `r8` is fastest at 32K keys and within 4% at 4K; at T = 1
//! and 4, `r4t256` (Q8_0) and `r4` (f16) are.

pub mod across;
mod cases;
mod combine;
mod family;
pub mod fused;
pub mod i8;
mod i8_mma;
mod scan;
pub mod short;

use super::rope::Rope;
use super::CacheType;
use crate::common::{last_of_workgroups, reset_counter};
use crate::quantize::{pack_word, quantize_values, Quantized, QK};
pub use cases::{cache_bytes, case_shapes};
use combine::{combine, combine_direct, combine_groups, store_lds, Fold, LdsStates, States};
use family::family;
pub use family::{specs, MAX_VGPRS_RDNA, R1X_ARCHS, R1X_FROM_POS};
use kiln_ir::{
    Access, BarrierKind, Dim, Kernel, KernelBuilder, LdsSlot, Param, ScalarRule, ScalarType,
    ShapeExpr, Target, Type, Value,
};
use scan::{first_loads, scan, stage_rows_by};

/// Most splits a row's context is cut into (the workspace holds this many states a row).
pub const MAX_SPLITS: u32 = 128;
/// Step 3 takes the splits in groups (two levels) only past this many splits: below, one
/// level costs the last workgroup one trip of loads, and the first level's extra exps and
/// barriers were slower on the H200 (SmolLM2's step at 219 and 587 positions, where the
/// `short` variants hold every split in one workgroup: bench/results/groups-h200-2026-12-03.md).
pub const GROUPED_ABOVE: u32 = 32;
/// Lanes a workgroup of the `rR` variants (`128 / W` waves, a split each).
pub const THREADS: u32 = 128;

/// A variant's shape.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Rows a workgroup (1, 4 or 8).
    pub rows: u32,
    /// Waves a workgroup (a split each).
    pub waves: u32,
    /// The baseline: one wave a KV head runs every row and every split.
    pub baseline: bool,
    /// Lanes a workgroup asked for (its name; `waves` is this over the wave size).
    pub threads: u32,
    /// The `short` variant: one workgroup a (row group, KV head), the states in LDS.
    pub short: bool,
    /// The K chunks by async copies into two LDS buffers a wave, the next chunk's copies in
    /// flight while this one computes (sm_80 and later; elsewhere the plain staging).
    pub async_k: bool,
    /// A split's chunks across this many waves ([`across`]: Q8_0 at wave 32, a divisor of
    /// `D / 32`; `waves` a multiple of it).
    pub across: Option<u32>,
}

impl Shape {
    /// The baseline: one wave a KV head runs every row and every split.
    pub const BASELINE: Shape = Shape {
        rows: 1,
        waves: 1,
        baseline: true,
        threads: 0,
        short: false,
        async_k: false,
        across: None,
    };
}

/// What a kernel reads before the attention and writes after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Io {
    /// `q` already rotated (by `rope_f32`), `out` in f32: the `attention_decode_*` families.
    Plain,
    /// `q` as the Q projection wrote it, rotated as it is loaded (`rope_f32`'s arithmetic and
    /// scalars `n_dims`, `base`, `neox`), and the output written as split Q8_1 (`xq`, `xs`: the
    /// bytes `quantize_q8_1s_f32` writes for the f32 output): the
    /// `attention_decode_rope_*_q8_1s` families ([`fused`]).
    RopeQ8_1s,
}

/// The order of a family's arithmetic (part of its result): the families of one order give one
/// another's bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// f32 scores from the dequantized keys, `W`-key chunks (the module docs): the
    /// `attention_decode_{q8_0,f16}_*` families.
    F32,
    /// q and P quantized to 8 bits, integer dot products, 32-key chunks ([`i8`]): the
    /// `attention_decode_q8_0_i8_*` families. `stage_k` (the `mma_lds` variant): K chunks staged
    /// in LDS by coalesced loads (the same values, the same order).
    I8 {
        /// Stage K chunks in LDS.
        stage_k: bool,
    },
}

impl Order {
    /// The i8 order, either variant.
    fn is_i8(self) -> bool {
        matches!(self, Order::I8 { .. })
    }
}

impl Io {
    /// `FUSED` of the builders below.
    const fn of(fused: bool) -> Io {
        if fused {
            Io::RopeQ8_1s
        } else {
            Io::Plain
        }
    }
}

/// What the pieces of a kernel share.
struct Ctx {
    cache: CacheType,
    d: u32,
    wave: u32,
    /// Lanes a workgroup.
    threads: u32,
    /// Dimensions a lane in the P.V product (`D / W`).
    dpl: u32,
    q: Param,
    k_cache: Param,
    v_cache: Param,
    out: Output,
    /// The rotation of `q` as it is loaded ([`Io::RopeQ8_1s`]): `rope_f32`'s scalars
    /// `head_dim`, `n_dims`, `base`, `neox` (read where q is loaded: [`Rope`]'s values live
    /// there only, and kept for the whole kernel they cost registers).
    rope: Option<[Param; 4]>,
    partials: Param,
    /// The KV head.
    h: Value,
    group: Value,
    n_q: Value,
    lane: Value,
    /// The lane's index in the workgroup.
    tid: Value,
    ctx_max: Value,
    pos: Value,
    scale: Value,
    kv_len: Value,
    n_chunks: Value,
    /// Chunks a split.
    cps: Value,
    n_splits: Value,
    /// Splits a group of step 3's first level ([`group_splits`]).
    group_splits: u32,
    /// Most states step 3's second level folds a row.
    max_states: u32,
    rows_per_head: Value,
    /// The lane's first dimension in the P.V product.
    d0: Value,
    /// `n_tokens >> 4`: zero (`n_tokens <= 8`), unknown to the compiler.
    rt_zero: Value,
    n_kv: Value,
    /// The waves' K chunks, `W` rows each (`W row_bytes` bytes a wave).
    k_lds: LdsSlot,
    /// This wave's K chunk in `k_lds`, in bytes.
    region: Value,
    /// With async K chunks ([`Shape::async_k`]): the bytes from a wave's first buffer to its
    /// second (the waves' first buffers, then their second ones).
    k_second: Option<Value>,
    /// NVIDIA: where [`scan::first_loads`] was measured (on AMD it would hold the first
    /// chunk's rows across q's loads, up to twice the VGPRs of `short_r1` on RDNA, unmeasured).
    nvidia: bool,
    /// q of the pass's rows, `[R][D]` (f32; [`Order::I8`]: its quants, bytes).
    q_lds: LdsSlot,
    /// [`Order::I8`]: the scales of q's blocks, `[R][D / 32]` (f32 of the f16 scale).
    qd_lds: Option<LdsSlot>,
    /// States a row of `w_lds` and `l_lds`: [`MAX_SPLITS`] in the f32 order (as its objects were
    /// measured), `max_states` in the i8 order (the 16-row `mma` variants fit 48 KiB so).
    w_stride: u32,
    /// The combine's weights `w_s`, `[R][w_stride]`.
    w_lds: LdsSlot,
    /// The splits' sums `l_s`, `[R][w_stride]`.
    l_lds: LdsSlot,
    /// [`Shape::across`]: how the waves of a split share it.
    across: Option<across::Across>,
}

impl Ctx {
    /// `(x >> 31) & rt_zero`: zero, but a value the compiler cannot see is zero and that changes
    /// with `x` (a loop's key or chunk). Added to an index inside a loop, it keeps the address
    /// arithmetic there instead of hoisted out and held in registers across the loop.
    fn opaque_zero(&self, b: &mut KernelBuilder, x: Value) -> Value {
        let c31 = b.u32(31);
        let z = b.shr(x, c31);
        b.and(z, self.rt_zero)
    }

    /// The lane that writes a split's `m` and `l`: lane 0 of its wave (of its first wave,
    /// [`Shape::across`]: every wave of the split holds them).
    fn state_writer(&self, b: &mut KernelBuilder) -> Value {
        let who = self.across.as_ref().map_or(self.lane, |x| x.index());
        let zero = b.u32(0);
        b.eq(who, zero)
    }

    /// Step 3 has two levels: more than [`GROUPED_ABOVE`] splits (uniform). Computed where it
    /// is used, as [`Ctx::n_groups`].
    fn grouped(&self, b: &mut KernelBuilder) -> Value {
        if self.group_splits == 1 {
            return b.bool(false);
        }
        let above = b.u32(GROUPED_ABOVE);
        b.gt(self.n_splits, above)
    }

    /// The states step 3's second level folds: `ceil(n_splits / group_splits)` groups where it
    /// is [`Ctx::grouped`], else `n_splits`. Computed where it is used (a value made at the
    /// start would be live through the scan: an SGPR of the gfx906 baselines, which have none
    /// left).
    fn n_groups(&self, b: &mut KernelBuilder) -> Value {
        if self.group_splits == 1 {
            return self.n_splits;
        }
        let gm1 = b.u32(self.group_splits - 1);
        let n = b.add(self.n_splits, gm1);
        let gsv = b.u32(self.group_splits);
        let groups = b.div(n, gsv);
        let grouped = self.grouped(b);
        b.select(grouped, groups, self.n_splits)
    }
}

/// Where the output goes.
#[derive(Clone, Copy)]
enum Output {
    /// f32 rows, like `q`.
    F32(Param),
    /// Split Q8_1 ([`Io::RopeQ8_1s`]): quants `q` (`u8`, an element each), scale words `s`
    /// (`u32`, a 32-value block each).
    Q8_1s { q: Param, s: Param },
}

/// One row of a pass.
struct Row {
    /// The row exists (`i < T group`; padding rows of the last pass do not).
    valid: Value,
    /// The last key it sees, `min(pos + t, kv_len - 1)`.
    limit: Value,
    /// Its first element in `q` / `out`.
    at: Value,
    /// Its token (`0..T`; its position is `pos + token`).
    token: Value,
    /// Its index among the rows of all KV heads (`h T group + i`), for the workspace.
    global: Value,
}

/// Row `i` of the KV head: clamped to the last row for loads.
fn row(b: &mut KernelBuilder, c: &Ctx, i: Value) -> Row {
    let valid = b.lt(i, c.rows_per_head);
    let one = b.u32(1);
    let last = b.sub(c.rows_per_head, one);
    let ic = b.min(i, last);
    let t = b.div(ic, c.group);
    let j = b.rem(ic, c.group);
    let hg = b.mul(c.h, c.group);
    let qh = b.add(hg, j);
    let tq = b.mul(t, c.n_q);
    let qrow = b.add(tq, qh);
    let dd = b.u32(c.d);
    let at = b.mul(qrow, dd);
    let limit = b.add(c.pos, t);
    let last_key = b.sub(c.kv_len, one);
    let limit = b.min(limit, last_key);
    let hr = b.mul(c.h, c.rows_per_head);
    let global = b.add(hr, ic);
    Row { valid, limit, at, token: t, global }
}

/// Splits a group of step 3's first level: those a workgroup of [`THREADS`] lanes holds in the
/// f32 order (4 at wave 32, 2 at wave 64); in the i8 order those of an `mma` workgroup's
/// [`i8::MMA_WAVES`] waves at every wave size (its 32-key chunks give the same bits at both).
pub(super) fn group_splits(order: Order, wave: u32) -> u32 {
    match order {
        Order::F32 => THREADS / wave,
        Order::I8 { .. } => i8::MMA_WAVES,
    }
}

/// Element of slot `s`'s state of a row in `partials`: `acc[D]`, then `m`, `l` (a stride of
/// `D + 4` keeps each state 16-byte aligned).
fn slot(b: &mut KernelBuilder, c: &Ctx, global: Value, s: Value) -> Value {
    let ms = b.u32(MAX_SPLITS);
    let x = b.mul(global, ms);
    let x = b.add(x, s);
    let st = b.u32(c.d + 4);
    b.mul(x, st)
}

/// Loads the `R` rows' q (from `i0`) into LDS with every lane of the workgroup: as f32 values
/// (the f32 order), or quantized ([`Order::I8`], [`load_q_i8`]).
fn load_q(b: &mut KernelBuilder, c: &Ctx, i0: Value, r: u32) {
    if c.qd_lds.is_some() {
        return load_q_i8(b, c, i0, r);
    }
    let rope = c.rope.map(|[head_dim, n_dims, base, neox]| {
        let (hd, nd, bs, nx) = (b.arg(head_dim), b.arg(n_dims), b.arg(base), b.arg(neox));
        Rope::new(b, nd, hd, bs, nx)
    });
    let total = r * c.d;
    for j in 0..total.div_ceil(c.threads) {
        let jj = b.u32(j * c.threads);
        let f = b.add(c.tid, jj);
        let tv = b.u32(total);
        let inside = b.lt(f, tv);
        b.if_then(inside, |b| {
            let dd = b.u32(c.d);
            let k = b.div(f, dd);
            let e = b.rem(f, dd);
            let i = b.add(i0, k);
            let rw = row(b, c, i);
            let at = b.add(rw.at, e);
            let x = b.load(c.q, at, Type::F32);
            let x = match rope {
                None => x,
                // `rope_f32`'s value of the element (`e` its dimension, `rw.at` its row).
                Some(rope) => {
                    let (pi, first, partner, rotated) = rope.pair(b, e);
                    let pa = b.add(rw.at, partner);
                    let px = b.load(c.q, pa, Type::F32);
                    let p = b.add(c.pos, rw.token);
                    rope.value(b, x, px, pi, first, rotated, p)
                }
            };
            b.store(c.q_lds, f, x);
        });
    }
}

/// Values of q a lane loads and quantizes at once in the i8 order (one 16-byte load; rows of q
/// start at multiples of `D` values, so it is aligned).
const Q_VALUES: u32 = 4;

/// [`load_q`] in the i8 order: each lane loads [`Q_VALUES`] consecutive values of a row, a
/// 32-value block being 8 aligned lanes, quantized by ggml's arithmetic ([`quantize_values`]:
/// its `amax` is a max, the same whatever the lanes' split) and stored as one word of quants;
/// the block's first lane stores its scale `f32(f16(d))`. Since the fortieth session (before, a
/// value a lane: 4 times the trips, each with the row's index arithmetic and the block's
/// divisions); the same bytes.
fn load_q_i8(b: &mut KernelBuilder, c: &Ctx, i0: Value, r: u32) {
    assert!(c.rope.is_none(), "the i8 order has no fused RoPE");
    let qd_lds = c.qd_lds.expect("the i8 order's q scales");
    let words = r * c.d / Q_VALUES;
    let lanes = QK / Q_VALUES;
    for j in 0..words.div_ceil(c.threads) {
        let jj = b.u32(j * c.threads);
        let f = b.add(c.tid, jj);
        let tv = b.u32(words);
        let inside = b.lt(f, tv);
        // A block is `lanes` aligned lanes (`D / 4` and the workgroup are multiples of 8), all
        // inside or all outside, so the block's shuffles run under uniform control; lanes outside
        // quantize zeros and store nothing.
        let fz = b.f32(0.0);
        let xs = b.if_else(
            inside,
            |b| {
                let wd = b.u32(c.d / Q_VALUES);
                let k = b.div(f, wd);
                let e = b.rem(f, wd);
                let i = b.add(i0, k);
                let rw = row(b, c, i);
                let qv = b.u32(Q_VALUES);
                let e = b.mul(e, qv);
                let at = b.add(rw.at, e);
                let x = b.load(c.q, at, Type::vector(ScalarType::F32, Q_VALUES as u8));
                (0..Q_VALUES as u8).map(|v| b.extract(x, v)).collect()
            },
            |_| vec![fz; Q_VALUES as usize],
        );
        let Quantized { d, bytes, .. } = quantize_values(b, &xs, lanes, false);
        b.if_then(inside, |b| {
            let w = pack_word(b, &bytes);
            b.store(c.q_lds, f, w);
            let lv = b.u32(lanes);
            let lane_in_block = b.rem(f, lv);
            let zero = b.u32(0);
            let head = b.eq(lane_in_block, zero);
            b.if_then(head, |b| {
                let h = b.convert(d, Type::F16);
                let sc = b.convert(h, Type::F32);
                let blk = b.div(f, lv);
                b.store(qd_lds, blk, sc);
            });
        });
    }
}

/// Stores split `s`'s states of the rows that exist.
fn store_state(b: &mut KernelBuilder, c: &Ctx, rows: &[Row], s: Value, st: &[Value]) {
    let n = rows.len();
    let dpl = c.dpl as usize;
    let first = c.state_writer(b);
    for (r, rw) in rows.iter().enumerate() {
        let base = slot(b, c, rw.global, s);
        let partials = c.partials;
        let d = c.d;
        let d0 = c.d0;
        b.if_then(rw.valid, |b| {
            let at = b.add(base, d0);
            let xs = &st[2 * n + r * dpl..2 * n + (r + 1) * dpl];
            let x = if dpl == 1 { xs[0] } else { b.make_vector(xs) };
            b.store(partials, at, x);
            b.if_then(first, |b| {
                let dm = b.u32(d);
                let am = b.add(base, dm);
                b.store(partials, am, st[r]);
                let dl = b.u32(d + 1);
                let al = b.add(base, dl);
                b.store(partials, al, st[n + r]);
            });
        });
    }
}

/// One attention kernel.
pub fn attention(t: &Target, wave: u32, cache: CacheType, d: u32, shape: Shape) -> Kernel {
    attention_io(t, wave, cache, d, shape, Io::Plain)
}

/// One attention kernel with the input and output of `io`.
pub fn attention_io(
    t: &Target,
    wave: u32,
    cache: CacheType,
    d: u32,
    shape: Shape,
    io: Io,
) -> Kernel {
    attention_order(t, wave, cache, d, shape, io, Order::F32)
}

/// One attention kernel of `order` ([`Order::I8`]: Q8_0 and [`Io::Plain`] only; its variants
/// are [`i8`]'s).
pub(super) fn attention_order(
    t: &Target,
    wave: u32,
    cache: CacheType,
    d: u32,
    shape: Shape,
    io: Io,
    order: Order,
) -> Kernel {
    assert!(
        !order.is_i8() || (cache == CacheType::Q8_0 && io == Io::Plain),
        "the i8 order is built for a Q8_0 cache with plain input and output"
    );
    let suffix = match (shape.baseline, shape.short, shape.threads) {
        (true, _, _) => String::new(),
        (false, _, _) if order.is_i8() => {
            let m = if shape.rows == i8::TILE_ROWS { "_mma" } else { "_mma8" };
            let staged = order == Order::I8 { stage_k: true };
            // `mma8a`: the async staging's `a` below stands for `_lds`.
            format!("{m}{}", if staged && !shape.async_k { "_lds" } else { "" })
        }
        (false, true, _) if shape.rows == short::ROWS => "_short".to_string(),
        (false, true, short::THREADS) => format!("_short_r{}", shape.rows),
        (false, true, n) => format!("_short_r{}t{n}", shape.rows),
        (false, false, _) if shape.across.is_some() => {
            let p = shape.across.unwrap_or(1);
            format!("_r{}x{}", shape.rows, if p == d / 32 { String::new() } else { p.to_string() })
        }
        (false, false, THREADS) => format!("_r{}", shape.rows),
        (false, false, n) => format!("_r{}t{n}", shape.rows),
    } + if shape.async_k { "a" } else { "" };
    // Async copies where the arch has them (the name stays: elsewhere the plain staging).
    let async_k = shape.async_k && t.sm().is_some_and(|sm| sm >= 80);
    let family = match io {
        Io::Plain if order.is_i8() => format!("attention_decode_{}_i8_d{d}", cache.name()),
        Io::Plain => format!("attention_decode_{}_d{d}", cache.name()),
        Io::RopeQ8_1s => fused::name(cache, d),
    };
    assert!(
        shape.across.is_none_or(|p| {
            cache == CacheType::Q8_0 && !order.is_i8() && wave == 32 && (d / 32).is_multiple_of(p)
        }),
        "a split across waves is built for a Q8_0 cache in the f32 order at wave 32"
    );
    let mut b = KernelBuilder::new(format!("{family}{suffix}"), wave);
    let threads = wave * shape.waves;
    // Waves a split ([`across`]: one a `W`-dimension part of the head), splits a workgroup.
    let parts = shape.across.unwrap_or(1);
    let spw = shape.waves / parts;
    b.workgroup_size([threads, 1, 1]);
    b.const_param("head_dim", d as i64);
    b.const_param("rows", shape.rows as i64);
    b.const_param("waves", shape.waves as i64);
    b.const_param("max_splits", MAX_SPLITS as i64);
    let q = b.buffer("q", ScalarType::F32, Access::Read);
    let k_cache = b.buffer("k_cache", cache.elem(), Access::Read);
    let v_cache = b.buffer("v_cache", cache.elem(), Access::Read);
    let out = match io {
        Io::Plain => Output::F32(b.buffer("out", ScalarType::F32, Access::Write)),
        Io::RopeQ8_1s => Output::Q8_1s {
            q: b.buffer("xq", ScalarType::U8, Access::Write),
            s: b.buffer("xs", ScalarType::U32, Access::Write),
        },
    };
    let pos = b.scalar_param("pos", ScalarType::U32);
    let n_tokens = b.scalar_param("n_tokens", ScalarType::U32);
    let n_kv = b.scalar_param("n_kv_heads", ScalarType::U32);
    let group = b.scalar_param("group", ScalarType::U32);
    let ctx_max = b.scalar_param("ctx_max", ScalarType::U32);
    let scale = b.scalar_param("scale", ScalarType::F32);
    // `rope_f32`'s scalars (`head_dim` must be `d`: an engine passes its rope arguments as
    // they are, and a call for another head dim is refused before launch).
    let rope_args = match io {
        Io::Plain => None,
        Io::RopeQ8_1s => {
            let head_dim = b.scalar_param("head_dim", ScalarType::U32);
            b.scalar_rule(head_dim, ScalarRule::AtLeast(d as u64));
            b.scalar_rule(head_dim, ScalarRule::AtMost(d as u64));
            let n_dims = b.scalar_param("n_dims", ScalarType::U32);
            b.scalar_rule(n_dims, ScalarRule::MultipleOf(2));
            let base = b.scalar_param("base", ScalarType::F32);
            let neox = b.scalar_param("neox", ScalarType::U32);
            Some([head_dim, n_dims, base, neox])
        }
    };
    b.scalar_rule(n_tokens, ScalarRule::AtLeast(1));
    b.scalar_rule(n_tokens, ScalarRule::AtMost(8));
    b.scalar_rule(group, ScalarRule::AtLeast(1));
    b.scalar_rule(ctx_max, ScalarRule::AtLeast(1));
    let qlen = ShapeExpr::scaled(&[n_tokens, n_kv, group], d as u64, 1);
    b.set_buffer_len(q, qlen.clone());
    match out {
        Output::F32(out) => b.set_buffer_len(out, qlen),
        Output::Q8_1s { q, s } => {
            b.set_buffer_len(q, qlen);
            let slen = ShapeExpr::scaled(&[n_tokens, n_kv, group], (d / QK) as u64, 1);
            b.set_buffer_len(s, slen);
        }
    }
    let clen = match cache {
        CacheType::Q8_0 => ShapeExpr::scaled(&[n_kv, ctx_max], cache.row_bytes(d) as u64, 1),
        CacheType::F16 => ShapeExpr::scaled(&[n_kv, ctx_max], d as u64, 1),
    };
    b.set_buffer_len(k_cache, clen.clone());
    b.set_buffer_len(v_cache, clen);
    let per_row = MAX_SPLITS as u64 * (d as u64 + 4);
    let plen = ShapeExpr::scaled(&[n_kv, n_tokens, group], per_row, 1);
    let partials = b.workspace("partials", ScalarType::F32, plen);
    let counters = (!shape.baseline).then(|| {
        let len = ShapeExpr::scaled(&[n_kv, n_tokens, group], 1, 1);
        b.workspace("counters", ScalarType::U32, len)
    });
    let gx = if shape.baseline {
        ShapeExpr::constant(1)
    } else {
        ShapeExpr::scaled(&[n_tokens, group], 1, shape.rows as u64)
    };
    let gz = if shape.baseline || shape.short { 1 } else { MAX_SPLITS.div_ceil(spw) };
    b.grid([gx, ShapeExpr::scaled(&[n_kv], 1, 1), ShapeExpr::constant(gz as u64)]);
    let r = shape.rows;
    let q_lds = match order {
        Order::F32 => b.lds("q_rows", ScalarType::F32, r * d),
        Order::I8 { .. } => b.lds("q_quants", ScalarType::U32, r * d / 4),
    };
    let qd_lds = order.is_i8().then(|| b.lds("q_scales", ScalarType::F32, r * d / 32));
    let gsplits = group_splits(order, wave);
    let max_states =
        if gsplits == 1 { MAX_SPLITS } else { GROUPED_ABOVE.max(MAX_SPLITS / gsplits) };
    let w_stride = if order.is_i8() { max_states } else { MAX_SPLITS };
    let w_lds = b.lds("weights", ScalarType::F32, r * w_stride);
    let l_lds = b.lds("sums", ScalarType::F32, r * w_stride);
    // The waves' staged K chunks; after the scan, the splits' states for step 3's first level
    // (the baseline keeps them in `partials`). The i8 order's `mma` variants: their staged K
    // (and V) chunks ([`i8::stage_words`]), then the states.
    let stage_words = spw * wave * cache.row_bytes(d) / 4;
    assert!(
        shape.baseline
            || order.is_i8()
            || (spw.is_multiple_of(gsplits) && spw * parts == shape.waves),
        "a workgroup holds whole groups of {gsplits} splits ({} waves, {parts} a split)",
        shape.waves
    );
    let splits_lds = LdsStates { base: 0, rows: r, slots: spw };
    let bufs = if async_k { 2 } else { 1 };
    let k_words = match order {
        Order::F32 if shape.baseline => stage_words,
        Order::F32 => (bufs * stage_words).max(splits_lds.words(d)),
        Order::I8 { .. } if shape.baseline => 1,
        Order::I8 { stage_k } => i8::stage_words(shape, stage_k, d).max(splits_lds.words(d)),
    };
    let k_lds = b.lds("k_chunks", ScalarType::U32, k_words);

    let lane = b.lane();
    let tid = b.local_id();
    let wave_id = b.wave();
    let rg = b.workgroup_id(Dim::X);
    let h = b.workgroup_id(Dim::Y);
    let zg = b.workgroup_id(Dim::Z);
    let (pos_v, t_v, kv_v, g_v, ctx_v, sc_v) =
        (b.arg(pos), b.arg(n_tokens), b.arg(n_kv), b.arg(group), b.arg(ctx_max), b.arg(scale));
    let n_q = b.mul(kv_v, g_v);
    let end = b.add(pos_v, t_v);
    let kv_len = b.min(end, ctx_v);
    // Keys a chunk: the wave size, or 32 for the i8 order.
    let ck = match order {
        Order::F32 => wave,
        Order::I8 { .. } => i8::CHUNK,
    };
    let wv = b.u32(ck);
    let wm1 = b.u32(ck - 1);
    let n_chunks = b.add(kv_len, wm1);
    let n_chunks = b.div(n_chunks, wv);
    let ms = b.u32(MAX_SPLITS);
    let msm1 = b.u32(MAX_SPLITS - 1);
    let cps = b.add(n_chunks, msm1);
    let cps = b.div(cps, ms);
    let one = b.u32(1);
    let cpsm1 = b.sub(cps, one);
    let n_splits = b.add(n_chunks, cpsm1);
    let n_splits = b.div(n_splits, cps);
    let rows_per_head = b.mul(t_v, g_v);
    let dpl = d / wave / parts;
    // The wave's split in the workgroup and its first dimension in the P.V product.
    let across =
        shape.across.map(|_| across::Across::new(&mut b, (parts, spw), r, (d, wave), wave_id));
    let dplv = b.u32(dpl);
    let (sw, d0) = match &across {
        Some(x) => (x.split(), b.mul(x.index(), dplv)),
        None => (wave_id, b.mul(lane, dplv)),
    };
    let four = b.u32(4);
    let rt_zero = b.shr(t_v, four);
    let chunk_bytes = b.u32(wave * cache.row_bytes(d));
    let region = b.mul(sw, chunk_bytes);
    let c = Ctx {
        cache,
        d,
        wave,
        threads,
        dpl,
        q,
        k_cache,
        v_cache,
        out,
        rope: rope_args,
        partials,
        h,
        group: g_v,
        n_q,
        lane,
        tid,
        ctx_max: ctx_v,
        pos: pos_v,
        scale: sc_v,
        kv_len,
        n_chunks,
        cps,
        n_splits,
        group_splits: gsplits,
        max_states,
        w_stride,
        rows_per_head,
        d0,
        rt_zero,
        n_kv: kv_v,
        k_lds,
        region,
        k_second: (async_k && !order.is_i8()).then(|| b.u32(stage_words * 4)),
        nvidia: t.family == kiln_ir::target::Family::Nvidia,
        q_lds,
        qd_lds,
        w_lds,
        l_lds,
        across,
    };
    if let Order::I8 { stage_k } = order {
        i8::body(&mut b, &c, t, shape, stage_k, wave_id, rg, zg, counters);
        return b.finish();
    }
    if shape.short {
        short::body(&mut b, &c, r, shape.waves, wave_id, rg, splits_lds);
        return b.finish();
    }
    let Some(counters) = counters else {
        // The baseline: every row alone, its splits in order into `partials`, then both
        // levels of the combine lane by lane.
        let zero = b.u32(0);
        b.for_range(zero, rows_per_head, one, 1, &[], |b, i, _| {
            load_q(b, &c, i, 1);
            b.barrier(BarrierKind::Lds);
            let rows = [row(b, &c, i)];
            let zero = b.u32(0);
            let one = b.u32(1);
            b.for_range(zero, n_splits, one, 1, &[], |b, s, _| {
                let yes = b.bool(true);
                let st = scan(b, &c, &rows, s, yes, None);
                store_state(b, &c, &rows, s, &st);
                vec![]
            });
            b.barrier(BarrierKind::All);
            combine_direct(b, &c, &rows);
            // The next row writes the LDS and the workspace again.
            b.barrier(BarrierKind::All);
            vec![]
        });
        return b.finish();
    };
    let flag = b.lds("count", ScalarType::U32, 1);
    let nw = b.u32(spw);
    let s0 = b.mul(zg, nw);
    let busy = b.lt(s0, n_splits);
    b.if_then(busy, |b| {
        let rv = b.u32(r);
        let i0 = b.mul(rg, rv);
        // The split's first K (and V) rows are asked for before q, so the latencies overlap.
        let first = first_loads(b, &c, |b| b.add(s0, wave_id), r as usize);
        let x_first =
            c.across.as_ref().and_then(|x| across::first_loads(b, &c, x, r, |b| b.add(s0, sw)));
        load_q(b, &c, i0, r);
        b.barrier(BarrierKind::Lds);
        let rows: Vec<Row> = (0..r)
            .map(|k| {
                let kk = b.u32(k);
                let i = b.add(i0, kk);
                row(b, &c, i)
            })
            .collect();
        let s = b.add(s0, sw);
        let mine = b.lt(s, n_splits);
        // Ends with a barrier: `k_lds` is free for the states.
        let st = match &c.across {
            Some(x) => across::scan(b, &c, x, &rows, s, mine, x_first.as_ref()),
            None => scan(b, &c, &rows, s, mine, first.as_ref()),
        };
        let grouped = c.grouped(b);
        b.if_else(
            grouped,
            |b| {
                // Step 3's first level here: the waves' states through LDS, the groups into
                // `partials`.
                b.if_then(mine, |b| store_lds(b, &c, &rows, splits_lds, sw, &st));
                b.barrier(BarrierKind::Lds);
                let gsv = b.u32(c.group_splits);
                let g0 = b.div(s0, gsv);
                let groups = spw / c.group_splits;
                combine_groups(b, &c, &rows, splits_lds, s0, groups, g0);
                vec![]
            },
            |b| {
                b.if_then(mine, |b| store_state(b, &c, &rows, s, &st));
                vec![]
            },
        );
        let nwm1 = b.u32(spw - 1);
        let total = b.add(n_splits, nwm1);
        let total = b.div(total, nw);
        let hr = b.mul(h, rows_per_head);
        let counter = b.add(hr, rg);
        // The last fold 4 dimensions a lane where it takes more than one pass, on sm_90 only:
        // `r4x2` at its cap of 128 registers spilled 16 bytes with it on sm_86 and sm_89
        // (forty-first session). On an H100 it is 1.4-4.3% faster at four and eight tokens
        // and the same with one (bench/results/h100-2026-12-07.md).
        let how = if t.name == "sm_90" { Fold::BatchedQuad } else { Fold::Batched };
        last_of_workgroups(b, c.tid, flag, counters, counter, total, |b| {
            combine(b, &c, &rows, wave_id, shape.waves, States::Partials, how);
            reset_counter(b, tid, counters, counter);
        });
    });
    b.finish()
}
