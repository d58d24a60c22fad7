//! The AOT package manifest (DESIGN.md section 5), shared by the writer (kiln-codegen) and the
//! reader (kiln-runtime). A package is a directory: `manifest.ron` plus one file per code object
//! and one IR file (RON) per kernel variant and wave size, all named in the manifest.
//!
//! Layout decision: the manifest types and the structural checks of a package ([`check`]) live
//! here rather than in a `kiln-package` crate of their own. The checks need the IR (kernels, the
//! verifier, the target table), so such a crate would depend on kiln-ir and kiln-ir could not
//! re-export it: every user of `kiln_ir::package` in five crates would change at once for no gain
//! in what depends on what. What matters is that the builder (kiln-codegen) and the loader
//! (kiln-runtime) run the same checks without either depending on the other; both already depend
//! on kiln-ir, so [`check::check_package`] is that one place, and a build validates the package it
//! is about to swap in with exactly the checks `Package::open` runs.

pub mod check;

use crate::kernel::{ConstParams, ParamKind};
use crate::ops::ShapeExpr;
use crate::target::Occupancy;
use serde::{Deserialize, Serialize};

/// Version of the manifest format; readers refuse others.
pub const MANIFEST_FORMAT: u32 = 1;

/// The file name of the manifest inside a package directory.
pub const MANIFEST_FILE: &str = "manifest.ron";

/// The whole manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`].
    pub format: u32,
    /// The toolchain that built the package.
    pub toolchain: Toolchain,
    /// Every code object.
    pub objects: Vec<ObjectEntry>,
    /// Routing rules, one per kernel.
    pub routes: Vec<KernelRoutes>,
}

/// Versions of everything that changes the bytes (or the resources recorded for them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Toolchain {
    /// kiln's version.
    pub kiln: String,
    /// LLVM's version.
    pub llvm: String,
    /// `ld.lld --version` (links HSACOs); `None` when none was found.
    #[serde(default)]
    pub ld_lld: Option<String>,
    /// `ptxas --version` (measures NVIDIA resources); `None` when none was found.
    #[serde(default)]
    pub ptxas: Option<String>,
}

/// A resource budget of the build matrix: a build whose objects exceed it fails, and a budget on
/// a resource that was not measured is reported as unchecked (an error under `--strict`).
///
/// Unknown fields are refused, so a misspelled key (`max_vgpr`) fails the parse instead of
/// silently removing the budget.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// Kernel family (or `*`).
    pub kernel: String,
    /// Archs it applies to (empty: all).
    pub archs: Vec<String>,
    /// Most VGPRs per lane (NVIDIA: registers per thread).
    pub max_vgprs: Option<u32>,
    /// Most scratch bytes per lane (0: no scratch allowed).
    pub max_scratch: Option<u32>,
    /// Most spills (VGPR + SGPR).
    pub max_spills: Option<u32>,
    /// Variants it applies to (empty: all), for a budget that differs by tile shape (a GEMV's
    /// tokens a pass).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<String>,
}

impl Budget {
    /// True when the budget applies to `kernel` on `arch` (any variant).
    pub fn applies(&self, kernel: &str, arch: &str) -> bool {
        (self.kernel == "*" || self.kernel == kernel)
            && (self.archs.is_empty() || self.archs.iter().any(|a| a == arch))
    }

    /// True when the budget applies to `variant` of `kernel` on `arch`.
    pub fn applies_to(&self, kernel: &str, variant: &str, arch: &str) -> bool {
        self.applies(kernel, arch)
            && (self.variants.is_empty() || self.variants.iter().any(|v| v == variant))
    }
}

/// Code object format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ObjectFormat {
    /// AMD HSA code object (ELF), from `ld.lld -shared`.
    Hsaco,
    /// PTX text, loaded (and compiled) by the CUDA driver.
    Ptx,
}

/// One parameter of the argument ABI.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AbiParam {
    /// Name.
    pub name: String,
    /// Buffer or scalar, with types.
    pub kind: ParamKind,
    /// Allocated by the runtime, not passed by the caller.
    pub workspace: bool,
    /// Rules the scalar's value must satisfy (`n` a multiple of 32...), checked before launch.
    /// Left out of the manifest when empty, so an ABI without rules keeps its hash.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<crate::ScalarRule>,
}

/// The argument ABI: parameters in order, and a hash over them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Abi {
    /// Parameters in order.
    pub params: Vec<AbiParam>,
    /// blake3 over the parameters' canonical RON form.
    pub hash: String,
}

impl Abi {
    /// Builds the ABI of a kernel.
    pub fn of(k: &crate::Kernel) -> Abi {
        let params: Vec<AbiParam> = k
            .params
            .values()
            .map(|p| AbiParam {
                name: p.name.clone(),
                kind: p.kind.clone(),
                workspace: p.workspace,
                rules: p.rules.clone(),
            })
            .collect();
        let hash = Abi::hash_params(&params);
        Abi { params, hash }
    }

    /// The hash of a parameter list.
    pub fn hash_params(params: &[AbiParam]) -> String {
        let text = ron::ser::to_string(params).expect("params serialize");
        blake3::hash(text.as_bytes()).to_hex().to_string()
    }
}

/// Resources of a code object, read from the object itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Resources {
    /// VGPRs per lane (NVIDIA: registers per thread), when measured.
    pub vgprs: Option<u32>,
    /// SGPRs per wave (AMD).
    pub sgprs: Option<u32>,
    /// AGPRs per lane (CDNA).
    pub agprs: Option<u32>,
    /// Static LDS / shared memory bytes.
    pub lds_bytes: u32,
    /// Scratch (private / local memory) bytes per lane.
    pub scratch_bytes: Option<u32>,
    /// VGPR spills.
    pub vgpr_spills: Option<u32>,
    /// SGPR spills.
    pub sgpr_spills: Option<u32>,
    /// Wave size recorded in the object.
    pub wave_size: u32,
    /// Where the numbers come from (`amdhsa metadata`, `ptxas -v`, `not measured`).
    pub source: String,
}

/// One compiled kernel variant for one architecture.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObjectEntry {
    /// Kernel family name (e.g. `argmax_rows`).
    pub kernel: String,
    /// Variant name (`baseline` for the baseline).
    pub variant: String,
    /// Symbol name inside the code object.
    pub symbol: String,
    /// Tile shape and knobs.
    pub consts: ConstParams,
    /// Architecture name.
    pub arch: String,
    /// Target id with features, e.g. `amdgcn-amd-amdhsa--gfx1100` or `nvptx64-nvidia-cuda--sm_90`.
    pub target_id: String,
    /// Wave size.
    pub wave_size: u32,
    /// Workgroup size.
    pub workgroup_size: [u32; 3],
    /// Launch grid rule.
    pub grid: [ShapeExpr; 3],
    /// Argument ABI.
    pub abi: Abi,
    /// Resources.
    pub resources: Resources,
    /// Occupancy (waves per SIMD) and what limits it, when registers are known.
    pub occupancy: Option<Occupancy>,
    /// Content hash of the kernel IR.
    pub ir_hash: String,
    /// The IR file (RON), relative to the package directory.
    pub ir_file: String,
    /// The code object file, relative to the package directory.
    pub file: String,
    /// Code object format.
    pub format: ObjectFormat,
    /// blake3 of the code object's bytes.
    pub content_hash: String,
    /// The object waits for the grids it depends on before touching memory
    /// ([`crate::Target::waits_for_grid_dependency`]): the runtime may launch it to overlap the
    /// previous kernel. False for packages that predate it.
    #[serde(default)]
    pub grid_dependency: bool,
}

/// Admission rule of one variant.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Admission {
    /// Archs the variant is for (empty: all).
    pub archs: Vec<String>,
    /// Ranges `(scalar parameter, min, max)` inclusive that the call's shape must fall in.
    pub shapes: Vec<(String, u64, u64)>,
}

/// One variant of a kernel, with its admission rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantRoute {
    /// Variant name.
    pub variant: String,
    /// When it may be taken.
    pub admit: Admission,
}

/// Routing for one kernel: tried in order; `baseline` when none is admitted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelRoutes {
    /// Kernel name.
    pub kernel: String,
    /// The baseline variant's name.
    pub baseline: String,
    /// Speed variants, in preference order.
    pub variants: Vec<VariantRoute>,
    /// For a family with a knob space (`kiln tune`): every shape bucket of every arch built,
    /// tuned (the variant that `kiln tune` chose, with its provenance) or left to the family's
    /// defaults. Empty for a family without a knob space (and left out of the manifest).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tuning: Vec<TunedBucket>,
}

impl KernelRoutes {
    /// The tuning record of `variant` on `arch`, when it is a tuned variant.
    pub fn tuned(&self, arch: &str, variant: &str) -> Option<(&TunedBucket, &Tuned)> {
        self.tuning.iter().find_map(|b| match &b.tuned {
            Some(t) if b.arch == arch && t.variant == variant => Some((b, t)),
            Some(_) | None => None,
        })
    }
}

/// One shape bucket of a tunable family on one arch, as built.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TunedBucket {
    /// The arch.
    pub arch: String,
    /// The bucket's name in the family's knob space (`t1_n8192+`).
    pub bucket: String,
    /// The bucket's ranges `(scalar, min, max)`, inclusive.
    pub shapes: Vec<(String, u64, u64)>,
    /// The tuned variant, or `None`: the family's default routes serve the bucket (untuned).
    pub tuned: Option<Tuned>,
}

/// What `kiln tune` chose for a bucket, and the evidence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tuned {
    /// The variant built from the knobs (`tuned_<bucket>`).
    pub variant: String,
    /// The knob values, in the knob space's order.
    pub knobs: Vec<(String, u32)>,
    /// The winner's time (graph replay, median), us.
    pub time_us: f64,
    /// The variant the default routes take for the bucket's bench shape, and its time.
    pub default: (String, f64),
    /// The second fastest candidate (its knobs as a name) and its time, when there was one.
    pub runner_up: Option<(String, f64)>,
    /// Where and when it was measured.
    pub provenance: Provenance,
}

/// Where a tuning measurement was made.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// Device name (`NVIDIA H200`).
    pub device: String,
    /// Driver version.
    pub driver: String,
    /// Clocks as the driver reported them at the time (`sm 1980 MHz, mem 3201 MHz`), or
    /// `unknown`.
    pub clocks: String,
    /// UTC date and time of the measurement.
    pub date: String,
    /// kiln's version.
    pub kiln: String,
    /// The LLVM version the candidates were built with.
    pub llvm: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelled_budget_key_is_refused() {
        let good =
            "(kernel: \"*\", archs: [], max_vgprs: Some(64), max_scratch: None, max_spills: None)";
        let b: Budget = ron::from_str(good).unwrap();
        assert_eq!(b.max_vgprs, Some(64));
        let bad = good.replace("max_vgprs", "max_vgpr");
        let e = ron::from_str::<Budget>(&bad).unwrap_err().to_string();
        assert!(e.contains("max_vgpr"), "{e}");
    }

    #[test]
    fn budgets_apply_by_kernel_and_arch() {
        let b =
            Budget { kernel: "swiglu".into(), archs: vec!["sm_90".into()], ..Budget::default() };
        assert!(b.applies("swiglu", "sm_90"));
        assert!(!b.applies("swiglu", "sm_80") && !b.applies("copy", "sm_90"));
        let all = Budget { kernel: "*".into(), ..Budget::default() };
        assert!(all.applies("copy", "gfx906"));
        let p3 = Budget { variants: vec!["p3".into()], ..b.clone() };
        assert!(p3.applies_to("swiglu", "p3", "sm_90") && !p3.applies_to("swiglu", "p4", "sm_90"));
        assert!(b.applies_to("swiglu", "p4", "sm_90"));
    }
}
