//! The verifier: everything a kernel must satisfy before the interpreter or a back end sees it.
//! Back ends and the interpreter may assume a verified kernel.
//!
//! Errors are collected, not thrown one at a time. Each names the kernel and the entity it is
//! about, and says what was expected and what was found:
//!
//! ```text
//! kernel argmax_rows: inst12 (binary add): operand types differ: expected f32 (type of v3), found i32 (v7)
//! ```
//!
//! # Invariants, in the order they are checked
//!
//! **Handles** (`handles.rs`, checked first; if any fails, nothing else is checked, so later checks index freely):
//! - every value, instruction, block, parameter, LDS and private slot that anything refers to is in
//!   range: instruction operands, results and nested blocks; block parameters and instructions; the
//!   entry block; memory references; parameters named by `arg`, `buffer_addr`, the grid and buffer
//!   lengths;
//! - definitions agree both ways: value `v` says it is result `n` of `inst` (or parameter `n` of
//!   `block`) exactly when that instruction's `results[n]` (that block's `params[n]`) is `v`.
//!
//! **Interface** (`interface.rs`):
//! - the kernel name is not empty and has no whitespace or control characters;
//! - the wave size is 32 or 64;
//! - every workgroup dimension is at least 1, the workgroup has at most 1024 lanes, and its lane
//!   count is a multiple of the wave size (no partial waves: every wave has all lanes, which the
//!   cross-lane ops and the uniformity of wave reductions rely on);
//! - parameter names are not empty and are unique (they name the arguments at launch);
//!   only buffers are workspaces, and a workspace has a length (the runtime allocates it);
//! - shape expressions (grid, buffer lengths) multiply integer scalar parameters and divide by at
//!   least 1;
//! - scalar rules ([`crate::ScalarRule`]) sit on integer scalar parameters only; a
//!   `multiple_of` is at least 1, and the `at_least` / `at_most` bounds leave some value;
//! - LDS and private arrays have at least one element.
//!
//! **Layout** (`layout.rs`):
//! - every block except the entry is nested under exactly one op (`if`, `for`), and the entry
//!   under none; every instruction is in exactly one block, once;
//! - the entry block has no parameters and contains no `yield`; every nested block ends with a
//!   `yield`, and `yield` appears nowhere else.
//!
//! **Types** (`types.rs`), per op (ops/mod.rs says what each op means); every value's type is legal
//! ([`Type::is_legal`]: a scalar, or 2, 3, 4, 8 or 16 non-`i1` lanes within 16 bytes), and every
//! instruction has exactly the results its op defines, of the types it defines:
//! - `const`: scalar type, and the bits fit the type;
//! - `arg` refers to a scalar parameter; `buffer_addr` to a buffer (result `u64`); `id`: `u32`;
//! - `unary`: `neg`, `abs` on integers and floats; `not` on integers and `i1`; `sqrt` and the
//!   rounding ops on floats; the approximate ops (`exp2_approx`...) on `f32` only; `is_nan` on
//!   floats, giving `i1`; `popcount`, `ctz` on integers;
//! - `binary`: both operands of one type; `add`, `sub`, `mul`, `div`, `min`, `max` on integers and
//!   floats; `rem`, `shl`, `shr` on integers only; `and`, `or`, `xor` on integers and `i1`;
//! - `fma`: three operands of one float type; `cmp`: operands of one type (ordered compares not on
//!   `i1`), result `i1`; `select`: a scalar `i1` condition and arms of one type;
//! - `convert`: scalar to scalar, numeric (`i1` only as the source); `bitcast`: same byte size, no
//!   `i1`; `extract`: a vector operand and a lane in range; `make_vector`: a vector type with one
//!   element of its element type per lane;
//! - `load`, `store`, `atomic`: the index is a scalar `u32`, `i32`, `u64` or `i64`; a stated
//!   alignment of a `load` or `store` is a power of two from 1 to the access's size in bytes (an
//!   `f32x3` may state at most 8); a buffer reference names a
//!   buffer parameter whose access allows the operation (`load` reads, `store` writes, `atomic`
//!   needs `read_write`); a raw address is a `u64`; `atomic` works on scalar 32- or 64-bit integers
//!   in global memory or LDS (not private);
//! - `shuffle`: offset below the wave size, and 1 or more for `xor`; `shuffle_idx`: a `u32` lane;
//!   `broadcast`: lane below the wave size; `ballot`: a scalar `i1`, result `u64`;
//! - `wave_reduce`: a scalar integer or float; `wave_argmax`: a scalar float value and a `u32`
//!   index, results (value, `u32`);
//! - `tsum<p>`: `p` a power of two with `1 <= p <= wave size`, `1 <= values <= p`, all values of one
//!   scalar float type;
//! - `if`: a scalar `i1` condition; blocks without parameters, each yielding values of the `if`'s
//!   result types;
//! - `for`: `start`, `end`, `step` of one type, `u32` or `i32`; a constant `step` is positive;
//!   `unroll >= 1`; the body's parameters are `[index, carried...]`, typed as `start` and the
//!   initial values; the body yields values of the carried types; the results have those types.
//!
//! **Scoping** (`scoping.rs`, SSA): a value is used only after its definition, in the same block or an enclosing
//! one. So a `for` body's parameters are visible only inside it, values defined in a nested block
//! only inside that block, and the results of an `if` or `for` only after it.
//!
//! **Grid dependency** (`grid_dependency.rs`): at most one `grid_dependency_wait`, in the entry
//! block, and before it (nested blocks included) no `store`, `atomic`, `fence`, `barrier`,
//! cross-lane op, or `load` but from a buffer parameter the kernel only reads (`Access::Read`):
//! arithmetic, `prefetch` (which changes no value) and such loads, since the grids launched
//! before the kernel may still be writing. Which buffers a kernel reads early is recorded with
//! its object, and the runtime overlaps its launch only where no earlier grid writes them.
//!
//! **Uniform control** (`uniform_control.rs`, with [`crate::uniformity`]):
//! - a `barrier` runs only under workgroup-uniform control flow: every enclosing `if` condition
//!   and `for` bound is workgroup-uniform;
//! - a cross-lane op (`shuffle`, `shuffle_idx`, `broadcast`, `ballot`, `wave_reduce`,
//!   `wave_argmax`, `tsum`, and every later cross-lane or matrix op) runs only under wave-uniform
//!   control flow: every lane of its wave runs it (the lowering uses the full lane mask).
//!
//! The error names the op and the outermost condition that is not uniform enough.
//!
//! **Target** (only with a target, `target.rs`): the target runs the wave size; the LDS total
//! ([`Kernel::lds_bytes`]) fits the target's `lds_per_workgroup`; every op's
//! [`target::op_requirement`] is met (no op needs anything beyond the baseline today). A refusal
//! names the target and the archs that have what is missing.
//!
//! Each group of checks is one file of this module, named as above.

mod grid_dependency;
mod handles;
mod interface;
mod layout;
mod scoping;
pub mod target;
mod types;
mod uniform_control;

use crate::entities::{Block, Inst, LdsSlot, Param, PrivateSlot, Value};
use crate::kernel::{Access, Kernel, ParamKind, ScalarRule, ValueDef};
use crate::ops::*;
use crate::print::mnemonic;
use crate::target::Target;
use crate::types::{ScalarType, Type};
use crate::uniformity::{self, Uniformity};
use cranelift_entity::{EntityRef, SecondaryMap};
use std::collections::HashMap;
use std::fmt;

/// The entity an error is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// The kernel as a whole (its interface: wave, workgroup, grid, LDS total).
    Kernel,
    /// An instruction, with its op's mnemonic (`binary add`).
    Inst {
        /// The instruction.
        inst: Inst,
        /// Its op as the text form names it.
        op: String,
    },
    /// A value.
    Value(Value),
    /// A block.
    Block(Block),
    /// A parameter, with its name.
    Param {
        /// The parameter.
        param: Param,
        /// Its name.
        name: String,
    },
    /// An LDS slot, with its name.
    Lds {
        /// The slot.
        slot: LdsSlot,
        /// Its name.
        name: String,
    },
    /// A private array, with its name.
    Private {
        /// The slot.
        slot: PrivateSlot,
        /// Its name.
        name: String,
    },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Kernel => f.write_str("kernel"),
            Location::Inst { inst, op } => write!(f, "{inst} ({op})"),
            Location::Value(v) => write!(f, "{v}"),
            Location::Block(b) => write!(f, "{b}"),
            Location::Param { param, name } => write!(f, "{param} ({name})"),
            Location::Lds { slot, name } => write!(f, "{slot} ({name})"),
            Location::Private { slot, name } => write!(f, "{slot} ({name})"),
        }
    }
}

/// One verifier error: `kernel NAME: ENTITY: MESSAGE` (or `kernel NAME: MESSAGE` for the kernel
/// as a whole).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct VerifyError {
    /// The kernel's name.
    pub kernel: String,
    /// What the error is about.
    pub location: Location,
    /// What was expected and what was found.
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Location::Kernel => write!(f, "kernel {}: {}", self.kernel, self.message),
            loc => write!(f, "kernel {}: {loc}: {}", self.kernel, self.message),
        }
    }
}

/// Every error found in a kernel, one a line when displayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))]
pub struct VerifyErrors(pub Vec<VerifyError>);

/// Checks a kernel, and with a target, that the target can run it. Returns every error found.
pub fn verify(k: &Kernel, target: Option<&Target>) -> Result<(), VerifyErrors> {
    let mut v = Verifier { k, errors: Vec::new() };
    v.check_handles();
    if v.errors.is_empty() {
        v.check_interface();
        let layout = v.check_layout();
        v.check_types();
        if let Some(t) = target {
            v.check_target(t);
        }
        if let Some(layout) = layout {
            v.check_scoping(&layout);
            v.check_uniform_control(&layout);
            v.check_grid_dependency(&layout);
        }
    }
    if v.errors.is_empty() {
        Ok(())
    } else {
        Err(VerifyErrors(v.errors))
    }
}

/// Where each block and instruction sits (valid when no block or instruction appears twice).
struct Layout {
    /// The op a block is nested under (`None`: the entry, or a block nested nowhere).
    block_parent: SecondaryMap<Block, Option<Inst>>,
    /// The block an instruction is in.
    inst_block: SecondaryMap<Inst, Option<Block>>,
}

impl Layout {
    /// The block enclosing `b` (the block of the op it is nested under).
    fn up(&self, b: Block) -> Option<Block> {
        self.block_parent[b].and_then(|i| self.inst_block[i])
    }

    fn encloses(&self, outer: Block, mut b: Block) -> bool {
        loop {
            if b == outer {
                return true;
            }
            match self.up(b) {
                Some(p) => b = p,
                None => return false,
            }
        }
    }
}

/// The verifier's state; see the module doc for what each `check_*` checks.
struct Verifier<'a> {
    k: &'a Kernel,
    errors: Vec<VerifyError>,
}

fn is_index(t: Type) -> bool {
    t == Type::U32 || t == Type::I32
}

/// A memory index: a loop index type, or a 64-bit integer (buffers past 4 GiB).
fn is_mem_index(t: Type) -> bool {
    is_index(t) || t == Type::U64 || t == Type::I64
}

fn ty_list(ts: &[Type]) -> String {
    if ts.is_empty() {
        return "nothing".into();
    }
    ts.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ")
}

impl Verifier<'_> {
    // ---- reporting ----

    fn report(&mut self, location: Location, message: impl Into<String>) {
        self.errors.push(VerifyError {
            kernel: self.k.name.clone(),
            location,
            message: message.into(),
        });
    }

    fn inst_loc(&self, i: Inst) -> Location {
        Location::Inst { inst: i, op: mnemonic(&self.k.insts[i].op) }
    }

    fn at(&mut self, i: Inst, message: impl Into<String>) {
        let loc = self.inst_loc(i);
        self.report(loc, message);
    }

    fn param_loc(&self, p: Param) -> Location {
        Location::Param { param: p, name: self.k.params[p].name.clone() }
    }

    /// `arg0 (x)`.
    fn param_desc(&self, p: Param) -> String {
        self.param_loc(p).to_string()
    }

    /// `inst7 (if)`.
    fn inst_desc(&self, i: Inst) -> String {
        self.inst_loc(i).to_string()
    }

    fn ty(&self, v: Value) -> Type {
        self.k.values[v].ty
    }
}

/// `result 0 of inst3`, `parameter 1 of block2`.
fn def_desc(d: ValueDef) -> String {
    match d {
        ValueDef::Result(i, n) => format!("result {n} of {i}"),
        ValueDef::Param(b, n) => format!("parameter {n} of {b}"),
    }
}

fn illegal(t: Type) -> String {
    format!(
        "expected a legal type (a scalar, or 2, 3, 4, 8 or 16 non-i1 lanes within 16 bytes), found {t}"
    )
}
