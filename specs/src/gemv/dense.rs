//! Dense GEMV: `y[t][n] = sum_k W[n][k] * x[t][k]` for `t` tokens, with the residual and the
//! fused gate/up SwiGLU epilogues, and the attention's Q, K and V projections in one launch.
//!
//! The order of the f32 arithmetic (every variant keeps it, so all agree bit for bit): for each
//! output, the `k / 32` blocks are dealt to `W` slots (the wave's lanes), block `b` to slot
//! `b mod W`; each slot adds its blocks in increasing order with [`accumulate`], from `+0.0`;
//! the `W` slot sums are then added by the xor butterfly with offsets `W/2, ..., 1` (what
//! `wave_reduce(add)` and `tsum` both compute). The epilogue adds the residual once
//! (`res + sum`) or takes `silu(gate) * up` (portable `exp`). The Q/K/V kernel runs, for each of
//! its three matrices, the plain GEMV's code on that matrix (a workgroup's row `y` of the grid
//! picks it): each output keeps the plain order, so it equals the plain GEMV bit for bit.
//!
//! Variants:
//! - `baseline`: one wave a workgroup, one row a wave, one token at a time (the weights are read
//!   once per token), `wave_reduce(add)`.
//! - `pN` (N = 1..8): four waves a workgroup, one row a wave, `N` tokens a pass sharing each
//!   weight block read, reduced together by `tsum<P>` (P the power of two at or above N). Any
//!   `t` is computed (passes of N tokens; tokens past `t` in the last pass are loaded clamped
//!   and not stored); the router takes `pN` for the `t` it is fastest at.
//!
//! With [`Gemv::norm`] (the `_norm` families) the activations are the f32 rows of the norm's
//! input, normalized and quantized by each workgroup a pass ([`super::norm`]), and the order
//! above runs on those blocks: bit for bit the norm's launch and the unfused kernel. With
//! [`Epilogue::ResidualNorm`] (the `_res_rmsnorm` families) it is the other way round: the
//! residual GEMV above, then the last workgroup to finish runs `rmsnorm_q8_1s_f32` of `y`
//! ([`super::res_norm`]).

use super::ahead::{
    early_trips, first_blocks, flatten, prefetch_rest, unflatten_rows, Early, Preloaded,
};
use super::format::{accumulate, Acts, Layout, WType, Weights, QK};
use super::norm::Norm;
use super::res_norm::Tail;
use super::split_norm::{self, RmsScale};
use super::tile::{quantize_pass, CacheAt, FirstAngle};
use crate::math::silu;
use crate::prefetch;
use kiln_ir::target::Family;
use kiln_ir::{
    Access, Dim, Kernel, KernelBuilder, Param, ReduceOp, ScalarRule, ScalarType, ShapeExpr, Target,
    Type, Value,
};

/// What is done with the sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Epilogue {
    /// `y = W x`.
    Plain,
    /// `y = res + W x` (the residual stream).
    Residual,
    /// As [`Epilogue::Residual`], then `rmsnorm_q8_1s_f32` of `y`'s rows (gain `weight`, `eps`)
    /// into `norm_xq` / `norm_xs`, by the last workgroup to finish ([`super::res_norm`]): bit
    /// for bit `_res` followed by the norm, one launch less. `n` is a multiple of 32, at most
    /// [`super::norm::NORM_MAX_K`].
    ResidualNorm,
    /// As [`Epilogue::Residual`], and the next norm's work that needs no other row
    /// ([`super::split_norm`]): each 32-row block of `y` times the norm's gain quantized to Q8_1
    /// (`norm_xq`, `norm_xs`) and the block's sum of squares (`norm_ss`), for a GEMV of the
    /// [`Gemv::rms`] form to scale. A workgroup owns 32 rows, so `n` is a multiple of 32.
    ResidualSquares,
    /// `y = silu(Wg x) * (Wu x)`: gate and up in one pass.
    Swiglu,
    /// As [`Epilogue::Swiglu`], with `y` quantized to Q8_1 in the split layout (`yq`, `ys`) for
    /// the next GEMV (the seeds' fused up path): bit for bit `quantize_q8_1s_f32` of the
    /// SwiGLU output. A workgroup owns 32 rows (one block a token: 8 waves of 4 rows), so `n` is
    /// a multiple of 32. Passes of 2 tokens (`p2`; measured faster than `p1` even for one token,
    /// 34.2 against 43.5 us at N = 14336 on the H200): more would need more than the 128
    /// VGPRs gfx906 allows a 512-lane workgroup (4 rows x 2 matrices x tokens accumulators).
    SwigluQ8,
    /// `q = Wq x`, `k = Wk x`, `v = Wv x`: three plain GEMVs over the same activations in one
    /// launch (`n_q` rows for Q, `n_kv` for K and V), each output as [`Epilogue::Plain`]'s. One
    /// launch instead of three: a decode step is launch bound, and the activations are read
    /// from L2 by all three.
    Qkv,
    /// As [`Epilogue::Qkv`] with K and V written into the decode cache (ggml Q8_0 blocks,
    /// `[kv_head][ctx_max][head_dim]`) at positions `pos..pos+t`, K rotated on the way in (the
    /// "normal" pairing only: its pairs lie in one block): bit for bit `_qkv` followed by
    /// `kv_append_q8_0`, one launch less. A workgroup owns 32 rows (one block of a head a token:
    /// 16 waves of 2 rows); Q goes to `q_y` as f32.
    QkvCache,
}

impl Epilogue {
    /// Weight matrices a call reads (gate and up for the SwiGLU epilogues).
    pub fn matrices(self) -> usize {
        match self {
            Epilogue::Plain
            | Epilogue::Residual
            | Epilogue::ResidualNorm
            | Epilogue::ResidualSquares => 1,
            Epilogue::Swiglu | Epilogue::SwigluQ8 => 2,
            Epilogue::Qkv | Epilogue::QkvCache => 3,
        }
    }
    /// Weight matrices one output sums (the accumulators a row keeps).
    pub fn matrices_an_output(self) -> usize {
        match self {
            Epilogue::Plain
            | Epilogue::Residual
            | Epilogue::ResidualNorm
            | Epilogue::ResidualSquares
            | Epilogue::Qkv
            | Epilogue::QkvCache => 1,
            Epilogue::Swiglu | Epilogue::SwigluQ8 => 2,
        }
    }
    /// The suffix of the family name.
    pub fn suffix(self) -> &'static str {
        match self {
            Epilogue::Plain => "",
            Epilogue::Residual => "_res",
            Epilogue::ResidualNorm => "_res_rmsnorm",
            Epilogue::ResidualSquares => "_res_sq",
            Epilogue::Swiglu => "_swiglu",
            Epilogue::SwigluQ8 => "_swiglu_q8_1s",
            Epilogue::Qkv => "_qkv",
            Epilogue::QkvCache => "_qkv_cache",
        }
    }
}

/// One GEMV kernel's shape.
#[derive(Clone, Copy, Debug)]
pub struct Gemv {
    /// Weight format.
    pub wt: WType,
    /// Weight layout.
    pub layout: Layout,
    /// Epilogue.
    pub epi: Epilogue,
    /// Tokens a pass (`None`: the baseline).
    pub tokens: Option<u32>,
    /// Rows a wave (each activation block loaded once for all of them).
    pub rows: u32,
    /// Unroll of the block loop (0: the default, 2 for one repacked row, else 1).
    pub unroll: u32,
    /// Waves a workgroup (0: [`WAVES`]).
    pub waves: u32,
    /// The norm prologue ([`super::norm`]): the activations are f32 rows `x` normalized with
    /// `weight` and `eps` and quantized by each workgroup (the `_norm` families).
    pub norm: bool,
    /// What is loaded before the grid-dependency wait ([`EarlyLoads`]).
    pub early: EarlyLoads,
    /// The activations are a norm's input quantized without its scale (a
    /// [`Epilogue::ResidualSquares`] GEMV's `norm_xq`, `norm_xs`), and every sum is multiplied
    /// by the scale found from the blocks' sums of squares `norm_ss` ([`super::split_norm`]):
    /// the `_rms` families.
    pub rms: bool,
    /// With [`Gemv::rms`] and one token a pass: the block sums loaded after the block loop
    /// instead of before it (fewer registers live in the loop).
    pub rms_late: bool,
}

impl Gemv {
    /// A `pN` / `pNrR` variant with the default unroll and waves.
    pub const fn tiled(wt: WType, layout: Layout, epi: Epilogue, tokens: u32, rows: u32) -> Gemv {
        Gemv {
            wt,
            layout,
            epi,
            tokens: Some(tokens),
            rows,
            unroll: 0,
            waves: 0,
            norm: false,
            early: EarlyLoads::None,
            rms: false,
            rms_late: false,
        }
    }
    /// The baseline.
    pub const fn baseline(wt: WType, layout: Layout, epi: Epilogue) -> Gemv {
        Gemv {
            wt,
            layout,
            epi,
            tokens: None,
            rows: 1,
            unroll: 0,
            waves: 0,
            norm: false,
            early: EarlyLoads::None,
            rms: false,
            rms_late: false,
        }
    }
    /// The same kernel with the norm prologue (a `_norm` family).
    pub const fn normed(self) -> Gemv {
        Gemv { norm: true, ..self }
    }
    /// The same kernel scaled by a split norm (an `_rms` family).
    pub const fn scaled(self) -> Gemv {
        Gemv { rms: true, ..self }
    }
    /// The same kernel with its first weight blocks loaded before the wait
    /// ([`EarlyLoads::Held`]).
    pub const fn early(self) -> Gemv {
        Gemv { early: EarlyLoads::Held, ..self }
    }
    /// The early twin that also asks L2 for the rest of its rows before the wait
    /// ([`EarlyLoads::HeldAhead`]).
    pub const fn early_ahead(self) -> Gemv {
        Gemv { early: EarlyLoads::HeldAhead, ..self }
    }
    pub(super) fn unroll_of(&self) -> u32 {
        match self.unroll {
            0 if self.layout == Layout::Repacked
                && self.epi.matrices_an_output() == 1
                && self.rows == 1 =>
            {
                2
            }
            0 => 1,
            u => u,
        }
    }
}

/// What a [`Gemv`] loads before its grid-dependency wait (the `kiln tune` knob `e`: 0, 1, 2).
/// Only with one token a pass; the others wait first whatever this says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EarlyLoads {
    /// Nothing: the wait comes first.
    None,
    /// The weight blocks of the first block-loop trips (the first [`early_trips`], or the first
    /// trip with the norm prologue), held there ([`crate::prefetch::hold`]), so under
    /// programmatic dependent launch they stream while the grid before this one finishes. Wins
    /// where every workgroup is resident while that grid runs (small grids); routed by `n`
    /// there. Variant suffix `e`.
    Held,
    /// As [`EarlyLoads::Held`], and (without the norm prologue) the rest of the wave's rows (the
    /// blocks not held) asked of L2 ([`super::ahead::prefetch_rest`]). Variant suffix `ea`.
    HeldAhead,
}

impl EarlyLoads {
    /// The variant for knob `e`'s value (0, 1 or 2).
    pub fn from_knob(e: u32) -> Option<EarlyLoads> {
        match e {
            0 => Some(EarlyLoads::None),
            1 => Some(EarlyLoads::Held),
            2 => Some(EarlyLoads::HeldAhead),
            _ => None,
        }
    }
    /// Whether the first weight blocks are loaded before the wait.
    pub fn held(self) -> bool {
        match self {
            EarlyLoads::None => false,
            EarlyLoads::Held | EarlyLoads::HeldAhead => true,
        }
    }
    /// The variant name's suffix.
    fn suffix(self) -> &'static str {
        match self {
            EarlyLoads::None => "",
            EarlyLoads::Held => "e",
            EarlyLoads::HeldAhead => "ea",
        }
    }
}

/// Waves a workgroup of the cache epilogue by default (32 rows: two a wave).
pub(super) const CACHE_WAVES: u32 = 16;

/// Waves a workgroup of the `pN` variants.
pub const WAVES: u32 = 4;

/// The family name: `gemv_q8_0`, `gemv_q4_0_rp_res`, ...
pub fn family_name(wt: WType, layout: Layout, epi: Epilogue) -> String {
    let l = match layout {
        Layout::Ggml => "",
        Layout::Repacked => "_rp",
    };
    format!("gemv_{}{l}{}", wt.name(), epi.suffix())
}

/// The family name of a kernel: [`family_name`], with `_norm` for the norm prologue
/// (`gemv_q4_1_rp_qkv_norm`).
pub fn family_name_of(g: &Gemv) -> String {
    let norm = if g.norm { "_norm" } else { "" };
    let rms = if g.rms { "_rms" } else { "" };
    format!("{}{norm}{rms}", family_name(g.wt, g.layout, g.epi))
}

/// Where the results go.
#[derive(Clone, Copy)]
pub(crate) enum Out {
    /// f32 `y`.
    F32(Param),
    /// Q8_1 split `yq`, `ys`, through `lds` (a pass's 32 rows x tokens).
    Q8 {
        /// Quants.
        q: Param,
        /// Scales.
        s: Param,
        /// The pass's outputs before quantizing.
        lds: kiln_ir::LdsSlot,
    },
    /// A Q8_0 decode cache (K rotated with RoPE), through `lds` (a pass's 32 rows x tokens).
    Cache {
        /// The cache (u8, ggml Q8_0 blocks).
        cache: Param,
        /// The pass's outputs before quantizing.
        lds: kiln_ir::LdsSlot,
        /// Whether the rows are rotated (K).
        rope: bool,
        /// Where and how.
        at: CacheAt,
        /// K's rotation of the first pass, computed ahead ([`super::tile::first_angle`]).
        first: Option<FirstAngle>,
    },
    /// f32 `y`, and through `lds` the next norm's quants and sums of squares
    /// ([`Epilogue::ResidualSquares`]).
    Squares {
        /// `y`.
        y: Param,
        /// `norm_xq`, `norm_xs`, `norm_ss`, the gain.
        norm: split_norm::SquaresOut,
        /// The pass's outputs.
        lds: kiln_ir::LdsSlot,
    },
}

/// Rows a workgroup of the quantizing epilogue: one Q8 block of outputs.
pub const Q8_ROWS: u32 = QK;
/// Rows a wave of the quantizing epilogue (8 waves a workgroup).
pub const Q8_WAVE_ROWS: u32 = 4;

/// The declared parameters.
pub(crate) struct Params {
    pub weights: Vec<Weights>,
    pub acts: Acts,
    pub norm: Option<Norm>,
    /// The split norm's scale ([`Gemv::rms`]).
    pub rms: Option<RmsScale>,
    pub res: Option<Param>,
    pub out: Out,
    /// The `_res_rmsnorm` epilogue's norm of `y`.
    pub tail: Option<Tail>,
    pub n: Param,
    pub k: Param,
    pub t: Param,
}

/// Declares a dense GEMV's parameters (weights, activations, residual, `y`, `n`, `k`, `t`).
fn declare(b: &mut KernelBuilder, g: &Gemv, wave: u32) -> Params {
    let (n, k, t) = declare_nkt(b, None);
    let weights = match g.epi {
        Epilogue::Qkv | Epilogue::QkvCache => {
            unreachable!("the Q/K/V kernel declares its own parameters")
        }
        Epilogue::Swiglu | Epilogue::SwigluQ8 => vec![
            Weights::declare(b, "gate_w", g.wt, g.layout, &[n], k),
            Weights::declare(b, "up_w", g.wt, g.layout, &[n], k),
        ],
        Epilogue::Plain
        | Epilogue::Residual
        | Epilogue::ResidualNorm
        | Epilogue::ResidualSquares => {
            vec![Weights::declare(b, "w", g.wt, g.layout, &[n], k)]
        }
    };
    let (acts, norm) = declare_acts(b, g, wave, t, k);
    let rms = g.rms.then(|| RmsScale::declare(b, t, k));
    let res = match g.epi {
        Epilogue::Residual | Epilogue::ResidualNorm | Epilogue::ResidualSquares => {
            let r = b.buffer("res", ScalarType::F32, Access::Read);
            b.set_buffer_len(r, ShapeExpr::scaled(&[t, n], 1, 1));
            Some(r)
        }
        Epilogue::Plain
        | Epilogue::Swiglu
        | Epilogue::SwigluQ8
        | Epilogue::Qkv
        | Epilogue::QkvCache => None,
    };
    let out = match g.epi {
        Epilogue::SwigluQ8 => {
            b.scalar_rule(n, ScalarRule::MultipleOf(QK as u64));
            let q = b.buffer("yq", ScalarType::U8, Access::Write);
            b.set_buffer_len(q, ShapeExpr::scaled(&[t, n], 1, 1));
            let s = b.buffer("ys", ScalarType::U32, Access::Write);
            b.set_buffer_len(s, ShapeExpr::scaled(&[t, n], 1, QK as u64));
            let per = g.tokens.unwrap_or(1);
            let lds = b.lds("y_pass", ScalarType::F32, per * Q8_ROWS);
            Out::Q8 { q, s, lds }
        }
        Epilogue::ResidualSquares => {
            b.scalar_rule(n, ScalarRule::MultipleOf(QK as u64));
            let y = b.buffer("y", ScalarType::F32, Access::Write);
            b.set_buffer_len(y, ShapeExpr::scaled(&[t, n], 1, 1));
            let norm = split_norm::SquaresOut::declare(b, n, t);
            let per = g.tokens.unwrap_or(1);
            let lds = b.lds("y_pass", ScalarType::F32, per * Q8_ROWS);
            Out::Squares { y, norm, lds }
        }
        Epilogue::Plain
        | Epilogue::Residual
        | Epilogue::ResidualNorm
        | Epilogue::Swiglu
        | Epilogue::Qkv
        | Epilogue::QkvCache => {
            // The norm epilogue reads `y` back.
            let access = match g.epi {
                Epilogue::ResidualNorm => Access::ReadWrite,
                _ => Access::Write,
            };
            let y = b.buffer("y", ScalarType::F32, access);
            b.set_buffer_len(y, ShapeExpr::scaled(&[t, n], 1, 1));
            Out::F32(y)
        }
    };
    let tail = match (g.epi, out) {
        (Epilogue::ResidualNorm, Out::F32(y)) => {
            assert!(!g.norm, "one norm a kernel: the prologue and the epilogue share names");
            Some(Tail::declare(b, wave, y, n, t))
        }
        _ => None,
    };
    Params { weights, acts, norm, rms, res, out, tail, n, k, t }
}

/// The activations: Q8_1 or f32 buffers, or with the norm prologue `x`, `weight`, `eps` and the
/// pass's blocks in LDS.
pub(super) fn declare_acts(
    b: &mut KernelBuilder,
    g: &Gemv,
    wave: u32,
    t: Param,
    k: Param,
) -> (Acts, Option<Norm>) {
    if g.norm {
        assert!(g.wt.is_quant(), "the norm prologue writes Q8_1 activations");
        let norm = Norm::declare(b, wave, g.tokens.unwrap_or(1), t, k);
        (norm.acts(), Some(norm))
    } else {
        (Acts::declare(b, g.wt, t, k), None)
    }
}

/// The scalars every GEMV takes first, with their rules: `n` rows (at least 1), `k` (a positive
/// multiple of 32), `t` tokens (at least 1, at most `max_t` when given).
pub(crate) fn declare_nkt(b: &mut KernelBuilder, max_t: Option<u32>) -> (Param, Param, Param) {
    let n = b.scalar_param("n", ScalarType::U32);
    let k = b.scalar_param("k", ScalarType::U32);
    let t = b.scalar_param("t", ScalarType::U32);
    b.scalar_rule(n, ScalarRule::AtLeast(1));
    b.scalar_rule(k, ScalarRule::AtLeast(QK as u64));
    b.scalar_rule(k, ScalarRule::MultipleOf(QK as u64));
    b.scalar_rule(t, ScalarRule::AtLeast(1));
    if let Some(m) = max_t {
        b.scalar_rule(t, ScalarRule::AtMost(m as u64));
    }
    (n, k, t)
}

/// The epilogue of one output: `sums` has one value a matrix.
pub(crate) fn finish(
    b: &mut KernelBuilder,
    epi: Epilogue,
    sums: &[Value],
    res: Option<Value>,
) -> Value {
    match epi {
        Epilogue::Plain | Epilogue::Qkv | Epilogue::QkvCache => sums[0],
        Epilogue::Residual | Epilogue::ResidualNorm | Epilogue::ResidualSquares => {
            b.add(res.expect("a residual"), sums[0])
        }
        Epilogue::Swiglu | Epilogue::SwigluQ8 => {
            let s = silu(b, sums[0]);
            b.mul(s, sums[1])
        }
    }
}

/// Where one output goes: `y`, or the pass's LDS tile (token `j` of the pass, row `local_row`
/// of the workgroup) for the quantizing epilogues, or both (`y` only for a token below `t`:
/// `in_t`, `None` where it is).
#[allow(clippy::too_many_arguments)]
fn emit(
    b: &mut KernelBuilder,
    out: Out,
    n: Value,
    (tok, in_t): (Value, Option<Value>),
    row: Value,
    j: Value,
    local_row: Value,
    v: Value,
) {
    let to_y = |b: &mut KernelBuilder, y: Param| {
        let i = b.mul(tok, n);
        let i = b.add(i, row);
        b.store(y, i, v);
    };
    let to_tile = |b: &mut KernelBuilder, lds: kiln_ir::LdsSlot| {
        let c = b.u32(Q8_ROWS);
        let i = b.mul(j, c);
        let i = b.add(i, local_row);
        b.store(lds, i, v);
    };
    match out {
        Out::F32(y) => to_y(b, y),
        Out::Q8 { lds, .. } | Out::Cache { lds, .. } => to_tile(b, lds),
        Out::Squares { y, lds, .. } => {
            to_tile(b, lds);
            match in_t {
                Some(c) => b.if_then(c, |b| to_y(b, y)),
                None => to_y(b, y),
            }
        }
    }
}

/// The variant name: `baseline`, `pN` (one row a wave) or `pNrR`.
pub fn variant_name(g: &Gemv) -> String {
    let Some(p) = g.tokens else { return "baseline".to_string() };
    let mut s = format!("p{p}");
    if g.rows != 1 {
        s += &format!("r{}", g.rows);
    }
    if g.unroll != 0 {
        s += &format!("u{}", g.unroll);
    }
    if g.waves != 0 {
        s += &format!("w{}", g.waves);
    }
    s += g.early.suffix();
    if g.rms_late {
        s += "l";
    }
    s
}

/// The seeds' fused tsum GEMV-up kernel's VGPRs on gfx1201 for T = 1..6: the fused gate/up
/// variants `p1`..`p6` cap their registers there on AMD (so the scheduler issues loads later
/// instead of raising the count past what the seeds needed), and the family's budgets check it.
pub const SEED_SWIGLU_VGPRS: [u32; 6] = [45, 59, 68, 77, 86, 95];

/// Builds one dense GEMV kernel.
pub fn build(target: &Target, wave: u32, g: Gemv) -> Kernel {
    let mut b = KernelBuilder::new(format!("{}_{}", family_name_of(&g), variant_name(&g)), wave);
    if matches!(g.epi, Epilogue::Qkv | Epilogue::QkvCache) {
        return super::qkv::build(b, target, wave, g);
    }
    let p = declare(&mut b, &g, wave);
    // On the archs the seeds measured (RDNA3 / RDNA4, wave 32): elsewhere the cap could spill.
    let rdna = matches!(target.family, Family::Rdna3 | Family::Rdna4);
    if let (Epilogue::Swiglu, Some(t @ 1..=6), true) = (g.epi, g.tokens, rdna) {
        b.max_registers(SEED_SWIGLU_VGPRS[t as usize - 1]);
    }
    let (waves, rows) = match g.epi {
        // 32 rows a workgroup: one Q8 block of outputs a token.
        Epilogue::SwigluQ8 => (Q8_ROWS / Q8_WAVE_ROWS, Q8_WAVE_ROWS),
        Epilogue::ResidualSquares => shape_of(&g, Some(Q8_ROWS / Q8_WAVE_ROWS)),
        _ => shape_of(&g, None),
    };
    b.workgroup_size([waves * wave, 1, 1]);
    b.const_param("waves", waves as i64);
    b.const_param("rows_per_wave", rows as i64);
    b.const_param("tokens_per_pass", g.tokens.unwrap_or(1) as i64);
    b.grid([
        ShapeExpr::scaled(&[p.n], 1, (waves * rows) as u64),
        ShapeExpr::constant(1),
        ShapeExpr::constant(1),
    ]);
    let n = b.arg(p.n);
    let k = b.arg(p.k);
    let t = b.arg(p.t);
    let wg = b.workgroup_id(Dim::X);
    let small = prefetch::small_grid(&mut b);
    b.if_then(small, |b| {
        let per_wg = b.u32(waves * rows);
        let row0 = b.mul(wg, per_wg);
        let left = b.sub(n, row0);
        let count = b.min(left, per_wg);
        prefetch::rows(b, &p.weights, row0, count, k, waves * wave);
    });
    // With one token a pass, the first weight blocks are loaded ahead: with the norm prologue,
    // those of the first block-loop trip of each matrix, before the first prologue (as the
    // Q/K/V kernel's), so their latency overlaps it instead of following it (not with more
    // tokens a pass: `p2` of the Q8_0 gate/up kernel went from 132 to 246 registers on sm_90 and
    // its step got slower on the H200, bench/results/engine-h200-2026-12-02.md); without it,
    // the first [`early_trips`] trips, peeled from the loop (on the H200 SmolLM2's Q4_1 step
    // 527 -> 483 us, its LM head 12.2 -> 8.9 us, the Q4_0 / Q4_1 GEMVs at N = 14336 9.99 -> 8.98
    // and 10.67 -> 10.21 us: bench/results/early-h200-2026-12-03.md). An `early` variant loads
    // them before the grid-dependency wait instead, and holds them there.
    let nb = blocks_of(&mut b, k);
    let first = |b: &mut KernelBuilder, ahead: u32| -> Vec<Vec<Value>> {
        p.weights.iter().map(|w| first_blocks(b, *w, n, (waves, rows), wg, nb, ahead)).collect()
    };
    let one_token = g.tokens == Some(1);
    let held = g.early.held() && one_token;
    if !held {
        b.grid_dependency_wait();
    }
    let (pre, early) = match (p.norm, one_token) {
        (Some(_), true) => (Some(Preloaded { wg, vals: first(&mut b, 0) }), None),
        (None, true) => {
            let trips = (0..early_trips(&g)).map(|j| first(&mut b, j * wave)).collect();
            (None, Some(Early { trips }))
        }
        _ => (None, None),
    };
    if held {
        let vals: Vec<Value> = match (&pre, &early) {
            (Some(pre), _) => pre.vals.iter().flatten().copied().collect(),
            (_, Some(e)) => e.trips.iter().flatten().flatten().copied().collect(),
            _ => vec![],
        };
        if let (EarlyLoads::HeldAhead, Some(e)) = (g.early, &early) {
            let from = e.trips.len() as u32 * wave;
            prefetch_rest(&mut b, &p.weights, n, (waves, rows, wave), (wg, nb), from);
        }
        prefetch::hold(&mut b, p.weights[0].first_param(), &vals);
        b.grid_dependency_wait();
    }
    let m = Matrices { weights: &p.weights, res: p.res, out: p.out, n, rms: p.rms };
    let acts = (p.acts, p.norm);
    match (p.norm, &pre) {
        (Some(norm), Some(pre)) => {
            norm_passes(&mut b, &norm, &g, (wave, waves), (k, t), |b, tok0| {
                let pass = Some((tok0, Some(pre)));
                row_block(b, &g, wave, (waves, rows), &m, acts, (k, t), wg, pass, None);
            });
        }
        _ => row_block(&mut b, &g, wave, (waves, rows), &m, acts, (k, t), wg, None, early.as_ref()),
    }
    if let Some(tail) = p.tail {
        tail.run(&mut b, (wave, waves), (n, t));
    }
    b.finish()
}

/// Waves a workgroup and rows a wave of `g`: with `block` (its default waves) the workgroup owns
/// one block of 32 rows (the variant's waves of its rows, which must make 32); else the
/// baseline's one wave of one row, or the variant's waves (default [`WAVES`]) of its rows.
pub(super) fn shape_of(g: &Gemv, block: Option<u32>) -> (u32, u32) {
    match (block, g.tokens, g.waves) {
        (Some(w), _, 0) => (w, Q8_ROWS / w),
        (Some(_), _, w) => {
            assert_eq!(w * g.rows, Q8_ROWS, "{w} waves of {} rows are not one block", g.rows);
            (w, g.rows)
        }
        (None, None, _) => (1, 1),
        (None, Some(_), 0) => (WAVES, g.rows),
        (None, Some(_), w) => (w, g.rows),
    }
}

/// The first of this wave's rows in row block `wg` (`waves` waves of `rows` rows):
/// `(wg * waves + wave) * rows`.
pub(super) fn wave_row0(b: &mut KernelBuilder, wg: Value, waves: u32, rows: u32) -> Value {
    let wave_id = b.wave();
    let wv = b.u32(waves);
    let row0 = b.mul(wg, wv);
    let row0 = b.add(row0, wave_id);
    let rv = b.u32(rows);
    b.mul(row0, rv)
}

/// `k / 32`: blocks a row.
pub(super) fn blocks_of(b: &mut KernelBuilder, k: Value) -> Value {
    let qk = b.u32(QK);
    b.div(k, qk)
}

/// The passes of `g`'s tokens a pass over `t` tokens, each the norm's prologue, then `pass`
/// (with the pass's first token).
pub(super) fn norm_passes(
    b: &mut KernelBuilder,
    norm: &Norm,
    g: &Gemv,
    (wave, waves): (u32, u32),
    (k, t): (Value, Value),
    mut pass: impl FnMut(&mut KernelBuilder, Value),
) {
    let zero = b.u32(0);
    let step = b.u32(g.tokens.unwrap_or(1));
    b.for_range(zero, t, step, 1, &[], |b, tok0, _| {
        norm.prologue(b, (wave, waves), tok0, (k, t));
        pass(b, tok0);
        vec![]
    });
}

/// The matrices one output reads and where it goes.
pub(super) struct Matrices<'a> {
    pub(super) weights: &'a [Weights],
    pub(super) res: Option<Param>,
    pub(super) out: Out,
    /// Rows.
    pub(super) n: Value,
    /// The split norm's scale ([`Gemv::rms`]).
    pub(super) rms: Option<RmsScale>,
}

/// Rows `wg * waves * rows ..` of `m` (`waves` waves of `rows` rows), every token, in the dense
/// order; with a norm, each pass starts with its prologue. With `pass`, only the pass of tokens
/// from `pass.0` (its prologue already run by the caller), with the weight blocks `pass.1`
/// preloaded for the first trip of the first pass of row block `pass.1.wg`.
#[allow(clippy::too_many_arguments)]
pub(super) fn row_block(
    b: &mut KernelBuilder,
    g: &Gemv,
    wave: u32,
    (waves, rows): (u32, u32),
    m: &Matrices,
    (acts, norm): (Acts, Option<Norm>),
    (k, t): (Value, Value),
    wg: Value,
    pass: Option<(Value, Option<&Preloaded>)>,
    early: Option<&Early>,
) {
    let n = m.n;
    let qk = b.u32(QK);
    let nb = b.div(k, qk);
    let lane = b.lane();
    let wave_id = b.wave();
    let wv = b.u32(waves);
    let row0 = b.mul(wg, wv);
    let row0 = b.add(row0, wave_id);
    let rv = b.u32(rows);
    let row0 = b.mul(row0, rv);
    let one = b.u32(1);
    let last = b.sub(n, one);
    let nb64 = b.convert(nb, Type::U64);
    // Row r of the wave: its index, whether it exists, and its first block. Rows past `n`
    // compute on the last row and skip the store, so the cross-lane sums run with the whole
    // wave.
    let mut row_of = vec![];
    for r in 0..rows {
        let rr = b.u32(r);
        let row = b.add(row0, rr);
        let valid = b.lt(row, n);
        let row_c = b.min(row, last);
        let row64 = b.convert(row_c, Type::U64);
        let wrow = b.mul(row64, nb64);
        row_of.push((row, valid, row_c, wrow));
    }
    let per = g.tokens.unwrap_or(1);
    let step = b.u32(per);
    let zero = b.u32(0);
    let w = b.u32(wave);
    let mats = m.weights.len();
    let rn = rows as usize;
    let pn = per as usize;
    // acc[(mi * rows + r) * per + j]
    let at_acc = move |mi: usize, r: usize, j: usize| (mi * rn + r) * pn + j;
    let pre = pass.and_then(|p| p.1);
    // One block-loop trip at block `blk` (in range): its weight blocks loaded, or `given` (per
    // matrix, flattened: a peeled trip's, loaded ahead), then every token's term.
    let trip = |b: &mut KernelBuilder,
                tok0: Value,
                blk: Value,
                acc: &[Value],
                given: Option<&Vec<Vec<Value>>>|
     -> Vec<Value> {
        let blk64 = b.convert(blk, Type::U64);
        let tl = b.sub(t, one);
        let mut next = acc.to_vec();
        // One matrix at a time (gate, then up): fewer registers live.
        for (mi, mat) in m.weights.iter().enumerate() {
            let load = |b: &mut KernelBuilder| -> Vec<_> {
                row_of
                    .iter()
                    .map(|&(_, _, _, wrow)| {
                        let at = b.add(wrow, blk64);
                        mat.load(b, at)
                    })
                    .collect()
            };
            let wbs = match (given, pre) {
                (Some(vals), _) => unflatten_rows(mat.wt(), &vals[mi], row_of.len()),
                (None, None) => load(b),
                // The preloaded blocks on the first trip of the first pass of their row
                // block (the same bytes: the same values).
                (None, Some(pre)) => {
                    let first_blk = b.eq(blk, lane);
                    let first_pass = b.eq(tok0, zero);
                    let first_wg = b.eq(wg, pre.wg);
                    let c = b.and(first_blk, first_pass);
                    let c = b.and(c, first_wg);
                    let vals = b.if_else(
                        c,
                        |_| pre.vals[mi].clone(),
                        |b| load(b).iter().flat_map(flatten).collect(),
                    );
                    unflatten_rows(mat.wt(), &vals, row_of.len())
                }
            };
            for j in 0..per {
                let jj = b.u32(j);
                // The pass's blocks in LDS from token 0 of the pass, else the token's.
                let tok = match acts {
                    Acts::Lds { .. } => jj,
                    Acts::Quant { .. } | Acts::Float(_) => {
                        let tok = b.add(tok0, jj);
                        b.min(tok, tl)
                    }
                };
                let ab = b.mul(tok, nb);
                let ab = b.add(ab, blk);
                // One activation block for every row of the wave (reloaded per matrix:
                // the loads hit L1, and it keeps fewer registers live).
                let a = acts.load(b, ab);
                for (r, wb) in wbs.iter().enumerate() {
                    let i = at_acc(mi, r, j as usize);
                    next[i] = accumulate(b, wb, &a, next[i]);
                }
            }
        }
        next
    };
    let one_pass = |b: &mut KernelBuilder, tok0: Value, early: Option<&Early>| {
        let fz = b.f32(0.0);
        let mut init = vec![fz; mats * rn * pn];
        // One token a pass: the split norm's partial sums are loaded before the block loop (in
        // flight beside it), and added after it.
        let parts = m.rms.filter(|_| pn == 1 && !g.rms_late).map(|rs| rs.load(b, k, tok0));
        // One token a pass: each row's residual too, so its round trip overlaps the loop's
        // loads instead of following the sums (the same values, so the same bits). With more
        // tokens a pass it is loaded after the sums, by the lanes that store.
        let res_early = m.res.filter(|_| pn == 1 && g.tokens.is_some()).map(|rp| {
            let base = b.mul(tok0, n);
            row_of
                .iter()
                .map(|&(_, _, row_c, _)| {
                    let i = b.add(base, row_c);
                    b.load(rp, i, Type::F32)
                })
                .collect::<Vec<_>>()
        });
        let mut from = lane;
        // The trips whose weights were loaded before the wait, peeled: trip `j` is block
        // `lane + j W`, which adds nothing past `nb` (read clamped, its sums dropped). The
        // same blocks in the same order as the loop's.
        if let Some(e) = early {
            let last_blk = b.sub(nb, one);
            for vals in &e.trips {
                let valid = b.lt(from, nb);
                let blk = b.min(from, last_blk);
                let next = trip(b, tok0, blk, &init, Some(vals));
                init = next.iter().zip(&init).map(|(&x, &y)| b.select(valid, x, y)).collect();
                from = b.add(from, w);
            }
        }
        let unroll = g.unroll_of();
        let accs =
            b.for_range(from, nb, w, unroll, &init, |b, blk, acc| trip(b, tok0, blk, acc, None));
        // The split norm's scale of this lane's token.
        let scale = m.rms.map(|rs| match &parts {
            Some(parts) => rs.scale(b, parts, k),
            None if pn == 1 => {
                let parts = rs.load(b, k, tok0);
                rs.scale(b, &parts, k)
            }
            None => rs.lane_scale(b, (k, t), (tok0, per), wave),
        });
        let scaled = |b: &mut KernelBuilder, sums: Vec<Value>| match scale {
            Some(sc) => sums.into_iter().map(|v| b.mul(v, sc)).collect(),
            None => sums,
        };
        for (r, &(row, valid, row_c, _)) in row_of.iter().enumerate() {
            match g.tokens {
                None => {
                    // Baseline: one token a pass, each matrix's sum by the plain butterfly.
                    let sums: Vec<Value> = (0..mats)
                        .map(|mi| b.wave_reduce(ReduceOp::Add, accs[at_acc(mi, r, 0)]))
                        .collect();
                    let sums = scaled(b, sums);
                    let res = m.res.map(|rp| {
                        let i = b.mul(tok0, n);
                        let i = b.add(i, row_c);
                        b.load(rp, i, Type::F32)
                    });
                    let out = finish(b, g.epi, &sums, res);
                    let first = b.eq(lane, zero);
                    let ok = b.and(first, valid);
                    let rl = b.u32(r as u32);
                    let local_row = b.mul(wave_id, rv);
                    let local_row = b.add(local_row, rl);
                    b.if_then(ok, |b| emit(b, m.out, n, (tok0, None), row, zero, local_row, out));
                }
                Some(per) => {
                    let pp = per.next_power_of_two();
                    let sums: Vec<Value> = (0..mats)
                        .map(|mi| {
                            let first = at_acc(mi, r, 0);
                            b.tsum(pp, &accs[first..first + per as usize])
                        })
                        .collect();
                    let sums = scaled(b, sums);
                    // Lanes [j*W/P, (j+1)*W/P) hold token j's sums; the first of them stores.
                    let span = b.u32(wave / pp);
                    let j = b.div(lane, span);
                    let head = b.rem(lane, span);
                    let tok = b.add(tok0, j);
                    let is_head = b.eq(head, zero);
                    let perv = b.u32(per);
                    let in_pass = b.lt(j, perv);
                    let in_t = b.lt(tok, t);
                    let ok = b.and(is_head, in_pass);
                    // The quantizing epilogue fills its whole tile (tokens past `t` too: their
                    // sums are of clamped activations and never stored), so every LDS word it
                    // reads was written.
                    let ok = match m.out {
                        Out::F32(_) => b.and(ok, in_t),
                        Out::Q8 { .. } | Out::Cache { .. } | Out::Squares { .. } => ok,
                    };
                    let ok = b.and(ok, valid);
                    let rl = b.u32(r as u32);
                    let local_row = b.mul(wave_id, rv);
                    let local_row = b.add(local_row, rl);
                    b.if_then(ok, |b| {
                        // A token past `t` (the quantizing tiles fill the pass) reads the last
                        // token's residual; its output is never stored.
                        let res = match &res_early {
                            Some(v) => Some(v[r]),
                            None => m.res.map(|rp| {
                                let tok = match m.out {
                                    Out::Squares { .. } => {
                                        let tl = b.sub(t, one);
                                        b.min(tok, tl)
                                    }
                                    Out::F32(_) | Out::Q8 { .. } | Out::Cache { .. } => tok,
                                };
                                let i = b.mul(tok, n);
                                let i = b.add(i, row);
                                b.load(rp, i, Type::F32)
                            }),
                        };
                        let out = finish(b, g.epi, &sums, res);
                        emit(b, m.out, n, (tok, Some(in_t)), row, j, local_row, out);
                    });
                }
            }
        }
        quantize_pass(b, m.out, (wave, waves), per, n, t, tok0, wg);
    };
    match (pass, early) {
        (Some((tok0, _)), _) => one_pass(b, tok0, None),
        (None, None) => {
            b.for_range(zero, t, step, 1, &[], |b, tok0, _| {
                if let Some(norm) = norm {
                    norm.prologue(b, (wave, waves), tok0, (k, t));
                }
                one_pass(b, tok0, None);
                vec![]
            });
        }
        // The first pass with the early blocks, then the others as above.
        (None, Some(e)) => {
            assert!(norm.is_none(), "early blocks are for the kernels without a norm prologue");
            one_pass(b, zero, Some(e));
            b.for_range(step, t, step, 1, &[], |b, tok0, _| {
                one_pass(b, tok0, None);
                vec![]
            });
        }
    }
}
