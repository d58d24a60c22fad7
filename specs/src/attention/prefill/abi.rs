//! The prompt-attention families' ABI: the element types of `q` and `out` ([`Io`], which the
//! family's name states), the parameters and their rules ([`declare`]), the loads of Q and the
//! store of `out` in those types, and the rows of a KV head ([`row_of`]).

use super::{CacheType, MMA_K};
use kiln_ir::matrix::{FragmentRole, MmaKind};
use kiln_ir::{Access, KernelBuilder, Param, ScalarRule, ScalarType, ShapeExpr, Type, Value};

/// The element types of `q` and `out`, which the family's name states (`docs/prefill.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Io {
    /// `q`'s type: f16 or bf16.
    pub q: ScalarType,
    /// `out`'s type: f32 or f16.
    pub out: ScalarType,
}

impl Io {
    /// Q f16, out f32 (the families without a suffix).
    pub const F16_F32: Io = Io { q: ScalarType::F16, out: ScalarType::F32 };
    /// Q bf16, out f32 (`_qbf16`).
    pub const BF16_F32: Io = Io { q: ScalarType::BF16, out: ScalarType::F32 };
    /// Q f16, out f16 (`_of16`).
    pub const F16_F16: Io = Io { q: ScalarType::F16, out: ScalarType::F16 };
    /// The combinations built, indexed by the builders' `IO` parameter.
    pub const BUILT: [Io; 3] = [Io::F16_F32, Io::BF16_F32, Io::F16_F16];

    /// What the family's name adds for these types (`""` for Q f16, out f32).
    pub fn suffix(self) -> String {
        let q = if self.q == ScalarType::BF16 { "_qbf16" } else { "" };
        let o = if self.out == ScalarType::F16 { "_of16" } else { "" };
        format!("{q}{o}")
    }

    /// The family's name for `cache` at head dim `d`.
    pub fn family(self, cache: CacheType, d: u32) -> String {
        format!("attention_prefill_{}_d{d}{}", cache.name(), self.suffix())
    }
}

/// The row `i` of the head: `(valid, token, q element of dim 0)`, clamped for loads.
pub(super) fn row_of(
    b: &mut KernelBuilder,
    i: Value,
    rows: Value,
    group: Value,
    h: Value,
    n_q: Value,
    d: u32,
) -> (Value, Value, Value) {
    let valid = b.lt(i, rows);
    let one = b.u32(1);
    let last = b.sub(rows, one);
    let ic = b.min(i, last);
    let t = b.div(ic, group);
    let j = b.rem(ic, group);
    let hg = b.mul(h, group);
    let qh = b.add(hg, j);
    let tq = b.mul(t, n_q);
    let qrow = b.add(tq, qh);
    let dd = b.u32(d);
    let at = b.mul(qrow, dd);
    (valid, t, at)
}

/// The family's parameters (every variant's ABI, in order).
pub(super) struct Abi {
    pub(super) io: Io,
    pub(super) q: Param,
    pub(super) k_cache: Param,
    pub(super) v_cache: Param,
    pub(super) out: Param,
    pub(super) pos: Param,
    pub(super) n_tokens: Param,
    pub(super) n_kv: Param,
    pub(super) group: Param,
    pub(super) ctx_max: Param,
    pub(super) scale: Param,
}

/// The scalar arguments' values, with `n_q = n_kv group` and `rows = n_tokens group` (the
/// rows of a KV head).
pub(super) struct Args {
    pub(super) pos: Value,
    pub(super) group: Value,
    pub(super) ctx_max: Value,
    pub(super) scale: Value,
    pub(super) n_q: Value,
    pub(super) rows: Value,
}

impl Abi {
    pub(super) fn args(&self, b: &mut KernelBuilder) -> Args {
        let (pos, l, kv, group, ctx_max, scale) = (
            b.arg(self.pos),
            b.arg(self.n_tokens),
            b.arg(self.n_kv),
            b.arg(self.group),
            b.arg(self.ctx_max),
            b.arg(self.scale),
        );
        let n_q = b.mul(kv, group);
        let rows = b.mul(l, group);
        Args { pos, group, ctx_max, scale, n_q, rows }
    }

    /// Element `at` of `q` as f16 (a bf16 Q as `f16(f32(q))`).
    pub(super) fn q_half(&self, b: &mut KernelBuilder, at: Value) -> Value {
        match self.io.q {
            ScalarType::BF16 => {
                let x = b.load(self.q, at, Type::BF16);
                let x = b.convert(x, Type::F32);
                b.convert(x, Type::F16)
            }
            _ => b.load(self.q, at, Type::F16),
        }
    }

    /// Elements `at .. at + 8` of `q` as a vector of 8 f16 (one 16-byte load).
    pub(super) fn q_halves8(&self, b: &mut KernelBuilder, at: Value) -> Value {
        match self.io.q {
            ScalarType::BF16 => {
                let x = b.load(self.q, at, Type::vector(ScalarType::BF16, 8));
                let hs: Vec<Value> = (0..8)
                    .map(|e| {
                        let v = b.extract(x, e);
                        let v = b.convert(v, Type::F32);
                        b.convert(v, Type::F16)
                    })
                    .collect();
                b.make_vector(&hs)
            }
            _ => b.load(self.q, at, Type::vector(ScalarType::F16, 8)),
        }
    }

    /// Stores the f32 `y` as element `at` of `out` where `valid` (rounded to the nearest f16
    /// in the `_of16` families).
    pub(super) fn store_out(&self, b: &mut KernelBuilder, valid: Value, at: Value, y: Value) {
        let y = if self.io.out == ScalarType::F16 { b.convert(y, Type::F16) } else { y };
        let out = self.out;
        b.if_then(valid, |b| b.store(out, at, y));
    }
}

/// Declares the ABI (parameters, rules, buffer lengths) and the grid: `[n_kv, ceil(n_tokens
/// group / rows_wg), 1]`, a workgroup `rows_wg` rows of a KV head.
pub(super) fn declare(
    b: &mut KernelBuilder,
    cache: CacheType,
    d: u32,
    io: Io,
    rows_wg: u64,
) -> Abi {
    let q = b.buffer("q", io.q, Access::Read);
    let k_cache = b.buffer("k_cache", cache.elem(), Access::Read);
    let v_cache = b.buffer("v_cache", cache.elem(), Access::Read);
    let out = b.buffer("out", io.out, Access::Write);
    let pos = b.scalar_param("pos", ScalarType::U32);
    let n_tokens = b.scalar_param("n_tokens", ScalarType::U32);
    let n_kv = b.scalar_param("n_kv_heads", ScalarType::U32);
    let group = b.scalar_param("group", ScalarType::U32);
    let ctx_max = b.scalar_param("ctx_max", ScalarType::U32);
    let scale = b.scalar_param("scale", ScalarType::F32);
    b.scalar_rule(n_tokens, ScalarRule::AtLeast(1));
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
    b.grid([
        ShapeExpr::scaled(&[n_kv], 1, 1),
        ShapeExpr::scaled(&[n_tokens, group], 1, rows_wg),
        ShapeExpr::constant(1),
    ]);
    Abi { io, q, k_cache, v_cache, out, pos, n_tokens, n_kv, group, ctx_max, scale }
}

/// The Q fragments (A, `D / 16` dim steps) of the 16 rows from row `i0` of KV head `h`,
/// loaded once into registers (`i0 + row` clamped by [`row_of`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn q_fragments(
    b: &mut KernelBuilder,
    kind: MmaKind,
    abi: &Abi,
    i0: Value,
    (rows, group, h, n_q): (Value, Value, Value, Value),
    d: u32,
) -> Vec<Value> {
    let per_a = kind.shape().elements_per_lane(FragmentRole::A);
    let a_coord: Vec<(Value, Value)> =
        (0..per_a).map(|e| b.fragment_coord(kind, FragmentRole::A, e)).collect();
    (0..d / MMA_K)
        .map(|ds| {
            let els: Vec<Value> = a_coord
                .iter()
                .map(|&(r, cc)| {
                    let i = b.add(i0, r);
                    let doff = b.u32(ds * MMA_K);
                    let dim = b.add(cc, doff);
                    let (_, _, at) = row_of(b, i, rows, group, h, n_q, d);
                    let at = b.add(at, dim);
                    abi.q_half(b, at)
                })
                .collect();
            b.fragment_of(kind, FragmentRole::A, &els)
        })
        .collect()
}
