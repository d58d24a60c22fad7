//! Codegen tests: FileCheck-style cases on LLVM IR and ISA, the matrix-unit tile on every arch, and
//! the gates on every library object.
//!
//! One test binary for the crate (each file of `tests/` a module): every integration test binary
//! links the crate's dependencies again, and with LLVM linked statically that was most of a clean
//! `cargo test`'s disk and link time.

mod early;
mod filecheck;
mod mma;
mod objects;
