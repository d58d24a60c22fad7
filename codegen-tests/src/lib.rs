//! kiln's codegen tests: FileCheck-style case files (`cases/*.kt`) run against the LLVM IR and the
//! ISA that kiln-codegen produces for a kernel x arch, plus the kernels they name.

pub mod kernels;
