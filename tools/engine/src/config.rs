//! The model's shape and weight formats from the GGUF metadata and tensor table, checked
//! against what kiln's kernels run. A refusal names the key or tensor, what was expected and
//! what was found, before anything is uploaded.
//!
//! The engine runs the llama architecture (llama.cpp's `LLM_ARCH_LLAMA`): RMSNorm, grouped-query
//! attention with RoPE in ggml's "normal" pairing (llama.cpp's `LLAMA_ROPE_TYPE_NORM` for llama:
//! the converter permutes Q and K so that pairs are `2i, 2i+1`), a SwiGLU MLP, and the output
//! tied to the token embedding when `output.weight` is absent.

use crate::gguf::{GgmlType, Gguf, TensorInfo, Value};
use kiln_runtime::KernelCatalog;

/// Why a model was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Not the llama architecture.
    #[error("general.architecture is `{0}`; this engine runs `llama` only")]
    Architecture(String),
    /// A key missing or of the wrong type.
    #[error("metadata `{key}`: {problem}")]
    Key {
        /// The key.
        key: String,
        /// What is wrong.
        problem: String,
    },
    /// A tensor missing.
    #[error("tensor `{0}` is missing")]
    MissingTensor(String),
    /// A tensor of the wrong shape.
    #[error("tensor `{name}` has dims {found:?} (innermost first), expected {expected:?}")]
    Shape {
        /// The tensor.
        name: String,
        /// Expected dims.
        expected: Vec<u64>,
        /// Found dims.
        found: Vec<u64>,
    },
    /// A tensor of a type the engine's kernels do not take in that place.
    #[error("tensor `{name}` is {found}; here the engine takes {expected}")]
    TensorType {
        /// The tensor.
        name: String,
        /// Found.
        found: GgmlType,
        /// What kiln's kernels take in that place.
        expected: &'static str,
    },
    /// A shape the kernels do not take.
    #[error("{0}")]
    Unsupported(String),
}

/// A weight matrix format the GEMV families take (`gemv_<fmt>_rp[_res|_swiglu]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatType {
    /// Q8_0.
    Q8_0,
    /// Q4_0.
    Q4_0,
    /// Q4_1.
    Q4_1,
}

impl MatType {
    /// The name in kernel names.
    pub fn name(self) -> &'static str {
        match self {
            MatType::Q8_0 => "q8_0",
            MatType::Q4_0 => "q4_0",
            MatType::Q4_1 => "q4_1",
        }
    }
    /// Bytes of quants a 32-value block in the repacked layout.
    pub fn quant_bytes(self) -> usize {
        match self {
            MatType::Q8_0 => 32,
            MatType::Q4_0 | MatType::Q4_1 => 16,
        }
    }
    /// The element type of the repacked scales.
    pub fn scale_type(self) -> kiln_ir::ScalarType {
        match self {
            MatType::Q4_1 => kiln_ir::ScalarType::U32,
            MatType::Q8_0 | MatType::Q4_0 => kiln_ir::ScalarType::U16,
        }
    }
    fn of(t: &TensorInfo) -> Result<MatType, ConfigError> {
        match t.ty {
            GgmlType::Q8_0 => Ok(MatType::Q8_0),
            GgmlType::Q4_0 => Ok(MatType::Q4_0),
            GgmlType::Q4_1 => Ok(MatType::Q4_1),
            GgmlType::F32 | GgmlType::F16 | GgmlType::Bf16 => Err(ConfigError::TensorType {
                name: t.name.clone(),
                found: t.ty,
                expected: "Q8_0, Q4_0 or Q4_1",
            }),
        }
    }
}

/// One layer's matrix formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerTypes {
    /// `attn_q`, `attn_k`, `attn_v`, `attn_output`.
    pub q: MatType,
    /// K projection.
    pub k: MatType,
    /// V projection.
    pub v: MatType,
    /// Output projection.
    pub o: MatType,
    /// Gate and up (one fused kernel: the same format).
    pub gate_up: MatType,
    /// Down projection.
    pub down: MatType,
}

impl LayerTypes {
    /// The format of Q, K and V when they share one (one `gemv_<fmt>_rp_qkv` node instead of
    /// three GEMVs: a decode step is launch bound); `None` when they differ.
    pub fn qkv(&self) -> Option<MatType> {
        (self.q == self.k && self.k == self.v).then_some(self.q)
    }
}

/// The largest hidden size whose norms the engine folds into the GEMVs by default. Every
/// workgroup of a `_norm` GEMV normalizes the rows again, which is cheap for a short row and
/// not for a long one. Measured on the H200 (`bench/results/engine-h200-2026-12-01.md`): at
/// SmolLM2's 576 folding takes 60 us off a 790 us step; at Llama-3-8B's 4096 it adds 1780 us
/// to a 3195 us step (the gate/up GEMV 32.7 -> 68.7 us). Nothing was measured in between;
/// `kiln generate --norms` forces either.
pub const FOLD_NORMS_MAX_HIDDEN: usize = 1024;

/// Where a layer's K/V append runs: in the Q/K/V GEMV's epilogue (the `_qkv_cache` families,
/// which write K, rotated, and V into the Q8_0 caches: one node a layer fewer) or as a
/// `kv_append_q8_0` node after the Q/K/V GEMV.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Append {
    /// In the Q/K/V GEMV.
    InQkv,
    /// A node of its own.
    Apart,
}

/// Where a layer's two RMSNorms run: folded into the GEMV that reads them (the `_norm`
/// families: one node a norm fewer), in the tail of the residual GEMV that writes their input
/// (the `_res_rmsnorm` families: the same), or as `rmsnorm_q8_1s_f32` nodes before the plain
/// GEMVs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Norms {
    /// In the Q/K/V and gate/up GEMVs' prologues: every workgroup normalizes the row again.
    Folded,
    /// In the residual GEMVs: the last workgroup of the attention output's GEMV normalizes its
    /// row for the gate/up GEMV, the last of the down projection's for the next layer's Q/K/V
    /// (and the last layer's for the LM head); layer 0's norm stays a node. Only when asked
    /// for: slower than apart on the H200 (see [`Config::norms_for`]); rows of at most 4096.
    InResidual,
    /// Split between the GEMVs around each norm (`gemv::split_norm`): the residual GEMV that
    /// writes its input quantizes `x w` and sums its squares a 32-row block (the `_res_sq`
    /// families), the GEMV that reads it scales its sums by `1 / rms` (the `_rms` families);
    /// layer 0's first norm stays a node. Q8_0 layers with the K/V append in the Q/K/V GEMV
    /// only.
    Split,
    /// Nodes of their own.
    Apart,
}

impl Norms {
    /// The family suffix of the residual GEMVs (`_res`, or `_res_rmsnorm` / `_res_sq` with the
    /// norms, or their parts, in their tails).
    pub fn residual_suffix(self) -> &'static str {
        match self {
            Norms::InResidual => "_res_rmsnorm",
            Norms::Split => "_res_sq",
            Norms::Folded | Norms::Apart => "_res",
        }
    }
}

/// The model's shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Layers.
    pub n_layers: usize,
    /// Hidden size.
    pub hidden: usize,
    /// FFN size.
    pub ffn: usize,
    /// Query heads.
    pub n_heads: usize,
    /// KV heads.
    pub n_kv_heads: usize,
    /// Values a head.
    pub head_dim: usize,
    /// Rotated dimensions a head.
    pub rope_dims: usize,
    /// RoPE base.
    pub rope_base: f32,
    /// RMSNorm epsilon.
    pub eps: f32,
    /// Vocabulary (rows of the embedding).
    pub vocab: usize,
    /// Training context.
    pub ctx_train: usize,
    /// The LM head: `None` when tied to the Q8_0 token embedding, else `output.weight`'s format.
    pub output: Option<MatType>,
    /// Each layer's formats.
    pub layers: Vec<LayerTypes>,
}

fn key<'a>(g: &'a Gguf, k: &str) -> Result<&'a Value, ConfigError> {
    g.get(k).ok_or_else(|| ConfigError::Key { key: k.into(), problem: "is missing".into() })
}

fn uint(g: &Gguf, k: &str) -> Result<usize, ConfigError> {
    let v = key(g, k)?;
    v.as_u64().map(|x| x as usize).ok_or_else(|| ConfigError::Key {
        key: k.into(),
        problem: format!("is {}, expected an unsigned integer", v.type_name()),
    })
}

fn float(g: &Gguf, k: &str, default: Option<f64>) -> Result<f32, ConfigError> {
    match (g.get(k), default) {
        (None, Some(d)) => Ok(d as f32),
        (None, None) => Err(ConfigError::Key { key: k.into(), problem: "is missing".into() }),
        (Some(v), _) => v.as_f64().map(|x| x as f32).ok_or_else(|| ConfigError::Key {
            key: k.into(),
            problem: format!("is {}, expected a number", v.type_name()),
        }),
    }
}

fn tensor<'a>(g: &'a Gguf, name: &str, dims: &[usize]) -> Result<&'a TensorInfo, ConfigError> {
    let t = g.tensor(name).ok_or_else(|| ConfigError::MissingTensor(name.into()))?;
    let expected: Vec<u64> = dims.iter().map(|&d| d as u64).collect();
    if t.dims != expected {
        return Err(ConfigError::Shape { name: name.into(), expected, found: t.dims.clone() });
    }
    Ok(t)
}

fn norm(g: &Gguf, name: &str, n: usize) -> Result<(), ConfigError> {
    let t = tensor(g, name, &[n])?;
    match t.ty {
        GgmlType::F32 => Ok(()),
        GgmlType::F16 | GgmlType::Bf16 | GgmlType::Q4_0 | GgmlType::Q4_1 | GgmlType::Q8_0 => {
            Err(ConfigError::TensorType { name: name.into(), found: t.ty, expected: "F32" })
        }
    }
}

impl Config {
    /// Reads and checks the configuration of a GGUF model.
    pub fn from_gguf(g: &Gguf) -> Result<Config, ConfigError> {
        let arch = key(g, "general.architecture")?;
        let arch = arch.as_str().ok_or_else(|| ConfigError::Key {
            key: "general.architecture".into(),
            problem: format!("is {}, expected a string", arch.type_name()),
        })?;
        if arch != "llama" {
            return Err(ConfigError::Architecture(arch.into()));
        }
        let n_layers = uint(g, "llama.block_count")?;
        let hidden = uint(g, "llama.embedding_length")?;
        let ffn = uint(g, "llama.feed_forward_length")?;
        let n_heads = uint(g, "llama.attention.head_count")?;
        let n_kv_heads = match g.get("llama.attention.head_count_kv") {
            Some(_) => uint(g, "llama.attention.head_count_kv")?,
            None => n_heads,
        };
        let ctx_train = uint(g, "llama.context_length")?;
        let eps = float(g, "llama.attention.layer_norm_rms_epsilon", None)?;
        let rope_base = float(g, "llama.rope.freq_base", Some(10000.0))?;
        if n_heads == 0 || n_kv_heads == 0 || n_heads % n_kv_heads != 0 || hidden % n_heads != 0 {
            return Err(ConfigError::Unsupported(format!(
                "{n_heads} query heads over {n_kv_heads} KV heads and hidden {hidden}: expected \
                 whole groups and whole heads"
            )));
        }
        let head_dim = hidden / n_heads;
        let rope_dims = match g.get("llama.rope.dimension_count") {
            Some(_) => uint(g, "llama.rope.dimension_count")?,
            None => head_dim,
        };
        if head_dim != 64 && head_dim != 128 {
            return Err(ConfigError::Unsupported(format!(
                "head dimension {head_dim}: attention_decode_rope_q8_0_q8_1s is built for 64 and 128"
            )));
        }
        if hidden % 32 != 0 || ffn % 32 != 0 || rope_dims % 2 != 0 || rope_dims > head_dim {
            return Err(ConfigError::Unsupported(format!(
                "hidden {hidden} and FFN {ffn} must be multiples of 32, rope dims {rope_dims} \
                 even and at most the head dimension {head_dim}"
            )));
        }
        if let Some(v) = g.get("llama.rope.scaling.type").and_then(Value::as_str) {
            if v != "none" {
                return Err(ConfigError::Unsupported(format!(
                    "llama.rope.scaling.type is `{v}`; the engine applies plain RoPE only"
                )));
            }
        }
        let emb = g
            .tensor("token_embd.weight")
            .ok_or_else(|| ConfigError::MissingTensor("token_embd.weight".into()))?;
        let vocab = emb.dims.get(1).copied().unwrap_or(0) as usize;
        tensor(g, "token_embd.weight", &[hidden, vocab])?;
        match emb.ty {
            GgmlType::Q8_0 => {}
            GgmlType::F32 | GgmlType::F16 | GgmlType::Bf16 | GgmlType::Q4_0 | GgmlType::Q4_1 => {
                return Err(ConfigError::TensorType {
                    name: emb.name.clone(),
                    found: emb.ty,
                    expected: "Q8_0 (get_rows_q8_0)",
                })
            }
        }
        norm(g, "output_norm.weight", hidden)?;
        let output = match g.tensor("output.weight") {
            None => None,
            Some(_) => Some(MatType::of(tensor(g, "output.weight", &[hidden, vocab])?)?),
        };
        let kv = n_kv_heads * head_dim;
        let mut layers = vec![];
        for i in 0..n_layers {
            let m = |name: &str, k: usize, n: usize| -> Result<MatType, ConfigError> {
                MatType::of(tensor(g, &format!("blk.{i}.{name}.weight"), &[k, n])?)
            };
            norm(g, &format!("blk.{i}.attn_norm.weight"), hidden)?;
            norm(g, &format!("blk.{i}.ffn_norm.weight"), hidden)?;
            let gate = m("ffn_gate", hidden, ffn)?;
            let up = m("ffn_up", hidden, ffn)?;
            if gate != up {
                return Err(ConfigError::Unsupported(format!(
                    "blk.{i}: ffn_gate is {} and ffn_up {}; the fused gate/up GEMV takes one format",
                    gate.name(),
                    up.name()
                )));
            }
            layers.push(LayerTypes {
                q: m("attn_q", hidden, hidden)?,
                k: m("attn_k", hidden, kv)?,
                v: m("attn_v", hidden, kv)?,
                o: m("attn_output", hidden, hidden)?,
                gate_up: gate,
                down: m("ffn_down", ffn, hidden)?,
            });
        }
        Ok(Config {
            n_layers,
            hidden,
            ffn,
            n_heads,
            n_kv_heads,
            head_dim,
            rope_dims,
            rope_base,
            eps,
            vocab,
            ctx_train,
            output,
            layers,
        })
    }

    /// The kernels a decode graph of this model calls with its norms placed by `norms` and the
    /// K/V append apart (and the load-time repacks).
    pub fn kernels(&self, norms: Norms) -> Vec<String> {
        self.kernels_with(norms, Append::Apart)
    }

    /// The kernels a decode graph calls with its norms placed by `norms` and its K/V append by
    /// `append` (in the Q/K/V GEMV only for layers whose Q, K and V share a format).
    pub fn kernels_with(&self, norms: Norms, append: Append) -> Vec<String> {
        let mut v: Vec<String> = ["get_rows_q8_0", "rmsnorm_q8_1s_f32", "argmax_rows"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        v.push(format!("attention_decode_rope_q8_0_d{}_q8_1s", self.head_dim));
        let (qkv, gate_up) = match (norms, append) {
            (Norms::Folded, Append::InQkv) => ("_qkv_cache_norm", "_swiglu_q8_1s_norm"),
            (Norms::Folded, Append::Apart) => ("_qkv_norm", "_swiglu_q8_1s_norm"),
            (Norms::Apart | Norms::InResidual, Append::InQkv) => ("_qkv_cache", "_swiglu_q8_1s"),
            (Norms::Apart | Norms::InResidual, Append::Apart) => ("_qkv", "_swiglu_q8_1s"),
            (Norms::Split, _) => ("_qkv_cache_rms", "_swiglu_q8_1s_rms"),
        };
        // With the norms split, layer 0's Q/K/V reads the norm node, and the LM head scales.
        let split = norms == Norms::Split;
        let res = norms.residual_suffix();
        if append == Append::Apart || self.layers.iter().any(|l| l.qkv().is_none()) {
            v.push("kv_append_q8_0".to_string());
        }
        let mut fmts = vec![];
        for (i, l) in self.layers.iter().enumerate() {
            let attn_in = match l.qkv() {
                Some(m) if split && i == 0 => vec![(m, "_qkv_cache")],
                Some(m) => vec![(m, qkv)],
                None => vec![(l.q, ""), (l.k, ""), (l.v, "")],
            };
            for (m, suffix) in
                attn_in.into_iter().chain([(l.o, res), (l.gate_up, gate_up), (l.down, res)])
            {
                v.push(format!("gemv_{}_rp{suffix}", m.name()));
                fmts.push(m);
            }
        }
        // The LM head: `output.weight`, or a repacked copy of the Q8_0 token embedding.
        let head = self.output.unwrap_or(MatType::Q8_0);
        v.push(format!("gemv_{}_rp{}", head.name(), if split { "_rms" } else { "" }));
        fmts.push(head);
        for m in fmts {
            v.push(format!("repack_{}", m.name()));
        }
        v.sort();
        v.dedup();
        v
    }

    /// Where the norms go on `rt`: folded when the hidden size is at most
    /// [`FOLD_NORMS_MAX_HIDDEN`], the package has every `_norm` kernel the model needs (they are
    /// built only for wave-32 archs) and each object's prologue takes rows of the hidden size
    /// (its `norm_max_k`); above it split ([`Norms::Split`]) where the model's layers are Q8_0
    /// and the package has the `_res_sq` / `_rms` kernels for rows of the hidden size (on the
    /// H200 the Llama-3-8B-shaped step 2501 -> 2367 us, `bench/results/split-h200-2026-12-04.md`);
    /// apart otherwise. Never in the residual GEMVs' tails
    /// ([`Norms::InResidual`], asked for with `kiln generate --norms residual`): measured
    /// slower on the H200 (`bench/results/pipeline-h200-2026-12-02.md`: Llama-3-8B's step
    /// 2708 -> 6147 us, the tail on one workgroup a chain of memory round trips; with the tail's
    /// loads batched and its tuned route, `bench/results/tail-h200-2026-12-03.md`: 2685.9 ->
    /// 2715.5 us, and SmolLM2's 530.7 -> 777.3 against folded).
    pub fn norms_for(&self, rt: &impl KernelCatalog) -> Norms {
        // Every object of `kernel` takes rows of the hidden size (its constant `limit`).
        let fits_by = |kernel: &str, limit: &str| {
            let variants = rt.variant_names(kernel);
            !variants.is_empty()
                && variants.iter().all(|v| {
                    rt.entry(kernel, v)
                        .and_then(|o| o.consts.get(limit))
                        .is_some_and(|&max| self.hidden as i64 <= max)
                })
        };
        if self.hidden > FOLD_NORMS_MAX_HIDDEN {
            let have = rt.kernel_names();
            let split = self.kernels_with(Norms::Split, Append::InQkv);
            let scaled = |k: &&String| k.ends_with("_rms");
            return if self.split_fits()
                && split.iter().all(|k| have.contains(&k.as_str()))
                && split.iter().filter(scaled).all(|k| fits_by(k, "rms_max_k"))
            {
                Norms::Split
            } else {
                Norms::Apart
            };
        }
        let fits = |kernel: &str| fits_by(kernel, "norm_max_k");
        let folded = self.kernels(Norms::Folded);
        let needs_fold = |k: &&String| k.ends_with("_norm");
        if folded.iter().filter(needs_fold).all(|k| fits(k)) {
            Norms::Folded
        } else {
            Norms::Apart
        }
    }

    /// Whether [`Norms::Split`] can place this model's norms: every layer's matrices Q8_0 (Q, K
    /// and V alike) and the LM head Q8_0.
    pub fn split_fits(&self) -> bool {
        let q8 = |m: MatType| m == MatType::Q8_0;
        self.output.is_none_or(q8)
            && self
                .layers
                .iter()
                .all(|l| l.qkv().is_some_and(q8) && q8(l.o) && q8(l.gate_up) && q8(l.down))
    }

    /// Where the K/V append goes on `rt` with the norms placed by `norms`: in the Q/K/V GEMV
    /// (of the layers whose Q, K and V share a format; the others append apart) when the
    /// package has the `_qkv_cache` kernels they need; apart otherwise. (The engine's RoPE is
    /// the normal pairing, the only one the fused kernels take.)
    pub fn append_for(&self, rt: &impl KernelCatalog, norms: Norms) -> Append {
        let have = rt.kernel_names();
        let fused = self.kernels_with(norms, Append::InQkv);
        if fused.iter().all(|k| have.contains(&k.as_str())) {
            Append::InQkv
        } else {
            Append::Apart
        }
    }
}
