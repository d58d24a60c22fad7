//! The operations. GPU vocabulary is kept as small combinable enums (naga style): a reduce op
//! times a collective, barrier kinds as what they order, ids by kind and dimension.
//!
//! Semantics that matter for bitwise parity are stated on each variant; the interpreter and
//! every back end implement exactly these.

use crate::entities::{Block, LdsSlot, Param, PrivateSlot, Value};
use crate::matrix::MmaKind;
use crate::types::Type;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

mod query;

/// One of the three grid dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Dim {
    /// x
    X,
    /// y
    Y,
    /// z
    Z,
}

impl Dim {
    /// 0, 1 or 2.
    pub fn index(self) -> usize {
        match self {
            Dim::X => 0,
            Dim::Y => 1,
            Dim::Z => 2,
        }
    }
    /// `x`, `y` or `z`.
    pub fn name(self) -> &'static str {
        ["x", "y", "z"][self.index()]
    }
}

/// Hardware ids, all `u32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum IdKind {
    /// Lane within the wave, `0..wave_size`.
    Lane,
    /// Wave within the workgroup (linear local id / wave size).
    Wave,
    /// Number of waves in the workgroup.
    NumWaves,
    /// The wave size (32 or 64).
    WaveSize,
    /// Local id within the workgroup.
    LocalId(Dim),
    /// Linear local id: `x + y*sx + z*sx*sy`.
    LocalLinear,
    /// Workgroup id within the grid.
    WorkgroupId(Dim),
    /// Workgroup size (static).
    WorkgroupSize(Dim),
    /// Number of workgroups in the grid.
    NumWorkgroups(Dim),
}

/// One-operand ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UnaryOp {
    /// Negation (floats: flips the sign bit; integers: wrapping).
    Neg,
    /// Bitwise not (integers), logical not (`i1`).
    Not,
    /// Absolute value (floats: clears the sign bit; integers: wrapping).
    Abs,
    /// Correctly rounded square root.
    Sqrt,
    /// Round toward negative infinity.
    Floor,
    /// Round toward positive infinity.
    Ceil,
    /// Round toward zero.
    Trunc,
    /// Round to nearest, halves away from zero (C `roundf`).
    Round,
    /// Round to nearest, halves to even.
    RoundEven,
    /// `2^x`, the hardware instruction: approximate (f32 only). Interpreter: within 1 ulp.
    Exp2Approx,
    /// `log2(x)`, the hardware instruction: approximate (f32 only). Interpreter: within 1 ulp.
    Log2Approx,
    /// `1/sqrt(x)`, hardware: approximate (f32 only). Interpreter: within 1 ulp.
    RsqrtApprox,
    /// `1/x`, hardware: approximate (f32 only). Interpreter: within 1 ulp.
    RcpApprox,
    /// True where the float is NaN (result `i1`).
    IsNan,
    /// Count of set bits (integers).
    Popcount,
    /// Count of trailing zero bits (integers; the bit width for zero).
    Ctz,
}

impl UnaryOp {
    /// True for the approximate (hardware) transcendental ops.
    pub fn is_approx(self) -> bool {
        matches!(
            self,
            UnaryOp::Exp2Approx | UnaryOp::Log2Approx | UnaryOp::RsqrtApprox | UnaryOp::RcpApprox
        )
    }
}

/// Two-operand ops; both operands and the result share one type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BinaryOp {
    /// Addition (integers wrap).
    Add,
    /// Subtraction (integers wrap).
    Sub,
    /// Multiplication (integers wrap).
    Mul,
    /// Division: floats correctly rounded; integers truncate (division by zero is a sanitizer error).
    Div,
    /// Remainder of integer division (sign of the dividend).
    Rem,
    /// Minimum. Floats: `a < b || b is NaN ? a : b` (so NaN is avoided when one side is a number,
    /// and for equal values (`-0`, `+0`) the second operand is returned). Lowered as compare+select.
    Min,
    /// Maximum. Floats: `a > b || b is NaN ? a : b`. Lowered as compare+select.
    Max,
    /// Bitwise and (integers, `i1`).
    And,
    /// Bitwise or.
    Or,
    /// Bitwise xor.
    Xor,
    /// Shift left; the shift amount is taken modulo the bit width.
    Shl,
    /// Shift right, arithmetic for signed types; amount modulo the bit width.
    Shr,
}

/// Comparisons; floats compare ordered (false when either side is NaN) except `Ne`,
/// which is unordered (true when either side is NaN), as in C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

/// Where a memory access goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MemRef {
    /// A buffer parameter (global memory).
    Buffer(Param),
    /// A workgroup LDS allocation.
    Lds(LdsSlot),
    /// A per-lane private array.
    Private(PrivateSlot),
    /// A raw global address (`u64`), e.g. read from a table of pointers.
    Global(Value),
}

/// Address spaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AddressSpace {
    /// Device memory (and host memory mapped into it).
    Global,
    /// Workgroup-shared memory (LDS / CUDA shared memory).
    Lds,
    /// Per-lane memory.
    Private,
}

/// Read-modify-write ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AtomicOp {
    /// Integer add (wrapping).
    Add,
    /// Integer min.
    Min,
    /// Integer max.
    Max,
    /// Swap.
    Exchange,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
}

/// How far a fence or atomic orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Scope {
    /// The workgroup.
    Workgroup,
    /// The whole device (all workgroups of the grid).
    Device,
}

/// What a barrier orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BarrierKind {
    /// Orders LDS only: on AMDGPU a workgroup fence limited to LDS, so no global cache invalidation.
    Lds,
    /// Orders LDS and global memory.
    All,
}

/// Shuffles with an immediate offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ShuffleMode {
    /// Lane `i` reads lane `i ^ offset`.
    Xor,
    /// Lane `i` reads lane `i - offset`; lanes below `offset` keep their own value.
    Up,
    /// Lane `i` reads lane `i + offset`; lanes at or past `wave - offset` keep their own value.
    Down,
}

/// Reductions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ReduceOp {
    /// Sum.
    Add,
    /// Minimum (with [`BinaryOp::Min`]'s rules).
    Min,
    /// Maximum (with [`BinaryOp::Max`]'s rules).
    Max,
}

/// Packed dot products: four 8-bit lanes of two `u32` into a 32-bit accumulator, or two f16
/// pairs into an f32 accumulator. Lane `i` of a packed `u32` is its byte `i` (little-endian).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DotOp {
    /// `acc + sum(a[i] * b[i])`, both operands signed bytes; `i32` accumulator and result,
    /// wrapping (no clamp). Needs the target's `dot4.i8`.
    I8,
    /// Unsigned bytes; `u32` accumulator and result (all four products and the unsigned sum
    /// are what the hardware computes), wrapping. Needs `dot4.u8`.
    U8,
    /// `a` signed bytes, `b` unsigned bytes; `i32` accumulator and result, wrapping. Needs
    /// `dot4.i8u8` (gfx11, gfx12, NVIDIA).
    I8U8,
    /// `fma(a0, b0, fma(a1, b1, acc))` in f32 on `f16x2` operands and an `f32` accumulator:
    /// both products are exact in f32 (11-bit significands give 22 bits), so the result is
    /// `round(a0*b0 + round(a1*b1 + acc))`, the high pair first. Exact on every target: lowered as
    /// these two f32 fma everywhere (the interpreter's bits, NaN and infinity included).
    F16,
    /// The hardware's f16 pair dot (`v_dot2_f32_f16` and its gfx90a/gfx11 forms, AMD only: needs
    /// `dot2.f16`). Approximate, like the `*Approx` unary ops: AMD does not document its rounding
    /// (one rounding of the exact sum, or the fma chain, or f32 denormals flushed), so the
    /// interpreter computes [`DotOp::F16`]'s chain, and on finite results the hardware may
    /// differ from it by at most `2^-21 * (|a0*b0| + |a1*b1| + |acc|) + 2^-126` (the last term
    /// for a flushed f32 denormal). Why: with `T = |a0*b0| + |a1*b1| + |acc|`, any evaluation
    /// that rounds at most two partial sums of the three exact terms to f32 is within
    /// `2 * 2^-24 * T * (1 + 2^-24)` of the exact sum (each rounding errs by at most half an ulp
    /// of a value no larger than `T * (1 + 2^-24)`); the chain is one such evaluation, so two of
    /// them differ by less than `2^-21 * T`.
    F16Approx,
}

impl DotOp {
    /// True for the flavour whose hardware rounding is not the interpreter's.
    pub fn is_approx(self) -> bool {
        match self {
            DotOp::F16Approx => true,
            DotOp::I8 | DotOp::U8 | DotOp::I8U8 | DotOp::F16 => false,
        }
    }
}

/// Packed conversions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PackedConvertOp {
    /// `f32x2` to `f16x2`, each rounded to nearest even (as `convert`; not the round-toward-zero
    /// `v_cvt_pkrtz`).
    F32x2ToF16x2,
    /// A `u32` holding four signed bytes (byte `i` is lane `i`) to `f32x4`, exactly.
    I8x4ToF32x4,
    /// A `u32` to a `u32` whose byte `i` is the low nibble (bits 0-3) of byte `i`: values 0..=15
    /// (ggml Q4_0 keeps a block's values 0-15 in the low nibbles).
    NibblesLow,
    /// As [`PackedConvertOp::NibblesLow`] with the high nibble (bits 4-7) of each byte (Q4_0's
    /// values 16-31).
    NibblesHigh,
}

impl PackedConvertOp {
    /// The operand and result types.
    pub fn types(self) -> (Type, Type) {
        use crate::ScalarType;
        match self {
            PackedConvertOp::F32x2ToF16x2 => {
                (Type::vector(ScalarType::F32, 2), Type::vector(ScalarType::F16, 2))
            }
            PackedConvertOp::I8x4ToF32x4 => (Type::U32, Type::vector(ScalarType::F32, 4)),
            PackedConvertOp::NibblesLow | PackedConvertOp::NibblesHigh => (Type::U32, Type::U32),
        }
    }
}

/// Launch-time scalar expressions, used for the grid and for buffer lengths.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ShapeExpr {
    /// Scalar parameters multiplied together (empty: 1).
    pub factors: Vec<Param>,
    /// Multiplier.
    pub num: u64,
    /// Divisor; the quotient is rounded up.
    pub den: u64,
    /// Added after the division.
    pub add: u64,
}

impl ShapeExpr {
    /// A constant.
    pub fn constant(c: u64) -> ShapeExpr {
        ShapeExpr { factors: vec![], num: c, den: 1, add: 0 }
    }
    /// `ceil(prod(factors) * num / den)`.
    pub fn scaled(factors: &[Param], num: u64, den: u64) -> ShapeExpr {
        ShapeExpr { factors: factors.to_vec(), num, den, add: 0 }
    }
    /// Evaluates with the scalar arguments given by `arg`: `ceil(prod * num / den) + add` in
    /// checked 64-bit arithmetic (a divisor of 0 counts as 1; the verifier refuses it).
    pub fn eval(&self, arg: impl Fn(Param) -> u64) -> Result<u64, ShapeOverflow> {
        self.try_eval(|p| Ok(arg(p)), || ShapeOverflow)
    }

    /// [`ShapeExpr::eval`] where looking an argument up can fail: `arg`'s error is returned as
    /// is, and an overflow as `overflow()`. The one evaluator: the interpreter and the runtime's
    /// launch checks both use it.
    pub fn try_eval<E>(
        &self,
        mut arg: impl FnMut(Param) -> Result<u64, E>,
        overflow: impl FnOnce() -> E,
    ) -> Result<u64, E> {
        let mut p: u64 = 1;
        for &f in &self.factors {
            match p.checked_mul(arg(f)?) {
                Some(x) => p = x,
                None => return Err(overflow()),
            }
        }
        let v = p.checked_mul(self.num).map(|x| x.div_ceil(self.den.max(1)));
        match v.and_then(|x| x.checked_add(self.add)) {
            Some(v) => Ok(v),
            None => Err(overflow()),
        }
    }

    /// The text form, `ceil(arg2*arg3*num/den)+add`, leaving out the parts that are 1 or 0, with
    /// each parameter written by `name` (the printer writes `argN`, launch errors the name). The
    /// one printer of shape expressions.
    pub fn text(&self, name: impl Fn(Param) -> String) -> String {
        let mut terms: Vec<String> = self.factors.iter().map(|&p| name(p)).collect();
        if self.num != 1 || terms.is_empty() {
            terms.push(self.num.to_string());
        }
        let mut s = terms.join("*");
        if self.den != 1 {
            s = format!("ceil({s}/{})", self.den);
        }
        if self.add != 0 {
            s = format!("{s}+{}", self.add);
        }
        s
    }
}

impl std::fmt::Display for ShapeExpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text(|p| p.to_string()))
    }
}

/// A shape expression whose value does not fit 64 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("overflows 64 bits")]
pub struct ShapeOverflow;

/// What the index of a memory access counts.
///
/// # Memory accesses
/// A `load` or `store` of type `T` (`n = T.bytes()` bytes, `i1` a byte) at index `i` touches the
/// bytes `[base + off, base + off + n)` of its memory, where `off = i * T.scalar.bytes()` for
/// [`IndexUnit::Element`] and `off = i` for [`IndexUnit::Byte`]; a signed index is
/// sign-extended, an unsigned one zero-extended, to 64 bits. The byte unit addresses packed
/// records whose fields are not multiples of the loaded type: a Q8_0 block is 34 bytes (an f16
/// scale, then 32 quants), so its quants are read as two `u8x16` from a `u8` buffer at byte
/// `34 * block + 2` with `align: Some(2)`.
///
/// The address `base + off` (for a buffer: its device address; LDS and private memory: the
/// offset in the workgroup's LDS or in the private array, both allocated at 16-byte alignment)
/// must be a multiple of the access's alignment: `align` if given, else the natural alignment
/// ([`natural_align`]). A stated alignment is a power of two from 1 to `n` (the verifier checks
/// it; an `f32x3` may state at most 8); back ends are told exactly this
/// alignment, so an access below its natural alignment is split into what the target can do
/// (narrower loads) instead of being undefined, and the interpreter's sanitizer refuses an access
/// whose address is not a multiple of it, as the hardware would fault. An atomic is always
/// naturally aligned. Buffer bases are 256-byte aligned on every device (the interpreter's too).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum IndexUnit {
    /// The index counts elements of the accessed type's scalar.
    #[default]
    Element,
    /// The index counts bytes.
    Byte,
}

impl IndexUnit {
    /// True for [`IndexUnit::Element`] (the default, left out of the text form).
    pub fn is_element(&self) -> bool {
        *self == IndexUnit::Element
    }
    /// The bytes one step of the index moves for an access of `ty`.
    pub fn stride(self, ty: Type) -> u32 {
        match self {
            IndexUnit::Element => ty.scalar.bytes(),
            IndexUnit::Byte => 1,
        }
    }
}

/// The alignment an access of `ty` has when it does not state one: the whole access for a
/// vector whose size is a power of two, else its scalar's size (what back ends have always been
/// told).
pub fn natural_align(ty: Type) -> u32 {
    if ty.lanes > 1 && ty.bytes().is_power_of_two() {
        ty.bytes()
    } else {
        ty.scalar.bytes()
    }
}

/// An operation. Results are listed in the instruction; the op says how many and of what type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Op {
    /// A scalar constant; `bits` holds the value's bit pattern (zero-extended).
    Const {
        /// The type.
        ty: Type,
        /// The bits.
        bits: u64,
    },
    /// The value of a scalar parameter.
    Arg(Param),
    /// The base address (`u64`) of a buffer parameter.
    BufferAddr(Param),
    /// A hardware id.
    Id(IdKind),
    /// One-operand arithmetic.
    Unary {
        /// The op.
        op: UnaryOp,
        /// The operand.
        arg: Value,
    },
    /// Two-operand arithmetic.
    Binary {
        /// The op.
        op: BinaryOp,
        /// Left operand.
        lhs: Value,
        /// Right operand.
        rhs: Value,
    },
    /// `a * b + c` with a single rounding (floats).
    Fma {
        /// a
        a: Value,
        /// b
        b: Value,
        /// c
        c: Value,
    },
    /// Compare; the result is `i1`.
    Cmp {
        /// The comparison.
        op: CmpOp,
        /// Left operand.
        lhs: Value,
        /// Right operand.
        rhs: Value,
    },
    /// `cond ? if_true : if_false`.
    Select {
        /// An `i1`.
        cond: Value,
        /// Taken when true.
        if_true: Value,
        /// Taken when false.
        if_false: Value,
    },
    /// Numeric conversion. Float to float rounds to nearest even; float to int truncates and
    /// saturates (NaN gives 0); int to float rounds to nearest even; int to int truncates or extends
    /// by the source's signedness; `i1` converts to 0/1.
    Convert {
        /// Target type (scalar).
        to: Type,
        /// Operand.
        arg: Value,
    },
    /// Reinterprets the bits (sizes must match).
    Bitcast {
        /// Target type.
        to: Type,
        /// Operand.
        arg: Value,
    },
    /// Element `lane` of a vector.
    Extract {
        /// The vector.
        vector: Value,
        /// Which element.
        lane: u8,
    },
    /// Builds a vector from scalars.
    MakeVector {
        /// The vector type.
        ty: Type,
        /// One scalar per element.
        elems: SmallVec<[Value; 4]>,
    },
    /// Loads `ty` from `mem` at `index`, which counts `unit`s: elements of `ty`'s scalar (byte
    /// offset = `index * ty.scalar.bytes()`) or bytes. The access must be aligned to `align`
    /// bytes (see [`Op::Load`]'s fields and the module doc on memory accesses).
    Load {
        /// Where.
        mem: MemRef,
        /// The index: `u32`, `i32`, `u64` or `i64` (signed indices are sign-extended).
        index: Value,
        /// What is loaded.
        ty: Type,
        /// The alignment the access may assume, in bytes; `None`: the natural alignment
        /// ([`natural_align`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        align: Option<u32>,
        /// What `index` counts.
        #[serde(default, skip_serializing_if = "IndexUnit::is_element")]
        unit: IndexUnit,
    },
    /// Stores `value` to `mem` at `index` (counting `unit`s: elements of the value's scalar, or
    /// bytes), aligned to `align` bytes, as [`Op::Load`].
    Store {
        /// Where.
        mem: MemRef,
        /// The index: `u32`, `i32`, `u64` or `i64`.
        index: Value,
        /// The stored value.
        value: Value,
        /// The alignment the access may assume, in bytes; `None`: the natural alignment.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        align: Option<u32>,
        /// What `index` counts.
        #[serde(default, skip_serializing_if = "IndexUnit::is_element")]
        unit: IndexUnit,
    },
    /// Atomic read-modify-write on a 32- or 64-bit integer; returns the old value.
    Atomic {
        /// The op.
        op: AtomicOp,
        /// Where.
        mem: MemRef,
        /// Element index (`u32`, `i32`, `u64` or `i64`); the access is naturally aligned.
        index: Value,
        /// Operand.
        value: Value,
        /// Ordering scope (acquire-release).
        scope: Scope,
    },
    /// A hint that the bytes at byte `index` of buffer `mem` will be read soon: their cache line
    /// is fetched into the device's L2 (NVIDIA: `prefetch.global.L2`; a no-op on AMD). It has
    /// no result and changes no value, but its address must lie in the buffer as a load's must
    /// (the interpreter checks it), so a prefetch can never touch memory a load could not.
    Prefetch {
        /// The buffer ([`MemRef::Buffer`]).
        mem: MemRef,
        /// The byte offset: `u32`, `i32`, `u64` or `i64`.
        index: Value,
    },
    /// Copies `bytes` (4, 8 or 16) bytes from byte `src_index` of buffer `src` to byte
    /// `dst_index` of LDS slot `dst`, asynchronously: the bytes are read now and land in LDS at
    /// the latest when this lane's [`Op::AsyncWait`] retires the group the copy is in. Until
    /// then no lane may read or write the destination bytes (the interpreter refuses it), and a
    /// lane reads what another lane copied only after that lane's wait and a barrier. Both
    /// addresses must be aligned to `bytes`. NVIDIA sm_80 and later: `cp.async` (the data goes
    /// to LDS without passing through registers, so the loads of later loop trips can be in
    /// flight without holding registers); elsewhere a load and a store at once, which no
    /// program the interpreter accepts can tell apart.
    AsyncCopy {
        /// The LDS slot written.
        dst: LdsSlot,
        /// The byte offset in `dst`: `u32`, `i32`, `u64` or `i64`.
        dst_index: Value,
        /// The buffer read.
        src: Param,
        /// The byte offset in `src`: `u32`, `i32`, `u64` or `i64`.
        src_index: Value,
        /// Bytes copied: 4, 8 or 16.
        bytes: u32,
    },
    /// Closes this lane's group of [`Op::AsyncCopy`]s issued since its last wait (possibly
    /// empty), then waits until at most `pending` of its groups are still in flight: the older
    /// ones have landed in LDS (NVIDIA: `cp.async.commit_group; cp.async.wait_group pending`).
    /// Every copy must be waited for before the kernel ends.
    AsyncWait {
        /// Groups left in flight, newest first.
        pending: u32,
    },
    /// From here on the kernel may read and write what the grids launched before it touch
    /// (NVIDIA sm_90+: `griddepcontrol.wait`; nothing elsewhere). At most one, in the kernel's
    /// top-level block, and before it no barrier, fence or cross-lane op and no memory access
    /// but loads and [`Op::AsyncCopy`]s from buffers the kernel only reads (with their
    /// [`Op::AsyncWait`]s), besides arithmetic and [`Op::Prefetch`]: so the code before it
    /// reads nothing another grid writes (a runtime overlaps the launch only where no grid in
    /// flight writes those buffers: [`crate::Kernel::reads_before_grid_wait`]). Without it the
    /// wait is the kernel's first instruction.
    GridDependencyWait,
    /// A memory fence (acquire-release) at the given scope.
    Fence(Scope),
    /// A workgroup barrier.
    Barrier(BarrierKind),
    /// Cross-lane read with an immediate offset.
    Shuffle {
        /// The pattern.
        mode: ShuffleMode,
        /// The value read from the other lane.
        value: Value,
        /// The offset (below the wave size).
        offset: u32,
    },
    /// Lane `i` reads lane `lane[i] % wave`.
    ShuffleIdx {
        /// The value read from the other lane.
        value: Value,
        /// Source lane (`u32`).
        lane: Value,
    },
    /// Every lane reads lane `lane` (readlane); the result is wave-uniform.
    Broadcast {
        /// The value.
        value: Value,
        /// The source lane (immediate).
        lane: u32,
    },
    /// A `u64` mask of the active lanes whose `cond` is true.
    Ballot {
        /// An `i1`.
        cond: Value,
    },
    /// Wave-wide reduction: an xor butterfly with offsets W/2, W/4, ..., 1; every lane gets the result.
    WaveReduce {
        /// The op.
        op: ReduceOp,
        /// The lane's input.
        value: Value,
    },
    /// Wave-wide argmax of (value, index): the largest value wins, NaN counts as largest,
    /// ties go to the lowest index. Two results: the value and its index.
    WaveArgmax {
        /// The lane's value (float).
        value: Value,
        /// The lane's index (`u32`).
        index: Value,
    },
    /// The transposed butterfly: each lane holds `values.len() <= p` partial sums, one per token;
    /// the result in lane `l` is the wave-wide sum of token `l / (W / p)` (DESIGN.md section 2).
    Tsum {
        /// P, a power of two no larger than the wave.
        p: u32,
        /// One partial sum per token (T <= P; missing tokens count as zero).
        values: SmallVec<[Value; 8]>,
    },
    /// Structured if. The blocks end with `yield` of the results (both blocks yield the same types).
    If {
        /// An `i1`.
        cond: Value,
        /// Runs where `cond` is true.
        then_block: Block,
        /// Runs where `cond` is false.
        else_block: Block,
    },
    /// Counted loop `for i in (start..end).step_by(step)` on `u32` or `i32`. The body's parameters are
    /// `[i, carried...]`; it ends with `yield` of the next carried values; the op's results are the
    /// final carried values.
    For {
        /// First index.
        start: Value,
        /// Exclusive end.
        end: Value,
        /// Positive step.
        step: Value,
        /// Unroll hint for the back ends (1: none).
        unroll: u32,
        /// Initial carried values.
        init: SmallVec<[Value; 4]>,
        /// The body.
        body: Block,
    },
    /// Ends an `if` or `for` block, passing values out.
    Yield(SmallVec<[Value; 4]>),
    /// Matrix multiply-accumulate over the wave, `D = A x B + C` (see [`crate::matrix`]): `a`,
    /// `b` and `c` are fragments of `kind`'s roles A, B and C; the result is a C fragment. Every
    /// lane of the wave runs it together. Integer kinds are exact (products and sums in i32,
    /// adding C wraps); f16 kinds are not bit-exact across hardware (the accumulation order is
    /// unspecified): the interpreter's model sums in f64 and rounds once, and device results are
    /// compared within a measured bound.
    Mma {
        /// The shape and multiplicand types.
        kind: MmaKind,
        /// The A fragment.
        a: Value,
        /// The B fragment.
        b: Value,
        /// The C fragment (the accumulator).
        c: Value,
    },
    /// Byte permute of two `u32`: result byte `i` is byte `sel[i]` of the 8-byte little-endian
    /// value `b:a` (bytes 0-3 from `a`, 4-7 from `b`). Result `u32`.
    Perm {
        /// Bytes 0-3.
        a: Value,
        /// Bytes 4-7.
        b: Value,
        /// One source byte (`0..=7`) per result byte, lowest first.
        sel: [u8; 4],
    },
    /// Packed dot product (see [`DotOp`] for the types and rounding of each flavour).
    Dot {
        /// The flavour.
        op: DotOp,
        /// First operand (`u32`, or `f16x2`).
        a: Value,
        /// Second operand (`u32`, or `f16x2`).
        b: Value,
        /// Accumulator (`i32`, `u32` for [`DotOp::U8`], `f32` for the f16 flavours).
        acc: Value,
    },
    /// Packed conversion (see [`PackedConvertOp`] for the types).
    PackedConvert {
        /// The conversion.
        op: PackedConvertOp,
        /// Operand.
        arg: Value,
    },
    /// A cooperative load of `matrices` (1, 2 or 4) 8x8 matrices of 16-bit elements from LDS by
    /// the whole wave (NVIDIA sm_75 and later at wave 32: `ldmatrix.sync.aligned.m8n8`). Lane
    /// `8j + r` (`j < matrices`, `r < 8`) names row `r` of matrix `j`: its `index` (in elements
    /// of the slot, a 16-bit type) is the row's first element, 8 consecutive elements starting
    /// at a multiple of 16 bytes; the other lanes' indices are not read. The result is
    /// `2 matrices` elements of the slot's type a lane, matrix by matrix: lane `l` (`g = l / 4`,
    /// `t = l % 4`) takes elements `(g, 2t)` and `(g, 2t + 1)` of each matrix, or with `trans`
    /// `(2t, g)` and `(2t + 1, g)` (row, column). These are the A, B and C fragment pieces of
    /// NVIDIA's 16-bit `mma.sync` shapes: one instruction a lane instead of one load an element
    /// pair. Every row must lie in the slot (the interpreter checks the rows of every lane that
    /// names one).
    LdMatrix {
        /// The LDS slot read ([`MemRef::Lds`]).
        mem: MemRef,
        /// The element index of the row this lane names.
        index: Value,
        /// Matrices loaded: 1, 2 or 4.
        matrices: u32,
        /// Transposed: each lane's pair is a column's.
        trans: bool,
    },
}
