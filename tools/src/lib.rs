//! The `kiln` command line as a library: one module a command ([`cmd`]), the .npy reader and
//! writer ([`npy`]), and the measurements of `kiln bench` with their bench-only kernels
//! ([`measure`]). `main.rs` only parses the arguments and dispatches; the fuzz tests and the
//! `launch_cost` example call the same code.

pub mod cmd;
pub mod measure;
pub mod npy;
pub mod report;
