//! kiln-ir: the kernel IR, its builder, verifier, text printer, serde form, target table and the
//! lane-exact reference interpreter. No LLVM here: the runtime and the device binaries depend on it.
//!
//! # Vocabulary
//!
//! One set of names everywhere, mapped to each vendor's:
//!
//! | kiln            | CUDA / PTX                 | HIP / AMDGPU                        |
//! |-----------------|----------------------------|-------------------------------------|
//! | lane            | thread in a warp (`%laneid`) | lane / work-item in a wavefront   |
//! | wave            | warp (32)                  | wavefront (32 or 64)                |
//! | workgroup       | thread block (CTA)         | workgroup                           |
//! | local id        | `threadIdx`                | `workitem.id` / `threadIdx`         |
//! | workgroup id    | `blockIdx`                 | `workgroup.id` / `blockIdx`         |
//! | grid            | grid (in blocks)           | grid / NDRange (in workgroups)      |
//! | LDS             | shared memory (`.shared`)  | LDS (`addrspace(3)`)                |
//! | global          | global memory (`.global`)  | global (`addrspace(1)`)             |
//! | private         | local memory (`.local`)    | private / scratch (`addrspace(5)`)  |
//! | `barrier(Lds)`  | `bar.sync 0`               | LDS-only fence + `s_barrier`        |
//! | shuffle xor     | `shfl.sync.bfly`           | DPP / permlane / `ds_swizzle` / `ds_bpermute` |
//!
//! Matrix ops: a fragment type ([`Fragment`]) holds one lane's share of an operand in the
//! order of [`matrix`]'s lane maps; the builder's fragment loads and stores expand into per-lane
//! scalar memory ops computed from those maps, and `mma` is one op (WMMA / MFMA / `mma.sync`).
#![deny(missing_docs)]

mod builder;
mod entities;
#[cfg(feature = "testing")]
pub mod examples;
pub mod interp;
mod kernel;
pub mod matrix;
mod ops;
pub mod package;
pub mod print;
pub mod target;
mod types;
pub mod uniformity;
pub mod verifier;

pub use builder::KernelBuilder;
pub use cranelift_entity::EntityRef;
pub use entities::{Block, Inst, LdsSlot, Param, PrivateSlot, Value};
pub use kernel::*;
pub use ops::*;
pub use target::{Target, TARGETS};
pub use types::{Fragment, ScalarType, Type, TypeClass};
pub use verifier::{verify, VerifyError, VerifyErrors};
