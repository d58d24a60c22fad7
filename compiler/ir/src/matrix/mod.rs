//! Matrix multiply-accumulate: the shapes kiln uses, their per-target lane maps, their lowering
//! names and a reference model, as data shared by the interpreter, the lowering and the fragment
//! load/store helpers.
//!
//! A matrix instruction computes `D = A x B + C` over one wave: A is M x K, B is K x N, C and D
//! are M x N. No lane holds a matrix; each holds a *fragment*, a few elements of each operand, and
//! which elements is fixed by the hardware and differs on every target. Writing those maps once,
//! here, means a fragment load, a fragment store, the interpreter and the lowering cannot disagree:
//! each asks [`MmaShape::coord`] (lane, element -> row, column) or [`MmaShape::home`] (the inverse).
//!
//! # The maps and where they come from
//!
//! Element `e` of a lane is the `e`-th element of the fragment in register order, low bits first
//! (register `e / elements_per_register`, bits `(e % elements_per_register) * element_bits` up):
//! that is the order of the vendors' "elements (low to high)" tables and of the LLVM vector
//! operands. Below, `lane / 16 = h`, `lane % 16 = r`; NVIDIA's `groupID = lane >> 2 = g`,
//! `threadID_in_group = lane % 4 = t`.
//!
//! | shape | A\[row\]\[col\] of (lane, e) | B | C / D |
//! |---|---|---|---|
//! | gfx11 WMMA f16, iu8 (wave32) | (r, e), lanes h=1 repeat h=0 | (e, r), likewise | (2e + h, r) |
//! | gfx12 WMMA f16 (wave32) | (r, 8(e/4) + 4h + e%4) | (same k, r) | (8h + e, r) |
//! | gfx12 WMMA iu8 (wave32) | (r, 8h + e) | (8h + e, r) | (8h + e, r) |
//! | MFMA 16x16x16 f16, i8 (wave64) | (r, 4h + e) | (4h + e, r) | (4h + e, r) |
//! | MFMA 16x16x32 i8 (wave64) | (r, 8h + e) | (8h + e, r) | (4h + e, r) |
//! | PTX m16n8k16 f16 | (g + 8((e/2)%2), 2t + e%2 + 8(e/4)) | (2t + e%2 + 8(e/2), g) | (g + 8(e/2), 2t + e%2) |
//! | PTX m16n8k32 s8/u8 | (g + 8((e/4)%2), 4t + e%4 + 16(e/8)) | (4t + e%4 + 16(e/4), g) | as m16n8k16 |
//! | PTX m16n8k8 f16 | (g + 8(e/2), 2t + e%2) | (2t + e, g) | as m16n8k16 |
//! | PTX m8n8k16 s8/u8 | (g, 4t + e) | (4t + e, g) | (g, 2t + e) |
//!
//! Sources, each read for this module (formulas written from them, no code copied):
//! - NVIDIA, *PTX ISA*, section "Warp-level matrix fragments for mma": "Matrix Fragments for
//!   mma.m16n8k16 with floating point type", "... for mma.m16n8k32", "... for mma.m16n8k8" and
//!   "... for mma.m8n8k16" (the `groupID` / `threadID_in_group` formulas and the register tables).
//!   That m16n8k16 and m16n8k32 need sm_80 and the sm_75 shapes assemble was checked with ptxas.
//! - AMD, *AMD Matrix Instruction Calculator* (github ROCm/amd_matrix_instruction_calculator,
//!   `--detail-instruction` and `--matrix-layout` for rdna3 / rdna4 / cdna2 / cdna3), which AMD's
//!   GPUOpen blog "How to accelerate AI applications on RDNA 3 using WMMA" points to for the
//!   register mappings. Every (lane, element) of every AMD shape here was compared with its
//!   `--matrix-layout` output. The blog states the gfx11 wave32 rule that lanes 16-31 hold a
//!   copy of lanes 0-15 for A and B, and gives C/D row `2 * element + lane / 16`.
//! - The LLVM intrinsic names and operand types were checked by selecting each one with LLVM 19
//!   `llc` on gfx1100, gfx1200, gfx90a and gfx942 (`mfma.i32.16x16x16i8` does not select on gfx942
//!   and `mfma.i32.16x16x32.i8` not on gfx90a, as [`MmaShape::archs`] says).
//!
//! Not confirmed by a second source: the gfx12 f16 K order (lanes 0-15 hold k 0-3 and 8-11,
//! lanes 16-31 hold k 4-7 and 12-15) comes from the calculator alone; other code commonly treats
//! lanes 0-15 as k 0-7. The product does not tell the two apart as long as A and B use the same
//! map (k is summed over), so kernels stay correct either way; only a fragment moved from a D
//! register straight into an A register would expose it, and that needs a device test.
//!
//! # gfx11's duplicated half-wave
//!
//! On gfx11 in wave32, A and B are 16 elements a lane and lanes 16-31 must hold the same values
//! as lanes 0-15. The documents state the requirement but not which copy the hardware reads when
//! they differ, so the model does not guess: [`mma_fragments`] refuses differing copies with
//! [`MatrixError::DuplicateMismatch`]. [`MmaShape::home`] names the owner (lane `< 16`, the copy a
//! store writes from) and the duplicate (lane `+ 16`, which a load must fill too).
//!
//! # Arithmetic of the reference
//!
//! Integer shapes are exact: every product and the K-long sum fit in i32 (at most 32 x 255 x 255),
//! and adding C wraps modulo 2^32 (no clamp: the AMD clamp bit is 0, PTX has no `.satfinite`).
//! f16 shapes: each f16 x f16 product is exact (22 significant bits); the reference adds C and
//! then the products in ascending k in f64 and rounds once to f32. The hardware's accumulation
//! order and intermediate precision are not specified by either vendor, so f16 results are to be
//! compared within a bound measured on the GPU, never bit for bit; integer results bit for bit.
//!
//! Wave64 WMMA on gfx11/gfx12 (a different map) is not described here: kiln runs WMMA in wave32.

use crate::target::MatrixFlavor;
use crate::ScalarType;
use half::f16;
use serde::{Deserialize, Serialize};
use std::fmt;

mod reference;
pub use reference::{from_lanes, mma_fragments, mma_reference, to_lanes};

/// One matrix instruction shape: the operation, M x N x K, operand classes and lane maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum MmaShape {
    /// gfx11 `v_wmma_f32_16x16x16_f16`, wave32: A/B 16 halves a lane, lanes 16-31 repeat 0-15.
    Gfx11WmmaF16,
    /// gfx11 `v_wmma_i32_16x16x16_iu8`, wave32: A/B 16 bytes a lane, lanes 16-31 repeat 0-15.
    Gfx11WmmaIu8,
    /// gfx12 `v_wmma_f32_16x16x16_f16`, wave32: A/B 8 halves a lane.
    Gfx12WmmaF16,
    /// gfx12 `v_wmma_i32_16x16x16_iu8`, wave32: A/B 8 bytes a lane.
    Gfx12WmmaIu8,
    /// CDNA `v_mfma_f32_16x16x16f16` (gfx90a) / `v_mfma_f32_16x16x16_f16` (gfx942), wave64.
    MfmaF16,
    /// CDNA2 `v_mfma_i32_16x16x16i8` (gfx90a only), wave64, signed bytes.
    MfmaI8K16,
    /// CDNA3 `v_mfma_i32_16x16x32_i8` (gfx942 only), wave64, signed bytes.
    MfmaI8K32,
    /// NVIDIA `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` (sm_80+).
    NvM16n8k16F16,
    /// NVIDIA `mma.sync.aligned.m16n8k32.row.col.s32.{s8,u8}.{s8,u8}.s32` (sm_80+).
    NvM16n8k32I8,
    /// NVIDIA `mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32` (sm_75+).
    NvM16n8k8F16,
    /// NVIDIA `mma.sync.aligned.m8n8k16.row.col.s32.{s8,u8}.{s8,u8}.s32` (sm_75+).
    NvM8n8k16I8,
}

/// Which operand a fragment holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum FragmentRole {
    /// The M x K multiplicand.
    A,
    /// The K x N multiplicand.
    B,
    /// The M x N accumulator, input C and output D alike.
    C,
}

/// What the multiplicands of a shape are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MmaInputs {
    /// IEEE binary16, accumulated into f32.
    F16,
    /// 8-bit integers, accumulated into i32.
    Int8,
}

/// How a matrix sits in memory for a fragment load or store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FragLayout {
    /// Element `(row, col)` at `base + row * stride + col`.
    RowMajor,
    /// Element `(row, col)` at `base + col * stride + row`.
    ColMajor,
}

/// Where element `e` of a fragment is, as a function of the lane: `row = row[0] + row[1] * t +
/// row[2] * q + row[3] * h` (likewise `col`) with `t = lane & 3`, `q = (lane >> 2) & 3`,
/// `h = lane >> 4`. Every map of this module has this form (NVIDIA's `groupID = q + 4h`,
/// `threadID_in_group = t`; AMD's `lane % 16 = t + 4q`, `lane / 16 = h`), which is what lets a
/// fragment load be a few integer ops a element, derived here from [`MmaShape::coord`] and checked
/// against it for every lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AffineCoord {
    /// `[constant, coefficient of t, of q, of h]` of the row.
    pub row: [u32; 4],
    /// The same for the column.
    pub col: [u32; 4],
}

impl AffineCoord {
    /// `(row, col)` at `lane`.
    pub fn at(&self, lane: u32) -> (u32, u32) {
        let f =
            |c: [u32; 4]| c[0] + c[1] * (lane & 3) + c[2] * ((lane >> 2) & 3) + c[3] * (lane >> 4);
        (f(self.row), f(self.col))
    }
}

/// A lane and an element index within its fragment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LaneElement {
    /// The lane in the wave.
    pub lane: u32,
    /// The element within that lane's fragment.
    pub element: u32,
}

/// Where one matrix element lives in a fragment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ElementHome {
    /// The lane and element that own it: a store writes it from here, the model reads it here.
    pub owner: LaneElement,
    /// gfx11 A/B only: the lane 16 higher that must hold the same value (a load fills both).
    pub duplicate: Option<LaneElement>,
}

/// How a fragment sits in registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FragmentRegisters {
    /// 32-bit registers (VGPRs, PTX `.b32` / `.f32` / `.s32`) a lane uses for it.
    pub count: u32,
    /// Elements packed into each register, element 0 in the low bits.
    pub elements_per_register: u32,
    /// Bits of one element.
    pub element_bits: u32,
    /// AMD: the LLVM type of the whole fragment as the intrinsic takes it (`<16 x half>`).
    /// NVIDIA: the LLVM type of each register operand of the inline-asm `mma` (`i32`, `float`).
    pub llvm_type: &'static str,
    /// NVIDIA: the PTX register type (`.b32`, `.f32`, `.s32`); `None` on AMD.
    pub ptx_type: Option<&'static str>,
}

/// A shape with its multiplicand element types: what one matrix op in the IR carries.
/// Its serde form is checked through [`MmaKind::new`] on the way in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "MmaKindData", into = "MmaKindData")]
pub struct MmaKind {
    shape: MmaShape,
    a: ScalarType,
    b: ScalarType,
}

/// [`MmaKind`]'s fields as serde reads them, before they are checked.
#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(rename = "MmaKind")]
struct MmaKindData {
    shape: MmaShape,
    a: ScalarType,
    b: ScalarType,
}

impl TryFrom<MmaKindData> for MmaKind {
    type Error = MatrixError;
    fn try_from(d: MmaKindData) -> Result<MmaKind, MatrixError> {
        MmaKind::new(d.shape, d.a, d.b)
    }
}

impl From<MmaKind> for MmaKindData {
    fn from(k: MmaKind) -> MmaKindData {
        MmaKindData { shape: k.shape, a: k.a, b: k.b }
    }
}

/// The extra operands an AMD matrix intrinsic takes besides A, B and C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AmdMmaOperands {
    /// `(A, B, C)`.
    Wmma,
    /// `(i1 a_signed, A, i1 b_signed, B, C, i1 clamp)`; kiln passes clamp = false.
    WmmaIu8 {
        /// A's bytes are signed.
        a_signed: bool,
        /// B's bytes are signed.
        b_signed: bool,
    },
    /// `(A, B, C, i32 cbsz, i32 abid, i32 blgp)`; kiln passes 0, 0, 0 (no broadcast).
    Mfma,
}

/// How one matrix op lowers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MmaLowering {
    /// An LLVM AMDGPU intrinsic.
    Amd {
        /// The full (mangled) intrinsic name.
        intrinsic: &'static str,
        /// Its `declare` line, as LLVM 19 takes it.
        declaration: &'static str,
        /// The operands besides A, B and C.
        operands: AmdMmaOperands,
    },
    /// PTX inline assembly `instr {d..}, {a..}, {b..}, {c..};`.
    Ptx {
        /// The instruction text without operands.
        instruction: String,
    },
}

/// A whole matrix, row-major, as element bit patterns (the interpreter's form: the low
/// `elem.bits()` bits hold the value; higher bits are ignored on input and zero on output).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matrix {
    /// Element type.
    pub elem: ScalarType,
    /// Rows.
    pub rows: u32,
    /// Columns.
    pub cols: u32,
    /// `rows * cols` bit patterns, row-major.
    pub bits: Vec<u64>,
}

/// A request the maps or the model cannot serve.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MatrixError {
    /// The element types are not ones the shape multiplies.
    #[error("{shape} multiplies {expected}, found A {a} x B {b}")]
    UnsupportedTypes {
        /// The shape.
        shape: MmaShape,
        /// What it takes, in words.
        expected: &'static str,
        /// A's element type.
        a: ScalarType,
        /// B's element type.
        b: ScalarType,
    },
    /// A lane outside the wave.
    #[error("{shape} {role}: lane {lane} is outside its wave of {wave}")]
    Lane {
        /// The shape.
        shape: MmaShape,
        /// The fragment.
        role: FragmentRole,
        /// The lane asked for.
        lane: u32,
        /// The wave size.
        wave: u32,
    },
    /// An element index past the fragment.
    #[error("{shape} {role}: element {element} is past the {per_lane} a lane holds")]
    Element {
        /// The shape.
        shape: MmaShape,
        /// The fragment.
        role: FragmentRole,
        /// The element asked for.
        element: u32,
        /// Elements a lane holds.
        per_lane: u32,
    },
    /// A matrix coordinate outside the operand.
    #[error("{shape} {role}: ({row}, {col}) is outside the {rows} x {cols} matrix")]
    Coord {
        /// The shape.
        shape: MmaShape,
        /// The operand.
        role: FragmentRole,
        /// Row asked for.
        row: u32,
        /// Column asked for.
        col: u32,
        /// The operand's rows.
        rows: u32,
        /// The operand's columns.
        cols: u32,
    },
    /// Wave fragment data of the wrong length.
    #[error("{shape} {role}: expected {expected} values (lanes x elements), found {found}")]
    FragmentLength {
        /// The shape.
        shape: MmaShape,
        /// The fragment.
        role: FragmentRole,
        /// `wave_size * elements_per_lane`.
        expected: usize,
        /// The length given.
        found: usize,
    },
    /// A whole matrix of the wrong size or element type.
    #[error("{shape} {role}: expected a {rows} x {cols} {elem} matrix, found {found_rows} x {found_cols} {found_elem} with {found_len} values")]
    MatrixMismatch {
        /// The shape.
        shape: MmaShape,
        /// The operand.
        role: FragmentRole,
        /// Rows expected.
        rows: u32,
        /// Columns expected.
        cols: u32,
        /// Element type expected.
        elem: ScalarType,
        /// Rows found.
        found_rows: u32,
        /// Columns found.
        found_cols: u32,
        /// Element type found.
        found_elem: ScalarType,
        /// Values found.
        found_len: usize,
    },
    /// A lane map that is not affine in the lane's bit fields (no shape has one; the check keeps
    /// the fragment loads honest if one is added).
    #[error("{shape} {role}: element {element}'s (row, col) is not affine in (lane & 3, (lane >> 2) & 3, lane >> 4)")]
    NotAffine {
        /// The shape.
        shape: MmaShape,
        /// The fragment.
        role: FragmentRole,
        /// The element.
        element: u32,
    },
    /// gfx11: the two copies of an A/B element differ; which one the hardware reads is not
    /// documented.
    #[error("{shape} {role}: lane {lane} element {element} holds {value:#x} but its duplicate lane {twin} holds {twin_value:#x}; gfx11 needs lanes 16-31 to repeat lanes 0-15")]
    DuplicateMismatch {
        /// The shape.
        shape: MmaShape,
        /// The fragment.
        role: FragmentRole,
        /// The owner lane.
        lane: u32,
        /// The duplicate lane.
        twin: u32,
        /// The element.
        element: u32,
        /// The owner's bits.
        value: u64,
        /// The duplicate's bits.
        twin_value: u64,
    },
}

impl fmt::Display for MmaShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MmaShape::Gfx11WmmaF16 => "gfx11 wmma.f32.16x16x16.f16",
            MmaShape::Gfx11WmmaIu8 => "gfx11 wmma.i32.16x16x16.iu8",
            MmaShape::Gfx12WmmaF16 => "gfx12 wmma.f32.16x16x16.f16",
            MmaShape::Gfx12WmmaIu8 => "gfx12 wmma.i32.16x16x16.iu8",
            MmaShape::MfmaF16 => "mfma.f32.16x16x16.f16",
            MmaShape::MfmaI8K16 => "mfma.i32.16x16x16.i8",
            MmaShape::MfmaI8K32 => "mfma.i32.16x16x32.i8",
            MmaShape::NvM16n8k16F16 => "mma.m16n8k16.f32.f16",
            MmaShape::NvM16n8k32I8 => "mma.m16n8k32.s32.8bit",
            MmaShape::NvM16n8k8F16 => "mma.m16n8k8.f32.f16",
            MmaShape::NvM8n8k16I8 => "mma.m8n8k16.s32.8bit",
        })
    }
}

impl fmt::Display for FragmentRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FragmentRole::A => "A",
            FragmentRole::B => "B",
            FragmentRole::C => "C/D",
        })
    }
}

impl MmaShape {
    /// Every shape.
    pub const ALL: [MmaShape; 11] = [
        MmaShape::Gfx11WmmaF16,
        MmaShape::Gfx11WmmaIu8,
        MmaShape::Gfx12WmmaF16,
        MmaShape::Gfx12WmmaIu8,
        MmaShape::MfmaF16,
        MmaShape::MfmaI8K16,
        MmaShape::MfmaI8K32,
        MmaShape::NvM16n8k16F16,
        MmaShape::NvM16n8k32I8,
        MmaShape::NvM16n8k8F16,
        MmaShape::NvM8n8k16I8,
    ];

    /// The target flavour this shape belongs to.
    pub fn flavor(self) -> MatrixFlavor {
        match self {
            MmaShape::Gfx11WmmaF16 | MmaShape::Gfx11WmmaIu8 => MatrixFlavor::WmmaGfx11,
            MmaShape::Gfx12WmmaF16 | MmaShape::Gfx12WmmaIu8 => MatrixFlavor::WmmaGfx12,
            MmaShape::MfmaF16 | MmaShape::MfmaI8K16 | MmaShape::MfmaI8K32 => MatrixFlavor::Mfma,
            MmaShape::NvM16n8k16F16
            | MmaShape::NvM16n8k32I8
            | MmaShape::NvM16n8k8F16
            | MmaShape::NvM8n8k16I8 => MatrixFlavor::MmaSync,
        }
    }

    /// The kiln targets that have this instruction.
    pub fn archs(self) -> &'static [&'static str] {
        const NV_ALL: &[&str] = &["sm_75", "sm_80", "sm_86", "sm_89", "sm_90"];
        match self {
            MmaShape::Gfx11WmmaF16 | MmaShape::Gfx11WmmaIu8 => &["gfx1100", "gfx1101", "gfx1151"],
            MmaShape::Gfx12WmmaF16 | MmaShape::Gfx12WmmaIu8 => &["gfx1200", "gfx1201"],
            MmaShape::MfmaF16 => &["gfx90a", "gfx942"],
            MmaShape::MfmaI8K16 => &["gfx90a"],
            MmaShape::MfmaI8K32 => &["gfx942"],
            MmaShape::NvM16n8k16F16 | MmaShape::NvM16n8k32I8 => &NV_ALL[1..],
            MmaShape::NvM16n8k8F16 | MmaShape::NvM8n8k16I8 => NV_ALL,
        }
    }

    /// The shapes a target has, in [`MmaShape::ALL`] order (empty on gfx906, gfx1030, unknowns).
    pub fn on_arch(arch: &str) -> Vec<MmaShape> {
        MmaShape::ALL.into_iter().filter(|s| s.archs().contains(&arch)).collect()
    }

    /// The ISA mnemonic on `arch` (AMD), or the PTX opcode with shape (NVIDIA); `None` where the
    /// target lacks the instruction.
    pub fn mnemonic(self, arch: &str) -> Option<&'static str> {
        if !self.archs().contains(&arch) {
            return None;
        }
        Some(match self {
            MmaShape::Gfx11WmmaF16 | MmaShape::Gfx12WmmaF16 => "v_wmma_f32_16x16x16_f16",
            MmaShape::Gfx11WmmaIu8 | MmaShape::Gfx12WmmaIu8 => "v_wmma_i32_16x16x16_iu8",
            MmaShape::MfmaF16 if arch == "gfx90a" => "v_mfma_f32_16x16x16f16",
            MmaShape::MfmaF16 => "v_mfma_f32_16x16x16_f16",
            MmaShape::MfmaI8K16 => "v_mfma_i32_16x16x16i8",
            MmaShape::MfmaI8K32 => "v_mfma_i32_16x16x32_i8",
            MmaShape::NvM16n8k16F16 => "mma.sync.aligned.m16n8k16",
            MmaShape::NvM16n8k32I8 => "mma.sync.aligned.m16n8k32",
            MmaShape::NvM16n8k8F16 => "mma.sync.aligned.m16n8k8",
            MmaShape::NvM8n8k16I8 => "mma.sync.aligned.m8n8k16",
        })
    }

    /// `(M, N, K)`.
    pub fn mnk(self) -> (u32, u32, u32) {
        match self {
            MmaShape::Gfx11WmmaF16
            | MmaShape::Gfx11WmmaIu8
            | MmaShape::Gfx12WmmaF16
            | MmaShape::Gfx12WmmaIu8
            | MmaShape::MfmaF16
            | MmaShape::MfmaI8K16 => (16, 16, 16),
            MmaShape::MfmaI8K32 => (16, 16, 32),
            MmaShape::NvM16n8k16F16 => (16, 8, 16),
            MmaShape::NvM16n8k32I8 => (16, 8, 32),
            MmaShape::NvM16n8k8F16 => (16, 8, 8),
            MmaShape::NvM8n8k16I8 => (8, 8, 16),
        }
    }

    /// The wave size the instruction runs at (and the maps are written for).
    pub fn wave_size(self) -> u32 {
        match self.flavor() {
            MatrixFlavor::Mfma => 64,
            MatrixFlavor::WmmaGfx11 | MatrixFlavor::WmmaGfx12 | MatrixFlavor::MmaSync => 32,
            MatrixFlavor::None => unreachable!("every shape has a matrix flavour"),
        }
    }

    /// What the multiplicands are.
    pub fn inputs(self) -> MmaInputs {
        match self {
            MmaShape::Gfx11WmmaF16
            | MmaShape::Gfx12WmmaF16
            | MmaShape::MfmaF16
            | MmaShape::NvM16n8k16F16
            | MmaShape::NvM16n8k8F16 => MmaInputs::F16,
            MmaShape::Gfx11WmmaIu8
            | MmaShape::Gfx12WmmaIu8
            | MmaShape::MfmaI8K16
            | MmaShape::MfmaI8K32
            | MmaShape::NvM16n8k32I8
            | MmaShape::NvM8n8k16I8 => MmaInputs::Int8,
        }
    }

    /// The accumulator (C and D) element type.
    pub fn accumulator(self) -> ScalarType {
        match self.inputs() {
            MmaInputs::F16 => ScalarType::F32,
            MmaInputs::Int8 => ScalarType::I32,
        }
    }

    /// `(rows, cols)` of an operand: A is M x K, B is K x N, C/D is M x N.
    pub fn dims(self, role: FragmentRole) -> (u32, u32) {
        let (m, n, k) = self.mnk();
        match role {
            FragmentRole::A => (m, k),
            FragmentRole::B => (k, n),
            FragmentRole::C => (m, n),
        }
    }

    /// Whether lanes 16-31 repeat lanes 0-15 for this operand (gfx11 A and B).
    pub fn duplicated(self, role: FragmentRole) -> bool {
        let gfx11 = matches!(self, MmaShape::Gfx11WmmaF16 | MmaShape::Gfx11WmmaIu8);
        match role {
            FragmentRole::A | FragmentRole::B => gfx11,
            FragmentRole::C => false,
        }
    }

    /// Elements each lane holds of an operand.
    pub fn elements_per_lane(self, role: FragmentRole) -> u32 {
        let (rows, cols) = self.dims(role);
        let copies = if self.duplicated(role) { 2 } else { 1 };
        rows * cols * copies / self.wave_size()
    }

    /// How a fragment sits in registers.
    pub fn registers(self, role: FragmentRole) -> FragmentRegisters {
        let per_lane = self.elements_per_lane(role);
        let amd = |llvm_type| {
            let element_bits = match role {
                FragmentRole::A | FragmentRole::B => match self.inputs() {
                    MmaInputs::F16 => 16,
                    MmaInputs::Int8 => 8,
                },
                FragmentRole::C => 32,
            };
            let elements_per_register = 32 / element_bits;
            FragmentRegisters {
                count: per_lane / elements_per_register,
                elements_per_register,
                element_bits,
                llvm_type,
                ptx_type: None,
            }
        };
        let nv = |element_bits: u32, ptx_type, llvm_type| FragmentRegisters {
            count: per_lane * element_bits / 32,
            elements_per_register: 32 / element_bits,
            element_bits,
            llvm_type,
            ptx_type: Some(ptx_type),
        };
        match (self, role) {
            (MmaShape::Gfx11WmmaF16, FragmentRole::A | FragmentRole::B) => amd("<16 x half>"),
            (MmaShape::Gfx11WmmaIu8, FragmentRole::A | FragmentRole::B) => amd("<4 x i32>"),
            (MmaShape::Gfx12WmmaF16, FragmentRole::A | FragmentRole::B) => amd("<8 x half>"),
            (MmaShape::Gfx12WmmaIu8, FragmentRole::A | FragmentRole::B) => amd("<2 x i32>"),
            (MmaShape::Gfx11WmmaF16 | MmaShape::Gfx12WmmaF16, FragmentRole::C) => {
                amd("<8 x float>")
            }
            (MmaShape::Gfx11WmmaIu8 | MmaShape::Gfx12WmmaIu8, FragmentRole::C) => amd("<8 x i32>"),
            (MmaShape::MfmaF16, FragmentRole::A | FragmentRole::B) => amd("<4 x half>"),
            (MmaShape::MfmaF16, FragmentRole::C) => amd("<4 x float>"),
            (MmaShape::MfmaI8K16, FragmentRole::A | FragmentRole::B) => amd("i32"),
            (MmaShape::MfmaI8K32, FragmentRole::A | FragmentRole::B) => amd("i64"),
            (MmaShape::MfmaI8K16 | MmaShape::MfmaI8K32, FragmentRole::C) => amd("<4 x i32>"),
            (
                MmaShape::NvM16n8k16F16 | MmaShape::NvM16n8k8F16,
                FragmentRole::A | FragmentRole::B,
            ) => nv(16, ".b32", "i32"),
            (MmaShape::NvM16n8k32I8 | MmaShape::NvM8n8k16I8, FragmentRole::A | FragmentRole::B) => {
                nv(8, ".b32", "i32")
            }
            (MmaShape::NvM16n8k16F16 | MmaShape::NvM16n8k8F16, FragmentRole::C) => {
                nv(32, ".f32", "float")
            }
            (MmaShape::NvM16n8k32I8 | MmaShape::NvM8n8k16I8, FragmentRole::C) => {
                nv(32, ".s32", "i32")
            }
        }
    }

    fn check_lane(self, role: FragmentRole, lane: u32, element: u32) -> Result<(), MatrixError> {
        let wave = self.wave_size();
        if lane >= wave {
            return Err(MatrixError::Lane { shape: self, role, lane, wave });
        }
        let per_lane = self.elements_per_lane(role);
        if element >= per_lane {
            return Err(MatrixError::Element { shape: self, role, element, per_lane });
        }
        Ok(())
    }

    /// The `(row, col)` of the operand that element `element` of lane `lane` holds.
    pub fn coord(
        self,
        role: FragmentRole,
        lane: u32,
        element: u32,
    ) -> Result<(u32, u32), MatrixError> {
        self.check_lane(role, lane, element)?;
        let e = element;
        let (h, r) = (lane / 16, lane % 16);
        let (g, t) = (lane >> 2, lane % 4);
        // AMD maps as (row of A / column of B, k) for A and B, (row, col) for C.
        let amd = |k: u32| match role {
            FragmentRole::A => (r, k),
            FragmentRole::B => (k, r),
            FragmentRole::C => unreachable!("C handled per shape"),
        };
        Ok(match (self, role) {
            (
                MmaShape::Gfx11WmmaF16 | MmaShape::Gfx11WmmaIu8,
                FragmentRole::A | FragmentRole::B,
            ) => amd(e),
            (MmaShape::Gfx11WmmaF16 | MmaShape::Gfx11WmmaIu8, FragmentRole::C) => (2 * e + h, r),
            (MmaShape::Gfx12WmmaF16, FragmentRole::A | FragmentRole::B) => {
                amd(8 * (e / 4) + 4 * h + e % 4)
            }
            (MmaShape::Gfx12WmmaIu8, FragmentRole::A | FragmentRole::B) => amd(8 * h + e),
            (MmaShape::Gfx12WmmaF16 | MmaShape::Gfx12WmmaIu8, FragmentRole::C) => (8 * h + e, r),
            (MmaShape::MfmaF16 | MmaShape::MfmaI8K16, FragmentRole::A | FragmentRole::B) => {
                amd(4 * h + e)
            }
            (MmaShape::MfmaI8K32, FragmentRole::A | FragmentRole::B) => amd(8 * h + e),
            (MmaShape::MfmaF16 | MmaShape::MfmaI8K16 | MmaShape::MfmaI8K32, FragmentRole::C) => {
                (4 * h + e, r)
            }
            (MmaShape::NvM16n8k16F16, FragmentRole::A) => {
                (g + 8 * ((e / 2) % 2), 2 * t + e % 2 + 8 * (e / 4))
            }
            (MmaShape::NvM16n8k16F16, FragmentRole::B) => (2 * t + e % 2 + 8 * (e / 2), g),
            (MmaShape::NvM16n8k32I8, FragmentRole::A) => {
                (g + 8 * ((e / 4) % 2), 4 * t + e % 4 + 16 * (e / 8))
            }
            (MmaShape::NvM16n8k32I8, FragmentRole::B) => (4 * t + e % 4 + 16 * (e / 4), g),
            (MmaShape::NvM16n8k8F16, FragmentRole::A) => (g + 8 * (e / 2), 2 * t + e % 2),
            (MmaShape::NvM16n8k8F16, FragmentRole::B) => (2 * t + e, g),
            (
                MmaShape::NvM16n8k16F16 | MmaShape::NvM16n8k32I8 | MmaShape::NvM16n8k8F16,
                FragmentRole::C,
            ) => (g + 8 * (e / 2), 2 * t + e % 2),
            (MmaShape::NvM8n8k16I8, FragmentRole::A) => (g, 4 * t + e),
            (MmaShape::NvM8n8k16I8, FragmentRole::B) => (4 * t + e, g),
            (MmaShape::NvM8n8k16I8, FragmentRole::C) => (g, 2 * t + e),
        })
    }

    /// [`MmaShape::coord`] of element `element` as an affine function of the lane, fitted at
    /// lanes 0, 1, 4 and 16 and checked at every lane of the wave.
    pub fn affine(self, role: FragmentRole, element: u32) -> Result<AffineCoord, MatrixError> {
        let (r0, c0) = self.coord(role, 0, element)?;
        let not_affine = MatrixError::NotAffine { shape: self, role, element };
        let mut row = [r0, 0, 0, 0];
        let mut col = [c0, 0, 0, 0];
        for (i, lane) in [1u32, 4, 16].into_iter().enumerate() {
            let (r, c) = self.coord(role, lane, element)?;
            row[i + 1] = r.checked_sub(r0).ok_or(not_affine.clone())?;
            col[i + 1] = c.checked_sub(c0).ok_or(not_affine.clone())?;
        }
        let fit = AffineCoord { row, col };
        for lane in 0..self.wave_size() {
            if fit.at(lane) != self.coord(role, lane, element)? {
                return Err(not_affine);
            }
        }
        Ok(fit)
    }

    /// The inverse of [`MmaShape::coord`]: which lane and element hold `(row, col)`, and on gfx11
    /// A/B the duplicate that must hold the same value.
    pub fn home(self, role: FragmentRole, row: u32, col: u32) -> Result<ElementHome, MatrixError> {
        let (rows, cols) = self.dims(role);
        if row >= rows || col >= cols {
            return Err(MatrixError::Coord { shape: self, role, row, col, rows, cols });
        }
        let at = |lane, element| LaneElement { lane, element };
        // AMD A and B: the lane's low 4 bits are the M (A) or N (B) index, the rest follows k.
        let (mn, k) = match role {
            FragmentRole::A => (row, col),
            FragmentRole::B => (col, row),
            FragmentRole::C => (row, col),
        };
        let (i, j) = (row, col);
        let owner = match (self, role) {
            (
                MmaShape::Gfx11WmmaF16 | MmaShape::Gfx11WmmaIu8,
                FragmentRole::A | FragmentRole::B,
            ) => {
                return Ok(ElementHome { owner: at(mn, k), duplicate: Some(at(mn + 16, k)) });
            }
            (MmaShape::Gfx11WmmaF16 | MmaShape::Gfx11WmmaIu8, FragmentRole::C) => {
                at(16 * (i % 2) + j, i / 2)
            }
            (MmaShape::Gfx12WmmaF16, FragmentRole::A | FragmentRole::B) => {
                at(16 * ((k / 4) % 2) + mn, 4 * (k / 8) + k % 4)
            }
            (MmaShape::Gfx12WmmaIu8, FragmentRole::A | FragmentRole::B) => {
                at(16 * (k / 8) + mn, k % 8)
            }
            (MmaShape::Gfx12WmmaF16 | MmaShape::Gfx12WmmaIu8, FragmentRole::C) => {
                at(16 * (i / 8) + j, i % 8)
            }
            (MmaShape::MfmaF16 | MmaShape::MfmaI8K16, FragmentRole::A | FragmentRole::B) => {
                at(16 * (k / 4) + mn, k % 4)
            }
            (MmaShape::MfmaI8K32, FragmentRole::A | FragmentRole::B) => {
                at(16 * (k / 8) + mn, k % 8)
            }
            (MmaShape::MfmaF16 | MmaShape::MfmaI8K16 | MmaShape::MfmaI8K32, FragmentRole::C) => {
                at(16 * (i / 4) + j, i % 4)
            }
            (MmaShape::NvM16n8k16F16, FragmentRole::A) => {
                at(4 * (i % 8) + (j % 8) / 2, j % 2 + 2 * (i / 8) + 4 * (j / 8))
            }
            (MmaShape::NvM16n8k16F16, FragmentRole::B) => {
                at(4 * j + (i % 8) / 2, i % 2 + 2 * (i / 8))
            }
            (MmaShape::NvM16n8k32I8, FragmentRole::A) => {
                at(4 * (i % 8) + (j % 16) / 4, j % 4 + 4 * (i / 8) + 8 * (j / 16))
            }
            (MmaShape::NvM16n8k32I8, FragmentRole::B) => {
                at(4 * j + (i % 16) / 4, i % 4 + 4 * (i / 16))
            }
            (MmaShape::NvM16n8k8F16, FragmentRole::A) => {
                at(4 * (i % 8) + j / 2, j % 2 + 2 * (i / 8))
            }
            (MmaShape::NvM16n8k8F16, FragmentRole::B) => at(4 * j + i / 2, i % 2),
            (
                MmaShape::NvM16n8k16F16 | MmaShape::NvM16n8k32I8 | MmaShape::NvM16n8k8F16,
                FragmentRole::C,
            ) => at(4 * (i % 8) + j / 2, j % 2 + 2 * (i / 8)),
            (MmaShape::NvM8n8k16I8, FragmentRole::A) => at(4 * i + j / 4, j % 4),
            (MmaShape::NvM8n8k16I8, FragmentRole::B) => at(4 * j + i / 4, i % 4),
            (MmaShape::NvM8n8k16I8, FragmentRole::C) => at(4 * i + j / 2, j % 2),
        };
        Ok(ElementHome { owner, duplicate: None })
    }
}

impl MmaKind {
    /// A shape with its multiplicand types, checked: f16 shapes take `F16 x F16`; WMMA iu8 and
    /// PTX 8-bit shapes take any of `I8` / `U8` for each of A and B; MFMA i8 takes `I8 x I8`.
    pub fn new(shape: MmaShape, a: ScalarType, b: ScalarType) -> Result<MmaKind, MatrixError> {
        let byte = |t| matches!(t, ScalarType::I8 | ScalarType::U8);
        let (ok, expected) = match shape {
            MmaShape::Gfx11WmmaF16
            | MmaShape::Gfx12WmmaF16
            | MmaShape::MfmaF16
            | MmaShape::NvM16n8k16F16
            | MmaShape::NvM16n8k8F16 => (a == ScalarType::F16 && b == ScalarType::F16, "f16 x f16"),
            MmaShape::Gfx11WmmaIu8
            | MmaShape::Gfx12WmmaIu8
            | MmaShape::NvM16n8k32I8
            | MmaShape::NvM8n8k16I8 => (byte(a) && byte(b), "i8 or u8 x i8 or u8"),
            MmaShape::MfmaI8K16 | MmaShape::MfmaI8K32 => {
                (a == ScalarType::I8 && b == ScalarType::I8, "i8 x i8 (MFMA has no unsigned form)")
            }
        };
        if ok {
            Ok(MmaKind { shape, a, b })
        } else {
            Err(MatrixError::UnsupportedTypes { shape, expected, a, b })
        }
    }

    /// Every valid kind: each shape with each multiplicand type pair it takes.
    pub fn all() -> Vec<MmaKind> {
        let types = [ScalarType::F16, ScalarType::I8, ScalarType::U8];
        let mut kinds = Vec::new();
        for shape in MmaShape::ALL {
            for a in types {
                for b in types {
                    if let Ok(kind) = MmaKind::new(shape, a, b) {
                        kinds.push(kind);
                    }
                }
            }
        }
        kinds
    }

    /// The shape.
    pub fn shape(self) -> MmaShape {
        self.shape
    }

    /// A's element type.
    pub fn a(self) -> ScalarType {
        self.a
    }

    /// B's element type.
    pub fn b(self) -> ScalarType {
        self.b
    }

    /// The element type of an operand's matrix.
    pub fn elem(self, role: FragmentRole) -> ScalarType {
        match role {
            FragmentRole::A => self.a,
            FragmentRole::B => self.b,
            FragmentRole::C => self.shape.accumulator(),
        }
    }

    /// The target table's element-type class of this kind (what [`crate::target::Capability::Matrix`]
    /// names).
    pub fn matrix_kind(self) -> crate::target::MatrixKind {
        match self.shape.inputs() {
            MmaInputs::F16 => crate::target::MatrixKind::F16F32,
            MmaInputs::Int8 => crate::target::MatrixKind::I8I32,
        }
    }

    /// How this kind lowers.
    pub fn lowering(self) -> MmaLowering {
        let ptx_int = |t| if t == ScalarType::U8 { "u8" } else { "s8" };
        let amd = |intrinsic, declaration, operands| MmaLowering::Amd {
            intrinsic,
            declaration,
            operands,
        };
        let iu8 = AmdMmaOperands::WmmaIu8 {
            a_signed: self.a == ScalarType::I8,
            b_signed: self.b == ScalarType::I8,
        };
        match self.shape {
            MmaShape::Gfx11WmmaF16 => amd(
                "llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16",
                "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16(<16 x half>, <16 x half>, <8 x float>)",
                AmdMmaOperands::Wmma,
            ),
            MmaShape::Gfx11WmmaIu8 => amd(
                "llvm.amdgcn.wmma.i32.16x16x16.iu8.v8i32.v4i32",
                "declare <8 x i32> @llvm.amdgcn.wmma.i32.16x16x16.iu8.v8i32.v4i32(i1, <4 x i32>, i1, <4 x i32>, <8 x i32>, i1)",
                iu8,
            ),
            MmaShape::Gfx12WmmaF16 => amd(
                "llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v8f16",
                "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v8f16(<8 x half>, <8 x half>, <8 x float>)",
                AmdMmaOperands::Wmma,
            ),
            MmaShape::Gfx12WmmaIu8 => amd(
                "llvm.amdgcn.wmma.i32.16x16x16.iu8.v8i32.v2i32",
                "declare <8 x i32> @llvm.amdgcn.wmma.i32.16x16x16.iu8.v8i32.v2i32(i1, <2 x i32>, i1, <2 x i32>, <8 x i32>, i1)",
                iu8,
            ),
            MmaShape::MfmaF16 => amd(
                "llvm.amdgcn.mfma.f32.16x16x16f16",
                "declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half>, <4 x half>, <4 x float>, i32, i32, i32)",
                AmdMmaOperands::Mfma,
            ),
            MmaShape::MfmaI8K16 => amd(
                "llvm.amdgcn.mfma.i32.16x16x16i8",
                "declare <4 x i32> @llvm.amdgcn.mfma.i32.16x16x16i8(i32, i32, <4 x i32>, i32, i32, i32)",
                AmdMmaOperands::Mfma,
            ),
            MmaShape::MfmaI8K32 => amd(
                "llvm.amdgcn.mfma.i32.16x16x32.i8",
                "declare <4 x i32> @llvm.amdgcn.mfma.i32.16x16x32.i8(i64, i64, <4 x i32>, i32, i32, i32)",
                AmdMmaOperands::Mfma,
            ),
            MmaShape::NvM16n8k16F16 => MmaLowering::Ptx {
                instruction: "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32".to_string(),
            },
            MmaShape::NvM16n8k8F16 => MmaLowering::Ptx {
                instruction: "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32".to_string(),
            },
            MmaShape::NvM16n8k32I8 => MmaLowering::Ptx {
                instruction: format!("mma.sync.aligned.m16n8k32.row.col.s32.{}.{}.s32", ptx_int(self.a), ptx_int(self.b)),
            },
            MmaShape::NvM8n8k16I8 => MmaLowering::Ptx {
                instruction: format!("mma.sync.aligned.m8n8k16.row.col.s32.{}.{}.s32", ptx_int(self.a), ptx_int(self.b)),
            },
        }
    }
}

impl fmt::Display for MmaKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({} x {})", self.shape, self.a, self.b)
    }
}
