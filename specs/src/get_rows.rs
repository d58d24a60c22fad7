//! `get_rows_q8_0`: the embedding lookup of decode. `T` token ids pick rows of a Q8_0 table
//! (ggml's blocks straight from a GGUF `token_embd.weight`, the same bytes the tied LM head's
//! `gemv_q8_0` reads) and write them as f32, the residual stream's first value.
//!
//! A value is `f32(q) * f32(d)`, exact in f32 (an 8-bit integer times an f16), as ggml's
//! `dequantize_row_q8_0`: every device gives the interpreter's bits and the `gguf` package's
//! dequantization. An id at or past `rows`, or negative, reads nothing and writes a row of NaN
//! (as `gemv_moe` does for an expert id out of range), so a bad id shows in the logits instead
//! of reading another buffer. The ids are `i32`, the type `argmax_rows` writes, so a decode
//! graph can feed the step's greedy token to the next step's lookup on the device (one buffer,
//! written by `argmax_rows` at the end of a step and read here at the start of the next).
//!
//! One lane a value (a workgroup of [`BLOCK`] values of one token; `y` = token): the 32 lanes of
//! a block load its scale once each from the same bytes (cached), and every load is one byte or
//! one aligned `u16`, so no alignment of the table is assumed beyond ggml's 2 bytes.
//!
//! ABI (baseline only):
//!
//! | param   | kind                                   | meaning                       |
//! |---------|----------------------------------------|-------------------------------|
//! | `table` | u8, read, `rows*k/32*34`               | Q8_0 rows of `k` values       |
//! | `ids`   | i32, read, `t`                         | the rows to take              |
//! | `out`   | f32, write, `t*k`                      | `[t][k]`                      |
//! | `t`     | u32, >= 1                              | tokens                        |
//! | `k`     | u32, a multiple of 32                  | values a row                  |
//! | `rows`  | u32                                    | rows of the table             |

use crate::bench::{u32_arg, BenchCase};
use crate::cases::{u32s, Case, Rng};
use crate::{Bench, KernelSpec, Parity, VariantSpec};
use kiln_ir::package::Admission;
use kiln_ir::{
    Access, Dim, IndexUnit, Kernel, KernelBuilder, ScalarRule, ScalarType, ShapeExpr, Target, Type,
};

/// Lanes a workgroup (a lane a value).
pub const BLOCK: u32 = 256;
/// Values a Q8_0 block.
const QK: u32 = 32;
/// Bytes a Q8_0 block.
const BLOCK_BYTES: u32 = 34;

/// The family.
pub fn spec() -> KernelSpec {
    KernelSpec {
        name: "get_rows_q8_0",
        variants: vec![VariantSpec {
            name: "baseline",
            build: get_rows,
            admit: Admission::default(),
        }],
        parity: Parity::Buffers(parity_cases),
        bench: Bench::Cases(bench_cases),
        archs: None,
        budgets: vec![],
    }
}

/// The kernel.
pub fn get_rows(_t: &Target, wave: u32) -> Kernel {
    let mut b = KernelBuilder::new("get_rows_q8_0", wave);
    b.workgroup_size([BLOCK, 1, 1]);
    b.const_param("block", BLOCK as i64);
    let table = b.buffer("table", ScalarType::U8, Access::Read);
    let ids = b.buffer("ids", ScalarType::I32, Access::Read);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    let t = b.scalar_param("t", ScalarType::U32);
    let k = b.scalar_param("k", ScalarType::U32);
    let rows = b.scalar_param("rows", ScalarType::U32);
    b.scalar_rule(t, ScalarRule::AtLeast(1));
    b.scalar_rule(k, ScalarRule::MultipleOf(QK as u64));
    b.set_buffer_len(table, ShapeExpr::scaled(&[rows, k], BLOCK_BYTES as u64, QK as u64));
    b.set_buffer_len(ids, ShapeExpr::scaled(&[t], 1, 1));
    b.set_buffer_len(out, ShapeExpr::scaled(&[t, k], 1, 1));
    b.grid([
        ShapeExpr::scaled(&[k], 1, BLOCK as u64),
        ShapeExpr::scaled(&[t], 1, 1),
        ShapeExpr::constant(1),
    ]);
    let k_v = b.arg(k);
    let rows_v = b.arg(rows);
    let wg = b.workgroup_id(Dim::X);
    let token = b.workgroup_id(Dim::Y);
    let local = b.local_id();
    let bl = b.u32(BLOCK);
    let i = b.mul(wg, bl);
    let i = b.add(i, local);
    let inside = b.lt(i, k_v);
    b.if_then(inside, |b| {
        // Negative ids become large as u32: refused by the same comparison.
        let row = b.load(ids, token, Type::scalar(ScalarType::I32));
        let row = b.bitcast(row, Type::U32);
        let tk = b.mul(token, k_v);
        let at = b.add(tk, i);
        let valid = b.lt(row, rows_v);
        b.if_else(
            valid,
            |b| {
                let qk = b.u32(QK);
                let blocks = b.div(k_v, qk);
                let bb = b.u32(BLOCK_BYTES);
                let row_bytes = b.mul(blocks, bb);
                let base = b.mul(row, row_bytes);
                let bi = b.div(i, qk);
                let o = b.rem(i, qk);
                let boff = b.mul(bi, bb);
                let blk = b.add(base, boff);
                let d = b.load_with(table, blk, ScalarType::U16, IndexUnit::Byte, Some(2));
                let d = b.bitcast(d, Type::F16);
                let d = b.convert(d, Type::F32);
                let two = b.u32(2);
                let qa = b.add(blk, two);
                let qa = b.add(qa, o);
                let q = b.load_with(table, qa, ScalarType::U8, IndexUnit::Byte, Some(1));
                let q = b.bitcast(q, Type::scalar(ScalarType::I8));
                let q = b.convert(q, Type::F32);
                let v = b.mul(q, d);
                b.store(out, at, v);
                vec![]
            },
            |b| {
                let nan = b.f32(f32::NAN);
                b.store(out, at, nan);
                vec![]
            },
        );
    });
    b.finish()
}

/// Random Q8_0 rows with every byte value and zero, infinite and NaN scales among them; ids
/// with repeats, the last row, and one past the table (a NaN row).
fn parity_cases(rng: &mut Rng, large: bool) -> Vec<Case> {
    let mut shapes = vec![(1, 32, 1), (3, 64, 5), (17, 416, 8), (50, 576, 3)];
    if large {
        shapes.push((49152, 576, 8));
    }
    shapes
        .into_iter()
        .map(|(rows, k, t)| {
            let blocks = rows * k / QK as usize;
            let mut table = vec![0u8; blocks * BLOCK_BYTES as usize];
            for (bi, blk) in table.chunks_mut(BLOCK_BYTES as usize).enumerate() {
                let d = match bi % 7 {
                    0 => half::f16::ZERO,
                    1 if bi % 3 == 0 => half::f16::INFINITY,
                    _ => half::f16::from_f32((rng.below(2000) as f32 - 1000.0) / 4096.0),
                };
                blk[..2].copy_from_slice(&d.to_le_bytes());
                for q in &mut blk[2..] {
                    *q = rng.below(256) as u8;
                }
            }
            let mut ids: Vec<u32> = (0..t).map(|_| rng.below(rows as u64) as u32).collect();
            ids[t - 1] = rows as u32 - 1;
            if t > 2 {
                ids[1] = rows as u32 + rng.below(3) as u32;
                ids[2] = ids[0];
            }
            if t > 4 {
                ids[3] = (-1 - rng.below(3) as i32) as u32;
            }
            Case {
                name: format!("rows={rows} k={k} t={t}"),
                scalars: vec![u32s("t", t as u32), u32s("k", k as u32), u32s("rows", rows as u32)],
                inputs: vec![
                    ("table".into(), ScalarType::U8, table),
                    (
                        "ids".into(),
                        ScalarType::I32,
                        ids.iter().flat_map(|v| v.to_le_bytes()).collect(),
                    ),
                ],
            }
        })
        .collect()
}

/// SmolLM2's embedding (49,152 x 576) at T = 1 and 8; the ids are valid rows.
fn bench_cases() -> Vec<BenchCase> {
    let case = |name, t: u32| BenchCase {
        flops: None,
        name,
        scalars: vec![u32_arg("t", t), u32_arg("k", 576), u32_arg("rows", 49152)],
        inputs: vec![
            ("table", ScalarType::U8, 49152 * 576 / 32 * 34),
            ("ids", ScalarType::I32, t as usize),
        ],
        bytes: u64::from(t) * (576 / 32 * 34 + 576 * 4 + 4),
        values: vec![("ids", ids_in_table)],
    };
    vec![case("get_rows_q8_0_t1_k576", 1), case("get_rows_q8_0_t8_k576", 8)]
}

fn ids_in_table(rng: &mut Rng) -> Vec<u8> {
    (0..8).flat_map(|_| (rng.below(49152) as u32).to_le_bytes()).collect()
}
