//! kiln-ir's integration tests: the interpreter, the verifier, the printer and parser, serde, the
//! matrix lane maps and the launch checks.
//!
//! One test binary for the crate (each file of `tests/` a module): every integration test binary
//! links the crate's dependencies again, and with LLVM linked statically that was most of a clean
//! `cargo test`'s disk and link time.

mod async_copy;
mod common;
mod interp_util;
mod verify_support;

mod exhaustive_matches;
mod interp_align;
mod interp_examples;
mod interp_memory;
mod interp_mma;
mod interp_numerics;
mod interp_ops;
mod interp_packed;
mod interp_races;
mod interp_sanitizer;
mod interp_speed;
mod launch_checks;
mod ld_matrix;
mod matrix_maps;
mod prefetch;
mod print;
mod serde;
mod test_support;
mod uniformity;
mod verify;
mod verify_types;
