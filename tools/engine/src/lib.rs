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
//! - [`generate`]: the prompt in chunks, then greedy decode, with timings.
#![deny(missing_docs)]

pub mod gguf;
