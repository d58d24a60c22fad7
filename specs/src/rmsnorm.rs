//! `rmsnorm_{f32,f16,bf16}`: `y = x * (1 / sqrt(mean(x^2) + eps)) * w`, one workgroup a row.
//!
//! The input is f32, f16 or bf16, the weight f32; the output has the input's type (so an f16 or
//! bf16 activation stream stays in its type; the value is computed in f32 and rounded once, to
//! nearest even). Everything is exact: `sqrt` and the division are correctly rounded (no `rsqrt`
//! approximation), so every device gives the interpreter's bits.
//!
//! The order of the sum of squares (part of the result): lane `l` of the [`BLOCK`]-lane
//! workgroup owns the 16-byte vectors `v = l, l + BLOCK, ...` of the row (`V` = 4 f32 or 8
//! f16/bf16 values a vector; values past `n` read as 0) and accumulates `acc = fma(x, x, acc)` in
//! order; wave sums by the xor butterfly over the wave; the row sum is the butterfly tree
//! (`v[i] += v[i + off]`, `off = waves/2, ..., 1`) over the wave sums. Then
//! `mean = sum / n`, `r = 1 / sqrt(mean + eps)`, `y = (x * r) * w`. (Rows that fit keep `x` and
//! `w` in registers between the two passes; the order is the same either way.)
//!
//! ABI:
//!
//! | param    | kind                       | meaning                   |
//! |----------|----------------------------|---------------------------|
//! | `x`      | f32/f16/bf16, read, `rows*n` | the rows                |
//! | `weight` | f32, read, `n`             | the gain                  |
//! | `out`    | like `x`, write, `rows*n`  | the normalized rows       |
//! | `rows`   | u32                        | number of rows            |
//! | `n`      | u32                        | row length                |
//! | `eps`    | f32                        | added to the mean square  |

use crate::bench::{f32_arg, u32_arg, BenchCase};
use crate::cases::{floats, u32s, Case, Rng};
use crate::common::{ids, is_multiple, lds_read_all, tree_sum};
use crate::quantize::{ds_word, pack_word, quantize_values, Quantized, QK};
use crate::{Bench, KernelSpec, Parity, VariantSpec};
use kiln_ir::package::Admission;
use kiln_ir::{
    Access, BarrierKind, Dim, Kernel, KernelBuilder, Param, ReduceOp, ScalarRule, ScalarType,
    ShapeExpr, Target, Type, Value,
};

/// Lanes a workgroup (also the lanes whose order the `gemv_*_norm` prologue emulates).
pub const BLOCK: u32 = 512;
/// Longest row (values) kept in registers between the two passes; longer or unaligned rows loop
/// and read `x` twice.
pub const REGISTER_ROW: u32 = 8192;

/// The families `rmsnorm_f32`, `rmsnorm_f16`, `rmsnorm_bf16` and `rmsnorm_q8_1s_f32` (baseline
/// only).
pub fn specs() -> Vec<KernelSpec> {
    fn spec(
        name: &'static str,
        build: crate::BuildFn,
        parity: fn(&mut Rng, bool) -> Vec<Case>,
        bench: Bench,
    ) -> KernelSpec {
        KernelSpec {
            name,
            variants: vec![VariantSpec { name: "baseline", build, admit: Admission::default() }],
            parity: Parity::Buffers(parity),
            bench,
            archs: None,
            budgets: vec![],
        }
    }
    const ONE_BENCH: Bench =
        Bench::Without("timed as rmsnorm_f32: f16 and bf16 rows move fewer bytes the same way");
    vec![
        spec(
            "rmsnorm_f32",
            |t, w| rmsnorm(t, w, ScalarType::F32),
            |rng, large| parity_cases(rng, large, ScalarType::F32),
            Bench::Cases(bench_cases),
        ),
        spec(
            "rmsnorm_f16",
            |t, w| rmsnorm(t, w, ScalarType::F16),
            |rng, large| parity_cases(rng, large, ScalarType::F16),
            ONE_BENCH,
        ),
        spec(
            "rmsnorm_bf16",
            |t, w| rmsnorm(t, w, ScalarType::BF16),
            |rng, large| parity_cases(rng, large, ScalarType::BF16),
            ONE_BENCH,
        ),
        spec("rmsnorm_q8_1s_f32", rmsnorm_q8_1s, q8_1s_cases, Bench::Cases(q8_1s_bench_cases)),
    ]
}

/// Rows of whole Q8 blocks, `rows = 1..=8`: an odd number of blocks (SmolLM2's 576 = 18),
/// 1536, 4096 + 32 (a register row with a partial last pass), the longest register row and
/// past it (the loop path); one row zeros, one with a NaN (all its values NaN: quants 0, d 0),
/// one with a value near `f32::MAX` (`d` stores as f16 inf).
fn q8_1s_cases(rng: &mut Rng, large: bool) -> Vec<Case> {
    let mut shapes = vec![(1, 32), (2, 576), (3, 1536), (5, 576), (8, 4096 + 32), (7, 32 * 3)];
    if large {
        shapes.extend([(4, 8192), (3, 8192 + 32), (2, 14336), (6, 576), (4, 4096)]);
    }
    shapes
        .into_iter()
        .map(|(rows, n)| {
            let x = q8_1s_rows(rng, rows, n);
            let w: Vec<f32> = (0..n).map(|_| 1.0 + rng.normal(0.1)).collect();
            Case {
                name: format!("rows={rows} n={n}"),
                scalars: vec![
                    u32s("rows", rows as u32),
                    u32s("n", n as u32),
                    ("eps".into(), ScalarType::F32, 1e-5f32.to_bits() as u64),
                ],
                inputs: vec![
                    floats("x", ScalarType::F32, &x),
                    floats("weight", ScalarType::F32, &w),
                ],
            }
        })
        .collect()
}

/// `rows` random rows of `n`, row 1 zeros, row 2 with a NaN, row 3 with one huge value.
pub(crate) fn q8_1s_rows(rng: &mut Rng, rows: usize, n: usize) -> Vec<f32> {
    let mut x: Vec<f32> = (0..rows * n).map(|_| rng.normal(2.0)).collect();
    if rows > 1 {
        x[n..2 * n].iter_mut().for_each(|v| *v = 0.0);
    }
    if rows > 2 {
        x[2 * n + n / 3] = f32::NAN;
    }
    if rows > 3 {
        x[3 * n + n / 2] = 3.0e38;
    }
    x
}

/// Eight tokens of a 4096-wide model: the rows read, the weights read, the blocks written.
fn q8_1s_bench_cases() -> Vec<BenchCase> {
    vec![BenchCase {
        flops: None,
        name: "rmsnorm_q8_1s_t8_d4096",
        scalars: vec![u32_arg("rows", 8), u32_arg("n", 4096), f32_arg("eps", 1e-6)],
        inputs: vec![("x", ScalarType::F32, 8 * 4096), ("weight", ScalarType::F32, 4096)],
        bytes: 8 * 4096 * 4 + 4096 * 4 + 8 * 4096 + 8 * 128 * 4,
        values: vec![],
    }]
}

/// Rows of `x_type` (one of them all zeros: the result is exactly `0 * rsqrt(eps)`) with random
/// weights near 1; `large` adds model widths and an odd one.
fn parity_cases(rng: &mut Rng, large: bool, x_type: ScalarType) -> Vec<Case> {
    let mut shapes = vec![(1, 64), (3, 1000), (8, 4096)];
    if large {
        shapes.extend([(8, 8192), (1, 5120 + 3)]);
    }
    shapes
        .into_iter()
        .map(|(rows, n)| {
            let mut x: Vec<f32> = (0..rows * n).map(|_| rng.normal(2.0)).collect();
            if rows > 1 {
                x[n..2 * n].iter_mut().for_each(|v| *v = 0.0);
            }
            let w: Vec<f32> = (0..n).map(|_| 1.0 + rng.normal(0.1)).collect();
            Case {
                name: format!("rows={rows} n={n}"),
                scalars: vec![
                    u32s("rows", rows as u32),
                    u32s("n", n as u32),
                    ("eps".into(), ScalarType::F32, 1e-6f32.to_bits() as u64),
                ],
                inputs: vec![floats("x", x_type, &x), floats("weight", ScalarType::F32, &w)],
            }
        })
        .collect()
}

/// Eight tokens of a 4096-wide model: the rows read and written, the weights read.
fn bench_cases() -> Vec<BenchCase> {
    vec![BenchCase {
        flops: None,
        name: "rmsnorm_t8_d4096",
        scalars: vec![u32_arg("rows", 8), u32_arg("n", 4096), f32_arg("eps", 1e-6)],
        inputs: vec![("x", ScalarType::F32, 8 * 4096), ("weight", ScalarType::F32, 4096)],
        bytes: 8 * 4096 * 4 * 2 + 4096 * 4,
        values: vec![],
    }]
}

/// Values a 16-byte vector holds.
pub fn vector_len(elem: ScalarType) -> u32 {
    16 / elem.bytes()
}

/// Loads vector `v` of the row at `row_base` as f32 values: one 16-byte load when `aligned`,
/// else element by element with `pad` past `n`.
fn load_vector(
    b: &mut KernelBuilder,
    src: (Param, ScalarType),
    row_base: Value,
    v: Value,
    n: Value,
    aligned: Value,
) -> Vec<Value> {
    let (p, elem) = src;
    let vl = vector_len(elem);
    let vlv = b.u32(vl);
    let e0 = b.mul(v, vlv);
    let widen = |b: &mut KernelBuilder, x: Value| {
        if elem == ScalarType::F32 {
            x
        } else {
            b.convert(x, Type::F32)
        }
    };
    b.if_else(
        aligned,
        |b| load_vector_aligned(b, src, row_base, v),
        |b| {
            (0..vl)
                .map(|k| {
                    let kk = b.u32(k);
                    let i = b.add(e0, kk);
                    let inside = b.lt(i, n);
                    b.if_else(
                        inside,
                        |b| {
                            let at = b.add(row_base, i);
                            let x = b.load(p, at, Type::scalar(elem));
                            vec![widen(b, x)]
                        },
                        |b| vec![b.f32(0.0)],
                    )[0]
                })
                .collect()
        },
    )
}

/// Vector `v` of the row at `row_base` as f32 values, one 16-byte load (the row is aligned).
pub(crate) fn load_vector_aligned(
    b: &mut KernelBuilder,
    (p, elem): (Param, ScalarType),
    row_base: Value,
    v: Value,
) -> Vec<Value> {
    let vl = vector_len(elem);
    let vlv = b.u32(vl);
    let e0 = b.mul(v, vlv);
    let at = b.add(row_base, e0);
    let x = b.load(p, at, Type::vector(elem, vl as u8));
    (0..vl as u8)
        .map(|k| {
            let xk = b.extract(x, k);
            if elem == ScalarType::F32 {
                xk
            } else {
                b.convert(xk, Type::F32)
            }
        })
        .collect()
}

/// One rmsnorm kernel for an input type.
pub fn rmsnorm(_t: &Target, wave: u32, elem: ScalarType) -> Kernel {
    let vl = vector_len(elem);
    let mut b = KernelBuilder::new(format!("rmsnorm_{}", elem.name()), wave);
    b.workgroup_size([BLOCK, 1, 1]);
    b.const_param("block", BLOCK as i64);
    b.const_param("vec", vl as i64);
    b.const_param("register_row", REGISTER_ROW as i64);
    let x = b.buffer("x", elem, Access::Read);
    let weight = b.buffer("weight", ScalarType::F32, Access::Read);
    let out = b.buffer("out", elem, Access::Write);
    let rows = b.scalar_param("rows", ScalarType::U32);
    let n = b.scalar_param("n", ScalarType::U32);
    let eps = b.scalar_param("eps", ScalarType::F32);
    b.set_buffer_len(x, ShapeExpr::scaled(&[rows, n], 1, 1));
    b.set_buffer_len(out, ShapeExpr::scaled(&[rows, n], 1, 1));
    b.set_buffer_len(weight, ShapeExpr::scaled(&[n], 1, 1));
    b.grid([ShapeExpr::scaled(&[rows], 1, 1), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    build_body(&mut b, wave, (x, elem), weight, n, eps, Dest::Rows(out));
    b.finish()
}

/// `rmsnorm_q8_1s_f32`: [`rmsnorm`] of f32 rows written as split Q8_1 (`xq`, `xs`: the layout of
/// `quantize_q8_1s_f32`, row after row), the norm and the quantize each with its family's
/// arithmetic, so the blocks are those of the two kernels in sequence.
pub fn rmsnorm_q8_1s(_t: &Target, wave: u32) -> Kernel {
    let elem = ScalarType::F32;
    let mut b = KernelBuilder::new("rmsnorm_q8_1s_f32", wave);
    b.workgroup_size([BLOCK, 1, 1]);
    b.const_param("block", BLOCK as i64);
    b.const_param("vec", vector_len(elem) as i64);
    b.const_param("register_row", REGISTER_ROW as i64);
    let x = b.buffer("x", elem, Access::Read);
    let weight = b.buffer("weight", ScalarType::F32, Access::Read);
    let q = b.buffer("xq", ScalarType::U8, Access::Write);
    let s = b.buffer("xs", ScalarType::U32, Access::Write);
    let rows = b.scalar_param("rows", ScalarType::U32);
    let n = b.scalar_param("n", ScalarType::U32);
    let eps = b.scalar_param("eps", ScalarType::F32);
    // Whole Q8 blocks only (so a block's eight lanes hold all of its vectors).
    b.scalar_rule(n, ScalarRule::MultipleOf(QK as u64));
    b.set_buffer_len(x, ShapeExpr::scaled(&[rows, n], 1, 1));
    b.set_buffer_len(q, ShapeExpr::scaled(&[rows, n], 1, 1));
    b.set_buffer_len(s, ShapeExpr::scaled(&[rows, n], 1, QK as u64));
    b.set_buffer_len(weight, ShapeExpr::scaled(&[n], 1, 1));
    b.grid([ShapeExpr::scaled(&[rows], 1, 1), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    build_body(&mut b, wave, (x, elem), weight, n, eps, Dest::Q8_1s { q, s });
    b.finish()
}

/// Where the normalized rows go.
#[derive(Clone, Copy)]
enum Dest {
    /// `out`, of the input's type.
    Rows(Param),
    /// Split Q8_1 (f32 input only): quants `q` (`u8`), scales `s` (`u32`, `d | s << 16`).
    Q8_1s {
        /// The quants.
        q: Param,
        /// The scales.
        s: Param,
    },
}

/// The two passes of one row a workgroup (the sum of squares, then the scaled values to `dest`).
fn build_body(
    b: &mut KernelBuilder,
    wave: u32,
    (x, elem): (Param, ScalarType),
    weight: Param,
    n: Param,
    eps: Param,
    dest: Dest,
) {
    let vl = vector_len(elem);
    let waves = BLOCK / wave;
    let lds = b.lds("wave_sums", ScalarType::F32, waves);

    let ids = ids(b);
    let row = b.workgroup_id(Dim::X);
    let n_v = b.arg(n);
    let row_base = b.mul(row, n_v);
    let aligned = is_multiple(b, n_v, vl);
    let vlm1 = b.u32(vl - 1);
    let vlv = b.u32(vl);
    let nvec = b.add(n_v, vlm1);
    let nvec = b.div(nvec, vlv);
    let step = b.u32(BLOCK);
    let fzero = b.f32(0.0);
    // The register path: rows of at most `REGISTER_ROW` values keep `x` and `w` in
    // registers between the two passes (and load `w` alongside `x`, so its misses overlap).
    let reg_vectors = REGISTER_ROW / (BLOCK * vl);
    let cap = b.u32(BLOCK * reg_vectors);
    let fits = b.le(nvec, cap);
    let fast = b.and(aligned, fits);
    let zero_n = b.u32(0);
    let nonempty = b.gt(n_v, zero_n);
    let fast = b.and(fast, nonempty);
    let held = (reg_vectors * vl * 2) as usize;
    let first_pass = b.if_else(
        fast,
        |b| {
            let mut acc = fzero;
            let mut vals = vec![];
            // Loads at a clamped index (no branch, so they all issue at once); vectors past the
            // row read as zeros.
            let one = b.u32(1);
            let last = b.sub(nvec, one);
            let fz = b.f32(0.0);
            for k in 0..reg_vectors {
                let kb = b.u32(k * BLOCK);
                let v = b.add(ids.local, kb);
                let inside = b.lt(v, nvec);
                let vc = b.min(v, last);
                let mut xw = load_vector_aligned(b, (x, elem), row_base, vc);
                xw.extend(load_weights(b, weight, vc, vl));
                let xw: Vec<Value> = xw.into_iter().map(|e| b.select(inside, e, fz)).collect();
                acc = sum_squares(b, &xw[..vl as usize], acc);
                vals.extend(xw);
            }
            let mut r = vec![acc];
            r.extend(vals);
            r
        },
        |b| {
            let acc = b.for_range(ids.local, nvec, step, 2, &[fzero], |b, v, c| {
                let xs = load_vector(b, (x, elem), row_base, v, n_v, aligned);
                vec![sum_squares(b, &xs, c[0])]
            })[0];
            let mut r = vec![acc];
            r.extend((0..held).map(|_| b.f32(0.0)));
            r
        },
    );
    let acc = first_pass[0];
    let ws = b.wave_reduce(ReduceOp::Add, acc);
    let zero = b.u32(0);
    let first = b.eq(ids.lane, zero);
    let wave_id = ids.wave;
    b.if_then(first, |b| b.store(lds, wave_id, ws));
    b.barrier(BarrierKind::Lds);
    let sums = lds_read_all(b, lds, zero, waves, Type::F32);
    let ss = tree_sum(b, &sums);
    let r = inverse_rms(b, ss, n_v, eps);

    match dest {
        Dest::Rows(out) => {
            b.if_else(
                fast,
                |b| {
                    for k in 0..reg_vectors {
                        let kb = b.u32(k * BLOCK);
                        let v = b.add(ids.local, kb);
                        let inside = b.lt(v, nvec);
                        let base = 1 + (k * 2 * vl) as usize;
                        let xs = first_pass[base..base + vl as usize].to_vec();
                        let ws = first_pass[base + vl as usize..base + 2 * vl as usize].to_vec();
                        b.if_then(inside, |b| {
                            let ys: Vec<Value> = xs
                                .iter()
                                .zip(&ws)
                                .map(|(&xv, &wv)| scale(b, xv, r, wv, elem))
                                .collect();
                            let y = b.make_vector(&ys);
                            let e0 = b.mul(v, vlv);
                            let at = b.add(row_base, e0);
                            b.store(out, at, y);
                        });
                    }
                    vec![]
                },
                |b| {
                    b.for_range(ids.local, nvec, step, 2, &[], |b, v, _| {
                        let xs = load_vector(b, (x, elem), row_base, v, n_v, aligned);
                        let e0 = b.mul(v, vlv);
                        b.if_else(
                            aligned,
                            |b| {
                                let ws = load_weights(b, weight, v, vl);
                                let ys: Vec<Value> = xs
                                    .iter()
                                    .zip(&ws)
                                    .map(|(&xv, &wv)| scale(b, xv, r, wv, elem))
                                    .collect();
                                let y = b.make_vector(&ys);
                                let at = b.add(row_base, e0);
                                b.store(out, at, y);
                                vec![]
                            },
                            |b| {
                                for k in 0..vl {
                                    let kk = b.u32(k);
                                    let i = b.add(e0, kk);
                                    let inside = b.lt(i, n_v);
                                    b.if_then(inside, |b| {
                                        let wk = b.load(weight, i, Type::F32);
                                        let y = scale(b, xs[k as usize], r, wk, elem);
                                        let at = b.add(row_base, i);
                                        b.store(out, at, y);
                                    });
                                }
                                vec![]
                            },
                        );
                        vec![]
                    });
                    vec![]
                },
            );
        }
        Dest::Q8_1s { q, s } => {
            assert_eq!(elem, ScalarType::F32, "the quantizing norm reads f32 rows");
            let at = QuantizeAt { row, n: n_v, nvec, local: ids.local, q, s };
            b.if_else(
                fast,
                |b| {
                    for k in 0..reg_vectors {
                        let kb = b.u32(k * BLOCK);
                        let v = b.add(ids.local, kb);
                        let base = 1 + (k * 2 * vl) as usize;
                        let xs = &first_pass[base..base + vl as usize];
                        let ws = &first_pass[base + vl as usize..base + 2 * vl as usize];
                        // Skips the passes wholly past the row (the same for every lane).
                        let any = b.lt(kb, nvec);
                        b.if_then(any, |b| {
                            let ys: Vec<Value> = xs
                                .iter()
                                .zip(ws)
                                .map(|(&xv, &wv)| scale(b, xv, r, wv, elem))
                                .collect();
                            quantize_store(b, &at, v, &ys);
                        });
                    }
                    vec![]
                },
                |b| {
                    // A trip count the same for every lane (the shuffles of the quantize need
                    // the whole wave): lanes past the row work on its last vector and store
                    // nothing. `aligned` holds: `n` is a multiple of 32.
                    let bm1 = b.u32(BLOCK - 1);
                    let trips = b.add(nvec, bm1);
                    let trips = b.div(trips, step);
                    let zero = b.u32(0);
                    let one = b.u32(1);
                    b.for_range(zero, trips, one, 1, &[], |b, i, _| {
                        let off = b.mul(i, step);
                        let v = b.add(ids.local, off);
                        let last = b.sub(nvec, one);
                        let vc = b.min(v, last);
                        let xs = load_vector_aligned(b, (x, elem), row_base, vc);
                        let ws = load_weights(b, weight, vc, vl);
                        let ys: Vec<Value> = xs
                            .iter()
                            .zip(&ws)
                            .map(|(&xv, &wv)| scale(b, xv, r, wv, elem))
                            .collect();
                        quantize_store(b, &at, v, &ys);
                        vec![]
                    });
                    vec![]
                },
            );
        }
    }
}

/// Where the quantizing norm's blocks go: row `row` of `n` values (`nvec` vectors) into `q`, `s`.
struct QuantizeAt {
    row: Value,
    n: Value,
    nvec: Value,
    local: Value,
    q: Param,
    s: Param,
}

/// Quantizes vector `v` of the row (its four values `ys`; the eight lanes `8i..8i+8` of the
/// workgroup hold one Q8 block) with `quantize_q8_1s_f32`'s arithmetic, and stores its quants
/// and, from the block's first lane, its scale word, when `v` is inside the row. Runs under
/// wave-uniform control (the block's shuffles).
fn quantize_store(b: &mut KernelBuilder, at: &QuantizeAt, v: Value, ys: &[Value]) {
    let lanes = QK / ys.len() as u32;
    let Quantized { d, d16, bytes, sum } = quantize_values(b, ys, lanes, true);
    let word = pack_word(b, &bytes);
    let inside = b.lt(v, at.nvec);
    let lanes_v = b.u32(lanes);
    let j = b.rem(at.local, lanes_v);
    let zero = b.u32(0);
    let head = b.eq(j, zero);
    b.if_then(inside, |b| {
        // In u32 units: the row's quants from `row * n / 4`, its scales from `row * n / 32`.
        let four = b.u32(4);
        let qk = b.u32(QK);
        let words = b.div(at.n, four);
        let qrow = b.mul(at.row, words);
        let qi = b.add(qrow, v);
        b.store(at.q, qi, word);
        b.if_then(head, |b| {
            let blocks = b.div(at.n, qk);
            let srow = b.mul(at.row, blocks);
            let blk = b.div(v, lanes_v);
            let si = b.add(srow, blk);
            let ds = ds_word(b, d, d16, sum);
            b.store(at.s, si, ds);
        });
    });
}

/// `acc` plus the squares of `xs` in order: `acc = fma(x, x, acc)` (a lane's share of the sum
/// of squares).
pub(crate) fn sum_squares(b: &mut KernelBuilder, xs: &[Value], acc: Value) -> Value {
    let mut acc = acc;
    for &xv in xs {
        acc = b.fma(xv, xv, acc);
    }
    acc
}

/// `r = 1 / sqrt(ss / n + eps)` from the row's sum of squares `ss` and its length `n` (`u32`),
/// exact division and square root.
pub(crate) fn inverse_rms(b: &mut KernelBuilder, ss: Value, n: Value, eps: Param) -> Value {
    let nf = b.convert(n, Type::F32);
    let mean = b.div(ss, nf);
    let eps_v = b.arg(eps);
    let t = b.add(mean, eps_v);
    let root = b.sqrt(t);
    let one = b.f32(1.0);
    b.div(one, root)
}

/// The `vl` weights of vector `v` (aligned), as `f32x4` loads.
pub(crate) fn load_weights(b: &mut KernelBuilder, weight: Param, v: Value, vl: u32) -> Vec<Value> {
    let vlv = b.u32(vl);
    let e0 = b.mul(v, vlv);
    let mut ws = vec![];
    for k0 in (0..vl).step_by(4) {
        let kk = b.u32(k0);
        let at = b.add(e0, kk);
        let w4 = b.load(weight, at, Type::vector(ScalarType::F32, 4));
        for k in 0..4u8 {
            ws.push(b.extract(w4, k));
        }
    }
    ws
}

/// `(x * r) * w`, rounded to the output type.
pub(crate) fn scale(
    b: &mut KernelBuilder,
    x: Value,
    r: Value,
    w: Value,
    elem: ScalarType,
) -> Value {
    let xr = b.mul(x, r);
    let y = b.mul(xr, w);
    if elem == ScalarType::F32 {
        y
    } else {
        b.convert(y, Type::scalar(elem))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::{rng_for, run};
    use crate::gemv::quantize_split;

    /// `rmsnorm_q8_1s_f32` writes, bit for bit, `quantize_q8_1s_f32(rmsnorm_f32(x))` on the
    /// interpreter at wave 32 (gfx1100) and 64 (gfx906): rows 1..=8, odd block counts, register
    /// rows and longer ones (the loop path), a zero row, a NaN row and a huge value.
    #[test]
    fn the_quantizing_norm_equals_norm_then_quantize() {
        let mut rng = rng_for("rmsnorm-q8_1s", std::process::id() as u64);
        let shapes = [
            (1, 32),
            (2, 576),
            (3, 1536),
            (4, 4096 + 32),
            (5, 576),
            (6, 32 * 3),
            (7, 576),
            (8, 1536),
            (4, 8192 + 32),
            (1, 14336),
        ];
        for (arch, wave) in [("gfx1100", 32), ("gfx906", 64)] {
            let tg = Target::by_name(arch).unwrap();
            for (rows, n) in shapes {
                let x = q8_1s_rows(&mut rng, rows, n);
                let w: Vec<f32> = (0..n).map(|_| 1.0 + rng.normal(0.1)).collect();
                let inputs =
                    vec![floats("x", ScalarType::F32, &x), floats("weight", ScalarType::F32, &w)];
                let scalars = vec![
                    u32s("rows", rows as u32),
                    u32s("n", n as u32),
                    ("eps".into(), ScalarType::F32, 1e-5f32.to_bits() as u64),
                ];
                let y = run(&rmsnorm(tg, wave, ScalarType::F32), &inputs, &scalars)["out"].clone();
                let want = run(
                    &quantize_split(tg, wave, true),
                    &[("x".to_string(), ScalarType::F32, y)],
                    &[u32s("n", (rows * n) as u32)],
                );
                let got = run(&rmsnorm_q8_1s(tg, wave), &inputs, &scalars);
                let at = format!("wave {wave}, rows={rows} n={n}");
                assert_eq!(got["xq"], want["xq"], "{at}: quants");
                assert_eq!(got["xs"], want["xs"], "{at}: scales");
            }
        }
    }
}
