//! Prefetching what a workgroup will read before it waits for the grid before it.
//!
//! A decode step is a chain of small launches, each waiting for the one before it. On NVIDIA
//! sm_90 the runtime launches them with programmatic serialization, so a kernel's workgroups start
//! while the previous node still runs and stop at `griddepcontrol.wait`. What the previous node
//! does not write (a GEMV's weights) can be asked of L2 before that wait: [`range`] prefetches the first [`MAX_BYTES`] of a byte range, a line a lane, and the
//! kernel then waits ([`kiln_ir::Op::GridDependencyWait`]) and runs as before. A prefetch
//! changes no value (the interpreter only checks that its address is in the buffer), so every
//! variant keeps its bits; on AMD both ops lower to nothing. Used by the dense GEMVs
//! ([`rows`]). (The `short` decode attention prefetching its earlier cache rows was measured and
//! dropped: SmolLM2's step no faster, the Llama-3-8B-shaped attention node 4.45 -> 4.59 us.)
//!
//! Only grids of at most [`MAX_WORKGROUPS`] workgroups prefetch ([`small_grid`]): measured on
//! the H200 (bench/results/prefetch-h200-2026-12-01.md), SmolLM2's decode step (GEMV grids of
//! 18-144 workgroups, all resident while the node before runs) went from 576.5 to 555.5 us a
//! replay (Q4_1) and 586.5 to 557.1 (Q8_0), while large grids, whose later workgroups start
//! after the wait anyway, lost to the doubled L2 requests: Q8_0 N=14336 K=4096 15.56 -> 20.41
//! us, the Llama-3-8B-shaped step 2600 -> 2988 us. With the limit (call 2): SmolLM2 575.8 ->
//! 556.0 us (Q4_1) and 588.1 -> 558.1 (Q8_0); the 8B step 2604.9 -> 2641.7 (none of its GEMV
//! grids prefetches; its Q/K/V GEMV node measured 6.92 -> 7.27 us alone, not explained).

use crate::gemv::format::{Weights, QK};
use kiln_ir::{Dim, KernelBuilder, Param, ScalarType, Type, Value};

/// Keeps the loads of `vals` (issued before the grid-dependency wait that follows) before that
/// wait in the machine code: a prefetch of byte 0 or 1 of `p` (a buffer of at least 2 bytes)
/// whose choice depends on every bit of every value, so the values must have arrived before it
/// issues, and a prefetch stays before the wait. Without it ptxas (CUDA 13, sm_90) sinks such
/// loads to their first use after the wait (bench/results/early-h200-2026-12-03.md, call 1's
/// SASS: every `LDG` of the early weights after `ACQBULK`). Changes no value.
pub fn hold(b: &mut KernelBuilder, p: Param, vals: &[Value]) {
    let mut acc = b.u32(0);
    for &v in vals {
        let ty = b.type_of(v);
        for i in 0..ty.lanes {
            let s = if ty.lanes > 1 { b.extract(v, i) } else { v };
            let w = word(b, s, ty.scalar);
            acc = b.xor(acc, w);
        }
    }
    let magic = b.u32(0x9e37_79b9);
    let hit = b.eq(acc, magic);
    let one = b.u64(1);
    let zero = b.u64(0);
    let at = b.select(hit, one, zero);
    b.prefetch(p, at);
}

/// The bits of a scalar as a `u32` (the low 32 of a 64-bit one).
fn word(b: &mut KernelBuilder, s: Value, st: ScalarType) -> Value {
    let unsigned = match st.bytes() {
        1 => ScalarType::U8,
        2 => ScalarType::U16,
        4 => ScalarType::U32,
        _ => ScalarType::U64,
    };
    let bits = if st == unsigned { s } else { b.bitcast(s, Type::scalar(unsigned)) };
    if unsigned == ScalarType::U32 {
        bits
    } else {
        b.convert(bits, Type::U32)
    }
}

/// Bytes of one L2 line (NVIDIA: 128).
pub const LINE: u64 = 128;
/// Most bytes a workgroup prefetches of one weight buffer (the rest streams as before): enough
/// for the first blocks of every row while the previous node finishes, without evicting it.
pub const MAX_BYTES: u64 = 32 * 1024;

/// Largest grid (workgroups, all dimensions) whose workgroups prefetch: about two an SM of an
/// H200 (132 SMs), so every workgroup can be resident while the previous node runs.
pub const MAX_WORKGROUPS: u32 = 256;

/// Whether this launch's grid is small enough to prefetch (workgroup-uniform).
pub fn small_grid(b: &mut KernelBuilder) -> Value {
    let x = b.num_workgroups(Dim::X);
    let y = b.num_workgroups(Dim::Y);
    let z = b.num_workgroups(Dim::Z);
    let n = b.mul(x, y);
    let n = b.mul(n, z);
    let max = b.u32(MAX_WORKGROUPS);
    b.le(n, max)
}

/// The buffers of one matrix with the bytes each holds for 32 values of a row.
fn streams(w: &Weights) -> Vec<(Param, u64)> {
    match *w {
        Weights::Ggml(p, wt) => vec![(p, wt.block_bytes())],
        Weights::Repacked { q, s, wt } => {
            vec![(q, wt.quant_bytes()), (s, u64::from(wt.scale_type().bytes()))]
        }
    }
}

/// Prefetches bytes `base..base + bytes` (`u64`, `bytes >= 1`, inside buffer `p`), at most the
/// first [`MAX_BYTES`] of them, with the workgroup's `lanes` lanes (`tid` the lane's index in
/// it). Only arithmetic and prefetches: it may run before the grid-dependency wait.
pub fn range(b: &mut KernelBuilder, p: Param, base: Value, bytes: Value, tid: Value, lanes: u32) {
    let line = b.u64(LINE);
    let one = b.u64(1);
    let cap = b.u64(MAX_BYTES);
    let step = b.u32(lanes);
    let end = b.add(base, bytes);
    let last = b.sub(end, one);
    let span = b.min(bytes, cap);
    // Lines from `base`, plus one for the tail of an unaligned start.
    let lines = b.add(span, line);
    let lines = b.sub(lines, one);
    let lines = b.div(lines, line);
    let lines = b.add(lines, one);
    let lines = b.convert(lines, Type::U32);
    b.for_range(tid, lines, step, 1, &[], |b, i, _| {
        let i = b.convert(i, Type::U64);
        let off = b.mul(i, line);
        let off = b.add(base, off);
        let off = b.min(off, last);
        b.prefetch(p, off);
        vec![]
    });
}

/// Prefetches rows `row0..row0 + rows` (`u32`, `rows >= 1`, all below the matrix's row count)
/// of `weights`, `k` values a row, with the workgroup's `lanes` lanes ([`range`] a buffer).
pub fn rows(
    b: &mut KernelBuilder,
    weights: &[Weights],
    row0: Value,
    rows: Value,
    k: Value,
    lanes: u32,
) {
    let qk = b.u32(QK);
    let nb = b.div(k, qk);
    let nb = b.convert(nb, Type::U64);
    let r0 = b.convert(row0, Type::U64);
    let nr = b.convert(rows, Type::U64);
    let tid = b.local_id();
    for w in weights {
        // From the first row's block 0, `rows` whole rows.
        from_row(b, w, (r0, nb), (tid, lanes), |b, _, row_bytes, base| {
            (base, b.mul(nr, row_bytes))
        });
    }
}

/// Prefetches blocks `from..nb` of row `row` of `w` (`u32`, `from < nb`), with a wave's `lanes`
/// lanes (`lane` the lane's index; [`range`] a buffer, at most [`MAX_BYTES`] of each).
pub fn row_tail(
    b: &mut KernelBuilder,
    w: &Weights,
    row: Value,
    (from, nb): (Value, Value),
    lane: Value,
    lanes: u32,
) {
    let nb = b.convert(nb, Type::U64);
    let from = b.convert(from, Type::U64);
    let row = b.convert(row, Type::U64);
    let left = b.sub(nb, from);
    // From the row's block `from`, the rest of the row.
    from_row(b, w, (row, nb), (lane, lanes), |b, per, _, base| {
        let skip = b.mul(from, per);
        (b.add(base, skip), b.mul(left, per))
    });
}

/// [`rows`] and [`row_tail`] of one matrix: for each buffer of `w`, the bytes of one block
/// (`per`), of one row (`nb` blocks), and where row `row` starts (`row` and `nb` `u64`); `span`
/// turns those into the range to prefetch (its start, its bytes), which [`range`] prefetches
/// with `lanes` lanes (`tid` the lane's index among them).
fn from_row(
    b: &mut KernelBuilder,
    w: &Weights,
    (row, nb): (Value, Value),
    (tid, lanes): (Value, u32),
    mut span: impl FnMut(&mut KernelBuilder, Value, Value, Value) -> (Value, Value),
) {
    for (p, per) in streams(w) {
        let per = b.u64(per);
        let row_bytes = b.mul(nb, per);
        let base = b.mul(row, row_bytes);
        let (base, bytes) = span(b, per, row_bytes, base);
        range(b, p, base, bytes, tid, lanes);
    }
}
