//! `quantize_q8_0_{f32,f16}` and `quantize_q8_1_{f32,f16}`: activations to ggml's Q8_0 / Q8_1
//! blocks, bit for bit as ggml's CPU reference (`quantize_row_q8_0_ref`, `quantize_row_q8_1_ref`).
//!
//! Block layouts (32 values a block, blocks back to back, no padding):
//! - Q8_0, 34 bytes: `{ f16 d; i8 qs[32]; }`
//! - Q8_1, 36 bytes: `{ f16 d; f16 s; i8 qs[32]; }`
//!
//! Per block: `amax = max |x|`; `d = amax / 127`; `id = d != 0 ? 1 / d : 0`;
//! `qs[j] = roundf(x[j] * id)` (halves away from zero); `d` stored as f16 (round to nearest even,
//! so `amax` above about 8.3e6 stores `d = inf`, as ggml does); Q8_1 adds
//! `s = f16(d * (float) sum(qs))`. f16 input is widened to f32 first (exact).
//!
//! Where ggml's C is undefined or order-dependent, kiln takes x86's reading of it:
//! - a product `x * id` that is not finite (only when `1 / d` overflows, `amax < 3.7e-37`, or for
//!   infinite input) converts as `cvttss2si` does (`INT_MIN`, whose low byte is 0), so `qs = 0`;
//! - NaN inputs: the IR's `max` skips NaN, so `amax` ignores them and their `qs` is 0. (ggml's
//!   `MAX` macro makes its `amax` depend on where the NaN sits in the block.)
//!
//! ABI:
//!
//! | param | kind                         | meaning                              |
//! |-------|------------------------------|--------------------------------------|
//! | `x`   | f32 or f16, read, `n`        | values                               |
//! | `out` | u8, write, `n / 32 * 34` (36) | the blocks                          |
//! | `n`   | u32                          | number of values, a multiple of 32   |
//!
//! Variants: `baseline` gives each lane one block (ggml's loop, per lane); `wave` gives each
//! block 32 / V lanes of V values (one 16-byte load each) and finds `amax` (and Q8_1's sum) with
//! xor shuffles. Both are exact, so they agree bit for bit.

use crate::bench::{u32_arg, BenchCase};
use crate::cases::{activations, floats, u32s, Case, Rng};
use crate::math::silu;
use crate::{Bench, KernelSpec, Parity, VariantSpec};
use kiln_ir::package::Admission;
use kiln_ir::{
    Access, Dim, Kernel, KernelBuilder, Param, ScalarRule, ScalarType, ShapeExpr, Target, Type,
    Value,
};

/// Values a block.
pub const QK: u32 = 32;
/// Lanes a workgroup.
pub const BLOCK: u32 = 256;

/// The block format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `{ f16 d; i8 qs[32]; }`, 34 bytes.
    Q8_0,
    /// `{ f16 d; f16 s; i8 qs[32]; }`, 36 bytes.
    Q8_1,
}

impl Format {
    /// Bytes a block.
    pub fn block_bytes(self) -> u32 {
        match self {
            Format::Q8_0 => 34,
            Format::Q8_1 => 36,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Format::Q8_0 => "q8_0",
            Format::Q8_1 => "q8_1",
        }
    }
}

/// Where the values come from.
#[derive(Clone, Copy)]
pub(crate) enum Source {
    /// An f32 or f16 buffer.
    Buffer(Param, ScalarType),
    /// `silu(gate) * up`, both f32.
    Swiglu(Param, Param),
}

impl Source {
    /// Values one 16-byte load brings.
    pub(crate) fn per_load(self) -> u32 {
        match self {
            Source::Buffer(_, ScalarType::F16) => 8,
            _ => 4,
        }
    }

    /// Loads `count` values (a multiple of [`Source::per_load`]) from element `first` (aligned),
    /// as f32.
    pub(crate) fn load(self, b: &mut KernelBuilder, first: Value, count: u32) -> Vec<Value> {
        let per = self.per_load();
        let mut out = Vec::new();
        for k in 0..count / per {
            let kk = b.u32(k * per);
            let at = b.add(first, kk);
            match self {
                Source::Buffer(p, elem) => {
                    let v = b.load(p, at, Type::vector(elem, per as u8));
                    for e in 0..per as u8 {
                        let x = b.extract(v, e);
                        out.push(if elem == ScalarType::F32 { x } else { b.convert(x, Type::F32) });
                    }
                }
                Source::Swiglu(gate, up) => {
                    let g = b.load(gate, at, Type::vector(ScalarType::F32, 4));
                    let u = b.load(up, at, Type::vector(ScalarType::F32, 4));
                    for e in 0..4u8 {
                        let ge = b.extract(g, e);
                        let ue = b.extract(u, e);
                        let s = silu(b, ge);
                        out.push(b.mul(s, ue));
                    }
                }
            }
        }
        out
    }
}

/// The families `quantize_q8_0_f32`, `quantize_q8_0_f16`, `quantize_q8_1_f32`, `quantize_q8_1_f16`.
pub fn specs() -> Vec<KernelSpec> {
    fn spec(
        name: &'static str,
        baseline: crate::BuildFn,
        wave: crate::BuildFn,
        parity: fn(&mut Rng, bool) -> Vec<Case>,
        bench: Bench,
    ) -> KernelSpec {
        KernelSpec {
            name,
            variants: vec![
                VariantSpec { name: "baseline", build: baseline, admit: Admission::default() },
                VariantSpec { name: "wave", build: wave, admit: Admission::default() },
            ],
            parity: Parity::Buffers(parity),
            bench,
            archs: None,
            budgets: vec![],
        }
    }
    const ONE_BENCH: Bench = Bench::Without(
        "timed as quantize_q8_0_f32: the other formats and inputs move about the same bytes",
    );
    vec![
        spec(
            "quantize_q8_0_f32",
            |t, w| quantize(t, w, Format::Q8_0, ScalarType::F32, false),
            |t, w| quantize(t, w, Format::Q8_0, ScalarType::F32, true),
            |rng, large| parity_cases(rng, large, ScalarType::F32),
            Bench::Cases(bench_cases),
        ),
        spec(
            "quantize_q8_0_f16",
            |t, w| quantize(t, w, Format::Q8_0, ScalarType::F16, false),
            |t, w| quantize(t, w, Format::Q8_0, ScalarType::F16, true),
            |rng, large| parity_cases(rng, large, ScalarType::F16),
            ONE_BENCH,
        ),
        spec(
            "quantize_q8_1_f32",
            |t, w| quantize(t, w, Format::Q8_1, ScalarType::F32, false),
            |t, w| quantize(t, w, Format::Q8_1, ScalarType::F32, true),
            |rng, large| parity_cases(rng, large, ScalarType::F32),
            ONE_BENCH,
        ),
        spec(
            "quantize_q8_1_f16",
            |t, w| quantize(t, w, Format::Q8_1, ScalarType::F16, false),
            |t, w| quantize(t, w, Format::Q8_1, ScalarType::F16, true),
            |rng, large| parity_cases(rng, large, ScalarType::F16),
            ONE_BENCH,
        ),
    ]
}

/// Activations of `x_type` with the Q8 edge blocks ([`activations`]) at lengths that are
/// multiples of [`QK`]; `large` adds model widths.
fn parity_cases(rng: &mut Rng, large: bool, x_type: ScalarType) -> Vec<Case> {
    let mut sizes = vec![32, 64, 32 * 7, 4096];
    if large {
        sizes.extend([32 * 997, 4096 * 8, 14336]);
    }
    sizes
        .into_iter()
        .map(|n| {
            let v = activations(rng, n, true);
            Case {
                name: format!("n={n} (edge blocks)"),
                scalars: vec![u32s("n", n as u32)],
                inputs: vec![floats("x", x_type, &v)],
            }
        })
        .collect()
}

/// One token of a 4096-wide model: the f32 activations read, 128 Q8_0 blocks written.
fn bench_cases() -> Vec<BenchCase> {
    vec![BenchCase {
        flops: None,
        name: "quantize_q8_0_t1_k4096",
        scalars: vec![u32_arg("n", 4096)],
        inputs: vec![("x", ScalarType::F32, 4096)],
        bytes: 4096 * 4 + 128 * 34,
        values: vec![],
    }]
}

/// One quantize kernel: `x`, `out`, `n`.
pub fn quantize(
    _t: &Target,
    wave: u32,
    format: Format,
    input: ScalarType,
    by_wave: bool,
) -> Kernel {
    let dt = if input == ScalarType::F16 { "f16" } else { "f32" };
    let suffix = if by_wave { "_wave" } else { "" };
    let mut b = KernelBuilder::new(format!("quantize_{}_{dt}{suffix}", format.name()), wave);
    let x = b.buffer("x", input, Access::Read);
    let out = b.buffer("out", ScalarType::U8, Access::Write);
    let n = b.scalar_param("n", ScalarType::U32);
    b.set_buffer_len(x, ShapeExpr::scaled(&[n], 1, 1));
    build_body(&mut b, format, Source::Buffer(x, input), Dest::Blocks(out), n, by_wave);
    b.finish()
}

/// Where the blocks go.
#[derive(Clone, Copy)]
pub(crate) enum Dest {
    /// ggml's interleaved blocks, one `u8` buffer.
    Blocks(Param),
    /// Q8_1 split for the GEMV (`crate::gemv`): the quants `q` (`u8`, `n`, 16-byte aligned
    /// blocks of 32) and the scales `s` (`u32` a block: `d | s << 16`, ggml's two halves).
    Split {
        /// The quants.
        q: Param,
        /// The scales.
        s: Param,
    },
}

/// The body shared with the fused SwiGLU kernel: sets the workgroup size, grid, output length,
/// tile constants, and quantizes `n / 32` blocks from `src` into `out`.
pub(crate) fn build_body(
    b: &mut KernelBuilder,
    format: Format,
    src: Source,
    dest: Dest,
    n: Param,
    by_wave: bool,
) {
    // Whole blocks only: a tail of fewer than 32 values would be dropped, so the ABI says so
    // and every device refuses such an `n` before launch.
    b.scalar_rule(n, ScalarRule::MultipleOf(QK as u64));
    let per = src.per_load();
    // Values a lane quantizes, lanes a block.
    let (vals, lanes) = if by_wave { (per, QK / per) } else { (QK, 1) };
    b.workgroup_size([BLOCK, 1, 1]);
    b.const_param("block", BLOCK as i64);
    b.const_param("lanes_per_qblock", lanes as i64);
    b.const_param("values_per_lane", vals as i64);
    match dest {
        Dest::Blocks(out) => {
            b.set_buffer_len(out, ShapeExpr::scaled(&[n], format.block_bytes() as u64, QK as u64))
        }
        Dest::Split { q, s } => {
            assert_eq!(format, Format::Q8_1, "only Q8_1 has a split layout");
            b.set_buffer_len(q, ShapeExpr::scaled(&[n], 1, 1));
            b.set_buffer_len(s, ShapeExpr::scaled(&[n], 1, QK as u64));
        }
    }
    let per_wg = (BLOCK / lanes * QK) as u64;
    b.grid([ShapeExpr::scaled(&[n], 1, per_wg), ShapeExpr::constant(1), ShapeExpr::constant(1)]);

    let n_v = b.arg(n);
    let qk = b.u32(QK);
    let nblocks = b.div(n_v, qk);
    let local = b.local_id();
    let wg = b.workgroup_id(Dim::X);
    let bpw = b.u32(BLOCK / lanes);
    let lanes_v = b.u32(lanes);
    let blk0 = b.mul(wg, bpw);
    let lb = b.div(local, lanes_v);
    let blk = b.add(blk0, lb);
    let j = b.rem(local, lanes_v);
    let zero = b.u32(0);
    let any = b.gt(nblocks, zero);
    // No cross-lane op sits under divergent control flow: lanes past the end work on the last
    // block and skip the stores.
    b.if_then(any, |b| {
        let valid = b.lt(blk, nblocks);
        let one = b.u32(1);
        let last = b.sub(nblocks, one);
        let blk_c = b.min(blk, last);
        let first = b.mul(blk_c, qk);
        let vpl = b.u32(vals);
        let off = b.mul(j, vpl);
        let first = b.add(first, off);
        let xs = src.load(b, first, vals);
        let Quantized { d, d16, bytes, sum } =
            quantize_values(b, &xs, lanes, format == Format::Q8_1);
        let is_head = b.eq(j, zero);
        b.if_then(valid, |b| match (format, dest) {
            (Format::Q8_0, Dest::Blocks(out)) => {
                // In u16 units: d at 17 * blk, qs from 17 * blk + 1.
                let c17 = b.u32(17);
                let base = b.mul(blk, c17);
                b.if_then(is_head, |b| b.store(out, base, d16));
                let half = b.u32(vals / 2);
                let qoff = b.mul(j, half);
                let qbase = b.add(base, qoff);
                let qbase = b.add(qbase, one);
                let eight = b.u32(8);
                for k in 0..vals / 2 {
                    let hi = b.shl(bytes[2 * k as usize + 1], eight);
                    let w = b.or(bytes[2 * k as usize], hi);
                    let w = b.convert(w, Type::scalar(ScalarType::U16));
                    let kk = b.u32(k);
                    let at = b.add(qbase, kk);
                    b.store(out, at, w);
                }
            }
            (Format::Q8_1, _) => {
                // In u32 units: d | s << 16 at 9 * blk, qs from 9 * blk + 1 (interleaved), or
                // d | s << 16 at blk of `s` and qs from 8 * blk of `q` (split).
                let (qbuf, sbuf, qstart, sat) = match dest {
                    Dest::Blocks(out) => {
                        let c9 = b.u32(9);
                        let base = b.mul(blk, c9);
                        let qs = b.add(base, one);
                        (out, out, qs, base)
                    }
                    Dest::Split { q, s } => {
                        let c8 = b.u32(8);
                        let qs = b.mul(blk, c8);
                        (q, s, qs, blk)
                    }
                };
                b.if_then(is_head, |b| {
                    let ds = ds_word(b, d, d16, sum);
                    b.store(sbuf, sat, ds);
                });
                let quarter = b.u32(vals / 4);
                let qoff = b.mul(j, quarter);
                let qbase = b.add(qstart, qoff);
                for k in 0..vals / 4 {
                    let w = pack_word(b, &bytes[4 * k as usize..4 * k as usize + 4]);
                    let kk = b.u32(k);
                    let at = b.add(qbase, kk);
                    b.store(qbuf, at, w);
                }
            }
            (Format::Q8_0, Dest::Split { .. }) => unreachable!("checked above"),
        });
    });
}

/// A block's quantization as seen by one of its `lanes` lanes.
pub(crate) struct Quantized {
    /// `amax / 127`.
    pub d: Value,
    /// `d` as f16 bits (`u16`).
    pub d16: Value,
    /// The lane's quants as ggml stores them (`u32`, 0..=255), one a value.
    pub bytes: Vec<Value>,
    /// The block's sum of quants (`i32`; 0 unless `q8_1`).
    pub sum: Value,
}

/// Quantizes the block whose values `xs` the `lanes` lanes of an aligned group hold (xor
/// shuffles combine the group's `amax` and, with `q8_1`, its sum of quants): ggml's arithmetic,
/// shared by every kernel that writes Q8 blocks. Must run under wave-uniform control with
/// `lanes` a power of two.
pub(crate) fn quantize_values(
    b: &mut KernelBuilder,
    xs: &[Value],
    lanes: u32,
    q8_1: bool,
) -> Quantized {
    // amax over the lane's values, then over the block's lanes.
    let mut amax = b.f32(0.0);
    for &v in xs {
        let a = b.abs(v);
        amax = b.max(amax, a);
    }
    let mut o = lanes / 2;
    while o >= 1 {
        let other = b.shuffle_xor(amax, o);
        amax = b.max(amax, other);
        o /= 2;
    }
    let (d, id) = scale_of(b, amax);
    let mut bytes = Vec::new();
    let mut sum = b.i32(0);
    for &v in xs {
        let (byte, q32) = quant_byte(b, v, id, q8_1);
        if let Some(q32) = q32 {
            sum = b.add(sum, q32);
        }
        bytes.push(byte);
    }
    if q8_1 {
        let mut o = lanes / 2;
        while o >= 1 {
            let other = b.shuffle_xor(sum, o);
            sum = b.add(sum, other);
            o /= 2;
        }
    }
    let d16 = b.convert(d, Type::F16);
    let d16 = b.bitcast(d16, Type::scalar(ScalarType::U16));
    Quantized { d, d16, bytes, sum }
}

/// Four quant bytes (`u32`, 0..=255) as one little-endian word.
pub(crate) fn pack_word(b: &mut KernelBuilder, bytes: &[Value]) -> Value {
    let mut w = bytes[0];
    for e in 1..4u32 {
        let sh = b.u32(8 * e);
        let part = b.shl(bytes[e as usize], sh);
        w = b.or(w, part);
    }
    w
}

/// `(d, id)` of a block from its `amax`: `d = amax / 127`, `id = d != 0 ? 1 / d : 0` (ggml's).
pub(crate) fn scale_of(b: &mut KernelBuilder, amax: Value) -> (Value, Value) {
    let c127 = b.f32(127.0);
    let d = b.div(amax, c127);
    let fzero = b.f32(0.0);
    let fone = b.f32(1.0);
    let nz = b.ne(d, fzero);
    let inv = b.div(fone, d);
    let id = b.select(nz, inv, fzero);
    (d, id)
}

/// One value's quant as the byte ggml stores (`u32`, 0..=255: x86's float -> int conversion of
/// `roundf(x * id)`, then the low byte), and with `signed_value` the quant as `i32` (for Q8_1's sum).
pub(crate) fn quant_byte(
    b: &mut KernelBuilder,
    x: Value,
    id: Value,
    signed_value: bool,
) -> (Value, Option<Value>) {
    let limit = b.f32(2_147_483_648.0);
    let int_min = b.i32(i32::MIN);
    let mask = b.u32(0xff);
    let p = b.mul(x, id);
    let r = b.unary(kiln_ir::UnaryOp::Round, p);
    let ar = b.abs(r);
    let fits = b.lt(ar, limit);
    let qi = b.convert(r, Type::I32);
    let qi = b.select(fits, qi, int_min);
    let q32 = signed_value.then(|| {
        let q8 = b.convert(qi, Type::I8);
        b.convert(q8, Type::I32)
    });
    let qu = b.bitcast(qi, Type::U32);
    (b.and(qu, mask), q32)
}

/// f16 bits (`u32`) with every NaN as `0x7e00`.
fn f16_nan_canonical(b: &mut KernelBuilder, h: Value) -> Value {
    let magnitude = b.u32(0x7fff);
    let m = b.and(h, magnitude);
    let inf = b.u32(0x7c00);
    let nan = b.gt(m, inf);
    let canonical = b.u32(0x7e00);
    b.select(nan, canonical, h)
}

/// Q8_1's scale word: `d` (as f16 bits `d16`) in the low half, `s = f16(f32(sum) * d)` in the high.
/// A NaN half (a block with an infinite or NaN value: `d` infinite or NaN, `s = 0 * inf`) is
/// stored as `0x7e00`: the word is an integer, compared bit for bit, and NaN payloads are not
/// part of the IR's contract (the interpreter and an H200 gave 0x7fff and 0xfe00).
pub(crate) fn ds_word(b: &mut KernelBuilder, d: Value, d16: Value, sum: Value) -> Value {
    let sf = b.convert(sum, Type::F32);
    let s = b.mul(sf, d);
    let s16 = b.convert(s, Type::F16);
    let s16 = b.bitcast(s16, Type::scalar(ScalarType::U16));
    let s32 = b.convert(s16, Type::U32);
    let d32 = b.convert(d16, Type::U32);
    let (s32, d32) = (f16_nan_canonical(b, s32), f16_nan_canonical(b, d32));
    let sixteen = b.u32(16);
    let s32 = b.shl(s32, sixteen);
    b.or(d32, s32)
}
