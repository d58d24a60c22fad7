//! Example kernels written with [`KernelBuilder`]: small but real, they show the builder on the
//! patterns the kernel library uses (wave reductions, strided row loops, partials through LDS,
//! argmax with defined ties, the transposed butterfly) and serve as test inputs for the
//! interpreter here and for the back ends' codegen tests.
//!
//! Every builder takes the wave size (32 or 64); each kernel reads `f32` and documents its
//! parameters, grid and the exact order in which it combines values, so that a plain-Rust model
//! can reproduce its results bit for bit.
//!
//! Test support, not API: compiled only with the `testing` feature, which dev-dependencies and
//! the test crates enable.

use crate::{
    Access, BarrierKind, Dim, Kernel, KernelBuilder, Param, ReduceOp, ScalarType, ShapeExpr, Type,
    UnaryOp, Value,
};

fn one() -> ShapeExpr {
    ShapeExpr::constant(1)
}

/// The start shared by the kernels that give each row one workgroup of `workgroup_lanes` lanes:
/// parameters `x: f32[rows * n]` (read), `out: out_elem[rows]` (write), `n: u32`, `rows: u32`,
/// grid `(rows, 1, 1)`, and the values their strided row loops use.
struct RowKernel {
    b: KernelBuilder,
    /// Waves per workgroup.
    waves: u32,
    out: Param,
    x: Param,
    row: Value,
    /// Linear local id: the loop's first element.
    lid: Value,
    lane: Value,
    wave_id: Value,
    n_v: Value,
    /// `row * n`.
    base: Value,
    /// `workgroup_lanes`.
    stride: Value,
}

fn row_kernel(name: &str, wave: u32, workgroup_lanes: u32, out_elem: ScalarType) -> RowKernel {
    assert!(workgroup_lanes.is_multiple_of(wave) && workgroup_lanes / wave <= wave);
    let waves = workgroup_lanes / wave;
    let mut b = KernelBuilder::new(name, wave);
    b.workgroup_size([workgroup_lanes, 1, 1]);
    b.const_param("workgroup_lanes", workgroup_lanes as i64);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let out = b.buffer("out", out_elem, Access::Write);
    let n = b.scalar_param("n", ScalarType::U32);
    let rows = b.scalar_param("rows", ScalarType::U32);
    b.set_buffer_len(x, ShapeExpr::scaled(&[rows, n], 1, 1));
    b.set_buffer_len(out, ShapeExpr::scaled(&[rows], 1, 1));
    b.grid([ShapeExpr::scaled(&[rows], 1, 1), one(), one()]);

    let row = b.workgroup_id(Dim::X);
    let lid = b.local_id();
    let lane = b.lane();
    let wave_id = b.wave();
    let n_v = b.arg(n);
    let base = b.mul(row, n_v);
    let stride = b.u32(workgroup_lanes);
    RowKernel { b, waves, out, x, row, lid, lane, wave_id, n_v, base, stride }
}

/// Each workgroup is one wave; wave `g` sums `x[g*W .. (g+1)*W]` with `wave_reduce(Add)` (an xor
/// butterfly with offsets W/2, ..., 1) and lane 0 writes the sum to `out[g]`.
///
/// Parameters: `x: f32[waves * W]` (read), `out: f32[waves]` (write), `waves: u32`.
/// Grid: `(waves, 1, 1)`.
pub fn wave_sum(wave: u32) -> Kernel {
    let mut b = KernelBuilder::new("wave_sum", wave);
    b.workgroup_size([wave, 1, 1]);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    let waves = b.scalar_param("waves", ScalarType::U32);
    b.set_buffer_len(x, ShapeExpr::scaled(&[waves], wave as u64, 1));
    b.set_buffer_len(out, ShapeExpr::scaled(&[waves], 1, 1));
    b.grid([ShapeExpr::scaled(&[waves], 1, 1), one(), one()]);

    let g = b.workgroup_id(Dim::X);
    let lane = b.lane();
    let w = b.u32(wave);
    let base = b.mul(g, w);
    let i = b.add(base, lane);
    let v = b.load(x, i, Type::F32);
    let s = b.wave_reduce(ReduceOp::Add, v);
    let zero = b.u32(0);
    let first = b.eq(lane, zero);
    b.if_then(first, |b| b.store(out, g, s));
    b.finish()
}

/// One workgroup of `workgroup_lanes` lanes per row: sums row `r` of `x` (`n` elements) into
/// `out[r]`.
///
/// Order of the sum: lane `t` (linear local id) adds `x[r*n + i]` for `i = t, t + L, t + 2L, ...`
/// (`L = workgroup_lanes`) into an accumulator starting at `+0.0` (`acc = acc + x`); each wave
/// reduces its lanes with `wave_reduce(Add)`; lane 0 of wave `w` writes that partial to LDS slot
/// `w`; after `barrier(Lds)`, wave 0 loads the partials (lanes past the number of waves use
/// `+0.0`) and reduces them the same way; lane 0 writes the result.
///
/// Parameters: `x: f32[rows * n]` (read), `out: f32[rows]` (write), `n: u32`, `rows: u32`.
/// Grid: `(rows, 1, 1)`. Needs `workgroup_lanes` a multiple of the wave and at most `W * W`.
pub fn workgroup_sum(wave: u32, workgroup_lanes: u32) -> Kernel {
    let RowKernel { mut b, waves, out, x, row, lid, lane, wave_id, n_v, base, stride } =
        row_kernel("workgroup_sum", wave, workgroup_lanes, ScalarType::F32);
    let partials = b.lds("partials", ScalarType::F32, waves);
    let zero_f = b.f32(0.0);
    let acc = b.for_range(lid, n_v, stride, 1, &[zero_f], |b, i, c| {
        let idx = b.add(base, i);
        let v = b.load(x, idx, Type::F32);
        vec![b.add(c[0], v)]
    })[0];
    let s = b.wave_reduce(ReduceOp::Add, acc);
    let zero = b.u32(0);
    let lane0 = b.eq(lane, zero);
    b.if_then(lane0, |b| b.store(partials, wave_id, s));
    b.barrier(BarrierKind::Lds);
    let wave0 = b.eq(wave_id, zero);
    b.if_then(wave0, |b| {
        let nw = b.u32(waves);
        let has = b.lt(lane, nw);
        let v =
            b.if_else(has, |b| vec![b.load(partials, lane, Type::F32)], |b| vec![b.f32(0.0)])[0];
        let t = b.wave_reduce(ReduceOp::Add, v);
        let lane0 = b.eq(lane, zero);
        b.if_then(lane0, |b| b.store(out, row, t));
    });
    b.finish()
}

/// One workgroup of `workgroup_lanes` lanes per row: `out[r]` = the index of the largest element
/// of row `r` of `x` (`n` elements), like `torch.argmax`: NaN counts as largest, ties go to the
/// lowest index, a row of `-inf` gives 0 (an empty row gives `u32::MAX`).
///
/// Lane `t` scans `i = t, t + L, ...` keeping the first largest (a later element replaces the
/// kept one only if it is larger, or NaN over a number); each wave combines with `wave_argmax`;
/// lane 0 of each wave writes (value, index) to LDS; after `barrier(Lds)` wave 0 combines the
/// partials (lanes past the number of waves use `(-inf, u32::MAX)`), and lane 0 writes the index.
///
/// Parameters: `x: f32[rows * n]` (read), `out: u32[rows]` (write), `n: u32`, `rows: u32`.
/// Grid: `(rows, 1, 1)`. Needs `workgroup_lanes` a multiple of the wave and at most `W * W`.
pub fn argmax_row(wave: u32, workgroup_lanes: u32) -> Kernel {
    let RowKernel { mut b, waves, out, x, row, lid, lane, wave_id, n_v, base, stride } =
        row_kernel("argmax_row", wave, workgroup_lanes, ScalarType::U32);
    let best_v = b.lds("best_value", ScalarType::F32, waves);
    let best_i = b.lds("best_index", ScalarType::U32, waves);
    let neg_inf = b.f32(f32::NEG_INFINITY);
    let none = b.u32(u32::MAX);
    let has_first = b.lt(lid, n_v);
    let first = b.if_else(
        has_first,
        |b| {
            let idx = b.add(base, lid);
            vec![b.load(x, idx, Type::F32), lid]
        },
        |_| vec![neg_inf, none],
    );
    let start = b.add(lid, stride);
    let best = b.for_range(start, n_v, stride, 1, &first, |b, i, c| {
        let idx = b.add(base, i);
        let v = b.load(x, idx, Type::F32);
        let v_nan = b.unary(UnaryOp::IsNan, v);
        let best_nan = b.unary(UnaryOp::IsNan, c[0]);
        let larger = b.gt(v, c[0]);
        let better = b.or(v_nan, larger);
        let keep_best = b.not(best_nan);
        let take = b.and(keep_best, better);
        vec![b.select(take, v, c[0]), b.select(take, i, c[1])]
    });
    let (wv, wi) = b.wave_argmax(best[0], best[1]);
    let zero = b.u32(0);
    let lane0 = b.eq(lane, zero);
    b.if_then(lane0, |b| {
        b.store(best_v, wave_id, wv);
        b.store(best_i, wave_id, wi);
    });
    b.barrier(BarrierKind::Lds);
    let wave0 = b.eq(wave_id, zero);
    b.if_then(wave0, |b| {
        let nw = b.u32(waves);
        let has = b.lt(lane, nw);
        let p = b.if_else(
            has,
            |b| vec![b.load(best_v, lane, Type::F32), b.load(best_i, lane, Type::U32)],
            |_| vec![neg_inf, none],
        );
        let (_, fi) = b.wave_argmax(p[0], p[1]);
        let lane0 = b.eq(lane, zero);
        b.if_then(lane0, |b| b.store(out, row, fi));
    });
    b.finish()
}

/// `tsum<p>` over `t <= p` tokens: each workgroup is one wave; lane `l` of group `g` loads its
/// partial sum of token `k` from `x[(g*t + k) * W + l]` for `k < t`, applies `tsum<p>` (tokens
/// `t..p` count as zero), and the owner lane `k * W / p` of each token `k < t` writes token `k`'s
/// wave-wide sum to `out[g*t + k]`.
///
/// Parameters: `x: f32[groups * t * W]` (read), `out: f32[groups * t]` (write), `groups: u32`.
/// Grid: `(groups, 1, 1)`. Needs `p` a power of two, `p <= W` and `1 <= t <= p`.
pub fn tsum_tokens(wave: u32, p: u32, t: u32) -> Kernel {
    assert!(p.is_power_of_two() && p <= wave && (1..=p).contains(&t));
    let mut b = KernelBuilder::new("tsum_tokens", wave);
    b.workgroup_size([wave, 1, 1]);
    b.const_param("p", p as i64);
    b.const_param("t", t as i64);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    let groups = b.scalar_param("groups", ScalarType::U32);
    b.set_buffer_len(x, ShapeExpr::scaled(&[groups], (t * wave) as u64, 1));
    b.set_buffer_len(out, ShapeExpr::scaled(&[groups], t as u64, 1));
    b.grid([ShapeExpr::scaled(&[groups], 1, 1), one(), one()]);

    let g = b.workgroup_id(Dim::X);
    let lane = b.lane();
    let tv = b.u32(t);
    let w = b.u32(wave);
    let first_token = b.mul(g, tv);
    let values: Vec<_> = (0..t)
        .map(|k| {
            let kv = b.u32(k);
            let token = b.add(first_token, kv);
            let row = b.mul(token, w);
            let idx = b.add(row, lane);
            b.load(x, idx, Type::F32)
        })
        .collect();
    let sum = b.tsum(p, &values);
    let per = b.u32(wave / p);
    let k = b.div(lane, per);
    let r = b.rem(lane, per);
    let zero = b.u32(0);
    let at_start = b.eq(r, zero);
    let real = b.lt(k, tv);
    let owner = b.and(at_start, real);
    b.if_then(owner, |b| {
        let o = b.add(first_token, k);
        b.store(out, o, sum);
    });
    b.finish()
}
