//! The `mma` variants of the i8 order ([`super::i8`]: `mma`, `mma8`, `mma_lds`, `mma8_lds`):
//! both products on NVIDIA's `mma.sync m16n8k32 s8` (sm_80+; exact integer products and sums),
//! the softmax on the accumulator layout. `g = lane >> 2`, `t = lane & 3` below (PTX's
//! `groupID`, `threadID_in_group`).
//!
//! A wave runs a split, 4 waves a workgroup (as `rR`); M = a tile of 16 rows of the KV head
//! (`rows_per_head` padded: a padding row repeats the last row's q and stores nothing), or of 8
//! (`mma8*`: A's rows 8-15 zeros, their C values unused).
//! - Scores: A = q's quants of block `b` (LDS, read each chunk), its k-slot `4t + c` mapped to
//!   dimension `8t + c` and `16 + 4t + c` to `8t + 4 + c`, so each B register pair of a lane is
//!   the 8 contiguous quant bytes `[8t, 8t + 8)` of a key's block. Four B tiles `j` of 8 keys;
//!   column `n` of tile `j` reads chunk key `4(n/2) + 2(j%2) + n%2 + 16(j/2)`, so C element `e`
//!   of tile `j` (row `g + 8(e/2)`, column `2t + e%2`) is key `4t + 2(j%2) + e%2 + 16(j/2)`: a
//!   lane's scores are keys `4t..4t+4` and `16+4t..16+4t+4` of rows `g` and `g + 8`.
//! - Softmax: a row's 32 keys are on the 4 lanes of a group (its max and the `l_chunk` tree's
//!   last two levels by xor shuffles 1 and 2).
//! - P V: A = P's quants (a lane's C keys are exactly its A k-slots of the product: no
//!   shuffles), B tile `i` of block `b` has dimension `32b + 4g + i` in column `g`, from the words
//!   `[34b + 2 + 4g, +4)` of the lane's 8 keys transposed by 8 byte permutes a 4 keys. C element
//!   `e` of tile `i` is row `g + 8(e/2)`, dimension `32b + 8t + 4(e%2) + i`.

use super::combine::{combine, combine_groups, lds_store, Fold, LdsStates, States, LONG_UNROLL};
use super::i8::{
    abs_bits, chunk_bytes, load_scale, p_quant, p_scale, pack_low_bytes, quant_words, row_base,
    staged_chunks, CHUNK, TILE_ROWS,
};
use super::{load_q, row, slot, stage_rows_by, Ctx, Row, Shape};
use crate::common::{last_of_workgroups, reset_counter};
use crate::math::{exp_sub, exp_sub_i8};
use kiln_ir::matrix::{FragmentRole, MmaKind};
use kiln_ir::{BarrierKind, IndexUnit, KernelBuilder, LdsSlot, Param, ScalarType, Type, Value};

/// Keys of the lane in a chunk: `4t + c` and `16 + 4t + c` (`c = 0..4`), in this order.
const LANE_KEYS: usize = 8;

/// The lane's two rows (`g`, `g + 8` of the tile) and the wave's staged chunk.
struct LaneRows {
    rows: [Row; 2],
    /// A tile of 8 rows (`mma8`): rows `g + 8` are padding, never computed nor stored.
    half: bool,
    /// Rows of the tile that exist (`rows_per_head - i0`; more than 16 at all but the last).
    tile_rows: Value,
    /// `mma_lds`, `mma8_lds`: the waves' staged K chunks (`CHUNK row_bytes` bytes a wave) and
    /// this wave's chunk in them, in bytes.
    k_stage: Option<(LdsSlot, Value)>,
    /// `mma8_lds`: the same for V. With tiles of 16 rows V is read from the cache (the K and V
    /// chunks of 4 waves with the combine's 16 rows exceed sm_90's 48 KiB a workgroup).
    v_stage: Option<(LdsSlot, Value)>,
    /// `mma8a`: K and V staged by async copies, half a step ahead ([`scan_async`]).
    async_kv: bool,
}

/// The `mma` variants' kernel body: tiles of `shape.rows` rows (16 or 8), `stage_k` the `_lds`
/// variants.
#[allow(clippy::too_many_arguments)]
pub(super) fn body(
    b: &mut KernelBuilder,
    c: &Ctx,
    kind: MmaKind,
    shape: Shape,
    stage_k: bool,
    wave_id: Value,
    rg: Value,
    zg: Value,
    counters: Param,
) {
    let flag = b.lds("count", ScalarType::U32, 1);
    // Chunks staged a wave, in `k_lds` (sized by `i8::stage_words`; after the scan it holds the
    // waves' states).
    let staged = staged_chunks(shape);
    let chunk_bytes = chunk_bytes(c.d);
    let kv_lds = stage_k.then_some(c.k_lds);
    let nw = b.u32(shape.waves);
    let s0 = b.mul(zg, nw);
    let busy = b.lt(s0, c.n_splits);
    b.if_then(busy, |b| {
        let tile = shape.rows;
        let tr = b.u32(tile);
        let i0 = b.mul(rg, tr);
        load_q(b, c, i0, tile);
        b.barrier(BarrierKind::Lds);
        let s = b.add(s0, wave_id);
        let mine = b.lt(s, c.n_splits);
        let two = b.u32(2);
        let three = b.u32(3);
        let g = b.shr(c.lane, two);
        let t = b.and(c.lane, three);
        let ig = b.add(i0, g);
        let eight = b.u32(8);
        let ig8 = b.add(ig, eight);
        let tile_rows = b.sub(c.rows_per_head, i0);
        let k_stage = kv_lds.map(|slot| {
            let bytes = b.u32(staged * chunk_bytes);
            (slot, b.mul(wave_id, bytes))
        });
        let v_stage = k_stage.filter(|_| staged == 2).map(|(slot, region)| {
            let o = b.u32(chunk_bytes);
            (slot, b.add(region, o))
        });
        let half = tile == TILE_ROWS / 2;
        let rows = [row(b, c, ig), row(b, c, ig8)];
        let async_kv = shape.async_k && v_stage.is_some();
        let lr = LaneRows { rows, half, tile_rows, k_stage, v_stage, async_kv };
        let st = scan(b, c, kind, &lr, g, t, s, mine);
        let tile_of = |b: &mut KernelBuilder| -> Vec<Row> {
            (0..tile)
                .map(|k| {
                    let kk = b.u32(k);
                    let i = b.add(i0, kk);
                    row(b, c, i)
                })
                .collect()
        };
        let grouped = c.grouped(b);
        b.if_else(
            grouped,
            |b| {
                // Step 3's first level: the waves' states through LDS (the staged chunks' room:
                // the scan's last barrier is behind every wave's reads of it), the group into
                // `partials` as state `zg`.
                let to = LdsStates { base: 0, rows: tile, slots: shape.waves };
                let into = StateTo::Lds { to, g, sw: wave_id };
                b.if_then(mine, |b| store(b, c, &lr, t, into, &st));
                b.barrier(BarrierKind::Lds);
                let rows = tile_of(b);
                combine_groups(b, c, &rows, to, s0, 1, zg);
                vec![]
            },
            |b| {
                b.if_then(mine, |b| store(b, c, &lr, t, StateTo::Partials(s), &st));
                vec![]
            },
        );
        let nwm1 = b.u32(shape.waves - 1);
        let total = b.add(c.n_splits, nwm1);
        let total = b.div(total, nw);
        let hr = b.mul(c.h, c.rows_per_head);
        let counter = b.add(hr, rg);
        last_of_workgroups(b, c.tid, flag, counters, counter, total, |b| {
            let rows = tile_of(b);
            // 32 states a trip: 4-9% faster than 16 at every bench case on an H100
            // (bench/results/i8-combine-2026-12-06.md, calls 5 and 6). 4 dimensions a lane
            // with 16 a trip: the same bytes in flight, a quarter of the passes (the `rR`
            // variants keep one dimension a lane: at 128 registers `r4x2` spills 16 bytes on
            // sm_86).
            let how = Fold::Quad(LONG_UNROLL / 2);
            combine(b, c, &rows, wave_id, shape.waves, States::Partials, how);
            reset_counter(b, c.tid, counters, counter);
        });
    });
}

/// Index of accumulator `(block, row r, dimension 32 block + 8t + j)` in the state (after `m`,
/// `l` of the two rows).
fn acc_index(bi: u32, r: u32, j: u32) -> usize {
    (4 + (bi * 2 + r) * 8 + j) as usize
}

/// The split's state of the lane's rows: `[m_g, m_g8, l_g, l_g8, acc...]` ([`acc_index`]).
#[allow(clippy::too_many_arguments)]
fn scan(
    b: &mut KernelBuilder,
    c: &Ctx,
    kind: MmaKind,
    lr: &LaneRows,
    g: Value,
    t: Value,
    s: Value,
    mine: Value,
) -> Vec<Value> {
    let blocks = c.d / 32;
    let n_acc = (blocks * 2 * 8) as usize;
    let mut init = vec![b.f32(f32::NEG_INFINITY); 2];
    init.extend((0..2 + n_acc).map(|_| b.f32(0.0)));
    let c0 = b.mul(s, c.cps);
    let (zero, one) = (b.u32(0), b.u32(1));
    if lr.async_kv {
        return scan_async(b, c, kind, lr, (g, t), (c0, mine), &init);
    }
    // Every wave runs `cps` steps (`mma_lds`: the staging's barriers), computing only on its own
    // chunks.
    b.for_range(zero, c.cps, one, 1, &init, |b, i, st| {
        let chunk = b.add(c0, i);
        let inside = b.lt(chunk, c.n_chunks);
        let go = b.and(mine, inside);
        if let Some((slot, region)) = lr.k_stage {
            b.if_then(go, |b| {
                let ck = b.u32(CHUNK);
                let k0 = b.mul(chunk, ck);
                // The lane with a zero the compiler cannot see, as in `scan_async`.
                let kz = c.opaque_zero(b, chunk);
                let lz = b.add(c.lane, kz);
                let by = (lz, c.wave);
                stage_rows_by(b, c, (c.k_cache, slot, region), k0, CHUNK, false, by);
                if let Some((slot, region)) = lr.v_stage {
                    stage_rows_by(b, c, (c.v_cache, slot, region), k0, CHUNK, false, by);
                }
            });
            b.barrier(BarrierKind::Lds);
        }
        let next = b.if_else(
            go,
            |b| {
                // q's operands are read from LDS in every chunk, with an index that carries a
                // zero the compiler cannot see (`n_tokens <= 8`): held across the loop, they
                // cost 24 registers.
                let kz = c.opaque_zero(b, chunk);
                let (qa, dq) = q_operands(b, c, kind, lr.half, g, t, kz);
                chunk_step(b, c, kind, lr, (g, t), chunk, (&qa, &dq), st)
            },
            |_| st.to_vec(),
        );
        if lr.k_stage.is_some() {
            // The next step stages into the same region.
            b.barrier(BarrierKind::Lds);
        }
        next
    })
}

/// [`scan`] of `mma8a`: the K and V chunks staged by async copies, each half a step ahead of the
/// arithmetic that reads it, in the `mma8_lds` regions (no second buffer). A step waits for
/// chunk `i`'s K, issues its V copies and computes the scores; then waits for the V, issues
/// chunk `i + 1`'s K copies and computes P V. So each chunk's loads are in flight while the
/// other half of a step computes; two barriers a step, as `mma8_lds`.
fn scan_async(
    b: &mut KernelBuilder,
    c: &Ctx,
    kind: MmaKind,
    lr: &LaneRows,
    (g, t): (Value, Value),
    (c0, mine): (Value, Value),
    init: &[Value],
) -> Vec<Value> {
    let ((k_slot, k_region), (v_slot, v_region)) = match (lr.k_stage, lr.v_stage) {
        (Some(k), Some(v)) => (k, v),
        _ => unreachable!("async staging is built with K and V staged"),
    };
    let (zero, one) = (b.u32(0), b.u32(1));
    let ck = b.u32(CHUNK);
    // Chunk `i` of the split: whether this wave computes it, its index, its first key and a zero
    // the compiler cannot see. Added to the copies' LDS offsets and to the lane that places
    // them: else LLVM hoists the 17 units' offsets out of the loop and holds them (220 registers
    // a lane at head dim 128 instead of 168; 241 with the LDS offsets too, 64-bit).
    let chunk_of = |b: &mut KernelBuilder, i: Value| {
        let chunk = b.add(c0, i);
        let inside = b.lt(chunk, c.n_chunks);
        let go = b.and(mine, inside);
        let kz = c.opaque_zero(b, chunk);
        (go, chunk, b.mul(chunk, ck), kz)
    };
    let (go0, _, k00, kz0) = chunk_of(b, zero);
    b.if_then(go0, |b| {
        let to = b.add(k_region, kz0);
        let lz = b.add(c.lane, kz0);
        stage_rows_by(b, c, (c.k_cache, k_slot, to), k00, CHUNK, true, (lz, c.wave))
    });
    let st = b.for_range(zero, c.cps, one, 1, init, |b, i, st| {
        let (go, chunk, k0, kz) = chunk_of(b, i);
        // Chunk `i`'s K (the only group in flight) lands; every lane's P V of the last step is
        // done with the V region.
        b.async_wait(0);
        b.barrier(BarrierKind::Lds);
        b.if_then(go, |b| {
            let to = b.add(v_region, kz);
            let lz = b.add(c.lane, kz);
            stage_rows_by(b, c, (c.v_cache, v_slot, to), k0, CHUNK, true, (lz, c.wave))
        });
        let rs = b.if_else(
            go,
            |b| {
                // q's operands from LDS each chunk, as in `scan`.
                let (qa, dq) = q_operands(b, c, kind, lr.half, g, t, kz);
                chunk_scores(b, c, kind, lr, (g, t), chunk, (&qa, &dq), st)
            },
            |b| {
                let mut idle = idle_softmax(b);
                idle.extend(idle_softmax(b));
                idle
            },
        );
        // Chunk `i`'s V lands; every lane's scores are done with the K region.
        b.async_wait(0);
        b.barrier(BarrierKind::Lds);
        let i1 = b.add(i, one);
        let (go1, _, k1, kz1) = chunk_of(b, i1);
        let in_split = b.lt(i1, c.cps);
        let go1 = b.and(go1, in_split);
        b.if_then(go1, |b| {
            let to = b.add(k_region, kz1);
            let lz = b.add(c.lane, kz1);
            stage_rows_by(b, c, (c.k_cache, k_slot, to), k1, CHUNK, true, (lz, c.wave))
        });
        b.if_else(go, |b| chunk_pv(b, c, kind, lr, (g, t), chunk, &rs, st), |_| st.to_vec())
    });
    // The last step's P V is done with the V region before step 3 puts states there.
    b.barrier(BarrierKind::Lds);
    st
}

/// The f32 scale of the Q8_0 block at byte `o` of the staged row at byte `base` (a multiple of 4)
/// of `lds`: from the aligned word that holds it.
fn lds_scale(b: &mut KernelBuilder, lds: LdsSlot, base: Value, o: u32) -> Value {
    let ov = b.u32(o - o % 4);
    let at = b.add(base, ov);
    let w = b.load_with(lds, at, ScalarType::U32, IndexUnit::Byte, Some(4));
    let w = if o.is_multiple_of(4) {
        w
    } else {
        let sh = b.u32(8 * (o % 4));
        b.shr(w, sh)
    };
    let h = b.convert(w, Type::scalar(ScalarType::U16));
    let h = b.bitcast(h, Type::F16);
    b.convert(h, Type::F32)
}

/// The f32 scale of the Q8_0 block at byte `o` of the row at byte `base`: of the chunk staged in
/// LDS where there is one, else of the cache.
fn block_scale(
    b: &mut KernelBuilder,
    stage: Option<(LdsSlot, Value)>,
    cache: Param,
    base: Value,
    o: u32,
) -> Value {
    match stage {
        Some((slot, _)) => lds_scale(b, slot, base, o),
        None => {
            let ov = b.u32(o);
            let at = b.add(base, ov);
            load_scale(b, cache, at)
        }
    }
}

/// The A fragments of q's quants (a block each) and the rows' block scales `dq[2 bi + r]`, from
/// LDS (`kz` a zero added to every index).
fn q_operands(
    b: &mut KernelBuilder,
    c: &Ctx,
    kind: MmaKind,
    half: bool,
    g: Value,
    t: Value,
    kz: Value,
) -> (Vec<Value>, Vec<Value>) {
    let blocks = c.d / 32;
    let qd_lds = c.qd_lds.expect("the i8 order's q scales");
    let two = b.u32(2);
    let t2 = b.mul(t, two);
    let mut qa = vec![];
    let mut dq = vec![];
    for bi in 0..blocks {
        let mut regs = vec![];
        for h in 0..2 {
            for r in 0..2u32 {
                if half && r == 1 {
                    // A tile of 8 rows: rows g + 8 of A are zeros.
                    regs.push(b.u32(0));
                    continue;
                }
                // Word `(row, 32 bi + 8t + 4 h)` of `[rows][D]` bytes.
                let rr = b.u32(r * 8);
                let rw = b.add(g, rr);
                let dw = b.u32(c.d / 4);
                let at = b.mul(rw, dw);
                let o = b.u32(8 * bi + h);
                let at = b.add(at, o);
                let at = b.add(at, t2);
                let at = b.add(at, kz);
                regs.push(b.load(c.q_lds, at, Type::U32));
            }
        }
        qa.push(fragment_of_words(b, kind, FragmentRole::A, &regs));
        for r in 0..2u32 {
            if half && r == 1 {
                dq.push(b.f32(0.0));
                continue;
            }
            let rr = b.u32(r * 8);
            let rw = b.add(g, rr);
            let nb = b.u32(blocks);
            let at = b.mul(rw, nb);
            let o = b.u32(bi);
            let at = b.add(at, o);
            let at = b.add(at, kz);
            dq.push(b.load(qd_lds, at, Type::F32));
        }
    }
    (qa, dq)
}

/// One chunk folded into the lane's rows' state: [`chunk_scores`], then [`chunk_pv`].
#[allow(clippy::too_many_arguments)]
fn chunk_step(
    b: &mut KernelBuilder,
    c: &Ctx,
    kind: MmaKind,
    lr: &LaneRows,
    (g, t): (Value, Value),
    chunk: Value,
    (qa, dq): (&[Value], &[Value]),
    st: &[Value],
) -> Vec<Value> {
    let rs = chunk_scores(b, c, kind, lr, (g, t), chunk, (qa, dq), st);
    chunk_pv(b, c, kind, lr, (g, t), chunk, &rs, st)
}

/// Values a row of [`chunk_scores`] gives: `m'`, `a`, `l` and the lane's 8 weights.
const ROW_SOFTMAX: usize = 3 + LANE_KEYS;

/// Row `g + 8`'s `hi`: whether the tile has it (wave-uniform), `None` in a tile of 8 rows.
fn upper_row(b: &mut KernelBuilder, lr: &LaneRows) -> Option<Value> {
    (!lr.half).then(|| {
        let hr = b.u32(TILE_ROWS / 2);
        b.lt(hr, lr.tile_rows)
    })
}

/// The chunk's first key and the context's last.
fn chunk_keys(b: &mut KernelBuilder, c: &Ctx, chunk: Value) -> (Value, Value) {
    let ck = b.u32(CHUNK);
    let k0 = b.mul(chunk, ck);
    let one = b.u32(1);
    (k0, b.sub(c.kv_len, one))
}

/// The lane's key `k` of the chunk (`4t + c`, `16 + 4t + c`), relative to its first.
fn lane_key(b: &mut KernelBuilder, t: Value, k: u32) -> Value {
    let four = b.u32(4);
    let t4 = b.mul(t, four);
    let o = b.u32(16 * (k / 4) + k % 4);
    b.add(t4, o)
}

/// The byte offsets of the lane's keys' rows (chunk from key `k0`, context's last key `last`):
/// in the staged chunk's LDS region (`staged`; clamped to the context where `clamp`), else in
/// the cache (clamped: a key past the context has p = 0 and reads the last key's row).
fn lane_rows(
    b: &mut KernelBuilder,
    c: &Ctx,
    staged: Option<Value>,
    t: Value,
    k0: Value,
    last: Value,
    clamp: bool,
) -> Vec<Value> {
    let rb = b.u32(c.cache.row_bytes(c.d));
    (0..LANE_KEYS as u32)
        .map(|k| {
            let kk = lane_key(b, t, k);
            match staged {
                Some(region) => {
                    let kc = if clamp {
                        let last_j = b.sub(last, k0);
                        b.min(kk, last_j)
                    } else {
                        kk
                    };
                    let kb = b.mul(kc, rb);
                    b.add(region, kb)
                }
                None => {
                    let key = b.add(k0, kk);
                    let kc = b.min(key, last);
                    row_base(b, c, kc)
                }
            }
        })
        .collect()
}

/// A chunk's scores and softmax of the lane's rows (steps 1 and 2 up to P): `[m', a, l, p_0..8]`
/// of row `g`, then of row `g + 8` ([`ROW_SOFTMAX`] each). Reads K (staged or from the cache),
/// not V. The work of row `g + 8` (here and in [`chunk_pv`]) runs only where the tile has it
/// (`hi`, wave-uniform): at `T group <= 8` (T = 1 at group 4) half of the tile is padding.
#[allow(clippy::too_many_arguments)]
fn chunk_scores(
    b: &mut KernelBuilder,
    c: &Ctx,
    kind: MmaKind,
    lr: &LaneRows,
    (g, t): (Value, Value),
    chunk: Value,
    (qa, dq): (&[Value], &[Value]),
    st: &[Value],
) -> Vec<Value> {
    let blocks = c.d / 32;
    let (k0, last) = chunk_keys(b, c, chunk);
    let four = b.u32(4);
    // The lane's keys (unclamped, for the mask) and their K rows.
    let rb = b.u32(c.cache.row_bytes(c.d));
    let keys: Vec<Value> = (0..LANE_KEYS as u32)
        .map(|k| {
            let kk = lane_key(b, t, k);
            b.add(k0, kk)
        })
        .collect();
    let bases = lane_rows(b, c, lr.k_stage.map(|(_, r)| r), t, k0, last, false);
    // Step 1: the integer dot products of every block and key tile (C of rows g, g + 8).
    let zc = b.i32(0);
    let zero_c = b.fragment_splat(kind, FragmentRole::C, zc);
    let one_u = b.u32(1);
    let gh = b.shr(g, one_u);
    let gh = b.mul(gh, four);
    let gl = b.and(g, one_u);
    let col0 = b.add(gh, gl);
    let col_bases: Vec<Value> = (0..4u32)
        .map(|j| {
            let o = b.u32(2 * (j % 2) + 16 * (j / 2));
            let key = b.add(col0, o);
            match lr.k_stage {
                Some((_, region)) => {
                    let kb = b.mul(key, rb);
                    b.add(region, kb)
                }
                None => {
                    let key = b.add(k0, key);
                    let key = b.min(key, last);
                    row_base(b, c, key)
                }
            }
        })
        .collect();
    let eight = b.u32(8);
    let t8 = b.mul(t, eight);
    let hi = upper_row(b, lr);
    let fz = b.f32(0.0);
    let ninf = b.f32(f32::NEG_INFINITY);
    // The scores before the scale, `s[r][k]` (row g + r 8, the lane's key `k`), folded a block
    // at a time (row g + 8's only where the tile has it).
    let mut s = [vec![fz; LANE_KEYS], vec![fz; LANE_KEYS]];
    for bi in 0..blocks {
        let dk: Vec<Value> = bases
            .iter()
            .map(|&base| block_scale(b, lr.k_stage, c.k_cache, base, 34 * bi))
            .collect();
        let mut dots = [vec![zc; LANE_KEYS], vec![zc; LANE_KEYS]];
        for (j, &cb) in col_bases.iter().enumerate() {
            let kw = match lr.k_stage {
                Some((slot, _)) => quant_words(b, slot, cb, 34 * bi + 2, t8, 2),
                None => quant_words(b, c.k_cache, cb, 34 * bi + 2, t8, 2),
            };
            let kb = fragment_of_words(b, kind, FragmentRole::B, &kw);
            let d = b.mma(kind, qa[bi as usize], kb, zero_c);
            for e in 0..2u8 {
                let k = 4 * (j / 2) + 2 * (j % 2) + e as usize;
                dots[0][k] = b.extract(d, e);
                dots[1][k] = b.extract(d, e + 2);
            }
        }
        let fold = |b: &mut KernelBuilder, r: usize, s: &[Value]| -> Vec<Value> {
            (0..LANE_KEYS)
                .map(|k| {
                    let fd = b.convert(dots[r][k], Type::F32);
                    let f = b.mul(dq[bi as usize * 2 + r], dk[k]);
                    b.fma(fd, f, s[k])
                })
                .collect()
        };
        s[0] = fold(b, 0, &s[0]);
        let s1 = s[1].clone();
        s[1] = upper(b, hi, |b| fold(b, 1, &s1), s1.clone());
    }
    // A row's scores (in block order) and softmax: `(m', a, l, p)`.
    let softmax = |b: &mut KernelBuilder, r: usize| -> Vec<Value> {
        let limit = lr.rows[r].limit;
        let mut mc = ninf;
        let mut sr = vec![];
        for k in 0..LANE_KEYS {
            let sv = b.mul(s[r][k], c.scale);
            let sees = b.le(keys[k], limit);
            let sv = b.select(sees, sv, ninf);
            mc = b.max(mc, sv);
            sr.push(sv);
        }
        for o in [1, 2] {
            let y = b.shuffle_xor(mc, o);
            mc = b.max(mc, y);
        }
        let m2 = b.max(st[r], mc);
        let a = exp_sub(b, st[r], m2);
        let p: Vec<Value> = sr.iter().map(|&x| exp_sub_i8(b, x, m2)).collect();
        let x01 = b.add(p[0], p[1]);
        let x23 = b.add(p[2], p[3]);
        let lo = b.add(x01, x23);
        let x45 = b.add(p[4], p[5]);
        let x67 = b.add(p[6], p[7]);
        let hi = b.add(x45, x67);
        let mut u = b.add(lo, hi);
        for o in [1, 2] {
            let y = b.shuffle_xor(u, o);
            u = b.add(u, y);
        }
        let l = b.fma(st[2 + r], a, u);
        let mut out = vec![m2, a, l];
        out.extend(p);
        out
    };
    let mut rs = softmax(b, 0);
    let idle = idle_softmax(b);
    rs.extend(upper(b, hi, |b| softmax(b, 1), idle));
    rs
}

/// [`chunk_scores`]' values of a row that is not computed.
fn idle_softmax(b: &mut KernelBuilder) -> Vec<Value> {
    let (ninf, fz) = (b.f32(f32::NEG_INFINITY), b.f32(0.0));
    vec![ninf, fz, fz].into_iter().chain([fz; LANE_KEYS]).collect()
}

/// A chunk's P V folded into the lane's rows' state, from [`chunk_scores`]' `rs`: P quantized a
/// V block at a time. Reads V (staged or from the cache), not K.
#[allow(clippy::too_many_arguments)]
fn chunk_pv(
    b: &mut KernelBuilder,
    c: &Ctx,
    kind: MmaKind,
    lr: &LaneRows,
    (g, t): (Value, Value),
    chunk: Value,
    rs: &[Value],
    st: &[Value],
) -> Vec<Value> {
    let blocks = c.d / 32;
    let (k0, last) = chunk_keys(b, c, chunk);
    let four = b.u32(4);
    let fz = b.f32(0.0);
    let zc = b.i32(0);
    let zero_c = b.fragment_splat(kind, FragmentRole::C, zc);
    let hi = upper_row(b, lr);
    // The lane's V rows (the staged ones clamped too).
    let v_bases = lane_rows(b, c, lr.v_stage.map(|(_, r)| r), t, k0, last, true);
    let rs = [&rs[..ROW_SOFTMAX], &rs[ROW_SOFTMAX..]];
    let mut next = vec![fz; st.len()];
    for r in 0..2 {
        next[r] = rs[r][0];
        next[2 + r] = rs[r][2];
    }
    // P V, a V block at a time.
    let g4 = b.mul(g, four);
    for bi in 0..blocks {
        let dv: Vec<Value> = v_bases
            .iter()
            .map(|&base| block_scale(b, lr.v_stage, c.v_cache, base, 34 * bi))
            .collect();
        // A row's P quants of the block, packed: `[sc, keys 4t.., keys 16 + 4t..]`.
        let quant = |b: &mut KernelBuilder, r: usize| -> Vec<Value> {
            let p = &rs[r][3..];
            let w: Vec<Value> = (0..LANE_KEYS).map(|k| b.mul(p[k], dv[k])).collect();
            let mut amax = abs_bits(b, w[0]);
            for &x in &w[1..] {
                let ax = abs_bits(b, x);
                amax = b.max(amax, ax);
            }
            for o in [1, 2] {
                let y = b.shuffle_xor(amax, o);
                amax = b.max(amax, y);
            }
            let (sc, id) = p_scale(b, amax);
            let qs: Vec<Value> = w.iter().map(|&x| p_quant(b, x, id)).collect();
            vec![sc, pack_low_bytes(b, &qs[..4]), pack_low_bytes(b, &qs[4..])]
        };
        let q0 = quant(b, 0);
        let zu = b.u32(0);
        let q1 = upper(b, hi, |b| quant(b, 1), vec![fz, zu, zu]);
        let pa = fragment_of_words(b, kind, FragmentRole::A, &[q0[1], q1[1], q0[2], q1[2]]);
        // The V words `[34 bi + 2 + 4g, +4)` of the lane's keys, transposed to 4 keys a word.
        let words: Vec<Value> = v_bases
            .iter()
            .map(|&base| match lr.v_stage {
                Some((slot, _)) => quant_words(b, slot, base, 34 * bi + 2, g4, 1)[0],
                None => quant_words(b, c.v_cache, base, 34 * bi + 2, g4, 1)[0],
            })
            .collect();
        let lo = transpose(b, &words[..4]);
        let hi_w = transpose(b, &words[4..]);
        let outs: Vec<Value> = (0..4)
            .map(|i| {
                let vb = fragment_of_words(b, kind, FragmentRole::B, &[lo[i], hi_w[i]]);
                b.mma(kind, pa, vb, zero_c)
            })
            .collect();
        let sc = [q0[0], q1[0]];
        // Row r's accumulators of the block: C elements `2r`, `2r + 1` of each tile.
        let update = |b: &mut KernelBuilder, r: usize| -> Vec<Value> {
            let a = rs[r][1];
            let mut v = vec![];
            for h in 0..2u32 {
                for (i, &d) in outs.iter().enumerate() {
                    let at = acc_index(bi, r as u32, 4 * h + i as u32);
                    let x = b.extract(d, (2 * r as u32 + h) as u8);
                    let x = b.convert(x, Type::F32);
                    let ra = b.mul(st[at], a);
                    debug_assert_eq!(at, acc_index(bi, r as u32, v.len() as u32));
                    v.push(b.fma(x, sc[r], ra));
                }
            }
            v
        };
        let u0 = update(b, 0);
        let keep: Vec<Value> = (0..8).map(|j| st[acc_index(bi, 1, j)]).collect();
        let u1 = upper(b, hi, |b| update(b, 1), keep);
        for j in 0..8u32 {
            next[acc_index(bi, 0, j)] = u0[j as usize];
            next[acc_index(bi, 1, j)] = u1[j as usize];
        }
    }
    next
}

/// Row `g + 8`'s part: `f` where the tile has the row (`hi`, wave-uniform), else `idle`; a tile
/// of 8 rows (`hi` is `None`) emits only `idle`.
fn upper(
    b: &mut KernelBuilder,
    hi: Option<Value>,
    f: impl FnOnce(&mut KernelBuilder) -> Vec<Value>,
    idle: Vec<Value>,
) -> Vec<Value> {
    match hi {
        Some(hi) => b.if_else(hi, f, |_| idle.clone()),
        None => idle,
    }
}

/// A fragment of 8-bit elements from its registers (words, element 0 in the low byte).
fn fragment_of_words(
    b: &mut KernelBuilder,
    kind: MmaKind,
    role: FragmentRole,
    words: &[Value],
) -> Value {
    let mut elems = vec![];
    for &w in words {
        let v = b.bitcast(w, Type::vector(ScalarType::I8, 4));
        elems.extend((0..4).map(|e| b.extract(v, e)));
    }
    b.fragment_of(kind, role, &elems)
}

/// Words `w[c]` (key `c`'s bytes of dimensions `0..4`) transposed: result `i` holds dimension
/// `i` of keys `0..4`, key 0 in the low byte (8 byte permutes).
fn transpose(b: &mut KernelBuilder, w: &[Value]) -> [Value; 4] {
    let a_lo = b.perm(w[0], w[1], [0, 4, 1, 5]);
    let a_hi = b.perm(w[0], w[1], [2, 6, 3, 7]);
    let b_lo = b.perm(w[2], w[3], [0, 4, 1, 5]);
    let b_hi = b.perm(w[2], w[3], [2, 6, 3, 7]);
    [
        b.perm(a_lo, b_lo, [0, 1, 4, 5]),
        b.perm(a_lo, b_lo, [2, 3, 6, 7]),
        b.perm(a_hi, b_hi, [0, 1, 4, 5]),
        b.perm(a_hi, b_hi, [2, 3, 6, 7]),
    ]
}

/// Where [`store`] puts a split's state.
#[derive(Clone, Copy)]
enum StateTo {
    /// Split `s`'s slot of `partials`.
    Partials(Value),
    /// Slot `sw` of `to` in `k_lds` (row `g` of the tile is row `g` there; words, the f32 bits).
    Lds { to: LdsStates, g: Value, sw: Value },
}

/// Stores the split's state of the lane's rows that exist: `acc` as 4 dimensions a store, `m`
/// and `l` from lane `t = 0` of each group.
fn store(b: &mut KernelBuilder, c: &Ctx, lr: &LaneRows, t: Value, into: StateTo, st: &[Value]) {
    let blocks = c.d / 32;
    let eight = b.u32(8);
    let t8 = b.mul(t, eight);
    let zero = b.u32(0);
    let first = b.eq(t, zero);
    let n = if lr.half { 1 } else { 2 };
    for (r, rw) in lr.rows.iter().enumerate().take(n) {
        let (base, k) = match into {
            StateTo::Partials(s) => (slot(b, c, rw.global, s), None),
            StateTo::Lds { to, g, sw } => {
                let rv = b.u32(8 * r as u32);
                let k = b.add(g, rv);
                (to.acc(b, c, k, sw), Some(k))
            }
        };
        b.if_then(rw.valid, |b| {
            for bi in 0..blocks {
                for h in 0..2u32 {
                    let o = b.u32(32 * bi + 4 * h);
                    let at = b.add(base, o);
                    let at = b.add(at, t8);
                    let xs: Vec<Value> = (0..4)
                        .map(|i| {
                            let x = st[acc_index(bi, r as u32, 4 * h + i)];
                            match into {
                                StateTo::Partials(_) => x,
                                StateTo::Lds { .. } => b.bitcast(x, Type::U32),
                            }
                        })
                        .collect();
                    let x = b.make_vector(&xs);
                    match into {
                        StateTo::Partials(_) => b.store(c.partials, at, x),
                        StateTo::Lds { .. } => b.store(c.k_lds, at, x),
                    }
                }
            }
            b.if_then(first, |b| match into {
                StateTo::Lds { to, sw, .. } => {
                    let k = k.expect("the tile row of an LDS state");
                    let am = to.ml(b, c, k, sw);
                    lds_store(b, c, am, st[r]);
                    let one = b.u32(1);
                    let al = b.add(am, one);
                    lds_store(b, c, al, st[2 + r]);
                }
                StateTo::Partials(_) => {
                    let dm = b.u32(c.d);
                    let am = b.add(base, dm);
                    b.store(c.partials, am, st[r]);
                    let dl = b.u32(c.d + 1);
                    let al = b.add(base, dl);
                    b.store(c.partials, al, st[2 + r]);
                }
            });
        });
    }
}
