//! `KernelBuilder`: writes kernels in Rust. Structured control flow takes closures, so a kernel
//! reads like the loop nest it is:
//!
//! ```
//! use kiln_ir::*;
//! let mut b = KernelBuilder::new("wave_sum", 32);
//! b.workgroup_size([32, 1, 1]);
//! let x = b.buffer("x", ScalarType::F32, Access::Read);
//! let out = b.buffer("out", ScalarType::F32, Access::Write);
//! let lane = b.lane();
//! let v = b.load(x, lane, Type::F32);
//! let s = b.wave_reduce(ReduceOp::Add, v);
//! let zero = b.u32(0);
//! let first = b.eq(lane, zero);
//! b.if_then(first, |b| b.store(out, zero, s));
//! let kernel = b.finish();
//! assert!(verify(&kernel, None).is_ok());
//! ```

use crate::entities::{Block, Inst, LdsSlot, Param, PrivateSlot, Value};
use crate::kernel::*;
use crate::matrix::{AffineCoord, FragLayout, FragmentRole, MmaKind};
use crate::ops::*;
use crate::types::{ScalarType, Type};
use cranelift_entity::PrimaryMap;
use smallvec::SmallVec;

impl From<Param> for MemRef {
    fn from(p: Param) -> MemRef {
        MemRef::Buffer(p)
    }
}
impl From<LdsSlot> for MemRef {
    fn from(s: LdsSlot) -> MemRef {
        MemRef::Lds(s)
    }
}
impl From<PrivateSlot> for MemRef {
    fn from(s: PrivateSlot) -> MemRef {
        MemRef::Private(s)
    }
}

/// Builds a [`Kernel`]. The builder does not check types; [`crate::verify`] does.
pub struct KernelBuilder {
    k: Kernel,
    cur: Block,
}

impl KernelBuilder {
    /// A new kernel with the given wave size (32 or 64) and a 1-D workgroup of one wave.
    pub fn new(name: impl Into<String>, wave_size: u32) -> KernelBuilder {
        let mut blocks = PrimaryMap::new();
        let entry = blocks.push(BlockData::default());
        let one = ShapeExpr::constant(1);
        KernelBuilder {
            k: Kernel {
                name: name.into(),
                wave_size,
                workgroup_size: [wave_size, 1, 1],
                consts: ConstParams::new(),
                grid: [one.clone(), one.clone(), one],
                params: PrimaryMap::new(),
                lds: PrimaryMap::new(),
                private: PrimaryMap::new(),
                values: PrimaryMap::new(),
                insts: PrimaryMap::new(),
                blocks,
                entry,
                max_registers: None,
            },
            cur: entry,
        }
    }

    /// The kernel built so far.
    pub fn kernel(&self) -> &Kernel {
        &self.k
    }

    /// Finishes the kernel.
    pub fn finish(self) -> Kernel {
        self.k
    }

    /// Sets the workgroup size.
    pub fn workgroup_size(&mut self, size: [u32; 3]) {
        self.k.workgroup_size = size;
    }

    /// Caps the registers a lane may use ([`crate::Kernel::max_registers`]).
    pub fn max_registers(&mut self, n: u32) {
        self.k.max_registers = Some(n);
    }

    /// Records a compile-time parameter (tile shape or knob).
    pub fn const_param(&mut self, name: impl Into<String>, value: i64) {
        self.k.consts.insert(name.into(), value);
    }

    /// Sets the launch grid, in workgroups.
    pub fn grid(&mut self, grid: [ShapeExpr; 3]) {
        self.k.grid = grid;
    }

    /// Adds a buffer parameter.
    pub fn buffer(&mut self, name: impl Into<String>, elem: ScalarType, access: Access) -> Param {
        self.k.params.push(ParamData {
            name: name.into(),
            kind: ParamKind::Buffer { elem, access, len: None },
            workspace: false,
            rules: Vec::new(),
        })
    }

    /// Adds a buffer parameter with a minimum length (elements) checked before launch.
    pub fn buffer_with_len(
        &mut self,
        name: impl Into<String>,
        elem: ScalarType,
        access: Access,
        len: ShapeExpr,
    ) -> Param {
        self.k.params.push(ParamData {
            name: name.into(),
            kind: ParamKind::Buffer { elem, access, len: Some(len) },
            workspace: false,
            rules: Vec::new(),
        })
    }

    /// Adds a workspace buffer of `len` elements: allocated zero-filled by the runtime, not passed
    /// by the caller; the kernel must leave it zeroed (so graph replays stay correct).
    pub fn workspace(
        &mut self,
        name: impl Into<String>,
        elem: ScalarType,
        len: ShapeExpr,
    ) -> Param {
        self.k.params.push(ParamData {
            name: name.into(),
            kind: ParamKind::Buffer { elem, access: Access::ReadWrite, len: Some(len) },
            workspace: true,
            rules: Vec::new(),
        })
    }

    /// Sets the minimum length of a buffer parameter.
    pub fn set_buffer_len(&mut self, p: Param, l: ShapeExpr) {
        if let ParamKind::Buffer { len, .. } = &mut self.k.params[p].kind {
            *len = Some(l);
        }
    }

    /// Adds a scalar parameter.
    pub fn scalar_param(&mut self, name: impl Into<String>, ty: ScalarType) -> Param {
        self.k.params.push(ParamData {
            name: name.into(),
            kind: ParamKind::Scalar(ty),
            workspace: false,
            rules: Vec::new(),
        })
    }

    /// Adds a rule the scalar parameter `p` must satisfy at launch (checked before any launch by
    /// [`Kernel::check_scalars`]), e.g. `ScalarRule::MultipleOf(32)` for a kernel that works in
    /// blocks of 32.
    pub fn scalar_rule(&mut self, p: Param, rule: ScalarRule) {
        self.k.params[p].rules.push(rule);
    }

    /// Adds a static LDS allocation.
    pub fn lds(&mut self, name: impl Into<String>, elem: ScalarType, len: u32) -> LdsSlot {
        self.k.lds.push(LdsData { name: name.into(), elem, len })
    }

    /// Adds a per-lane array.
    pub fn private(&mut self, name: impl Into<String>, elem: ScalarType, len: u32) -> PrivateSlot {
        self.k.private.push(PrivateData { name: name.into(), elem, len })
    }

    // ---- raw instruction insertion ----

    fn make_value(&mut self, ty: Type, def: ValueDef) -> Value {
        self.k.values.push(ValueData { ty, def })
    }

    /// Appends an instruction with results of the given types; returns the instruction.
    pub fn push_inst(&mut self, op: Op, result_types: &[Type]) -> Inst {
        let inst = self.k.insts.push(InstData { op, results: SmallVec::new() });
        for (n, &ty) in result_types.iter().enumerate() {
            let v = self.make_value(ty, ValueDef::Result(inst, n as u32));
            self.k.insts[inst].results.push(v);
        }
        self.k.blocks[self.cur].insts.push(inst);
        inst
    }

    fn push1(&mut self, op: Op, ty: Type) -> Value {
        let i = self.push_inst(op, &[ty]);
        self.k.insts[i].results[0]
    }

    fn push0(&mut self, op: Op) {
        self.push_inst(op, &[]);
    }

    fn ty(&self, v: Value) -> Type {
        self.k.values[v].ty
    }

    /// The type of a value built so far.
    pub fn type_of(&self, v: Value) -> Type {
        self.ty(v)
    }

    // ---- constants and parameters ----

    /// A constant from its bit pattern.
    pub fn const_bits(&mut self, ty: impl Into<Type>, bits: u64) -> Value {
        let ty = ty.into();
        self.push1(Op::Const { ty, bits }, ty)
    }
    /// A `u32` constant.
    pub fn u32(&mut self, v: u32) -> Value {
        self.const_bits(Type::U32, v as u64)
    }
    /// An `i32` constant.
    pub fn i32(&mut self, v: i32) -> Value {
        self.const_bits(Type::I32, v as u32 as u64)
    }
    /// A `u64` constant.
    pub fn u64(&mut self, v: u64) -> Value {
        self.const_bits(Type::U64, v)
    }
    /// An `f32` constant.
    pub fn f32(&mut self, v: f32) -> Value {
        self.const_bits(Type::F32, v.to_bits() as u64)
    }
    /// An `f64` constant.
    pub fn f64(&mut self, v: f64) -> Value {
        self.const_bits(Type::F64, v.to_bits())
    }
    /// An `f16` constant (rounded to nearest even).
    pub fn f16(&mut self, v: f32) -> Value {
        self.const_bits(Type::F16, half::f16::from_f32(v).to_bits() as u64)
    }
    /// An `i1` constant.
    pub fn bool(&mut self, v: bool) -> Value {
        self.const_bits(Type::BOOL, v as u64)
    }
    /// The value of a scalar parameter.
    pub fn arg(&mut self, p: Param) -> Value {
        let ty = match self.k.params[p].kind {
            ParamKind::Scalar(s) => Type::scalar(s),
            ParamKind::Buffer { .. } => Type::U64,
        };
        self.push1(Op::Arg(p), ty)
    }
    /// The address of a buffer parameter.
    pub fn buffer_addr(&mut self, p: Param) -> Value {
        self.push1(Op::BufferAddr(p), Type::U64)
    }

    // ---- ids ----

    /// A hardware id (`u32`).
    pub fn id(&mut self, kind: IdKind) -> Value {
        self.push1(Op::Id(kind), Type::U32)
    }
    /// Lane within the wave.
    pub fn lane(&mut self) -> Value {
        self.id(IdKind::Lane)
    }
    /// Wave within the workgroup.
    pub fn wave(&mut self) -> Value {
        self.id(IdKind::Wave)
    }
    /// Linear local id.
    pub fn local_id(&mut self) -> Value {
        self.id(IdKind::LocalLinear)
    }
    /// Workgroup id along a dimension.
    pub fn workgroup_id(&mut self, d: Dim) -> Value {
        self.id(IdKind::WorkgroupId(d))
    }
    /// Number of workgroups along a dimension.
    pub fn num_workgroups(&mut self, d: Dim) -> Value {
        self.id(IdKind::NumWorkgroups(d))
    }

    // ---- arithmetic ----

    /// One-operand op.
    pub fn unary(&mut self, op: UnaryOp, arg: Value) -> Value {
        let t = self.ty(arg);
        let ty = if op == UnaryOp::IsNan { Type::vector(ScalarType::I1, t.lanes) } else { t };
        self.push1(Op::Unary { op, arg }, ty)
    }
    /// Two-operand op.
    pub fn binary(&mut self, op: BinaryOp, lhs: Value, rhs: Value) -> Value {
        let ty = self.ty(lhs);
        self.push1(Op::Binary { op, lhs, rhs }, ty)
    }
    /// `a + b`
    pub fn add(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Add, a, b)
    }
    /// `a - b`
    pub fn sub(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Sub, a, b)
    }
    /// `a * b`
    pub fn mul(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Mul, a, b)
    }
    /// `a / b`
    pub fn div(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Div, a, b)
    }
    /// `a % b`
    pub fn rem(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Rem, a, b)
    }
    /// `min(a, b)`
    pub fn min(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Min, a, b)
    }
    /// `max(a, b)`
    pub fn max(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Max, a, b)
    }
    /// `a & b`
    pub fn and(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::And, a, b)
    }
    /// `a | b`
    pub fn or(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Or, a, b)
    }
    /// `a ^ b`
    pub fn xor(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Xor, a, b)
    }
    /// `a << b`
    pub fn shl(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Shl, a, b)
    }
    /// `a >> b`
    pub fn shr(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Shr, a, b)
    }
    /// `-a`
    pub fn neg(&mut self, a: Value) -> Value {
        self.unary(UnaryOp::Neg, a)
    }
    /// `!a`
    pub fn not(&mut self, a: Value) -> Value {
        self.unary(UnaryOp::Not, a)
    }
    /// `|a|`
    pub fn abs(&mut self, a: Value) -> Value {
        self.unary(UnaryOp::Abs, a)
    }
    /// Correctly rounded square root.
    pub fn sqrt(&mut self, a: Value) -> Value {
        self.unary(UnaryOp::Sqrt, a)
    }
    /// `a * b + c`, one rounding.
    pub fn fma(&mut self, a: Value, b: Value, c: Value) -> Value {
        let ty = self.ty(a);
        self.push1(Op::Fma { a, b, c }, ty)
    }
    /// Byte permute: result byte `i` is byte `sel[i]` (`0..=7`) of the little-endian `b:a`.
    pub fn perm(&mut self, a: Value, b: Value, sel: [u8; 4]) -> Value {
        self.push1(Op::Perm { a, b, sel }, Type::U32)
    }
    /// A packed dot product; the result is `i32`, `u32` for [`DotOp::U8`], `f32` for the f16
    /// flavours.
    pub fn dot(&mut self, op: DotOp, a: Value, b: Value, acc: Value) -> Value {
        let ty = match op {
            DotOp::I8 | DotOp::I8U8 => Type::I32,
            DotOp::U8 => Type::U32,
            DotOp::F16 | DotOp::F16Approx => Type::F32,
        };
        self.push1(Op::Dot { op, a, b, acc }, ty)
    }
    /// A packed conversion.
    pub fn packed_convert(&mut self, op: PackedConvertOp, arg: Value) -> Value {
        let ty = op.types().1;
        self.push1(Op::PackedConvert { op, arg }, ty)
    }
    /// A comparison.
    pub fn cmp(&mut self, op: CmpOp, lhs: Value, rhs: Value) -> Value {
        let t = self.ty(lhs);
        self.push1(Op::Cmp { op, lhs, rhs }, Type::vector(ScalarType::I1, t.lanes))
    }
    /// `a == b`
    pub fn eq(&mut self, a: Value, b: Value) -> Value {
        self.cmp(CmpOp::Eq, a, b)
    }
    /// `a != b`
    pub fn ne(&mut self, a: Value, b: Value) -> Value {
        self.cmp(CmpOp::Ne, a, b)
    }
    /// `a < b`
    pub fn lt(&mut self, a: Value, b: Value) -> Value {
        self.cmp(CmpOp::Lt, a, b)
    }
    /// `a <= b`
    pub fn le(&mut self, a: Value, b: Value) -> Value {
        self.cmp(CmpOp::Le, a, b)
    }
    /// `a > b`
    pub fn gt(&mut self, a: Value, b: Value) -> Value {
        self.cmp(CmpOp::Gt, a, b)
    }
    /// `a >= b`
    pub fn ge(&mut self, a: Value, b: Value) -> Value {
        self.cmp(CmpOp::Ge, a, b)
    }
    /// `cond ? t : f`
    pub fn select(&mut self, cond: Value, t: Value, f: Value) -> Value {
        let ty = self.ty(t);
        self.push1(Op::Select { cond, if_true: t, if_false: f }, ty)
    }
    /// Numeric conversion.
    pub fn convert(&mut self, arg: Value, to: impl Into<Type>) -> Value {
        let to = to.into();
        self.push1(Op::Convert { to, arg }, to)
    }
    /// Bit reinterpretation.
    pub fn bitcast(&mut self, arg: Value, to: impl Into<Type>) -> Value {
        let to = to.into();
        self.push1(Op::Bitcast { to, arg }, to)
    }
    /// Element of a vector.
    pub fn extract(&mut self, vector: Value, lane: u8) -> Value {
        let ty = self.ty(vector).element();
        self.push1(Op::Extract { vector, lane }, ty)
    }
    /// A vector from scalars.
    pub fn make_vector(&mut self, elems: &[Value]) -> Value {
        let e = self.ty(elems[0]);
        let ty = Type::vector(e.scalar, elems.len() as u8);
        self.push1(Op::MakeVector { ty, elems: elems.iter().copied().collect() }, ty)
    }

    // ---- memory ----

    /// Loads `ty` at element `index` (in units of `ty`'s scalar).
    pub fn load(&mut self, mem: impl Into<MemRef>, index: Value, ty: impl Into<Type>) -> Value {
        let ty = ty.into();
        self.push1(
            Op::Load { mem: mem.into(), index, ty, align: None, unit: IndexUnit::Element },
            ty,
        )
    }
    /// Loads `ty` at `index` counting `unit`s (elements of `ty`'s scalar or bytes), assuming
    /// `align` bytes of alignment (`None`: the natural alignment); see [`IndexUnit`].
    pub fn load_with(
        &mut self,
        mem: impl Into<MemRef>,
        index: Value,
        ty: impl Into<Type>,
        unit: IndexUnit,
        align: Option<u32>,
    ) -> Value {
        let ty = ty.into();
        self.push1(Op::Load { mem: mem.into(), index, ty, align, unit }, ty)
    }
    /// Stores `value` at element `index` (in units of its scalar).
    pub fn store(&mut self, mem: impl Into<MemRef>, index: Value, value: Value) {
        self.push0(Op::Store {
            mem: mem.into(),
            index,
            value,
            align: None,
            unit: IndexUnit::Element,
        })
    }
    /// Stores `value` at `index` counting `unit`s, assuming `align` bytes of alignment (`None`:
    /// the natural alignment); see [`IndexUnit`].
    pub fn store_with(
        &mut self,
        mem: impl Into<MemRef>,
        index: Value,
        value: Value,
        unit: IndexUnit,
        align: Option<u32>,
    ) {
        self.push0(Op::Store { mem: mem.into(), index, value, align, unit })
    }
    /// Atomic read-modify-write; returns the old value.
    pub fn atomic(
        &mut self,
        op: AtomicOp,
        mem: impl Into<MemRef>,
        index: Value,
        value: Value,
        scope: Scope,
    ) -> Value {
        let ty = self.ty(value);
        self.push1(Op::Atomic { op, mem: mem.into(), index, value, scope }, ty)
    }
    /// A fence.
    pub fn fence(&mut self, scope: Scope) {
        self.push0(Op::Fence(scope))
    }
    /// A workgroup barrier.
    pub fn barrier(&mut self, kind: BarrierKind) {
        self.push0(Op::Barrier(kind))
    }
    /// Fetches the cache line holding byte `index` of buffer `p` into L2 ([`Op::Prefetch`]).
    pub fn prefetch(&mut self, p: Param, index: Value) {
        self.push0(Op::Prefetch { mem: MemRef::Buffer(p), index })
    }
    /// Copies `bytes` (4, 8 or 16) from byte `src_byte` of buffer `src` to byte `dst_byte` of
    /// LDS slot `dst`, landing by this lane's next [`KernelBuilder::async_wait`] that retires it
    /// ([`Op::AsyncCopy`]).
    pub fn async_copy(
        &mut self,
        dst: LdsSlot,
        dst_byte: Value,
        src: Param,
        src_byte: Value,
        bytes: u32,
    ) {
        self.push0(Op::AsyncCopy { dst, dst_index: dst_byte, src, src_index: src_byte, bytes })
    }

    /// Closes this lane's group of async copies and waits until at most `pending` groups are in
    /// flight ([`Op::AsyncWait`]).
    pub fn async_wait(&mut self, pending: u32) {
        self.push0(Op::AsyncWait { pending })
    }

    /// Where the kernel starts to depend on the grids before it ([`Op::GridDependencyWait`]).
    pub fn grid_dependency_wait(&mut self) {
        self.push0(Op::GridDependencyWait)
    }

    /// `matrices` 8x8 matrices of LDS slot `slot`'s 16-bit elements into the wave's lanes
    /// ([`Op::LdMatrix`]): this lane names the row whose first element is `index` (lanes `8j +
    /// r` name row `r` of matrix `j`); the result is the lane's pair of each matrix, `(g, 2t)`
    /// and `(g, 2t + 1)`, or with `trans` `(2t, g)` and `(2t + 1, g)`.
    pub fn ld_matrix(&mut self, slot: LdsSlot, index: Value, matrices: u32, trans: bool) -> Value {
        let elem = self.k.lds[slot].elem;
        let ty = Type::vector(elem, (2 * matrices) as u8);
        self.push1(Op::LdMatrix { mem: MemRef::Lds(slot), index, matrices, trans }, ty)
    }

    // ---- cross-lane ----

    /// `shuffle.xor`: lane `i` reads lane `i ^ offset`.
    pub fn shuffle_xor(&mut self, value: Value, offset: u32) -> Value {
        self.shuffle(ShuffleMode::Xor, value, offset)
    }
    /// A shuffle with an immediate offset.
    pub fn shuffle(&mut self, mode: ShuffleMode, value: Value, offset: u32) -> Value {
        let ty = self.ty(value);
        self.push1(Op::Shuffle { mode, value, offset }, ty)
    }
    /// Lane `i` reads lane `lane[i]`.
    pub fn shuffle_idx(&mut self, value: Value, lane: Value) -> Value {
        let ty = self.ty(value);
        self.push1(Op::ShuffleIdx { value, lane }, ty)
    }
    /// Every lane reads lane `lane`.
    pub fn broadcast(&mut self, value: Value, lane: u32) -> Value {
        let ty = self.ty(value);
        self.push1(Op::Broadcast { value, lane }, ty)
    }
    /// Mask of active lanes with `cond`.
    pub fn ballot(&mut self, cond: Value) -> Value {
        self.push1(Op::Ballot { cond }, Type::U64)
    }
    /// Wave-wide reduction (xor butterfly, descending offsets).
    pub fn wave_reduce(&mut self, op: ReduceOp, value: Value) -> Value {
        let ty = self.ty(value);
        self.push1(Op::WaveReduce { op, value }, ty)
    }
    /// Wave-wide argmax: returns (value, index).
    pub fn wave_argmax(&mut self, value: Value, index: Value) -> (Value, Value) {
        let ty = self.ty(value);
        let i = self.push_inst(Op::WaveArgmax { value, index }, &[ty, Type::U32]);
        let r = &self.k.insts[i].results;
        (r[0], r[1])
    }
    /// `tsum<p>` over the given per-token partial sums.
    pub fn tsum(&mut self, p: u32, values: &[Value]) -> Value {
        let ty = self.ty(values[0]);
        self.push1(Op::Tsum { p, values: values.iter().copied().collect() }, ty)
    }

    // ---- structured control flow ----

    fn new_block(&mut self, param_types: &[Type]) -> Block {
        let b = self.k.blocks.push(BlockData::default());
        for (n, &ty) in param_types.iter().enumerate() {
            let v = self.make_value(ty, ValueDef::Param(b, n as u32));
            self.k.blocks[b].params.push(v);
        }
        b
    }

    fn in_block<R>(&mut self, b: Block, f: impl FnOnce(&mut Self) -> R) -> R {
        let saved = self.cur;
        self.cur = b;
        let r = f(self);
        self.cur = saved;
        r
    }

    /// `if cond { then }` with no results.
    pub fn if_then(&mut self, cond: Value, then: impl FnOnce(&mut Self)) {
        self.if_else(
            cond,
            |b| {
                then(b);
                vec![]
            },
            |_| vec![],
        );
    }

    /// `if cond { then } else { otherwise }`; each closure returns the values it yields.
    pub fn if_else(
        &mut self,
        cond: Value,
        then: impl FnOnce(&mut Self) -> Vec<Value>,
        otherwise: impl FnOnce(&mut Self) -> Vec<Value>,
    ) -> Vec<Value> {
        let tb = self.new_block(&[]);
        let eb = self.new_block(&[]);
        let tv = self.in_block(tb, |b| {
            let v = then(b);
            b.push0(Op::Yield(v.iter().copied().collect()));
            v
        });
        self.in_block(eb, |b| {
            let v = otherwise(b);
            b.push0(Op::Yield(v.iter().copied().collect()));
        });
        let tys: Vec<Type> = tv.iter().map(|&v| self.ty(v)).collect();
        let i = self.push_inst(Op::If { cond, then_block: tb, else_block: eb }, &tys);
        self.k.insts[i].results.to_vec()
    }

    /// `for i in (start..end).step_by(step)` carrying `init`; the closure gets the index and the
    /// carried values and returns the next carried values. Returns the final carried values.
    pub fn for_range(
        &mut self,
        start: Value,
        end: Value,
        step: Value,
        unroll: u32,
        init: &[Value],
        body: impl FnOnce(&mut Self, Value, &[Value]) -> Vec<Value>,
    ) -> Vec<Value> {
        let mut ptys = vec![self.ty(start)];
        ptys.extend(init.iter().map(|&v| self.ty(v)));
        let bb = self.new_block(&ptys);
        let params = self.k.blocks[bb].params.clone();
        self.in_block(bb, |b| {
            let next = body(b, params[0], &params[1..]);
            b.push0(Op::Yield(next.into_iter().collect()));
        });
        let tys: Vec<Type> = init.iter().map(|&v| self.ty(v)).collect();
        let i = self.push_inst(
            Op::For { start, end, step, unroll, init: init.iter().copied().collect(), body: bb },
            &tys,
        );
        self.k.insts[i].results.to_vec()
    }

    // ---- matrix fragments ----

    /// A fragment of operand `role` of `kind` with every element `value` (a zero accumulator).
    pub fn fragment_splat(&mut self, kind: MmaKind, role: FragmentRole, value: Value) -> Value {
        let ty = Type::fragment(kind, role);
        let elems = (0..ty.lanes).map(|_| value).collect();
        self.push1(Op::MakeVector { ty, elems }, ty)
    }

    /// A fragment of operand `role` of `kind` from this lane's elements (in the lane map's element
    /// order, [`crate::matrix::MmaShape::coord`]): for operands loaded some other way than
    /// [`Self::frag_load`] (wide loads of consecutive elements).
    pub fn fragment_of(&mut self, kind: MmaKind, role: FragmentRole, elems: &[Value]) -> Value {
        let ty = Type::fragment(kind, role);
        assert_eq!(elems.len(), ty.lanes as usize, "fragment_of: one value an element");
        self.push1(Op::MakeVector { ty, elems: elems.iter().copied().collect() }, ty)
    }

    /// The lane's part of element `e`'s index, `base + row * rs + col * cs`, from the affine lane
    /// maps ([`crate::matrix::MmaShape::affine`]); `fields` are `t`, `q`, `h` of the lane.
    fn fragment_index(
        &mut self,
        fit: AffineCoord,
        fields: [Value; 3],
        base: Value,
        stride: Value,
        layout: FragLayout,
    ) -> Value {
        let (row, col) = self.affine_coord(fit, fields);
        let (major, minor) = match layout {
            FragLayout::RowMajor => (row, col),
            FragLayout::ColMajor => (col, row),
        };
        let off = self.mul(major, stride);
        let off = self.add(off, minor);
        self.add(base, off)
    }

    /// `(row, col)` of an affine lane map at this lane's `fields`.
    fn affine_coord(&mut self, fit: AffineCoord, fields: [Value; 3]) -> (Value, Value) {
        let mut eval = |c: [u32; 4]| {
            let mut v = self.u32(c[0]);
            for (f, &k) in fields.iter().zip(&c[1..]) {
                if k != 0 {
                    let kk = self.u32(k);
                    let term = self.mul(*f, kk);
                    v = self.add(v, term);
                }
            }
            v
        };
        let row = eval(fit.row);
        (row, eval(fit.col))
    }

    /// This lane's `(row, col)` of element `element` of operand `role` of `kind`
    /// ([`crate::matrix::MmaShape::coord`], as affine ops on the lane id): for kernels that load
    /// or use fragment elements themselves ([`Self::fragment_of`]).
    pub fn fragment_coord(
        &mut self,
        kind: MmaKind,
        role: FragmentRole,
        element: u32,
    ) -> (Value, Value) {
        let fit = kind.shape().affine(role, element).expect("every lane map is affine (tested)");
        let fields = self.lane_fields();
        self.affine_coord(fit, fields)
    }

    /// `t = lane & 3`, `q = (lane >> 2) & 3`, `h = lane >> 4`.
    fn lane_fields(&mut self) -> [Value; 3] {
        let lane = self.lane();
        let (three, two, four) = (self.u32(3), self.u32(2), self.u32(4));
        let t = self.and(lane, three);
        let q = self.shr(lane, two);
        let q = self.and(q, three);
        let h = self.shr(lane, four);
        [t, q, h]
    }

    /// Loads operand `role` of `kind` from `mem` (a matrix of `kind.elem(role)` at element
    /// `base`, `stride` elements between rows (row-major) or columns (column-major); `u32`).
    /// Each lane loads the elements its lane map gives it, one scalar load each; on gfx11 A/B the
    /// lanes 16-31 load the same elements as lanes 0-15, filling both copies. Written once from
    /// [`crate::matrix::MmaShape::affine`], for every shape.
    pub fn frag_load(
        &mut self,
        kind: MmaKind,
        role: FragmentRole,
        mem: impl Into<MemRef>,
        base: Value,
        stride: Value,
        layout: FragLayout,
    ) -> Value {
        let mem = mem.into();
        let ty = Type::fragment(kind, role);
        let fields = self.lane_fields();
        let mut elems = SmallVec::new();
        for e in 0..ty.lanes as u32 {
            let fit = kind.shape().affine(role, e).expect("every lane map is affine (tested)");
            let index = self.fragment_index(fit, fields, base, stride, layout);
            elems.push(self.load(mem, index, ty.element()));
        }
        self.push1(Op::MakeVector { ty, elems }, ty)
    }

    /// Stores fragment `value` (of any role; D is a C fragment) to `mem` as [`Self::frag_load`]
    /// reads it. Each element is written by its owner lane only: on gfx11 A/B, where lanes 16-31
    /// hold copies, only lanes 0-15 store.
    pub fn frag_store(
        &mut self,
        mem: impl Into<MemRef>,
        base: Value,
        stride: Value,
        layout: FragLayout,
        value: Value,
    ) {
        let mem = mem.into();
        let ty = self.ty(value);
        let frag = ty.fragment.expect("frag_store of a fragment");
        let fields = self.lane_fields();
        let store_all = |b: &mut Self| {
            for e in 0..ty.lanes as u32 {
                let fit = frag.kind.shape().affine(frag.role, e).expect("affine lane maps");
                let index = b.fragment_index(fit, fields, base, stride, layout);
                let x = b.extract(value, e as u8);
                b.store(mem, index, x);
            }
        };
        if frag.kind.shape().duplicated(frag.role) {
            let lane = self.lane();
            let sixteen = self.u32(16);
            let owner = self.lt(lane, sixteen);
            self.if_then(owner, store_all);
        } else {
            store_all(self);
        }
    }

    /// `D = A x B + C` over the wave ([`Op::Mma`]).
    pub fn mma(&mut self, kind: MmaKind, a: Value, b: Value, c: Value) -> Value {
        let ty = Type::fragment(kind, FragmentRole::C);
        self.push1(Op::Mma { kind, a, b, c }, ty)
    }
}
