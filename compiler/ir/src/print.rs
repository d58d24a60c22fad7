//! The text form of a kernel: for people (`kiln inspect --ir`), error reports and FileCheck-style
//! tests. It is deterministic (the same kernel always prints the same bytes) and unambiguous, but
//! there is no parser: serde RON ([`Kernel::to_ron`] / [`Kernel::from_ron`]) is the round-trip form.
//!
//! The printer never panics, even on a kernel the verifier rejects (handles out of range, blocks
//! nested twice): it prints what is there and marks what is missing with `?`, so a broken kernel
//! can be shown next to its verifier errors.
//!
//! # Syntax
//!
//! ```text
//! kernel wave_sum wave=32 workgroup=[32,1,1]
//!   const rows = 1                                  compile-time parameters, sorted by name
//!   grid [ceil(arg2/4), 1, 1]                        launch grid in workgroups (see below)
//!   arg0 x: buffer<f32> read len=arg2                parameters in ABI order
//!   arg1 flags: buffer<u32> read_write len=1 workspace
//!   arg2 n: u32 multiple_of=4                        a scalar parameter, with its rules
//!   lds0 partials: f32[32] offset=0 bytes=128        static LDS, 16-byte aligned offsets
//!   priv0 acc: f32[8]                                per-lane arrays
//! {
//!   v0:u32 = id lane                                 results with their types, then the op
//!   v1:f32 = load f32 arg0[v0]
//!   v3:f32 = binary add v1, v2
//!   if v5 {
//!     store arg1[v0] = v3
//!     yield
//!   } else {
//!     yield
//!   }
//!   v9:f32, v10:u32 = for v6:u32 in v7..v8 step v2 unroll 4 carry(v11:f32 = v1, v12:u32 = v0) {
//!     ...
//!     yield v13, v14
//!   }
//! }
//! ```
//!
//! - Operands are values (`v3`); memory is `argN[index]`, `ldsN[index]`, `privN[index]` or
//!   `global(vN)[index]` (a raw address).
//! - An op's own type fields are printed even where the result type repeats them
//!   (`load f32x4 ...`, `convert f32 v1`), so a kernel whose result types disagree with its ops still
//!   prints faithfully.
//! - Constants print their value in the type's own terms (`const i32 -1`, `const i1 true`); floats
//!   also print their exact bits: `const f32 1.5 (0x3fc00000)`.
//! - Shape expressions (grid, buffer lengths) are `ceil(arg2*arg3*num/den)+add`, leaving out the
//!   parts that are 1 or 0; parameters appear by handle, their names are in the header.
//! - Names that are not plain identifiers are quoted with Rust string escapes.
//! - [`print_with_ids`] adds `; instN` after each instruction and `; blockN` after each `{`, to
//!   find the entities that verifier errors name.

use crate::entities::{Block, Inst, Value};
use crate::kernel::{Kernel, ParamKind};
use crate::ops::*;
use crate::types::{ScalarType, Type};
use cranelift_entity::EntityRef;
use std::fmt::{self, Write};

/// Prints a kernel in the text form.
pub fn print(k: &Kernel) -> String {
    Printer { k, ids: false, seen: vec![false; k.blocks.len()], out: String::new() }.run()
}

/// Prints a kernel in the text form, with `; instN` / `; blockN` comments naming the entities.
pub fn print_with_ids(k: &Kernel) -> String {
    Printer { k, ids: true, seen: vec![false; k.blocks.len()], out: String::new() }.run()
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print(self))
    }
}

/// The op's name with its sub-op, as the text form and verifier errors show it:
/// `binary add`, `cmp lt`, `id lane`, `wave_reduce max`, `barrier lds`, `load`.
pub fn mnemonic(op: &Op) -> String {
    let sub: Option<String> = match op {
        Op::Id(kind) => Some(id_name(*kind)),
        Op::Unary { op, .. } => Some(unary_name(*op).into()),
        Op::Binary { op, .. } => Some(binary_name(*op).into()),
        Op::Cmp { op, .. } => Some(cmp_name(*op).into()),
        Op::Atomic { op, .. } => Some(atomic_name(*op).into()),
        Op::Fence(scope) => Some(scope_name(*scope).into()),
        Op::Barrier(kind) => Some(barrier_name(*kind).into()),
        Op::Shuffle { mode, .. } => Some(shuffle_name(*mode).into()),
        Op::WaveReduce { op, .. } => Some(reduce_name(*op).into()),
        Op::Const { .. }
        | Op::Arg(_)
        | Op::BufferAddr(_)
        | Op::Fma { .. }
        | Op::Select { .. }
        | Op::Convert { .. }
        | Op::Bitcast { .. }
        | Op::Extract { .. }
        | Op::MakeVector { .. }
        | Op::Load { .. }
        | Op::Store { .. }
        | Op::ShuffleIdx { .. }
        | Op::Broadcast { .. }
        | Op::Ballot { .. }
        | Op::WaveArgmax { .. }
        | Op::Tsum { .. }
        | Op::If { .. }
        | Op::For { .. }
        | Op::Yield(_)
        | Op::Mma { .. }
        | Op::Perm { .. }
        | Op::Prefetch { .. }
        | Op::AsyncCopy { .. }
        | Op::AsyncWait { .. }
        | Op::GridDependencyWait => None,
        Op::Dot { op, .. } => Some(dot_name(*op).into()),
        Op::PackedConvert { op, .. } => Some(packed_convert_name(*op).into()),
        Op::LdMatrix { matrices, trans, .. } => {
            Some(format!("x{matrices}{}", if *trans { " trans" } else { "" }))
        }
    };
    match sub {
        Some(s) => format!("{} {s}", op.name()),
        None => op.name().to_string(),
    }
}

/// `i8`, `u8`, `i8u8`, `f16`, `f16_approx`.
pub fn dot_name(op: DotOp) -> &'static str {
    match op {
        DotOp::I8 => "i8",
        DotOp::U8 => "u8",
        DotOp::I8U8 => "i8u8",
        DotOp::F16 => "f16",
        DotOp::F16Approx => "f16_approx",
    }
}

/// `f32x2_to_f16x2`, `i8x4_to_f32x4`, `nibbles_low`, `nibbles_high`.
pub fn packed_convert_name(op: PackedConvertOp) -> &'static str {
    match op {
        PackedConvertOp::F32x2ToF16x2 => "f32x2_to_f16x2",
        PackedConvertOp::I8x4ToF32x4 => "i8x4_to_f32x4",
        PackedConvertOp::NibblesLow => "nibbles_low",
        PackedConvertOp::NibblesHigh => "nibbles_high",
    }
}

/// `lane`, `local_id.x`, `workgroup_id.y`, ...
pub fn id_name(kind: IdKind) -> String {
    match kind {
        IdKind::Lane => "lane".into(),
        IdKind::Wave => "wave".into(),
        IdKind::NumWaves => "num_waves".into(),
        IdKind::WaveSize => "wave_size".into(),
        IdKind::LocalId(d) => format!("local_id.{}", d.name()),
        IdKind::LocalLinear => "local_linear".into(),
        IdKind::WorkgroupId(d) => format!("workgroup_id.{}", d.name()),
        IdKind::WorkgroupSize(d) => format!("workgroup_size.{}", d.name()),
        IdKind::NumWorkgroups(d) => format!("num_workgroups.{}", d.name()),
    }
}

fn unary_name(op: UnaryOp) -> &'static str {
    match op {
        UnaryOp::Neg => "neg",
        UnaryOp::Not => "not",
        UnaryOp::Abs => "abs",
        UnaryOp::Sqrt => "sqrt",
        UnaryOp::Floor => "floor",
        UnaryOp::Ceil => "ceil",
        UnaryOp::Trunc => "trunc",
        UnaryOp::Round => "round",
        UnaryOp::RoundEven => "round_even",
        UnaryOp::Exp2Approx => "exp2_approx",
        UnaryOp::Log2Approx => "log2_approx",
        UnaryOp::RsqrtApprox => "rsqrt_approx",
        UnaryOp::RcpApprox => "rcp_approx",
        UnaryOp::IsNan => "is_nan",
        UnaryOp::Popcount => "popcount",
        UnaryOp::Ctz => "ctz",
    }
}

fn binary_name(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "add",
        BinaryOp::Sub => "sub",
        BinaryOp::Mul => "mul",
        BinaryOp::Div => "div",
        BinaryOp::Rem => "rem",
        BinaryOp::Min => "min",
        BinaryOp::Max => "max",
        BinaryOp::And => "and",
        BinaryOp::Or => "or",
        BinaryOp::Xor => "xor",
        BinaryOp::Shl => "shl",
        BinaryOp::Shr => "shr",
    }
}

fn cmp_name(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "eq",
        CmpOp::Ne => "ne",
        CmpOp::Lt => "lt",
        CmpOp::Le => "le",
        CmpOp::Gt => "gt",
        CmpOp::Ge => "ge",
    }
}

fn atomic_name(op: AtomicOp) -> &'static str {
    match op {
        AtomicOp::Add => "add",
        AtomicOp::Min => "min",
        AtomicOp::Max => "max",
        AtomicOp::Exchange => "exchange",
        AtomicOp::And => "and",
        AtomicOp::Or => "or",
    }
}

fn scope_name(s: Scope) -> &'static str {
    match s {
        Scope::Workgroup => "workgroup",
        Scope::Device => "device",
    }
}

fn barrier_name(k: BarrierKind) -> &'static str {
    match k {
        BarrierKind::Lds => "lds",
        BarrierKind::All => "all",
    }
}

fn shuffle_name(m: ShuffleMode) -> &'static str {
    match m {
        ShuffleMode::Xor => "xor",
        ShuffleMode::Up => "up",
        ShuffleMode::Down => "down",
    }
}

fn reduce_name(op: ReduceOp) -> &'static str {
    match op {
        ReduceOp::Add => "add",
        ReduceOp::Min => "min",
        ReduceOp::Max => "max",
    }
}

/// A constant's value in its type's terms: `-1`, `true`, `1.5 (0x3fc00000)`. Bits that do not
/// fit the type, and vector types, print as raw bits.
pub fn const_value(ty: Type, bits: u64) -> String {
    let s = ty.scalar;
    let fits = s.bits() >= 64 || bits >> s.bits() == 0;
    if ty.lanes != 1 || !fits {
        return format!("bits=0x{bits:x}");
    }
    match s {
        ScalarType::I1 => (if bits == 1 { "true" } else { "false" }).into(),
        ScalarType::U8 | ScalarType::U16 | ScalarType::U32 | ScalarType::U64 => bits.to_string(),
        ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64 => {
            let shift = 64 - s.bits();
            (((bits << shift) as i64) >> shift).to_string()
        }
        ScalarType::F16 => {
            format!("{:?} (0x{bits:04x})", half::f16::from_bits(bits as u16).to_f32())
        }
        ScalarType::BF16 => {
            format!("{:?} (0x{bits:04x})", half::bf16::from_bits(bits as u16).to_f32())
        }
        ScalarType::F32 => format!("{:?} (0x{bits:08x})", f32::from_bits(bits as u32)),
        ScalarType::F64 => format!("{:?} (0x{bits:016x})", f64::from_bits(bits)),
    }
}

/// A shape expression: `ceil(arg2*arg3*num/den)+add`, leaving out the parts that are 1 or 0
/// ([`ShapeExpr::text`]).
pub fn shape_expr(e: &ShapeExpr) -> String {
    e.to_string()
}

fn name(n: &str) -> String {
    let plain = !n.is_empty()
        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && !n.starts_with(|c: char| c.is_ascii_digit());
    if plain {
        n.to_string()
    } else {
        format!("{n:?}")
    }
}

struct Printer<'a> {
    k: &'a Kernel,
    ids: bool,
    seen: Vec<bool>,
    out: String,
}

impl Printer<'_> {
    fn run(mut self) -> String {
        let k = self.k;
        let [x, y, z] = k.workgroup_size;
        let _ = writeln!(
            self.out,
            "kernel {} wave={} workgroup=[{x},{y},{z}]",
            name(&k.name),
            k.wave_size
        );
        for (n, v) in &k.consts {
            let _ = writeln!(self.out, "  const {} = {v}", name(n));
        }
        if let Some(cap) = k.max_registers {
            let _ = writeln!(self.out, "  max_registers {cap}");
        }
        let grid: Vec<String> = k.grid.iter().map(shape_expr).collect();
        let _ = writeln!(self.out, "  grid [{}]", grid.join(", "));
        for (p, d) in &k.params {
            let kind = match &d.kind {
                ParamKind::Buffer { elem, access, len } => {
                    let mut s = format!("buffer<{elem}> {}", access.name());
                    if let Some(len) = len {
                        let _ = write!(s, " len={}", shape_expr(len));
                    }
                    s
                }
                ParamKind::Scalar(t) => t.to_string(),
            };
            let ws = if d.workspace { " workspace" } else { "" };
            let rules: String = d.rules.iter().map(|r| format!(" {}", r.text())).collect();
            let _ = writeln!(self.out, "  {p} {}: {kind}{ws}{rules}", name(&d.name));
        }
        let offsets = k.lds_offsets();
        for ((slot, d), off) in k.lds.iter().zip(offsets) {
            let _ = writeln!(
                self.out,
                "  {slot} {}: {}[{}] offset={off} bytes={}",
                name(&d.name),
                d.elem,
                d.len,
                d.bytes()
            );
        }
        for (slot, d) in &k.private {
            let _ = writeln!(self.out, "  {slot} {}: {}[{}]", name(&d.name), d.elem, d.len);
        }
        self.out.push('{');
        self.block_id(k.entry, false);
        self.out.push('\n');
        self.block_body(k.entry, 1);
        self.out.push_str("}\n");
        self.out
    }

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
    }

    /// ` ; block1`, or ` block1` after an instruction's own comment.
    fn block_id(&mut self, b: Block, after_comment: bool) {
        if self.ids {
            let sep = if after_comment { "" } else { " ;" };
            let _ = write!(self.out, "{sep} {b}");
        }
    }

    /// `v3:f32`, or `v3:?` for a value out of range.
    fn typed(&self, v: Value) -> String {
        match self.k.values.get(v) {
            Some(d) => format!("{v}:{}", d.ty),
            None => format!("{v}:?"),
        }
    }

    fn params(&self, b: Block) -> Vec<Value> {
        self.k.blocks.get(b).map(|d| d.params.to_vec()).unwrap_or_default()
    }

    /// Prints the instructions of `b`; a block out of range, or one already printed (nested twice),
    /// prints as a marker line instead.
    fn block_body(&mut self, b: Block, depth: usize) {
        let Some(data) = self.k.blocks.get(b) else {
            self.indent(depth);
            let _ = writeln!(self.out, "? {b} is out of range");
            return;
        };
        if std::mem::replace(&mut self.seen[b.index()], true) {
            self.indent(depth);
            let _ = writeln!(self.out, "? {b} is already printed above");
            return;
        }
        for &i in &data.insts {
            self.inst(i, depth);
        }
    }

    fn nested(&mut self, b: Block, depth: usize, after_comment: bool) {
        self.block_id(b, after_comment);
        self.out.push('\n');
        self.block_body(b, depth + 1);
        self.indent(depth);
        self.out.push('}');
    }

    fn mem(&self, m: &MemRef, index: Value) -> String {
        match m {
            MemRef::Buffer(p) => format!("{p}[{index}]"),
            MemRef::Lds(s) => format!("{s}[{index}]"),
            MemRef::Private(s) => format!("{s}[{index}]"),
            MemRef::Global(a) => format!("global({a})[{index}]"),
        }
    }

    /// `mem[index]`, or `mem[byte index]` for a byte index.
    fn mem_at(&self, m: &MemRef, index: Value, unit: IndexUnit) -> String {
        match unit {
            IndexUnit::Element => self.mem(m, index),
            IndexUnit::Byte => self.mem(m, index).replacen('[', "[byte ", 1),
        }
    }

    fn inst(&mut self, i: Inst, depth: usize) {
        self.indent(depth);
        let Some(d) = self.k.insts.get(i) else {
            let _ = writeln!(self.out, "? {i} is out of range");
            return;
        };
        if !d.results.is_empty() {
            let rs: Vec<String> = d.results.iter().map(|&r| self.typed(r)).collect();
            let _ = write!(self.out, "{} = ", rs.join(", "));
        }
        let list = |vs: &[Value]| vs.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ");
        let m = mnemonic(&d.op);
        let text = match &d.op {
            Op::Const { ty, bits } => format!("const {ty} {}", const_value(*ty, *bits)),
            Op::Arg(p) | Op::BufferAddr(p) => format!("{m} {p}"),
            Op::Id(_) | Op::Fence(_) | Op::Barrier(_) | Op::GridDependencyWait => m,
            Op::Prefetch { mem, index } => {
                format!("{m} {}", self.mem_at(mem, *index, IndexUnit::Byte))
            }
            Op::AsyncCopy { dst, dst_index, src, src_index, bytes } => format!(
                "{m} {bytes} {}, {}",
                self.mem_at(&MemRef::Lds(*dst), *dst_index, IndexUnit::Byte),
                self.mem_at(&MemRef::Buffer(*src), *src_index, IndexUnit::Byte)
            ),
            Op::AsyncWait { pending } => format!("{m} {pending}"),
            Op::Unary { arg, .. } => format!("{m} {arg}"),
            Op::Binary { lhs, rhs, .. } | Op::Cmp { lhs, rhs, .. } => format!("{m} {lhs}, {rhs}"),
            Op::Fma { a, b, c } => format!("{m} {a}, {b}, {c}"),
            Op::Select { cond, if_true, if_false } => format!("{m} {cond}, {if_true}, {if_false}"),
            Op::Convert { to, arg } | Op::Bitcast { to, arg } => format!("{m} {to} {arg}"),
            Op::Extract { vector, lane } => format!("{m} {vector}, {lane}"),
            Op::MakeVector { ty, elems } => format!("{m} {ty} {}", list(elems)),
            Op::Load { mem, index, ty, align, unit } => {
                format!("{m} {ty} {}{}", self.mem_at(mem, *index, *unit), align_text(*align))
            }
            Op::Store { mem, index, value, align, unit } => {
                format!("{m} {} = {value}{}", self.mem_at(mem, *index, *unit), align_text(*align))
            }
            Op::Atomic { mem, index, value, scope, .. } => {
                format!("{m} {} {}, {value}", scope_name(*scope), self.mem(mem, *index))
            }
            Op::Shuffle { value, offset, .. } => format!("{m} {value}, {offset}"),
            Op::ShuffleIdx { value, lane } => format!("{m} {value}, {lane}"),
            Op::Broadcast { value, lane } => format!("{m} {value}, lane {lane}"),
            Op::Ballot { cond } => format!("{m} {cond}"),
            Op::WaveReduce { value, .. } => format!("{m} {value}"),
            Op::WaveArgmax { value, index } => format!("{m} {value}, {index}"),
            Op::Tsum { p, values } => format!("tsum<{p}> {}", list(values)),
            Op::Mma { kind, a, b, c } => format!("{m} <{kind}> {a}, {b}, {c}"),
            Op::LdMatrix { mem, index, .. } => format!("{m} {}", self.mem(mem, *index)),
            Op::Yield(vals) if vals.is_empty() => m,
            Op::Yield(vals) => format!("{m} {}", list(vals)),
            Op::Perm { a, b, sel } => {
                let [s0, s1, s2, s3] = sel;
                format!("{m} {a}, {b}, [{s0}, {s1}, {s2}, {s3}]")
            }
            Op::Dot { a, b, acc, .. } => format!("{m} {a}, {b}, {acc}"),
            Op::PackedConvert { arg, .. } => format!("{m} {arg}"),
            Op::If { cond, then_block, else_block } => {
                let _ = write!(self.out, "if {cond}");
                self.block_params(*then_block);
                self.out.push_str(" {");
                self.inst_id(i);
                self.nested(*then_block, depth, true);
                self.out.push_str(" else");
                self.block_params(*else_block);
                self.out.push_str(" {");
                self.nested(*else_block, depth, false);
                self.out.push('\n');
                return;
            }
            Op::For { start, end, step, unroll, init, body } => {
                let params = self.params(*body);
                let index = params.first().map_or("?".into(), |&v| self.typed(v));
                let carried: Vec<String> = (0..init.len().max(params.len().saturating_sub(1)))
                    .map(|n| {
                        let p = params.get(n + 1).map_or("?".into(), |&v| self.typed(v));
                        let i = init.get(n).map_or("?".into(), |v| v.to_string());
                        format!("{p} = {i}")
                    })
                    .collect();
                let _ =
                    write!(self.out, "for {index} in {start}..{end} step {step} unroll {unroll}");
                if !carried.is_empty() {
                    let _ = write!(self.out, " carry({})", carried.join(", "));
                }
                self.out.push_str(" {");
                self.inst_id(i);
                self.nested(*body, depth, true);
                self.out.push('\n');
                return;
            }
        };
        self.out.push_str(&text);
        self.inst_id(i);
        self.out.push('\n');
    }

    /// An `if` block has no parameters; if a broken kernel gives it some, show them.
    fn block_params(&mut self, b: Block) {
        let ps = self.params(b);
        if !ps.is_empty() {
            let ps: Vec<String> = ps.iter().map(|&v| self.typed(v)).collect();
            let _ = write!(self.out, " ({})", ps.join(", "));
        }
    }

    fn inst_id(&mut self, i: Inst) {
        if self.ids {
            let _ = write!(self.out, " ; {i}");
        }
    }
}

/// `, align N` for a stated alignment; nothing for the natural one.
fn align_text(align: Option<u32>) -> String {
    match align {
        Some(a) => format!(", align {a}"),
        None => String::new(),
    }
}
