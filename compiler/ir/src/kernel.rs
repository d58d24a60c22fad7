//! The kernel: its interface (parameters, LDS, tile shape, launch geometry) and its body.
//!
//! What exists (values, instructions, blocks in `PrimaryMap`s) is kept apart from its order
//! (each block's instruction list), as in Cranelift.

use crate::entities::{Block, Inst, LdsSlot, Param, PrivateSlot, Value};
use crate::ops::{Op, ShapeExpr};
use crate::types::{ScalarType, Type};
use cranelift_entity::PrimaryMap;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use std::collections::BTreeMap;

/// How a kernel uses a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Access {
    /// Only read.
    Read,
    /// Only written.
    Write,
    /// Read and written.
    ReadWrite,
}

impl Access {
    /// True when the kernel may read.
    pub fn reads(self) -> bool {
        matches!(self, Access::Read | Access::ReadWrite)
    }
    /// True when the kernel may write.
    pub fn writes(self) -> bool {
        matches!(self, Access::Write | Access::ReadWrite)
    }
    /// `read`, `write` or `read_write`.
    pub fn name(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
            Access::ReadWrite => "read_write",
        }
    }
}

/// What a parameter is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ParamKind {
    /// A pointer to global memory holding elements of `elem`.
    Buffer {
        /// Element type.
        elem: ScalarType,
        /// How the kernel uses it.
        access: Access,
        /// Minimum length in elements, from the scalar parameters (checked before launch).
        len: Option<ShapeExpr>,
    },
    /// A scalar passed by value.
    Scalar(ScalarType),
}

/// A parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamData {
    /// Its name (the argument's name at launch).
    pub name: String,
    /// What it is.
    pub kind: ParamKind,
    /// A workspace buffer: not passed by the caller; the runtime allocates it once per loaded
    /// kernel, zero-filled, and the kernel leaves it zeroed again (e.g. a completion counter).
    #[serde(default)]
    pub workspace: bool,
    /// Rules an integer scalar's value must satisfy at launch (e.g. a multiple of the block size
    /// the kernel works in), checked by [`Kernel::check_scalars`] before any launch. Left out of
    /// the serialized form when empty, so kernels without rules keep their RON and content hash.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<ScalarRule>,
}

/// A rule on an integer scalar parameter's value, part of the kernel's ABI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScalarRule {
    /// A multiple of this (at least 1).
    MultipleOf(u64),
    /// At least this.
    AtLeast(u64),
    /// At most this.
    AtMost(u64),
}

impl ScalarRule {
    /// True when `value` satisfies the rule.
    pub fn holds(self, value: i128) -> bool {
        match self {
            ScalarRule::MultipleOf(m) => m != 0 && value.rem_euclid(m as i128) == 0,
            ScalarRule::AtLeast(n) => value >= n as i128,
            ScalarRule::AtMost(n) => value <= n as i128,
        }
    }

    /// The text form: `multiple_of=32`, `at_least=1`, `at_most=4096`.
    pub fn text(self) -> String {
        match self {
            ScalarRule::MultipleOf(m) => format!("multiple_of={m}"),
            ScalarRule::AtLeast(n) => format!("at_least={n}"),
            ScalarRule::AtMost(n) => format!("at_most={n}"),
        }
    }
}

impl std::fmt::Display for ScalarRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScalarRule::MultipleOf(m) => write!(f, "a multiple of {m}"),
            ScalarRule::AtLeast(n) => write!(f, "at least {n}"),
            ScalarRule::AtMost(n) => write!(f, "at most {n}"),
        }
    }
}

/// A scalar argument that breaks a rule of its parameter.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("kernel `{kernel}`: scalar `{param}` is {value}: expected {rule}")]
pub struct ScalarRuleError {
    /// The kernel's name.
    pub kernel: String,
    /// The parameter's name.
    pub param: String,
    /// The value given.
    pub value: i128,
    /// The rule it breaks.
    pub rule: ScalarRule,
}

/// A static LDS allocation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LdsData {
    /// Its name.
    pub name: String,
    /// Element type.
    pub elem: ScalarType,
    /// Number of elements.
    pub len: u32,
}

impl LdsData {
    /// Size in bytes.
    pub fn bytes(&self) -> u32 {
        self.elem.bytes() * self.len
    }
}

/// A per-lane array.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrivateData {
    /// Its name.
    pub name: String,
    /// Element type.
    pub elem: ScalarType,
    /// Number of elements.
    pub len: u32,
}

/// Where a value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ValueDef {
    /// Result `n` of an instruction.
    Result(Inst, u32),
    /// Parameter `n` of a block.
    Param(Block, u32),
}

/// A value's type and definition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ValueData {
    /// Its type.
    pub ty: Type,
    /// Where it is defined.
    pub def: ValueDef,
}

/// An instruction: an op and its results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstData {
    /// The op.
    pub op: Op,
    /// Its results.
    pub results: SmallVec<[Value; 2]>,
}

/// A block: parameters and the instructions in order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BlockData {
    /// Block parameters (a `for` body's index and carried values).
    pub params: SmallVec<[Value; 4]>,
    /// The instructions, in order.
    pub insts: Vec<Inst>,
}

/// A compile-time parameter: part of the tile shape or another knob.
pub type ConstParams = BTreeMap<String, i64>;

/// A kernel. Build one with [`crate::KernelBuilder`]; check it with [`crate::verify`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Kernel {
    /// The kernel's symbol name.
    pub name: String,
    /// Wave size: 32 or 64.
    pub wave_size: u32,
    /// Workgroup size (static).
    pub workgroup_size: [u32; 3],
    /// Compile-time parameters (tile shape and knobs).
    pub consts: ConstParams,
    /// Launch grid, in workgroups, from the scalar parameters.
    pub grid: [ShapeExpr; 3],
    /// Parameters, in ABI order.
    pub params: PrimaryMap<Param, ParamData>,
    /// Static LDS.
    pub lds: PrimaryMap<LdsSlot, LdsData>,
    /// Private arrays.
    pub private: PrimaryMap<PrivateSlot, PrivateData>,
    /// Every value.
    pub values: PrimaryMap<Value, ValueData>,
    /// Every instruction.
    pub insts: PrimaryMap<Inst, InstData>,
    /// Every block.
    pub blocks: PrimaryMap<Block, BlockData>,
    /// The body.
    pub entry: Block,
    /// A cap on the registers a lane may use (`None`: the back end's choice), like CUDA's
    /// `__launch_bounds__` register limit: a memory-bound kernel can run with fewer registers
    /// live (its loads issued later) for an occupancy or a resource budget. Lowered as
    /// `amdgpu-num-vgpr` on AMD and `maxnreg` on NVIDIA; the build's resource report shows what
    /// the back end used (a cap it cannot meet spills, which the no-spill budget refuses). Left
    /// out of the serialized form when unset, so kernels without one keep their content hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_registers: Option<u32>,
}

impl Kernel {
    /// The type of a value.
    pub fn ty(&self, v: Value) -> Type {
        self.values[v].ty
    }

    /// Total LDS bytes of the static allocations (each aligned to 16 bytes).
    pub fn lds_bytes(&self) -> u32 {
        self.lds.values().map(|l| l.bytes().div_ceil(16) * 16).sum()
    }

    /// Byte offset of each LDS slot in the workgroup's LDS (16-byte aligned, in order).
    pub fn lds_offsets(&self) -> Vec<u32> {
        let mut off = 0;
        self.lds
            .values()
            .map(|l| {
                let o = off;
                off += l.bytes().div_ceil(16) * 16;
                o
            })
            .collect()
    }

    /// Lanes in a workgroup.
    pub fn workgroup_lanes(&self) -> u32 {
        self.workgroup_size.iter().product()
    }

    /// Waves in a workgroup.
    pub fn waves_per_workgroup(&self) -> u32 {
        self.workgroup_lanes().div_ceil(self.wave_size)
    }

    /// Checks the scalar arguments against the rules of their parameters ([`ParamData::rules`]);
    /// `bits` gives each scalar parameter's bits (zero-extended, as passed). Call before any
    /// launch: a kernel that relies on a rule gives wrong results, silently, when it is broken.
    pub fn check_scalars(&self, bits: impl Fn(Param) -> u64) -> Result<(), ScalarRuleError> {
        for (p, d) in &self.params {
            let ParamKind::Scalar(t) = d.kind else { continue };
            for &rule in &d.rules {
                let value = scalar_value(t, bits(p));
                if !rule.holds(value) {
                    return Err(ScalarRuleError {
                        kernel: self.name.clone(),
                        param: d.name.clone(),
                        value,
                        rule,
                    });
                }
            }
        }
        Ok(())
    }

    /// Looks a parameter up by name.
    pub fn param(&self, name: &str) -> Option<Param> {
        self.params.iter().find(|(_, p)| p.name == name).map(|(k, _)| k)
    }

    /// The buffer parameters the kernel loads from (or copies from into LDS, [`Op::AsyncCopy`])
    /// before its [`Op::GridDependencyWait`] (none without one), each once, in parameter order.
    /// Those reads run while the grids launched before this one may still be writing: the
    /// verifier allows them only from buffers the kernel never writes, and a runtime may launch
    /// the kernel to overlap the grids before it only when none of those grids writes what
    /// these parameters are bound to.
    pub fn reads_before_grid_wait(&self) -> Vec<Param> {
        let mut seen = std::collections::BTreeSet::new();
        self.before_grid_wait(|_, d| {
            if matches!(d.op, Op::Load { .. } | Op::AsyncCopy { .. }) {
                seen.extend(d.op.param());
            }
        });
        self.params.keys().filter(|p| seen.contains(p)).collect()
    }

    /// Visits every instruction that runs before the kernel's [`Op::GridDependencyWait`] (the
    /// entry block's instructions before it, and everything nested in them), in program order as
    /// [`Kernel::walk`] does. Returns whether the entry block has a wait; without one nothing is
    /// visited.
    pub fn before_grid_wait(&self, mut f: impl FnMut(Inst, &InstData)) -> bool {
        let top = &self.blocks[self.entry].insts;
        let Some(at) = top.iter().position(|&i| matches!(self.insts[i].op, Op::GridDependencyWait))
        else {
            return false;
        };
        self.visit(&top[..at], &mut f);
        true
    }

    /// Visits every instruction in program order (pre-order through nested blocks).
    pub fn walk(&self, mut f: impl FnMut(Inst, &InstData)) {
        self.visit(&self.blocks[self.entry].insts, &mut f)
    }

    /// Visits `insts` and the blocks nested in them, in program order.
    fn visit(&self, insts: &[Inst], f: &mut dyn FnMut(Inst, &InstData)) {
        for &i in insts {
            let d = &self.insts[i];
            f(i, d);
            for nb in d.op.blocks() {
                self.visit(&self.blocks[nb].insts, f);
            }
        }
    }

    /// Serializes to RON.
    pub fn to_ron(&self) -> String {
        ron::ser::to_string_pretty(self, ron::ser::PrettyConfig::default())
            .expect("a kernel always serializes")
    }

    /// Parses RON; the result still has to pass the verifier.
    pub fn from_ron(text: &str) -> Result<Kernel, ron::error::SpannedError> {
        ron::from_str(text)
    }

    /// The content hash: blake3 over the canonical (compact RON) serialization, hex.
    /// It depends only on the kernel, so it is the same on every run and machine.
    pub fn content_hash(&self) -> String {
        self.compact_ron_and_hash().1
    }

    /// The canonical (compact RON) serialization and its [`Kernel::content_hash`], from one
    /// serialization (a package build needs both for every object).
    pub fn compact_ron_and_hash(&self) -> (String, String) {
        let text = ron::ser::to_string(self).expect("a kernel always serializes");
        let hash = blake3::hash(text.as_bytes()).to_hex().to_string();
        (text, hash)
    }
}

/// An integer scalar's value from its bits (sign-extended for signed types; floats, which carry
/// no rules, by their bits).
fn scalar_value(t: ScalarType, bits: u64) -> i128 {
    let w = t.bits();
    let bits = if w >= 64 { bits } else { bits & ((1u64 << w) - 1) };
    match t {
        ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64 => {
            let shift = 64 - w;
            (((bits << shift) as i64) >> shift) as i128
        }
        ScalarType::I1
        | ScalarType::U8
        | ScalarType::U16
        | ScalarType::U32
        | ScalarType::U64
        | ScalarType::F16
        | ScalarType::BF16
        | ScalarType::F32
        | ScalarType::F64 => bits as i128,
    }
}
