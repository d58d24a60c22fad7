//! `kv_append_q8_0` and `kv_append_f16`: the step's K and V rows (f32, 1..8 tokens) into the
//! cache at positions `pos..pos+T`, K rotated on the way in (`rope::Rope`, the bits of
//! `rope_f32`), stored as ggml Q8_0 blocks or as f16.
//!
//! Cache layout: `[kv_head][ctx_max][head_dim]`; a Q8_0 row is `head_dim / 32` blocks of 34
//! bytes (`{ f16 d; i8 qs[32]; }`), quantized by the rules of `quantize_q8_0_f32` (ggml's
//! `quantize_row_q8_0_ref`: `d = amax / 127`, `id = d ? 1/d : 0`, `q = roundf(x id)`, a
//! non-finite product converts as x86 does, to 0), so the bytes equal gguf's
//! `quantize(.., Q8_0)` (`bench/attention_ref.py` checks it). f16 rounds to nearest even.
//!
//! Two variants, equal bit for bit:
//! - `baseline` (the reference): one lane a 32-value block (K blocks then V blocks; no
//!   cross-lane op), so a lane runs 32 RoPE evaluations in a row and a call has few busy lanes.
//! - `lanes` (routed first, every arch): one lane an element (K elements then V elements), so
//!   a block is 32 consecutive lanes (a wave-32 wave or half a wave-64 wave) and each lane
//!   rotates only its own value. The block's `amax` is an xor butterfly over offsets 16..1,
//!   which never leaves the aligned 32 lanes; each lane starts from `max(0, |x|)` (the
//!   baseline's first fold step), and the IR's `max` drops a NaN operand, so the butterfly's
//!   result is the baseline's sequential fold's (max of the non-NaN values and 0; `+0` ties
//!   only). Every lane then derives `d` and `id` as the baseline does and stores its own quant
//!   byte; lane 0 of the block stores the f16 scale. The shuffles run with every lane of the
//!   wave active; only the loads' index and the stores depend on liveness.
//!
//! Tokens whose position is past `ctx_max` are not written.
//!
//! ABI (both families, every variant):
//!
//! | param        | kind                                       | meaning                      |
//! |--------------|--------------------------------------------|------------------------------|
//! | `k`, `v`     | f32, read, `n_tokens*n_kv_heads*head_dim`  | rows `[T][n_kv][head_dim]`   |
//! | `k_cache`, `v_cache` | u8 `n_kv*ctx_max*head_dim/32*34` (q8_0) or f16 `n_kv*ctx_max*head_dim`, write | the caches |
//! | `pos`        | u32                                        | position of token 0          |
//! | `n_tokens`   | u32, 1..=8                                 | tokens `T`                   |
//! | `n_kv_heads` | u32                                        | KV heads                     |
//! | `head_dim`   | u32, a multiple of 32                      | values a head                |
//! | `ctx_max`    | u32                                        | the cache's capacity (rows)  |
//! | `n_dims`     | u32, even                                  | rotated dimensions of K      |
//! | `base`       | f32                                        | rope base                    |
//! | `neox`       | u32                                        | 0 normal, 1 neox pairing     |

use super::rope::{rope_row_f32, Rope};
use super::CacheType;
use crate::bench::{f32_arg, u32_arg, BenchCase};
use crate::cases::{floats, u32s, Case, Rng};
use crate::{Bench, KernelSpec, Parity, VariantSpec};
use half::f16;
use kiln_ir::package::Admission;
use kiln_ir::{
    Access, Dim, Kernel, KernelBuilder, Param, ScalarRule, ScalarType, ShapeExpr, Target, Type,
    UnaryOp, Value,
};

/// Lanes a workgroup (a lane a block).
pub const BLOCK: u32 = 64;
/// Lanes a workgroup of `lanes` (a lane an element; `2 * T * n_kv * head_dim` is a multiple of
/// 64, so the grid has no idle lane).
pub const LANES_BLOCK: u32 = 64;
/// Values a block.
pub const QK: u32 = 32;

/// The families `kv_append_q8_0` and `kv_append_f16`.
pub fn specs() -> Vec<KernelSpec> {
    let family = |name, build: crate::BuildFn, lanes: crate::BuildFn, parity, bench| KernelSpec {
        name,
        variants: vec![
            VariantSpec { name: "baseline", build, admit: Admission::default() },
            VariantSpec { name: "lanes", build: lanes, admit: Admission::default() },
        ],
        parity: Parity::Buffers(parity),
        bench,
        archs: None,
        budgets: vec![],
    };
    vec![
        family(
            "kv_append_q8_0",
            |t, w| kv_append(t, w, CacheType::Q8_0),
            |t, w| kv_append_lanes(t, w, CacheType::Q8_0),
            |r, l| parity_cases(r, l, CacheType::Q8_0),
            Bench::Cases(|| bench_cases(CacheType::Q8_0)),
        ),
        family(
            "kv_append_f16",
            |t, w| kv_append(t, w, CacheType::F16),
            |t, w| kv_append_lanes(t, w, CacheType::F16),
            |r, l| parity_cases(r, l, CacheType::F16),
            Bench::Cases(|| bench_cases(CacheType::F16)),
        ),
    ]
}

/// One case's shape: `(pos, T, n_kv, head_dim, ctx_max, n_dims, neox)`.
type Shape = (u32, u32, u32, u32, u32, u32, u32);

fn shapes(large: bool) -> Vec<Shape> {
    let mut v = vec![
        (0, 1, 3, 64, 8, 64, 0),
        (6, 1, 3, 64, 7, 64, 1),
        (4096, 3, 3, 64, 4099, 64, 1),
        (5, 8, 8, 128, 16, 128, 0),
        (4091, 8, 8, 128, 4099, 64, 1),
        // the last rows past ctx_max are not written
        (10, 4, 2, 64, 12, 32, 0),
        // K of 288 values: a wave-64 wave holds K lanes and V lanes
        (2, 1, 3, 96, 4, 64, 1),
    ];
    if large {
        v.extend([(32_760, 8, 8, 128, 32_768, 128, 1), (32_767, 1, 8, 128, 32_768, 128, 0)]);
    }
    v
}

/// Random K and V rows (with a Q8 edge block: zeros, exact halves, huge, tiny) for each shape,
/// and one case with non-finite values (the module doc defines them: a NaN is left out of
/// `amax`, a non-finite product quantizes to 0; an infinite `amax` gives `id = 0`).
fn parity_cases(rng: &mut Rng, large: bool, cache: CacheType) -> Vec<Case> {
    let mut cases: Vec<Case> =
        shapes(large).into_iter().map(|s| parity_case(rng, s, cache, false)).collect();
    cases.push(parity_case(rng, (3, 2, 3, 64, 8, 64, 1), cache, true));
    cases
}

/// One parity case of shape `s`; `non_finite` puts NaN and inf values in K and V (a lone NaN,
/// a lone inf, a -inf, an all-NaN block of V).
fn parity_case(rng: &mut Rng, s: Shape, cache: CacheType, non_finite: bool) -> Case {
    let (pos, t, kv, hd, ctx, nd, neox) = s;
    let n = (t * kv * hd) as usize;
    let mut k = crate::cases::activations(rng, n, true);
    let mut v = crate::cases::activations(rng, n, true);
    if non_finite {
        k[5] = f32::NAN;
        k[40] = f32::INFINITY;
        v[3] = f32::NAN;
        v[7] = f32::INFINITY;
        v[70] = f32::NEG_INFINITY;
        v[128..160].fill(f32::NAN);
    }
    Case {
        name: format!(
            "pos={pos} T={t} kv={kv} head_dim={hd} ctx_max={ctx} n_dims={nd} {}{}",
            if neox == 1 { "neox" } else { "normal" },
            if non_finite { " non-finite" } else { "" }
        ),
        scalars: vec![
            u32s("pos", pos),
            u32s("n_tokens", t),
            u32s("n_kv_heads", kv),
            u32s("head_dim", hd),
            u32s("ctx_max", ctx),
            u32s("n_dims", nd),
            ("base".into(), ScalarType::F32, u64::from(10_000f32.to_bits())),
            u32s("neox", neox),
        ],
        inputs: vec![
            floats("k", ScalarType::F32, &k),
            floats("v", ScalarType::F32, &v),
            cache_bytes(rng, "k_cache", cache, kv, ctx, hd),
            cache_bytes(rng, "v_cache", cache, kv, ctx, hd),
        ],
    }
}

/// A cache's prior contents: random bytes (the kernel must leave every row but the step's as
/// they are, which parity sees).
fn cache_bytes(
    rng: &mut Rng,
    name: &str,
    cache: CacheType,
    kv: u32,
    ctx: u32,
    hd: u32,
) -> (String, ScalarType, Vec<u8>) {
    let elems = (kv * ctx * hd) as usize;
    let bytes = match cache {
        CacheType::Q8_0 => elems / 32 * 34,
        CacheType::F16 => elems * 2,
    };
    (name.to_string(), cache.elem(), (0..bytes).map(|_| rng.next_u64() as u8).collect())
}

/// Eight tokens of an 8-KV-head, 128-dim model: K and V read, both caches' rows written.
fn bench_cases(cache: CacheType) -> Vec<BenchCase> {
    let n = 8 * 8 * 128u64;
    let written = match cache {
        CacheType::Q8_0 => n / 32 * 34,
        CacheType::F16 => n * 2,
    };
    let name = match cache {
        CacheType::Q8_0 => "kv_append_q8_0_t8_kv8_d128",
        CacheType::F16 => "kv_append_f16_t8_kv8_d128",
    };
    vec![BenchCase {
        flops: None,
        name,
        scalars: vec![
            u32_arg("pos", 4096),
            u32_arg("n_tokens", 8),
            u32_arg("n_kv_heads", 8),
            u32_arg("head_dim", 128),
            u32_arg("ctx_max", 4096 + 8),
            u32_arg("n_dims", 128),
            f32_arg("base", 10_000.0),
            u32_arg("neox", 1),
        ],
        inputs: vec![
            ("k", ScalarType::F32, n as usize),
            ("v", ScalarType::F32, n as usize),
            ("k_cache", cache.elem(), cache_elems(cache, 8, 4096 + 8, 128)),
            ("v_cache", cache.elem(), cache_elems(cache, 8, 4096 + 8, 128)),
        ],
        bytes: 2 * (n * 4 + written),
        values: vec![],
    }]
}

/// Elements of a cache of `kv` heads, `ctx` positions, `hd` dims.
fn cache_elems(cache: CacheType, kv: usize, ctx: usize, hd: usize) -> usize {
    match cache {
        CacheType::Q8_0 => kv * ctx * hd / 32 * 34,
        CacheType::F16 => kv * ctx * hd,
    }
}

/// The parameters of a kv_append kernel.
struct P {
    k: Param,
    v: Param,
    k_cache: Param,
    v_cache: Param,
}

/// One kv_append kernel.
pub fn kv_append(_t: &Target, wave: u32, cache: CacheType) -> Kernel {
    let mut b = KernelBuilder::new(format!("kv_append_{}", cache.name()), wave);
    b.workgroup_size([BLOCK, 1, 1]);
    b.const_param("block", BLOCK as i64);
    let k = b.buffer("k", ScalarType::F32, Access::Read);
    let v = b.buffer("v", ScalarType::F32, Access::Read);
    // Read-write: an append changes the step's rows and keeps every other row of the cache.
    let k_cache = b.buffer("k_cache", cache.elem(), Access::ReadWrite);
    let v_cache = b.buffer("v_cache", cache.elem(), Access::ReadWrite);
    let pos = b.scalar_param("pos", ScalarType::U32);
    let n_tokens = b.scalar_param("n_tokens", ScalarType::U32);
    let n_kv = b.scalar_param("n_kv_heads", ScalarType::U32);
    let head_dim = b.scalar_param("head_dim", ScalarType::U32);
    let ctx_max = b.scalar_param("ctx_max", ScalarType::U32);
    let n_dims = b.scalar_param("n_dims", ScalarType::U32);
    let base = b.scalar_param("base", ScalarType::F32);
    let neox = b.scalar_param("neox", ScalarType::U32);
    b.scalar_rule(n_tokens, ScalarRule::AtLeast(1));
    b.scalar_rule(n_tokens, ScalarRule::AtMost(8));
    b.scalar_rule(head_dim, ScalarRule::MultipleOf(QK as u64));
    b.scalar_rule(n_dims, ScalarRule::MultipleOf(2));
    let rows = ShapeExpr::scaled(&[n_tokens, n_kv, head_dim], 1, 1);
    b.set_buffer_len(k, rows.clone());
    b.set_buffer_len(v, rows);
    let cache_len = match cache {
        CacheType::Q8_0 => ShapeExpr::scaled(&[n_kv, ctx_max, head_dim], 34, 32),
        CacheType::F16 => ShapeExpr::scaled(&[n_kv, ctx_max, head_dim], 1, 1),
    };
    b.set_buffer_len(k_cache, cache_len.clone());
    b.set_buffer_len(v_cache, cache_len);
    b.grid([
        ShapeExpr::scaled(&[n_tokens, n_kv, head_dim], 2, (QK * BLOCK) as u64),
        ShapeExpr::constant(1),
        ShapeExpr::constant(1),
    ]);
    let p = P { k, v, k_cache, v_cache };

    let wg = b.workgroup_id(Dim::X);
    let bl = b.u32(BLOCK);
    let g = b.mul(wg, bl);
    let local = b.local_id();
    let g = b.add(g, local);
    let (t_v, kv_v, hd_v) = (b.arg(n_tokens), b.arg(n_kv), b.arg(head_dim));
    let qk = b.u32(QK);
    let nb = b.div(hd_v, qk);
    let per_head = nb;
    let per_token = b.mul(kv_v, per_head);
    let per_tensor = b.mul(t_v, per_token);
    let which = b.div(g, per_tensor);
    let rem = b.rem(g, per_tensor);
    let t = b.div(rem, per_token);
    let r2 = b.rem(rem, per_token);
    let h = b.div(r2, per_head);
    let bi = b.rem(r2, per_head);
    let pos_v = b.arg(pos);
    let p_t = b.add(pos_v, t);
    let ctx_v = b.arg(ctx_max);
    let fits = b.lt(p_t, ctx_v);
    let two = b.u32(2);
    let inside = b.lt(which, two);
    let live = b.and(inside, fits);
    b.if_then(live, |b| {
        // Source element of value 0 of the block: ((t * n_kv + h) * head_dim + 32 bi).
        let th = b.mul(t, kv_v);
        let th = b.add(th, h);
        let row0 = b.mul(th, hd_v);
        let d0 = b.mul(bi, qk);
        let src0 = b.add(row0, d0);
        let zero = b.u32(0);
        let is_k = b.eq(which, zero);
        let vals = b.if_else(
            is_k,
            |b| {
                let xs = load32(b, p.k, src0);
                let (nd, bs, nx) = (b.arg(n_dims), b.arg(base), b.arg(neox));
                let rope = Rope::new(b, nd, hd_v, bs, nx);
                (0..QK)
                    .map(|e| {
                        let ee = b.u32(e);
                        let d = b.add(d0, ee);
                        let (i, first, partner, rotated) = rope.pair(b, d);
                        let pi = b.add(row0, partner);
                        let pv = b.load(p.k, pi, Type::F32);
                        rope.value(b, xs[e as usize], pv, i, first, rotated, p_t)
                    })
                    .collect()
            },
            |b| load32(b, p.v, src0),
        );
        // Destination row: (h * ctx_max + pos + t).
        let hr = b.mul(h, ctx_v);
        let drow = b.add(hr, p_t);
        let store = |b: &mut KernelBuilder, dst: Param| match cache {
            CacheType::Q8_0 => {
                let blk = b.mul(drow, nb);
                let blk = b.add(blk, bi);
                store_q8_0_block(b, dst, blk, &vals);
            }
            CacheType::F16 => {
                let e0 = b.mul(drow, hd_v);
                let e0 = b.add(e0, d0);
                for k8 in 0..QK / 8 {
                    let hs: Vec<Value> =
                        (0..8).map(|e| b.convert(vals[(k8 * 8 + e) as usize], Type::F16)).collect();
                    let vec = b.make_vector(&hs);
                    let o = b.u32(k8 * 8);
                    let at = b.add(e0, o);
                    b.store(dst, at, vec);
                }
            }
        };
        b.if_else(
            is_k,
            |b| {
                store(b, p.k_cache);
                vec![]
            },
            |b| {
                store(b, p.v_cache);
                vec![]
            },
        );
    });
    b.finish()
}

/// The `lanes` variant of a kv_append kernel: one lane an element (see the module doc).
pub fn kv_append_lanes(_t: &Target, wave: u32, cache: CacheType) -> Kernel {
    let mut b = KernelBuilder::new(format!("kv_append_{}_lanes", cache.name()), wave);
    b.workgroup_size([LANES_BLOCK, 1, 1]);
    b.const_param("block", LANES_BLOCK as i64);
    let k = b.buffer("k", ScalarType::F32, Access::Read);
    let v = b.buffer("v", ScalarType::F32, Access::Read);
    // Read-write: an append changes the step's rows and keeps every other row of the cache.
    let k_cache = b.buffer("k_cache", cache.elem(), Access::ReadWrite);
    let v_cache = b.buffer("v_cache", cache.elem(), Access::ReadWrite);
    let pos = b.scalar_param("pos", ScalarType::U32);
    let n_tokens = b.scalar_param("n_tokens", ScalarType::U32);
    let n_kv = b.scalar_param("n_kv_heads", ScalarType::U32);
    let head_dim = b.scalar_param("head_dim", ScalarType::U32);
    let ctx_max = b.scalar_param("ctx_max", ScalarType::U32);
    let n_dims = b.scalar_param("n_dims", ScalarType::U32);
    let base = b.scalar_param("base", ScalarType::F32);
    let neox = b.scalar_param("neox", ScalarType::U32);
    b.scalar_rule(n_tokens, ScalarRule::AtLeast(1));
    b.scalar_rule(n_tokens, ScalarRule::AtMost(8));
    b.scalar_rule(head_dim, ScalarRule::MultipleOf(QK as u64));
    b.scalar_rule(n_dims, ScalarRule::MultipleOf(2));
    let rows = ShapeExpr::scaled(&[n_tokens, n_kv, head_dim], 1, 1);
    b.set_buffer_len(k, rows.clone());
    b.set_buffer_len(v, rows);
    let cache_len = match cache {
        CacheType::Q8_0 => ShapeExpr::scaled(&[n_kv, ctx_max, head_dim], 34, 32),
        CacheType::F16 => ShapeExpr::scaled(&[n_kv, ctx_max, head_dim], 1, 1),
    };
    b.set_buffer_len(k_cache, cache_len.clone());
    b.set_buffer_len(v_cache, cache_len);
    b.grid([
        ShapeExpr::scaled(&[n_tokens, n_kv, head_dim], 2, LANES_BLOCK as u64),
        ShapeExpr::constant(1),
        ShapeExpr::constant(1),
    ]);

    let wg = b.workgroup_id(Dim::X);
    let bl = b.u32(LANES_BLOCK);
    let g = b.mul(wg, bl);
    let local = b.local_id();
    let g = b.add(g, local);
    let (t_v, kv_v, hd_v) = (b.arg(n_tokens), b.arg(n_kv), b.arg(head_dim));
    let per_token = b.mul(kv_v, hd_v);
    let per_tensor = b.mul(t_v, per_token);
    let which = b.div(g, per_tensor);
    // `rem` is the element's index in `k` / `v` (`[T][n_kv][head_dim]`).
    let rem = b.rem(g, per_tensor);
    let t = b.div(rem, per_token);
    let r2 = b.rem(rem, per_token);
    let h = b.div(r2, hd_v);
    let d = b.rem(r2, hd_v);
    let row0 = b.sub(rem, d);
    let pos_v = b.arg(pos);
    let p_t = b.add(pos_v, t);
    let ctx_v = b.arg(ctx_max);
    let fits = b.lt(p_t, ctx_v);
    let two = b.u32(2);
    let inside = b.lt(which, two);
    let live = b.and(inside, fits);
    let zero = b.u32(0);
    let is_k = b.eq(which, zero);
    // A lane past the two tensors (none for a valid shape: the grid is exact) reads element 0.
    let src = b.select(inside, rem, zero);
    // K: rotated as `rope_f32` does (its partner read from `k`); V: as loaded.
    let x = b.if_else(
        is_k,
        |b| {
            let x = b.load(k, src, Type::F32);
            let (nd, bs, nx) = (b.arg(n_dims), b.arg(base), b.arg(neox));
            let rope = Rope::new(b, nd, hd_v, bs, nx);
            let (i, first, partner, rotated) = rope.pair(b, d);
            let pi = b.add(row0, partner);
            let pi = b.select(inside, pi, zero);
            let pv = b.load(k, pi, Type::F32);
            vec![rope.value(b, x, pv, i, first, rotated, p_t)]
        },
        |b| vec![b.load(v, src, Type::F32)],
    )[0];
    // Destination row: (h * ctx_max + pos + t).
    let hr = b.mul(h, ctx_v);
    let drow = b.add(hr, p_t);
    match cache {
        CacheType::Q8_0 => {
            let qk = b.u32(QK);
            let nb = b.div(hd_v, qk);
            let bi = b.div(d, qk);
            let e = b.rem(d, qk);
            let blk = b.mul(drow, nb);
            let blk = b.add(blk, bi);
            let lane_share = q8_0_lane(&mut b, x);
            let store = |b: &mut KernelBuilder, dst: Param| {
                store_q8_0_lane(b, dst, blk, e, lane_share);
            };
            store_k_or_v(&mut b, live, is_k, k_cache, v_cache, store);
        }
        CacheType::F16 => {
            let hx = b.convert(x, Type::F16);
            let store = |b: &mut KernelBuilder, dst: Param| {
                let at = b.mul(drow, hd_v);
                let at = b.add(at, d);
                b.store(dst, at, hx);
            };
            store_k_or_v(&mut b, live, is_k, k_cache, v_cache, store);
        }
    }
    b.finish()
}

/// Stores with `store` into `k_cache` (K lanes) or `v_cache` (V lanes), live lanes only.
fn store_k_or_v(
    b: &mut KernelBuilder,
    live: Value,
    is_k: Value,
    k_cache: Param,
    v_cache: Param,
    store: impl Fn(&mut KernelBuilder, Param),
) {
    b.if_then(live, |b| {
        b.if_else(
            is_k,
            |b| {
                store(b, k_cache);
                vec![]
            },
            |b| {
                store(b, v_cache);
                vec![]
            },
        );
    });
}

/// One lane's share of a Q8_0 block whose 32 values are the 32 aligned lanes' `x`: the block's
/// scale as f16 bits (`u16`) and the lane's quant byte (`u8`), by `store_q8_0_block`'s rules.
/// Every lane of the wave must be active (the amax is a butterfly of shuffles).
pub(crate) fn q8_0_lane(b: &mut KernelBuilder, x: Value) -> (Value, Value) {
    let fzero = b.f32(0.0);
    let a = b.abs(x);
    let mut amax = b.max(fzero, a);
    for off in [16, 8, 4, 2, 1] {
        let o = b.shuffle_xor(amax, off);
        amax = b.max(amax, o);
    }
    let c127 = b.f32(127.0);
    let d = b.div(amax, c127);
    let fone = b.f32(1.0);
    let nz = b.ne(d, fzero);
    let inv = b.div(fone, d);
    let id = b.select(nz, inv, fzero);
    let limit = b.f32(2_147_483_648.0);
    let int_min = b.i32(i32::MIN);
    let p = b.mul(x, id);
    let r = b.unary(UnaryOp::Round, p);
    let ar = b.abs(r);
    let fits = b.lt(ar, limit);
    let qi = b.convert(r, Type::I32);
    let qi = b.select(fits, qi, int_min);
    let qu = b.bitcast(qi, Type::U32);
    let mask = b.u32(0xff);
    let qu = b.and(qu, mask);
    let byte = b.convert(qu, Type::scalar(ScalarType::U8));
    let d16 = b.convert(d, Type::F16);
    let d16 = b.bitcast(d16, Type::scalar(ScalarType::U16));
    (d16, byte)
}

/// Stores value `e` of Q8_0 block `blk` of the u8 buffer `dst` (34 bytes a block): the lane's
/// quant byte, and with `e = 0` the block's f16 scale (a u16 store: a block is 17 u16), from
/// [`q8_0_lane`]'s `(d16, byte)`.
pub(crate) fn store_q8_0_lane(
    b: &mut KernelBuilder,
    dst: Param,
    blk: Value,
    e: Value,
    (d16, byte): (Value, Value),
) {
    let c34 = b.u32(34);
    let at = b.mul(blk, c34);
    let c2 = b.u32(2);
    let at = b.add(at, c2);
    let at = b.add(at, e);
    b.store(dst, at, byte);
    let zero = b.u32(0);
    let lead = b.eq(e, zero);
    b.if_then(lead, |b| {
        let c17 = b.u32(17);
        let at = b.mul(blk, c17);
        b.store(dst, at, d16);
    });
}

/// 32 f32 values from element `at` (a multiple of 32: eight 16-byte loads).
fn load32(b: &mut KernelBuilder, src: Param, at: Value) -> Vec<Value> {
    let mut out = vec![];
    for k in 0..QK / 4 {
        let o = b.u32(4 * k);
        let i = b.add(at, o);
        let x = b.load(src, i, Type::vector(ScalarType::F32, 4));
        out.extend((0..4u8).map(|e| b.extract(x, e)));
    }
    out
}

/// Quantizes 32 values to one Q8_0 block (ggml's rules, as `quantize_q8_0_f32`) and stores it as
/// block `blk` of the u8 buffer `dst` (u16 stores: a block is 17 u16).
pub(crate) fn store_q8_0_block(b: &mut KernelBuilder, dst: Param, blk: Value, xs: &[Value]) {
    let mut amax = b.f32(0.0);
    for &x in xs {
        let a = b.abs(x);
        amax = b.max(amax, a);
    }
    let c127 = b.f32(127.0);
    let d = b.div(amax, c127);
    let fzero = b.f32(0.0);
    let fone = b.f32(1.0);
    let nz = b.ne(d, fzero);
    let inv = b.div(fone, d);
    let id = b.select(nz, inv, fzero);
    let limit = b.f32(2_147_483_648.0);
    let int_min = b.i32(i32::MIN);
    let mask = b.u32(0xff);
    let bytes: Vec<Value> = xs
        .iter()
        .map(|&x| {
            let p = b.mul(x, id);
            let r = b.unary(UnaryOp::Round, p);
            let ar = b.abs(r);
            let fits = b.lt(ar, limit);
            let qi = b.convert(r, Type::I32);
            let qi = b.select(fits, qi, int_min);
            let qu = b.bitcast(qi, Type::U32);
            b.and(qu, mask)
        })
        .collect();
    let d16 = b.convert(d, Type::F16);
    let d16 = b.bitcast(d16, Type::scalar(ScalarType::U16));
    let c17 = b.u32(17);
    let base = b.mul(blk, c17);
    b.store(dst, base, d16);
    let eight = b.u32(8);
    for k in 0..16usize {
        let hi = b.shl(bytes[2 * k + 1], eight);
        let w = b.or(bytes[2 * k], hi);
        let w = b.convert(w, Type::scalar(ScalarType::U16));
        let kk = b.u32(k as u32 + 1);
        let at = b.add(base, kk);
        b.store(dst, at, w);
    }
}

/// The host model of one Q8_0 block (ggml's reference with x86's conversion of a non-finite
/// product).
pub fn quantize_q8_0_block(xs: &[f32]) -> [u8; 34] {
    let amax = xs.iter().fold(0.0f32, |m, &x| crate::math::ir_max(m, x.abs()));
    let d = amax / 127.0;
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    let mut out = [0u8; 34];
    out[..2].copy_from_slice(&f16::from_f32(d).to_le_bytes());
    for (j, &x) in xs.iter().enumerate() {
        let r = (x * id).round();
        let q = if r.abs() < 2_147_483_648.0 { r as i32 } else { i32::MIN };
        out[2 + j] = q as u8;
    }
    out
}

/// The host model of `kv_append`: the cache rows `pos..pos+T` (past `ctx_max` dropped) written
/// into `k_cache` / `v_cache` (`[n_kv][ctx_max][row bytes]`).
#[allow(clippy::too_many_arguments)]
pub fn kv_append_host(
    cache: CacheType,
    k: &[f32],
    v: &[f32],
    (pos, t, kv, hd, ctx): (u32, u32, u32, u32, u32),
    (n_dims, base, neox): (u32, f32, bool),
    k_cache: &mut [u8],
    v_cache: &mut [u8],
) {
    let row_bytes = cache.row_bytes(hd) as usize;
    for ti in 0..t {
        let p = pos + ti;
        if p >= ctx {
            continue;
        }
        for h in 0..kv {
            let src = ((ti * kv + h) * hd) as usize;
            let kr = rope_row_f32(&k[src..src + hd as usize], p, n_dims, base, neox);
            let vr = &v[src..src + hd as usize];
            let dst = ((h * ctx + p) as usize) * row_bytes;
            for (row, out) in [(&kr[..], &mut *k_cache), (vr, &mut *v_cache)] {
                let o = &mut out[dst..dst + row_bytes];
                match cache {
                    CacheType::Q8_0 => {
                        for (blk, xs) in row.chunks(32).enumerate() {
                            o[blk * 34..blk * 34 + 34].copy_from_slice(&quantize_q8_0_block(xs));
                        }
                    }
                    CacheType::F16 => {
                        for (j, &x) in row.iter().enumerate() {
                            o[2 * j..2 * j + 2].copy_from_slice(&f16::from_f32(x).to_le_bytes());
                        }
                    }
                }
            }
        }
    }
}
