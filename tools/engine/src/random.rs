//! Models with random weights and real shapes, written as GGUF: the engine's speed on a model
//! whose file is not at hand (an 8B model's 8.5 GB are not carried to the GPU machine; they are
//! written there in seconds), and the same file for llama.cpp, so both run the same bytes.
//!
//! The vocabulary (tokens, merges, token types, special ids) is copied from another GGUF, so
//! both engines load a real tokenizer; a shape with a larger vocabulary gets filler tokens
//! (`<|kiln_filler_N|>`, type "unused") up to its size. The weights are random blocks drawn
//! directly in the file's format: quants uniform over their range, scales chosen so each matrix
//! row has about unit gain (`1 / sqrt(k)` a weight), so activations stay finite through every
//! layer. Never zeros: a benchmark on zeros measures nothing.

use crate::gguf::write::{write, TensorSpec, WriteError};
use crate::gguf::{GgmlType, Gguf, Value};
use half::f16;
use std::io::{self, Write};

/// A model's shape: what `general.architecture = llama` needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    /// Its name on the command line.
    pub name: &'static str,
    /// Layers.
    pub layers: u64,
    /// Hidden size.
    pub hidden: u64,
    /// Query heads.
    pub heads: u64,
    /// KV heads.
    pub kv_heads: u64,
    /// FFN size.
    pub ffn: u64,
    /// Vocabulary (padded with fillers past the source's).
    pub vocab: u64,
    /// RoPE base.
    pub rope_base: f32,
    /// Training context.
    pub ctx: u64,
    /// The LM head is the token embedding (no `output.weight`).
    pub tied: bool,
}

/// The shapes `kiln random-model` knows.
pub const SHAPES: [Shape; 2] = [
    Shape {
        name: "smollm2-135m",
        layers: 30,
        hidden: 576,
        heads: 9,
        kv_heads: 3,
        ffn: 1536,
        vocab: 49152,
        rope_base: 100_000.0,
        ctx: 8192,
        tied: true,
    },
    Shape {
        name: "llama3-8b",
        layers: 32,
        hidden: 4096,
        heads: 32,
        kv_heads: 8,
        ffn: 14336,
        vocab: 128_256,
        rope_base: 500_000.0,
        ctx: 8192,
        tied: false,
    },
];

/// Why a random model could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RandomError {
    /// An unknown shape.
    #[error("no shape `{0}`; the shapes are {names}", names = SHAPES.map(|s| s.name).join(", "))]
    Shape(String),
    /// A matrix type the generator does not draw.
    #[error("matrices of type {0:?} are not drawn; use Q8_0, Q4_0 or Q4_1")]
    Type(GgmlType),
    /// The vocabulary source lacks a key.
    #[error("the vocabulary source has no `{0}`")]
    Vocab(&'static str),
    /// The vocabulary source has more tokens than the shape.
    #[error("the vocabulary source has {found} tokens, more than the shape's {vocab}")]
    VocabSize {
        /// Tokens in the source.
        found: usize,
        /// The shape's vocabulary.
        vocab: u64,
    },
    /// Writing.
    #[error(transparent)]
    Write(#[from] WriteError),
}

impl Shape {
    /// The shape named `name`.
    pub fn named(name: &str) -> Result<Shape, RandomError> {
        SHAPES
            .iter()
            .find(|s| s.name == name)
            .cloned()
            .ok_or_else(|| RandomError::Shape(name.into()))
    }

    /// Bytes of the weight tensors with matrices of type `ty` (the embedding is always Q8_0).
    pub fn weight_bytes(&self, ty: GgmlType) -> u64 {
        self.tensors(ty).iter().filter_map(TensorSpec::bytes).sum()
    }

    /// The tensors, in the order llama.cpp's converter writes them.
    pub fn tensors(&self, ty: GgmlType) -> Vec<TensorSpec> {
        let t = |name: String, dims: Vec<u64>, ty| TensorSpec { name, dims, ty };
        let (h, f, kv) = (self.hidden, self.ffn, self.kv_heads * (self.hidden / self.heads));
        let mut v = vec![t("token_embd.weight".into(), vec![h, self.vocab], GgmlType::Q8_0)];
        for i in 0..self.layers {
            let b = |s: &str| format!("blk.{i}.{s}.weight");
            v.push(t(b("attn_norm"), vec![h], GgmlType::F32));
            v.push(t(b("attn_q"), vec![h, h], ty));
            v.push(t(b("attn_k"), vec![h, kv], ty));
            v.push(t(b("attn_v"), vec![h, kv], ty));
            v.push(t(b("attn_output"), vec![h, h], ty));
            v.push(t(b("ffn_norm"), vec![h], GgmlType::F32));
            v.push(t(b("ffn_gate"), vec![h, f], ty));
            v.push(t(b("ffn_up"), vec![h, f], ty));
            v.push(t(b("ffn_down"), vec![f, h], ty));
        }
        v.push(t("output_norm.weight".into(), vec![h], GgmlType::F32));
        if !self.tied {
            v.push(t("output.weight".into(), vec![h, self.vocab], GgmlType::Q8_0));
        }
        v
    }
}

/// The tokenizer keys copied from the vocabulary source.
const TOKENIZER_KEYS: [&str; 6] = [
    "tokenizer.ggml.model",
    "tokenizer.ggml.pre",
    "tokenizer.ggml.merges",
    "tokenizer.ggml.bos_token_id",
    "tokenizer.ggml.eos_token_id",
    "tokenizer.ggml.add_bos_token",
];

/// The metadata of `shape`, with the vocabulary of `vocab` padded to the shape's size.
pub fn metadata(shape: &Shape, vocab: &Gguf) -> Result<Vec<(String, Value)>, RandomError> {
    let kv = |k: &str, v: Value| (k.to_string(), v);
    let u = |x: u64| Value::U32(x as u32);
    let mut m = vec![
        kv("general.architecture", Value::Str("llama".into())),
        kv("general.name", Value::Str(format!("kiln random {}", shape.name))),
        kv("llama.block_count", u(shape.layers)),
        kv("llama.context_length", u(shape.ctx)),
        kv("llama.embedding_length", u(shape.hidden)),
        kv("llama.feed_forward_length", u(shape.ffn)),
        kv("llama.attention.head_count", u(shape.heads)),
        kv("llama.attention.head_count_kv", u(shape.kv_heads)),
        kv("llama.rope.freq_base", Value::F32(shape.rope_base)),
        kv("llama.rope.dimension_count", u(shape.hidden / shape.heads)),
        kv("llama.attention.layer_norm_rms_epsilon", Value::F32(1e-5)),
        kv("llama.vocab_size", u(shape.vocab)),
    ];
    let Some(Value::Array(tokens)) = vocab.get("tokenizer.ggml.tokens") else {
        return Err(RandomError::Vocab("tokenizer.ggml.tokens"));
    };
    if tokens.len() as u64 > shape.vocab {
        return Err(RandomError::VocabSize { found: tokens.len(), vocab: shape.vocab });
    }
    let mut tokens = tokens.clone();
    let mut types = match vocab.get("tokenizer.ggml.token_type") {
        Some(Value::Array(t)) => t.clone(),
        _ => vec![Value::I32(1); tokens.len()],
    };
    for i in tokens.len() as u64..shape.vocab {
        tokens.push(Value::Str(format!("<|kiln_filler_{i}|>")));
        // llama.cpp's LLAMA_TOKEN_TYPE_UNUSED.
        types.push(Value::I32(5));
    }
    m.push(kv("tokenizer.ggml.tokens", Value::Array(tokens)));
    m.push(kv("tokenizer.ggml.token_type", Value::Array(types)));
    for k in TOKENIZER_KEYS {
        if let Some(v) = vocab.get(k) {
            m.push(kv(k, v.clone()));
        }
    }
    Ok(m)
}

/// Writes a GGUF of `vocab`'s tokenizer alone (no tensors): a small file to carry where only
/// the vocabulary is needed ([`write_random`]'s `vocab`).
pub fn write_vocab(out: &mut dyn Write, vocab: &Gguf) -> Result<(), RandomError> {
    let mut m = vec![];
    for k in
        ["tokenizer.ggml.tokens", "tokenizer.ggml.token_type"].into_iter().chain(TOKENIZER_KEYS)
    {
        if let Some(v) = vocab.get(k) {
            m.push((k.to_string(), v.clone()));
        }
    }
    if m.is_empty() {
        return Err(RandomError::Vocab("tokenizer.ggml.tokens"));
    }
    write(out, &m, &[], &mut |_, _| Ok(()))?;
    Ok(())
}

/// xorshift64*: fast and plenty for weights nobody reads for their meaning.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in `[lo, hi)`.
    fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
}

/// One row of `k` values in `ty`, with weights of about `std` each.
fn row(rng: &mut Rng, ty: GgmlType, k: u64, std: f32, out: &mut Vec<u8>) {
    let scale = |rng: &mut Rng, s: f32| f16::from_f32(s * rng.uniform(0.75, 1.25)).to_le_bytes();
    for _ in 0..k / 32 {
        match ty {
            // Quants uniform over -127..=127 have a std of about 73.
            GgmlType::Q8_0 => {
                out.extend(scale(rng, std / 73.0));
                // -128 (0x80) is not a value ggml's quantizer writes: it becomes -127.
                for _ in 0..4 {
                    out.extend(rng.next().to_le_bytes().map(|b| if b == 0x80 { 0x81 } else { b }));
                }
            }
            // Q4_0: (q - 8) * d, q uniform 0..=15: a std of about 4.6.
            GgmlType::Q4_0 => {
                out.extend(scale(rng, std / 4.6));
                out.extend(rng.next().to_le_bytes());
                out.extend(rng.next().to_le_bytes());
            }
            // Q4_1: q * d + m, centred by m = -7.5 d.
            GgmlType::Q4_1 => {
                let d = std / 4.6 * rng.uniform(0.75, 1.25);
                out.extend(f16::from_f32(d).to_le_bytes());
                out.extend(f16::from_f32(-7.5 * d).to_le_bytes());
                out.extend(rng.next().to_le_bytes());
                out.extend(rng.next().to_le_bytes());
            }
            GgmlType::F32 | GgmlType::F16 | GgmlType::Bf16 => {
                unreachable!("checked by write_random")
            }
        }
    }
}

/// Writes a `shape` model with matrices of type `ty` (the embedding and an untied LM head are
/// Q8_0, norms F32 near 1) and the vocabulary of `vocab`, drawn from `seed`.
pub fn write_random(
    out: &mut dyn Write,
    shape: &Shape,
    ty: GgmlType,
    vocab: &Gguf,
    seed: u64,
    progress: &mut dyn FnMut(&TensorSpec),
) -> Result<(), RandomError> {
    match ty {
        GgmlType::Q8_0 | GgmlType::Q4_0 | GgmlType::Q4_1 => {}
        GgmlType::F32 | GgmlType::F16 | GgmlType::Bf16 => return Err(RandomError::Type(ty)),
    }
    let meta = metadata(shape, vocab)?;
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut buf = vec![];
    write(out, &meta, &shape.tensors(ty), &mut |t, w| {
        progress(t);
        let k = t.dims[0];
        let rows: u64 = t.dims[1..].iter().product();
        if t.ty == GgmlType::F32 {
            buf.clear();
            for _ in 0..k {
                buf.extend(rng.uniform(0.8, 1.2).to_le_bytes());
            }
            return w.write_all(&buf);
        }
        // The embedding's rows are looked up, not multiplied: unit-sized values.
        let std = if t.name == "token_embd.weight" { 1.0 } else { 1.0 / (k as f32).sqrt() };
        for _ in 0..rows {
            buf.clear();
            row(&mut rng, t.ty, k, std, &mut buf);
            w.write_all(&buf)?;
        }
        Ok::<(), io::Error>(())
    })?;
    Ok(())
}
