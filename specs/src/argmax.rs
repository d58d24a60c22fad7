//! `argmax_rows`: the index of the largest logit of each row (greedy sampling).
//!
//! Ties go to the lowest index; NaN counts as largest and the first NaN wins (torch.argmax); a row
//! of only `-inf` gives 0. Argmax is exact, so every variant agrees with every other whatever the
//! order it visits the row in.
//!
//! Variants: `baseline` (one workgroup a row), `split` (256 workgroups a row, last-workgroup
//! finish; the router takes it for `n >= 32768`) and `split_batch` (32 workgroups of 1024 lanes a
//! row, for 4 or more rows). Measured on an H200 (CUDA graph, per call, inputs cold in L2):
//! T=1, n=248,320: baseline 14 us, split 3.6 us; T=8: split 7.7 us, split_batch 5.8 us.
//!
//! ABI (every variant):
//!
//! | param    | kind              | meaning                                  |
//! |----------|-------------------|------------------------------------------|
//! | `logits` | f32, read, `rows*n` | the rows, back to back                 |
//! | `out`    | i32, write, `rows`  | the argmax of each row                  |
//! | `rows`   | u32               | number of rows (1..8 in decode)          |
//! | `n`      | u32               | row length (vocabulary size)             |
//!
//! The split variants add two workspace buffers (`partials`, `counters`), which the runtime
//! allocates and the kernel leaves zeroed.
//!
//! Loads are 16-byte `f32x4` when `n % 4 == 0` (every row then starts 16-byte aligned), else
//! scalar; consecutive lanes read consecutive vectors.

use crate::bench::{u32_arg, BenchCase};
use crate::cases::logit_row_cases;
use crate::common::{
    argmax_update, ids, is_multiple, last_workgroup, reset_counter, row_params, workgroup_argmax,
};
use crate::{Bench, KernelSpec, Parity, VariantSpec};
use kiln_ir::package::Admission;
use kiln_ir::{Dim, Kernel, KernelBuilder, Param, ScalarType, ShapeExpr, Target, Type, Value};

/// Lanes of the baseline's workgroup (one workgroup a row).
pub const BLOCK: u32 = 1024;
/// Lanes of a split workgroup.
pub const SPLIT_BLOCK: u32 = 256;
/// Workgroups a row in the split variant (grid y).
pub const SPLITS: u32 = 256;
/// Workgroups a row in the split_batch variant.
pub const BATCH_SPLITS: u32 = 32;
/// Lanes of a split_batch workgroup.
pub const BATCH_BLOCK: u32 = 1024;
/// Rows from which the router takes split_batch (with `n >= SPLIT_MIN_N`).
pub const BATCH_MIN_ROWS: u64 = 4;
/// Row length from which the router takes the split variant.
pub const SPLIT_MIN_N: u64 = 32768;

/// The family: `baseline` (a workgroup a row), `split_batch` (`BATCH_SPLITS` workgroups a row,
/// for 4 or more rows) and `split` (`SPLITS` workgroups a row).
pub fn spec() -> KernelSpec {
    KernelSpec {
        name: "argmax_rows",
        variants: vec![
            VariantSpec { name: "baseline", build: baseline, admit: Admission::default() },
            VariantSpec {
                name: "split_batch",
                build: split_batch,
                admit: Admission {
                    archs: vec![],
                    shapes: vec![
                        ("rows".into(), BATCH_MIN_ROWS, u64::from(u32::MAX)),
                        ("n".into(), SPLIT_MIN_N, u64::from(u32::MAX)),
                    ],
                },
            },
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

/// The knob space of `kiln tune`: splits a row and lanes a workgroup of the split kernel
/// (argmax is exact, so every candidate gives the baseline's result), for long rows: one row,
/// two or three, and four to eight (timed at 248,320, a large vocabulary).
pub fn tune_space() -> crate::tune::TuneSpace {
    use crate::tune::{Bucket, Knob, TuneSpace};
    let max = u64::from(u32::MAX);
    let bucket = |name, rows: (u64, u64), timed: u32, case| Bucket {
        name,
        shapes: vec![("rows".into(), rows.0, rows.1), ("n".into(), SPLIT_MIN_N, max)],
        case: BenchCase {
            flops: None,
            name: case,
            scalars: vec![u32_arg("rows", timed), u32_arg("n", 248_320)],
            inputs: vec![("logits", ScalarType::F32, timed as usize * 248_320)],
            bytes: u64::from(timed) * (248_320 * 4 + 4),
            values: vec![],
        },
    };
    TuneSpace {
        family: "argmax_rows",
        knobs: vec![
            Knob { name: "splits", values: vec![16, 32, 64, 128, 256], omitted: None },
            Knob { name: "block", values: vec![256, 512, 1024], omitted: None },
        ],
        buckets: vec![
            bucket("rows1", (1, 1), 1, "argmax_tune_rows1"),
            bucket("rows2_3", (2, 3), 2, "argmax_tune_rows2"),
            bucket("rows4_8", (4, max), 8, "argmax_tune_rows8"),
        ],
        build: |t, wave, k| {
            let (splits, block) = (k[0], k[1]);
            if block < wave {
                return Err(format!("block {block} is less than a wave ({wave})"));
            }
            Ok(split_with(t, wave, splits, block, &format!("argmax_rows_s{splits}_b{block}")))
        },
        fits: |_, _| true,
    }
}

/// One and eight rows of a 248,320-token vocabulary: the logits read, an index a row written.
fn bench_cases() -> Vec<BenchCase> {
    let v = 248_320u32;
    [("argmax_t1", 1u32), ("argmax_t8", 8)]
        .into_iter()
        .map(|(name, rows)| BenchCase {
            flops: None,
            name,
            scalars: vec![u32_arg("rows", rows), u32_arg("n", v)],
            inputs: vec![("logits", ScalarType::F32, (rows * v) as usize)],
            bytes: u64::from(rows * v * 4 + rows * 4),
            values: vec![],
        })
        .collect()
}

/// The common parameters: `logits`, `out` (i32), `rows`, `n`.
fn params(b: &mut KernelBuilder) -> (Param, Param, Param, Param) {
    row_params(b, ScalarType::I32)
}

/// Each lane's best `(value, index)` over elements `[start, end)` of the row at `row_base`, lanes
/// striding by `step` (in vectors of 4 when `aligned`, else in elements).
fn scan(
    b: &mut KernelBuilder,
    logits: Param,
    row_base: Value,
    range: (Value, Value),
    local: Value,
    step: u32,
    aligned: Value,
) -> (Value, Value) {
    let (start, end) = range;
    let r = b.if_else(
        aligned,
        |b| {
            let four = b.u32(4);
            let ninf = b.f32(f32::NEG_INFINITY);
            let none = b.u32(u32::MAX);
            let vs = b.div(start, four);
            let ve = b.div(end, four);
            let first = b.add(vs, local);
            let st = b.u32(step);
            b.for_range(first, ve, st, 4, &[ninf, none], |b, v, c| {
                let e0 = b.mul(v, four);
                let at = b.add(row_base, e0);
                let x = b.load(logits, at, Type::vector(ScalarType::F32, 4));
                let (mut best, mut idx) = (c[0], c[1]);
                for k in 0..4u8 {
                    let xk = b.extract(x, k);
                    let kk = b.u32(k as u32);
                    let i = b.add(e0, kk);
                    (best, idx) = argmax_update(b, best, idx, xk, i);
                }
                vec![best, idx]
            })
        },
        |b| {
            let ninf = b.f32(f32::NEG_INFINITY);
            let none = b.u32(u32::MAX);
            let first = b.add(start, local);
            let st = b.u32(step);
            b.for_range(first, end, st, 4, &[ninf, none], |b, i, c| {
                let at = b.add(row_base, i);
                let x = b.load(logits, at, Type::F32);
                let (best, idx) = argmax_update(b, c[0], c[1], x, i);
                vec![best, idx]
            })
        },
    );
    (r[0], r[1])
}

/// Stores the final index (`u32::MAX`, "nothing above -inf", becomes 0).
fn store_index(b: &mut KernelBuilder, out: Param, row: Value, idx: Value) {
    let none = b.u32(u32::MAX);
    let zero = b.u32(0);
    let is_none = b.eq(idx, none);
    let idx = b.select(is_none, zero, idx);
    let idx = b.bitcast(idx, Type::I32);
    b.store(out, row, idx);
}

/// Baseline: one workgroup of [`BLOCK`] lanes a row; grid `[rows, 1, 1]`.
pub fn baseline(_t: &Target, wave: u32) -> Kernel {
    let mut b = KernelBuilder::new("argmax_rows", wave);
    b.workgroup_size([BLOCK, 1, 1]);
    b.const_param("block", BLOCK as i64);
    b.const_param("vec", 4);
    let (logits, out, rows, n) = params(&mut b);
    b.grid([ShapeExpr::scaled(&[rows], 1, 1), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let ids = ids(&mut b);
    let row = b.workgroup_id(Dim::X);
    let n_v = b.arg(n);
    let row_base = b.mul(row, n_v);
    let aligned = is_multiple(&mut b, n_v, 4);
    let zero = b.u32(0);
    let (best, at) = scan(&mut b, logits, row_base, (zero, n_v), ids.local, BLOCK, aligned);
    let lane = ids.lane;
    workgroup_argmax(&mut b, &ids, BLOCK / wave, best, at, |b, _v, idx| {
        let first = b.eq(lane, zero);
        b.if_then(first, |b| store_index(b, out, row, idx));
    });
    b.finish()
}

/// Split: [`SPLITS`] workgroups of [`SPLIT_BLOCK`] lanes a row (grid `[rows, SPLITS, 1]`), each
/// scanning one contiguous chunk of `ceil(n / 4 / SPLITS) * 4` elements and storing its
/// `(value, index)` in `partials`; the last workgroup of a row to finish (a counter per row in
/// `counters`) reduces the row's partials in one wave, stores the result, and zeroes the
/// partials and the counter again.
pub fn split(t: &Target, wave: u32) -> Kernel {
    split_with(t, wave, SPLITS, SPLIT_BLOCK, "argmax_rows_split")
}

/// Split for batches: [`BATCH_SPLITS`] workgroups of [`BATCH_BLOCK`] lanes a row, so 8 rows of a
/// large vocabulary fit the GPU in one round of workgroups. Chosen on an H200 among (splits,
/// lanes) = (16..256, 128..1024) for T=8, V=248,320: 32 x 1024 gave 5.8 us, 64 x 512 6.0,
/// 64 x 256 6.6, 128 x 256 6.5, 128 x 128 7.2, 256 x 256 7.7 (CUDA-graph replay, cold inputs).
pub fn split_batch(t: &Target, wave: u32) -> Kernel {
    split_with(t, wave, BATCH_SPLITS, BATCH_BLOCK, "argmax_rows_split_batch")
}

fn split_with(_t: &Target, wave: u32, splits: u32, block: u32, name: &str) -> Kernel {
    let mut b = KernelBuilder::new(name, wave);
    b.workgroup_size([block, 1, 1]);
    b.const_param("block", block as i64);
    b.const_param("splits", splits as i64);
    b.const_param("vec", 4);
    let (logits, out, rows, n) = params(&mut b);
    let partials =
        b.workspace("partials", ScalarType::U32, ShapeExpr::scaled(&[rows], 2 * splits as u64, 1));
    let counters = b.workspace("counters", ScalarType::U32, ShapeExpr::scaled(&[rows], 1, 1));
    b.grid([
        ShapeExpr::scaled(&[rows], 1, 1),
        ShapeExpr::constant(splits as u64),
        ShapeExpr::constant(1),
    ]);
    let ids = ids(&mut b);
    let row = b.workgroup_id(Dim::X);
    let s = b.workgroup_id(Dim::Y);
    let n_v = b.arg(n);
    let row_base = b.mul(row, n_v);
    let aligned = is_multiple(&mut b, n_v, 4);
    // chunk = ceil(ceil(n / 4) / splits) * 4: a multiple of 4, so chunks stay 16-byte aligned.
    let three = b.u32(3);
    let four = b.u32(4);
    let nv = b.add(n_v, three);
    let nv = b.div(nv, four);
    let sm1 = b.u32(splits - 1);
    let splits_v = b.u32(splits);
    let c = b.add(nv, sm1);
    let c = b.div(c, splits_v);
    let chunk = b.mul(c, four);
    let start = b.mul(s, chunk);
    let start = b.min(start, n_v);
    let end = b.add(start, chunk);
    let end = b.min(end, n_v);
    let (best, at) = scan(&mut b, logits, row_base, (start, end), ids.local, block, aligned);
    let lane = ids.lane;
    workgroup_argmax(&mut b, &ids, block / wave, best, at, |b, v, idx| {
        let zero = b.u32(0);
        let first = b.eq(lane, zero);
        let base = b.mul(row, splits_v);
        let slot = b.add(base, s);
        let two = b.u32(2);
        let k = b.mul(slot, two);
        b.if_then(first, |b| {
            let vb = b.bitcast(v, Type::U32);
            b.store(partials, k, vb);
            let one = b.u32(1);
            let k1 = b.add(k, one);
            b.store(partials, k1, idx);
        });
        last_workgroup(b, lane, counters, row, splits, |b| {
            let mut best = b.f32(f32::NEG_INFINITY);
            let mut at = b.u32(u32::MAX);
            let z = b.u32(0);
            // One wave reads the `splits` partials, `wave` at a time; when `splits` is not a
            // multiple of the wave, the lanes past the end keep (-inf, none).
            for j in 0..splits.div_ceil(wave) {
                let jj = b.u32(j * wave);
                let p = b.add(jj, lane);
                let slot = b.add(base, p);
                let k = b.mul(slot, two);
                let one = b.u32(1);
                let k1 = b.add(k, one);
                let read = |b: &mut KernelBuilder, best: Value, at: Value| {
                    let vb = b.load(partials, k, Type::U32);
                    let i = b.load(partials, k1, Type::U32);
                    b.store(partials, k, z);
                    b.store(partials, k1, z);
                    let v = b.bitcast(vb, Type::F32);
                    let (nb, na) = argmax_update(b, best, at, v, i);
                    vec![nb, na]
                };
                if splits.is_multiple_of(wave) {
                    let r = read(b, best, at);
                    (best, at) = (r[0], r[1]);
                } else {
                    let lim = b.u32(splits);
                    let inside = b.lt(p, lim);
                    let r = b.if_else(inside, |b| read(b, best, at), |_| vec![best, at]);
                    (best, at) = (r[0], r[1]);
                }
            }
            let (_, idx) = b.wave_argmax(best, at);
            b.if_then(first, |b| store_index(b, out, row, idx));
            reset_counter(b, lane, counters, row);
        });
    });
    b.finish()
}
