//! MoE GEMV: `y[t][j][n] = sum_k W[ids[t][j]][n][k] * x[t][k]` for `t` tokens (1..=8), each with
//! `topk` expert ids into `e` stacked experts (repacked layout, 64-bit offsets: the stack may be
//! past 4 GiB).
//!
//! Every output keeps the dense order ([`super::dense`]), so it equals the dense GEMV of its
//! expert's matrix bit for bit. An id `>= e` reads nothing and gives NaN (the engine's router
//! produced garbage; kiln does not read out of bounds for it).
//!
//! Variants:
//! - `baseline`: one wave a workgroup, one row a wave, one workgroup row per (token, slot).
//! - `slot`: four waves a workgroup, otherwise as the baseline: each (token, slot) reads its
//!   expert's rows; no LDS, no cross-token sharing. For one token (the seeds' `<1>`
//!   specialization) that is every expert read once.
//! - `grouped`: a workgroup row per expert; it finds the tokens routed to its expert, reads each
//!   weight block once for all of them (up to 8, `tsum<8>`), and exits at once when no token
//!   chose it. Each expert's weights are read once per step.
//! - `slot_rRwWuU[e]` ([`Peeled`]): `slot` with `R` rows a wave, `W` waves, the first `U`
//!   block-loop trips loaded ahead, and with `e` before the grid-dependency wait (the expert id
//!   with them). Not timed yet, so not routed (they follow `slot`).
//!
//! Routes (measured on the H200, bench/results/gemv-h200-2026-11-30.md): `grouped` for 2..8
//! tokens over large experts (`n >= 4096`, Mixtral-like: each expert read once instead of once a
//! token), else `slot` (small experts, Qwen3-like: the few repeats hit L2).

use super::ahead::flatten;
use super::dense::{declare_nkt, wave_row0, WAVES};
use super::format::{accumulate, Acts, Layout, WBlock, WType, Weights, QK};
use super::host;
use crate::bench::{u32_arg, BenchCase};
use crate::cases::{u32s, Case, Rng};
use crate::{prefetch, Bench, KernelSpec, Parity, VariantSpec};
use kiln_ir::package::Admission;
use kiln_ir::{
    Access, Dim, Kernel, KernelBuilder, Param, ReduceOp, ScalarRule, ScalarType, ShapeExpr, Target,
    Type, Value,
};

/// Tokens a call at most.
pub const MAX_T: u32 = 8;
/// Rows a wave of the grouped variant (each activation block loaded once for both).
const ROWS: u32 = 2;

/// The variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// One wave a workgroup, a (token, slot) a workgroup row.
    Baseline,
    /// Four waves, a (token, slot) a workgroup row.
    Slot,
    /// A workgroup row per expert, tokens grouped.
    Grouped,
    /// `slot` with several rows a wave and the first block-loop trips peeled ([`Peeled`]).
    Peeled(Peeled),
}

/// The shape of a [`Variant::Peeled`] kernel: a (token, slot) a workgroup row, as `slot`, with
/// `rows` rows a wave and `waves` waves; each lane's blocks of the first `trips` trips of the
/// block loop (blocks `lane + j W`, `j < trips`) of all its rows are loaded before any is used,
/// and with `early` before the grid-dependency wait (the expert id with them), held there
/// ([`crate::prefetch::hold`]). The id is the only thing between the launch and the weights, so
/// under programmatic dependent launch an early kernel streams its experts' rows while the grid
/// before it runs; the runtime overlaps it only where no grid that may still be running writes
/// `ids` or the weights ([`kiln_ir::Kernel::reads_before_grid_wait`]: in a decode graph not the
/// GEMV right after the router's top-k, but the one after it, the down projection, which reads
/// the same ids). The same blocks in the same order, so the same bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peeled {
    /// Rows a wave.
    pub rows: u32,
    /// Waves a workgroup.
    pub waves: u32,
    /// Block-loop trips loaded ahead.
    pub trips: u32,
    /// Loaded before the grid-dependency wait.
    pub early: bool,
}

impl Peeled {
    /// `slot_r{rows}w{waves}u{trips}`, `e` when early.
    pub fn name(self) -> String {
        let e = if self.early { "e" } else { "" };
        format!("slot_r{}w{}u{}{e}", self.rows, self.waves, self.trips)
    }
}

struct Params {
    w: Weights,
    acts: Acts,
    ids: Param,
    y: Param,
    n: Param,
    k: Param,
    t: Param,
    e: Param,
    topk: Param,
}

fn declare(b: &mut KernelBuilder, wt: WType) -> Params {
    let (n, k, t) = declare_nkt(b, Some(MAX_T));
    let e = b.scalar_param("e", ScalarType::U32);
    let topk = b.scalar_param("topk", ScalarType::U32);
    b.scalar_rule(e, ScalarRule::AtLeast(1));
    b.scalar_rule(topk, ScalarRule::AtLeast(1));
    let w = Weights::declare(b, "w", wt, Layout::Repacked, &[e, n], k);
    let acts = Acts::declare(b, wt, t, k);
    let ids = b.buffer("ids", ScalarType::U32, Access::Read);
    b.set_buffer_len(ids, ShapeExpr::scaled(&[t, topk], 1, 1));
    let y = b.buffer("y", ScalarType::F32, Access::Write);
    b.set_buffer_len(y, ShapeExpr::scaled(&[t, topk, n], 1, 1));
    Params { w, acts, ids, y, n, k, t, e, topk }
}

/// What every variant computes first: its arguments, lanes and first row.
struct Frame {
    n: Value,
    t: Value,
    e: Value,
    topk: Value,
    /// Blocks a row.
    nb: Value,
    lane: Value,
    /// The workgroup row: `token * topk + slot`, or the expert where `by_expert`.
    wy: Value,
    /// The wave's first row.
    row0: Value,
    one: Value,
    /// `n - 1`.
    last: Value,
}

/// Sets the workgroup (`waves` waves of `wave` lanes, `rows` rows a wave) and the grid (a
/// workgroup row per (token, slot), or per expert where `by_expert`), and computes the
/// [`Frame`].
fn frame(
    b: &mut KernelBuilder,
    p: &Params,
    (wave, waves, rows): (u32, u32, u32),
    by_expert: bool,
) -> Frame {
    b.workgroup_size([waves * wave, 1, 1]);
    b.const_param("waves", waves as i64);
    let ys = if by_expert {
        ShapeExpr::scaled(&[p.e], 1, 1)
    } else {
        ShapeExpr::scaled(&[p.t, p.topk], 1, 1)
    };
    b.grid([ShapeExpr::scaled(&[p.n], 1, (waves * rows) as u64), ys, ShapeExpr::constant(1)]);
    let n = b.arg(p.n);
    let k = b.arg(p.k);
    let t = b.arg(p.t);
    let e = b.arg(p.e);
    let topk = b.arg(p.topk);
    let qk = b.u32(QK);
    let nb = b.div(k, qk);
    let lane = b.lane();
    let wx = b.workgroup_id(Dim::X);
    let wy = b.workgroup_id(Dim::Y);
    let row0 = wave_row0(b, wx, waves, rows);
    let one = b.u32(1);
    let last = b.sub(n, one);
    Frame { n, t, e, topk, nb, lane, wy, row0, one, last }
}

/// Lane `first` of the wave stores its wave's `sum` as output `(wy, row)` of `y` (`n` rows a
/// workgroup row), where the row is `valid`.
fn store_sum(
    b: &mut KernelBuilder,
    y: Param,
    (first, valid): (Value, Value),
    (wy, n, row): (Value, Value, Value),
    sum: Value,
) {
    let ok = b.and(first, valid);
    b.if_then(ok, |b| {
        let i = b.mul(wy, n);
        let i = b.add(i, row);
        b.store(y, i, sum);
    });
}

/// Blocks before row `row` of expert `ex` (`n` rows of `nb` blocks an expert), as `u64`.
fn row_base(b: &mut KernelBuilder, (n, nb): (Value, Value), ex: Value, row: Value) -> Value {
    let e64 = b.convert(ex, Type::U64);
    let n64 = b.convert(n, Type::U64);
    let r64 = b.convert(row, Type::U64);
    let nb64 = b.convert(nb, Type::U64);
    let er = b.mul(e64, n64);
    let er = b.add(er, r64);
    b.mul(er, nb64)
}

/// Builds one MoE kernel.
pub fn build(_t: &Target, wave: u32, wt: WType, v: Variant) -> Kernel {
    let vname = match v {
        Variant::Baseline => "baseline".to_string(),
        Variant::Slot => "slot".to_string(),
        Variant::Grouped => "grouped".to_string(),
        Variant::Peeled(s) => s.name(),
    };
    let mut b = KernelBuilder::new(format!("gemv_moe_{}_rp_{vname}", wt.name()), wave);
    let p = declare(&mut b, wt);
    if let Variant::Peeled(s) = v {
        peeled(&mut b, &p, wave, s);
        return b.finish();
    }
    let waves = if v == Variant::Baseline { 1 } else { WAVES };
    let rows_per_wave = if v == Variant::Grouped { ROWS } else { 1 };
    let by_expert = v == Variant::Grouped;
    let f = frame(&mut b, &p, (wave, waves, rows_per_wave), by_expert);
    let Frame { n, t, e, topk, nb, lane, wy, row0: row, one, last, .. } = f;
    let valid = b.lt(row, n);
    let row_c = b.min(row, last);
    let zero = b.u32(0);
    let w = b.u32(wave);
    match v {
        Variant::Baseline | Variant::Slot => {
            // wy = token * topk + slot.
            let tok = b.div(wy, topk);
            let id = b.load(p.ids, wy, Type::U32);
            let ok_id = b.lt(id, e);
            let last_e = b.sub(e, one);
            let id_c = b.min(id, last_e);
            let base = row_base(&mut b, (n, nb), id_c, row_c);
            let fz = b.f32(0.0);
            let acc = b.if_else(
                ok_id,
                |b| {
                    b.for_range(lane, nb, w, 2, &[fz], |b, blk, acc| {
                        let blk64 = b.convert(blk, Type::U64);
                        let at = b.add(base, blk64);
                        let wb = p.w.load(b, at);
                        let ab = b.mul(tok, nb);
                        let ab = b.add(ab, blk);
                        let a = p.acts.load(b, ab);
                        vec![accumulate(b, &wb, &a, acc[0])]
                    })
                },
                |b| vec![b.f32(f32::NAN)],
            )[0];
            let s = b.wave_reduce(ReduceOp::Add, acc);
            let first = b.eq(lane, zero);
            store_sum(&mut b, p.y, (first, valid), (wy, n, row), s);
        }
        Variant::Grouped => {
            let ex = wy;
            // uses[j]: token j (< t) chose `ex`, from one ballot a token over each wave-wide
            // chunk of the `t * topk` ids (uniform). The expert-0 workgroups also give NaN to
            // every slot whose id is out of range (what the baseline gives).
            let slots = b.mul(t, topk);
            let ex0 = b.eq(ex, zero);
            let init = vec![zero; MAX_T as usize];
            let uses_u = b.for_range(zero, slots, w, 1, &init, |b, c0, acc| {
                let i = b.add(c0, lane);
                let in_s = b.lt(i, slots);
                let last_s = b.sub(slots, one);
                let ic = b.min(i, last_s);
                let id = b.load(p.ids, ic, Type::U32);
                let hit = b.eq(id, ex);
                let hit = b.and(hit, in_s);
                let tok = b.div(ic, topk);
                let bad = b.ge(id, e);
                let bad = b.and(bad, in_s);
                let nan_here = b.and(bad, ex0);
                for r in 0..ROWS {
                    let rr = b.u32(r);
                    let row_r = b.add(row, rr);
                    let ok_r = b.lt(row_r, n);
                    let st = b.and(nan_here, ok_r);
                    b.if_then(st, |b| {
                        let o = b.mul(ic, n);
                        let o = b.add(o, row_r);
                        let nan = b.f32(f32::NAN);
                        b.store(p.y, o, nan);
                    });
                }
                let z64 = b.u64(0);
                let mut next = Vec::with_capacity(acc.len());
                for j in 0..MAX_T {
                    let jj = b.u32(j);
                    let mine = b.eq(tok, jj);
                    let h = b.and(hit, mine);
                    let m = b.ballot(h);
                    let any = b.ne(m, z64);
                    let any = b.convert(any, Type::U32);
                    next.push(b.or(acc[j as usize], any));
                }
                next
            });
            let uses: Vec<Value> = uses_u.iter().map(|&u| b.ne(u, zero)).collect();
            let mut any = uses[0];
            for &u in &uses[1..] {
                any = b.or(any, u);
            }
            b.if_then(any, |b| {
                let bases: Vec<(Value, Value, Value)> = (0..ROWS)
                    .map(|r| {
                        let rr = b.u32(r);
                        let row_r = b.add(row, rr);
                        let valid_r = b.lt(row_r, n);
                        let rc = b.min(row_r, last);
                        (row_r, valid_r, row_base(b, (n, nb), ex, rc))
                    })
                    .collect();
                let fz = b.f32(0.0);
                let init = vec![fz; (MAX_T * ROWS) as usize];
                let accs = b.for_range(lane, nb, w, 1, &init, |b, blk, acc| {
                    let blk64 = b.convert(blk, Type::U64);
                    let wbs: Vec<_> = bases
                        .iter()
                        .map(|&(_, _, base)| {
                            let at = b.add(base, blk64);
                            p.w.load(b, at)
                        })
                        .collect();
                    let mut next = acc.to_vec();
                    for j in 0..MAX_T {
                        let olds: Vec<Value> =
                            (0..ROWS).map(|r| acc[(r * MAX_T + j) as usize]).collect();
                        let r = b.if_else(
                            uses[j as usize],
                            |b| {
                                let jj = b.u32(j);
                                let ab = b.mul(jj, nb);
                                let ab = b.add(ab, blk);
                                let a = p.acts.load(b, ab);
                                wbs.iter()
                                    .zip(&olds)
                                    .map(|(wb, &o)| accumulate(b, wb, &a, o))
                                    .collect()
                            },
                            |_| olds.clone(),
                        );
                        for (ri, v) in r.into_iter().enumerate() {
                            next[ri * MAX_T as usize + j as usize] = v;
                        }
                    }
                    next
                });
                // Lanes [j*W/8, (j+1)*W/8) hold token j's sum; the first stores it into every
                // slot of token j that chose `ex`.
                let span = b.u32(wave / MAX_T);
                let j = b.div(lane, span);
                let head = b.rem(lane, span);
                let is_head = b.eq(head, zero);
                let in_t = b.lt(j, t);
                let ok0 = b.and(is_head, in_t);
                for (ri, &(row_r, valid_r, _)) in bases.iter().enumerate() {
                    let first = ri * MAX_T as usize;
                    let sum = b.tsum(MAX_T, &accs[first..first + MAX_T as usize]);
                    let ok = b.and(ok0, valid_r);
                    b.if_then(ok, |b| {
                        let first = b.mul(j, topk);
                        b.for_range(zero, topk, one, 1, &[], |b, slot, _| {
                            let i = b.add(first, slot);
                            let id = b.load(p.ids, i, Type::U32);
                            let hit = b.eq(id, ex);
                            b.if_then(hit, |b| {
                                let o = b.mul(i, n);
                                let o = b.add(o, row_r);
                                b.store(p.y, o, sum);
                            });
                            vec![]
                        });
                    });
                }
            });
        }
        Variant::Peeled(_) => unreachable!("built by `peeled`"),
    }
    b.finish()
}

/// The body of a [`Variant::Peeled`] kernel (the dense order: lane `l` adds blocks `l, l + W,
/// ...` in order, then the wave's sum).
fn peeled(b: &mut KernelBuilder, p: &Params, wave: u32, s: Peeled) {
    let rows = s.rows;
    b.const_param("rows_per_wave", rows as i64);
    let f = frame(b, p, (wave, s.waves, rows), false);
    // wy = token * topk + slot.
    let Frame { n, e, topk, nb, lane, wy, row0, one, last, .. } = f;
    let last_blk = b.sub(nb, one);
    let tok = b.div(wy, topk);
    if !s.early {
        b.grid_dependency_wait();
    }
    let id = b.load(p.ids, wy, Type::U32);
    let ok_id = b.lt(id, e);
    let last_e = b.sub(e, one);
    let id_c = b.min(id, last_e);
    let row_of: Vec<Value> = (0..rows)
        .map(|r| {
            let rr = b.u32(r);
            b.add(row0, rr)
        })
        .collect();
    let bases: Vec<Value> = row_of
        .iter()
        .map(|&row| {
            let row_c = b.min(row, last);
            row_base(b, (n, nb), id_c, row_c)
        })
        .collect();
    // The first trips' blocks (clamped: a block past the row is loaded and not added).
    let w = b.u32(wave);
    let blks: Vec<Value> = (0..s.trips)
        .map(|j| {
            let off = b.u32(j * wave);
            b.add(lane, off)
        })
        .collect();
    let ahead: Vec<Vec<WBlock>> = blks
        .iter()
        .map(|&blk| {
            let blk_c = b.min(blk, last_blk);
            let blk64 = b.convert(blk_c, Type::U64);
            bases
                .iter()
                .map(|&base| {
                    let at = b.add(base, blk64);
                    p.w.load(b, at)
                })
                .collect()
        })
        .collect();
    if s.early {
        let vals: Vec<Value> = ahead.iter().flatten().flat_map(flatten).collect();
        prefetch::hold(b, p.w.first_param(), &vals);
        b.grid_dependency_wait();
    }
    let a0 = b.mul(tok, nb);
    let fz = b.f32(0.0);
    let mut accs = vec![fz; rows as usize];
    for (&blk, wbs) in blks.iter().zip(&ahead) {
        let inside = b.lt(blk, nb);
        let blk_c = b.min(blk, last_blk);
        let ab = b.add(a0, blk_c);
        let a = p.acts.load(b, ab);
        for (acc, wb) in accs.iter_mut().zip(wbs) {
            let next = accumulate(b, wb, &a, *acc);
            *acc = b.select(inside, next, *acc);
        }
    }
    let rest = b.u32(s.trips * wave);
    let from = b.add(lane, rest);
    let accs = b.for_range(from, nb, w, 2, &accs, |b, blk, acc| {
        let ab = b.add(a0, blk);
        let a = p.acts.load(b, ab);
        let blk64 = b.convert(blk, Type::U64);
        bases
            .iter()
            .zip(acc)
            .map(|(&base, &acc)| {
                let at = b.add(base, blk64);
                let wb = p.w.load(b, at);
                accumulate(b, &wb, &a, acc)
            })
            .collect()
    });
    let nan = b.f32(f32::NAN);
    let zero = b.u32(0);
    let first = b.eq(lane, zero);
    for (&row, &acc) in row_of.iter().zip(&accs) {
        // An id out of range gives NaN, as the baseline's.
        let acc = b.select(ok_id, acc, nan);
        let sum = b.wave_reduce(ReduceOp::Add, acc);
        let valid = b.lt(row, n);
        store_sum(b, p.y, (first, valid), (wy, n, row), sum);
    }
}

/// A [`Variant::Peeled`] variant (its name is [`Peeled::name`]'s; `tests` checks it).
macro_rules! peeled {
    ($wt:expr, $name:literal, $rows:literal, $waves:literal, $trips:literal, $early:literal) => {
        VariantSpec {
            name: $name,
            build: |t, w| {
                let s = Peeled { rows: $rows, waves: $waves, trips: $trips, early: $early };
                build(t, w, $wt, Variant::Peeled(s))
            },
            admit: Admission::default(),
        }
    };
}

macro_rules! moe_family {
    ($name:literal, $wt:expr, $bench:expr) => {
        KernelSpec {
            name: $name,
            variants: vec![
                VariantSpec {
                    name: "baseline",
                    build: |t, w| build(t, w, $wt, Variant::Baseline),
                    admit: Admission::default(),
                },
                VariantSpec {
                    name: "grouped",
                    build: |t, w| build(t, w, $wt, Variant::Grouped),
                    admit: Admission {
                        archs: vec![],
                        shapes: vec![
                            ("t".into(), 2, MAX_T as u64),
                            ("n".into(), 4096, u32::MAX as u64),
                        ],
                    },
                },
                VariantSpec {
                    name: "slot",
                    build: |t, w| build(t, w, $wt, Variant::Slot),
                    admit: Admission { archs: vec![], shapes: vec![("t".into(), 1, MAX_T as u64)] },
                },
                // After `slot`, which admits every call (`kiln bench --variant` runs them by
                // name). Timed on an H100 (bench/results/across-2026-12-05.md, call 2), Qwen3-like
                // Q8_0: one token `slot_r2w2u2e` 5.99 and `slot_r2w4u2e` 6.04 us against `slot`'s
                // 6.62; eight tokens 46.08 / 46.62 against 34.53. Not routed yet: one machine, and
                // timed in a graph of copies of itself, where the node an early variant overlaps
                // is its own copy, not the router's.
                peeled!($wt, "slot_r2w4u2", 2, 4, 2, false),
                peeled!($wt, "slot_r1w4u2e", 1, 4, 2, true),
                peeled!($wt, "slot_r2w4u2e", 2, 4, 2, true),
                peeled!($wt, "slot_r2w2u2e", 2, 2, 2, true),
            ],
            parity: Parity::Buffers(|rng, large| cases(rng, large, $wt)),
            bench: $bench,
            archs: None,
            budgets: vec![],
        }
    };
}

/// The MoE families.
pub fn specs() -> Vec<KernelSpec> {
    vec![
        moe_family!("gemv_moe_q8_0_rp", WType::Q8_0, Bench::Cases(bench_q8_0)),
        moe_family!(
            "gemv_moe_q4_0_rp",
            WType::Q4_0,
            Bench::Without("timed as gemv_moe_q8_0_rp: the same kernel over fewer bytes")
        ),
    ]
}

/// Routing of `t` tokens to `topk` distinct experts each out of `e`, using exactly `used`
/// distinct experts (`used >= topk`, at most `t * topk`): a random set of `used` experts, each
/// given to at least one token, the rest of the slots filled at random from the set.
pub fn routing(rng: &mut Rng, t: usize, topk: usize, e: usize, used: usize) -> Vec<u32> {
    assert!(used >= topk && used <= t * topk && used <= e, "routing: {used} of {e} experts");
    let mut all: Vec<u32> = (0..e as u32).collect();
    for i in 0..used {
        let j = i + rng.below((e - i) as u64) as usize;
        all.swap(i, j);
    }
    let set = &all[..used];
    let mut ids = vec![u32::MAX; t * topk];
    // Deal the set round-robin over the slots (distinct within a token while used >= topk),
    // then fill the remaining slots with distinct picks.
    let mut next = 0;
    for tok in 0..t {
        let mut have: Vec<u32> = vec![];
        for slot in 0..topk {
            let id = if next < used {
                next += 1;
                set[next - 1]
            } else {
                loop {
                    let c = set[rng.below(used as u64) as usize];
                    if !have.contains(&c) {
                        break c;
                    }
                }
            };
            have.push(id);
            ids[tok * topk + slot] = id;
        }
    }
    ids
}

fn u32_bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Small stacks with repeated experts (shared by tokens) and unused ones, every `t` in 1..=8,
/// plus an out-of-range id (NaN), a token listing one expert twice and rows of 133 blocks;
/// `large` adds a Qwen3-30B-A3B-like shape.
fn cases(rng: &mut Rng, large: bool, wt: WType) -> Vec<Case> {
    let mut shapes: Vec<(usize, usize, usize, usize, usize)> =
        (1..=8).map(|t| (6, 2, 37, 416, t)).collect();
    shapes.push((9, 3, 5, 64, 4));
    // Rows of 133 blocks: the peeled variants' loop after their trips at both wave sizes.
    shapes.push((4, 2, 11, 32 * 133, 1));
    if large {
        shapes.push((128, 8, 768, 2048, 8));
    }
    let last = shapes.len() - 1;
    shapes
        .into_iter()
        .enumerate()
        .map(|(i, (e, topk, n, k, t))| {
            let used =
                (topk + rng.below((t * topk - topk + 1).min(e - topk + 1) as u64) as usize).min(e);
            let mut ids = routing(rng, t, topk, e, used);
            let mut name = format!("e={e} topk={topk} n={n} k={k} t={t} experts used={used}");
            if i == 4 {
                ids[1] = e as u32 + 3;
                name.push_str(" (an id out of range)");
            }
            if i == last && !large || i == 6 {
                ids[0] = ids[topk - 1];
                name.push_str(" (an expert twice in a token)");
            }
            let mut inputs = super::weight_inputs(rng, wt, Layout::Repacked, "w", e * n, k);
            let (q, s) = host::q8_1(rng, t, k, true);
            inputs.push(("xq".into(), ScalarType::U8, q));
            inputs.push(("xs".into(), ScalarType::U32, s));
            inputs.push(("ids".into(), ScalarType::U32, u32_bytes(&ids)));
            Case {
                name,
                scalars: vec![
                    u32s("n", n as u32),
                    u32s("k", k as u32),
                    u32s("t", t as u32),
                    u32s("e", e as u32),
                    u32s("topk", topk as u32),
                ],
                inputs,
            }
        })
        .collect()
}

/// Expected distinct experts of random top-`topk` routing of `t` tokens over `e` experts,
/// rounded: `e * (1 - (1 - topk/e)^t)`.
pub fn expected_used(e: usize, topk: usize, t: usize) -> usize {
    let p = 1.0 - (1.0 - topk as f64 / e as f64).powi(t as i32);
    ((e as f64 * p).round() as usize).clamp(topk, (t * topk).min(e))
}

/// Qwen3-30B-A3B-like (128 experts, top-8, hidden 2048 -> expert FFN 768) and Mixtral-like
/// (8 experts, top-2, 4096 -> 14336), T = 1 and 8, with random routing over the expected number
/// of distinct experts; the bytes count only the experts touched.
fn bench_q8_0() -> Vec<BenchCase> {
    let case = |name: &'static str,
                e: usize,
                topk: usize,
                n: usize,
                k: usize,
                t: usize,
                ids: fn(&mut Rng) -> Vec<u8>| {
        let used = expected_used(e, topk, t) as u64;
        let (n64, k64, t64) = (n as u64, k as u64, t as u64);
        BenchCase {
            flops: None,
            name,
            scalars: vec![
                u32_arg("n", n as u32),
                u32_arg("k", k as u32),
                u32_arg("t", t as u32),
                u32_arg("e", e as u32),
                u32_arg("topk", topk as u32),
            ],
            inputs: vec![
                ("wq", ScalarType::U8, e * n * k),
                ("ws", ScalarType::U16, e * n * k / QK as usize),
                ("xq", ScalarType::U8, t * k),
                ("xs", ScalarType::U32, t * k / QK as usize),
                ("ids", ScalarType::U32, t * topk),
            ],
            bytes: used * n64 * k64 / QK as u64 * 34
                + t64 * k64 * 9 / 8
                + t64 * topk as u64 * (4 + 4 * n64),
            values: vec![("ids", ids)],
        }
    };
    vec![
        case("gemv_moe_q8_0_qwen3_t1", 128, 8, 768, 2048, 1, |r| {
            u32_bytes(&routing(r, 1, 8, 128, expected_used(128, 8, 1)))
        }),
        case("gemv_moe_q8_0_qwen3_t8", 128, 8, 768, 2048, 8, |r| {
            u32_bytes(&routing(r, 8, 8, 128, expected_used(128, 8, 8)))
        }),
        case("gemv_moe_q8_0_mixtral_t1", 8, 2, 14336, 4096, 1, |r| {
            u32_bytes(&routing(r, 1, 2, 8, expected_used(8, 2, 1)))
        }),
        case("gemv_moe_q8_0_mixtral_t8", 8, 2, 14336, 4096, 8, |r| {
            u32_bytes(&routing(r, 8, 2, 8, expected_used(8, 2, 8)))
        }),
    ]
}
