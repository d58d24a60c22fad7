//! Weight blocks a dense GEMV loads ahead of its block loop: the first trip's before a norm
//! prologue ([`Preloaded`]), or the first trips peeled from the loop ([`Early`]), either right
//! after the grid-dependency wait or, in an early twin ([`super::dense::Gemv::early`]), before
//! it. The blocks are carried flattened (a list of values a row) and rebuilt where they are
//! used; the same bytes, so the same sums. [`add_early_twins`] lists the early twins of the
//! library's families and their routes (measured on the H200).

use super::dense::{build, wave_row0, Epilogue, Gemv};
use super::format::{Layout, WBlock, WType, Weights};
use crate::{KernelSpec, VariantSpec};
use kiln_ir::package::Admission;
use kiln_ir::{Kernel, KernelBuilder, Target, Type, Value};

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
    let row0 = wave_row0(b, wg, waves, rows);
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

/// Asks L2 for the rest of the rows of a wave of row block `wg` (blocks `from..nb`, `from`
/// clamped to the last block), each of its matrices, before the grid-dependency wait: the blocks
/// an early twin ([`super::dense::EarlyLoads::HeldAhead`]) does not hold there. Only arithmetic
/// and prefetches.
pub(super) fn prefetch_rest(
    b: &mut KernelBuilder,
    weights: &[Weights],
    n: Value,
    (waves, rows, wave): (u32, u32, u32),
    (wg, nb): (Value, Value),
    from: u32,
) {
    let lane = b.lane();
    let row0 = wave_row0(b, wg, waves, rows);
    let one = b.u32(1);
    let last = b.sub(n, one);
    let last_blk = b.sub(nb, one);
    let from = b.u32(from);
    let from = b.min(from, last_blk);
    for r in 0..rows {
        let rr = b.u32(r);
        let row = b.add(row0, rr);
        let row = b.min(row, last);
        for w in weights {
            crate::prefetch::row_tail(b, w, row, (from, nb), lane, wave);
        }
    }
}

/// Weight blocks loaded before the grid-dependency wait, for the first pass of a workgroup's
/// row block: `trips[j][mi]` holds matrix `mi`'s blocks of trip `j` (block `lane + j W`,
/// clamped), flattened, as [`first_blocks`] gives them.
pub(super) struct Early {
    pub trips: Vec<Vec<Vec<Value>>>,
}

/// Trips of the block loop whose weights a one-token-a-pass kernel loads ahead (peeled from
/// the loop; before its grid-dependency wait in an early twin): as many as it unrolls, at most
/// [`EARLY_TRIPS`] (the registers they hold are the ones the unrolled loop's loads take
/// anyway), and in an early twin at most [`EARLY_BLOCKS`] blocks a lane over its rows and
/// matrices (at least one trip), since those are held across the wait.
pub(super) fn early_trips(g: &Gemv) -> u32 {
    let trips = g.unroll_of().min(EARLY_TRIPS);
    if !g.early.held() {
        return trips;
    }
    let per_trip = g.rows.max(1) * g.epi.matrices() as u32;
    trips.min((EARLY_BLOCKS / per_trip).max(1))
}

/// Most weight blocks a lane of an early twin holds across the grid-dependency wait (eight
/// Q8_0 blocks are 72 registers). Until 2026-12-05 it held [`EARLY_TRIPS`] trips of every row
/// and matrix (32 blocks for the four-row gate/up twins), which compiled without spilling only
/// because ptxas (CUDA 13) also moved the activations' loads and the dot products on them above
/// the wait (`.nc` loads: see the codegen's `buffers_maybe_in_flight`); with those after the
/// wait the four-row twins spilled 8 to 336 bytes on sm_90.
pub const EARLY_BLOCKS: u32 = 8;

/// Most block-loop trips loaded before the wait (4: a whole row of K = 4096 for a wave of 32).
pub const EARLY_TRIPS: u32 = 4;

/// Adds the early twins to the families of `v`: second in each, so first in its routes where
/// admitted.
pub(super) fn add_early_twins(v: &mut [KernelSpec]) {
    // Early twins (`Gemv::early`): the first trips' weight blocks loaded before the
    // grid-dependency wait and held there, so under programmatic dependent launch they stream
    // while the grid before finishes. Routed on sm_90 (the arch with that launch) where every
    // workgroup is resident while that grid runs, first for one token up to `n` rows. On the
    // H200 (bench/results/early-h200-2026-12-03.md, call 2, against the same kernels with the
    // wait first): `gemv_q8_0_rp` `p1r2u8w2` at N = 4096 6.25 -> 4.90 us (at N = 14336 15.88 ->
    // 18.57: its later workgroups start after the grid before is gone, and then the activations'
    // round trip follows the weights'; not routed there); in SmolLM2's Q8_0 step, the residual
    // GEMV (N = 576) 1.65 -> 1.29 us a node and the fused gate/up (N = 1536) 4.01 -> 3.77 (the
    // 8B step's residual GEMV at N = 4096, 4.20 -> 5.35, is not routed).
    // Admitted for one token up to `nmax` of the scalar `rows` counts rows with (the package
    // check refuses a scalar the ABI lacks).
    let mut early_by = |family: &str, name, build, rows: &str, nmax: u64| {
        let f = v.iter_mut().find(|f| f.name == family).expect("registered above");
        let shapes = vec![("t".into(), 1, 1), (rows.into(), 0, nmax)];
        let admit = Admission { archs: vec!["sm_90".into()], shapes };
        f.variants.insert(1, VariantSpec { name, build, admit });
    };
    early_by(
        "gemv_q8_0_rp",
        "p1r2u8w2e",
        |t, w| {
            let g = Gemv::tiled(WType::Q8_0, Layout::Repacked, Epilogue::Plain, 1, 2);
            build(t, w, Gemv { unroll: 8, waves: 2, ..g }.early())
        },
        "n",
        4096,
    );
    early_by("gemv_q8_0_rp_res", "p1u16w4e", res_early::<0, false>, "n", 1024);
    // The tail families route as `_res` (the same GEMV), here and for Q4 below.
    early_by("gemv_q8_0_rp_res_rmsnorm", "p1u16w4e", res_early::<0, true>, "n", 1024);
    // The Q4 residual GEMVs and every format's Q/K/V kernel with the norm prologue (SmolLM2's
    // step). On the H200 (bench/results/magic-h200-2026-12-04.md, call 3), the Q4_1 step's
    // replay at ~173 / ~587 / ~2013 positions, against 485.6 / 580.9 / 631.1 us without any
    // early twin: the residual GEMV's alone 473.9 / 551.7 / 599.6, the Q/K/V's alone 483.5 /
    // 572.6 / 624.5; the Q8_0 step with its Q/K/V early 490.0 / 544.9 / 551.2 against 506.0 /
    // 565.8 / 576.0. The Q4 gate/up's early twin is not built: it takes 216 registers (157
    // without; every cap from 160 to 192 spills on sm_90) and made the Q4_1 step slower at 173
    // and 587 positions (500.1 / 587.6 us alone, 511.9 / 562.6 with the other two). Timed
    // again after the race fix (216 registers, no spills), it is still not faster: on an H100
    // (bench/results/residual-2026-12-05.md, call 1) the Q4_1 step at ~173 / ~587 / ~2013
    // positions 551.8 / 590.5 / 615.0 us with it, 544.9 / 592.0 / 607.7 with `p1`.
    early_by("gemv_q4_0_rp_res", "p1u16w4e", res_early::<1, false>, "n", 1024);
    early_by("gemv_q4_0_rp_res_rmsnorm", "p1u16w4e", res_early::<1, true>, "n", 1024);
    early_by("gemv_q4_1_rp_res", "p1u16w4e", res_early::<2, false>, "n", 1024);
    early_by("gemv_q4_1_rp_res_rmsnorm", "p1u16w4e", res_early::<2, true>, "n", 1024);
    early_by("gemv_q8_0_rp_swiglu_q8_1s_norm", "p1e", normed_early::<0, 0>, "n", 2048);
    early_by("gemv_q8_0_rp_qkv_cache_norm", "p1e", normed_early::<0, 1>, "n_q", 2048);
    early_by("gemv_q4_0_rp_qkv_cache_norm", "p1e", normed_early::<1, 1>, "n_q", 2048);
    early_by("gemv_q4_1_rp_qkv_cache_norm", "p1e", normed_early::<2, 1>, "n_q", 2048);
}

/// The weight formats of the early twins, by index.
const EARLY_FORMATS: [WType; 3] = [WType::Q8_0, WType::Q4_0, WType::Q4_1];

/// The one-token residual GEMV of format `F` ([`EARLY_FORMATS`]; with the next norm in its
/// last workgroup if `NORM`) with its first blocks loaded before the wait: `p1u16w4e`.
fn res_early<const F: usize, const NORM: bool>(t: &Target, w: u32) -> Kernel {
    let epi = if NORM { Epilogue::ResidualNorm } else { Epilogue::Residual };
    let g = Gemv::tiled(EARLY_FORMATS[F], Layout::Repacked, epi, 1, 1);
    build(t, w, Gemv { unroll: 16, waves: 4, ..g }.early())
}

/// The one-token norm-prologue kernel of format `F` with its first blocks loaded before the
/// wait: `p1e` of the fused gate/up (`E` 0) or the Q/K/V with the cache (`E` 1).
fn normed_early<const F: usize, const E: usize>(t: &Target, w: u32) -> Kernel {
    let epi = [Epilogue::SwigluQ8, Epilogue::QkvCache][E];
    build(t, w, Gemv::tiled(EARLY_FORMATS[F], Layout::Repacked, epi, 1, 1).normed().early())
}
