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
//! **Handles** (checked first; if any fails, nothing else is checked, so later checks index freely):
//! - every value, instruction, block, parameter, LDS and private slot that anything refers to is in
//!   range: instruction operands, results and nested blocks; block parameters and instructions; the
//!   entry block; memory references; parameters named by `arg`, `buffer_addr`, the grid and buffer
//!   lengths;
//! - definitions agree both ways: value `v` says it is result `n` of `inst` (or parameter `n` of
//!   `block`) exactly when that instruction's `results[n]` (that block's `params[n]`) is `v`.
//!
//! **Interface**:
//! - the kernel name is not empty and has no whitespace or control characters;
//! - the wave size is 32 or 64;
//! - every workgroup dimension is at least 1, the workgroup has at most 1024 lanes, and its lane
//!   count is a multiple of the wave size (no partial waves: every wave has all lanes, which the
//!   cross-lane ops and the uniformity of wave reductions rely on);
//! - parameter names are not empty and are unique (they name the arguments at launch);
//!   only buffers are workspaces, and a workspace has a length (the runtime allocates it);
//! - shape expressions (grid, buffer lengths) multiply integer scalar parameters and divide by at
//!   least 1;
//! - LDS and private arrays have at least one element.
//!
//! **Layout**:
//! - every block except the entry is nested under exactly one op (`if`, `for`), and the entry
//!   under none; every instruction is in exactly one block, once;
//! - the entry block has no parameters and contains no `yield`; every nested block ends with a
//!   `yield`, and `yield` appears nowhere else.
//!
//! **Types**, per op (ops.rs says what each op means); every value's type is legal
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
//! - `load`, `store`, `atomic`: the index is a scalar `u32` or `i32`; a buffer reference names a
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
//! **Scoping** (SSA): a value is used only after its definition, in the same block or an enclosing
//! one. So a `for` body's parameters are visible only inside it, values defined in a nested block
//! only inside that block, and the results of an `if` or `for` only after it.
//!
//! **Barriers**: a `barrier` runs only under workgroup-uniform control flow: every enclosing `if`
//! condition and `for` bound is workgroup-uniform (see [`crate::uniformity`]). The error names the
//! barrier and the outermost condition that is not.
//!
//! **Target** (only with a target, all in one function, `check_target`): the target runs the wave size;
//! the LDS total ([`Kernel::lds_bytes`]) fits the target's `lds_per_workgroup`. No op is refused
//! per target yet; when one is, its rule goes in the same function.

use crate::entities::{Block, Inst, LdsSlot, Param, PrivateSlot, Value};
use crate::kernel::{Access, Kernel, ParamKind, ValueDef};
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
            v.check_barriers(&layout);
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

    // ---- handles ----

    fn check_handles(&mut self) {
        let k = self.k;
        let (nv, ni, nb, np) = (k.values.len(), k.insts.len(), k.blocks.len(), k.params.len());
        let (nl, npriv) = (k.lds.len(), k.private.len());
        if k.entry.index() >= nb {
            self.report(
                Location::Kernel,
                format!(
                    "entry block {}: expected a block below block{nb}, found out of range",
                    k.entry
                ),
            );
        }
        let mut bad = Vec::new();
        let shape_params = |e: &ShapeExpr, what: &str, bad: &mut Vec<(Location, String)>| {
            for &p in &e.factors {
                if p.index() >= np {
                    bad.push((
                        Location::Kernel,
                        format!("{what} refers to {p}, out of range ({np} parameters)"),
                    ));
                }
            }
        };
        for (d, e) in k.grid.iter().enumerate() {
            shape_params(e, &format!("grid dimension {}", ["x", "y", "z"][d]), &mut bad);
        }
        for (p, d) in &k.params {
            if let ParamKind::Buffer { len: Some(e), .. } = &d.kind {
                shape_params(e, &format!("the length of {p} ({})", d.name), &mut bad);
            }
        }
        for (v, d) in &k.values {
            // The definition's side of the link; the instruction's and block's sides are below.
            let found = match d.def {
                ValueDef::Result(i, n) if i.index() < ni => k.insts[i].results.get(n as usize),
                ValueDef::Param(b, n) if b.index() < nb => k.blocks[b].params.get(n as usize),
                ValueDef::Result(i, _) => {
                    bad.push((
                        Location::Value(v),
                        format!("defined as a result of {i}: expected an instruction in range, found {i} of {ni}"),
                    ));
                    continue;
                }
                ValueDef::Param(b, _) => {
                    bad.push((
                        Location::Value(v),
                        format!("defined as a parameter of {b}: expected a block in range, found {b} of {nb}"),
                    ));
                    continue;
                }
            };
            if found != Some(&v) {
                let found = found.map_or("nothing there".to_string(), |f| f.to_string());
                bad.push((
                    Location::Value(v),
                    format!("defined as {}: expected {v} there, found {found}", def_desc(d.def)),
                ));
            }
        }
        for (i, d) in &k.insts {
            let loc = || Location::Inst { inst: i, op: mnemonic(&d.op) };
            for v in d.op.args() {
                if v.index() >= nv {
                    bad.push((loc(), format!("operand {v} is out of range ({nv} values)")));
                }
            }
            for (n, &r) in d.results.iter().enumerate() {
                if r.index() >= nv {
                    bad.push((loc(), format!("result {r} is out of range ({nv} values)")));
                } else if k.values[r].def != ValueDef::Result(i, n as u32) {
                    bad.push((
                        loc(),
                        format!(
                            "result {n} is {r}: expected {r} defined as result {n} of {i}, found it \
                             defined as {}",
                            def_desc(k.values[r].def)
                        ),
                    ));
                }
            }
            for b in d.op.blocks() {
                if b.index() >= nb {
                    bad.push((loc(), format!("nested {b} is out of range ({nb} blocks)")));
                }
            }
            let mut param = |p: Param| {
                if p.index() >= np {
                    bad.push((loc(), format!("{p} is out of range ({np} parameters)")));
                }
            };
            match &d.op {
                Op::Arg(p) | Op::BufferAddr(p) => param(*p),
                Op::Load { mem, .. } | Op::Store { mem, .. } | Op::Atomic { mem, .. } => {
                    match mem {
                        MemRef::Buffer(p) => param(*p),
                        MemRef::Lds(s) if s.index() >= nl => {
                            bad.push((loc(), format!("{s} is out of range ({nl} LDS slots)")))
                        }
                        MemRef::Private(s) if s.index() >= npriv => bad
                            .push((loc(), format!("{s} is out of range ({npriv} private arrays)"))),
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        for (b, d) in &k.blocks {
            for (n, &p) in d.params.iter().enumerate() {
                if p.index() >= nv {
                    bad.push((
                        Location::Block(b),
                        format!("parameter {p} is out of range ({nv} values)"),
                    ));
                } else if k.values[p].def != ValueDef::Param(b, n as u32) {
                    bad.push((
                        Location::Block(b),
                        format!(
                            "parameter {n} is {p}: expected {p} defined as parameter {n} of {b}, \
                             found it defined as {}",
                            def_desc(k.values[p].def)
                        ),
                    ));
                }
            }
            for &i in &d.insts {
                if i.index() >= ni {
                    bad.push((
                        Location::Block(b),
                        format!("{i} is out of range ({ni} instructions)"),
                    ));
                }
            }
        }
        for (loc, msg) in bad {
            self.report(loc, msg);
        }
    }

    // ---- interface ----

    fn check_interface(&mut self) {
        let k = self.k;
        if k.name.is_empty() || k.name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            self.report(
                Location::Kernel,
                format!("name: expected a symbol name without spaces, found {:?}", k.name),
            );
        }
        let w = k.wave_size;
        if w != 32 && w != 64 {
            self.report(Location::Kernel, format!("wave size: expected 32 or 64, found {w}"));
        }
        let [x, y, z] = k.workgroup_size;
        let size = format!("[{x},{y},{z}]");
        if x == 0 || y == 0 || z == 0 {
            self.report(
                Location::Kernel,
                format!("workgroup size: expected every dimension at least 1, found {size}"),
            );
        } else {
            let lanes = x as u64 * y as u64 * z as u64;
            if lanes > 1024 {
                self.report(
                    Location::Kernel,
                    format!(
                        "workgroup size: expected at most 1024 lanes, found {lanes} lanes ({size})"
                    ),
                );
            } else if lanes.checked_rem(w as u64).is_some_and(|r| r != 0) {
                self.report(
                    Location::Kernel,
                    format!(
                        "workgroup size: expected a multiple of the wave size {w} (whole waves), \
                         found {lanes} lanes ({size})"
                    ),
                );
            }
        }
        for (d, e) in k.grid.iter().enumerate() {
            self.check_shape(
                Location::Kernel,
                &format!("grid dimension {}", ["x", "y", "z"][d]),
                e,
            );
        }
        let mut names: HashMap<&str, Param> = HashMap::new();
        for (p, d) in &k.params {
            let loc = self.param_loc(p);
            if d.name.is_empty() {
                self.report(loc.clone(), "name: expected a name, found an empty one");
            } else if let Some(first) = names.insert(&d.name, p) {
                self.report(
                    loc.clone(),
                    format!(
                        "name: expected a unique name, found {:?} already used by {first}",
                        d.name
                    ),
                );
                names.insert(&d.name, first);
            }
            match &d.kind {
                ParamKind::Buffer { len, .. } => {
                    if let Some(e) = len {
                        self.check_shape(loc.clone(), "length", e);
                    } else if d.workspace {
                        self.report(
                            loc,
                            "workspace: expected a length (the runtime allocates it), found none",
                        );
                    }
                }
                ParamKind::Scalar(t) => {
                    if d.workspace {
                        self.report(
                            loc,
                            format!("workspace: expected a buffer, found a scalar {t}"),
                        );
                    }
                }
            }
        }
        for (s, d) in &k.lds {
            if d.len == 0 {
                let loc = Location::Lds { slot: s, name: d.name.clone() };
                self.report(loc, "length: expected at least 1 element, found 0");
            }
        }
        for (s, d) in &k.private {
            if d.len == 0 {
                let loc = Location::Private { slot: s, name: d.name.clone() };
                self.report(loc, "length: expected at least 1 element, found 0");
            }
        }
    }

    fn check_shape(&mut self, loc: Location, what: &str, e: &ShapeExpr) {
        if e.den == 0 {
            self.report(loc.clone(), format!("{what}: expected a divisor of at least 1, found 0"));
        }
        for &p in &e.factors {
            match &self.k.params[p].kind {
                ParamKind::Scalar(t) if t.is_int() => {}
                ParamKind::Scalar(t) => {
                    let found = format!("{} of type {t}", self.param_desc(p));
                    self.report(
                        loc.clone(),
                        format!("{what}: expected integer scalar parameters, found {found}"),
                    );
                }
                ParamKind::Buffer { .. } => {
                    let found = format!("{}, a buffer", self.param_desc(p));
                    self.report(
                        loc.clone(),
                        format!("{what}: expected integer scalar parameters, found {found}"),
                    );
                }
            }
        }
    }

    // ---- layout ----

    /// Returns the layout when no block or instruction appears twice (scoping needs a tree).
    fn check_layout(&mut self) -> Option<Layout> {
        let k = self.k;
        let mut layout =
            Layout { block_parent: SecondaryMap::new(), inst_block: SecondaryMap::new() };
        let mut reached: SecondaryMap<Block, bool> = SecondaryMap::new();
        let mut tree = true;
        reached[k.entry] = true;
        let mut stack = vec![k.entry];
        while let Some(b) = stack.pop() {
            for &i in &k.blocks[b].insts {
                if let Some(first) = layout.inst_block[i] {
                    let msg = if first == b {
                        format!("expected to appear once, found twice in {b}")
                    } else {
                        format!("expected to appear in one block, found in {first} and {b}")
                    };
                    self.at(i, msg);
                    tree = false;
                    continue;
                }
                layout.inst_block[i] = Some(b);
                for nb in k.insts[i].op.blocks() {
                    if nb == k.entry {
                        self.at(i, format!("nests the entry {nb}: expected a block of its own"));
                        tree = false;
                    } else if reached[nb] {
                        let other = layout.block_parent[nb]
                            .map_or("another op".to_string(), |o| self.inst_desc(o));
                        self.at(
                            i,
                            format!(
                                "nests {nb}: expected a block nested under one op only, found it \
                                 also under {other}"
                            ),
                        );
                        tree = false;
                    } else {
                        reached[nb] = true;
                        layout.block_parent[nb] = Some(i);
                        stack.push(nb);
                    }
                }
            }
        }
        for b in k.blocks.keys() {
            if !reached[b] {
                self.report(
                    Location::Block(b),
                    "expected the entry or a block nested under an op, found a block nested nowhere",
                );
            }
        }
        for i in k.insts.keys() {
            if layout.inst_block[i].is_none() && !self.in_unreached_block(i, &reached) {
                self.at(i, "expected to appear in one block, found in none");
            }
        }
        // Yield placement, in reached blocks.
        if !k.blocks[k.entry].params.is_empty() {
            let n = k.blocks[k.entry].params.len();
            self.report(
                Location::Block(k.entry),
                format!("entry block: expected no parameters, found {n}"),
            );
        }
        for (b, d) in &k.blocks {
            if !reached[b] {
                continue;
            }
            let n = d.insts.len();
            for (pos, &i) in d.insts.iter().enumerate() {
                if !matches!(k.insts[i].op, Op::Yield(_)) {
                    continue;
                }
                if b == k.entry {
                    self.at(i, "expected only in a nested block, found in the entry block");
                } else if pos + 1 != n {
                    self.at(
                        i,
                        format!(
                            "expected only as the last instruction of {b}, found at position {pos} \
                             of {n}"
                        ),
                    );
                }
            }
            if b != k.entry {
                let last = d.insts.last().map(|&i| &k.insts[i].op);
                if !matches!(last, Some(Op::Yield(_))) {
                    let found = match last {
                        Some(op) => format!("`{}`", mnemonic(op)),
                        None => "an empty block".into(),
                    };
                    let desc = self.block_desc(&layout, b);
                    self.report(
                        Location::Block(b),
                        format!("{desc}: expected to end with yield, found {found}"),
                    );
                }
            }
        }
        tree.then_some(layout)
    }

    /// An instruction listed in a block nested nowhere is reported with that block, not again.
    fn in_unreached_block(&self, i: Inst, reached: &SecondaryMap<Block, bool>) -> bool {
        self.k.blocks.iter().any(|(b, d)| !reached[b] && d.insts.contains(&i))
    }

    /// `then block of inst7 (if)`, `body of inst9 (for)`, `entry block`.
    fn block_desc(&self, layout: &Layout, b: Block) -> String {
        if b == self.k.entry {
            return "entry block".into();
        }
        match layout.block_parent[b] {
            Some(i) => {
                let role = match &self.k.insts[i].op {
                    Op::If { then_block, .. } if *then_block == b => "then block",
                    Op::If { .. } => "else block",
                    _ => "body",
                };
                format!("{role} of {}", self.inst_desc(i))
            }
            None => "block nested nowhere".into(),
        }
    }

    // ---- types ----

    fn check_types(&mut self) {
        let k = self.k;
        for (b, d) in &k.blocks {
            for &p in &d.params {
                let t = self.ty(p);
                if !t.is_legal() {
                    self.report(Location::Block(b), format!("parameter {p}: {}", illegal(t)));
                }
            }
        }
        for i in k.insts.keys() {
            let expected = self.op_types(i);
            let results = &k.insts[i].results;
            for &r in results {
                let t = self.ty(r);
                if !t.is_legal() {
                    self.at(i, format!("result {r}: {}", illegal(t)));
                }
            }
            let Some(expected) = expected else { continue };
            if results.len() != expected.len() {
                let found: Vec<Type> = results.iter().map(|&r| self.ty(r)).collect();
                self.at(
                    i,
                    format!(
                        "results: expected {} ({}), found {} ({})",
                        expected.len(),
                        ty_list(&expected),
                        results.len(),
                        ty_list(&found)
                    ),
                );
                continue;
            }
            for (&r, &e) in results.iter().zip(&expected) {
                let t = self.ty(r);
                if t != e {
                    self.at(i, format!("result {r}: expected type {e}, found {t}"));
                }
            }
        }
    }

    /// Checks an operand's type with `ok`; `want` says what was expected.
    fn operand(&mut self, i: Inst, what: &str, v: Value, want: &str, ok: impl Fn(Type) -> bool) {
        let t = self.ty(v);
        if !ok(t) {
            self.at(i, format!("{what} {v}: expected {want}, found {t}"));
        }
    }

    /// Checks that `v` has the type of `like`.
    fn same(&mut self, i: Inst, what: &str, like: Value, v: Value) {
        let (a, b) = (self.ty(like), self.ty(v));
        if a != b {
            self.at(i, format!("{what}: expected {a} (type of {like}), found {b} ({v})"));
        }
    }

    /// Checks an instruction's operands; returns the result types its op defines (`None` where
    /// they are checked here, as for `if`).
    fn op_types(&mut self, i: Inst) -> Option<Vec<Type>> {
        let k = self.k;
        let wave = k.wave_size;
        let op = &k.insts[i].op;
        let int_or_float = |t: Type| t.scalar.is_int() || t.scalar.is_float();
        let int = |t: Type| t.scalar.is_int();
        let float = |t: Type| t.scalar.is_float();
        let int_or_bool = |t: Type| t.scalar.is_int() || t.scalar == ScalarType::I1;
        let scalar_bool = |t: Type| t == Type::BOOL;
        let r = match op {
            Op::Const { ty, bits } => {
                if ty.is_vector() {
                    self.at(i, format!("type: expected a scalar, found {ty}"));
                } else if ty.scalar.bits() < 64 && bits >> ty.scalar.bits() != 0 {
                    self.at(
                        i,
                        format!(
                            "bits: expected a value of at most {} bits for {ty}, found 0x{bits:x}",
                            ty.scalar.bits()
                        ),
                    );
                }
                vec![*ty]
            }
            Op::Arg(p) => match &k.params[*p].kind {
                ParamKind::Scalar(s) => vec![Type::scalar(*s)],
                ParamKind::Buffer { elem, .. } => {
                    let d = self.param_desc(*p);
                    self.at(
                        i,
                        format!(
                            "parameter: expected a scalar parameter, found {d}, a buffer<{elem}> \
                             (use buffer_addr)"
                        ),
                    );
                    return None;
                }
            },
            Op::BufferAddr(p) => {
                if let ParamKind::Scalar(s) = &k.params[*p].kind {
                    let d = self.param_desc(*p);
                    self.at(i, format!("parameter: expected a buffer, found {d}, a scalar {s}"));
                }
                vec![Type::U64]
            }
            Op::Id(_) => vec![Type::U32],
            Op::Unary { op: u, arg } => {
                let a = *arg;
                match u {
                    UnaryOp::Neg | UnaryOp::Abs => {
                        self.operand(i, "operand", a, "an integer or float type", int_or_float)
                    }
                    UnaryOp::Not => {
                        self.operand(i, "operand", a, "an integer or i1 type", int_or_bool)
                    }
                    UnaryOp::Sqrt
                    | UnaryOp::Floor
                    | UnaryOp::Ceil
                    | UnaryOp::Trunc
                    | UnaryOp::Round
                    | UnaryOp::RoundEven
                    | UnaryOp::IsNan => self.operand(i, "operand", a, "a float type", float),
                    UnaryOp::Exp2Approx
                    | UnaryOp::Log2Approx
                    | UnaryOp::RsqrtApprox
                    | UnaryOp::RcpApprox => {
                        self.operand(i, "operand", a, "f32 (approximate ops are f32 only)", |t| {
                            t.scalar == ScalarType::F32
                        })
                    }
                    UnaryOp::Popcount | UnaryOp::Ctz => {
                        self.operand(i, "operand", a, "an integer type", int)
                    }
                }
                let t = self.ty(a);
                if *u == UnaryOp::IsNan {
                    vec![Type::vector(ScalarType::I1, t.lanes)]
                } else {
                    vec![t]
                }
            }
            Op::Binary { op: bop, lhs, rhs } => {
                let (l, r) = (*lhs, *rhs);
                self.same(i, "operand types differ", l, r);
                match bop {
                    BinaryOp::Add
                    | BinaryOp::Sub
                    | BinaryOp::Mul
                    | BinaryOp::Div
                    | BinaryOp::Min
                    | BinaryOp::Max => {
                        self.operand(i, "operand", l, "an integer or float type", int_or_float)
                    }
                    BinaryOp::Rem | BinaryOp::Shl | BinaryOp::Shr => {
                        self.operand(i, "operand", l, "an integer type", int)
                    }
                    BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => {
                        self.operand(i, "operand", l, "an integer or i1 type", int_or_bool)
                    }
                }
                vec![self.ty(l)]
            }
            Op::Fma { a, b, c } => {
                self.same(i, "operand types differ", *a, *b);
                self.same(i, "operand types differ", *a, *c);
                self.operand(i, "operand", *a, "a float type", float);
                vec![self.ty(*a)]
            }
            Op::Cmp { op: c, lhs, rhs } => {
                self.same(i, "operand types differ", *lhs, *rhs);
                if !matches!(c, CmpOp::Eq | CmpOp::Ne) {
                    self.operand(i, "operand", *lhs, "an integer or float type", int_or_float);
                }
                vec![Type::vector(ScalarType::I1, self.ty(*lhs).lanes)]
            }
            Op::Select { cond, if_true, if_false } => {
                self.operand(i, "condition", *cond, "i1", scalar_bool);
                self.same(i, "arm types differ", *if_true, *if_false);
                vec![self.ty(*if_true)]
            }
            Op::Convert { to, arg } => {
                let numeric =
                    |t: Type| !t.is_vector() && (t.scalar.is_int() || t.scalar.is_float());
                self.operand(i, "operand", *arg, "a scalar (integer, float or i1)", |t| {
                    numeric(t) || t == Type::BOOL
                });
                if !numeric(*to) {
                    self.at(
                        i,
                        format!("target type: expected a scalar integer or float, found {to}"),
                    );
                }
                vec![*to]
            }
            Op::Bitcast { to, arg } => {
                let t = self.ty(*arg);
                if t.bytes() != to.bytes() {
                    self.at(
                        i,
                        format!(
                            "size: expected {to} ({} bytes) to have the size of {t} ({arg}), found \
                             {} bytes",
                            to.bytes(),
                            t.bytes()
                        ),
                    );
                }
                if t.scalar == ScalarType::I1 || to.scalar == ScalarType::I1 {
                    self.at(i, format!("types: expected no i1, found {t} to {to}"));
                }
                vec![*to]
            }
            Op::Extract { vector, lane } => {
                let t = self.ty(*vector);
                if !t.is_vector() {
                    self.at(i, format!("operand {vector}: expected a vector, found {t}"));
                } else if *lane >= t.lanes {
                    self.at(
                        i,
                        format!("lane: expected below {} (lanes of {t}), found {lane}", t.lanes),
                    );
                }
                vec![t.element()]
            }
            Op::MakeVector { ty, elems } => {
                if !ty.is_vector() {
                    self.at(i, format!("type: expected a vector type, found {ty}"));
                }
                if elems.len() != ty.lanes as usize {
                    self.at(
                        i,
                        format!(
                            "elements: expected {} (lanes of {ty}), found {}",
                            ty.lanes,
                            elems.len()
                        ),
                    );
                }
                for &e in elems {
                    let want = ty.element();
                    self.operand(i, "element", e, &want.to_string(), |t| t == want);
                }
                vec![*ty]
            }
            Op::Load { mem, index, ty } => {
                self.index(i, *index);
                self.mem(i, mem, Access::Read, "load");
                vec![*ty]
            }
            Op::Store { mem, index, .. } => {
                self.index(i, *index);
                self.mem(i, mem, Access::Write, "store");
                vec![]
            }
            Op::Atomic { mem, index, value, .. } => {
                self.index(i, *index);
                self.mem(i, mem, Access::ReadWrite, "atomic");
                self.operand(i, "value", *value, "a scalar 32- or 64-bit integer", |t| {
                    !t.is_vector() && t.scalar.is_int() && t.scalar.bits() >= 32
                });
                if let MemRef::Private(s) = mem {
                    self.at(i, format!("memory: expected global memory or LDS, found private {s}"));
                }
                vec![self.ty(*value)]
            }
            Op::Fence(_) | Op::Barrier(_) => vec![],
            Op::Shuffle { mode, value, offset } => {
                let lo = if *mode == ShuffleMode::Xor { 1 } else { 0 };
                if *offset < lo || *offset >= wave {
                    self.at(
                        i,
                        format!(
                            "offset: expected {lo}..{wave} (the wave size is {wave}), found {offset}"
                        ),
                    );
                }
                vec![self.ty(*value)]
            }
            Op::ShuffleIdx { value, lane } => {
                self.operand(i, "lane", *lane, "u32", |t| t == Type::U32);
                vec![self.ty(*value)]
            }
            Op::Broadcast { value, lane } => {
                if *lane >= wave {
                    self.at(i, format!("lane: expected below the wave size {wave}, found {lane}"));
                }
                vec![self.ty(*value)]
            }
            Op::Ballot { cond } => {
                self.operand(i, "condition", *cond, "i1", scalar_bool);
                vec![Type::U64]
            }
            Op::WaveReduce { value, .. } => {
                self.operand(i, "value", *value, "a scalar integer or float", |t| {
                    !t.is_vector() && int_or_float(t)
                });
                vec![self.ty(*value)]
            }
            Op::WaveArgmax { value, index } => {
                self.operand(i, "value", *value, "a scalar float", |t| !t.is_vector() && float(t));
                self.operand(i, "index", *index, "u32", |t| t == Type::U32);
                vec![self.ty(*value), Type::U32]
            }
            Op::Tsum { p, values } => {
                if !p.is_power_of_two() || *p > wave {
                    self.at(
                        i,
                        format!(
                            "p: expected a power of two in 1..={wave} (the wave size), found {p}"
                        ),
                    );
                }
                if values.is_empty() || values.len() > *p as usize {
                    self.at(
                        i,
                        format!(
                            "values: expected 1..={p} (one per token, p = {p}), found {}",
                            values.len()
                        ),
                    );
                }
                let &first = values.first()?;
                self.operand(i, "value", first, "a scalar float", |t| !t.is_vector() && float(t));
                for &v in &values[1..] {
                    self.same(i, "value types differ", first, v);
                }
                vec![self.ty(first)]
            }
            Op::If { cond, then_block, else_block } => {
                self.operand(i, "condition", *cond, "i1", scalar_bool);
                let want: Vec<Type> = k.insts[i].results.iter().map(|&r| self.ty(r)).collect();
                for (role, b) in [("then block", *then_block), ("else block", *else_block)] {
                    let n = k.blocks[b].params.len();
                    if n != 0 {
                        self.at(i, format!("{role} {b}: expected no parameters, found {n}"));
                    }
                    self.check_yield(i, role, b, &want, "the if's result types");
                }
                return None;
            }
            Op::For { start, end, step, unroll, init, body } => {
                let t = self.ty(*start);
                if !is_index(t) {
                    self.at(i, format!("start {start}: expected u32 or i32, found {t}"));
                }
                self.same(i, "end type differs from start", *start, *end);
                self.same(i, "step type differs from start", *start, *step);
                let const_step = if is_index(self.ty(*step)) { self.const_of(*step) } else { None };
                if let Some(s) = const_step {
                    let positive = match self.ty(*step) {
                        Type::I32 => (s as u32 as i32) > 0,
                        _ => s > 0,
                    };
                    if !positive {
                        let shown = crate::print::const_value(self.ty(*step), s);
                        self.at(
                            i,
                            format!("step {step}: expected a positive constant, found {shown}"),
                        );
                    }
                }
                if *unroll == 0 {
                    self.at(i, "unroll: expected at least 1 (1: no unrolling), found 0");
                }
                let carried: Vec<Type> = init.iter().map(|&v| self.ty(v)).collect();
                let mut params_want = vec![t];
                params_want.extend(&carried);
                let params: Vec<Type> =
                    k.blocks[*body].params.iter().map(|&v| self.ty(v)).collect();
                if params != params_want {
                    self.at(
                        i,
                        format!(
                            "body {body} parameters: expected [index, carried...] of types ({}), found ({})",
                            ty_list(&params_want),
                            ty_list(&params)
                        ),
                    );
                }
                self.check_yield(i, "body", *body, &carried, "the carried types");
                carried
            }
            Op::Yield(_) => vec![],
        };
        Some(r)
    }

    /// The bits of `v` when a `const` defines it.
    fn const_of(&self, v: Value) -> Option<u64> {
        match self.k.values[v].def {
            ValueDef::Result(d, _) => match self.k.insts[d].op {
                Op::Const { bits, .. } => Some(bits),
                _ => None,
            },
            ValueDef::Param(..) => None,
        }
    }

    /// Checks that nested block `b` of `i` yields values of types `want`. A missing yield is a
    /// layout error, reported there.
    fn check_yield(&mut self, i: Inst, role: &str, b: Block, want: &[Type], what: &str) {
        let k = self.k;
        let Some(&last) = k.blocks[b].insts.last() else {
            return;
        };
        let Op::Yield(vals) = &k.insts[last].op else {
            return;
        };
        let found: Vec<Type> = vals.iter().map(|&v| self.ty(v)).collect();
        if found.len() != want.len() {
            self.at(
                i,
                format!(
                    "{role} {b} yields {} values ({}): expected {} ({what}: {})",
                    found.len(),
                    ty_list(&found),
                    want.len(),
                    ty_list(want)
                ),
            );
            return;
        }
        for (n, ((&v, &t), &w)) in vals.iter().zip(&found).zip(want).enumerate() {
            if t != w {
                self.at(
                    i,
                    format!("{role} {b} yields {v} as value {n}: expected {w} ({what}), found {t}"),
                );
            }
        }
    }

    fn index(&mut self, i: Inst, index: Value) {
        self.operand(i, "index", index, "u32 or i32", is_index);
    }

    /// Checks a memory reference for an access needing `need`.
    fn mem(&mut self, i: Inst, mem: &MemRef, need: Access, what: &str) {
        match mem {
            MemRef::Buffer(p) => match &self.k.params[*p].kind {
                ParamKind::Scalar(s) => {
                    let d = self.param_desc(*p);
                    self.at(i, format!("memory: expected a buffer, found {d}, a scalar {s}"));
                }
                ParamKind::Buffer { access, .. } => {
                    let ok =
                        (!need.reads() || access.reads()) && (!need.writes() || access.writes());
                    if !ok {
                        let d = self.param_desc(*p);
                        self.at(
                            i,
                            format!(
                                "{what} on {d}: expected a buffer with {} access, found {}",
                                need.name(),
                                access.name()
                            ),
                        );
                    }
                }
            },
            MemRef::Global(a) => self.operand(i, "address", *a, "u64", |t| t == Type::U64),
            MemRef::Lds(_) | MemRef::Private(_) => {}
        }
    }

    // ---- target ----

    /// Everything that depends on the target. Per-op legality goes in the `match` below; it is
    /// exhaustive so that a new op has to decide.
    fn check_target(&mut self, t: &Target) {
        let k = self.k;
        if (k.wave_size == 32 || k.wave_size == 64) && !t.supports_wave(k.wave_size) {
            let waves: Vec<String> = t.wave_sizes.iter().map(|w| w.to_string()).collect();
            self.report(
                Location::Kernel,
                format!("wave size on {t}: expected {}, found {}", waves.join(" or "), k.wave_size),
            );
        }
        let lds = k.lds_bytes();
        if lds > t.lds_per_workgroup {
            self.report(
                Location::Kernel,
                format!(
                    "LDS on {t}: expected at most {} bytes a workgroup, found {lds} ({} over)",
                    t.lds_per_workgroup,
                    lds - t.lds_per_workgroup
                ),
            );
        }
        for (i, d) in &k.insts {
            let refused: Option<String> = match &d.op {
                Op::Const { .. }
                | Op::Arg(_)
                | Op::BufferAddr(_)
                | Op::Id(_)
                | Op::Unary { .. }
                | Op::Binary { .. }
                | Op::Fma { .. }
                | Op::Cmp { .. }
                | Op::Select { .. }
                | Op::Convert { .. }
                | Op::Bitcast { .. }
                | Op::Extract { .. }
                | Op::MakeVector { .. }
                | Op::Load { .. }
                | Op::Store { .. }
                | Op::Atomic { .. }
                | Op::Fence(_)
                | Op::Barrier(_)
                | Op::Shuffle { .. }
                | Op::ShuffleIdx { .. }
                | Op::Broadcast { .. }
                | Op::Ballot { .. }
                | Op::WaveReduce { .. }
                | Op::WaveArgmax { .. }
                | Op::Tsum { .. }
                | Op::If { .. }
                | Op::For { .. }
                | Op::Yield(_) => None,
            };
            if let Some(why) = refused {
                self.at(i, format!("not supported on {t}: {why}"));
            }
        }
    }

    // ---- scoping ----

    fn check_scoping(&mut self, layout: &Layout) {
        let mut visible: SecondaryMap<Value, bool> = SecondaryMap::new();
        let mut defined: Vec<Value> = Vec::new();
        self.scope_block(layout, self.k.entry, &mut visible, &mut defined);
    }

    fn scope_block(
        &mut self,
        layout: &Layout,
        b: Block,
        visible: &mut SecondaryMap<Value, bool>,
        defined: &mut Vec<Value>,
    ) {
        let k = self.k;
        let mark = defined.len();
        for &p in &k.blocks[b].params {
            visible[p] = true;
            defined.push(p);
        }
        for &i in &k.blocks[b].insts {
            let d = &k.insts[i];
            let mut args = d.op.args();
            args.sort();
            args.dedup();
            for v in args {
                if !visible[v] {
                    let msg = self.scope_error(layout, b, v);
                    self.at(i, msg);
                }
            }
            for nb in d.op.blocks() {
                self.scope_block(layout, nb, visible, defined);
            }
            for &r in &d.results {
                visible[r] = true;
                defined.push(r);
            }
        }
        for v in defined.drain(mark..) {
            visible[v] = false;
        }
    }

    fn scope_error(&self, layout: &Layout, used_in: Block, v: Value) -> String {
        let (def_block, found) = match self.k.values[v].def {
            ValueDef::Result(d, _) => {
                (layout.inst_block[d], format!("a result of {}", self.inst_desc(d)))
            }
            ValueDef::Param(pb, n) => (Some(pb), format!("parameter {n}")),
        };
        let expected = format!("expected a value defined in {used_in} or a block enclosing it");
        match def_block {
            None => format!("operand {v}: {expected}, found {found}, which is in no block"),
            Some(db) if layout.encloses(db, used_in) => {
                format!("operand {v}: expected a definition before this use, found {found} after it")
            }
            Some(db) => format!(
                "operand {v}: {expected}, found {found} of {db} ({}), which does not enclose this use",
                self.block_desc(layout, db)
            ),
        }
    }

    // ---- barriers ----

    fn check_barriers(&mut self, layout: &Layout) {
        let k = self.k;
        let info = uniformity::analyze(k);
        for (i, d) in &k.insts {
            if !matches!(d.op, Op::Barrier(_)) {
                continue;
            }
            let Some(b) = layout.inst_block[i] else {
                continue;
            };
            if info.block(b) == Uniformity::WorkgroupUniform {
                continue;
            }
            // The enclosing ops, outermost first; report the first that makes control non-uniform.
            let mut ops = Vec::new();
            let mut cur = b;
            while let Some(op) = layout.block_parent[cur] {
                ops.push(op);
                match layout.inst_block[op] {
                    Some(up) => cur = up,
                    None => break,
                }
            }
            let culprit = ops.iter().rev().find_map(|&op| {
                let conds: Vec<(&str, Value)> = match &k.insts[op].op {
                    Op::If { cond, .. } => vec![("the condition", *cond)],
                    Op::For { start, end, step, .. } => {
                        vec![("the start", *start), ("the end", *end), ("the step", *step)]
                    }
                    _ => vec![],
                };
                conds
                    .into_iter()
                    .find(|&(_, v)| info.value(v) != Uniformity::WorkgroupUniform)
                    .map(|(role, v)| (op, role, v))
            });
            let found = match culprit {
                Some((op, role, v)) => {
                    format!("{v} ({}) as {role} of {}", info.value(v), self.inst_desc(op))
                }
                None => format!("{} control", info.block(b)),
            };
            self.at(
                i,
                format!(
                    "barrier under non-uniform control flow: expected workgroup-uniform conditions, \
                     found {found}"
                ),
            );
        }
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
