//! kiln's codegen tests: FileCheck-style case files (`cases/*.kt`) run against the LLVM IR and the
//! ISA that kiln-codegen produces for a kernel x arch, plus the kernels they name.
//!
//! `cargo test -p kiln-codegen-tests` runs every case; `KILN_BLESS=1` rewrites blessable cases;
//! `cargo run -p kiln-codegen-tests --example dump -- KERNEL VARIANT ARCH [WAVE] [asm|llvm]`
//! prints what a case would check.

pub mod case;
pub mod filecheck;
pub mod kernels;
