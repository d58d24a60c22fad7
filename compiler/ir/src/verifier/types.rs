//! Types: per op, the operand types it accepts and the result types it defines.

use super::*;

impl Verifier<'_> {
    pub(super) fn check_types(&mut self) {
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
    pub(super) fn operand(
        &mut self,
        i: Inst,
        what: &str,
        v: Value,
        want: &str,
        ok: impl Fn(Type) -> bool,
    ) {
        let t = self.ty(v);
        if !ok(t) {
            self.at(i, format!("{what} {v}: expected {want}, found {t}"));
        }
    }

    /// Checks that `v` has the type of `like`.
    pub(super) fn same(&mut self, i: Inst, what: &str, like: Value, v: Value) {
        let (a, b) = (self.ty(like), self.ty(v));
        if a != b {
            self.at(i, format!("{what}: expected {a} (type of {like}), found {b} ({v})"));
        }
    }

    /// Checks an instruction's operands; returns the result types its op defines (`None` where
    /// they are checked here, as for `if`).
    pub(super) fn op_types(&mut self, i: Inst) -> Option<Vec<Type>> {
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
            Op::Load { mem, index, ty, align, .. } => {
                self.index(i, *index);
                self.mem(i, mem, Access::Read, "load");
                self.align(i, *align, *ty);
                vec![*ty]
            }
            Op::Store { mem, index, value, align, .. } => {
                self.index(i, *index);
                self.mem(i, mem, Access::Write, "store");
                self.align(i, *align, self.ty(*value));
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
            Op::Fence(_) | Op::Barrier(_) | Op::GridDependencyWait => vec![],
            Op::Prefetch { mem, index } => {
                self.index(i, *index);
                if !matches!(mem, MemRef::Buffer(_)) {
                    self.at(
                        i,
                        format!("memory: expected a buffer (a prefetch reads L2), found {mem:?}"),
                    );
                }
                self.mem(i, mem, Access::Read, "prefetch");
                vec![]
            }
            Op::AsyncCopy { dst: _, dst_index, src, src_index, bytes } => {
                self.index(i, *dst_index);
                self.index(i, *src_index);
                self.mem(i, &MemRef::Buffer(*src), Access::Read, "async_copy");
                if !matches!(bytes, 4 | 8 | 16) {
                    self.at(i, format!("bytes: expected 4, 8 or 16, found {bytes}"));
                }
                vec![]
            }
            Op::AsyncWait { .. } => vec![],
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
                    let positive =
                        if self.ty(*step) == Type::I32 { (s as u32 as i32) > 0 } else { s > 0 };
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
            Op::Mma { kind, a, b, c } => {
                use crate::matrix::FragmentRole as R;
                let shape = kind.shape();
                if shape.wave_size() != wave {
                    self.at(
                        i,
                        format!(
                            "wave size: {kind} runs in waves of {}, found a kernel of wave size {wave}",
                            shape.wave_size()
                        ),
                    );
                }
                for (what, v, role) in [("a", *a, R::A), ("b", *b, R::B), ("c", *c, R::C)] {
                    let want = Type::fragment(*kind, role);
                    self.operand(i, what, v, &want.to_string(), |t| t == want);
                }
                vec![Type::fragment(*kind, R::C)]
            }
            Op::LdMatrix { mem, index, matrices, .. } => {
                self.index(i, *index);
                self.mem(i, mem, Access::Read, "ld_matrix");
                if wave != 32 {
                    self.at(i, format!("wave size: ld_matrix runs in waves of 32, found {wave}"));
                }
                if !matches!(matrices, 1 | 2 | 4) {
                    self.at(i, format!("matrices: expected 1, 2 or 4, found {matrices}"));
                }
                let elem = match mem {
                    MemRef::Lds(s) => k.lds.get(*s).map(|l| l.elem),
                    MemRef::Buffer(_) | MemRef::Private(_) | MemRef::Global(_) => {
                        self.at(i, format!("memory: expected an LDS slot, found {mem:?}"));
                        None
                    }
                };
                let elem = elem.unwrap_or(ScalarType::F16);
                if elem.bytes() != 2 {
                    self.at(i, format!("memory: expected 16-bit elements, found {elem}"));
                }
                vec![Type::vector(elem, (2 * (*matrices).clamp(1, 4)) as u8)]
            }
            Op::Perm { a, b, sel } => {
                self.operand(i, "operand", *a, "u32", |t| t == Type::U32);
                self.operand(i, "operand", *b, "u32", |t| t == Type::U32);
                if let Some(&s) = sel.iter().find(|&&s| s > 7) {
                    self.at(i, format!("selector: expected bytes in 0..=7, found {s} in {sel:?}"));
                }
                vec![Type::U32]
            }
            Op::Dot { op: d, a, b, acc } => {
                let (operand, accumulator) = match d {
                    DotOp::I8 | DotOp::I8U8 => (Type::U32, Type::I32),
                    DotOp::U8 => (Type::U32, Type::U32),
                    DotOp::F16 | DotOp::F16Approx => (Type::vector(ScalarType::F16, 2), Type::F32),
                };
                let want = operand.to_string();
                self.operand(i, "operand", *a, &want, |t| t == operand);
                self.operand(i, "operand", *b, &want, |t| t == operand);
                let want = accumulator.to_string();
                self.operand(i, "accumulator", *acc, &want, |t| t == accumulator);
                vec![accumulator]
            }
            Op::PackedConvert { op: c, arg } => {
                let (from, to) = c.types();
                let want = from.to_string();
                self.operand(i, "operand", *arg, &want, |t| t == from);
                vec![to]
            }
        };
        self.check_fragment_use(i);
        Some(r)
    }

    /// Only ops that know what a fragment is take or make one: element access, element-wise
    /// arithmetic and `select`, control flow carrying it, and `mma`. A plain load, store,
    /// conversion or cross-lane op of a fragment would move its 32 bytes as if they were a
    /// vector, which they are not (the lanes of a fragment are the lane maps', not memory's).
    fn check_fragment_use(&mut self, i: Inst) {
        let k = self.k;
        let d = &k.insts[i];
        let takes = match &d.op {
            Op::Unary { .. }
            | Op::Binary { .. }
            | Op::Fma { .. }
            | Op::Select { .. }
            | Op::Extract { .. }
            | Op::MakeVector { .. }
            | Op::If { .. }
            | Op::For { .. }
            | Op::Yield(_)
            | Op::Mma { .. } => true,
            Op::Const { .. }
            | Op::Arg(_)
            | Op::BufferAddr(_)
            | Op::Id(_)
            | Op::Cmp { .. }
            | Op::Convert { .. }
            | Op::Bitcast { .. }
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
            | Op::Perm { .. }
            | Op::Dot { .. }
            | Op::PackedConvert { .. }
            | Op::LdMatrix { .. }
            | Op::Prefetch { .. }
            | Op::AsyncCopy { .. }
            | Op::AsyncWait { .. }
            | Op::GridDependencyWait => false,
        };
        if takes {
            return;
        }
        let loaded = if let Op::Load { ty, .. } = &d.op { Some(*ty) } else { None };
        let vals = d.op.args().into_iter().chain(d.results.iter().copied());
        for v in vals {
            let t = self.ty(v);
            if t.is_fragment() || loaded.is_some_and(|t| t.is_fragment()) {
                let m = mnemonic(&d.op);
                self.at(
                    i,
                    format!(
                        "{v}: expected a scalar or vector, found the fragment type {t} (`{m}` does \
                         not take fragments; use the fragment loads and stores, extract or \
                         make_vector)"
                    ),
                );
                return;
            }
        }
    }

    /// The bits of `v` when a `const` defines it.
    pub(super) fn const_of(&self, v: Value) -> Option<u64> {
        match self.k.values[v].def {
            ValueDef::Result(d, _) => {
                if let Op::Const { bits, .. } = self.k.insts[d].op {
                    Some(bits)
                } else {
                    None
                }
            }
            ValueDef::Param(..) => None,
        }
    }

    /// Checks that nested block `b` of `i` yields values of types `want`. A missing yield is a
    /// layout error, reported there.
    pub(super) fn check_yield(&mut self, i: Inst, role: &str, b: Block, want: &[Type], what: &str) {
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

    pub(super) fn index(&mut self, i: Inst, index: Value) {
        self.operand(i, "index", index, "u32, i32, u64 or i64", is_mem_index);
    }

    /// A stated alignment of an access of `ty`: a power of two from 1 to its size.
    pub(super) fn align(&mut self, i: Inst, align: Option<u32>, ty: Type) {
        let Some(a) = align else { return };
        let size = ty.bytes();
        if !a.is_power_of_two() || a > size {
            self.at(
                i,
                format!(
                    "align: expected a power of two from 1 to {size} (the bytes of {ty}), found {a}"
                ),
            );
        }
    }

    /// Checks a memory reference for an access needing `need`.
    pub(super) fn mem(&mut self, i: Inst, mem: &MemRef, need: Access, what: &str) {
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
}
