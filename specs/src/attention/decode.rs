//! `attention_decode_{q8_0,f16}_d{64,128}`: decode attention of `T = 1..8` query rows at
//! positions `pos..pos+T` (row `t` sees keys `0..=pos+t`), grouped-query (`group` q heads a KV
//! head), over a Q8_0 or f16 cache (`[kv_head][ctx_max][head_dim]`, see
//! [`super::kv_append`]), with the portable exp: every variant gives the baseline's bits, and
//! every device the interpreter's.
//!
//! ABI (every variant; the split ones add the workspace `partials` and `counters`, left zeroed):
//!
//! | param        | kind                                          | meaning                      |
//! |--------------|-----------------------------------------------|------------------------------|
//! | `q`          | f32, read, `n_tokens*n_kv_heads*group*D`      | `[T][n_q][D]`, rotated       |
//! | `k_cache`, `v_cache` | u8 `n_kv*ctx_max*D/32*34` (q8_0) or f16 `n_kv*ctx_max*D`, read | the caches |
//! | `out`        | f32, write, like `q`                          | `[T][n_q][D]`                |
//! | `pos`        | u32                                           | position of row 0            |
//! | `n_tokens`   | u32, 1..=8                                    | query rows a head `T`        |
//! | `n_kv_heads` | u32                                           | KV heads                     |
//! | `group`      | u32, >= 1                                     | q heads a KV head            |
//! | `ctx_max`    | u32                                           | cache capacity (rows)        |
//! | `scale`      | f32                                           | softmax scale                |
//!
//! Query head `qh = kv * group + j`; keys past `ctx_max` are never read (`kv_len =
//! min(pos + T, ctx_max)`).
//!
//! # The order (part of the result; every variant keeps it)
//! With `W` the wave size, lane `l` owns dimensions `[l D/W, (l+1) D/W)`.
//! 1. Score of key `k` for a row: the lane's partial `q[d0] k[d0]`, then `fma(q[d], k[d], .)`
//!    over its other dimensions in order; the sum over the wave by the xor butterfly with
//!    offsets `W/2, ..., 1` (R4/R8 use `tsum<R>`, bitwise that butterfly row by row);
//!    `s = sum * scale`. A Q8_0 value is `f32(q) * f32(d)` (exact); f16 widens exactly.
//! 2. The context is cut into chunks of [`CHUNK`] keys; residue `r` (0..[`SPLITS`]) owns the
//!    chunks `r, r + SPLITS, ...` and runs an online softmax over their keys in order, from
//!    `(m, l, acc) = (-inf, 0, 0)`: for a key the row sees, `m' = max(m, s)`,
//!    `a = exp_sub(m, m')`, `p = exp_sub(s, m')`, `l' = fma(l, a, p)`,
//!    `acc' = fma(p, v, acc * a)`; a key the row does not see leaves the state as it is.
//! 3. The states of the residues that own a chunk merge in order `r = 0, 1, ...,
//!    min(SPLITS, chunks) - 1` into `F`, from
//!    `(-inf, 0, 0)`: `m = max(mF, mr)`, `a1 = exp_sub(mF, m)`, `a2 = exp_sub(mr, m)`,
//!    `l = fma(lF, a1, lr * a2)`, `acc = fma(accF, a1, accr * a2)`; `out = acc / l`.
//!
//! # Routes (first admitted wins; `baseline` is the reference, taken only when forced)
//! `split_r8` (pos >= [`SPLIT_MIN_POS`] = 64, T >= 2), `split_r4` (pos >= 64, group >= 2),
//! `split_r1` (pos >= 64), `r8` (T >= 2), `r4` (group >= 2), `r1`.
//!
//! # Variants
//! - `baseline`: one workgroup (one wave) a KV head; rows one at a time, residues in order.
//! - `r1`, `r4`, `r8`: one workgroup a KV head and `R` rows (`[n_kv, ceil(T group / R)]`); the
//!   `R` rows share each K/V read (the scores of all `R` rows from one `tsum<R>`; each lane
//!   computes the softmax scalars of the row `tsum` left in it, and the accumulators take them
//!   by broadcast). The residues run one after another, each state stored in the workspace
//!   `partials`, then merged as the split finish does.
//! - `split_r1`, `split_r4`, `split_r8`: also one workgroup a residue (`z = SPLITS`; a residue
//!   with no chunk returns at once): each stores its state in `partials`; the last workgroup of
//!   a (KV head, row group) (a counter in `counters`) merges the states in order (step 3), so
//!   split and unsplit agree bit for bit. No float atomics; the workspace is left zeroed.

use super::kv_append::quantize_q8_0_block;
use super::CacheType;
use crate::bench::{f32_arg, u32_arg, BenchCase};
use crate::cases::{floats, u32s, Case, Rng};
use crate::common::reset_counter;
use crate::math::exp_sub;
use crate::{Bench, Budget, KernelSpec, Parity, VariantSpec};
use half::f16;
use kiln_ir::package::Admission;
use kiln_ir::{
    Access, AtomicOp, BarrierKind, Dim, IndexUnit, Kernel, KernelBuilder, Param, ReduceOp,
    ScalarRule, ScalarType, Scope, ShapeExpr, Target, Type, Value,
};

/// Keys a chunk.
pub const CHUNK: u32 = 64;
/// Residues (chunk classes), and workgroups a row group in the split variants.
pub const SPLITS: u32 = 64;
/// Keys whose K/V rows a variant loads ahead of the one being folded (a software pipeline: the
/// key loop carries them, so their loads are in flight during the key's exps; the order of the
/// arithmetic is unchanged; a chunk's last keys load rows past it, inside the context). Two,
/// except R8: one for `split_r8`, none for `r8` (more spill on gfx906, gfx90a, sm_75, sm_80).
pub fn prefetch(shape: Shape) -> u32 {
    match (shape.rows >= 8, shape.split) {
        (false, _) => 2,
        (true, true) => 1,
        (true, false) => 0,
    }
}
/// Residues whose accumulators the final merge loads ahead of the one it merges (the loads of
/// a residue do not depend on the merge, so they overlap it).
pub const FINISH_PREFETCH: u32 = 4;
/// Position from which the router takes a split variant: from there on the context has two
/// chunks or more, and the split runs them in parallel (an unsplit variant has only
/// `n_kv * ceil(T group / R)` workgroups, each scanning the whole context).
pub const SPLIT_MIN_POS: u64 = CHUNK as u64;

/// Builds one variant: cache type (`Q8`: Q8_0, else f16), head dim `D`, rows a pass `R`,
/// `SPLIT` (a workgroup a residue), `ALL` (the baseline: one workgroup runs every row).
fn build<const Q8: bool, const D: u32, const R: u32, const SPLIT: bool, const ALL: bool>(
    t: &Target,
    wave: u32,
) -> Kernel {
    let cache = if Q8 { CacheType::Q8_0 } else { CacheType::F16 };
    attention(t, wave, cache, D, Shape { rows: R, split: SPLIT, all_rows: ALL })
}

/// A variant's shape.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Rows a pass (1, 4 or 8).
    pub rows: u32,
    /// A workgroup a residue, with the last-workgroup merge.
    pub split: bool,
    /// One workgroup a KV head runs every row (the baseline).
    pub all_rows: bool,
}

fn family<const Q8: bool, const D: u32>(name: &'static str) -> KernelSpec {
    let max = u64::from(u32::MAX);
    let long = ("pos".to_string(), SPLIT_MIN_POS, max);
    let admit = |shapes: Vec<(String, u64, u64)>| Admission { archs: vec![], shapes };
    let v = |name, build: crate::BuildFn, admit| VariantSpec { name, build, admit };
    KernelSpec {
        name,
        variants: vec![
            v("baseline", build::<Q8, D, 1, false, true>, Admission::default()),
            v(
                "split_r8",
                build::<Q8, D, 8, true, false>,
                admit(vec![long.clone(), ("n_tokens".into(), 2, 8)]),
            ),
            v(
                "split_r4",
                build::<Q8, D, 4, true, false>,
                admit(vec![long.clone(), ("group".into(), 2, max)]),
            ),
            v("split_r1", build::<Q8, D, 1, true, false>, admit(vec![long])),
            v("r8", build::<Q8, D, 8, false, false>, admit(vec![("n_tokens".into(), 2, 8)])),
            v("r4", build::<Q8, D, 4, false, false>, admit(vec![("group".into(), 2, max)])),
            v("r1", build::<Q8, D, 1, false, false>, Admission::default()),
        ],
        parity: Parity::Buffers(|rng, large| parity_cases(rng, large, Q8, D)),
        bench: if D == 128 {
            Bench::Cases(|| bench_cases(if Q8 { CacheType::Q8_0 } else { CacheType::F16 }))
        } else {
            Bench::Without("timed at head dim 128 (the issue's 32 q / 8 kv shape)")
        },
        archs: None,
        budgets: vec![Budget {
            kernel: name.to_string(),
            archs: vec!["gfx1100".into(), "gfx1201".into()],
            max_vgprs: Some(MAX_VGPRS_RDNA),
            max_scratch: None,
            max_spills: None,
            variants: vec![],
        }],
    }
}

/// VGPR budget of every variant on gfx1100 and gfx1201 (wave 32, a 1536-register file a SIMD,
/// granule 24): two waves a SIMD would allow the architectural 256; 128 keeps ten or more
/// waves a SIMD to hide the key loop's load latency (R8 uses 73 to 113).
pub const MAX_VGPRS_RDNA: u32 = 128;

/// The four families.
pub fn specs() -> Vec<KernelSpec> {
    vec![
        family::<true, 64>("attention_decode_q8_0_d64"),
        family::<true, 128>("attention_decode_q8_0_d128"),
        family::<false, 64>("attention_decode_f16_d64"),
        family::<false, 128>("attention_decode_f16_d128"),
    ]
}

/// One case: `(pos, T, n_kv, group, ctx_max)`.
type CaseShape = (u32, u32, u32, u32, u32);

/// T = 1..8 at contexts up to 10, then longer ones: 9 q / 3 kv heads at head dim 64 and
/// 32 q / 8 kv at 128. The interpreter runs each case 15 times (7 variants, twice each, and
/// the reference), so without `large` only `attention_decode_q8_0_d64` goes to 4099 keys (65
/// chunks: residue 0 folds chunks 0 and 64), with one row; every family has 108 or 69 keys
/// (two chunks) with 8 or 3 rows. `large` adds 4099 with 1, 5 and 8 rows and 32768 with 1
/// and 8 for every family.
pub fn case_shapes(large: bool, q8: bool, d: u32) -> Vec<CaseShape> {
    let (kv, g) = if d == 64 { (3, 3) } else { (8, 4) };
    let mut v: Vec<CaseShape> = [
        (0, 1, 3),
        (6, 1, 9),
        (5, 2, 7),
        (4, 3, 7),
        (3, 4, 8),
        (2, 5, 7),
        (1, 6, 10),
        (0, 7, 7),
        (0, 8, 8),
    ]
    .into_iter()
    .map(|(p, t, c)| (p, t, kv, g, c))
    .collect();
    if d == 64 {
        v.push((100, 8, kv, g, 108));
        if q8 {
            v.push((4098, 1, kv, g, 4101));
        }
    } else {
        v.push((66, 3, kv, g, 70));
    }
    if large {
        if !(d == 64 && q8) {
            v.push((4098, 1, kv, g, 4101));
        }
        v.extend([
            (4094, 5, kv, g, 4099),
            (4091, 8, kv, g, 4099),
            (32_767, 1, kv, g, 32_768),
            (32_760, 8, kv, g, 32_768),
        ]);
    }
    v
}

/// Builds the cache bytes of `n` rows of `d` values from `x` (Q8_0 blocks by ggml's rules, or
/// f16).
pub fn cache_bytes(cache: CacheType, x: &[f32]) -> Vec<u8> {
    match cache {
        CacheType::Q8_0 => x.chunks(32).flat_map(quantize_q8_0_block).collect(),
        CacheType::F16 => x.iter().flat_map(|&v| f16::from_f32(v).to_le_bytes()).collect(),
    }
}

fn parity_cases(rng: &mut Rng, large: bool, q8: bool, d: u32) -> Vec<Case> {
    let cache = if q8 { CacheType::Q8_0 } else { CacheType::F16 };
    case_shapes(large, q8, d)
        .into_iter()
        .map(|(pos, t, kv, g, ctx)| {
            let nq = (t * kv * g * d) as usize;
            let q: Vec<f32> = (0..nq).map(|_| rng.normal(1.0)).collect();
            let ncache = (kv * ctx * d) as usize;
            let kx: Vec<f32> = (0..ncache).map(|_| rng.normal(1.0)).collect();
            let vx: Vec<f32> = (0..ncache).map(|_| rng.normal(1.0)).collect();
            let scale = 1.0 / (d as f32).sqrt();
            Case {
                name: format!("ctx={} pos={pos} T={t} kv={kv} group={g} ctx_max={ctx}", pos + t),
                scalars: vec![
                    u32s("pos", pos),
                    u32s("n_tokens", t),
                    u32s("n_kv_heads", kv),
                    u32s("group", g),
                    u32s("ctx_max", ctx),
                    ("scale".into(), ScalarType::F32, u64::from(scale.to_bits())),
                ],
                inputs: vec![
                    floats("q", ScalarType::F32, &q),
                    ("k_cache".into(), cache.elem(), cache_bytes(cache, &kx)),
                    ("v_cache".into(), cache.elem(), cache_bytes(cache, &vx)),
                ],
            }
        })
        .collect()
}

/// 32 q / 8 kv heads, head dim 128, contexts 4096 and 32768, T = 1, 4, 8: the K/V bytes of
/// the context read once, plus Q read and out written. The harness fills the caches with random
/// bytes: a Q8_0 block's f16 scale may then be inf or NaN (fine for timing, not for values).
fn bench_cases(cache: CacheType) -> Vec<BenchCase> {
    let names: [[&'static str; 3]; 2] = match cache {
        CacheType::Q8_0 => [
            ["attn_q8_0_ctx4k_t1", "attn_q8_0_ctx4k_t4", "attn_q8_0_ctx4k_t8"],
            ["attn_q8_0_ctx32k_t1", "attn_q8_0_ctx32k_t4", "attn_q8_0_ctx32k_t8"],
        ],
        CacheType::F16 => [
            ["attn_f16_ctx4k_t1", "attn_f16_ctx4k_t4", "attn_f16_ctx4k_t8"],
            ["attn_f16_ctx32k_t1", "attn_f16_ctx32k_t4", "attn_f16_ctx32k_t8"],
        ],
    };
    let (kv, g, d) = (8u32, 4u32, 128u32);
    let mut v = vec![];
    for (ci, ctx) in [4096u32, 32_768].into_iter().enumerate() {
        for (ti, t) in [1u32, 4, 8].into_iter().enumerate() {
            let cache_elems = (kv * ctx * cache.row_bytes(d) / cache.elem().bytes()) as usize;
            let qn = (t * kv * g * d) as u64;
            v.push(BenchCase {
                name: names[ci][ti],
                scalars: vec![
                    u32_arg("pos", ctx - t),
                    u32_arg("n_tokens", t),
                    u32_arg("n_kv_heads", kv),
                    u32_arg("group", g),
                    u32_arg("ctx_max", ctx),
                    f32_arg("scale", 1.0 / (d as f32).sqrt()),
                ],
                inputs: vec![
                    ("q", ScalarType::F32, qn as usize),
                    ("k_cache", cache.elem(), cache_elems),
                    ("v_cache", cache.elem(), cache_elems),
                ],
                bytes: 2 * u64::from(kv * ctx * cache.row_bytes(d)) + 2 * qn * 4,
                values: vec![],
            });
        }
    }
    v
}

/// What the pieces of a kernel share.
struct Ctx {
    cache: CacheType,
    d: u32,
    wave: u32,
    /// Dimensions a lane.
    dpl: u32,
    q: Param,
    k_cache: Param,
    v_cache: Param,
    out: Param,
    /// The KV head.
    h: Value,
    group: Value,
    n_q: Value,
    lane: Value,
    ctx_max: Value,
    pos: Value,
    scale: Value,
    kv_len: Value,
    n_chunks: Value,
    /// Residues that own a chunk, `min(SPLITS, n_chunks)`.
    n_res: Value,
    rows_per_head: Value,
    /// The lane's first dimension.
    d0: Value,
}

/// One query row of a pass.
struct Row {
    /// The row exists (`i < T * group`; padding rows of the last pass do not).
    valid: Value,
    /// Last key it sees (`pos + t`).
    limit: Value,
    /// Element of the lane's first value in `q` / `out`.
    at: Value,
    /// The lane's q values.
    q: Vec<Value>,
}

/// The `R` rows one wave runs at once. The softmax scalars `(m, l)` and the weights `(a, p)` of
/// row `k` live in lanes `[k W/R, (k+1) W/R)` (where `tsum<R>` leaves row k's score), so each
/// lane computes one row's exps; the accumulators of every row live in every lane (its
/// dimensions) and take row k's weights by a broadcast from lane `k W/R`. With `R = 1` every
/// lane holds the one row's scalars. The op sequence of a row's scalars is the same in every
/// layout, so the bits are.
struct Pass {
    rows: Vec<Row>,
    /// Lanes a row (`W / R`).
    span: u32,
    /// The last key the lane's own row sees.
    own_limit: Value,
    /// The lane's own row exists.
    own_valid: Value,
    /// The lane's own row index within the head (`i0 + lane / span`).
    own_row: Value,
    /// Keys loaded ahead ([`prefetch`]).
    prefetch: u32,
}

impl Pass {
    /// Row `k`'s copy of a per-row scalar held by its lanes.
    fn take(&self, b: &mut KernelBuilder, v: Value, k: usize) -> Value {
        if self.rows.len() == 1 {
            v
        } else {
            b.broadcast(v, k as u32 * self.span)
        }
    }
    /// Values a state holds in each lane: `m, l`, then `acc[row][dim]`.
    fn width(&self, c: &Ctx) -> usize {
        2 + self.rows.len() * c.dpl as usize
    }
}

/// The identity state `(m, l, acc) = (-inf, 0, 0)`.
fn identity(b: &mut KernelBuilder, width: usize) -> Vec<Value> {
    let mut s = vec![b.f32(f32::NEG_INFINITY)];
    s.extend((1..width).map(|_| b.f32(0.0)));
    s
}

/// Loads `n` f32 (a vector when `n > 1`) at element `at`.
fn load_f32s(b: &mut KernelBuilder, p: Param, at: Value, n: u32) -> Vec<Value> {
    if n == 1 {
        vec![b.load(p, at, Type::F32)]
    } else {
        let x = b.load(p, at, Type::vector(ScalarType::F32, n as u8));
        (0..n as u8).map(|e| b.extract(x, e)).collect()
    }
}

/// Row `i` (clamped to the last row for loads; `valid` says whether it exists): its token is
/// `i / group`, its q head `h * group + i % group`.
fn row_token(b: &mut KernelBuilder, c: &Ctx, i: Value) -> (Value, Value, Value) {
    let valid = b.lt(i, c.rows_per_head);
    let one = b.u32(1);
    let last = b.sub(c.rows_per_head, one);
    let ic = b.min(i, last);
    let t = b.div(ic, c.group);
    (valid, ic, t)
}

fn row(b: &mut KernelBuilder, c: &Ctx, i: Value) -> Row {
    let (valid, ic, t) = row_token(b, c, i);
    let j = b.rem(ic, c.group);
    let hg = b.mul(c.h, c.group);
    let qh = b.add(hg, j);
    let tq = b.mul(t, c.n_q);
    let qrow = b.add(tq, qh);
    let dd = b.u32(c.d);
    let at = b.mul(qrow, dd);
    let at = b.add(at, c.d0);
    let q = load_f32s(b, c.q, at, c.dpl);
    let limit = b.add(c.pos, t);
    Row { valid, limit, at, q }
}

/// The pass of rows `i0 .. i0 + n`.
fn pass(b: &mut KernelBuilder, c: &Ctx, i0: Value, n: u32, prefetch: u32) -> Pass {
    let rows: Vec<Row> = (0..n)
        .map(|k| {
            let kk = b.u32(k);
            let i = b.add(i0, kk);
            row(b, c, i)
        })
        .collect();
    let span = c.wave / n;
    let sp = b.u32(span);
    let own = b.div(c.lane, sp);
    let own_row = b.add(i0, own);
    let (own_valid, _, t) = row_token(b, c, own_row);
    let own_limit = b.add(c.pos, t);
    Pass { rows, span, own_limit, own_valid, own_row, prefetch }
}

/// The lane's `dpl` values of cache row `key` of head `h`, as f32.
fn load_row(b: &mut KernelBuilder, c: &Ctx, p: Param, key: Value) -> Vec<Value> {
    let hr = b.mul(c.h, c.ctx_max);
    let r = b.add(hr, key);
    match c.cache {
        CacheType::Q8_0 => {
            let rb = b.u32(c.cache.row_bytes(c.d));
            let base = b.mul(r, rb);
            let c32 = b.u32(32);
            let bi = b.div(c.d0, c32);
            let o = b.rem(c.d0, c32);
            let c34 = b.u32(34);
            let boff = b.mul(bi, c34);
            let blk = b.add(base, boff);
            let sc = b.load_with(p, blk, ScalarType::U16, IndexUnit::Byte, Some(2));
            let sc = b.bitcast(sc, Type::F16);
            let sc = b.convert(sc, Type::F32);
            let two = b.u32(2);
            let qa = b.add(blk, two);
            let qa = b.add(qa, o);
            let (ty, align) = match c.dpl {
                4 => (ScalarType::U32, 2),
                2 => (ScalarType::U16, 2),
                _ => (ScalarType::U8, 1),
            };
            let w = b.load_with(p, qa, ty, IndexUnit::Byte, Some(align));
            let w = if ty == ScalarType::U32 { w } else { b.convert(w, Type::U32) };
            (0..c.dpl)
                .map(|e| {
                    let sh = b.u32(8 * e);
                    let x = b.shr(w, sh);
                    let x = b.convert(x, Type::scalar(ScalarType::U8));
                    let x = b.bitcast(x, Type::scalar(ScalarType::I8));
                    let x = b.convert(x, Type::F32);
                    b.mul(x, sc)
                })
                .collect()
        }
        CacheType::F16 => {
            let dd = b.u32(c.d);
            let at = b.mul(r, dd);
            let at = b.add(at, c.d0);
            let xs: Vec<Value> = if c.dpl == 1 {
                vec![b.load(p, at, Type::F16)]
            } else {
                let x = b.load(p, at, Type::vector(ScalarType::F16, c.dpl as u8));
                (0..c.dpl as u8).map(|e| b.extract(x, e)).collect()
            };
            xs.into_iter().map(|x| b.convert(x, Type::F32)).collect()
        }
    }
}

/// One key (its K and V values `kd`, `vd`) for every row of the pass: scores (step 1), then
/// the online update (step 2).
fn key_step(
    b: &mut KernelBuilder,
    c: &Ctx,
    ps: &Pass,
    key: Value,
    st: &[Value],
    kd: &[Value],
    vd: &[Value],
) -> Vec<Value> {
    let partials: Vec<Value> = ps
        .rows
        .iter()
        .map(|r| {
            let mut acc = b.mul(r.q[0], kd[0]);
            for (&qe, &ke) in r.q.iter().zip(kd).skip(1) {
                acc = b.fma(qe, ke, acc);
            }
            acc
        })
        .collect();
    // The lane's own row's score.
    let dot = if ps.rows.len() == 1 {
        b.wave_reduce(ReduceOp::Add, partials[0])
    } else {
        b.tsum(ps.rows.len() as u32, &partials)
    };
    let s = b.mul(dot, c.scale);
    let sees = b.le(key, ps.own_limit);
    let (m, l) = (st[0], st[1]);
    let m2 = b.max(m, s);
    let a = exp_sub(b, m, m2);
    let p = exp_sub(b, s, m2);
    let l2 = b.fma(l, a, p);
    let mut next = vec![b.select(sees, m2, m), b.select(sees, l2, l)];
    let dpl = c.dpl as usize;
    for (k, r) in ps.rows.iter().enumerate() {
        let ak = ps.take(b, a, k);
        let pk = ps.take(b, p, k);
        let sees_k = b.le(key, r.limit);
        for (e, &v) in vd.iter().enumerate() {
            let acc = st[2 + k * dpl + e];
            let sa = b.mul(acc, ak);
            let acc2 = b.fma(pk, v, sa);
            next.push(b.select(sees_k, acc2, acc));
        }
    }
    next
}

/// Residue `r`'s states for the rows (step 2).
fn scan(b: &mut KernelBuilder, c: &Ctx, ps: &Pass, r: Value) -> Vec<Value> {
    let width = ps.width(c);
    let init = identity(b, width);
    let splits = b.u32(SPLITS);
    let row_vals = 2 * c.dpl as usize;
    b.for_range(r, c.n_chunks, splits, 1, &init, |b, chunk, st| {
        let cs = b.u32(CHUNK);
        let k0 = b.mul(chunk, cs);
        let k1 = b.add(k0, cs);
        let k1 = b.min(k1, c.kv_len);
        let one = b.u32(1);
        let last = b.sub(c.kv_len, one);
        // K then V of key `min(k, kv_len - 1)`.
        let rows_of = |b: &mut KernelBuilder, k: Value| {
            let k = b.min(k, last);
            let mut v = load_row(b, c, c.k_cache, k);
            v.extend(load_row(b, c, c.v_cache, k));
            v
        };
        let mut carried = st.to_vec();
        let depth = ps.prefetch;
        for j in 0..depth {
            let jj = b.u32(j);
            let k = b.add(k0, jj);
            carried.extend(rows_of(b, k));
        }
        let out = b.for_range(k0, k1, one, 1, &carried, |b, key, s| {
            let (st, ahead) = s.split_at(width);
            if depth == 0 {
                let cur = rows_of(b, key);
                let (kd, vd) = cur.split_at(c.dpl as usize);
                return key_step(b, c, ps, key, st, kd, vd);
            }
            let (kd, vd) = ahead[..row_vals].split_at(c.dpl as usize);
            let p = b.u32(depth);
            let kp = b.add(key, p);
            let next = rows_of(b, kp);
            let mut n = key_step(b, c, ps, key, st, kd, vd);
            n.extend_from_slice(&ahead[row_vals..]);
            n.extend(next);
            n
        });
        out[..width].to_vec()
    })
}

/// Step 3: `f` merged with `x` (states of `ps`'s layout; `ps = None`: one row held by every
/// lane).
fn merge(
    b: &mut KernelBuilder,
    ps: Option<&Pass>,
    dpl: u32,
    f: &[Value],
    x: &[Value],
) -> Vec<Value> {
    let m = b.max(f[0], x[0]);
    let a1 = exp_sub(b, f[0], m);
    let a2 = exp_sub(b, x[0], m);
    let xl = b.mul(x[1], a2);
    let l = b.fma(f[1], a1, xl);
    let mut out = vec![m, l];
    let rows = (f.len() - 2) / dpl as usize;
    for k in 0..rows {
        let (a1k, a2k) = match ps {
            Some(ps) => (ps.take(b, a1, k), ps.take(b, a2, k)),
            None => (a1, a2),
        };
        for e in 0..dpl as usize {
            let i = 2 + k * dpl as usize + e;
            let xa = b.mul(x[i], a2k);
            out.push(b.fma(f[i], a1k, xa));
        }
    }
    out
}

/// `out = acc / l` for row `r` that exists, with `l` its sum.
fn store_row(b: &mut KernelBuilder, c: &Ctx, r: &Row, l: Value, acc: &[Value]) {
    let out = c.out;
    let at = r.at;
    let ys: Vec<Value> = acc.iter().map(|&x| b.div(x, l)).collect();
    b.if_then(r.valid, |b| {
        if ys.len() == 1 {
            b.store(out, at, ys[0]);
        } else {
            let y = b.make_vector(&ys);
            b.store(out, at, y);
        }
    });
}

/// All residues in order, merged as they come (steps 2 and 3 in one workgroup).
fn all_residues(b: &mut KernelBuilder, c: &Ctx, ps: &Pass) {
    let init = identity(b, ps.width(c));
    let zero = b.u32(0);
    let one = b.u32(1);
    let f = b.for_range(zero, c.n_res, one, 1, &init, |b, r, fs| {
        let xs = scan(b, c, ps, r);
        merge(b, Some(ps), c.dpl, fs, &xs)
    });
    let dpl = c.dpl as usize;
    for (k, r) in ps.rows.iter().enumerate() {
        let l = ps.take(b, f[1], k);
        store_row(b, c, r, l, &f[2 + k * dpl..2 + (k + 1) * dpl]);
    }
}

/// Where the residue states go: `partials[((h * rows + i) * SPLITS + r) * (D + 2) ..]` holds
/// `m, l, acc[D]` of row `i` of head `h`, residue `r`.
struct Ws {
    partials: Param,
    /// `h * T * group`.
    hrows: Value,
    /// The pass's first row.
    i0: Value,
}

impl Ws {
    fn slot(&self, b: &mut KernelBuilder, d: u32, i: Value, r: Value) -> Value {
        let splits = b.u32(SPLITS);
        let s = b.add(self.hrows, i);
        let s = b.mul(s, splits);
        let s = b.add(s, r);
        let ww = b.u32(d + 2);
        b.mul(s, ww)
    }
    fn row(&self, b: &mut KernelBuilder, k: usize) -> Value {
        let kk = b.u32(k as u32);
        b.add(self.i0, kk)
    }
}

/// Stores residue `r`'s state of the pass's rows: `(m, l)` from the first lane of each row's
/// span, the accumulators from every lane.
fn store_state(b: &mut KernelBuilder, c: &Ctx, ps: &Pass, w: &Ws, r: Value, st: &[Value]) {
    let (zero, one, two) = (b.u32(0), b.u32(1), b.u32(2));
    let sp = b.u32(ps.span);
    let in_span = b.rem(c.lane, sp);
    let head = b.eq(in_span, zero);
    let keeps = b.and(head, ps.own_valid);
    let partials = w.partials;
    let own = ps.own_row;
    b.if_then(keeps, |b| {
        let base = w.slot(b, c.d, own, r);
        b.store(partials, base, st[0]);
        let b1 = b.add(base, one);
        b.store(partials, b1, st[1]);
    });
    let dpl = c.dpl as usize;
    for (k, rw) in ps.rows.iter().enumerate() {
        let i = w.row(b, k);
        let base = w.slot(b, c.d, i, r);
        b.if_then(rw.valid, |b| {
            let a0 = b.add(base, two);
            let a0 = b.add(a0, c.d0);
            for e in 0..dpl {
                let ee = b.u32(e as u32);
                let at = b.add(a0, ee);
                b.store(partials, at, st[2 + k * dpl + e]);
            }
        });
    }
}

/// Step 3 from the stored states, row by row (every lane holds the row's scalars), zeroing
/// what it reads; then `out`.
fn finish(b: &mut KernelBuilder, c: &Ctx, ps: &Pass, w: &Ws) {
    let (zero, one, two) = (b.u32(0), b.u32(1), b.u32(2));
    let partials = w.partials;
    let n_res = c.n_res;
    let dpl = c.dpl;
    for (k, rw) in ps.rows.iter().enumerate() {
        let i = w.row(b, k);
        b.if_then(rw.valid, |b| {
            // Lane `l` reads the (m, l) of residues `l, l + W, ...` below `n_res` and zeroes them
            // (each slot has one reader-writer, no other lane touches it); the merge takes
            // residue r's by `shuffle_idx` from lane `r % W` of the set `r / W`.
            let last = b.sub(n_res, one);
            let sets = SPLITS.div_ceil(c.wave);
            let held: Vec<(Value, Value)> = (0..sets)
                .map(|j| {
                    let jw = b.u32(j * c.wave);
                    let rj = b.add(c.lane, jw);
                    let owner = b.lt(rj, n_res);
                    let mine = b.min(rj, last);
                    let base = w.slot(b, c.d, i, mine);
                    let b1 = b.add(base, one);
                    let ml = b.if_else(
                        owner,
                        |b| {
                            let m = b.load(partials, base, Type::F32);
                            let l = b.load(partials, b1, Type::F32);
                            let fz = b.f32(0.0);
                            b.store(partials, base, fz);
                            b.store(partials, b1, fz);
                            vec![m, l]
                        },
                        |b| vec![b.f32(f32::NEG_INFINITY), b.f32(0.0)],
                    );
                    (ml[0], ml[1])
                })
                .collect();
            // The accumulators of residue `r`, zeroed once read (a residue past the last is
            // read again, as zeros, and never used): loaded FINISH_PREFETCH residues ahead.
            let acc_of = |b: &mut KernelBuilder, r: Value| {
                let real = b.lt(r, n_res);
                let rc = b.min(r, last);
                let base = w.slot(b, c.d, i, rc);
                let a0 = b.add(base, two);
                let a0 = b.add(a0, c.d0);
                let xs: Vec<Value> = (0..dpl)
                    .map(|e| {
                        let ee = b.u32(e);
                        let at = b.add(a0, ee);
                        b.load(partials, at, Type::F32)
                    })
                    .collect();
                b.if_then(real, |b| {
                    let fz = b.f32(0.0);
                    for e in 0..dpl {
                        let ee = b.u32(e);
                        let at = b.add(a0, ee);
                        b.store(partials, at, fz);
                    }
                });
                xs
            };
            let width = 2 + dpl as usize;
            let mut init = identity(b, width);
            for j in 0..FINISH_PREFETCH {
                let r = b.u32(j);
                init.extend(acc_of(b, r));
            }
            let f = b.for_range(zero, n_res, one, 1, &init, |b, r, s| {
                let (f, ahead) = s.split_at(width);
                let wv = b.u32(c.wave);
                let src = b.rem(r, wv);
                let set = b.div(r, wv);
                let (mut m, mut l) = (b.shuffle_idx(held[0].0, src), b.shuffle_idx(held[0].1, src));
                for (j, &(mj, lj)) in held.iter().enumerate().skip(1) {
                    let jj = b.u32(j as u32);
                    let here = b.eq(set, jj);
                    let mj = b.shuffle_idx(mj, src);
                    let lj = b.shuffle_idx(lj, src);
                    m = b.select(here, mj, m);
                    l = b.select(here, lj, l);
                }
                let mut x = vec![m, l];
                x.extend_from_slice(&ahead[..dpl as usize]);
                let p = b.u32(FINISH_PREFETCH);
                let rp = b.add(r, p);
                let next = acc_of(b, rp);
                let mut n = merge(b, None, dpl, f, &x);
                n.extend_from_slice(&ahead[dpl as usize..]);
                n.extend(next);
                n
            });
            store_row(b, c, rw, f[1], &f[2..width]);
        });
    }
}

/// The last-workgroup handshake of [`crate::common::last_workgroup`] with a count known only at
/// run time (`total`, uniform): lane 0 makes this workgroup's stores visible and counts it; the
/// workgroup that brings the count to `total` runs `finish` after another device fence.
fn last_of(
    b: &mut KernelBuilder,
    lane: Value,
    counters: Param,
    index: Value,
    total: Value,
    finish: impl FnOnce(&mut KernelBuilder),
) {
    let zero = b.u32(0);
    let first = b.eq(lane, zero);
    let old = b.if_else(
        first,
        |b| {
            b.fence(Scope::Device);
            let one = b.u32(1);
            vec![b.atomic(AtomicOp::Add, counters, index, one, Scope::Device)]
        },
        |b| vec![b.u32(0)],
    )[0];
    let old = b.broadcast(old, 0);
    let one = b.u32(1);
    let last = b.sub(total, one);
    let is_last = b.eq(old, last);
    b.if_then(is_last, |b| {
        b.fence(Scope::Device);
        finish(b)
    });
}

/// One attention kernel.
pub fn attention(_t: &Target, wave: u32, cache: CacheType, d: u32, shape: Shape) -> Kernel {
    let suffix = match (shape.all_rows, shape.split) {
        (true, _) => String::new(),
        (false, false) => format!("_r{}", shape.rows),
        (false, true) => format!("_split_r{}", shape.rows),
    };
    let mut b = KernelBuilder::new(format!("attention_decode_{}_d{d}{suffix}", cache.name()), wave);
    b.workgroup_size([wave, 1, 1]);
    b.const_param("head_dim", d as i64);
    b.const_param("rows_per_pass", shape.rows as i64);
    b.const_param("chunk", CHUNK as i64);
    b.const_param("splits", SPLITS as i64);
    let q = b.buffer("q", ScalarType::F32, Access::Read);
    let k_cache = b.buffer("k_cache", cache.elem(), Access::Read);
    let v_cache = b.buffer("v_cache", cache.elem(), Access::Read);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    let pos = b.scalar_param("pos", ScalarType::U32);
    let n_tokens = b.scalar_param("n_tokens", ScalarType::U32);
    let n_kv = b.scalar_param("n_kv_heads", ScalarType::U32);
    let group = b.scalar_param("group", ScalarType::U32);
    let ctx_max = b.scalar_param("ctx_max", ScalarType::U32);
    let scale = b.scalar_param("scale", ScalarType::F32);
    b.scalar_rule(n_tokens, ScalarRule::AtLeast(1));
    b.scalar_rule(n_tokens, ScalarRule::AtMost(8));
    b.scalar_rule(group, ScalarRule::AtLeast(1));
    b.scalar_rule(ctx_max, ScalarRule::AtLeast(1));
    let qlen = ShapeExpr::scaled(&[n_tokens, n_kv, group], d as u64, 1);
    b.set_buffer_len(q, qlen.clone());
    b.set_buffer_len(out, qlen);
    let clen = match cache {
        CacheType::Q8_0 => ShapeExpr::scaled(&[n_kv, ctx_max], cache.row_bytes(d) as u64, 1),
        CacheType::F16 => ShapeExpr::scaled(&[n_kv, ctx_max], d as u64, 1),
    };
    b.set_buffer_len(k_cache, clen.clone());
    b.set_buffer_len(v_cache, clen);
    let gy = if shape.all_rows {
        ShapeExpr::constant(1)
    } else {
        ShapeExpr::scaled(&[n_tokens, group], 1, shape.rows as u64)
    };
    let gz = ShapeExpr::constant(if shape.split { SPLITS as u64 } else { 1 });
    b.grid([ShapeExpr::scaled(&[n_kv], 1, 1), gy, gz]);
    // The residue states (every variant but the baseline), and the split's counters.
    let partials = (!shape.all_rows).then(|| {
        let per_row = SPLITS as u64 * (d as u64 + 2);
        let len = ShapeExpr::scaled(&[n_kv, n_tokens, group], per_row, 1);
        b.workspace("partials", ScalarType::F32, len)
    });
    let counters = shape.split.then(|| {
        let len = ShapeExpr::scaled(&[n_kv, n_tokens, group], 1, 1);
        b.workspace("counters", ScalarType::U32, len)
    });

    let lane = b.lane();
    let h = b.workgroup_id(Dim::X);
    let rg = b.workgroup_id(Dim::Y);
    let (pos_v, t_v, kv_v, g_v, ctx_v, sc_v) =
        (b.arg(pos), b.arg(n_tokens), b.arg(n_kv), b.arg(group), b.arg(ctx_max), b.arg(scale));
    let n_q = b.mul(kv_v, g_v);
    let end = b.add(pos_v, t_v);
    let kv_len = b.min(end, ctx_v);
    let cm1 = b.u32(CHUNK - 1);
    let cs = b.u32(CHUNK);
    let n_chunks = b.add(kv_len, cm1);
    let n_chunks = b.div(n_chunks, cs);
    let splits_c = b.u32(SPLITS);
    let n_res = b.min(n_chunks, splits_c);
    let rows_per_head = b.mul(t_v, g_v);
    let dpl = d / wave;
    let dplv = b.u32(dpl);
    let d0 = b.mul(lane, dplv);
    let c = Ctx {
        cache,
        d,
        wave,
        dpl,
        q,
        k_cache,
        v_cache,
        out,

        h,
        group: g_v,
        n_q,
        lane,
        ctx_max: ctx_v,
        pos: pos_v,
        scale: sc_v,
        kv_len,
        n_chunks,
        n_res,
        rows_per_head,
        d0,
    };
    if shape.all_rows {
        let zero = b.u32(0);
        let one = b.u32(1);
        b.for_range(zero, rows_per_head, one, 1, &[], |b, i, _| {
            let ps = pass(b, &c, i, 1, prefetch(shape));
            all_residues(b, &c, &ps);
            vec![]
        });
        return b.finish();
    }
    let rv = b.u32(shape.rows);
    let i0 = b.mul(rg, rv);
    let ps = pass(&mut b, &c, i0, shape.rows, prefetch(shape));
    let hrows = b.mul(h, rows_per_head);
    let w = Ws { partials: partials.expect("a workspace"), hrows, i0 };
    let Some(counters) = counters else {
        // One workgroup: the residues one after another, each stored, then merged.
        let zero = b.u32(0);
        let one = b.u32(1);
        b.for_range(zero, n_res, one, 1, &[], |b, r, _| {
            let st = scan(b, &c, &ps, r);
            store_state(b, &c, &ps, &w, r, &st);
            vec![]
        });
        b.barrier(BarrierKind::All);
        finish(&mut b, &c, &ps, &w);
        return b.finish();
    };
    // Split: this workgroup's residue, stored; the last of the (head, row group) merges. A
    // residue that owns no chunk (short contexts) has nothing to do.
    let r = b.workgroup_id(Dim::Z);
    let busy = b.lt(r, n_res);
    b.if_then(busy, |b| {
        let st = scan(b, &c, &ps, r);
        store_state(b, &c, &ps, &w, r, &st);
        // Every lane's stores before lane 0's count (the workgroup is one wave).
        b.fence(Scope::Device);
        b.barrier(BarrierKind::All);
        let counter = b.add(hrows, rg);
        last_of(b, lane, counters, counter, n_res, |b| {
            finish(b, &c, &ps, &w);
            reset_counter(b, lane, counters, counter);
        });
    });
    b.finish()
}
