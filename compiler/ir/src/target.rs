//! The target table (DESIGN.md section 4): every architecture kiln builds for, with what
//! lowering and occupancy need to know. Codegen, the verifier and the runtime all read this table.
//!
//! Register files are per SIMD (AMD) or per SM (NVIDIA); "VGPRs per lane" is the most one wave may
//! address. Occupancy = waves per SIMD, limited by registers, LDS and the hardware wave slots.

use serde::{Deserialize, Serialize};
use std::fmt;

/// GPU vendor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Vendor {
    /// AMD (AMDGPU back end, HSACO code objects).
    Amd,
    /// NVIDIA (NVPTX back end, PTX text).
    Nvidia,
}

/// Architecture family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Family {
    /// GCN 5 and CDNA (gfx9): wave 64.
    Gfx9,
    /// RDNA 2 (gfx10.3).
    Rdna2,
    /// RDNA 3 and 3.5 (gfx11).
    Rdna3,
    /// RDNA 4 (gfx12).
    Rdna4,
    /// NVIDIA (any sm_xx).
    Nvidia,
}

/// Which WMMA / MMA flavour a target has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MatrixFlavor {
    /// None.
    None,
    /// CDNA MFMA.
    Mfma,
    /// RDNA 3 WMMA f16 16x16x16, A and B 16 halves a lane.
    WmmaGfx11,
    /// RDNA 4 WMMA, 8 halves a lane.
    WmmaGfx12,
    /// NVIDIA `mma.sync`.
    MmaSync,
}

/// Cross-lane and synchronization features that change lowering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Features {
    /// DPP quad_perm / row_shl / row_shr / row_mirror (gfx8+).
    pub dpp: bool,
    /// DPP `row_xmask` (gfx10+).
    pub dpp_row_xmask: bool,
    /// `v_permlanex16_b32` (gfx10+).
    pub permlanex16: bool,
    /// `v_permlane64_b32` (gfx11+).
    pub permlane64: bool,
    /// `ds_swizzle_b32`.
    pub ds_swizzle: bool,
    /// `ds_bpermute_b32`.
    pub ds_bpermute: bool,
    /// Split barrier `s_barrier_signal` / `s_barrier_wait` (gfx12).
    pub split_barrier: bool,
    /// Split wait counters (`s_wait_dscnt`, `s_wait_loadcnt`, gfx12).
    pub split_wait_counters: bool,
    /// NVIDIA `shfl.sync`.
    pub shfl_sync: bool,
    /// Matrix instructions.
    pub matrix: MatrixFlavor,
}

/// One architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Target {
    /// `gfx1100`, `sm_90`, ...
    pub name: &'static str,
    /// Vendor.
    pub vendor: Vendor,
    /// Family.
    pub family: Family,
    /// Supported wave sizes; the first is the default.
    pub wave_sizes: &'static [u32],
    /// Most LDS / shared memory one workgroup may allocate statically, in bytes.
    pub lds_per_workgroup: u32,
    /// LDS per CU (AMD; per WGP on RDNA) or shared memory per SM (NVIDIA), in bytes.
    pub lds_per_cu: u32,
    /// Most VGPRs one lane may use (NVIDIA: registers per thread).
    pub max_vgprs: u32,
    /// VGPR file per SIMD in registers per lane at wave 32 (AMD RDNA) or wave 64 (gfx9);
    /// NVIDIA: 32-bit registers per SM.
    pub vgpr_file: u32,
    /// VGPR allocation granule (registers per lane).
    pub vgpr_granule: u32,
    /// Accumulation VGPRs (CDNA), per lane.
    pub agprs: u32,
    /// Addressable SGPRs per wave (0 on NVIDIA).
    pub sgprs: u32,
    /// Hardware wave slots per SIMD (NVIDIA: warps per SM).
    pub max_waves_per_simd: u32,
    /// SIMDs per CU (RDNA: per WGP); 1 on NVIDIA (the SM is the unit).
    pub simds_per_cu: u32,
    /// Features that change lowering.
    pub features: Features,
}

const NO_FEATURES: Features = Features {
    dpp: false,
    dpp_row_xmask: false,
    permlanex16: false,
    permlane64: false,
    ds_swizzle: false,
    ds_bpermute: false,
    split_barrier: false,
    split_wait_counters: false,
    shfl_sync: false,
    matrix: MatrixFlavor::None,
};

const GFX9: Features = Features { dpp: true, ds_swizzle: true, ds_bpermute: true, ..NO_FEATURES };
const GFX10: Features = Features { dpp_row_xmask: true, permlanex16: true, ..GFX9 };
const GFX11: Features = Features { permlane64: true, matrix: MatrixFlavor::WmmaGfx11, ..GFX10 };
const GFX12: Features = Features {
    split_barrier: true,
    split_wait_counters: true,
    matrix: MatrixFlavor::WmmaGfx12,
    ..GFX11
};
const NV: Features = Features { shfl_sync: true, matrix: MatrixFlavor::MmaSync, ..NO_FEATURES };

const fn amd(
    name: &'static str,
    family: Family,
    wave_sizes: &'static [u32],
    vgpr_file: u32,
    vgpr_granule: u32,
    agprs: u32,
    max_waves: u32,
    lds_per_cu: u32,
    simds: u32,
    features: Features,
) -> Target {
    Target {
        name,
        vendor: Vendor::Amd,
        family,
        wave_sizes,
        lds_per_workgroup: 65536,
        lds_per_cu,
        max_vgprs: 256,
        vgpr_file,
        vgpr_granule,
        agprs,
        sgprs: if matches!(family, Family::Gfx9) { 102 } else { 106 },
        max_waves_per_simd: max_waves,
        simds_per_cu: simds,
        features,
    }
}

const fn nv(name: &'static str, smem_per_sm: u32, max_warps: u32) -> Target {
    Target {
        name,
        vendor: Vendor::Nvidia,
        family: Family::Nvidia,
        wave_sizes: &[32],
        lds_per_workgroup: 48 * 1024,
        lds_per_cu: smem_per_sm,
        max_vgprs: 255,
        vgpr_file: 65536,
        vgpr_granule: 8,
        agprs: 0,
        sgprs: 0,
        max_waves_per_simd: max_warps,
        simds_per_cu: 1,
        features: NV,
    }
}

/// Every supported target.
pub static TARGETS: &[Target] = &[
    amd("gfx906", Family::Gfx9, &[64], 256, 4, 0, 10, 65536, 4, GFX9),
    amd(
        "gfx90a",
        Family::Gfx9,
        &[64],
        512,
        8,
        256,
        8,
        65536,
        4,
        Features { matrix: MatrixFlavor::Mfma, ..GFX9 },
    ),
    amd(
        "gfx942",
        Family::Gfx9,
        &[64],
        512,
        8,
        256,
        8,
        65536,
        4,
        Features { matrix: MatrixFlavor::Mfma, ..GFX9 },
    ),
    amd("gfx1030", Family::Rdna2, &[32, 64], 1024, 8, 0, 16, 131072, 4, GFX10),
    amd("gfx1100", Family::Rdna3, &[32, 64], 1536, 24, 0, 16, 131072, 4, GFX11),
    amd("gfx1101", Family::Rdna3, &[32, 64], 1536, 24, 0, 16, 131072, 4, GFX11),
    amd("gfx1151", Family::Rdna3, &[32, 64], 1536, 24, 0, 16, 131072, 4, GFX11),
    amd("gfx1200", Family::Rdna4, &[32, 64], 1536, 24, 0, 16, 131072, 4, GFX12),
    amd("gfx1201", Family::Rdna4, &[32, 64], 1536, 24, 0, 16, 131072, 4, GFX12),
    nv("sm_75", 65536, 32),
    nv("sm_80", 167936, 64),
    nv("sm_86", 102400, 48),
    nv("sm_89", 102400, 48),
    nv("sm_90", 233472, 64),
];

/// An architecture name that is not in the table.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unsupported architecture `{name}`; supported: {}", supported_names().join(", "))]
pub struct UnknownTarget {
    /// The name asked for.
    pub name: String,
}

/// The names of all supported targets.
pub fn supported_names() -> Vec<&'static str> {
    TARGETS.iter().map(|t| t.name).collect()
}

impl Target {
    /// Looks a target up by name.
    pub fn by_name(name: &str) -> Result<&'static Target, UnknownTarget> {
        TARGETS.iter().find(|t| t.name == name).ok_or(UnknownTarget { name: name.to_string() })
    }

    /// The default wave size.
    pub fn default_wave(&self) -> u32 {
        self.wave_sizes[0]
    }

    /// True when the target runs waves of `w` lanes.
    pub fn supports_wave(&self, w: u32) -> bool {
        self.wave_sizes.contains(&w)
    }

    /// The LLVM target triple.
    pub fn triple(&self) -> &'static str {
        match self.vendor {
            Vendor::Amd => "amdgcn-amd-amdhsa",
            Vendor::Nvidia => "nvptx64-nvidia-cuda",
        }
    }

    /// Occupancy in waves per SIMD (NVIDIA: warps per SM) for a kernel using `vgprs` registers per
    /// lane, `lds` bytes per workgroup, with `workgroup_waves` waves per workgroup, and the
    /// resource that limits it.
    pub fn occupancy(&self, vgprs: u32, lds: u32, wave: u32, workgroup_waves: u32) -> Occupancy {
        let slots = self.max_waves_per_simd;
        let granule = self.vgpr_granule.max(1);
        let v = vgprs.max(1).div_ceil(granule) * granule;
        let (by_regs, by_lds);
        match self.vendor {
            Vendor::Amd => {
                // Wave 64 on RDNA uses two wave-32 register slices.
                let file = if self.family != Family::Gfx9 && wave == 64 {
                    self.vgpr_file / 2
                } else {
                    self.vgpr_file
                };
                by_regs = file / v;
                let wgs = self.lds_per_cu.checked_div(lds).unwrap_or(u32::MAX);
                let waves_per_cu = wgs.saturating_mul(workgroup_waves.max(1));
                by_lds = waves_per_cu / self.simds_per_cu;
            }
            Vendor::Nvidia => {
                by_regs = self.vgpr_file / (v * 32);
                let wgs = self.lds_per_cu.checked_div(lds).unwrap_or(u32::MAX);
                by_lds = wgs.saturating_mul(workgroup_waves.max(1));
            }
        }
        let waves = slots.min(by_regs).min(by_lds);
        let limiter = if waves == slots {
            Limiter::WaveSlots
        } else if waves == by_regs {
            Limiter::Vgprs
        } else {
            Limiter::Lds
        };
        Occupancy { waves_per_simd: waves, limiter }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// What limits occupancy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Limiter {
    /// The hardware wave slots.
    WaveSlots,
    /// The register file.
    Vgprs,
    /// LDS.
    Lds,
}

/// Waves per SIMD and what limits it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Occupancy {
    /// Waves per SIMD (NVIDIA: warps per SM).
    pub waves_per_simd: u32,
    /// The limiting resource.
    pub limiter: Limiter,
}

/// The target table as text, for `kiln targets`.
pub fn target_table() -> String {
    let mut s = format!(
        "{:<8} {:<7} {:<6} {:>8} {:>6} {:>7} {:>6}  features\n",
        "arch", "family", "wave", "LDS/WG", "VGPRs", "file", "waves"
    );
    for t in TARGETS {
        let f = &t.features;
        let mut feats = vec![];
        for (on, name) in [
            (f.dpp, "dpp"),
            (f.dpp_row_xmask, "dpp_row_xmask"),
            (f.permlanex16, "permlanex16"),
            (f.permlane64, "permlane64"),
            (f.ds_swizzle, "ds_swizzle"),
            (f.ds_bpermute, "ds_bpermute"),
            (f.split_barrier, "split_barrier"),
            (f.split_wait_counters, "split_wait_counters"),
            (f.shfl_sync, "shfl.sync"),
        ] {
            if on {
                feats.push(name.to_string());
            }
        }
        match f.matrix {
            MatrixFlavor::None => {}
            m => feats.push(format!("{m:?}").to_lowercase()),
        }
        let waves: Vec<String> = t.wave_sizes.iter().map(|w| w.to_string()).collect();
        s += &format!(
            "{:<8} {:<7} {:<6} {:>8} {:>6} {:>7} {:>6}  {}\n",
            t.name,
            format!("{:?}", t.family).to_lowercase(),
            waves.join("/"),
            t.lds_per_workgroup,
            t.max_vgprs,
            t.vgpr_file,
            t.max_waves_per_simd,
            feats.join(" ")
        );
    }
    s
}
