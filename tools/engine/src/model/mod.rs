//! The model on a device: weights uploaded from the map and repacked by the library's
//! `repack_*` kernels (once, at load), and one decode step of `T = 1..=8` tokens as a
//! [`DecodeGraph`], captured once and replayed with the variables `pos` (position of the first
//! token) and `t` (tokens).
//!
//! One layer (buffers sized for 8 tokens; the kernels read the first `t` rows; `a` is split
//! Q8_1 in `aq`, `as`, and `fa` in `fq`, `fs`: the norm, the attention and the gate/up GEMV
//! write their output quantized, bit for bit what a separate `quantize_q8_1s_f32` node gave;
//! the attention rotates q as it loads it, bit for bit what a `rope_f32` node gave):
//!
//! ```text
//! x  --gemv_rp_qkv_cache_norm(attn_norm; RoPE on K)--> q, kc.i, vc.i
//!       (gemv_rp_qkv_norm --> q, k, v, then k, v --kv_append_q8_0 (RoPE on K)--> kc.i, vc.i
//!        where the package lacks the fused kernels; three GEMVs after
//!        rmsnorm_q8_1s(attn_norm) --> a if their types differ)
//! q, kc.i, vc.i --attention_decode_rope_q8_0_q8_1s (RoPE on q)--> a
//! a  --gemv_rp_res(attn_output, res = x)--> h
//! h  --gemv_rp_swiglu_q8_1s_norm(ffn_norm; gate, up)--> fa
//! fa --gemv_rp_res(ffn_down, res = h)--> x
//! ```
//!
//! The `_norm` GEMVs normalize and quantize their input rows themselves, bit for bit what a
//! `rmsnorm_q8_1s_f32` node before them gave (nothing else read its output), one launch less.
//!
//! then `x --rmsnorm_q8_1s(output_norm)--> a --gemv_q8_0_rp(token_embd)--> logits
//! --argmax_rows--> tokens --copy_at_i32(at = pos)--> history`. `tokens` is also what
//! `get_rows_q8_0` reads at the start of a step, so a step of one token can start from the last
//! step's greedy token without a copy from the host ([`Decoder::step_greedy`]); `history` is
//! host memory mapped into the device, the tokens of each step at their positions, which the
//! host reads in place when the step is done ([`Decoder::queue_greedy`]): a decode step is a
//! replay and nothing else on the stream. (A package without `copy_at_i32` gets a copy of
//! `tokens` after each step instead: about 9 us a step on the H200.) The residual stream goes `x -> h -> x` because a GEMV's output may
//! not alias its residual input (every launch refuses written buffers that overlap another).
//! A tied LM head reads a repacked copy of the embedding (`gemv_q8_0_rp`); `get_rows_q8_0`
//! reads the embedding's ggml blocks as they are in the file.

use crate::config::{Append, Config, MatType, Norms};
use kiln_ir::ScalarType;
use kiln_runtime::{
    Buffer, CapturedGraph, DecodeGraph, DeviceError, GraphError, KernelCatalog, NodeArgs, ReadBack,
    Runtime, RuntimeError, Ticket,
};
use std::collections::VecDeque;

mod l2;
mod weights;

pub use l2::L2Plan;
pub use weights::Weights;

/// Most tokens a step (the T = 1..8 kernels).
pub const MAX_T: usize = 8;

/// The kernel that copies a step's tokens into [`HISTORY`] (used where the package has it).
const HISTORY_KERNEL: &str = "copy_at_i32";
/// The graph's token history: host-mapped, the tokens of each step at their positions.
const HISTORY: &str = "history";

/// How the host gets the greedy tokens of the steps it queues ([`Decoder::queue_greedy`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenRead {
    /// The step's last node (`copy_at_i32`) copies its tokens to their positions in a
    /// host-mapped history, which the host reads in place: nothing else on the stream.
    InPlace,
    /// A copy of `tokens` queued after each step (`cuMemcpyDtoHAsync` on cuda: about 9 us a
    /// step on the H200, between two replays).
    Copy,
}

/// Every kernel a step with these placements calls: [`Config::kernels_with`], and the
/// in-place read's copy ([`TokenRead::InPlace`]). An engine loads only these
/// ([`kiln_runtime::Runtime::load_only`]).
pub fn step_kernels(cfg: &Config, norms: Norms, append: Append, read: TokenRead) -> Vec<String> {
    let mut v = cfg.kernels_with(norms, append);
    if read == TokenRead::InPlace {
        v.push(HISTORY_KERNEL.to_string());
    }
    v
}

impl TokenRead {
    /// In place where the package has `copy_at_i32`, else a copy.
    pub fn for_package(rt: &impl KernelCatalog) -> TokenRead {
        if rt.kernel_names().contains(&HISTORY_KERNEL) {
            TokenRead::InPlace
        } else {
            TokenRead::Copy
        }
    }
}

/// Most steps of [`Decoder::queue_greedy`] queued and not yet read: two keep the device busy
/// (the next step is queued while one runs).
pub const QUEUE_DEPTH: usize = 2;

/// Why the model could not be put on the device or stepped.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The runtime refused (a launch, a route, a check).
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The device (memory, copies).
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The graph (buffers, variables).
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// The package lacks kernels the model needs.
    #[error(
        "the package has no {} (the model needs {}); build them with `kiln build --kernel {}`",
        .missing.join(", "), .needed.join(", "), .needed.join(",")
    )]
    MissingKernels {
        /// Not in the package.
        missing: Vec<String>,
        /// Every kernel the model calls.
        needed: Vec<String>,
    },
    /// The split norms need every layer's Q, K and V in one Q8_0 GEMV with the K/V append.
    #[error(
        "the norms split between the GEMVs (`--norms split`) need Q8_0 layers and the K/V append \
         in the Q/K/V GEMV (`--append fused`)"
    )]
    Split,
    /// The buffers an L2 window would cover are not one address range of their own.
    #[error(
        "the {what} are not one address range apart from the rest: `{other}` lies between them \
         ({lo:#x}..{hi:#x}); run without `--l2 {plan}`"
    )]
    L2Range {
        /// What the window was for.
        what: &'static str,
        /// The plan's name.
        plan: &'static str,
        /// A buffer of the graph inside the range.
        other: String,
        /// The range.
        lo: u64,
        /// See `lo`.
        hi: u64,
    },
    /// A step with no token or more than [`MAX_T`].
    #[error("a step takes 1..={MAX_T} tokens, got {0}")]
    Tokens(usize),
    /// A step past the cache.
    #[error("positions {pos}..{end} are past the KV cache of {ctx} positions")]
    Context {
        /// First position.
        pos: usize,
        /// One past the last.
        end: usize,
        /// The cache's capacity.
        ctx: usize,
    },
    /// More steps queued than [`QUEUE_DEPTH`] without reading their tokens.
    #[error("{0} steps are queued and not yet read: read one with Decoder::token first")]
    Queued(usize),
    /// A token id past the vocabulary.
    #[error("token id {id} is past the vocabulary of {vocab}")]
    TokenId {
        /// The id.
        id: u32,
        /// Vocabulary size.
        vocab: usize,
    },
}

fn u32_of(v: usize) -> u32 {
    u32::try_from(v).expect("model sizes fit u32 (checked by the config)")
}

/// The decode step of a model as a graph (not yet captured).
pub struct StepGraph {
    /// The graph.
    pub graph: DecodeGraph,
    /// KV cache capacity (positions).
    pub ctx_max: usize,
}

impl StepGraph {
    /// Builds the graph: the weights, the activation and cache buffers, and every node.
    pub fn build(
        rt: &Runtime,
        cfg: &Config,
        weights: &Weights,
        ctx_max: usize,
    ) -> Result<StepGraph, ModelError> {
        Self::build_with(rt, cfg, weights, ctx_max, TokenRead::for_package(rt))
    }

    /// [`Self::build`] with the tokens read back as `read` says ([`TokenRead::InPlace`] needs
    /// `copy_at_i32` in the package).
    pub fn build_with(
        rt: &Runtime,
        cfg: &Config,
        weights: &Weights,
        ctx_max: usize,
        read: TokenRead,
    ) -> Result<StepGraph, ModelError> {
        let history = read == TokenRead::InPlace;
        if history && !rt.kernels().contains(&HISTORY_KERNEL) {
            return Err(ModelError::MissingKernels {
                missing: vec![HISTORY_KERNEL.into()],
                needed: vec![HISTORY_KERNEL.into()],
            });
        }
        let dev = rt.device();
        let mut g = DecodeGraph::new();
        for (name, b) in &weights.buffers {
            g.add_buffer(name.clone(), b.clone())?;
        }
        let (h, f, kvd) = (cfg.hidden, cfg.ffn, cfg.n_kv_heads * cfg.head_dim);
        let act = [("x", h), ("h", h), ("q", h), ("k", kvd), ("v", kvd), ("logits", cfg.vocab)];
        for (name, n) in act {
            g.add_buffer(name, dev.alloc(ScalarType::F32, MAX_T * n)?)?;
        }
        // Q8_1 activations (split: quants, scales) of width `hidden`, and the gate/up GEMV's of
        // width `ffn` (it reads `aq`, `as`, so writes apart).
        g.add_buffer("aq", dev.alloc(ScalarType::U8, MAX_T * h)?)?;
        g.add_buffer("as", dev.alloc(ScalarType::U32, MAX_T * h / 32)?)?;
        g.add_buffer("fq", dev.alloc(ScalarType::U8, MAX_T * f)?)?;
        g.add_buffer("fs", dev.alloc(ScalarType::U32, MAX_T * f / 32)?)?;
        // With the norms in the residual GEMVs the attention writes its output apart (`oq`,
        // `os`): the attention output's GEMV reads it and its tail writes the norm into `aq`.
        let tails = matches!(weights.norms, Norms::InResidual | Norms::Split);
        let split = weights.norms == Norms::Split;
        if split {
            // The block sums of squares the `_res_sq` GEMVs write for the `_rms` ones.
            g.add_buffer("ss", dev.alloc(ScalarType::F32, MAX_T * h / 32)?)?;
        }
        let (oq, os) = if tails { ("oq", "os") } else { ("aq", "as") };
        if tails {
            g.add_buffer("oq", dev.alloc(ScalarType::U8, MAX_T * h)?)?;
            g.add_buffer("os", dev.alloc(ScalarType::U32, MAX_T * h / 32)?)?;
        }
        // The step's ids in, its greedy tokens out: `get_rows_q8_0` reads it first, `argmax_rows`
        // writes it last, so a decode step can start from the last one's token on the device.
        g.add_buffer("tokens", dev.alloc(ScalarType::I32, MAX_T)?)?;
        let cache_bytes = cfg.n_kv_heads * ctx_max * cfg.head_dim / 32 * 34;
        // The caches in one group: one address range holding them and nothing else (for
        // `--l2 keep`).
        let mut caches = dev.alloc_group(&vec![(ScalarType::U8, cache_bytes); 2 * cfg.n_layers])?;
        for i in (0..cfg.n_layers).rev() {
            for c in ["vc", "kc"] {
                g.add_buffer(format!("{c}.{i}"), caches.pop().expect("two caches a layer"))?;
            }
        }
        let (hu, fu) = (u32_of(h), u32_of(f));
        let mut add = |kernel: &str, args: NodeArgs| -> Result<(), ModelError> {
            g.add_node(rt, kernel, args)?;
            Ok(())
        };
        let norm = |w: &str| {
            NodeArgs::new()
                .buffer("weight", w)
                .buffer("xq", "aq")
                .buffer("xs", "as")
                .var("rows", "t")
                .scalar("n", hu)
                .scalar("eps", cfg.eps)
        };
        let gemv_of = |(xq, xs): (&str, &str), w: &str, y: &str, n: usize, k: usize| {
            NodeArgs::new()
                .buffer("wq", format!("{w}.q"))
                .buffer("ws", format!("{w}.s"))
                .buffer("xq", xq)
                .buffer("xs", xs)
                .buffer("y", y)
                .scalar("n", u32_of(n))
                .scalar("k", u32_of(k))
                .var("t", "t")
        };
        let gemv = |w: &str, y: &str, n: usize, k: usize| gemv_of(("aq", "as"), w, y, n, k);
        add(
            "get_rows_q8_0",
            NodeArgs::new()
                .buffer("table", "token_embd")
                .buffer("ids", "tokens")
                .buffer("out", "x")
                .var("t", "t")
                .scalar("k", hu)
                .scalar("rows", u32_of(cfg.vocab)),
        )?;
        let rope = |a: NodeArgs| {
            a.var("pos", "pos")
                .var("n_tokens", "t")
                .scalar("head_dim", u32_of(cfg.head_dim))
                .scalar("n_dims", u32_of(cfg.rope_dims))
                .scalar("base", cfg.rope_base)
                .scalar("neox", 0u32)
        };
        // The norm folded into the GEMV that reads it: `x`, its gain and `eps` in place of `aq`,
        // `as` (nothing else reads the norm's blocks).
        let normed = |x: &str, w: &str| {
            NodeArgs::new().buffer("x", x).buffer("weight", w).scalar("eps", cfg.eps)
        };
        // A residual GEMV's arguments, with the norm of its output (gain `w`) in its tail when
        // the norms run there (its family: `Norms::residual_suffix`).
        let residual = |a: NodeArgs, w: &str| {
            if split {
                a.buffer("weight", w)
                    .buffer("norm_xq", "aq")
                    .buffer("norm_xs", "as")
                    .buffer("norm_ss", "ss")
            } else if tails {
                a.buffer("weight", w)
                    .scalar("eps", cfg.eps)
                    .buffer("norm_xq", "aq")
                    .buffer("norm_xs", "as")
            } else {
                a
            }
        };
        let res = weights.norms.residual_suffix();
        // Whether the norm before a layer's Q/K/V or gate/up GEMV is a node of its own (with
        // the norms in the tails, only layer 0's Q/K/V one: nothing before it has a tail).
        let norm_node = |layer: usize, before_qkv: bool| match weights.norms {
            Norms::Folded => false,
            Norms::Apart => true,
            Norms::InResidual | Norms::Split => before_qkv && layer == 0,
        };
        // The split norm's scale, for the GEMVs that read a `_res_sq` GEMV's blocks.
        let scaled = |a: NodeArgs| a.buffer("norm_ss", "ss").scalar("eps", cfg.eps);
        for (i, l) in cfg.layers.iter().enumerate() {
            let p = |s: &str| format!("blk.{i}.{s}");
            let mat = |m: MatType, suffix: &str| format!("gemv_{}_rp{suffix}", m.name());
            let qkv_weights = |a: NodeArgs| {
                a.buffer("q_wq", p("attn_q.q"))
                    .buffer("q_ws", p("attn_q.s"))
                    .buffer("k_wq", p("attn_k.q"))
                    .buffer("k_ws", p("attn_k.s"))
                    .buffer("v_wq", p("attn_v.q"))
                    .buffer("v_ws", p("attn_v.s"))
            };
            let qkv_args = |a: NodeArgs| {
                qkv_weights(a)
                    .buffer("q_y", "q")
                    .buffer("k_y", "k")
                    .buffer("v_y", "v")
                    .scalar("n_q", hu)
                    .scalar("n_kv", u32_of(kvd))
                    .scalar("k", hu)
                    .var("t", "t")
            };
            // Q, K, V and the K/V append in one node: K rotated and both written into the caches.
            let cached = |a: NodeArgs| {
                qkv_weights(a)
                    .buffer("q_y", "q")
                    .buffer("k_cache", format!("kc.{i}"))
                    .buffer("v_cache", format!("vc.{i}"))
                    .scalar("n_q", hu)
                    .scalar("n_kv_heads", u32_of(cfg.n_kv_heads))
                    .scalar("head_dim", u32_of(cfg.head_dim))
                    .scalar("k", hu)
                    .var("t", "t")
                    .var("pos", "pos")
                    .scalar("ctx_max", u32_of(ctx_max))
                    .scalar("n_dims", u32_of(cfg.rope_dims))
                    .scalar("base", cfg.rope_base)
            };
            let append_apart = weights.append == Append::Apart || l.qkv().is_none();
            let folded = weights.norms == Norms::Folded;
            if norm_node(i, true) || (folded && l.qkv().is_none()) {
                add("rmsnorm_q8_1s_f32", norm(&p("attn_norm")).buffer("x", "x"))?;
            }
            let normed_acts = || NodeArgs::new().buffer("xq", "aq").buffer("xs", "as");
            match (l.qkv(), folded) {
                (Some(m), true) if !append_apart => {
                    add(&mat(m, "_qkv_cache_norm"), cached(normed("x", &p("attn_norm"))))?
                }
                (Some(m), false) if split && i > 0 => {
                    add(&mat(m, "_qkv_cache_rms"), scaled(cached(normed_acts())))?
                }
                (Some(m), false) if !append_apart => {
                    add(&mat(m, "_qkv_cache"), cached(normed_acts()))?
                }
                (Some(m), true) => {
                    add(&mat(m, "_qkv_norm"), qkv_args(normed("x", &p("attn_norm"))))?
                }
                (Some(m), false) => add(&mat(m, "_qkv"), qkv_args(normed_acts()))?,
                (None, _) => {
                    add(&mat(l.q, ""), gemv(&p("attn_q"), "q", h, h))?;
                    add(&mat(l.k, ""), gemv(&p("attn_k"), "k", kvd, h))?;
                    add(&mat(l.v, ""), gemv(&p("attn_v"), "v", kvd, h))?;
                }
            }
            if append_apart {
                add(
                    "kv_append_q8_0",
                    rope(
                        NodeArgs::new()
                            .buffer("k", "k")
                            .buffer("v", "v")
                            .buffer("k_cache", format!("kc.{i}"))
                            .buffer("v_cache", format!("vc.{i}"))
                            .scalar("n_kv_heads", u32_of(cfg.n_kv_heads))
                            .scalar("ctx_max", u32_of(ctx_max)),
                    ),
                )?;
            }
            add(
                &format!("attention_decode_rope_q8_0_d{}_q8_1s", cfg.head_dim),
                rope(
                    NodeArgs::new()
                        .buffer("q", "q")
                        .buffer("k_cache", format!("kc.{i}"))
                        .buffer("v_cache", format!("vc.{i}"))
                        .buffer("xq", oq)
                        .buffer("xs", os)
                        .scalar("n_kv_heads", u32_of(cfg.n_kv_heads))
                        .scalar("group", u32_of(cfg.n_heads / cfg.n_kv_heads))
                        .scalar("ctx_max", u32_of(ctx_max))
                        .scalar("scale", 1.0f32 / (cfg.head_dim as f32).sqrt()),
                ),
            )?;
            let o = gemv_of((oq, os), &p("attn_output"), "h", h, h).buffer("res", "x");
            add(&mat(l.o, res), residual(o, &p("ffn_norm")))?;
            let gate_up = |a: NodeArgs| {
                a.buffer("gate_wq", p("ffn_gate.q"))
                    .buffer("gate_ws", p("ffn_gate.s"))
                    .buffer("up_wq", p("ffn_up.q"))
                    .buffer("up_ws", p("ffn_up.s"))
                    .buffer("yq", "fq")
                    .buffer("ys", "fs")
                    .scalar("n", fu)
                    .scalar("k", hu)
                    .var("t", "t")
            };
            if folded {
                add(&mat(l.gate_up, "_swiglu_q8_1s_norm"), gate_up(normed("h", &p("ffn_norm"))))?
            } else {
                if norm_node(i, false) {
                    add("rmsnorm_q8_1s_f32", norm(&p("ffn_norm")).buffer("x", "h"))?;
                }
                let (sfx, args) = if split {
                    ("_swiglu_q8_1s_rms", scaled(gate_up(normed_acts())))
                } else {
                    ("_swiglu_q8_1s", gate_up(normed_acts()))
                };
                add(&mat(l.gate_up, sfx), args)?
            }
            // The down projection's tail: the next layer's first norm, or the output norm.
            let next_norm = if i + 1 < cfg.n_layers {
                format!("blk.{}.attn_norm", i + 1)
            } else {
                "output_norm".into()
            };
            let down = gemv_of(("fq", "fs"), &p("ffn_down"), "x", h, f).buffer("res", "h");
            add(&mat(l.down, res), residual(down, &next_norm))?;
        }
        if !tails {
            add("rmsnorm_q8_1s_f32", norm("output_norm").buffer("x", "x"))?;
        }
        match cfg.output {
            None | Some(MatType::Q8_0) if split => {
                let w = if cfg.output.is_none() { "token_embd" } else { "output" };
                add("gemv_q8_0_rp_rms", scaled(gemv(w, "logits", cfg.vocab, h)))?
            }
            None => add("gemv_q8_0_rp", gemv("token_embd", "logits", cfg.vocab, h))?,
            Some(m) => {
                add(&format!("gemv_{}_rp", m.name()), gemv("output", "logits", cfg.vocab, h))?
            }
        }
        add(
            "argmax_rows",
            NodeArgs::new()
                .buffer("logits", "logits")
                .buffer("out", "tokens")
                .var("rows", "t")
                .scalar("n", u32_of(cfg.vocab)),
        )?;
        if history {
            // The step's last node copies its tokens to their positions in `history`, host
            // memory mapped into the device, which the host reads in place
            // ([`Decoder::queue_greedy`]): no copy between two steps on the stream. Allocated
            // last, so the device buffers above are where they are without it.
            g.add_buffer(HISTORY, dev.alloc_host_mapped(ScalarType::I32, ctx_max + MAX_T)?)?;
            let copy = NodeArgs::new()
                .buffer("src", "tokens")
                .buffer("dst", HISTORY)
                .var("n", "t")
                .var("at", "pos")
                .scalar("cap", u32_of(ctx_max + MAX_T));
            g.add_node(rt, HISTORY_KERNEL, copy)?;
        }
        set_step_vars(&mut |n, v| g.set_var(n, v), 0, 1);
        Ok(StepGraph { graph: g, ctx_max })
    }
}

impl StepGraph {
    /// Sets the graph's variables to a step of `t` tokens at `pos` (for an eager run or a
    /// profile; a captured [`Decoder`] keeps its own).
    pub fn set_step(&mut self, pos: usize, t: usize) {
        set_step_vars(&mut |n, v| self.graph.set_var(n, v), pos, t);
    }
}

/// Sets the two variables of a step at `pos` of `t` tokens through `set`.
fn set_step_vars(set: &mut dyn FnMut(&str, u32), pos: usize, t: usize) {
    set("pos", u32_of(pos));
    set("t", u32_of(t));
}

/// Sets a captured graph's variables to a step of `t` tokens at `pos` (the first error, after
/// trying both).
fn set_captured_step(g: &mut CapturedGraph<'_>, pos: usize, t: usize) -> Result<(), GraphError> {
    let mut err = None;
    let mut set = |n: &str, v| {
        if let Err(e) = g.set_var(n, v) {
            err.get_or_insert(e);
        }
    };
    set_step_vars(&mut set, pos, t);
    err.map_or(Ok(()), Err)
}

/// Queues the read of the greedy token of a one-token step at `pos`: in place, its place in
/// the history, else a copy of `tokens`.
fn queue_token(r: &mut ReadBack, pos: usize) -> Result<Ticket, DeviceError> {
    if r.reads_in_place() {
        r.queue_range(pos, 1)
    } else {
        r.queue()
    }
}

/// What a step gives back.
#[derive(Clone, Debug, PartialEq)]
pub struct StepOut {
    /// The greedy next token after each of the step's tokens.
    pub next: Vec<u32>,
    /// The logits of each token (`t x vocab`), when asked for.
    pub logits: Option<Vec<f32>>,
}

/// The captured decode step, replayed a step at a time.
pub struct Decoder<'r> {
    cfg: Config,
    captured: CapturedGraph<'r>,
    tokens: Buffer,
    /// Queued reads of the steps of [`Self::queue_greedy`]: of [`HISTORY`] in place where the
    /// graph has it, else copies of `tokens`.
    queued: ReadBack,
    logits: Buffer,
    /// Tokens of the last step (its greedy tokens are in `tokens`).
    last_t: usize,
    ctx_max: usize,
    /// Positions filled in the cache.
    pub pos: usize,
}

impl<'r> Decoder<'r> {
    /// Captures `step` on `rt` (nothing runs until the first step).
    pub fn new(rt: &'r Runtime, cfg: &Config, step: &StepGraph) -> Result<Decoder<'r>, ModelError> {
        let buf = |n: &str| step.graph.buffer(n).expect("the graph has it").clone();
        let tokens = buf("tokens");
        let history = step.graph.buffer(HISTORY);
        Ok(Decoder {
            cfg: cfg.clone(),
            captured: step.graph.capture(rt)?,
            queued: match history {
                Some(h) => ReadBack::in_place(h, QUEUE_DEPTH)?,
                None => ReadBack::new(&tokens, QUEUE_DEPTH)?,
            },
            tokens,
            logits: buf("logits"),
            last_t: 0,
            ctx_max: step.ctx_max,
            pos: 0,
        })
    }

    /// Tokens of the last step (0 after [`Self::reset`]).
    pub fn last_tokens(&self) -> usize {
        self.last_t
    }

    /// How many nodes the last step re-checked (those reading a variable that changed: after a
    /// step of as many tokens, only `pos` moved, read by KV append, attention and the copy into
    /// the history).
    pub fn rechecked(&self) -> usize {
        self.captured.rechecked()
    }

    /// The number of kernel nodes a step replays.
    pub fn nodes(&self) -> usize {
        self.captured.len()
    }

    /// The variant each node ran at the last step, in launch order.
    pub fn variants(&self) -> Vec<(String, String)> {
        self.captured.variants()
    }

    /// Runs `ids` (1..=8 tokens) at the next positions; returns the greedy next token after
    /// each, and their logits when `logits` is set.
    pub fn step(&mut self, ids: &[u32], logits: bool) -> Result<StepOut, ModelError> {
        let t = ids.len();
        if !(1..=MAX_T).contains(&t) {
            return Err(ModelError::Tokens(t));
        }
        if let Some(&id) = ids.iter().find(|&&id| id as usize >= self.cfg.vocab) {
            return Err(ModelError::TokenId { id, vocab: self.cfg.vocab });
        }
        self.check_room(t)?;
        let mut padded = [0i32; MAX_T];
        for (p, &id) in padded.iter_mut().zip(ids) {
            *p = id as i32;
        }
        self.tokens.write(&padded)?;
        self.run(t, logits)
    }

    /// One token: the last step's greedy token, fed on the device (no copy from the host). The
    /// last step must have had one token (after a prompt step of several, call [`Self::step`]
    /// with its last greedy token).
    pub fn step_greedy(&mut self, logits: bool) -> Result<StepOut, ModelError> {
        if self.last_t != 1 {
            return Err(ModelError::Tokens(self.last_t));
        }
        self.check_room(1)?;
        self.run(1, logits)
    }

    /// [`Self::step_greedy`] without waiting for the step: it is launched, a read of its token
    /// is queued behind it, and the host goes on (to queue the next step: the device then runs
    /// one step after the other with no host round trip between them). The token comes from
    /// [`Self::token`]; at most [`QUEUE_DEPTH`] steps are queued and not yet read. `pos` counts
    /// the queued steps.
    pub fn queue_greedy(&mut self) -> Result<Ticket, ModelError> {
        if self.last_t != 1 {
            return Err(ModelError::Tokens(self.last_t));
        }
        self.check_room(1)?;
        if self.queued.pending() == QUEUE_DEPTH {
            return Err(ModelError::Queued(QUEUE_DEPTH));
        }
        self.set_step(self.pos, 1)?;
        self.captured.replay()?;
        let ticket = queue_token(&mut self.queued, self.pos)?;
        self.prepare_next(1);
        self.pos += 1;
        Ok(ticket)
    }

    /// The greedy token of a step of [`Self::queue_greedy`], once it has run (waits for that
    /// step alone, not for the steps queued after it).
    pub fn token(&mut self, ticket: Ticket) -> Result<u32, ModelError> {
        Ok(self.queued.wait::<i32>(ticket)?[0] as u32)
    }

    /// While the device runs a step of `t` tokens, prepares the likely next one (a token at the
    /// next position: greedy decode) on the host; a different next step re-checks what differs.
    /// A refusal here is not this step's: the next step meets it again and reports it.
    fn prepare_next(&mut self, t: usize) {
        if self.pos + t < self.ctx_max && self.set_step(self.pos + t, 1).is_ok() {
            let _ = self.captured.update();
        }
    }

    fn check_room(&self, t: usize) -> Result<(), ModelError> {
        if self.pos + t > self.ctx_max {
            return Err(ModelError::Context {
                pos: self.pos,
                end: self.pos + t,
                ctx: self.ctx_max,
            });
        }
        Ok(())
    }

    /// Sets the captured graph's variables to a step of `t` tokens at `pos`.
    fn set_step(&mut self, pos: usize, t: usize) -> Result<(), ModelError> {
        Ok(set_captured_step(&mut self.captured, pos, t)?)
    }

    fn run(&mut self, t: usize, logits: bool) -> Result<StepOut, ModelError> {
        self.set_step(self.pos, t)?;
        self.captured.replay()?;
        self.prepare_next(t);
        let next: Vec<i32> = self.tokens.read()?;
        let next = next[..t].iter().map(|&v| v as u32).collect();
        let logits = if logits {
            let mut l: Vec<f32> = self.logits.read()?;
            l.truncate(t * self.cfg.vocab);
            Some(l)
        } else {
            None
        };
        self.pos += t;
        self.last_t = t;
        Ok(StepOut { next, logits })
    }

    /// Device microseconds of `n` replays (after `warmup`) of a step of `t` tokens at the next
    /// position, which is not advanced: the step writes the cache past the context and leaves
    /// the decoder as it was (the ids the timed steps write over are put back, so the next
    /// [`Self::step_greedy`] starts from the same token).
    pub fn time_steps(
        &mut self,
        t: usize,
        warmup: usize,
        n: usize,
    ) -> Result<Vec<f64>, ModelError> {
        if !(1..=MAX_T).contains(&t) {
            return Err(ModelError::Tokens(t));
        }
        self.check_room(t)?;
        self.keeping_tokens(|d| {
            d.set_step(d.pos, t)?;
            Ok(d.captured.time_replays(warmup, n)?)
        })
    }

    /// Runs `f`, then puts `tokens` back as it was before (timed steps feed their own greedy
    /// tokens to the next replay).
    fn keeping_tokens<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, ModelError>,
    ) -> Result<T, ModelError> {
        let saved: Vec<i32> = self.tokens.read()?;
        let out = f(self);
        self.tokens.write(&saved)?;
        out
    }

    /// Device microseconds of `n` one-token steps (after `warmup`) replayed as decode replays
    /// them: `pos` moves every step (the next position and the one after it in turns, so the
    /// nodes that read it are rewritten before each launch) and, with `read`, each step's token
    /// is copied back after it ([`ReadBack`], [`QUEUE_DEPTH`] steps ahead), inside its events.
    /// Against [`Self::time_steps`] (the variables unchanged) this shows what decode's
    /// rewrites and read-backs cost the device. The position is not advanced: the steps write
    /// the cache past the context and leave the decoder as it was (as [`Self::time_steps`]).
    /// Refused while steps of [`Self::queue_greedy`] are not yet read.
    pub fn time_decode_steps(
        &mut self,
        warmup: usize,
        n: usize,
        read: bool,
    ) -> Result<Vec<f64>, ModelError> {
        self.check_room(2)?;
        if self.queued.pending() != 0 {
            return Err(ModelError::Queued(self.queued.pending()));
        }
        self.keeping_tokens(|d| d.time_decode_steps_now(warmup, n, read))
    }

    fn time_decode_steps_now(
        &mut self,
        warmup: usize,
        n: usize,
        read: bool,
    ) -> Result<Vec<f64>, ModelError> {
        let pos = self.pos;
        let mut tickets = VecDeque::new();
        let queued = &mut self.queued;
        let times = self.captured.time_replays_with(
            warmup,
            n,
            &mut |g, i| Ok(set_captured_step(g, pos + i % 2, 1)?),
            &mut |_, i| {
                if read {
                    if tickets.len() == QUEUE_DEPTH {
                        queued.wait::<i32>(tickets.pop_front().expect("full"))?;
                    }
                    tickets.push_back(queue_token(queued, pos + i % 2)?);
                }
                Ok(())
            },
        );
        for t in tickets {
            self.queued.wait::<i32>(t)?;
        }
        Ok(times?)
    }

    /// Forgets the context (the cache is overwritten from position 0).
    pub fn reset(&mut self) {
        self.pos = 0;
        self.last_t = 0;
    }
}
