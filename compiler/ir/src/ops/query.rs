//! What each op reads, writes, nests and requires: the queries every pass asks of an op, each
//! one exhaustive, so a new op makes the compiler list them here first.

use super::*;

impl Op {
    /// The values this op reads (not counting nested blocks).
    pub fn args(&self) -> SmallVec<[Value; 4]> {
        let mut v: SmallVec<[Value; 4]> = SmallVec::new();
        let mem = |v: &mut SmallVec<[Value; 4]>, m: &MemRef| {
            if let MemRef::Global(a) = m {
                v.push(*a)
            }
        };
        match self {
            Op::Const { .. } | Op::Arg(_) | Op::BufferAddr(_) | Op::Id(_) => {}
            Op::Fence(_) | Op::Barrier(_) | Op::GridDependencyWait | Op::AsyncWait { .. } => {}
            Op::AsyncCopy { dst_index, src_index, .. } => v.extend([*dst_index, *src_index]),
            Op::Prefetch { mem: m, index } => {
                mem(&mut v, m);
                v.push(*index)
            }
            Op::Unary { arg, .. } | Op::Convert { arg, .. } | Op::Bitcast { arg, .. } => {
                v.push(*arg)
            }
            Op::Binary { lhs, rhs, .. } | Op::Cmp { lhs, rhs, .. } => v.extend([*lhs, *rhs]),
            Op::Fma { a, b, c } => v.extend([*a, *b, *c]),
            Op::Select { cond, if_true, if_false } => v.extend([*cond, *if_true, *if_false]),
            Op::Extract { vector, .. } => v.push(*vector),
            Op::MakeVector { elems, .. } => v.extend(elems.iter().copied()),
            Op::Load { mem: m, index, .. } => {
                mem(&mut v, m);
                v.push(*index)
            }
            Op::Store { mem: m, index, value, .. } => {
                mem(&mut v, m);
                v.extend([*index, *value])
            }
            Op::Atomic { mem: m, index, value, .. } => {
                mem(&mut v, m);
                v.extend([*index, *value])
            }
            Op::Shuffle { value, .. }
            | Op::Broadcast { value, .. }
            | Op::WaveReduce { value, .. } => v.push(*value),
            Op::ShuffleIdx { value, lane } => v.extend([*value, *lane]),
            Op::Ballot { cond } => v.push(*cond),
            Op::WaveArgmax { value, index } => v.extend([*value, *index]),
            Op::Tsum { values, .. } => v.extend(values.iter().copied()),
            Op::If { cond, .. } => v.push(*cond),
            Op::For { start, end, step, init, .. } => {
                v.extend([*start, *end, *step]);
                v.extend(init.iter().copied())
            }
            Op::Yield(vals) => v.extend(vals.iter().copied()),
            Op::Mma { a, b, c, .. } => v.extend([*a, *b, *c]),
            Op::Perm { a, b, .. } => v.extend([*a, *b]),
            Op::Dot { a, b, acc, .. } => v.extend([*a, *b, *acc]),
            Op::PackedConvert { arg, .. } => v.push(*arg),
            Op::LdMatrix { index, .. } => v.push(*index),
        }
        v
    }

    /// The nested blocks of a control-flow op.
    pub fn blocks(&self) -> SmallVec<[Block; 2]> {
        self.blocks_with_roles().into_iter().map(|(b, _)| b).collect()
    }

    /// The nested blocks with their roles as messages name them: `then block`, `else block`,
    /// `body`.
    pub fn blocks_with_roles(&self) -> SmallVec<[(Block, &'static str); 2]> {
        match self {
            Op::If { then_block, else_block, .. } => {
                smallvec::smallvec![(*then_block, "then block"), (*else_block, "else block")]
            }
            Op::For { body, .. } => smallvec::smallvec![(*body, "body")],
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
            | Op::Yield(_)
            | Op::Mma { .. }
            | Op::Perm { .. }
            | Op::Dot { .. }
            | Op::PackedConvert { .. }
            | Op::Prefetch { .. }
            | Op::AsyncCopy { .. }
            | Op::AsyncWait { .. }
            | Op::LdMatrix { .. }
            | Op::GridDependencyWait => SmallVec::new(),
        }
    }

    /// The operands that decide which lanes run the nested blocks, with their roles: an `if`'s
    /// condition, a `for`'s start, end and step. Empty for ops without blocks.
    pub fn control_operands(&self) -> SmallVec<[(&'static str, Value); 3]> {
        match self {
            Op::If { cond, .. } => smallvec::smallvec![("the condition", *cond)],
            Op::For { start, end, step, .. } => {
                smallvec::smallvec![("the start", *start), ("the end", *end), ("the step", *step)]
            }
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
            | Op::Yield(_)
            | Op::Mma { .. }
            | Op::Perm { .. }
            | Op::Dot { .. }
            | Op::PackedConvert { .. }
            | Op::Prefetch { .. }
            | Op::AsyncCopy { .. }
            | Op::AsyncWait { .. }
            | Op::LdMatrix { .. }
            | Op::GridDependencyWait => SmallVec::new(),
        }
    }

    /// The parameter an op names: `arg`, `buffer_addr`, or a memory op on a buffer.
    pub fn param(&self) -> Option<Param> {
        match self {
            Op::Arg(p) | Op::BufferAddr(p) => Some(*p),
            Op::Load { mem, .. }
            | Op::Store { mem, .. }
            | Op::Atomic { mem, .. }
            | Op::Prefetch { mem, .. } => match mem {
                MemRef::Buffer(p) => Some(*p),
                MemRef::Lds(_) | MemRef::Private(_) | MemRef::Global(_) => None,
            },
            Op::AsyncCopy { src, .. } => Some(*src),
            Op::Const { .. }
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
            | Op::Yield(_)
            | Op::Mma { .. }
            | Op::Perm { .. }
            | Op::Dot { .. }
            | Op::PackedConvert { .. }
            | Op::AsyncWait { .. }
            | Op::LdMatrix { .. }
            | Op::GridDependencyWait => None,
        }
    }

    /// The memory a `load`, `store`, `atomic` or `ld_matrix` accesses.
    pub fn memory(&self) -> Option<&MemRef> {
        match self {
            Op::Load { mem, .. }
            | Op::Store { mem, .. }
            | Op::Atomic { mem, .. }
            | Op::LdMatrix { mem, .. } => Some(mem),
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
            | Op::Yield(_)
            | Op::Mma { .. }
            | Op::Perm { .. }
            | Op::Dot { .. }
            | Op::PackedConvert { .. }
            | Op::Prefetch { .. }
            | Op::AsyncCopy { .. }
            | Op::AsyncWait { .. }
            | Op::GridDependencyWait => None,
        }
    }

    /// True for ops that read values of other lanes of the wave (shuffles, broadcast, ballot,
    /// wave reductions, `tsum`, `mma`): on hardware every lane of the wave must run them together
    /// (NVPTX lowers them with the full mask), so they run only under wave-uniform control.
    pub fn is_cross_lane(&self) -> bool {
        match self {
            Op::Shuffle { .. }
            | Op::ShuffleIdx { .. }
            | Op::Broadcast { .. }
            | Op::Ballot { .. }
            | Op::WaveReduce { .. }
            | Op::WaveArgmax { .. }
            | Op::Tsum { .. }
            | Op::Mma { .. }
            | Op::LdMatrix { .. } => true,
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
            | Op::If { .. }
            | Op::For { .. }
            | Op::Yield(_)
            | Op::Perm { .. }
            | Op::Dot { .. }
            | Op::PackedConvert { .. }
            | Op::Prefetch { .. }
            | Op::AsyncCopy { .. }
            | Op::AsyncWait { .. }
            | Op::GridDependencyWait => false,
        }
    }

    /// The op's name in the text form.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Const { .. } => "const",
            Op::Arg(_) => "arg",
            Op::BufferAddr(_) => "buffer_addr",
            Op::Id(_) => "id",
            Op::Unary { .. } => "unary",
            Op::Binary { .. } => "binary",
            Op::Fma { .. } => "fma",
            Op::Cmp { .. } => "cmp",
            Op::Select { .. } => "select",
            Op::Convert { .. } => "convert",
            Op::Bitcast { .. } => "bitcast",
            Op::Extract { .. } => "extract",
            Op::MakeVector { .. } => "make_vector",
            Op::Load { .. } => "load",
            Op::Store { .. } => "store",
            Op::Atomic { .. } => "atomic",
            Op::Fence(_) => "fence",
            Op::Barrier(_) => "barrier",
            Op::Shuffle { .. } => "shuffle",
            Op::ShuffleIdx { .. } => "shuffle_idx",
            Op::Broadcast { .. } => "broadcast",
            Op::Ballot { .. } => "ballot",
            Op::WaveReduce { .. } => "wave_reduce",
            Op::WaveArgmax { .. } => "wave_argmax",
            Op::Tsum { .. } => "tsum",
            Op::If { .. } => "if",
            Op::For { .. } => "for",
            Op::Yield(_) => "yield",
            Op::Mma { .. } => "mma",
            Op::Perm { .. } => "perm",
            Op::Dot { .. } => "dot",
            Op::PackedConvert { .. } => "packed_convert",
            Op::Prefetch { .. } => "prefetch",
            Op::AsyncCopy { .. } => "async_copy",
            Op::AsyncWait { .. } => "async_wait",
            Op::GridDependencyWait => "grid_dependency_wait",
            Op::LdMatrix { .. } => "ld_matrix",
        }
    }

    /// True for ops that read or write memory or synchronize.
    pub fn has_side_effects(&self) -> bool {
        match self {
            Op::Store { .. }
            | Op::Atomic { .. }
            | Op::Fence(_)
            | Op::Barrier(_)
            | Op::Prefetch { .. }
            | Op::AsyncCopy { .. }
            | Op::AsyncWait { .. }
            | Op::GridDependencyWait => true,
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
            | Op::Shuffle { .. }
            | Op::ShuffleIdx { .. }
            | Op::Broadcast { .. }
            | Op::Ballot { .. }
            | Op::WaveReduce { .. }
            | Op::WaveArgmax { .. }
            | Op::Tsum { .. }
            | Op::If { .. }
            | Op::For { .. }
            | Op::Yield(_)
            | Op::Mma { .. }
            | Op::Perm { .. }
            | Op::Dot { .. }
            | Op::PackedConvert { .. }
            | Op::LdMatrix { .. } => false,
        }
    }
}
