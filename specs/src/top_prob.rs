//! `row_top_prob`: the largest softmax probability of each row, `1 / sum_i exp(l_i - max l)`
//! (a sampler's confidence test), with the portable exp ([`crate::math::exp_portable`]).
//!
//! ABI (both variants):
//!
//! | param    | kind                | meaning                          |
//! |----------|---------------------|----------------------------------|
//! | `logits` | f32, read, `rows*n` | the rows, back to back           |
//! | `out`    | f32, write, `rows`  | the top probability of each row  |
//! | `rows`   | u32                 | number of rows                   |
//! | `n`      | u32                 | row length                       |
//!
//! The split variant adds the workspace buffers `partials` and `counters` (left zeroed).
//!
//! # The order of the sum (the same in both variants, so they agree bit for bit)
//!
//! With `W` the wave size and `G = 256 / W`:
//! 1. The row is cut into segments of [`SEGMENT`] = 1024 elements; lane `t` (0..256) of a segment
//!    owns elements `4t..4t+4` of it (missing elements read as `-inf`).
//!    `m_j` = max of the segment; `e = exp_sub(x, m_j)` ([`crate::math::exp_sub`]);
//!    lane sum `((e0 + e1) + e2) + e3`; wave sums by the xor butterfly over `W` lanes; `sigma_j`
//!    = the butterfly tree (`v[i] += v[i + off]`, `off = G/2, ..., 1`) over the `G` wave sums.
//! 2. 256 running states `(mu_r, a_r)`, starting at `(-inf, 0)`: state `r` folds the segments
//!    `j = r, r + 256, ...` in order: `mu' = max(mu, m_j)`,
//!    `a' = a * exp_sub(mu, mu') + sigma_j * exp_sub(m_j, mu')`.
//! 3. `M = max mu_r`; `u_r = a_r * exp_sub(mu_r, M)`; the total is the butterfly over `W` lanes of
//!    each group `u[kW..kW+W]` (a `tsum<G>`), then the tree over the `G` group sums.
//! 4. `out = 1 / total`, and NaN for a row of only `-inf` (as torch's softmax). A NaN logit or a
//!    `+inf` one gives NaN.
//!
//! The baseline runs all of it in one workgroup a row; the split variant gives segment residue `r`
//! to workgroup `r` and lets the last workgroup of the row run step 3. Measured on an H200 (CUDA
//! graph, per call, inputs cold in L2), n = 248,320: split 4.5 us for one row, 9.9 us for 8
//! (baseline: 107 us).

use crate::bench::{u32_arg, BenchCase};
use crate::cases::logit_row_cases;
use crate::common::{
    fold_max, ids, is_multiple, last_workgroup, lds_read_all, reset_counter, tree_sum, Ids,
};
use crate::math::exp_sub;
use crate::{Bench, KernelSpec, Parity, VariantSpec};
use kiln_ir::package::Admission;
use kiln_ir::{
    BarrierKind, Dim, Kernel, KernelBuilder, LdsSlot, Param, ReduceOp, ScalarType, ShapeExpr,
    Target, Type, Value,
};

/// Lanes that share a segment (and number of running states, and split workgroups a row).
pub const SEGMENT_LANES: u32 = 256;
/// Elements per segment (4 a lane).
pub const SEGMENT: u32 = 4 * SEGMENT_LANES;
/// Segments the baseline's workgroup works on at once (its size is `SUBGROUPS * 256` lanes).
pub const SUBGROUPS: u32 = 4;
/// Row length from which the router takes the split variant (measured on an H200: the baseline
/// wins at 2048, the split from 8192 on).
pub const SPLIT_MIN_N: u64 = 8192;

/// The family: `baseline` (a workgroup a row) and `split` (256 workgroups a row).
pub fn spec() -> KernelSpec {
    KernelSpec {
        name: "row_top_prob",
        variants: vec![
            VariantSpec { name: "baseline", build: baseline, admit: Admission::default() },
            VariantSpec {
                name: "split",
                build: split,
                admit: Admission {
                    archs: vec![],
                    shapes: vec![("n".into(), SPLIT_MIN_N, u64::from(u32::MAX))],
                },
            },
        ],
        parity: Parity::Buffers(logit_row_cases),
        bench: Bench::Cases(bench_cases),
        archs: None,
        budgets: vec![],
    }
}

/// The knob space of `kiln tune`: one workgroup a row with 1, 2 or 4 segments at once, or the
/// split kernel (256 workgroups a row: the order fixes that number). Every candidate keeps the
/// order above, so the gate passes them all; buckets by row length (the split's threshold) and
/// rows.
pub fn tune_space() -> crate::tune::TuneSpace {
    use crate::tune::{Bucket, Knob, TuneSpace};
    let max = u64::from(u32::MAX);
    let bucket = |name, rows: (u64, u64), n: (u64, u64), timed: (u32, u32), case| Bucket {
        name,
        shapes: vec![("rows".into(), rows.0, rows.1), ("n".into(), n.0, n.1)],
        case: BenchCase {
            flops: None,
            name: case,
            scalars: vec![u32_arg("rows", timed.0), u32_arg("n", timed.1)],
            inputs: vec![("logits", ScalarType::F32, (timed.0 * timed.1) as usize)],
            bytes: u64::from(timed.0) * (u64::from(timed.1) * 4 + 4),
            values: vec![],
        },
    };
    TuneSpace {
        family: "row_top_prob",
        knobs: vec![
            Knob { name: "wgs", values: vec![1, SEGMENT_LANES], omitted: None },
            Knob { name: "subgroups", values: vec![1, 2, 4], omitted: None },
        ],
        buckets: vec![
            bucket("rows1_nlo", (1, 1), (1, SPLIT_MIN_N - 1), (1, 4096), "top_prob_tune_r1_n4096"),
            bucket("rows1_nhi", (1, 1), (SPLIT_MIN_N, max), (1, 248_320), "top_prob_tune_r1_v"),
            bucket(
                "rows2_nlo",
                (2, max),
                (1, SPLIT_MIN_N - 1),
                (8, 4096),
                "top_prob_tune_r8_n4096",
            ),
            bucket("rows2_nhi", (2, max), (SPLIT_MIN_N, max), (8, 248_320), "top_prob_tune_r8_v"),
        ],
        build: |t, wave, k| match (k[0], k[1]) {
            (1, sub) => Ok(baseline_with(wave, sub, &format!("row_top_prob_sub{sub}"))),
            (SEGMENT_LANES, 1) => Ok(split(t, wave)),
            (w, sub) => Err(format!("wgs {w} with subgroups {sub}: the split kernel has none")),
        },
        fits: |_, _| true,
    }
}

/// One row of a 248,320-token vocabulary: the logits read, one probability written.
fn bench_cases() -> Vec<BenchCase> {
    let v = 248_320u32;
    vec![BenchCase {
        flops: None,
        name: "row_top_prob_t1",
        scalars: vec![u32_arg("rows", 1), u32_arg("n", v)],
        inputs: vec![("logits", ScalarType::F32, v as usize)],
        bytes: u64::from(v * 4 + 4),
        values: vec![],
    }]
}

fn params(b: &mut KernelBuilder) -> (Param, Param, Param, Param) {
    let p = crate::common::row_params(b, ScalarType::F32);
    b.const_param("segment", SEGMENT as i64);
    p
}

/// Where a segment's lanes are and where their LDS scratch is.
struct SegmentCtx {
    logits: Param,
    row_base: Value,
    n: Value,
    aligned: Value,
    /// Lane within the segment's 256.
    t: Value,
    /// Wave within the segment's 256 lanes.
    sub_wave: Value,
    lane: Value,
    /// First LDS entry of this group (`group * G`).
    lds_off: Value,
    lds_max: LdsSlot,
    lds_sum: LdsSlot,
    waves: u32,
}

/// The four elements `e0..e0+4` of the row, `-inf` past `n`.
fn load4(b: &mut KernelBuilder, c: &SegmentCtx, e0: Value) -> Vec<Value> {
    let (logits, row_base, n) = (c.logits, c.row_base, c.n);
    b.if_else(
        c.aligned,
        |b| {
            let inside = b.lt(e0, n);
            b.if_else(
                inside,
                |b| {
                    let at = b.add(row_base, e0);
                    let x = b.load(logits, at, Type::vector(ScalarType::F32, 4));
                    (0..4u8).map(|k| b.extract(x, k)).collect()
                },
                |b| (0..4).map(|_| b.f32(f32::NEG_INFINITY)).collect(),
            )
        },
        |b| {
            (0..4u32)
                .map(|k| {
                    let kk = b.u32(k);
                    let e = b.add(e0, kk);
                    let inside = b.lt(e, n);
                    b.if_else(
                        inside,
                        |b| {
                            let at = b.add(row_base, e);
                            vec![b.load(logits, at, Type::F32)]
                        },
                        |b| vec![b.f32(f32::NEG_INFINITY)],
                    )[0]
                })
                .collect()
        },
    )
}

/// Step 1 for segment `j`: returns `(m_j, sigma_j)`, the same in every lane of the group.
/// Two `barrier(Lds)`; the caller's loop keeps the LDS uses apart.
fn segment(b: &mut KernelBuilder, c: &SegmentCtx, j: Value) -> (Value, Value) {
    let seg = b.u32(SEGMENT);
    let four = b.u32(4);
    let base = b.mul(j, seg);
    let lane_off = b.mul(c.t, four);
    let e0 = b.add(base, lane_off);
    let xs = load4(b, c, e0);
    let lm = fold_max(b, &xs);
    let wm = b.wave_reduce(ReduceOp::Max, lm);
    let zero = b.u32(0);
    let first = b.eq(c.lane, zero);
    let slot = b.add(c.lds_off, c.sub_wave);
    let (lds_max, lds_sum) = (c.lds_max, c.lds_sum);
    b.if_then(first, |b| b.store(lds_max, slot, wm));
    b.barrier(BarrierKind::Lds);
    let ms = lds_read_all(b, lds_max, c.lds_off, c.waves, Type::F32);
    let m = fold_max(b, &ms);
    let es: Vec<Value> = xs.iter().map(|&x| exp_sub(b, x, m)).collect();
    let s = b.add(es[0], es[1]);
    let s = b.add(s, es[2]);
    let s = b.add(s, es[3]);
    let ws = b.wave_reduce(ReduceOp::Add, s);
    b.if_then(first, |b| b.store(lds_sum, slot, ws));
    b.barrier(BarrierKind::Lds);
    let ss = lds_read_all(b, lds_sum, c.lds_off, c.waves, Type::F32);
    let sigma = tree_sum(b, &ss);
    (m, sigma)
}

/// Step 2: folds segment `(m, sigma)` into the state `(mu, a)`.
fn fold(b: &mut KernelBuilder, mu: Value, a: Value, m: Value, sigma: Value) -> (Value, Value) {
    let mu2 = b.max(mu, m);
    let s1 = exp_sub(b, mu, mu2);
    let p = b.mul(a, s1);
    let s2 = exp_sub(b, m, mu2);
    let q = b.mul(sigma, s2);
    (mu2, b.add(p, q))
}

/// Steps 3 and 4 in one wave: `load_state(r)` gives state `r = k * W + lane`. Returns the result
/// (the same in every lane).
fn finish(
    b: &mut KernelBuilder,
    wave: u32,
    lane: Value,
    mut load_state: impl FnMut(&mut KernelBuilder, Value) -> (Value, Value),
) -> Value {
    let groups = SEGMENT_LANES / wave;
    let states: Vec<(Value, Value)> = (0..groups)
        .map(|k| {
            let kw = b.u32(k * wave);
            let r = b.add(kw, lane);
            load_state(b, r)
        })
        .collect();
    let mus: Vec<Value> = states.iter().map(|s| s.0).collect();
    let lm = fold_max(b, &mus);
    let big_m = b.wave_reduce(ReduceOp::Max, lm);
    let us: Vec<Value> = states
        .iter()
        .map(|&(mu, a)| {
            let e = exp_sub(b, mu, big_m);
            b.mul(a, e)
        })
        .collect();
    let mut w = b.tsum(groups, &us);
    let mut off = wave / 2;
    while off >= wave / groups {
        let o = b.shuffle_xor(w, off);
        w = b.add(w, o);
        off /= 2;
    }
    let one = b.f32(1.0);
    let r = b.div(one, w);
    let ninf = b.f32(f32::NEG_INFINITY);
    let nan = b.f32(f32::NAN);
    let empty = b.eq(big_m, ninf);
    b.select(empty, nan, r)
}

/// The number of segments of a row, `ceil(n / SEGMENT)`.
fn segments(b: &mut KernelBuilder, n: Value) -> Value {
    let sm1 = b.u32(SEGMENT - 1);
    let seg = b.u32(SEGMENT);
    let s = b.add(n, sm1);
    b.div(s, seg)
}

/// Baseline: one workgroup of `SUBGROUPS * 256` lanes a row (grid `[rows, 1, 1]`); group `g`
/// handles segments `g, g + SUBGROUPS, ...`, and the lane that owns a segment's residue folds it.
pub fn baseline(_t: &Target, wave: u32) -> Kernel {
    baseline_with(wave, SUBGROUPS, "row_top_prob")
}

/// The baseline with `subgroups` segments at once (1, 2 or 4: a divisor of 256, so state `t`
/// still lives in group `t % subgroups` and folds its segments in the same order).
fn baseline_with(wave: u32, subgroups: u32, name: &str) -> Kernel {
    assert!(
        SEGMENT_LANES.is_multiple_of(subgroups),
        "subgroups {subgroups} must divide {SEGMENT_LANES}"
    );
    let block = subgroups * SEGMENT_LANES;
    let g_waves = SEGMENT_LANES / wave;
    let mut b = KernelBuilder::new(name, wave);
    b.workgroup_size([block, 1, 1]);
    b.const_param("block", block as i64);
    b.const_param("subgroups", subgroups as i64);
    let (logits, out, rows, n) = params(&mut b);
    b.grid([ShapeExpr::scaled(&[rows], 1, 1), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let lds_max = b.lds("wave_max", ScalarType::F32, subgroups * g_waves);
    let lds_sum = b.lds("wave_sum", ScalarType::F32, subgroups * g_waves);
    let lds_mu = b.lds("state_mu", ScalarType::F32, SEGMENT_LANES);
    let lds_a = b.lds("state_a", ScalarType::F32, SEGMENT_LANES);
    let Ids { lane, wave: wave_id, local } = ids(&mut b);
    let row = b.workgroup_id(Dim::X);
    let n_v = b.arg(n);
    let row_base = b.mul(row, n_v);
    let aligned = is_multiple(&mut b, n_v, 4);
    let sl = b.u32(SEGMENT_LANES);
    let g = b.div(local, sl);
    let t = b.rem(local, sl);
    let wv = b.u32(wave);
    let sub_wave = b.div(t, wv);
    let gw = b.u32(g_waves);
    let lds_off = b.mul(g, gw);
    let c = SegmentCtx {
        logits,
        row_base,
        n: n_v,
        aligned,
        t,
        sub_wave,
        lane,
        lds_off,
        lds_max,
        lds_sum,
        waves: g_waves,
    };
    let nseg = segments(&mut b, n_v);
    let sub = b.u32(subgroups);
    let sub_m1 = b.u32(subgroups - 1);
    let iters = b.add(nseg, sub_m1);
    let iters = b.div(iters, sub);
    let zero = b.u32(0);
    let one = b.u32(1);
    let ninf = b.f32(f32::NEG_INFINITY);
    let fzero = b.f32(0.0);
    let st = b.for_range(zero, iters, one, 1, &[ninf, fzero], |b, it, s| {
        let j = b.mul(it, sub);
        let j = b.add(j, g);
        let (m, sigma) = segment(b, &c, j);
        let res = b.rem(j, sl);
        let mine = b.eq(t, res);
        let real = b.lt(j, nseg);
        let owner = b.and(mine, real);
        let (mu, a) = (s[0], s[1]);
        b.if_else(
            owner,
            |b| {
                let (mu2, a2) = fold(b, mu, a, m, sigma);
                vec![mu2, a2]
            },
            |_| vec![mu, a],
        )
    });
    let (mu, a) = (st[0], st[1]);
    // State `t` lives in group `t % subgroups`.
    let tg = b.rem(t, sub);
    let holder = b.eq(tg, g);
    b.if_then(holder, |b| {
        b.store(lds_mu, t, mu);
        b.store(lds_a, t, a);
    });
    b.barrier(BarrierKind::Lds);
    let in_wave0 = b.eq(wave_id, zero);
    b.if_then(in_wave0, |b| {
        let r = finish(b, wave, lane, |b, r| {
            (b.load(lds_mu, r, Type::F32), b.load(lds_a, r, Type::F32))
        });
        let first = b.eq(lane, zero);
        b.if_then(first, |b| b.store(out, row, r));
    });
    b.finish()
}

/// Split: 256 workgroups of 256 lanes a row (grid `[rows, 256, 1]`); workgroup `r` folds the
/// segments `r, r + 256, ...` into state `r` and stores it in `partials`; the last workgroup of the
/// row (a counter per row in `counters`) finishes in one wave and zeroes what it used.
pub fn split(_t: &Target, wave: u32) -> Kernel {
    let g_waves = SEGMENT_LANES / wave;
    let mut b = KernelBuilder::new("row_top_prob_split", wave);
    b.workgroup_size([SEGMENT_LANES, 1, 1]);
    b.const_param("block", SEGMENT_LANES as i64);
    b.const_param("splits", SEGMENT_LANES as i64);
    let (logits, out, rows, n) = params(&mut b);
    let partials = b.workspace(
        "partials",
        ScalarType::F32,
        ShapeExpr::scaled(&[rows], 2 * SEGMENT_LANES as u64, 1),
    );
    let counters = b.workspace("counters", ScalarType::U32, ShapeExpr::scaled(&[rows], 1, 1));
    b.grid([
        ShapeExpr::scaled(&[rows], 1, 1),
        ShapeExpr::constant(SEGMENT_LANES as u64),
        ShapeExpr::constant(1),
    ]);
    let lds_max = b.lds("wave_max", ScalarType::F32, g_waves);
    let lds_sum = b.lds("wave_sum", ScalarType::F32, g_waves);
    let Ids { lane, wave: wave_id, local } = ids(&mut b);
    let row = b.workgroup_id(Dim::X);
    let s = b.workgroup_id(Dim::Y);
    let n_v = b.arg(n);
    let row_base = b.mul(row, n_v);
    let aligned = is_multiple(&mut b, n_v, 4);
    let zero = b.u32(0);
    let c = SegmentCtx {
        logits,
        row_base,
        n: n_v,
        aligned,
        t: local,
        sub_wave: wave_id,
        lane,
        lds_off: zero,
        lds_max,
        lds_sum,
        waves: g_waves,
    };
    let nseg = segments(&mut b, n_v);
    let sl = b.u32(SEGMENT_LANES);
    let ninf = b.f32(f32::NEG_INFINITY);
    let fzero = b.f32(0.0);
    let st = b.for_range(s, nseg, sl, 1, &[ninf, fzero], |b, j, st| {
        let (m, sigma) = segment(b, &c, j);
        let (mu, a) = fold(b, st[0], st[1], m, sigma);
        vec![mu, a]
    });
    let (mu, a) = (st[0], st[1]);
    let in_wave0 = b.eq(wave_id, zero);
    b.if_then(in_wave0, |b| {
        let two = b.u32(2);
        let one = b.u32(1);
        let base = b.mul(row, sl);
        let first = b.eq(lane, zero);
        b.if_then(first, |b| {
            let slot = b.add(base, s);
            let k = b.mul(slot, two);
            b.store(partials, k, mu);
            let k1 = b.add(k, one);
            b.store(partials, k1, a);
        });
        last_workgroup(b, lane, counters, row, SEGMENT_LANES, |b| {
            let r = finish(b, wave, lane, |b, r| {
                let slot = b.add(base, r);
                let k = b.mul(slot, two);
                let k1 = b.add(k, one);
                let mu = b.load(partials, k, Type::F32);
                let a = b.load(partials, k1, Type::F32);
                let z = b.f32(0.0);
                b.store(partials, k, z);
                b.store(partials, k1, z);
                (mu, a)
            });
            b.if_then(first, |b| b.store(out, row, r));
            reset_counter(b, lane, counters, row);
        });
    });
    b.finish()
}
