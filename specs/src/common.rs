//! Pieces shared by the families: reduction trees in registers, the argmax update rule, the
//! workgroup-wide argmax, and the last-workgroup handshake of the split variants.
//!
//! Reductions whose order matters (float sums) are written as explicit trees so a host model can
//! reproduce them: [`tree_sum`] is the butterfly `v[i] += v[i + off]` for `off = len/2, ..., 1`,
//! which is what an xor-butterfly wave reduction over `len` lanes leaves in every lane.

use kiln_ir::{
    Access, AtomicOp, BarrierKind, KernelBuilder, LdsSlot, Param, ScalarType, Scope, ShapeExpr,
    Type, UnaryOp, Value,
};

/// The butterfly tree over `vals` (a power of two long): `v[i] = v[i] + v[i + off]` for
/// `off = len/2, len/4, ..., 1`; returns `v[0]`. Equal, bit for bit, to an xor-butterfly wave
/// reduction of the same values with descending offsets.
pub(crate) fn tree_sum(b: &mut KernelBuilder, vals: &[Value]) -> Value {
    assert!(vals.len().is_power_of_two(), "tree_sum over {} values", vals.len());
    let mut v = vals.to_vec();
    let mut off = v.len() / 2;
    while off >= 1 {
        for i in 0..off {
            v[i] = b.add(v[i], v[i + off]);
        }
        off /= 2;
    }
    v[0]
}

/// Maximum of `vals` with the IR's `max` (order-free for the values kernels feed it).
pub(crate) fn fold_max(b: &mut KernelBuilder, vals: &[Value]) -> Value {
    let mut m = vals[0];
    for &v in &vals[1..] {
        m = b.max(m, v);
    }
    m
}

/// Reads `len` consecutive entries of an LDS slot starting at `start` (every lane reads the same
/// addresses: a broadcast read).
pub(crate) fn lds_read_all(
    b: &mut KernelBuilder,
    slot: LdsSlot,
    start: Value,
    len: u32,
    ty: Type,
) -> Vec<Value> {
    (0..len)
        .map(|i| {
            let k = b.u32(i);
            let idx = b.add(start, k);
            b.load(slot, idx, ty)
        })
        .collect()
}

/// The argmax update: does `(v, at)` replace the running best `best`, when candidates come in
/// increasing index order? Larger wins, NaN counts as largest and the first NaN stays, ties keep
/// the earlier index: `v > best || (isnan(v) && !isnan(best))`.
pub(crate) fn argmax_takes(b: &mut KernelBuilder, v: Value, best: Value) -> Value {
    let gt = b.gt(v, best);
    let v_nan = b.unary(UnaryOp::IsNan, v);
    let best_nan = b.unary(UnaryOp::IsNan, best);
    let best_num = b.not(best_nan);
    let nan_wins = b.and(v_nan, best_num);
    b.or(gt, nan_wins)
}

/// Applies [`argmax_takes`] and returns the new `(best, index)`.
pub(crate) fn argmax_update(
    b: &mut KernelBuilder,
    best: Value,
    best_at: Value,
    v: Value,
    at: Value,
) -> (Value, Value) {
    let take = argmax_takes(b, v, best);
    let nb = b.select(take, v, best);
    let ni = b.select(take, at, best_at);
    (nb, ni)
}

/// Lane, wave and linear local id.
pub(crate) struct Ids {
    pub lane: Value,
    pub wave: Value,
    pub local: Value,
}

/// Reads the ids every kernel needs.
pub(crate) fn ids(b: &mut KernelBuilder) -> Ids {
    let lane = b.lane();
    let wave = b.wave();
    let local = b.local_id();
    Ids { lane, wave, local }
}

/// Workgroup-wide argmax of every lane's `(best, at)` pair: a wave argmax, one pair a wave in LDS,
/// `barrier(Lds)`, then wave 0 reduces the `waves` pairs and runs `then` with the result (the
/// same in every lane of wave 0). Index `u32::MAX` means "nothing larger than -inf seen".
pub(crate) fn workgroup_argmax(
    b: &mut KernelBuilder,
    ids: &Ids,
    waves: u32,
    best: Value,
    at: Value,
    then: impl FnOnce(&mut KernelBuilder, Value, Value),
) {
    let lds_v = b.lds("argmax_value", kiln_ir::ScalarType::F32, waves);
    let lds_i = b.lds("argmax_index", kiln_ir::ScalarType::U32, waves);
    let (wv, wi) = b.wave_argmax(best, at);
    let zero = b.u32(0);
    let first = b.eq(ids.lane, zero);
    let wave = ids.wave;
    b.if_then(first, |b| {
        b.store(lds_v, wave, wv);
        b.store(lds_i, wave, wi);
    });
    b.barrier(BarrierKind::Lds);
    let in_wave0 = b.eq(ids.wave, zero);
    let lane = ids.lane;
    b.if_then(in_wave0, |b| {
        let nw = b.u32(waves);
        let valid = b.lt(lane, nw);
        let last = b.u32(waves - 1);
        let slot = b.min(lane, last);
        let v = b.load(lds_v, slot, Type::F32);
        let i = b.load(lds_i, slot, Type::U32);
        let ninf = b.f32(f32::NEG_INFINITY);
        let none = b.u32(u32::MAX);
        let v = b.select(valid, v, ninf);
        let i = b.select(valid, i, none);
        let (rv, ri) = b.wave_argmax(v, i);
        then(b, rv, ri)
    });
}

/// The last-workgroup handshake of a split kernel, run by wave 0 after lane 0 has stored this
/// workgroup's partial result: lane 0 adds one to `counters[index]` (a device atomic, which
/// publishes the lane's earlier writes: no fence of its own before it); the workgroup that brings
/// the count to `total` runs `finish` in wave 0 after a `fence(Device)`. `finish` must reset the
/// counter (see [`reset_counter`]) so the next launch (a graph replay) starts from zero.
pub(crate) fn last_workgroup(
    b: &mut KernelBuilder,
    lane: Value,
    counters: Param,
    index: Value,
    total: u32,
    finish: impl FnOnce(&mut KernelBuilder),
) {
    let zero = b.u32(0);
    let first = b.eq(lane, zero);
    let old = b.if_else(
        first,
        |b| {
            let one = b.u32(1);
            vec![b.atomic(AtomicOp::Add, counters, index, one, Scope::Device)]
        },
        |b| vec![b.u32(0)],
    )[0];
    let old = b.broadcast(old, 0);
    let last = b.u32(total - 1);
    let is_last = b.eq(old, last);
    b.if_then(is_last, |b| {
        b.fence(Scope::Device);
        finish(b)
    });
}

/// The last-workgroup handshake for a workgroup of several waves (`tid`: the lane's index in the
/// workgroup), with a count known only at run time (`total`, uniform): a `barrier all`, then
/// lane 0 of the workgroup counts it with a device atomic, which publishes every lane's writes
/// before that barrier (the IR's rule, the PTX model's cumulativity, the pattern of CUTLASS's
/// split-K semaphore), and shares the count through LDS (`flag`); the workgroup that brings the
/// count to `total` runs `finish` after a device fence in every lane (each wave acquires).
/// `finish` must set `counters[index]` back to zero (the next launch, a graph replay, starts
/// from it).
///
/// No lane fences before the barrier, and lane 0 not before its atomic (whose lowering fences
/// on both sides): on sm_90 each `fence.acq_rel.gpu` is a `MEMBAR.ALL.GPU` with an L1
/// invalidation, and the handshake had five of them in a row on lane 0's path.
pub(crate) fn last_of_workgroups(
    b: &mut KernelBuilder,
    tid: Value,
    flag: LdsSlot,
    counters: Param,
    index: Value,
    total: Value,
    finish: impl FnOnce(&mut KernelBuilder),
) {
    b.barrier(BarrierKind::All);
    let zero = b.u32(0);
    let first = b.eq(tid, zero);
    b.if_then(first, |b| {
        let one = b.u32(1);
        let old = b.atomic(AtomicOp::Add, counters, index, one, Scope::Device);
        let z = b.u32(0);
        b.store(flag, z, old);
    });
    b.barrier(BarrierKind::Lds);
    let old = b.load(flag, zero, Type::U32);
    let one = b.u32(1);
    let last = b.sub(total, one);
    let is_last = b.eq(old, last);
    b.if_then(is_last, |b| {
        b.fence(Scope::Device);
        finish(b)
    });
}

/// Sets `counters[index]` back to zero (lane 0 only).
pub(crate) fn reset_counter(b: &mut KernelBuilder, lane: Value, counters: Param, index: Value) {
    let zero = b.u32(0);
    let first = b.eq(lane, zero);
    b.if_then(first, |b| {
        let z = b.u32(0);
        b.store(counters, index, z)
    });
}

/// `x % m == 0` for a `u32` value and a constant.
pub(crate) fn is_multiple(b: &mut KernelBuilder, x: Value, m: u32) -> Value {
    let mm = b.u32(m);
    let r = b.rem(x, mm);
    let zero = b.u32(0);
    b.eq(r, zero)
}

/// The parameters of a per-row kernel over logits: `logits` (f32, `rows * n`), `out` (`out_elem`,
/// `rows`), `rows`, `n`.
pub(crate) fn row_params(
    b: &mut KernelBuilder,
    out_elem: ScalarType,
) -> (Param, Param, Param, Param) {
    let logits = b.buffer("logits", ScalarType::F32, Access::Read);
    let out = b.buffer("out", out_elem, Access::Write);
    let rows = b.scalar_param("rows", ScalarType::U32);
    let n = b.scalar_param("n", ScalarType::U32);
    b.set_buffer_len(logits, ShapeExpr::scaled(&[rows, n], 1, 1));
    b.set_buffer_len(out, ShapeExpr::scaled(&[rows], 1, 1));
    (logits, out, rows, n)
}
