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

/// Cross-lane, synchronization and numeric features that change lowering.
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
    /// Wave 64 runs as two 32-lane halves (RDNA): a VGPR costs two wave-32 register slots, and
    /// `ds_bpermute` / DPP reach only the lane's own half.
    pub wave64_in_halves: bool,
    /// Split barrier `s_barrier_signal` / `s_barrier_wait` (gfx12).
    pub split_barrier: bool,
    /// Split wait counters (`s_wait_dscnt`, `s_wait_loadcnt`, gfx12).
    pub split_wait_counters: bool,
    /// NVIDIA `shfl.sync`.
    pub shfl_sync: bool,
    /// NVIDIA `redux.sync` for 32-bit integer add / min / max (sm_80+).
    pub redux_sync: bool,
    /// A correctly rounded bf16 fma (`fma.rn.bf16`, sm_80+); elsewhere lowering takes the exact
    /// software path.
    pub bf16_fma: bool,
    /// Matrix instructions.
    pub matrix: MatrixFlavor,
}

/// The flavours of packed dot product (four 8-bit lanes into i32, or two f16 pairs into f32).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DotKind {
    /// Signed x signed 8-bit lanes, i32 accumulator, wrapping.
    I8,
    /// Unsigned x unsigned 8-bit lanes, u32 accumulator, wrapping.
    U8,
    /// Signed (first operand) x unsigned (second) 8-bit lanes, i32 accumulator, wrapping.
    I8U8,
    /// Two f16 pairs into an f32 accumulator.
    F16,
}

impl DotKind {
    /// Every dot flavour.
    pub const ALL: &'static [DotKind] = &[DotKind::I8, DotKind::U8, DotKind::I8U8, DotKind::F16];

    /// A short name (`dot4.i8`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DotKind::I8 => "dot4.i8",
            DotKind::U8 => "dot4.u8",
            DotKind::I8U8 => "dot4.i8u8",
            DotKind::F16 => "dot2.f16",
        }
    }
}

/// One hardware dot-product instruction of a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct DotInstr {
    /// Which flavour.
    pub kind: DotKind,
    /// What lowering emits: the LLVM intrinsic (AMD) or the PTX instruction (NVIDIA, inline PTX:
    /// LLVM 19 has no `dp4a` intrinsic).
    pub lowering: &'static str,
    /// The machine instruction it selects (checked with LLVM 19's `llc`).
    pub isa: &'static str,
}

/// The element types of a matrix multiply-accumulate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MatrixKind {
    /// f16 A and B, f32 accumulator.
    F16F32,
    /// 8-bit integer A and B, i32 accumulator (exact).
    I8I32,
}

impl MatrixKind {
    /// Every matrix flavour.
    pub const ALL: &'static [MatrixKind] = &[MatrixKind::F16F32, MatrixKind::I8I32];

    /// A short name (`f16->f32`, `i8->i32`).
    pub fn name(self) -> &'static str {
        match self {
            MatrixKind::F16F32 => "f16->f32",
            MatrixKind::I8I32 => "i8->i32",
        }
    }
}

/// One matrix multiply-accumulate instruction: D (m x n) = A (m x k) * B (k x n) + C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct MatrixShape {
    /// Element types.
    pub kind: MatrixKind,
    /// Rows of A and D.
    pub m: u32,
    /// Columns of B and D.
    pub n: u32,
    /// Columns of A, rows of B.
    pub k: u32,
    /// What lowering emits: the LLVM intrinsic (AMD) or the PTX instruction (NVIDIA).
    pub lowering: &'static str,
}

impl fmt::Display for MatrixShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}x{} {}", self.m, self.n, self.k, self.kind.name())
    }
}

/// NVIDIA-only facts: the compute capability and the PTX ISA version LLVM is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Ptx {
    /// Compute capability as a number: 75 for sm_75.
    pub sm: u32,
    /// PTX ISA version times ten (78 = PTX 7.8), given to LLVM as `+ptx78`.
    pub isa: u32,
}

/// Something an op or a lowering choice needs from the hardware. The verifier asks
/// [`Target::has`] and names [`Capability::archs`] in its error; lowering asks the same table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Capability {
    /// DPP quad_perm / row shifts.
    Dpp,
    /// DPP `row_xmask`.
    DppRowXmask,
    /// `v_permlanex16_b32`.
    Permlanex16,
    /// `v_permlane64_b32`.
    Permlane64,
    /// `ds_swizzle_b32`.
    DsSwizzle,
    /// `ds_bpermute_b32`.
    DsBpermute,
    /// `shfl.sync`.
    ShflSync,
    /// `redux.sync` on 32-bit integers.
    ReduxSync,
    /// `ldmatrix.sync.aligned.m8n8` (NVIDIA sm_75 and later): 8x8 matrices of 16-bit elements
    /// from LDS into the lanes of the wave.
    LdMatrix,
    /// Split barrier (gfx12).
    SplitBarrier,
    /// Split wait counters (gfx12).
    SplitWaitCounters,
    /// A correctly rounded bf16 fma instruction.
    Bf16Fma,
    /// A hardware dot product of this flavour.
    Dot(DotKind),
    /// A matrix multiply-accumulate of these element types (in at least one shape).
    Matrix(MatrixKind),
}

impl Capability {
    /// Every capability, in the order `kiln targets` lists them.
    pub const ALL: &'static [Capability] = &[
        Capability::Dpp,
        Capability::DppRowXmask,
        Capability::Permlanex16,
        Capability::Permlane64,
        Capability::DsSwizzle,
        Capability::DsBpermute,
        Capability::ShflSync,
        Capability::ReduxSync,
        Capability::LdMatrix,
        Capability::SplitBarrier,
        Capability::SplitWaitCounters,
        Capability::Bf16Fma,
        Capability::Dot(DotKind::I8),
        Capability::Dot(DotKind::U8),
        Capability::Dot(DotKind::I8U8),
        Capability::Dot(DotKind::F16),
        Capability::Matrix(MatrixKind::F16F32),
        Capability::Matrix(MatrixKind::I8I32),
    ];

    /// The name `kiln targets` and error messages use.
    pub fn name(self) -> String {
        match self {
            Capability::Dpp => "dpp".into(),
            Capability::DppRowXmask => "dpp_row_xmask".into(),
            Capability::Permlanex16 => "permlanex16".into(),
            Capability::Permlane64 => "permlane64".into(),
            Capability::DsSwizzle => "ds_swizzle".into(),
            Capability::DsBpermute => "ds_bpermute".into(),
            Capability::ShflSync => "shfl.sync".into(),
            Capability::ReduxSync => "redux.sync".into(),
            Capability::LdMatrix => "ldmatrix".into(),
            Capability::SplitBarrier => "split_barrier".into(),
            Capability::SplitWaitCounters => "split_wait_counters".into(),
            Capability::Bf16Fma => "bf16_fma".into(),
            Capability::Dot(d) => d.name().into(),
            Capability::Matrix(m) => format!("mma.{}", m.name()),
        }
    }

    /// The targets that have it, in table order.
    pub fn targets(self) -> Vec<&'static Target> {
        TARGETS.iter().filter(|t| t.has(self)).collect()
    }

    /// The names of the targets that have it, in table order (for error messages).
    pub fn archs(self) -> Vec<&'static str> {
        self.targets().into_iter().map(|t| t.name).collect()
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
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
    /// Bytes of one line of the last-level cache.
    pub cache_line: u32,
    /// Bytes of the smallest unit the memory system moves (NVIDIA: a 32-byte sector of a line);
    /// what a partly used line costs.
    pub sector: u32,
    /// Features that change lowering.
    pub features: Features,
    /// Hardware dot products (an op without one here is expanded, or refused, by its lowering).
    pub dots: &'static [DotInstr],
    /// Matrix multiply-accumulate shapes; empty without a matrix unit.
    pub matrix_shapes: &'static [MatrixShape],
    /// NVIDIA: compute capability and PTX ISA version; `None` on AMD.
    pub ptx: Option<Ptx>,
    /// AMD: the machine number of its code objects (`EF_AMDGPU_MACH_*`, the low byte of the
    /// ELF `e_flags`), which the package check compares with the manifest's arch; `None` on
    /// NVIDIA.
    pub elf_mach: Option<u32>,
}

const NO_FEATURES: Features = Features {
    dpp: false,
    dpp_row_xmask: false,
    permlanex16: false,
    permlane64: false,
    ds_swizzle: false,
    ds_bpermute: false,
    wave64_in_halves: false,
    split_barrier: false,
    split_wait_counters: false,
    shfl_sync: false,
    redux_sync: false,
    bf16_fma: false,
    matrix: MatrixFlavor::None,
};

const GFX9: Features = Features { dpp: true, ds_swizzle: true, ds_bpermute: true, ..NO_FEATURES };
const CDNA: Features = Features { matrix: MatrixFlavor::Mfma, ..GFX9 };
const GFX10: Features =
    Features { dpp_row_xmask: true, permlanex16: true, wave64_in_halves: true, ..GFX9 };
const GFX11: Features = Features { permlane64: true, matrix: MatrixFlavor::WmmaGfx11, ..GFX10 };
const GFX12: Features = Features {
    split_barrier: true,
    split_wait_counters: true,
    matrix: MatrixFlavor::WmmaGfx12,
    ..GFX11
};
const SM75: Features = Features { shfl_sync: true, matrix: MatrixFlavor::MmaSync, ..NO_FEATURES };
const SM80: Features = Features { redux_sync: true, bf16_fma: true, ..SM75 };

const fn dot(kind: DotKind, lowering: &'static str, isa: &'static str) -> DotInstr {
    DotInstr { kind, lowering, isa }
}

const SDOT4: &str = "llvm.amdgcn.sdot4";
const UDOT4: &str = "llvm.amdgcn.udot4";
const SUDOT4: &str = "llvm.amdgcn.sudot4";
const FDOT2: &str = "llvm.amdgcn.fdot2";

// Each checked with LLVM 19's `llc -mcpu=<arch>`.
const DOTS_GFX906: &[DotInstr] = &[
    dot(DotKind::I8, SDOT4, "v_dot4_i32_i8"),
    dot(DotKind::U8, UDOT4, "v_dot4_u32_u8"),
    dot(DotKind::F16, FDOT2, "v_dot2_f32_f16"),
];
const DOTS_GFX90A: &[DotInstr] = &[
    dot(DotKind::I8, SDOT4, "v_dot4c_i32_i8"),
    dot(DotKind::U8, UDOT4, "v_dot4_u32_u8"),
    dot(DotKind::F16, FDOT2, "v_dot2c_f32_f16"),
];
const DOTS_GFX11: &[DotInstr] = &[
    dot(DotKind::I8, SDOT4, "v_dot4_i32_iu8"),
    dot(DotKind::U8, UDOT4, "v_dot4_u32_u8"),
    dot(DotKind::I8U8, SUDOT4, "v_dot4_i32_iu8"),
    dot(DotKind::F16, FDOT2, "v_dot2acc_f32_f16"),
];
const DOTS_GFX12: &[DotInstr] = &[
    dot(DotKind::I8, SDOT4, "v_dot4_i32_iu8"),
    dot(DotKind::U8, UDOT4, "v_dot4_u32_u8"),
    dot(DotKind::I8U8, SUDOT4, "v_dot4_i32_iu8"),
    dot(DotKind::F16, FDOT2, "v_dot2_f32_f16"),
];
// `dp4a` is sm_61+, so every NVIDIA target here; NVIDIA has no f16 pair dot into f32.
const DOTS_NV: &[DotInstr] = &[
    dot(DotKind::I8, "dp4a.s32.s32", "dp4a.s32.s32"),
    dot(DotKind::U8, "dp4a.u32.u32", "dp4a.u32.u32"),
    dot(DotKind::I8U8, "dp4a.s32.u32", "dp4a.s32.u32"),
];

const fn mma(kind: MatrixKind, m: u32, n: u32, k: u32, lowering: &'static str) -> MatrixShape {
    MatrixShape { kind, m, n, k, lowering }
}

const WMMA_F16: &str = "llvm.amdgcn.wmma.f32.16x16x16.f16";
const WMMA_IU8: &str = "llvm.amdgcn.wmma.i32.16x16x16.iu8";
const MFMA_F16: &str = "llvm.amdgcn.mfma.f32.16x16x16f16";

/// gfx11 (16 halves a lane, lanes 16-31 duplicate 0-15) and gfx12 (8 halves a lane) use the same
/// intrinsics with different operand types; [`MatrixFlavor`] says which layout.
const MMA_WMMA: &[MatrixShape] =
    &[mma(MatrixKind::F16F32, 16, 16, 16, WMMA_F16), mma(MatrixKind::I8I32, 16, 16, 16, WMMA_IU8)];
const MMA_GFX90A: &[MatrixShape] = &[
    mma(MatrixKind::F16F32, 16, 16, 16, MFMA_F16),
    mma(MatrixKind::I8I32, 16, 16, 16, "llvm.amdgcn.mfma.i32.16x16x16i8"),
];
// gfx940+ replaced the i8 16x16x16 MFMA with 16x16x32.
const MMA_GFX942: &[MatrixShape] = &[
    mma(MatrixKind::F16F32, 16, 16, 16, MFMA_F16),
    mma(MatrixKind::I8I32, 16, 16, 32, "llvm.amdgcn.mfma.i32.16x16x32.i8"),
];
const MMA_SM75: &[MatrixShape] = &[
    mma(MatrixKind::F16F32, 16, 8, 8, "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32"),
    mma(MatrixKind::I8I32, 8, 8, 16, "mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32"),
];
const MMA_SM80: &[MatrixShape] = &[
    mma(MatrixKind::F16F32, 16, 8, 16, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
    mma(MatrixKind::I8I32, 16, 8, 32, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"),
];

/// Per-arch AMD facts beyond the register file.
#[derive(Clone, Copy)]
struct AmdExtra {
    features: Features,
    dots: &'static [DotInstr],
    matrix_shapes: &'static [MatrixShape],
    cache_line: u32,
    sector: u32,
}

const EXTRA_GFX906: AmdExtra =
    AmdExtra { features: GFX9, dots: DOTS_GFX906, matrix_shapes: &[], cache_line: 64, sector: 64 };
const EXTRA_GFX90A: AmdExtra = AmdExtra {
    features: CDNA,
    dots: DOTS_GFX90A,
    matrix_shapes: MMA_GFX90A,
    cache_line: 128,
    sector: 64,
};
const EXTRA_GFX942: AmdExtra = AmdExtra { matrix_shapes: MMA_GFX942, ..EXTRA_GFX90A };
const EXTRA_GFX1030: AmdExtra = AmdExtra {
    features: GFX10,
    dots: DOTS_GFX90A,
    matrix_shapes: &[],
    cache_line: 128,
    sector: 128,
};
const EXTRA_GFX11: AmdExtra =
    AmdExtra { features: GFX11, dots: DOTS_GFX11, matrix_shapes: MMA_WMMA, ..EXTRA_GFX1030 };
const EXTRA_GFX12: AmdExtra =
    AmdExtra { features: GFX12, dots: DOTS_GFX12, matrix_shapes: MMA_WMMA, ..EXTRA_GFX1030 };

#[allow(clippy::too_many_arguments)]
const fn amd(
    name: &'static str,
    elf_mach: u32,
    family: Family,
    wave_sizes: &'static [u32],
    vgpr_file: u32,
    vgpr_granule: u32,
    agprs: u32,
    max_waves: u32,
    lds_per_cu: u32,
    simds: u32,
    extra: AmdExtra,
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
        cache_line: extra.cache_line,
        sector: extra.sector,
        features: extra.features,
        dots: extra.dots,
        matrix_shapes: extra.matrix_shapes,
        ptx: None,
        elf_mach: Some(elf_mach),
    }
}

/// PTX ISA 7.8 for every sm: the lowest that covers sm_90, accepted by CUDA 12 and 13 drivers
/// (one version for all keeps one PTX header across the table; sm_75 alone would need only 6.3).
const fn nv(name: &'static str, sm: u32, smem_per_sm: u32, max_warps: u32) -> Target {
    let (features, matrix_shapes) = if sm >= 80 { (SM80, MMA_SM80) } else { (SM75, MMA_SM75) };
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
        cache_line: 128,
        sector: 32,
        features,
        dots: DOTS_NV,
        matrix_shapes,
        ptx: Some(Ptx { sm, isa: 78 }),
        elf_mach: None,
    }
}

/// Every supported target.
pub static TARGETS: &[Target] = &[
    amd("gfx906", 0x2f, Family::Gfx9, &[64], 256, 4, 0, 10, 65536, 4, EXTRA_GFX906),
    amd("gfx90a", 0x3f, Family::Gfx9, &[64], 512, 8, 256, 8, 65536, 4, EXTRA_GFX90A),
    amd("gfx942", 0x4c, Family::Gfx9, &[64], 512, 8, 256, 8, 65536, 4, EXTRA_GFX942),
    amd("gfx1030", 0x36, Family::Rdna2, &[32, 64], 1024, 8, 0, 16, 131072, 4, EXTRA_GFX1030),
    amd("gfx1100", 0x41, Family::Rdna3, &[32, 64], 1536, 24, 0, 16, 131072, 4, EXTRA_GFX11),
    amd("gfx1101", 0x46, Family::Rdna3, &[32, 64], 1536, 24, 0, 16, 131072, 4, EXTRA_GFX11),
    amd("gfx1151", 0x4a, Family::Rdna3, &[32, 64], 1536, 24, 0, 16, 131072, 4, EXTRA_GFX11),
    amd("gfx1200", 0x48, Family::Rdna4, &[32, 64], 1536, 24, 0, 16, 131072, 4, EXTRA_GFX12),
    amd("gfx1201", 0x4e, Family::Rdna4, &[32, 64], 1536, 24, 0, 16, 131072, 4, EXTRA_GFX12),
    nv("sm_75", 75, 65536, 32),
    nv("sm_80", 80, 167936, 64),
    nv("sm_86", 86, 102400, 48),
    nv("sm_89", 89, 102400, 48),
    nv("sm_90", 90, 233472, 64),
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

    /// True when kiln's objects for this target wait, at entry and before any memory access,
    /// for the grids they depend on (`griddepcontrol.wait`, PTX 7.8 on sm_90 and later), and let
    /// the next grid launch at once (`griddepcontrol.launch_dependents`). The lowering emits both
    /// and the package records it per object ([`crate::package::ObjectEntry::grid_dependency`]),
    /// so the runtime may launch such an object with programmatic stream serialization: its
    /// launch overlaps the previous kernel's tail and nothing it reads or writes does.
    pub fn waits_for_grid_dependency(&self) -> bool {
        self.ptx.is_some_and(|p| p.sm >= 90)
    }

    /// True when the target has `c`: the one question the verifier and lowering ask.
    pub fn has(&self, c: Capability) -> bool {
        let f = &self.features;
        match c {
            Capability::Dpp => f.dpp,
            Capability::DppRowXmask => f.dpp_row_xmask,
            Capability::Permlanex16 => f.permlanex16,
            Capability::Permlane64 => f.permlane64,
            Capability::DsSwizzle => f.ds_swizzle,
            Capability::DsBpermute => f.ds_bpermute,
            Capability::ShflSync => f.shfl_sync,
            Capability::ReduxSync => f.redux_sync,
            Capability::LdMatrix => self.sm().is_some_and(|sm| sm >= 75),
            Capability::SplitBarrier => f.split_barrier,
            Capability::SplitWaitCounters => f.split_wait_counters,
            Capability::Bf16Fma => f.bf16_fma,
            Capability::Dot(kind) => self.dot(kind).is_some(),
            Capability::Matrix(kind) => self.matrix_shapes_of(kind).next().is_some(),
        }
    }

    /// Every capability the target has, in [`Capability::ALL`] order.
    pub fn capabilities(&self) -> Vec<Capability> {
        Capability::ALL.iter().copied().filter(|&c| self.has(c)).collect()
    }

    /// The hardware dot product of a flavour, if the target has one.
    pub fn dot(&self, kind: DotKind) -> Option<&'static DotInstr> {
        self.dots.iter().find(|d| d.kind == kind)
    }

    /// The matrix shapes of a flavour (none without a matrix unit).
    pub fn matrix_shapes_of(&self, kind: MatrixKind) -> impl Iterator<Item = &'static MatrixShape> {
        self.matrix_shapes.iter().filter(move |s| s.kind == kind)
    }

    /// The matrix instruction of a flavour and shape `m x n x k`, if the target has it.
    pub fn matrix_shape(
        &self,
        kind: MatrixKind,
        m: u32,
        n: u32,
        k: u32,
    ) -> Option<&'static MatrixShape> {
        self.matrix_shapes_of(kind).find(|s| (s.m, s.n, s.k) == (m, n, k))
    }

    /// NVIDIA compute capability (75 for sm_75); `None` on AMD.
    pub fn sm(&self) -> Option<u32> {
        self.ptx.map(|p| p.sm)
    }

    /// NVIDIA: the most registers a lane of a workgroup of `lanes` lanes may use for the
    /// workgroup to fit one SM's register file (64K over the lanes, down to the allocation
    /// granule, at most [`Target::max_vgprs`]): the cap a kernel of more than 256 lanes needs,
    /// since ptxas left alone may give it more (a workgroup that could not launch).
    pub fn registers_for_workgroup(&self, lanes: u32) -> u32 {
        let granule = self.vgpr_granule.max(1);
        (self.vgpr_file / lanes.max(1) / granule * granule).min(self.max_vgprs)
    }

    /// The most a code object's VGPR count (the amdhsa metadata's `.vgpr_count`, ptxas's
    /// registers) may be. On CDNA2 and CDNA3 (gfx90a, gfx942: the targets with AGPRs) the AGPRs
    /// come from the same 512-register file as the VGPRs, and LLVM's count is their sum (the
    /// VGPRs rounded up to 4, plus the AGPRs, each part at most 256): up to [`Target::vgpr_file`].
    /// Elsewhere it is [`Target::max_vgprs`].
    pub fn max_vgpr_count(&self) -> u32 {
        if self.agprs > 0 {
            self.vgpr_file
        } else {
            self.max_vgprs
        }
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
                // Wave 64 in halves uses two wave-32 register slices.
                let file = if self.features.wave64_in_halves && wave == 64 {
                    self.vgpr_file / 2
                } else {
                    self.vgpr_file
                };
                by_regs = file / v;
                let wgs = self.lds_per_cu.checked_div(lds).unwrap_or(u32::MAX);
                let waves_per_cu = wgs.saturating_mul(workgroup_waves.max(1));
                // The busiest SIMD's waves: one workgroup of one wave a CU is 1, not 0 (until
                // 2026-12-07 this rounded down, and the report said `0 (lds)` of kernels that run).
                by_lds = waves_per_cu.div_ceil(self.simds_per_cu.max(1));
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

/// The target table as text, for `kiln targets`: the resources and features of each arch, then
/// which arch has which dot-product and matrix flavour, with the instruction it lowers to.
pub fn target_table() -> String {
    let mut s = format!(
        "{:<8} {:<7} {:<6} {:>8} {:>6} {:>7} {:>6} {:>7}  features\n",
        "arch", "family", "wave", "LDS/WG", "VGPRs", "file", "waves", "line/sc"
    );
    for t in TARGETS {
        let mut feats: Vec<String> = t
            .capabilities()
            .into_iter()
            .filter(|c| !matches!(c, Capability::Dot(_) | Capability::Matrix(_)))
            .map(|c| c.name())
            .collect();
        if t.features.wave64_in_halves {
            feats.push("wave64_in_halves".into());
        }
        match t.features.matrix {
            MatrixFlavor::None => {}
            m @ (MatrixFlavor::Mfma
            | MatrixFlavor::WmmaGfx11
            | MatrixFlavor::WmmaGfx12
            | MatrixFlavor::MmaSync) => feats.push(format!("{m:?}").to_lowercase()),
        }
        if let Some(p) = t.ptx {
            feats.push(format!("ptx{}.{}", p.isa / 10, p.isa % 10));
        }
        let waves: Vec<String> = t.wave_sizes.iter().map(|w| w.to_string()).collect();
        s += &format!(
            "{:<8} {:<7} {:<6} {:>8} {:>6} {:>7} {:>6} {:>7}  {}\n",
            t.name,
            format!("{:?}", t.family).to_lowercase(),
            waves.join("/"),
            t.lds_per_workgroup,
            t.max_vgprs,
            t.vgpr_file,
            t.max_waves_per_simd,
            format!("{}/{}", t.cache_line, t.sector),
            feats.join(" ")
        );
    }
    s += "\ndot products (flavour: instruction)\n";
    for t in TARGETS {
        let dots: Vec<String> =
            t.dots.iter().map(|d| format!("{}: {}", d.kind.name(), d.isa)).collect();
        s += &format!(
            "{:<8} {}\n",
            t.name,
            if dots.is_empty() { "none".into() } else { dots.join(", ") }
        );
    }
    s += "\nmatrix multiply-accumulate (m x n x k types: lowering)\n";
    for t in TARGETS {
        let shapes: Vec<String> =
            t.matrix_shapes.iter().map(|m| format!("{m}: {}", m.lowering)).collect();
        s += &format!(
            "{:<8} {}\n",
            t.name,
            if shapes.is_empty() { "none".into() } else { shapes.join(", ") }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archs(c: Capability) -> Vec<&'static str> {
        c.archs()
    }

    const AMD: &[&str] = &[
        "gfx906", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1151", "gfx1200",
        "gfx1201",
    ];
    const NV: &[&str] = &["sm_75", "sm_80", "sm_86", "sm_89", "sm_90"];
    const GFX11_12: &[&str] = &["gfx1100", "gfx1101", "gfx1151", "gfx1200", "gfx1201"];

    #[test]
    fn dot_flavours_follow_llvm_19() {
        let all: Vec<&str> = AMD.iter().chain(NV).copied().collect();
        assert_eq!(archs(Capability::Dot(DotKind::I8)), all);
        assert_eq!(archs(Capability::Dot(DotKind::U8)), all);
        let sudot: Vec<&str> = GFX11_12.iter().chain(NV).copied().collect();
        assert_eq!(archs(Capability::Dot(DotKind::I8U8)), sudot);
        assert_eq!(archs(Capability::Dot(DotKind::F16)), AMD);
        for t in TARGETS {
            for d in t.dots {
                match t.vendor {
                    Vendor::Amd => assert!(d.lowering.starts_with("llvm.amdgcn."), "{t}: {d:?}"),
                    Vendor::Nvidia => assert!(d.lowering.starts_with("dp4a."), "{t}: {d:?}"),
                }
            }
        }
        assert_eq!(
            Target::by_name("gfx906").unwrap().dot(DotKind::I8).unwrap().isa,
            "v_dot4_i32_i8"
        );
        assert!(Target::by_name("gfx1030").unwrap().dot(DotKind::I8U8).is_none());
    }

    #[test]
    fn matrix_units_and_shapes() {
        let with: Vec<&str> =
            AMD.iter().chain(NV).copied().filter(|a| !matches!(*a, "gfx906" | "gfx1030")).collect();
        for k in MatrixKind::ALL {
            assert_eq!(archs(Capability::Matrix(*k)), with, "{k:?}");
        }
        let shape = |a: &str, k: MatrixKind| {
            let v: Vec<(u32, u32, u32)> =
                Target::by_name(a).unwrap().matrix_shapes_of(k).map(|s| (s.m, s.n, s.k)).collect();
            v
        };
        assert_eq!(shape("gfx1100", MatrixKind::F16F32), [(16, 16, 16)]);
        assert_eq!(shape("gfx1201", MatrixKind::I8I32), [(16, 16, 16)]);
        assert_eq!(shape("gfx90a", MatrixKind::I8I32), [(16, 16, 16)]);
        assert_eq!(shape("gfx942", MatrixKind::I8I32), [(16, 16, 32)]);
        assert_eq!(shape("gfx942", MatrixKind::F16F32), [(16, 16, 16)]);
        assert_eq!(shape("sm_75", MatrixKind::F16F32), [(16, 8, 8)]);
        assert_eq!(shape("sm_75", MatrixKind::I8I32), [(8, 8, 16)]);
        assert_eq!(shape("sm_90", MatrixKind::F16F32), [(16, 8, 16)]);
        assert_eq!(shape("sm_80", MatrixKind::I8I32), [(16, 8, 32)]);
        assert!(shape("gfx1030", MatrixKind::F16F32).is_empty());
        let sm90 = Target::by_name("sm_90").unwrap();
        assert!(sm90.matrix_shape(MatrixKind::I8I32, 16, 8, 32).is_some());
        assert!(sm90.matrix_shape(MatrixKind::I8I32, 16, 16, 16).is_none());
        // The flavour and the shapes agree: a matrix unit exactly where there are shapes.
        for t in TARGETS {
            assert_eq!(t.features.matrix == MatrixFlavor::None, t.matrix_shapes.is_empty(), "{t}");
        }
    }

    #[test]
    fn nvidia_facts_are_data() {
        for t in TARGETS {
            match t.vendor {
                Vendor::Amd => assert_eq!(t.ptx, None),
                Vendor::Nvidia => {
                    let p = t.ptx.unwrap();
                    assert_eq!(t.name, format!("sm_{}", p.sm));
                    assert_eq!(p.isa, 78, "{t}: objects keep PTX 7.8");
                    assert_eq!(t.has(Capability::ReduxSync), p.sm >= 80);
                    assert_eq!(t.has(Capability::Bf16Fma), p.sm >= 80);
                    assert_eq!(t.has(Capability::LdMatrix), p.sm >= 75);
                    assert_eq!((t.cache_line, t.sector), (128, 32));
                }
            }
        }
    }

    #[test]
    fn capability_lists_are_consistent() {
        for &c in Capability::ALL {
            let names = c.archs();
            for t in TARGETS {
                assert_eq!(names.contains(&t.name), t.has(c), "{c} on {t}");
                assert_eq!(t.capabilities().contains(&c), t.has(c));
            }
        }
        assert_eq!(Capability::ALL.len(), 12 + DotKind::ALL.len() + MatrixKind::ALL.len());
        let nvidia: Vec<&str> =
            TARGETS.iter().filter(|t| t.sm().is_some()).map(|t| t.name).collect();
        assert_eq!(archs(Capability::LdMatrix), nvidia, "every NVIDIA arch, none other");
        assert_eq!(archs(Capability::Permlane64), GFX11_12);
        assert_eq!(archs(Capability::SplitBarrier), ["gfx1200", "gfx1201"]);
        // Wave 64 in halves: RDNA only, and it halves the register file at wave 64.
        let rdna = Target::by_name("gfx1100").unwrap();
        assert!(rdna.features.wave64_in_halves);
        assert!(!Target::by_name("gfx942").unwrap().features.wave64_in_halves);
        let o32 = rdna.occupancy(128, 0, 32, 1).waves_per_simd;
        let o64 = rdna.occupancy(128, 0, 64, 1).waves_per_simd;
        assert_eq!((o32, o64), (10, 5), "1536 / 144 and 768 / 144");
    }

    #[test]
    fn table_text_names_every_flavour() {
        let text = target_table();
        assert!(text.contains("gfx1100  dot4.i8: v_dot4_i32_iu8"), "{text}");
        assert!(text.contains("gfx906   none"), "{text}");
        assert!(text.contains("16x16x32 i8->i32: llvm.amdgcn.mfma.i32.16x16x32.i8"), "{text}");
        assert!(text.contains("ptx7.8"), "{text}");
    }

    /// LDS-bound occupancy on AMD counts the busiest SIMD's waves: a CU that holds one
    /// workgroup of one wave is 1 wave a SIMD, not 0; a workgroup past the CU's LDS is 0.
    #[test]
    fn lds_bound_occupancy_is_never_zero_where_a_workgroup_fits() {
        let t = Target::by_name("gfx942").unwrap();
        let o = t.occupancy(84, 34320, 64, 1);
        assert_eq!((o.waves_per_simd, o.limiter), (1, Limiter::Lds));
        assert_eq!(t.occupancy(84, 16384, 64, 1).waves_per_simd, 1, "4 waves over 4 SIMDs");
        assert_eq!(t.occupancy(84, 16384, 64, 4).waves_per_simd, 4, "16 waves over 4 SIMDs");
        assert_eq!(t.occupancy(84, t.lds_per_cu + 1, 64, 1).waves_per_simd, 0);
    }

    /// A workgroup's lanes fit one SM's 64K registers, in ptxas' steps of 8 (the caps of the
    /// 512-lane Q/K/V cache GEMVs and the 640-lane decode attention), never past a lane's most.
    #[test]
    fn registers_for_a_workgroup_fit_the_sm() {
        let t = Target::by_name("sm_90").unwrap();
        for (lanes, want) in [(512, 128), (640, 96), (1024, 64), (96, t.max_vgprs)] {
            let got = t.registers_for_workgroup(lanes);
            assert_eq!(got, want, "{lanes} lanes");
            assert!(got * lanes <= t.vgpr_file, "{lanes} lanes");
            assert!(got == t.max_vgprs || got.is_multiple_of(t.vgpr_granule), "{lanes} lanes");
        }
    }
}
