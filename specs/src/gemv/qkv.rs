//! The Q/K/V kernel of the dense GEMVs (`_qkv`, `_qkv_cache` and their `_norm` / `_rms`
//! forms): the plain GEMV's row blocks run on each of the three matrices of one launch.

use super::ahead::{first_blocks, Preloaded};
use super::dense::{
    blocks_of, declare_acts, norm_passes, row_block, shape_of, Epilogue, Gemv, Matrices, Out,
    CACHE_WAVES, Q8_ROWS,
};
use super::format::{Weights, QK};
use super::split_norm::RmsScale;
use super::tile::{first_angle, CacheAt};
use crate::prefetch;
use kiln_ir::target::Family;
use kiln_ir::{
    Access, Dim, Kernel, KernelBuilder, Param, ScalarRule, ScalarType, ShapeExpr, Target, Value,
};

/// The Q/K/V kernel: grid `y` picks the matrix (0: Q, 1: K, 2: V), grid `x` covers `n_q` rows;
/// a workgroup runs [`row_block`] on its matrix for row blocks `x, x + grid_x, ...` (one at
/// most when `n_kv <= n_q`, as in every GQA model; more rows are still computed). With the
/// cache epilogue ([`Epilogue::QkvCache`]) K and V have `n_kv_heads * head_dim` rows and go to
/// the caches, and a workgroup owns 32 rows.
pub(super) fn build(mut b: KernelBuilder, target: &Target, wave: u32, g: Gemv) -> Kernel {
    let cached = g.epi == Epilogue::QkvCache;
    let n_q = b.scalar_param("n_q", ScalarType::U32);
    // The K and V rows: `n_kv`, or `n_kv_heads * head_dim` for the caches.
    let kv_rows: Vec<Param> = if cached {
        let heads = b.scalar_param("n_kv_heads", ScalarType::U32);
        let hd = b.scalar_param("head_dim", ScalarType::U32);
        b.scalar_rule(heads, ScalarRule::AtLeast(1));
        b.scalar_rule(hd, ScalarRule::AtLeast(QK as u64));
        b.scalar_rule(hd, ScalarRule::MultipleOf(QK as u64));
        vec![heads, hd]
    } else {
        let n_kv = b.scalar_param("n_kv", ScalarType::U32);
        b.scalar_rule(n_kv, ScalarRule::AtLeast(1));
        vec![n_kv]
    };
    let k = b.scalar_param("k", ScalarType::U32);
    let t = b.scalar_param("t", ScalarType::U32);
    b.scalar_rule(n_q, ScalarRule::AtLeast(1));
    b.scalar_rule(k, ScalarRule::AtLeast(QK as u64));
    b.scalar_rule(k, ScalarRule::MultipleOf(QK as u64));
    b.scalar_rule(t, ScalarRule::AtLeast(1));
    let named = [("q", vec![n_q]), ("k", kv_rows.clone()), ("v", kv_rows.clone())];
    let weights: Vec<Weights> = named
        .iter()
        .map(|(name, n)| Weights::declare(&mut b, &format!("{name}_w"), g.wt, g.layout, n, k))
        .collect();
    let acts = declare_acts(&mut b, &g, wave, t, k);
    assert!(!(g.rms && g.norm), "a norm prologue or a split norm's scale, not both");
    let rms = g.rms.then(|| RmsScale::declare(&mut b, t, k));
    let cache_at = cached.then(|| {
        let pos = b.scalar_param("pos", ScalarType::U32);
        let ctx_max = b.scalar_param("ctx_max", ScalarType::U32);
        let n_dims = b.scalar_param("n_dims", ScalarType::U32);
        let base = b.scalar_param("base", ScalarType::F32);
        b.scalar_rule(n_dims, ScalarRule::MultipleOf(2));
        CacheAt { pos, head_dim: kv_rows[1], ctx_max, n_dims, base }
    });
    // Each matrix's rows and where its outputs go.
    let mut mats: Vec<(Weights, Vec<Param>, Out)> = weights
        .into_iter()
        .zip(named)
        .map(|(w, (name, n))| {
            let out = match cache_at {
                Some(at) if name != "q" => {
                    // Read-write: an append keeps every other row of the cache.
                    let c = b.buffer(format!("{name}_cache"), ScalarType::U8, Access::ReadWrite);
                    let mut dims = kv_rows.clone();
                    dims.insert(1, at.ctx_max);
                    b.set_buffer_len(c, ShapeExpr::scaled(&dims, 34, QK as u64));
                    let per = g.tokens.unwrap_or(1);
                    let lds = b.lds(format!("{name}_pass"), ScalarType::F32, per * Q8_ROWS);
                    Out::Cache { cache: c, lds, rope: name == "k", at, first: None }
                }
                _ => {
                    let y = b.buffer(format!("{name}_y"), ScalarType::F32, Access::Write);
                    let mut dims = vec![t];
                    dims.extend(&n);
                    b.set_buffer_len(y, ShapeExpr::scaled(&dims, 1, 1));
                    Out::F32(y)
                }
            };
            (w, n, out)
        })
        .collect();
    // With the cache, 32 rows a workgroup: one block of a head a token (16 waves of 2 rows, or
    // the variant's waves of as many rows; 8 of 4 spill on gfx1151 with the norm prologue).
    let (waves, rows) = shape_of(&g, cached.then_some(CACHE_WAVES));
    b.workgroup_size([waves * wave, 1, 1]);
    // On NVIDIA a workgroup's lanes share one register file: ptxas, left alone, gives the
    // 512-lane cache variants more registers a lane than 64K / 512 (a workgroup that could not
    // launch), so they are capped to fit.
    if cached && target.family == Family::Nvidia && waves * wave > 256 {
        b.max_registers(target.registers_for_workgroup(waves * wave));
    }
    b.const_param("waves", waves as i64);
    b.const_param("rows_per_wave", rows as i64);
    b.const_param("tokens_per_pass", g.tokens.unwrap_or(1) as i64);
    b.grid([
        ShapeExpr::scaled(&[n_q], 1, (waves * rows) as u64),
        ShapeExpr::constant(3),
        ShapeExpr::constant(1),
    ]);
    let kv = b.arg(k);
    let tv = b.arg(t);
    let which = b.workgroup_id(Dim::Y);
    let x = b.workgroup_id(Dim::X);
    let gx = b.num_workgroups(Dim::X);
    // An early variant's wait comes after its first weight blocks (below).
    let early = g.early.held() && g.norm && g.tokens == Some(1);
    // There K's rotation of the first row block is computed before the wait too, so the cache
    // epilogue after the block loop only applies it (the same ops, so the same bits).
    let ahead = cache_at.filter(|_| early).map(|at| first_angle(&mut b, at, x));
    if let Out::Cache { first, .. } = &mut mats[1].2 {
        *first = ahead;
    }
    let rows_of = |b: &mut KernelBuilder, n: &[Param]| {
        let mut v = b.arg(n[0]);
        for &p in &n[1..] {
            let pv = b.arg(p);
            v = b.mul(v, pv);
        }
        v
    };
    // Every row block of this workgroup's matrix: all passes (`None`), or the pass at `tok0`.
    let matrices = |b: &mut KernelBuilder, pass: Option<Value>, pre: Option<&Preloaded>| {
        for (mi, (w, n, out)) in mats.iter().enumerate() {
            let (w, out) = (*w, *out);
            let miv = b.u32(mi as u32);
            let this = b.eq(which, miv);
            b.if_then(this, |b| {
                let n = rows_of(b, n);
                let per_wg = b.u32(waves * rows);
                let one = b.u32(1);
                let blocks = b.add(n, per_wg);
                let blocks = b.sub(blocks, one);
                let blocks = b.div(blocks, per_wg);
                b.for_range(x, blocks, gx, 1, &[], |b, wg, _| {
                    let m = Matrices { weights: &[w], res: None, out, n, rms };
                    let pass = pass.map(|tok0| (tok0, pre));
                    row_block(b, &g, wave, (waves, rows), &m, acts, (kv, tv), wg, pass, None);
                    vec![]
                });
            });
        }
    };
    // The workgroup's first row block of its matrix, prefetched before the wait: only with the
    // norm prologue (the families SmolLM2's step calls). The plain Q/K/V kernel keeps its wait
    // at entry: on the H200 the Llama-3-8B-shaped `_qkv_cache` node (384 workgroups, above the
    // limit, so prefetching nothing) measured 6.92 us without this code and 7.26-7.27 with it.
    // An early variant ([`Gemv::early`], one token with the norm prologue) loads those first
    // blocks before the wait and holds them there.
    if g.norm {
        let small = prefetch::small_grid(&mut b);
        for (mi, (w, n, _)) in mats.iter().enumerate() {
            let miv = b.u32(mi as u32);
            let this = b.eq(which, miv);
            let this = b.and(this, small);
            b.if_then(this, |b| {
                let n = rows_of(b, n);
                let per_wg = b.u32(waves * rows);
                let row0 = b.mul(x, per_wg);
                let inside = b.lt(row0, n);
                b.if_then(inside, |b| {
                    let left = b.sub(n, row0);
                    let count = b.min(left, per_wg);
                    prefetch::rows(b, &[*w], row0, count, kv, waves * wave);
                });
            });
        }
        if !early {
            b.grid_dependency_wait();
        }
    }
    match acts.1 {
        None => matrices(&mut b, None, None),
        // The passes outside: one prologue a pass for the three matrices and every row block.
        // The weight blocks of the first block-loop trip of the workgroup's first row block are
        // loaded before the first prologue, so their latency overlaps it.
        Some(norm) => {
            let nb = blocks_of(&mut b, kv);
            let pick = |b: &mut KernelBuilder, mi: usize| {
                let (w, n, _) = &mats[mi];
                let n = rows_of(b, n);
                first_blocks(b, *w, n, (waves, rows), x, nb, 0)
            };
            let zero = b.u32(0);
            let is_q = b.eq(which, zero);
            let vals = b.if_else(
                is_q,
                |b| pick(b, 0),
                |b| {
                    let one = b.u32(1);
                    let is_k = b.eq(which, one);
                    b.if_else(is_k, |b| pick(b, 1), |b| pick(b, 2))
                },
            );
            if early {
                let mut vals = vals.clone();
                vals.extend(ahead.iter().flat_map(|f| f.values()));
                prefetch::hold(&mut b, mats[0].0.first_param(), &vals);
                b.grid_dependency_wait();
            }
            let pre = Preloaded { wg: x, vals: vec![vals] };
            norm_passes(&mut b, &norm, &g, (wave, waves), (kv, tv), |b, tok0| {
                matrices(b, Some(tok0), Some(&pre))
            });
        }
    }
    b.finish()
}
