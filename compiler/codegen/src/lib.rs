//! kiln-codegen: kiln IR -> LLVM 19 (through inkwell) -> code objects.
//!
//! AMD targets get an HSA code object (an ELF: LLVM's object file linked by `ld.lld -shared`),
//! NVIDIA targets PTX text that the CUDA driver compiles at load time. Every code object comes
//! with the resources read back from the object itself (the AMDGPU metadata note, or `ptxas -v`
//! where a ptxas is found), so budgets and occupancy are about what the hardware will run.
//!
//! Layout (Cranelift style): `lower` lowers the IR once for both vendors and holds no vendor
//! branch; what differs by vendor (ids, barriers, fences, atomics, cross-lane exchanges,
//! approximate math, the kernel ABI, object emission) is the `isa::Isa` trait, implemented by
//! `isa/amdgpu.rs` and `isa/nvptx.rs`, each opening with "how the IR maps onto this target"; what
//! differs by arch is asked of kiln-ir's target table (`Target::has`). `resources.rs` reads code
//! objects.
//!
//! LLVM is linked statically; the build finds it through `llvm-config` (set
//! `LLVM_SYS_191_PREFIX=/usr/lib/llvm-19` when `llvm-config` is not on the path).

mod isa;
mod lower;
pub mod package;
mod resources;
mod tools;

use kiln_ir::package::{ObjectFormat, Resources};
use kiln_ir::target::Occupancy;
use kiln_ir::{Kernel, Target};
use serde::{Deserialize, Serialize};

pub use resources::{amdgpu_resources, ptxas_resources};
pub use tools::{find_ld_lld, find_nvdisasm, find_ptxas};

/// How to compile.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    /// LLVM optimization level, 0..=3.
    pub opt_level: u32,
    /// Also return the target assembly (AMD ISA text, or the PTX again).
    pub emit_asm: bool,
    /// Also return the optimized LLVM IR.
    pub emit_llvm: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options { opt_level: 3, emit_asm: false, emit_llvm: false }
    }
}

/// One compiled kernel for one target.
#[derive(Clone, Debug, PartialEq)]
pub struct CompiledObject {
    /// HSACO or PTX.
    pub format: ObjectFormat,
    /// The code object: ELF bytes (HSACO) or PTX text.
    pub bytes: Vec<u8>,
    /// The optimized LLVM IR, when asked for.
    pub llvm_ir: Option<String>,
    /// The target assembly, when asked for.
    pub asm: Option<String>,
    /// Resources read from the code object.
    pub resources: Resources,
    /// The kernel's symbol in the code object.
    pub symbol: String,
    /// The object waits for the grids it depends on at entry (the lowering says whether it
    /// emitted the wait; the package records this, not the target's rule, so a cached object
    /// compiled by a back end without the wait is never launched as if it had it).
    pub grid_dependency: bool,
}

/// What went wrong, with the kernel and architecture it happened for.
#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    /// The kernel asks for something the target cannot do (wave size, op, type).
    #[error("kernel `{kernel}` on {arch}: unsupported: {what}")]
    Unsupported {
        /// Kernel name.
        kernel: String,
        /// Architecture.
        arch: String,
        /// What.
        what: String,
    },
    /// The IR is malformed in a way the verifier should have caught.
    #[error("kernel `{kernel}` on {arch}: invalid IR: {what}")]
    InvalidIr {
        /// Kernel name.
        kernel: String,
        /// Architecture.
        arch: String,
        /// What.
        what: String,
    },
    /// LLVM refused (module verification, passes, code generation).
    #[error("kernel `{kernel}` on {arch}: LLVM {stage} failed: {message}")]
    Llvm {
        /// Kernel name.
        kernel: String,
        /// Architecture.
        arch: String,
        /// Which step.
        stage: &'static str,
        /// LLVM's message.
        message: String,
    },
    /// An external tool (ld.lld, ptxas) is missing or failed.
    #[error("kernel `{kernel}` on {arch}: {tool}: {message}")]
    Tool {
        /// Kernel name.
        kernel: String,
        /// Architecture.
        arch: String,
        /// The tool.
        tool: &'static str,
        /// What happened.
        message: String,
    },
    /// The code object could not be read back.
    #[error("kernel `{kernel}` on {arch}: reading the code object: {message}")]
    Object {
        /// Kernel name.
        kernel: String,
        /// Architecture.
        arch: String,
        /// What is wrong.
        message: String,
    },
}

/// The LLVM version kiln was built against, e.g. `19.1.7`.
pub fn llvm_version() -> String {
    let (major, minor, patch) = inkwell::support::get_llvm_version();
    format!("{major}.{minor}.{patch}")
}

/// Compiles a kernel for a target.
pub fn compile(
    kernel: &Kernel,
    target: &Target,
    opts: &Options,
) -> Result<CompiledObject, CodegenError> {
    lower::compile(kernel, target, opts)
}

/// Occupancy (waves per SIMD, or warps per SM, and what limits it) for the resources of a
/// compiled kernel; `None` when the registers were not measured.
pub fn occupancy(target: &Target, kernel: &Kernel, res: &Resources) -> Option<Occupancy> {
    // On CDNA2 / CDNA3 the AGPRs come from the VGPRs' file, and the count LLVM reports already
    // holds them (`Target::max_vgpr_count`): until 2026-12-07 they were added a second time.
    let vgprs = res.vgprs?;
    Some(target.occupancy(vgprs, res.lds_bytes, kernel.wave_size, kernel.waves_per_workgroup()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// gfx942's VGPR count already holds the AGPRs (one file of 512): 128 of them give 4 waves a
    /// SIMD, 352 one; a count without AGPRs on gfx906 (256 a lane) is read as it is.
    #[test]
    fn cdna_occupancy_counts_the_agprs_once() {
        let mut b = kiln_ir::KernelBuilder::new("k", 64);
        b.grid(std::array::from_fn(|_| kiln_ir::ShapeExpr::constant(1)));
        let k = b.finish();
        let waves = |arch: &str, vgprs: u32, agprs: u32| {
            let t = Target::by_name(arch).unwrap();
            let res = Resources { vgprs: Some(vgprs), agprs: Some(agprs), ..Resources::default() };
            occupancy(t, &k, &res).unwrap().waves_per_simd
        };
        assert_eq!(waves("gfx942", 128, 32), 4);
        assert_eq!(waves("gfx942", 352, 96), 1);
        assert_eq!(waves("gfx942", 256, 0), 2);
        assert_eq!(waves("gfx906", 128, 0), 2);
    }
}
