//! Test support: a tiny llama GGUF written by hand (random Q8_0 matrices, F32 norms), the
//! package and model locations `build.rs` found.
#![allow(dead_code)]

use rand::{Rng, SeedableRng};

/// Metadata value: (key, GGUF type id, bytes).
pub type Kv = (String, u32, Vec<u8>);

pub fn kv_u32(k: &str, v: u32) -> Kv {
    (k.into(), 4, v.to_le_bytes().to_vec())
}
pub fn kv_f32(k: &str, v: f32) -> Kv {
    (k.into(), 6, v.to_le_bytes().to_vec())
}
pub fn kv_str(k: &str, v: &str) -> Kv {
    let mut b = (v.len() as u64).to_le_bytes().to_vec();
    b.extend(v.as_bytes());
    (k.into(), 8, b)
}
pub fn kv_strs(k: &str, v: &[String]) -> Kv {
    let mut b = 8u32.to_le_bytes().to_vec();
    b.extend((v.len() as u64).to_le_bytes());
    for s in v {
        b.extend((s.len() as u64).to_le_bytes());
        b.extend(s.as_bytes());
    }
    (k.into(), 9, b)
}

/// A tensor: name, dims (innermost first), ggml type id, data.
pub struct T {
    pub name: String,
    pub dims: Vec<u64>,
    pub ty: u32,
    pub data: Vec<u8>,
}

/// ggml's Q8_0 of `x` (rows of a multiple of 32).
pub fn q8_0(x: &[f32]) -> Vec<u8> {
    let mut out = vec![];
    for blk in x.chunks(32) {
        let amax = blk.iter().fold(0f32, |a, v| a.max(v.abs()));
        let d = amax / 127.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        out.extend(half::f16::from_f32(d).to_le_bytes());
        out.extend(blk.iter().map(|v| (v * id).round() as i8 as u8));
    }
    out
}

pub fn write_gguf(kvs: &[Kv], tensors: &[T]) -> Vec<u8> {
    let mut v = b"GGUF".to_vec();
    v.extend(3u32.to_le_bytes());
    v.extend((tensors.len() as u64).to_le_bytes());
    v.extend((kvs.len() as u64).to_le_bytes());
    let s = |v: &mut Vec<u8>, s: &str| {
        v.extend((s.len() as u64).to_le_bytes());
        v.extend(s.as_bytes());
    };
    for (k, ty, val) in kvs {
        s(&mut v, k);
        v.extend(ty.to_le_bytes());
        v.extend(val);
    }
    let mut off = 0u64;
    let mut offs = vec![];
    for t in tensors {
        s(&mut v, &t.name);
        v.extend((t.dims.len() as u32).to_le_bytes());
        for d in &t.dims {
            v.extend(d.to_le_bytes());
        }
        v.extend(t.ty.to_le_bytes());
        v.extend(off.to_le_bytes());
        offs.push(off);
        off = (off + t.data.len() as u64).div_ceil(32) * 32;
    }
    let start = v.len().div_ceil(32) * 32;
    v.resize(start, 0);
    for (t, o) in tensors.iter().zip(offs) {
        v.resize(start + o as usize, 0);
        v.extend(&t.data);
    }
    v
}

/// The shape of a tiny model.
pub struct Tiny {
    pub hidden: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub ffn: usize,
    pub vocab: usize,
    pub layers: usize,
}

impl Tiny {
    /// Two layers, head dim 64, 2 query heads over 1 KV head, vocab 96.
    pub fn small() -> Tiny {
        Tiny { hidden: 128, heads: 2, kv_heads: 1, ffn: 96, vocab: 96, layers: 2 }
    }
}

/// The metadata and tensors of a tiny llama with random Q8_0 weights (single characters as the
/// vocabulary, at most 106; no merges).
pub fn tiny_llama(m: &Tiny, seed: u64) -> (Vec<Kv>, Vec<T>) {
    tiny_llama_with(m, seed, false)
}

/// [`tiny_llama`], with its own Q8_0 `output.weight` when `untied`.
pub fn tiny_llama_with(m: &Tiny, seed: u64, untied: bool) -> (Vec<Kv>, Vec<T>) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut mat = |name: &str, k: usize, n: usize, scale: f32| {
        let x: Vec<f32> = (0..k * n).map(|_| rng.gen_range(-scale..scale)).collect();
        T { name: name.into(), dims: vec![k as u64, n as u64], ty: 8, data: q8_0(&x) }
    };
    let h = m.hidden;
    let kv = m.kv_heads * (h / m.heads);
    let mut ts = vec![mat("token_embd.weight", h, m.vocab, 1.0)];
    if untied {
        ts.push(mat("output.weight", h, m.vocab, 1.0));
    }
    for i in 0..m.layers {
        let s = 1.0 / (h as f32).sqrt();
        ts.push(mat(&format!("blk.{i}.attn_q.weight"), h, h, 2.0 * s));
        ts.push(mat(&format!("blk.{i}.attn_k.weight"), h, kv, 2.0 * s));
        ts.push(mat(&format!("blk.{i}.attn_v.weight"), h, kv, s));
        ts.push(mat(&format!("blk.{i}.attn_output.weight"), h, h, s));
        ts.push(mat(&format!("blk.{i}.ffn_gate.weight"), h, m.ffn, s));
        ts.push(mat(&format!("blk.{i}.ffn_up.weight"), h, m.ffn, s));
        ts.push(mat(&format!("blk.{i}.ffn_down.weight"), m.ffn, h, s));
    }
    let ones: Vec<u8> = (0..h).flat_map(|i| (1.0f32 + i as f32 / 256.0).to_le_bytes()).collect();
    for i in 0..m.layers {
        for n in ["attn_norm", "ffn_norm"] {
            let name = format!("blk.{i}.{n}.weight");
            ts.push(T { name, dims: vec![h as u64], ty: 0, data: ones.clone() });
        }
    }
    ts.push(T { name: "output_norm.weight".into(), dims: vec![h as u64], ty: 0, data: ones });
    // Printable ASCII, then Latin-1 from 0xA1: characters that stand for themselves in GPT-2's
    // byte table.
    let tokens: Vec<String> = (33u32..127)
        .chain(0xA1..0xAD)
        .take(m.vocab)
        .map(|c| char::from_u32(c).unwrap().to_string())
        .collect();
    let kvs = vec![
        kv_str("general.architecture", "llama"),
        kv_u32("llama.block_count", m.layers as u32),
        kv_u32("llama.context_length", 256),
        kv_u32("llama.embedding_length", h as u32),
        kv_u32("llama.feed_forward_length", m.ffn as u32),
        kv_u32("llama.attention.head_count", m.heads as u32),
        kv_u32("llama.attention.head_count_kv", m.kv_heads as u32),
        kv_f32("llama.rope.freq_base", 10000.0),
        kv_f32("llama.attention.layer_norm_rms_epsilon", 1e-5),
        kv_str("tokenizer.ggml.model", "gpt2"),
        kv_str("tokenizer.ggml.pre", "smollm"),
        kv_strs("tokenizer.ggml.tokens", &tokens),
        kv_strs("tokenizer.ggml.merges", &[]),
    ];
    (kvs, ts)
}

/// The package directory `build.rs` found (`$KILN_ENGINE_PACKAGE` or the workspace's `dist/`).
pub fn package_dir() -> &'static str {
    env!("KILN_ENGINE_PACKAGE_DIR")
}

/// The model directory `build.rs` looked in.
pub fn models_dir() -> &'static str {
    env!("KILN_MODELS_DIR")
}
