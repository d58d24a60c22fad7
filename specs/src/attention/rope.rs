//! `rope_f32`: rotary position embedding of query rows (f32 in, f32 out), and the per-value
//! rotation that `kv_append` applies to K on its way into the cache (the same ops, so a key
//! rotated there has the bits `rope_f32` would give it).
//!
//! For a row at position `p` and rotated dimension count `n` (`n_dims`, clamped to the head
//! dimension and made even), pair `i` is rotated by `theta_i = p * base^(-2i/n)`, computed as
//! `f32(p) * exp_portable(-(f32(2i) / f32(n)) * ln_portable(base))` (portable exact ops:
//! [`crate::math::exp_portable`], [`super::trig::ln_portable`]), with
//! `(s, c) = sin_cos_portable(theta)`: the first of a pair becomes `fma(x0, c, -(x1 s))`, the
//! second `fma(x0, s, x1 c)`. Dimensions `>= n` are copied. The pairing is a `u32` scalar
//! `neox`: 0 is ggml's "normal" (pairs `2i, 2i+1`), 1 is "neox" (pairs `i, i + n/2`).
//!
//! ABI of `rope_f32` (baseline only):
//!
//! | param      | kind                                  | meaning                       |
//! |------------|---------------------------------------|-------------------------------|
//! | `x`        | f32, read, `n_tokens*n_heads*head_dim`| rows `[T][n_heads][head_dim]` |
//! | `out`      | f32, write, same                      | the rotated rows              |
//! | `pos`      | u32                                   | position of token 0           |
//! | `n_tokens` | u32                                   | tokens `T` (token t at `pos+t`) |
//! | `n_heads`  | u32                                   | heads a token                 |
//! | `head_dim` | u32, even                             | values a head                 |
//! | `n_dims`   | u32, even                             | rotated dimensions            |
//! | `base`     | f32                                   | the rope base (10000, ...)    |
//! | `neox`     | u32                                   | 0 normal, 1 neox pairing      |

use super::trig::{ln_portable, ln_portable_f32, sin_cos_portable, sin_cos_portable_f32};
use crate::bench::{f32_arg, u32_arg, BenchCase};
use crate::cases::{floats, u32s, Case, Rng};
use crate::math::{exp_portable, exp_portable_f32};
use crate::{Bench, KernelSpec, Parity, VariantSpec};
use kiln_ir::package::Admission;
use kiln_ir::{
    Access, Dim, Kernel, KernelBuilder, ScalarRule, ScalarType, ShapeExpr, Target, Type, Value,
};

/// Lanes a workgroup (a lane a value).
pub const BLOCK: u32 = 256;

/// The scalars of a rotation, read once a lane.
#[derive(Clone, Copy)]
pub(crate) struct Rope {
    /// Rotated dimensions, clamped to the head dimension and even (`u32`).
    pub n_dims: Value,
    /// `ln_portable(base)` (`f32`).
    pub ln_base: Value,
    /// The neox pairing (`i1`).
    pub neox: Value,
}

impl Rope {
    /// Reads `n_dims`, `base`, `neox` and derives the lane's constants.
    pub(crate) fn new(
        b: &mut KernelBuilder,
        n_dims: Value,
        head_dim: Value,
        base: Value,
        neox: Value,
    ) -> Rope {
        let nd = b.min(n_dims, head_dim);
        let even = b.u32(!1);
        let n_dims = b.and(nd, even);
        let ln_base = ln_portable(b, base);
        let zero = b.u32(0);
        let neox = b.ne(neox, zero);
        Rope { n_dims, ln_base, neox }
    }

    /// Where dimension `d`'s partner is: `(pair index, d is the first of its pair, partner
    /// dimension, d is rotated)`. Dimensions past `n_dims` name themselves as partner.
    pub(crate) fn pair(&self, b: &mut KernelBuilder, d: Value) -> (Value, Value, Value, Value) {
        let one = b.u32(1);
        let zero = b.u32(0);
        // normal: (2i, 2i+1)
        let i_n = b.shr(d, one);
        let low_bit = b.and(d, one);
        let first_n = b.eq(low_bit, zero);
        let partner_n = b.xor(d, one);
        // neox: (i, i + n/2)
        let half = b.shr(self.n_dims, one);
        let lo = b.lt(d, half);
        let dmh = b.sub(d, half);
        let dph = b.add(d, half);
        let i_x = b.select(lo, d, dmh);
        let partner_x = b.select(lo, dph, dmh);
        let i = b.select(self.neox, i_x, i_n);
        let first = b.select(self.neox, lo, first_n);
        let partner = b.select(self.neox, partner_x, partner_n);
        let rotated = b.lt(d, self.n_dims);
        let partner = b.select(rotated, partner, d);
        (i, first, partner, rotated)
    }

    /// The rotated value of `x` (dimension `d` at position `p`, `partner` its pair's other value).
    pub(crate) fn value(
        &self,
        b: &mut KernelBuilder,
        x: Value,
        partner: Value,
        i: Value,
        first: Value,
        rotated: Value,
        p: Value,
    ) -> Value {
        let sc = self.angle(b, i, p);
        self.rotate(b, (x, partner), sc, first, rotated)
    }

    /// `(sin, cos)` of pair `i`'s angle at position `p`: `sin_cos_portable(f32(p) *
    /// exp_portable(-(f32(2i) / f32(n)) * ln_base))`. It reads no value, so a kernel may compute
    /// it ahead (before its grid-dependency wait).
    pub(crate) fn angle(&self, b: &mut KernelBuilder, i: Value, p: Value) -> (Value, Value) {
        let two = b.u32(2);
        let i2 = b.mul(i, two);
        let i2 = b.convert(i2, Type::F32);
        let nf = b.convert(self.n_dims, Type::F32);
        let ex = b.div(i2, nf);
        let a = b.mul(ex, self.ln_base);
        let na = b.neg(a);
        let inv = exp_portable(b, na);
        let pf = b.convert(p, Type::F32);
        let theta = b.mul(pf, inv);
        sin_cos_portable(b, theta)
    }

    /// `x` rotated by the angle whose `(sin, cos)` is `(s, c)`, `partner` its pair's other
    /// value: `fma(x, c, -(partner s))` for the first of a pair, `fma(partner, s, x c)` for the
    /// second; `x` itself where the dimension is not rotated.
    pub(crate) fn rotate(
        &self,
        b: &mut KernelBuilder,
        (x, partner): (Value, Value),
        (s, c): (Value, Value),
        first: Value,
        rotated: Value,
    ) -> Value {
        let ps = b.mul(partner, s);
        let nps = b.neg(ps);
        let y_first = b.fma(x, c, nps);
        let xc = b.mul(x, c);
        let y_second = b.fma(partner, s, xc);
        let y = b.select(first, y_first, y_second);
        b.select(rotated, y, x)
    }
}

/// The host twin of the rotation of one head's row (`row.len()` = head dim) at position `p`.
pub fn rope_row_f32(row: &[f32], p: u32, n_dims: u32, base: f32, neox: bool) -> Vec<f32> {
    let n = n_dims.min(row.len() as u32) & !1;
    let ln_base = ln_portable_f32(base);
    (0..row.len() as u32)
        .map(|d| {
            let x = row[d as usize];
            if d >= n {
                return x;
            }
            let (i, first, partner) = if neox {
                let half = n / 2;
                if d < half {
                    (d, true, d + half)
                } else {
                    (d - half, false, d - half)
                }
            } else {
                (d / 2, d % 2 == 0, d ^ 1)
            };
            let pv = row[partner as usize];
            let ex = (2 * i) as f32 / n as f32;
            let inv = exp_portable_f32(-(ex * ln_base));
            let theta = p as f32 * inv;
            let (s, c) = sin_cos_portable_f32(theta);
            if first {
                x.mul_add(c, -(pv * s))
            } else {
                pv.mul_add(s, x * c)
            }
        })
        .collect()
}

/// The family `rope_f32` (baseline only).
pub fn spec() -> KernelSpec {
    KernelSpec {
        name: "rope_f32",
        variants: vec![VariantSpec { name: "baseline", build: rope, admit: Admission::default() }],
        parity: Parity::Buffers(parity_cases),
        bench: Bench::Cases(bench_cases),
        archs: None,
        budgets: vec![],
    }
}

/// Both pairings, partial and full rotation, head dims 64 and 128, positions 0 to 32K.
fn parity_cases(rng: &mut Rng, large: bool) -> Vec<Case> {
    let mut shapes = vec![
        (0, 1, 9, 64, 64, 0),
        (7, 3, 9, 64, 64, 1),
        (4099, 8, 2, 128, 128, 0),
        (4099, 2, 3, 128, 64, 1),
        (100, 1, 1, 64, 32, 0),
    ];
    if large {
        shapes.extend([(32_760, 8, 32, 128, 128, 1), (32_760, 8, 32, 128, 128, 0)]);
    }
    shapes
        .into_iter()
        .map(|(pos, t, heads, hd, nd, neox)| {
            let x: Vec<f32> = (0..t * heads * hd).map(|_| rng.normal(1.0)).collect();
            Case {
                name: format!(
                    "pos={pos} T={t} heads={heads} head_dim={hd} n_dims={nd} {}",
                    if neox == 1 { "neox" } else { "normal" }
                ),
                scalars: vec![
                    u32s("pos", pos),
                    u32s("n_tokens", t),
                    u32s("n_heads", heads),
                    u32s("head_dim", hd),
                    u32s("n_dims", nd),
                    ("base".into(), ScalarType::F32, u64::from(10_000f32.to_bits())),
                    u32s("neox", neox),
                ],
                inputs: vec![floats("x", ScalarType::F32, &x)],
            }
        })
        .collect()
}

/// Eight query rows of a 32-head, 128-dim model: read and written once.
fn bench_cases() -> Vec<BenchCase> {
    vec![BenchCase {
        flops: None,
        name: "rope_f32_t8_h32_d128",
        scalars: vec![
            u32_arg("pos", 4096),
            u32_arg("n_tokens", 8),
            u32_arg("n_heads", 32),
            u32_arg("head_dim", 128),
            u32_arg("n_dims", 128),
            f32_arg("base", 10_000.0),
            u32_arg("neox", 1),
        ],
        inputs: vec![("x", ScalarType::F32, 8 * 32 * 128)],
        bytes: 2 * 8 * 32 * 128 * 4,
        values: vec![],
    }]
}

/// The `rope_f32` kernel: a lane a value.
pub fn rope(_t: &Target, wave: u32) -> Kernel {
    let mut b = KernelBuilder::new("rope_f32", wave);
    b.workgroup_size([BLOCK, 1, 1]);
    b.const_param("block", BLOCK as i64);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    let pos = b.scalar_param("pos", ScalarType::U32);
    let n_tokens = b.scalar_param("n_tokens", ScalarType::U32);
    let n_heads = b.scalar_param("n_heads", ScalarType::U32);
    let head_dim = b.scalar_param("head_dim", ScalarType::U32);
    let n_dims = b.scalar_param("n_dims", ScalarType::U32);
    let base = b.scalar_param("base", ScalarType::F32);
    let neox = b.scalar_param("neox", ScalarType::U32);
    b.scalar_rule(head_dim, ScalarRule::MultipleOf(2));
    b.scalar_rule(n_dims, ScalarRule::MultipleOf(2));
    let len = ShapeExpr::scaled(&[n_tokens, n_heads, head_dim], 1, 1);
    b.set_buffer_len(x, len.clone());
    b.set_buffer_len(out, len);
    b.grid([
        ShapeExpr::scaled(&[n_tokens, n_heads, head_dim], 1, BLOCK as u64),
        ShapeExpr::constant(1),
        ShapeExpr::constant(1),
    ]);
    let wg = b.workgroup_id(Dim::X);
    let bl = b.u32(BLOCK);
    let g = b.mul(wg, bl);
    let local = b.local_id();
    let g = b.add(g, local);
    let (t_v, h_v, hd_v) = (b.arg(n_tokens), b.arg(n_heads), b.arg(head_dim));
    let total = b.mul(t_v, h_v);
    let total = b.mul(total, hd_v);
    let live = b.lt(g, total);
    b.if_then(live, |b| {
        let d = b.rem(g, hd_v);
        let row = b.div(g, hd_v);
        let t = b.div(row, h_v);
        let p0 = b.arg(pos);
        let p = b.add(p0, t);
        let (nd, bs, nx) = (b.arg(n_dims), b.arg(base), b.arg(neox));
        let rope = Rope::new(b, nd, hd_v, bs, nx);
        let (i, first, partner, rotated) = rope.pair(b, d);
        let xv = b.load(x, g, Type::F32);
        let row0 = b.mul(row, hd_v);
        let pi = b.add(row0, partner);
        let pv = b.load(x, pi, Type::F32);
        let y = rope.value(b, xv, pv, i, first, rotated, p);
        b.store(out, g, y);
    });
    b.finish()
}
