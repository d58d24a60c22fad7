//! `attention_prefill_{q8_0,f16}_d{64,128}[_qbf16|_of16]`: prompt attention on the matrix units
//! (issue 14). Causal attention of a chunk of `L` query rows at positions `pos..pos+L` (row `t`
//! sees keys `0..=pos+t`) against the cache (`[kv_head][ctx_max][head_dim]`, Q8_0 or f16, the
//! decode cache of [`super::kv_append`], the chunk itself already appended), grouped-query
//! (`group` q heads a KV head), head dim 64 or 128, online softmax with the portable exp. Q f16
//! and out f32; the `_qbf16` families take Q in bf16, the `_of16` families write out in f16
//! ([`Io`]). `docs/prefill.md` has the numbers and the resources.
//!
//! ABI (every variant):
//!
//! | param        | kind                                          | meaning                      |
//! |--------------|-----------------------------------------------|------------------------------|
//! | `q`          | f16 (`_qbf16`: bf16), read, `n_tokens*n_kv_heads*group*D` | `[L][n_q][D]`, rotated |
//! | `k_cache`, `v_cache` | u8 `n_kv*ctx_max*D/32*34` (q8_0) or f16 `n_kv*ctx_max*D`, read | the caches |
//! | `out`        | f32 (`_of16`: f16), write, like `q`           | `[L][n_q][D]`                |
//! | `pos`        | u32                                           | position of row 0            |
//! | `n_tokens`   | u32, >= 1                                     | query rows a head `L`        |
//! | `n_kv_heads` | u32                                           | KV heads                     |
//! | `group`      | u32, >= 1                                     | q heads a KV head            |
//! | `ctx_max`    | u32, > 0                                      | cache capacity (rows)        |
//! | `scale`      | f32                                           | softmax scale                |
//!
//! # Work split
//! The rows of a KV head are `i = t * group + j` (token `t`, q head `h * group + j`), so that
//! the q heads sharing a KV head share every K/V fragment. A workgroup is one wave and owns
//! `tiles` tiles of 16 rows; it walks the keys `0 .. min(pos + t_last + 1, ctx_max)` (`t_last`
//! the token of its last row) in blocks of [`key_block`] keys: 32 on NVIDIA's `m16n8k16` (16
//! until 2026-12-05), 16 on every other arch.
//!
//! # Loads
//! On the matrix path each block's K rows, then its V rows, are staged as f16 in one LDS buffer
//! (`[key][D]`; f16 rows by 16-byte loads, Q8_0 a block a lane), and the B fragments are
//! `frag_load`s from there (K^T column-major, V row-major), so the global loads are wide and the
//! lane maps only address LDS.
//!
//! # The order (part of the result; every variant of an arch keeps it)
//! Per key block: `S = Q K^T` on the matrix unit (f16 inputs, f32 accumulation, each
//! element the chain of `D / 16` instructions of 16 dims from a zero accumulator); `S` goes to LDS; the lane of row `r` (`lane % 16`) folds the block:
//! `s_j = S[r][j] * scale` (`-inf` for a key the row does not see), `mx = max_j s_j`,
//! `m' = max(m, mx)`, `a = exp_sub(m, m')`, `p_j = f16(exp_sub_weight(s_j, m'))`,
//! `l' = l * a + w` with `w` the block's weights summed in f32 as [`weights_sum`]'s tree; `P` (f16) and `a` go to LDS; every accumulator element of
//! row `r` becomes `o * a`, then `O += P V` on the matrix unit: the block's 16-key steps
//! chained in key order (`O * a`, then `P_0 V_0`, then `P_1 V_1` in a block of 32). At the end
//! `out = o / l`. Q8_0 values enter the matrix unit as `f16(f32(q) * f32(d))` (the int8
//! quant turned into a half in registers and multiplied by the block scale, one rounding).
//! A bf16 Q enters as `f16(f32(q))` (exact for `2^-14 <= |q| <= 65504`; nearest even below,
//! infinite above), so a `_qbf16` family gives the bits of its f16 family on those halves; an
//! `_of16` family stores `f16(o / l)` (nearest even), the bits of its f32 family rounded.
//!
//! The matrix unit's f16 products are exact but the order and the intermediate precision of
//! its sums are the hardware's: a device is compared with the interpreter within a bound
//! ([`check`], `Parity::Within`), not bit for bit. The softmax (scale, max, exps, the sum of
//! `l`, the rescale, the division) is exact ops in one order. Variants of one arch differ only
//! by how many row tiles share a K/V fragment, so they equal the baseline bit for bit on the
//! interpreter.
//!
//! # Variants and routes
//! - `baseline`: one row tile (16 rows) a workgroup.
//! - `w4g`, `w4qs` (NVIDIA's `mma.sync m16n8k16` only, [`wide_fits`]; elsewhere the baseline's
//!   code, not routed): four waves a workgroup share each staged K/V tile and keep S, the
//!   softmax and P in registers (`wide.rs`). `w4gx`, `w4qsx`: their LDS fragments by
//!   `ld_matrix`; `w4gxa` (f16 caches): `w4gx` with K and V staged by async copies into two
//!   buffers; `w4qsxc` (Q8_0): `w4qsx` in 128 registers on sm_90; `w4gxl`: `w4gx` with the row
//!   groups in order (for the bench). Routed first on those archs, from the H200's figures
//!   ([`wide_variants`]): `w4gxa` / `w4qsxc` from [`LONG_CHUNK`] rows, `w4gx` below.
//! - `pipe`: the next block's K loads carried by the loop in registers (issued after this
//!   block's S, stored at the top of the next iteration) and this block's V loads issued before
//!   S; the same values in the same order. Where it would spill ([`pipe_fits`]) it is the
//!   baseline's code, not routed.
//! - `m32` (head dim 64 only, see [`M32_MAX_D`]): two row tiles a workgroup sharing every K
//!   and V fragment (half the K/V reads);
//!   routed when `n_tokens >= 8` on the archs with the matrix shape and no wide variant (the
//!   fallback's m32 is not routed: it only doubles its registers).
//!
//! Archs without an f16 matrix shape of K = 16 (gfx906, gfx1030, sm_75) build the lane
//! fallback: the same blocks, softmax and LDS traffic, with `S` and `P V` computed by plain
//! f32 fmas, each lane owning `256 / W` elements of `S` and `16 D / W` of `O` (bit for bit the
//! interpreter's on the device, as every exact-op kernel).

mod abi;
mod cases;
mod stage;
mod wide;

pub use abi::Io;
use abi::{declare, q_fragments, row_of, Args};
use stage::{fetch, fetched_from, fetched_values, put, stage};

use super::CacheType;
use crate::math::{exp_sub, exp_sub_weight};
use crate::mma::kind_for;
use crate::{Bench, KernelSpec, Parity, VariantSpec};
use cases::{bench_cases, parity_cases};
pub use cases::{case, case_shapes, check, check_f16, dequantize, flops, CaseShape};
use kiln_ir::matrix::{FragmentRole, MmaInputs, MmaKind};
use kiln_ir::package::Admission;
use kiln_ir::{
    BarrierKind, Dim, IndexUnit, Kernel, KernelBuilder, LdsSlot, Param, ScalarType, Target, Type,
    Value,
};
pub use wide::{wide_archs, wide_fits, Wide, W4G, W4GX, W4GXA, W4GXL, W4QS, W4QSX, W4QSXC};

/// The keys of a block of `kb` keys whose weights lane `t` of a quad holds in NVIDIA's C layout,
/// in the order of its sum: `16 h + 2t`, `16 h + 2t + 1`, `16 h + 8 + 2t`, `16 h + 9 + 2t` for
/// `h` in `0 .. kb / 16`.
pub fn lane_keys(t: u32, kb: u32) -> Vec<u32> {
    (0..kb / MMA_K).flat_map(|h| [0, 1, 8, 9].map(|k| h * MMA_K + 2 * t + k)).collect()
}

/// The sum of a block's weights (as f32) in the order of the result, from the four sums `u_t`,
/// each `tree` of the weights of [`lane_keys`]`(t, kb)` in that order: `u_t = (p_{2t} +
/// p_{2t+1}) + (p_{8+2t} + p_{9+2t})` for a block of 16, `u_t = ((p_{2t} + p_{2t+1}) +
/// (p_{8+2t} + p_{9+2t})) + ((p_{16+2t} + p_{17+2t}) + (p_{24+2t} + p_{25+2t}))` for 32; then
/// `(u_0 + u_1) + (u_2 + u_3)`. A tree rather than key order: the wide variants add a lane's
/// keys and the quad's sums by two xor shuffles instead of a chain of adds.
pub fn weights_sum(b: &mut KernelBuilder, u: [Value; 4]) -> Value {
    let v01 = b.add(u[0], u[1]);
    let v23 = b.add(u[2], u[3]);
    b.add(v01, v23)
}

/// `x` combined by `op` as a balanced tree over neighbours in order, `((x_0 op x_1) op (x_2 op
/// x_3)) op ...` (a power of two of values).
pub(super) fn tree(
    b: &mut KernelBuilder,
    x: &[Value],
    op: fn(&mut KernelBuilder, Value, Value) -> Value,
) -> Value {
    assert!(x.len().is_power_of_two(), "a tree of {} values", x.len());
    if x.len() == 1 {
        return x[0];
    }
    let (lo, hi) = x.split_at(x.len() / 2);
    let lo = tree(b, lo, op);
    let hi = tree(b, hi, op);
    op(b, lo, hi)
}

/// Keys a block on every arch but those of NVIDIA's `m16n8k16` ([`key_block`]).
pub const KEY_BLOCK: u32 = 16;
/// Keys a block on the archs of NVIDIA's `m16n8k16` (sm_80 and later), where the wide variants
/// run ([`key_block`]).
pub const KEY_BLOCK_WIDE: u32 = 32;

/// Keys a block on `t` at `wave`: the softmax's step (one maximum, one rescale of `O` and `l`)
/// and the keys staged together. Part of the order. [`KEY_BLOCK_WIDE`] = 32 where the wide
/// variants run (NVIDIA's `m16n8k16`; 16 there until 2026-12-05: a block of 32 halves the
/// rescales, maxima and `a` exps a key), [`KEY_BLOCK`] = 16 elsewhere (at 32, `pipe` and `m32`
/// spill on gfx11, gfx12 and CDNA, where nothing has been timed).
pub fn key_block(t: &Target, wave: u32) -> u32 {
    if wide_fits(t, wave) {
        KEY_BLOCK_WIDE
    } else {
        KEY_BLOCK
    }
}

/// K of the matrix shapes used: dims of `Q K^T`, keys of `P V` an instruction.
pub const MMA_K: u32 = 16;
/// Rows a tile.
pub const TILE_ROWS: u32 = 16;

/// The f16 matrix kind a prefill uses on `t` at wave `wave`: the arch's f16 shape when its K
/// is 16 ([`MMA_K`]) and M is 16 (every shape but sm_75's m16n8k8) and it runs at `wave`.
pub fn prefill_kind(t: &Target, wave: u32) -> Option<MmaKind> {
    kind_for(t, MmaInputs::F16).filter(|k| {
        let (m, _, kk) = k.shape().mnk();
        m == TILE_ROWS && kk == MMA_K && k.shape().wave_size() == wave
    })
}

/// Whether the `pipe` variant's registers fit on `t` (else it builds the baseline's code and is
/// not routed there): everywhere with a matrix path but gfx11's WMMA (A and B fragments
/// duplicated to 16 halves a lane) with an f16 cache at head dim 128, where the in-flight
/// V and next-K rows (32 VGPRs each) spill, and the archs of the wide variants (routed first
/// there), where the in-flight rows of a block of 32 keys spill with a Q8_0 cache at head dim
/// 128 (16-32 bytes on sm_80 to sm_90).
pub fn pipe_fits(t: &Target, wave: u32, cache: CacheType, d: u32) -> bool {
    prefill_kind(t, wave).is_some_and(|k| {
        !(k.shape() == kiln_ir::matrix::MmaShape::Gfx11WmmaF16
            && d >= 128
            && cache == CacheType::F16)
    }) && !wide_fits(t, wave)
}

/// The archs where `pipe` is routed (at their default wave).
pub fn pipe_archs(cache: CacheType, d: u32) -> Vec<String> {
    kiln_ir::TARGETS
        .iter()
        .filter(|t| pipe_fits(t, t.default_wave(), cache, d))
        .map(|t| t.name.to_string())
        .collect()
}

/// The archs with a matrix path at their default wave (where `m32` is routed).
pub fn mma_archs() -> Vec<String> {
    kiln_ir::TARGETS
        .iter()
        .filter(|t| prefill_kind(t, t.default_wave()).is_some())
        .map(|t| t.name.to_string())
        .collect()
}

/// The largest head dim with an `m32` variant: at 128, two tiles' accumulators (128 f32 a lane
/// at wave 32) beside the fragments spill on gfx11, sm_80+ and the lanes fallback.
pub const M32_MAX_D: u32 = 64;

fn build<const Q8: bool, const D: u32, const IO: usize, const TILES: u32, const PIPE: bool>(
    t: &Target,
    wave: u32,
) -> Kernel {
    let cache = if Q8 { CacheType::Q8_0 } else { CacheType::F16 };
    attention(t, wave, cache, D, Io::BUILT[IO], TILES, PIPE)
}

/// The wide shapes, indexed by [`build_wide`]'s `SHAPE`.
const WIDE: [Wide; 7] = [W4G, W4QS, W4GX, W4QSX, W4GXA, W4GXL, W4QSXC];

fn build_wide<const Q8: bool, const D: u32, const IO: usize, const SHAPE: usize>(
    t: &Target,
    wave: u32,
) -> Kernel {
    let cache = if Q8 { CacheType::Q8_0 } else { CacheType::F16 };
    wide::attention_wide(t, wave, cache, D, Io::BUILT[IO], WIDE[SHAPE])
}

/// The least `n_tokens` at which the long-chunk wide variant is routed first (`w4gxa` with an
/// f16 cache, `w4qsxc` with Q8_0); shorter chunks take `w4gx`. On the H200
/// (`bench/results/prefill-kb32-h200-2026-12-05.md`, call 3) `w4gx` is 1.28x (f16) and 1.36x
/// (Q8_0) faster at L = 1024 and the long-chunk variants 1.05x and 1.22x faster at 2048; the
/// turn, interpolated on a log scale, lies near 1.8K (f16) and 1.5K (Q8_0).
pub const LONG_CHUNK: u32 = 1536;

/// The wide variants ([`W4G`], [`W4QS`] and their `ld_matrix` forms), on the archs with
/// NVIDIA's f16 shape. Routed, from the H200's figures (`bench/results/prefill-kb32-h200-2026-12-05.md`):
/// chunks of [`LONG_CHUNK`] rows or more take `w4gxa` (f16 cache) or `w4qsxc` (Q8_0), shorter
/// ones `w4gx`; the rest follow for the bench. The families with other Q or out types ([`Io`])
/// build `w4g` (f16) or `w4qs` (Q8_0) only, as timed in `prefill-io-h200-2026-12-02.md`.
fn wide_variants<const Q8: bool, const D: u32, const IO: usize>() -> Vec<VariantSpec> {
    let wide = |name, build, min_tokens: u32| VariantSpec {
        name,
        build,
        admit: Admission {
            archs: wide_archs(),
            shapes: if min_tokens > 1 {
                vec![("n_tokens".into(), u64::from(min_tokens), u64::from(u32::MAX))]
            } else {
                vec![]
            },
        },
    };
    let v = |name, build| wide(name, build, 1);
    let g = v(W4G.name, build_wide::<Q8, D, IO, 0> as crate::BuildFn);
    let qs = v(W4QS.name, build_wide::<Q8, D, IO, 1> as crate::BuildFn);
    if IO != 0 {
        return vec![if Q8 { qs } else { g }];
    }
    let gx = v(W4GX.name, build_wide::<Q8, D, IO, 2> as crate::BuildFn);
    let qsx = v(W4QSX.name, build_wide::<Q8, D, IO, 3> as crate::BuildFn);
    let gxl = v(W4GXL.name, build_wide::<Q8, D, IO, 5> as crate::BuildFn);
    if Q8 {
        // 128 registers on sm_90 (16 warps an SM); an f16 cache spills there.
        let qsxc = wide(W4QSXC.name, build_wide::<Q8, D, IO, 6> as crate::BuildFn, LONG_CHUNK);
        vec![qsxc, gx, qs, qsx, g, gxl]
    } else {
        // K and V by async copies: f16 caches only.
        let gxa = wide(W4GXA.name, build_wide::<Q8, D, IO, 4> as crate::BuildFn, LONG_CHUNK);
        vec![gxa, gx, g, qs, qsx, gxl]
    }
}

/// A family. Those with Q f16 and out f32 (`IO` 0) build every variant; the `_qbf16` and
/// `_of16` ones the baseline, the routed wide variant and `m32` (head dim 64) only, so that
/// the library's build time grows by a third of theirs: on AMD's matrix archs they route the
/// baseline where the f16 / f32 families route `pipe`.
fn family<const Q8: bool, const D: u32, const IO: usize>(name: &'static str) -> KernelSpec {
    let max = u64::from(u32::MAX);
    let cache = if Q8 { CacheType::Q8_0 } else { CacheType::F16 };
    let io = Io::BUILT[IO];
    assert_eq!(name, io.family(cache, D), "the family's name states its types");
    let v = |name, build: crate::BuildFn, admit| VariantSpec { name, build, admit };
    let mut variants = vec![v("baseline", build::<Q8, D, IO, 1, false>, Admission::default())];
    variants.extend(wide_variants::<Q8, D, IO>());
    if D <= M32_MAX_D {
        variants.push(v(
            "m32",
            build::<Q8, D, IO, 2, false>,
            Admission { archs: mma_archs(), shapes: vec![("n_tokens".into(), 8, max)] },
        ));
    }
    if IO == 0 {
        variants.push(v(
            "pipe",
            build::<Q8, D, IO, 1, true>,
            Admission { archs: pipe_archs(cache, D), shapes: vec![] },
        ));
    }
    KernelSpec {
        name,
        variants,
        parity: Parity::Within {
            cases: |rng, large| parity_cases(rng, large, Q8, D, Io::BUILT[IO]),
            check: if io.out == ScalarType::F16 { check_f16 } else { check },
        },
        bench: if D == 128 {
            Bench::Cases(|| {
                bench_cases(if Q8 { CacheType::Q8_0 } else { CacheType::F16 }, Io::BUILT[IO])
            })
        } else {
            Bench::Without("timed at head dim 128 (the issue's 32 q / 8 kv shape)")
        },
        archs: None,
        budgets: vec![],
    }
}

/// The twelve families: each cache and head dim with Q f16 and out f32, Q bf16 (`_qbf16`), and
/// out f16 (`_of16`).
pub fn specs() -> Vec<KernelSpec> {
    vec![
        family::<true, 64, 0>("attention_prefill_q8_0_d64"),
        family::<true, 128, 0>("attention_prefill_q8_0_d128"),
        family::<false, 64, 0>("attention_prefill_f16_d64"),
        family::<false, 128, 0>("attention_prefill_f16_d128"),
        family::<true, 64, 1>("attention_prefill_q8_0_d64_qbf16"),
        family::<true, 128, 1>("attention_prefill_q8_0_d128_qbf16"),
        family::<false, 64, 1>("attention_prefill_f16_d64_qbf16"),
        family::<false, 128, 1>("attention_prefill_f16_d128_qbf16"),
        family::<true, 64, 2>("attention_prefill_q8_0_d64_of16"),
        family::<true, 128, 2>("attention_prefill_q8_0_d128_of16"),
        family::<false, 64, 2>("attention_prefill_f16_d64_of16"),
        family::<false, 128, 2>("attention_prefill_f16_d128_of16"),
    ]
}

/// The row group of this workgroup (`y`, the grid's second dimension). `heavy_first`: row group
/// `n - 1 - y` of the grid's `n`, so that the longest workgroups (the last rows: the most keys)
/// start first, the hardware starting workgroups in the order of their ids; the same rows, the
/// same bits ([`Wide::heavy_first`], docs/prefill.md "Longest workgroups first").
pub(super) fn row_group(b: &mut KernelBuilder, heavy_first: bool) -> Value {
    let y = b.workgroup_id(Dim::Y);
    if !heavy_first {
        return y;
    }
    let n = b.num_workgroups(Dim::Y);
    let one = b.u32(1);
    let last = b.sub(n, one);
    b.sub(last, y)
}

/// What the pieces of a kernel share.
struct Ctx {
    cache: CacheType,
    d: u32,
    tiles: u32,
    k_cache: Param,
    v_cache: Param,
    /// The KV head.
    h: Value,
    ctx_max: Value,
    /// The last key the workgroup may read (`kv_len - 1`).
    last_key: Value,
    lane: Value,
    /// `S` tiles (f32, `tiles x 16 x 16`), `P` tiles (f16, likewise), per-row scalars (f32,
    /// `tiles x 16`: the block's `a`, at the end `l`).
    s_lds: LdsSlot,
    p_lds: LdsSlot,
    a_lds: LdsSlot,
    /// The block's K rows, then its V rows, as f16 (`[key][D]`), staged by wide loads (every
    /// matrix path, and the lanes fallback at wave 64; one buffer for both, so that LDS does not
    /// limit the occupancy).
    kv_lds: Option<LdsSlot>,
    /// The wave size.
    wave: u32,
    /// Keys a block ([`key_block`]).
    kb: u32,
}

impl Ctx {
    /// The value of dimension `dim` of cache row `key` of the head as f16 (Q8_0: `f16(q * d)`).
    fn cache_value(&self, b: &mut KernelBuilder, p: Param, key: Value, dim: Value) -> Value {
        let key = b.min(key, self.last_key);
        let hr = b.mul(self.h, self.ctx_max);
        let r = b.add(hr, key);
        match self.cache {
            CacheType::Q8_0 => {
                let rb = b.u32(self.cache.row_bytes(self.d));
                let base = b.mul(r, rb);
                let c32 = b.u32(32);
                let bi = b.div(dim, c32);
                let o = b.rem(dim, c32);
                let c34 = b.u32(34);
                let boff = b.mul(bi, c34);
                let blk = b.add(base, boff);
                let sc = b.load_with(p, blk, ScalarType::U16, IndexUnit::Byte, Some(2));
                let sc = b.bitcast(sc, Type::F16);
                let sc = b.convert(sc, Type::F32);
                let two = b.u32(2);
                let qa = b.add(blk, two);
                let qa = b.add(qa, o);
                let x = b.load_with(p, qa, ScalarType::U8, IndexUnit::Byte, Some(1));
                let x = b.bitcast(x, Type::scalar(ScalarType::I8));
                let x = b.convert(x, Type::F32);
                let x = b.mul(x, sc);
                b.convert(x, Type::F16)
            }
            CacheType::F16 => {
                let dd = b.u32(self.d);
                let at = b.mul(r, dd);
                let at = b.add(at, dim);
                b.load(p, at, Type::F16)
            }
        }
    }
}

/// How `S` and `P V` are computed: on the matrix unit, or by lanes.
enum Engine {
    Mma {
        kind: MmaKind,
        /// The Q fragments.
        q: QFrags,
        /// `(row, col)` of each C element.
        c_coord: Vec<(Value, Value)>,
    },
    Lanes {
        /// The Q tiles in LDS (`[tile][row][D]`, f16).
        q: LdsSlot,
        /// `(row, key)` of the lane's `S` elements.
        s_coord: Vec<(Value, Value)>,
        /// `(row, dim)` of the lane's `O` elements.
        o_coord: Vec<(Value, Value)>,
    },
}

/// Where the matrix unit's Q fragments are.
enum QFrags {
    /// In registers, `[tile][dim step]`, loaded once.
    Regs(Vec<Vec<Value>>),
    /// Loaded from the Q tiles in LDS (`[tile][row][D]`, f16) for every block.
    Lds(LdsSlot),
}

/// One prefill kernel: `tiles` row tiles a workgroup, on `t`'s matrix unit when it has the
/// shape at `wave`, else by lanes.
pub fn attention(
    t: &Target,
    wave: u32,
    cache: CacheType,
    d: u32,
    io: Io,
    tiles: u32,
    pipelined: bool,
) -> Kernel {
    let kind = prefill_kind(t, wave);
    let suffix = match (tiles, pipelined) {
        (1, false) => String::new(),
        (1, true) => "_pipe".to_string(),
        (n, _) => format!("_m{}", n * TILE_ROWS),
    };
    let kb = key_block(t, wave);
    let mut b = KernelBuilder::new(format!("{}{suffix}", io.family(cache, d)), wave);
    b.workgroup_size([wave, 1, 1]);
    b.const_param("head_dim", d as i64);
    b.const_param("row_tiles", tiles as i64);
    b.const_param("key_block", kb as i64);
    b.const_param("matrix_unit", kind.is_some() as i64);
    let rows_wg = (tiles * TILE_ROWS) as u64;
    let abi = declare(&mut b, cache, d, io, rows_wg);
    let (k_cache, v_cache) = (abi.k_cache, abi.v_cache);
    let tile_elems = tiles * TILE_ROWS * kb;
    let s_lds = b.lds("s_tile", ScalarType::F32, tile_elems);
    let p_lds = b.lds("p_tile", ScalarType::F16, tile_elems);
    let a_lds = b.lds("row_scalars", ScalarType::F32, tiles * TILE_ROWS);
    // Every matrix path stages; the lanes fallback at wave 64 only (at wave 32 and head dim 128
    // its cheaper LDS reads let LLVM unroll the key loop into a spill on gfx1030).
    let kv_lds = (kind.is_some() || wave == 64).then(|| b.lds("kv_block", ScalarType::F16, kb * d));

    let lane = b.lane();
    let h = b.workgroup_id(Dim::X);
    let rg = row_group(&mut b, true);
    let Args { pos: pos_v, group: g_v, ctx_max: ctx_v, scale: sc_v, n_q, rows } = abi.args(&mut b);
    let rwg = b.u32(rows_wg as u32);
    let i0 = b.mul(rg, rwg);
    // The workgroup's keys: up to its last row's, inside the cache.
    let one = b.u32(1);
    let last_i = b.add(i0, rwg);
    let last_i = b.sub(last_i, one);
    let rows_m1 = b.sub(rows, one);
    let last_i = b.min(last_i, rows_m1);
    let t_last = b.div(last_i, g_v);
    let end = b.add(pos_v, t_last);
    let end = b.add(end, one);
    let kv_len = b.min(end, ctx_v);
    let last_key = b.sub(kv_len, one);
    let kb16 = b.u32(kb - 1);
    let n_blocks = b.add(kv_len, kb16);
    let kbv = b.u32(kb);
    let n_blocks = b.div(n_blocks, kbv);
    let c = Ctx {
        cache,
        d,
        tiles,
        k_cache,
        v_cache,
        h,
        ctx_max: ctx_v,
        last_key,
        lane,
        s_lds,
        p_lds,
        a_lds,
        kv_lds,
        wave,
        kb,
    };
    // The row each lane folds (`lane % 16`) per tile, and the last key it sees.
    let c16 = b.u32(TILE_ROWS);
    let my_r = b.rem(lane, c16);
    let my_limit: Vec<Value> = (0..tiles)
        .map(|ti| {
            let off = b.u32(ti * TILE_ROWS);
            let i = b.add(i0, off);
            let i = b.add(i, my_r);
            let (_, t, _) = row_of(&mut b, i, rows, g_v, h, n_q, d);
            let lim = b.add(pos_v, t);
            b.min(lim, last_key)
        })
        .collect();
    // Q, once: into registers (the baseline's fragments) or into LDS (`q_tile`, `[tile][row][D]`
    // f16), where the block loop reads it again each block (the lanes fallback, and the matrix
    // unit when `tiles * D >= 256`, which would not fit in registers beside `O`).
    let q_in_lds = kind.is_none() || tiles * d >= 256;
    let q_lds = q_in_lds.then(|| {
        let slot = b.lds("q_tile", ScalarType::F16, tiles * TILE_ROWS * d);
        let n = b.u32(tiles * TILE_ROWS * d);
        let wv = b.u32(wave);
        let dd = b.u32(d);
        b.for_range(lane, n, wv, 1, &[], |b, idx, _| {
            let r = b.div(idx, dd);
            let dim = b.rem(idx, dd);
            let i = b.add(i0, r);
            let (_, _, at) = row_of(b, i, rows, g_v, h, n_q, d);
            let at = b.add(at, dim);
            let x = abi.q_half(b, at);
            b.store(slot, idx, x);
            vec![]
        });
        b.barrier(BarrierKind::Lds);
        slot
    });
    let engine = match kind {
        Some(kind) => {
            let shape = kind.shape();
            let qf = match q_lds {
                Some(slot) => QFrags::Lds(slot),
                None => QFrags::Regs(
                    (0..tiles)
                        .map(|ti| {
                            let off = b.u32(ti * TILE_ROWS);
                            let i = b.add(i0, off);
                            q_fragments(&mut b, kind, &abi, i, (rows, g_v, h, n_q), d)
                        })
                        .collect(),
                ),
            };
            let per_c = shape.elements_per_lane(FragmentRole::C);
            let c_coord = (0..per_c).map(|e| b.fragment_coord(kind, FragmentRole::C, e)).collect();
            Engine::Mma { kind, q: qf, c_coord }
        }
        None => {
            let coords = |b: &mut KernelBuilder, n: u32, cols: u32| -> Vec<(Value, Value)> {
                (0..n)
                    .map(|e| {
                        let ew = b.u32(e * wave);
                        let flat = b.add(ew, lane);
                        let cv = b.u32(cols);
                        (b.div(flat, cv), b.rem(flat, cv))
                    })
                    .collect()
            };
            let s_coord = coords(&mut b, TILE_ROWS * kb / wave, kb);
            let o_coord = coords(&mut b, TILE_ROWS * d / wave, d);
            let q = q_lds.expect("the lanes keep Q in LDS");
            Engine::Lanes { q, s_coord, o_coord }
        }
    };
    // The accumulators: `[tile][element]` (mma: the C fragments of D / n dim tiles, elements
    // in fragment order, flattened; lanes: the lane's O elements).
    let o_per_tile = match &engine {
        Engine::Mma { kind, c_coord, .. } => {
            let (_, n, _) = kind.shape().mnk();
            (d / n) as usize * c_coord.len()
        }
        Engine::Lanes { o_coord, .. } => o_coord.len(),
    };
    let fz = b.f32(0.0);
    let ninf = b.f32(f32::NEG_INFINITY);
    let mut init = vec![];
    for _ in 0..tiles {
        init.push(ninf);
        init.push(fz);
    }
    init.extend(std::iter::repeat_n(fz, tiles as usize * o_per_tile));
    let zero = b.u32(0);
    // Pipelined: the loop carries the next block's K loads (the first block's loaded here).
    let width = init.len();
    let pipelined = pipelined && pipe_fits(t, wave, cache, d);
    let k_like = (pipelined && c.kv_lds.is_some()).then(|| fetch(&mut b, &c, c.k_cache, zero));
    if let Some(like) = &k_like {
        init.extend(fetched_values(like));
    }
    let state = b.for_range(zero, n_blocks, one, 1, &init, |b, blk, st| {
        let k0 = b.mul(blk, kbv);
        // The previous block's LDS reads are done before this block's writes.
        b.barrier(BarrierKind::Lds);
        let (st, ahead) = st.split_at(width);
        // K of this block (loaded by the previous iteration when pipelined), then V's loads in
        // flight during S.
        let v_early = c.kv_lds.and_then(|kv| {
            match &k_like {
                Some(like) => put(b, &c, &fetched_from(like, ahead), kv),
                None => stage(b, &c, c.k_cache, kv, k0),
            }
            let v_rows = k_like.is_some().then(|| fetch(b, &c, c.v_cache, k0));
            b.barrier(BarrierKind::Lds);
            v_rows
        });
        scores(b, &c, &engine, k0);
        b.barrier(BarrierKind::Lds);
        // K's reads are done: V takes the buffer (read by `update` after the next barrier); the
        // next block's K loads go in flight during the softmax and P V.
        let mut k_next = vec![];
        if let Some(kv) = c.kv_lds {
            match v_early {
                Some(v) => put(b, &c, &v, kv),
                None => stage(b, &c, c.v_cache, kv, k0),
            }
            if k_like.is_some() {
                let k1 = b.add(k0, kbv);
                k_next = fetched_values(&fetch(b, &c, c.k_cache, k1));
            }
        }
        let mut next = vec![];
        for ti in 0..tiles as usize {
            let (m, l) = (st[2 * ti], st[2 * ti + 1]);
            next.extend(fold(b, &c, ti as u32, k0, my_r, my_limit[ti], sc_v, m, l));
        }
        b.barrier(BarrierKind::Lds);
        next.extend(update(b, &c, &engine, k0, &st[2 * tiles as usize..]));
        next.extend(k_next);
        next
    });
    // `l` of each row to LDS, then `out = o / l`.
    b.barrier(BarrierKind::Lds);
    let head = b.lt(lane, c16);
    for ti in 0..tiles {
        let l = state[2 * ti as usize + 1];
        b.if_then(head, |b| {
            let off = b.u32(ti * TILE_ROWS);
            let at = b.add(off, my_r);
            b.store(a_lds, at, l);
        });
    }
    b.barrier(BarrierKind::Lds);
    let o0 = 2 * tiles as usize;
    let elems: Vec<(Value, Value)> = match &engine {
        Engine::Mma { kind, c_coord, .. } => {
            let (_, n, _) = kind.shape().mnk();
            (0..d / n)
                .flat_map(|dn| c_coord.iter().map(move |&rc| (dn, rc)))
                .map(|(dn, (r, cc))| {
                    let off = b.u32(dn * n);
                    (r, b.add(cc, off))
                })
                .collect()
        }
        Engine::Lanes { o_coord, .. } => o_coord.clone(),
    };
    for ti in 0..tiles {
        for (e, &(r, dim)) in elems.iter().enumerate() {
            let o = state[o0 + ti as usize * o_per_tile + e];
            let off = b.u32(ti * TILE_ROWS);
            let ri = b.add(off, r);
            let l = b.load(a_lds, ri, Type::F32);
            let y = b.div(o, l);
            let i = b.add(i0, ri);
            let (valid, _, at) = row_of(&mut b, i, rows, g_v, h, n_q, d);
            let at = b.add(at, dim);
            abi.store_out(&mut b, valid, at, y);
        }
    }
    b.finish()
}

/// `S` of every tile for the block's keys from `k0` into `s_lds` (`[tile][row][key]`), unscaled.
fn scores(b: &mut KernelBuilder, c: &Ctx, e: &Engine, k0: Value) {
    let kbv = b.u32(c.kb);
    match e {
        Engine::Mma { kind, q, .. } => {
            let (_, n, _) = kind.shape().mnk();
            for ns in 0..c.kb / n {
                let z = b.f32(0.0);
                let mut s: Vec<Value> =
                    (0..c.tiles).map(|_| b.fragment_splat(*kind, FragmentRole::C, z)).collect();
                for ds in 0..c.d / MMA_K {
                    // The K^T fragment of these 16 dims (row: dim, col: key), shared by the
                    // tiles: column-major from the staged block.
                    let k_lds = c.kv_lds.expect("the matrix path stages K and V");
                    let at = b.u32(ns * n * c.d + ds * MMA_K);
                    let stride = b.u32(c.d);
                    let kb = b.frag_load(
                        *kind,
                        FragmentRole::B,
                        k_lds,
                        at,
                        stride,
                        kiln_ir::matrix::FragLayout::ColMajor,
                    );
                    for (ti, st) in s.iter_mut().enumerate() {
                        let qa = match q {
                            QFrags::Regs(f) => f[ti][ds as usize],
                            QFrags::Lds(slot) => {
                                let at = b.u32(ti as u32 * TILE_ROWS * c.d + ds * MMA_K);
                                let stride = b.u32(c.d);
                                b.frag_load(
                                    *kind,
                                    FragmentRole::A,
                                    *slot,
                                    at,
                                    stride,
                                    kiln_ir::matrix::FragLayout::RowMajor,
                                )
                            }
                        };
                        *st = b.mma(*kind, qa, kb, *st);
                    }
                }
                for (ti, st) in s.into_iter().enumerate() {
                    let base = b.u32(ti as u32 * TILE_ROWS * c.kb + ns * n);
                    b.frag_store(c.s_lds, base, kbv, kiln_ir::matrix::FragLayout::RowMajor, st);
                }
            }
        }
        Engine::Lanes { q, s_coord, .. } => {
            // Each S element a chain of fmas over the dims in order, from `q[0] k[0]` (a loop:
            // the lanes fallback keeps its registers few).
            let dv = b.u32(c.d);
            let kv = c.kv_lds;
            for &(r, col) in s_coord {
                for ti in 0..c.tiles {
                    let qrow = b.mul(r, dv);
                    let toff = b.u32(ti * TILE_ROWS * c.d);
                    let qrow = b.add(qrow, toff);
                    let qk = |b: &mut KernelBuilder, dim: Value| {
                        let qa = b.add(qrow, dim);
                        let x = b.load(*q, qa, Type::F16);
                        let x = b.convert(x, Type::F32);
                        // K from the staged block (`[key][D]`) or the cache.
                        let k = match kv {
                            Some(kv) => {
                                let at = b.mul(col, dv);
                                let at = b.add(at, dim);
                                b.load(kv, at, Type::F16)
                            }
                            None => {
                                let key = b.add(k0, col);
                                c.cache_value(b, c.k_cache, key, dim)
                            }
                        };
                        (x, b.convert(k, Type::F32))
                    };
                    let zero = b.u32(0);
                    let (x, k) = qk(b, zero);
                    let first = b.mul(x, k);
                    let one = b.u32(1);
                    let acc = b.for_range(one, dv, one, 1, &[first], |b, dim, acc| {
                        let (x, k) = qk(b, dim);
                        vec![b.fma(x, k, acc[0])]
                    })[0];
                    let at = b.mul(r, kbv);
                    let base = b.u32(ti * TILE_ROWS * c.kb);
                    let at = b.add(at, base);
                    let at = b.add(at, col);
                    b.store(c.s_lds, at, acc);
                }
            }
        }
    }
}

/// The online softmax step of the lane's row of tile `ti` over the block at `k0`: `P` (f16) and
/// `a` to LDS (from the lanes `< 16`); returns `(m', l')`.
#[allow(clippy::too_many_arguments)]
fn fold(
    b: &mut KernelBuilder,
    c: &Ctx,
    ti: u32,
    k0: Value,
    r: Value,
    limit: Value,
    scale: Value,
    m: Value,
    l: Value,
) -> Vec<Value> {
    let kbv = b.u32(c.kb);
    let base = b.u32(ti * TILE_ROWS * c.kb);
    let rb = b.mul(r, kbv);
    let rb = b.add(rb, base);
    let ninf = b.f32(f32::NEG_INFINITY);
    let s: Vec<Value> = (0..c.kb)
        .map(|j| {
            let jj = b.u32(j);
            let at = b.add(rb, jj);
            let x = b.load(c.s_lds, at, Type::F32);
            let x = b.mul(x, scale);
            let key = b.add(k0, jj);
            let sees = b.le(key, limit);
            b.select(sees, x, ninf)
        })
        .collect();
    let mut mx = s[0];
    for &x in &s[1..] {
        mx = b.max(mx, x);
    }
    let m2 = b.max(m, mx);
    let a = exp_sub(b, m, m2);
    // The weights a lane group at a time (`lane_keys`), each group's f16 weights stored to LDS
    // (from the lanes `< 16`) as soon as they are made, and summed as `weights_sum`'s tree.
    let c16 = b.u32(TILE_ROWS);
    let head = b.lt(c.lane, c16);
    let p_lds = c.p_lds;
    let u: Vec<Value> = (0..4)
        .map(|t| {
            let keys = lane_keys(t, c.kb);
            let ps: Vec<Value> = keys
                .iter()
                .map(|&j| {
                    let p = exp_sub_weight(b, s[j as usize], m2);
                    b.convert(p, Type::F16)
                })
                .collect();
            b.if_then(head, |b| {
                for (&j, &p) in keys.iter().zip(&ps) {
                    let jj = b.u32(j);
                    let at = b.add(rb, jj);
                    b.store(p_lds, at, p);
                }
            });
            let pf: Vec<Value> = ps.iter().map(|&p| b.convert(p, Type::F32)).collect();
            tree(b, &pf, KernelBuilder::add)
        })
        .collect();
    let w = weights_sum(b, [u[0], u[1], u[2], u[3]]);
    let la = b.mul(l, a);
    let l2 = b.add(la, w);
    let a_lds = c.a_lds;
    b.if_then(head, |b| {
        let off = b.u32(ti * TILE_ROWS);
        let at = b.add(off, r);
        b.store(a_lds, at, a);
    });
    vec![m2, l2]
}

/// `O = O * a + P V` of every tile for the block at `k0` (`P`, `a` and staged V from LDS); `o` holds
/// the tiles' accumulators one after another.
fn update(b: &mut KernelBuilder, c: &Ctx, e: &Engine, k0: Value, o: &[Value]) -> Vec<Value> {
    let kbv = b.u32(c.kb);
    let per_tile = o.len() / c.tiles as usize;
    match e {
        Engine::Mma { kind, c_coord, .. } => {
            let (_, n, _) = kind.shape().mnk();
            let per_c = c_coord.len();
            // P's A fragments, `[tile][k step]`.
            let steps = c.kb / MMA_K;
            let pf: Vec<Vec<Value>> = (0..c.tiles)
                .map(|ti| {
                    (0..steps)
                        .map(|ks| {
                            let pbase = b.u32(ti * TILE_ROWS * c.kb + ks * MMA_K);
                            b.frag_load(
                                *kind,
                                FragmentRole::A,
                                c.p_lds,
                                pbase,
                                kbv,
                                kiln_ir::matrix::FragLayout::RowMajor,
                            )
                        })
                        .collect()
                })
                .collect();
            let alpha: Vec<Vec<Value>> = (0..c.tiles)
                .map(|ti| {
                    c_coord
                        .iter()
                        .map(|&(r, _)| {
                            let toff = b.u32(ti * TILE_ROWS);
                            let at = b.add(toff, r);
                            b.load(c.a_lds, at, Type::F32)
                        })
                        .collect()
                })
                .collect();
            let mut next = o.to_vec();
            for dn in 0..c.d / n {
                // The V fragments of each k step (row: key, col: dim), shared by the tiles:
                // row-major from the staged block.
                let v_lds = c.kv_lds.expect("the matrix path stages K and V");
                let vf: Vec<Value> = (0..steps)
                    .map(|ks| {
                        let at = b.u32(ks * MMA_K * c.d + dn * n);
                        let stride = b.u32(c.d);
                        b.frag_load(
                            *kind,
                            FragmentRole::B,
                            v_lds,
                            at,
                            stride,
                            kiln_ir::matrix::FragLayout::RowMajor,
                        )
                    })
                    .collect();
                for ti in 0..c.tiles as usize {
                    let at = ti * per_tile + dn as usize * per_c;
                    let els: Vec<Value> =
                        (0..per_c).map(|ei| b.mul(o[at + ei], alpha[ti][ei])).collect();
                    // `O * a`, then the k steps chained in key order.
                    let mut acc = b.fragment_of(*kind, FragmentRole::C, &els);
                    for (p, v) in pf[ti].iter().zip(&vf) {
                        acc = b.mma(*kind, *p, *v, acc);
                    }
                    for ei in 0..per_c {
                        next[at + ei] = b.extract(acc, ei as u8);
                    }
                }
            }
            next
        }
        Engine::Lanes { o_coord, .. } => {
            // Scaled by `a`, then one fma a key in key order (a loop over the keys).
            let mut init = Vec::with_capacity(o.len());
            for ti in 0..c.tiles as usize {
                for (ei, &(r, _)) in o_coord.iter().enumerate() {
                    let toff = b.u32(ti as u32 * TILE_ROWS);
                    let at = b.add(toff, r);
                    let a = b.load(c.a_lds, at, Type::F32);
                    init.push(b.mul(o[ti * per_tile + ei], a));
                }
            }
            let zero = b.u32(0);
            let one = b.u32(1);
            let dv = b.u32(c.d);
            let kv = c.kv_lds;
            b.for_range(zero, kbv, one, 1, &init, |b, j, acc| {
                let mut next = Vec::with_capacity(acc.len());
                for ti in 0..c.tiles {
                    for (ei, &(r, dim)) in o_coord.iter().enumerate() {
                        let pbase = b.u32(ti * TILE_ROWS * c.kb);
                        let prow = b.mul(r, kbv);
                        let prow = b.add(prow, pbase);
                        let at = b.add(prow, j);
                        let p = b.load(c.p_lds, at, Type::F16);
                        let p = b.convert(p, Type::F32);
                        let v = match kv {
                            Some(kv) => {
                                let at = b.mul(j, dv);
                                let at = b.add(at, dim);
                                b.load(kv, at, Type::F16)
                            }
                            None => {
                                let key = b.add(k0, j);
                                c.cache_value(b, c.v_cache, key, dim)
                            }
                        };
                        let v = b.convert(v, Type::F32);
                        next.push(b.fma(p, v, acc[ti as usize * per_tile + ei]));
                    }
                }
                next
            })
        }
    }
}
