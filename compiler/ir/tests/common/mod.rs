//! Kernels built with the builder, shared by the integration tests. Each is small but uses the
//! feature it is named after the way a library kernel would.
#![allow(dead_code)]

use kiln_ir::*;

/// One wave sums 32 floats; lane 0 writes the sum.
pub fn wave_sum() -> Kernel {
    let mut b = KernelBuilder::new("wave_sum", 32);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    let lane = b.lane();
    let v = b.load(x, lane, Type::F32);
    let s = b.wave_reduce(ReduceOp::Add, v);
    let zero = b.u32(0);
    let first = b.eq(lane, zero);
    b.if_then(first, |b| b.store(out, zero, s));
    b.finish()
}

/// A workgroup of 8 waves sums 256 floats a row: wave sums go through LDS behind `barrier(Lds)`,
/// then wave 0 sums the partials.
pub fn lds_reduce() -> Kernel {
    let mut b = KernelBuilder::new("lds_row_sum", 32);
    b.workgroup_size([256, 1, 1]);
    b.const_param("rows_per_workgroup", 1);
    let rows = b.scalar_param("rows", ScalarType::U32);
    b.grid([ShapeExpr::scaled(&[rows], 1, 1), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let x =
        b.buffer_with_len("x", ScalarType::F32, Access::Read, ShapeExpr::scaled(&[rows], 256, 1));
    let out =
        b.buffer_with_len("out", ScalarType::F32, Access::Write, ShapeExpr::scaled(&[rows], 1, 1));
    let partials = b.lds("partials", ScalarType::F32, 8);
    let row = b.workgroup_id(Dim::X);
    let local = b.local_id();
    let lane = b.lane();
    let wave = b.wave();
    let c256 = b.u32(256);
    let base = b.mul(row, c256);
    let idx = b.add(base, local);
    let v = b.load(x, idx, Type::F32);
    let s = b.wave_reduce(ReduceOp::Add, v);
    let zero = b.u32(0);
    let lane0 = b.eq(lane, zero);
    b.if_then(lane0, |b| b.store(partials, wave, s));
    b.barrier(BarrierKind::Lds);
    let wave0 = b.eq(wave, zero);
    b.if_then(wave0, |b| {
        let seven = b.u32(7);
        let slot = b.min(lane, seven);
        let p = b.load(partials, slot, Type::F32);
        let eight = b.u32(8);
        let inside = b.lt(lane, eight);
        let fzero = b.f32(0.0);
        let p = b.select(inside, p, fzero);
        let total = b.wave_reduce(ReduceOp::Add, p);
        let first = b.eq(lane, zero);
        b.if_then(first, |b| b.store(out, row, total));
    });
    b.finish()
}

/// argmax over a row with one wave of 64: a strided loop keeps each lane's best (value, index),
/// then `wave_argmax` picks the winner.
pub fn argmax() -> Kernel {
    let mut b = KernelBuilder::new("argmax_rows", 64);
    let n = b.scalar_param("n", ScalarType::U32);
    let rows = b.scalar_param("rows", ScalarType::U32);
    b.grid([ShapeExpr::scaled(&[rows], 1, 1), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let x =
        b.buffer_with_len("x", ScalarType::F32, Access::Read, ShapeExpr::scaled(&[rows, n], 1, 1));
    let out =
        b.buffer_with_len("out", ScalarType::U32, Access::Write, ShapeExpr::scaled(&[rows], 1, 1));
    let row = b.workgroup_id(Dim::X);
    let lane = b.lane();
    let nv = b.arg(n);
    let step = b.u32(64);
    let neg_inf = b.f32(f32::NEG_INFINITY);
    let zero = b.u32(0);
    let base = b.mul(row, nv);
    let best = b.for_range(lane, nv, step, 4, &[neg_inf, zero], |b, i, carried| {
        let at = b.add(base, i);
        let v = b.load(x, at, Type::F32);
        let better = b.gt(v, carried[0]);
        let bv = b.select(better, v, carried[0]);
        let bi = b.select(better, i, carried[1]);
        vec![bv, bi]
    });
    let (_, index) = b.wave_argmax(best[0], best[1]);
    let first = b.eq(lane, zero);
    b.if_then(first, |b| b.store(out, row, index));
    b.finish()
}

/// `tsum<P>` over `tokens` partial sums (P = tokens rounded up to a power of two).
pub fn tsum(tokens: u32) -> Kernel {
    let p = tokens.next_power_of_two();
    let mut b = KernelBuilder::new(format!("tsum_t{tokens}"), 32);
    b.const_param("tokens", tokens as i64);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    let lane = b.lane();
    let t = b.u32(tokens);
    let base = b.mul(lane, t);
    let vals: Vec<Value> = (0..tokens)
        .map(|k| {
            let kk = b.u32(k);
            let at = b.add(base, kk);
            b.load(x, at, Type::F32)
        })
        .collect();
    let s = b.tsum(p, &vals);
    b.store(out, lane, s);
    b.finish()
}

/// A loop carrying a running sum and a count, with a vector load in the body.
pub fn carried_loop() -> Kernel {
    let mut b = KernelBuilder::new("sum_count", 32);
    let n = b.scalar_param("n", ScalarType::I32);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    let lane = b.lane();
    let start = b.i32(0);
    let end = b.arg(n);
    let step = b.i32(1);
    let fzero = b.f32(0.0);
    let izero = b.i32(0);
    let res = b.for_range(start, end, step, 1, &[fzero, izero], |b, i, c| {
        let four = b.i32(4);
        let at = b.mul(i, four);
        let v = b.load(x, at, Type::vector(ScalarType::F32, 4));
        let e0 = b.extract(v, 0);
        let e3 = b.extract(v, 3);
        let s = b.add(c[0], e0);
        let s = b.add(s, e3);
        let one = b.i32(1);
        let cnt = b.add(c[1], one);
        vec![s, cnt]
    });
    let cnt = b.convert(res[1], Type::F32);
    let mean = b.div(res[0], cnt);
    b.store(out, lane, mean);
    b.finish()
}

/// `if`/`else` with two results.
pub fn if_else() -> Kernel {
    let mut b = KernelBuilder::new("clamp_pair", 32);
    let x = b.buffer("x", ScalarType::F32, Access::ReadWrite);
    let lane = b.lane();
    let v = b.load(x, lane, Type::F32);
    let zero = b.f32(0.0);
    let neg = b.lt(v, zero);
    let r = b.if_else(
        neg,
        |b| {
            let z = b.f32(0.0);
            let one = b.u32(1);
            vec![z, one]
        },
        |b| {
            let s = b.sqrt(v);
            let zero = b.u32(0);
            vec![s, zero]
        },
    );
    b.store(x, lane, r[0]);
    let flags = b.u32(1024);
    let at = b.add(lane, flags);
    let bits = b.bitcast(r[1], Type::F32);
    b.store(x, at, bits);
    b.finish()
}

/// Every kernel above.
pub fn all() -> Vec<Kernel> {
    let mut ks = vec![wave_sum(), lds_reduce(), argmax(), carried_loop(), if_else()];
    ks.extend((1..=8).map(tsum));
    ks
}
