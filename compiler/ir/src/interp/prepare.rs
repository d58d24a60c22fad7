//! Per-kernel preparation: register slots for every value, each block's executable instruction
//! list, and the shape checks that let the executor index freely (a kernel run with
//! `verify: false` may be malformed; it must give an error, never a panic).

use super::error::InterpError;
use crate::{Block, Inst, Kernel, MemRef, Op, ParamKind, Type, Value};
use cranelift_entity::EntityRef;
use smallvec::SmallVec;

/// What the executor needs besides the kernel itself.
pub(crate) struct Prepared<'k> {
    /// The kernel.
    pub k: &'k Kernel,
    /// First register slot of each value (vectors take one slot per element).
    pub slot: Vec<usize>,
    /// Number of slots.
    pub nslots: usize,
    /// Each block's instructions, without the ones hoisted into `fixed` and without the `yield`.
    pub code: Vec<Vec<Inst>>,
    /// Each block's yielded values.
    pub yields: Vec<SmallVec<[Value; 4]>>,
    /// Constants, arguments, buffer addresses and ids: their values never change within a
    /// workgroup, so they are written before it runs (ids each workgroup, the rest once a
    /// launch: `Exec::fill_fixed`).
    pub fixed: Vec<Inst>,
    /// Byte offset of each LDS allocation.
    pub lds_offsets: Vec<usize>,
    /// Byte offset of each private array within a lane's private memory.
    pub private_offsets: Vec<usize>,
    /// Private bytes per lane.
    pub private_bytes: usize,
    /// The kernel has atomics on global memory (then workgroups run one after another).
    pub global_atomics: bool,
}

impl<'k> Prepared<'k> {
    /// Prepares a kernel.
    pub fn new(k: &'k Kernel) -> Result<Prepared<'k>, InterpError> {
        let mut slot = Vec::with_capacity(k.values.len());
        let mut nslots = 0;
        for v in k.values.values() {
            slot.push(nslots);
            nslots += v.ty.lanes.max(1) as usize;
        }
        let mut code = vec![Vec::new(); k.blocks.len()];
        let mut yields = vec![SmallVec::new(); k.blocks.len()];
        let mut fixed = Vec::new();
        let mut global_atomics = false;
        let mut seen = vec![false; k.blocks.len()];
        let mut stack = vec![k.entry];
        if k.entry.index() >= k.blocks.len() {
            return Err(InterpError::Launch {
                kernel: k.name.clone(),
                message: "the entry block does not exist".into(),
            });
        }
        while let Some(b) = stack.pop() {
            if std::mem::replace(&mut seen[b.index()], true) {
                continue;
            }
            for &inst in &k.blocks[b].insts {
                let malformed = |message: String| InterpError::Malformed {
                    kernel: k.name.clone(),
                    inst,
                    op: k
                        .insts
                        .get(inst)
                        .map_or_else(|| "?".into(), |d| crate::print::mnemonic(&d.op)),
                    message,
                };
                let data =
                    k.insts.get(inst).ok_or_else(|| malformed("no such instruction".into()))?;
                check_inst(k, inst).map_err(malformed)?;
                for nb in data.op.blocks() {
                    stack.push(nb);
                }
                match &data.op {
                    Op::Const { .. } | Op::Arg(_) | Op::BufferAddr(_) | Op::Id(_) => {
                        fixed.push(inst)
                    }
                    Op::Yield(vals) => yields[b.index()] = vals.clone(),
                    Op::Atomic { mem, .. } => {
                        match mem {
                            MemRef::Buffer(_) | MemRef::Global(_) => global_atomics = true,
                            MemRef::Lds(_) | MemRef::Private(_) => {}
                        }
                        code[b.index()].push(inst);
                    }
                    Op::Unary { .. }
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
                    | Op::Prefetch { .. }
                    | Op::AsyncCopy { .. }
                    | Op::AsyncWait { .. }
                    | Op::GridDependencyWait
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
                    | Op::Mma { .. }
                    | Op::Perm { .. }
                    | Op::Dot { .. }
                    | Op::PackedConvert { .. }
                    | Op::LdMatrix { .. } => code[b.index()].push(inst),
                }
            }
        }
        let lds_offsets = k.lds_offsets().into_iter().map(|o| o as usize).collect();
        let mut private_offsets = Vec::new();
        let mut private_bytes = 0;
        for p in k.private.values() {
            private_offsets.push(private_bytes);
            private_bytes += (p.elem.bytes() * p.len) as usize;
        }
        Ok(Prepared {
            k,
            slot,
            nslots,
            code,
            yields,
            fixed,
            lds_offsets,
            private_offsets,
            private_bytes,
            global_atomics,
        })
    }

    /// The first slot of a value.
    #[inline(always)]
    pub fn slot(&self, v: Value) -> usize {
        self.slot[v.index()]
    }
}

fn lanes(t: Type) -> u8 {
    t.lanes.max(1)
}

/// Checks that the handles of an instruction exist and that the element counts of its operands
/// and results agree, so that the executor's slot arithmetic stays inside each value.
fn check_inst(k: &Kernel, inst: Inst) -> Result<(), String> {
    let data = &k.insts[inst];
    let op = &data.op;
    for v in op.args().iter().chain(data.results.iter()) {
        if v.index() >= k.values.len() {
            return Err(format!("value {v} does not exist"));
        }
    }
    if op.args().iter().any(|a| data.results.contains(a)) {
        return Err("an operand is a result of the same instruction".into());
    }
    for b in op.blocks() {
        if b.index() >= k.blocks.len() {
            return Err(format!("block {b} does not exist"));
        }
    }
    let ty = |v: Value| k.values[v].ty;
    let nres = |n: usize| -> Result<(), String> {
        if data.results.len() == n {
            Ok(())
        } else {
            Err(format!("expected {n} results, found {}", data.results.len()))
        }
    };
    let same = |a: Type, b: Type| -> Result<(), String> {
        if lanes(a) == lanes(b) {
            Ok(())
        } else {
            Err(format!("element counts differ: {a} and {b}"))
        }
    };
    let buffer = |p: crate::Param| -> Result<(), String> {
        match k.params.get(p).map(|d| &d.kind) {
            Some(ParamKind::Buffer { .. }) => Ok(()),
            Some(ParamKind::Scalar(_)) => Err(format!("parameter {p} is not a buffer")),
            None => Err(format!("parameter {p} does not exist")),
        }
    };
    let mem = |m: &MemRef| -> Result<(), String> {
        match *m {
            MemRef::Buffer(p) => buffer(p),
            MemRef::Lds(s) if s.index() >= k.lds.len() => Err(format!("{s} does not exist")),
            MemRef::Private(s) if s.index() >= k.private.len() => {
                Err(format!("{s} does not exist"))
            }
            MemRef::Global(a) if ty(a) != Type::U64 => Err("a raw address must be u64".into()),
            MemRef::Lds(_) | MemRef::Private(_) | MemRef::Global(_) => Ok(()),
        }
    };
    let scalar = |v: Value| -> Result<(), String> {
        if lanes(ty(v)) == 1 {
            Ok(())
        } else {
            Err(format!("{v} must be a scalar"))
        }
    };
    let r0 = || ty(data.results[0]);
    match op {
        Op::Const { ty: t, .. } => {
            nres(1)?;
            same(*t, r0())?
        }
        Op::Arg(p) => {
            nres(1)?;
            if p.index() >= k.params.len() {
                return Err(format!("parameter {p} does not exist"));
            }
        }
        Op::BufferAddr(p) => {
            nres(1)?;
            buffer(*p)?
        }
        Op::Id(_) | Op::Ballot { .. } => nres(1)?,
        Op::Unary { arg, .. }
        | Op::Shuffle { value: arg, .. }
        | Op::Broadcast { value: arg, .. } => {
            nres(1)?;
            same(ty(*arg), r0())?
        }
        Op::WaveReduce { value, .. } => {
            nres(1)?;
            same(ty(*value), r0())?
        }
        Op::Convert { arg, .. } => {
            nres(1)?;
            same(ty(*arg), r0())?
        }
        Op::Binary { lhs, rhs, .. } | Op::Cmp { lhs, rhs, .. } => {
            nres(1)?;
            same(ty(*lhs), ty(*rhs))?;
            same(ty(*lhs), r0())?
        }
        Op::Fma { a, b, c } => {
            nres(1)?;
            same(ty(*a), ty(*b))?;
            same(ty(*a), ty(*c))?;
            same(ty(*a), r0())?
        }
        Op::Select { cond, if_true, if_false } => {
            nres(1)?;
            same(ty(*if_true), ty(*if_false))?;
            same(ty(*if_true), r0())?;
            if lanes(ty(*cond)) != 1 {
                same(ty(*cond), r0())?
            }
        }
        Op::Bitcast { arg, .. } => {
            nres(1)?;
            if ty(*arg).bytes() != r0().bytes() || ty(*arg).bytes() > 16 {
                return Err(format!("cannot bitcast {} to {}", ty(*arg), r0()));
            }
        }
        Op::Extract { vector, lane } => {
            nres(1)?;
            scalar(data.results[0])?;
            if *lane >= lanes(ty(*vector)) {
                return Err(format!("element {lane} of {}", ty(*vector)));
            }
        }
        Op::MakeVector { elems, .. } => {
            nres(1)?;
            if elems.len() != lanes(r0()) as usize {
                return Err(format!("{} elements for {}", elems.len(), r0()));
            }
            for &e in elems {
                scalar(e)?
            }
        }
        Op::Load { mem: m, index, ty: t, .. } => {
            nres(1)?;
            mem(m)?;
            scalar(*index)?;
            same(*t, r0())?;
            if t.bytes() > 16 {
                return Err(format!("{t} is wider than 16 bytes"));
            }
        }
        Op::Store { mem: m, index, value, .. } => {
            nres(0)?;
            mem(m)?;
            scalar(*index)?;
            if ty(*value).bytes() > 16 {
                return Err(format!("{} is wider than 16 bytes", ty(*value)));
            }
        }
        Op::Atomic { mem: m, index, value, .. } => {
            nres(1)?;
            mem(m)?;
            scalar(*index)?;
            scalar(*value)?;
            same(ty(*value), r0())?
        }
        Op::Fence(_) | Op::Barrier(_) | Op::GridDependencyWait => nres(0)?,
        Op::Prefetch { mem: m, index } => {
            nres(0)?;
            if !matches!(m, MemRef::Buffer(_)) {
                return Err("prefetch names a buffer".into());
            }
            mem(m)?;
            scalar(*index)?
        }
        Op::AsyncCopy { dst, dst_index, src, src_index, bytes } => {
            nres(0)?;
            mem(&MemRef::Lds(*dst))?;
            mem(&MemRef::Buffer(*src))?;
            scalar(*dst_index)?;
            scalar(*src_index)?;
            if !matches!(bytes, 4 | 8 | 16) {
                return Err(format!("async_copy of {bytes} bytes (4, 8 or 16)"));
            }
        }
        Op::AsyncWait { .. } => nres(0)?,
        Op::LdMatrix { mem: m, index, matrices, .. } => {
            nres(1)?;
            let MemRef::Lds(s) = *m else {
                return Err("ld_matrix reads an LDS slot".into());
            };
            mem(m)?;
            scalar(*index)?;
            if !matches!(matrices, 1 | 2 | 4) {
                return Err(format!("ld_matrix of {matrices} matrices (1, 2 or 4)"));
            }
            if k.lds[s].elem.bytes() != 2 {
                return Err(format!(
                    "ld_matrix reads 16-bit elements, {s} holds {}",
                    k.lds[s].elem
                ));
            }
            if u32::from(lanes(r0())) != 2 * *matrices {
                return Err(format!(
                    "ld_matrix of {matrices} matrices gives {} elements",
                    2 * matrices
                ));
            }
        }
        Op::ShuffleIdx { value, lane } => {
            nres(1)?;
            scalar(*lane)?;
            same(ty(*value), r0())?
        }
        Op::WaveArgmax { value, index } => {
            nres(2)?;
            scalar(*value)?;
            scalar(*index)?;
            scalar(data.results[0])?;
            scalar(data.results[1])?
        }
        Op::Tsum { values, .. } => {
            nres(1)?;
            if values.is_empty() {
                return Err("no values".into());
            }
            for &v in values {
                scalar(v)?;
                if ty(v) != r0() {
                    return Err(format!("{v} is {}, the result {}", ty(v), r0()));
                }
            }
        }
        Op::Mma { kind, a, b, c } => {
            nres(1)?;
            use crate::matrix::FragmentRole as R;
            for (v, role) in [(*a, R::A), (*b, R::B), (*c, R::C)] {
                if ty(v) != Type::fragment(*kind, role) {
                    return Err(format!("{v} is {}, not the {role} fragment of {kind}", ty(v)));
                }
            }
            same(ty(*c), r0())?
        }
        Op::If { cond, then_block, else_block } => {
            scalar(*cond)?;
            for b in [*then_block, *else_block] {
                check_yield(k, b, &data.results)?;
            }
        }
        Op::For { start, end, step, init, body, .. } => {
            scalar(*start)?;
            scalar(*end)?;
            scalar(*step)?;
            let params = &k.blocks[*body].params;
            if params.len() != init.len() + 1 || data.results.len() != init.len() {
                return Err(format!(
                    "{} carried values, {} body parameters, {} results",
                    init.len(),
                    params.len(),
                    data.results.len()
                ));
            }
            for p in params {
                if p.index() >= k.values.len() {
                    return Err(format!("value {p} does not exist"));
                }
                if op.args().contains(p) {
                    return Err(format!("{p} is a body parameter used as an operand of its loop"));
                }
            }
            if !ty(params[0]).scalar.is_int() || lanes(ty(params[0])) != 1 {
                return Err("the loop index must be an integer scalar".into());
            }
            for (j, &v) in init.iter().enumerate() {
                same(ty(v), ty(params[j + 1]))?;
                same(ty(v), ty(data.results[j]))?;
            }
            check_yield(k, *body, &data.results)?;
        }
        Op::Yield(_) => nres(0)?,
        Op::Perm { a, b, sel } => {
            nres(1)?;
            scalar(*a)?;
            scalar(*b)?;
            scalar(data.results[0])?;
            if sel.iter().any(|&s| s > 7) {
                return Err(format!("selector {sel:?} names a byte past 7"));
            }
        }
        Op::Dot { op, a, b, acc } => {
            nres(1)?;
            scalar(*acc)?;
            scalar(data.results[0])?;
            let n = match op {
                crate::DotOp::I8 | crate::DotOp::U8 | crate::DotOp::I8U8 => 1,
                crate::DotOp::F16 | crate::DotOp::F16Approx => 2,
            };
            if lanes(ty(*a)) != n || lanes(ty(*b)) != n {
                return Err(format!("operands of {} and {} elements, not {n}", ty(*a), ty(*b)));
            }
        }
        Op::PackedConvert { op, arg } => {
            nres(1)?;
            let (from, to) = op.types();
            if lanes(ty(*arg)) != lanes(from) || lanes(r0()) != lanes(to) {
                return Err(format!("{} to {}, not {from} to {to}", ty(*arg), r0()));
            }
        }
    }
    Ok(())
}

/// The block ends in a yield of values shaped like `results`.
fn check_yield(k: &Kernel, b: Block, results: &[Value]) -> Result<(), String> {
    let last = k.blocks[b].insts.last().and_then(|&i| k.insts.get(i));
    let Some(Op::Yield(vals)) = last.map(|d| &d.op) else {
        return Err(format!("{b} does not end in a yield"));
    };
    if vals.len() != results.len() {
        return Err(format!("{b} yields {} values for {} results", vals.len(), results.len()));
    }
    for (&v, &r) in vals.iter().zip(results) {
        if v.index() >= k.values.len() {
            return Err(format!("value {v} does not exist"));
        }
        if results.contains(&v) {
            return Err(format!("{b} yields {v}, a result of the op that owns it"));
        }
        if lanes(k.values[v].ty) != lanes(k.values[r].ty) {
            return Err(format!("{b} yields {v} of type {} for {r}", k.values[v].ty));
        }
    }
    Ok(())
}
