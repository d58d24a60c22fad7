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
            // Q4_0: (q - 8) * d; q uniform over 0..=15 with 0 made 8 (value 0), so the values
            // are -7..=7 and 0 twice: mean 0, a std of about 4.3.
            GgmlType::Q4_0 => {
                out.extend(scale(rng, std / 4.3));
                for _ in 0..2 {
                    out.extend(rng.next().to_le_bytes().map(|b| {
                        let lo = if b & 0x0f == 0 { 0x08 } else { b & 0x0f };
                        let hi = if b & 0xf0 == 0 { 0x80 } else { b & 0xf0 };
                        hi | lo
                    }));
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gguf::write::write;

    fn tiny() -> Shape {
        Shape {
            name: "tiny",
            layers: 2,
            hidden: 128,
            heads: 2,
            kv_heads: 1,
            ffn: 96,
            vocab: 300,
            rope_base: 10_000.0,
            ctx: 256,
            tied: false,
        }
    }

    /// A vocabulary file of `n` tokens (and a merge), as `--vocab-only` would write.
    fn vocab(dir: &std::path::Path, n: usize) -> Gguf {
        let path = dir.join("vocab.gguf");
        let meta = vec![
            ("tokenizer.ggml.model".to_string(), Value::Str("gpt2".into())),
            (
                "tokenizer.ggml.tokens".to_string(),
                Value::Array((0..n).map(|i| Value::Str(format!("t{i}"))).collect()),
            ),
            ("tokenizer.ggml.merges".to_string(), Value::Array(vec![Value::Str("t 1".into())])),
            ("tokenizer.ggml.eos_token_id".to_string(), Value::U32(2)),
        ];
        write(&mut std::fs::File::create(&path).unwrap(), &meta, &[], &mut |_, _| Ok(())).unwrap();
        Gguf::open(&path).unwrap()
    }

    #[test]
    fn a_random_model_has_the_shape_the_vocabulary_and_sane_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let v = vocab(dir.path(), 260);
        for ty in [GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q4_1] {
            let path = dir.path().join("m.gguf");
            let mut f = std::fs::File::create(&path).unwrap();
            let mut seen = 0;
            write_random(&mut f, &tiny(), ty, &v, rand::random(), &mut |_| seen += 1).unwrap();
            drop(f);
            let g = Gguf::open(&path).unwrap();
            assert_eq!(seen, tiny().tensors(ty).len());
            assert_eq!(g.get("llama.block_count"), Some(&Value::U32(2)));
            let Some(Value::Array(tokens)) = g.get("tokenizer.ggml.tokens") else { panic!() };
            assert_eq!(tokens.len(), 300);
            assert_eq!(tokens[259], Value::Str("t259".into()));
            assert_eq!(tokens[260], Value::Str("<|kiln_filler_260|>".into()));
            let Some(Value::Array(types)) = g.get("tokenizer.ggml.token_type") else { panic!() };
            assert_eq!((types[0].clone(), types[299].clone()), (Value::I32(1), Value::I32(5)));
            assert_eq!(g.get("tokenizer.ggml.eos_token_id"), Some(&Value::U32(2)));
            for t in tiny().tensors(ty) {
                let info = g.tensor(&t.name).unwrap();
                let data = g.data(info);
                assert_eq!(data.len() as u64, t.bytes().unwrap(), "{}", t.name);
                let bb = t.ty.block_bytes() as usize;
                match t.ty {
                    GgmlType::F32 => {
                        for c in data.chunks(4) {
                            let x = f32::from_le_bytes(c.try_into().unwrap());
                            assert!((0.8..=1.2).contains(&x), "{}: {x}", t.name);
                        }
                    }
                    GgmlType::Q8_0 | GgmlType::Q4_0 | GgmlType::Q4_1 => {
                        for b in data.chunks(bb) {
                            let d = f16::from_le_bytes([b[0], b[1]]).to_f32();
                            assert!(d.is_finite() && d > 0.0, "{}: scale {d}", t.name);
                            if t.ty == GgmlType::Q8_0 {
                                assert!(!b[2..].contains(&0x80), "{}: a quant of -128", t.name);
                            }
                            assert!(b[2..].iter().any(|&q| q != 0), "{}: a zero block", t.name);
                        }
                    }
                    GgmlType::F16 | GgmlType::Bf16 => panic!("{}: not drawn", t.name),
                }
            }
        }
    }

    #[test]
    fn bad_requests_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let v = vocab(dir.path(), 400);
        let mut out = vec![];
        let e = write_random(&mut out, &tiny(), GgmlType::Q8_0, &v, 1, &mut |_| {}).unwrap_err();
        assert!(matches!(e, RandomError::VocabSize { found: 400, vocab: 300 }), "{e}");
        let e = write_random(&mut out, &tiny(), GgmlType::F16, &v, 1, &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("F16"), "{e}");
        let e = Shape::named("llama-7b").unwrap_err().to_string();
        assert!(e.contains("llama-7b") && e.contains("smollm2-135m, llama3-8b"), "{e}");
        // The real shapes' bytes: the 8B model's 8.5 GB of Q8_0 (with the LM head), SmolLM2's
        // 96.6 MB of Q4_1, as llama.cpp's files of those shapes hold.
        let b8 = Shape::named("llama3-8b").unwrap().weight_bytes(GgmlType::Q8_0);
        assert!((8.52e9..8.54e9).contains(&(b8 as f64)), "{b8}");
        let s = Shape::named("smollm2-135m").unwrap().weight_bytes(GgmlType::Q4_1);
        assert!((96.5e6..96.7e6).contains(&(s as f64)), "{s}");
    }
}
