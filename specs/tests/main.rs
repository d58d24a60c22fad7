//! kiln-specs' integration tests: every library family against a plain-Rust reference on the
//! interpreter, at wave 32 and wave 64, plus the build matrix and the library's verification.
//!
//! One test binary for the crate (each file of `tests/` a module): every integration test binary
//! links the crate's dependencies again, and with LLVM linked statically that was most of a clean
//! `cargo test`'s disk and link time.

mod common;

mod argmax;
mod attention;
mod attention_i8;
mod copy;
mod get_rows;
mod matrix;
mod prefill;
mod quantize;
mod rmsnorm;
mod swiglu;
mod top_prob;
mod verify;
