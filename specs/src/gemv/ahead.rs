//! Weight blocks a dense GEMV loads ahead of its block loop: the first trip's before a norm
//! prologue ([`Preloaded`]), or the first trips peeled from the loop ([`Early`]), either right
//! after the grid-dependency wait or, in an early twin ([`super::dense::Gemv::early`]), before
//! it. The blocks are carried flattened (a list of values a row) and rebuilt where they are
//! used; the same bytes, so the same sums.

use super::dense::Gemv;
use super::format::{WBlock, WType, Weights};
use kiln_ir::{KernelBuilder, Type, Value};

/// Weight blocks loaded ahead: those of row block `wg`'s rows at block `lane` (flattened with
/// [`flatten`]), a list for each matrix an output reads, for the first pass.
pub(super) struct Preloaded {
    pub wg: Value,
    pub vals: Vec<Vec<Value>>,
}

/// A quantized block's values: the words, `d`, and Q4_1's `m`.
pub(super) fn flatten(wb: &WBlock) -> Vec<Value> {
    match wb {
        WBlock::Quant { words, d, m, .. } => {
            let mut v = words.clone();
            v.push(*d);
            v.extend(*m);
            v
        }
        WBlock::Float(vals) => vals.clone(),
    }
}

/// The blocks of a wave's rows from their [`flatten`]ed values, one row after another.
pub(super) fn unflatten_rows(wt: WType, vals: &[Value], rows: usize) -> Vec<WBlock> {
    vals.chunks(vals.len() / rows).map(|v| unflatten(wt, v)).collect()
}

/// The block of `wt` from [`flatten`]'s values.
fn unflatten(wt: WType, vals: &[Value]) -> WBlock {
    match wt {
        WType::Q8_0 | WType::Q4_0 => {
            WBlock::Quant { wt, words: vals[..8].to_vec(), d: vals[8], m: None }
        }
        WType::Q4_1 => {
            WBlock::Quant { wt, words: vals[..8].to_vec(), d: vals[8], m: Some(vals[9]) }
        }
        WType::F16 | WType::Bf16 => WBlock::Float(vals.to_vec()),
    }
}

/// The weight blocks a wave's rows of row block `wg` read at block `lane + ahead` (the trip
/// `ahead / W` of the block loop; clamped), flattened.
pub(super) fn first_blocks(
    b: &mut KernelBuilder,
    w: Weights,
    n: Value,
    (waves, rows): (u32, u32),
    wg: Value,
    nb: Value,
    ahead: u32,
) -> Vec<Value> {
    let lane = b.lane();
    let ahead = b.u32(ahead);
    let lane = b.add(lane, ahead);
    let wave_id = b.wave();
    let wv = b.u32(waves);
    let row0 = b.mul(wg, wv);
    let row0 = b.add(row0, wave_id);
    let rv = b.u32(rows);
    let row0 = b.mul(row0, rv);
    let one = b.u32(1);
    let last = b.sub(n, one);
    let last_blk = b.sub(nb, one);
    let blk = b.min(lane, last_blk);
    let blk64 = b.convert(blk, Type::U64);
    let nb64 = b.convert(nb, Type::U64);
    let mut vals = vec![];
    for r in 0..rows {
        let rr = b.u32(r);
        let row = b.add(row0, rr);
        let row_c = b.min(row, last);
        let row64 = b.convert(row_c, Type::U64);
        let at = b.mul(row64, nb64);
        let at = b.add(at, blk64);
        vals.extend(flatten(&w.load(b, at)));
    }
    vals
}

/// Weight blocks loaded before the grid-dependency wait, for the first pass of a workgroup's
/// row block: `trips[j][mi]` holds matrix `mi`'s blocks of trip `j` (block `lane + j W`,
/// clamped), flattened, as [`first_blocks`] gives them.
pub(super) struct Early {
    pub trips: Vec<Vec<Vec<Value>>>,
}

/// Trips of the block loop whose weights a one-token-a-pass kernel loads before its
/// grid-dependency wait: as many as it unrolls, at most [`EARLY_TRIPS`] (the registers they
/// hold are the ones the unrolled loop's loads take anyway).
pub(super) fn early_trips(g: &Gemv) -> u32 {
    g.unroll_of().min(EARLY_TRIPS)
}

/// Most block-loop trips loaded before the wait (4: a whole row of K = 4096 for a wave of 32).
pub const EARLY_TRIPS: u32 = 4;
