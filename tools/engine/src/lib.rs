//! kiln-engine: the example engine of issue 16, on kiln's public runtime API only. It runs
//! llama-architecture models (SmolLM2-135M-Instruct first) from their GGUF file: greedy
//! generation through one decode step captured as a [`kiln_runtime::DecodeGraph`] and replayed a
//! token (or a chunk of up to 8 prompt tokens) at a time. `docs/embedding.md` walks through it as
//! the example an engine team would copy.
//!
//! - [`gguf`]: the file, memory-mapped, with refusals that say where;
//! - [`tokenizer`]: GPT-2 byte-level BPE from the GGUF's vocabulary and merges;
//! - [`config`]: the model's shape from the metadata, refusing what the engine cannot run;
//! - [`model`]: weights uploaded and repacked by the library's kernels, the decode graph;
//! - [`generate`]: the prompt in chunks, then greedy decode, with timings;
//! - [`oracle`]: the comparison with llama.cpp's logits (the outside reference).
//!
//! ```no_run
//! use kiln_engine::{model::{Decoder, StepGraph, Weights}, ModelFile};
//! use kiln_runtime::{CpuOptions, Device, Package, Runtime};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let m = ModelFile::open("models/SmolLM2-135M-Instruct.Q8_0.gguf")?;
//! let rt = Runtime::load(&Device::cpu(CpuOptions::default()), &Package::open("dist")?)?;
//! let weights = Weights::upload(&rt, &m.gguf, &m.config)?;
//! let step = StepGraph::build(&rt, &m.config, &weights, 256)?;
//! let mut dec = Decoder::new(&rt, &m.config, &step)?;
//! let g = kiln_engine::generate::generate(&mut dec, &m.tokenizer, "Hello", 4, &mut |s| print!("{s}"))?;
//! println!("\n{:.1} tokens/s", g.decode_rate());
//! # Ok(()) }
//! ```
#![deny(missing_docs)]
// RuntimeError travels inside these enums on cold paths only (see kiln-runtime's note).
#![allow(clippy::result_large_err)]

pub mod config;
pub mod generate;
pub mod gguf;
pub mod model;
pub mod oracle;
pub mod random;
pub mod tokenizer;

use std::path::Path;

/// Why a model file could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The file.
    #[error("{path}: {source}")]
    Gguf {
        /// The file.
        path: String,
        /// The reader's refusal.
        source: gguf::GgufError,
    },
    /// The model's shape or formats.
    #[error("{path}: {source}")]
    Config {
        /// The file.
        path: String,
        /// The refusal.
        source: config::ConfigError,
    },
    /// The tokenizer.
    #[error("{path}: {source}")]
    Tokenizer {
        /// The file.
        path: String,
        /// The refusal.
        source: tokenizer::TokenizerError,
    },
}

/// A model file: the mapped GGUF, its checked configuration and its tokenizer.
pub struct ModelFile {
    /// The file.
    pub gguf: gguf::Gguf,
    /// Its shape.
    pub config: config::Config,
    /// Its tokenizer.
    pub tokenizer: tokenizer::Tokenizer,
}

impl ModelFile {
    /// Opens, maps and checks a GGUF model.
    pub fn open(path: impl AsRef<Path>) -> Result<ModelFile, OpenError> {
        let p = path.as_ref().display().to_string();
        let gguf = gguf::Gguf::open(&path)
            .map_err(|source| OpenError::Gguf { path: p.clone(), source })?;
        let config = config::Config::from_gguf(&gguf)
            .map_err(|source| OpenError::Config { path: p.clone(), source })?;
        let tokenizer = tokenizer::Tokenizer::from_gguf(&gguf)
            .map_err(|source| OpenError::Tokenizer { path: p, source })?;
        Ok(ModelFile { gguf, config, tokenizer })
    }
}
