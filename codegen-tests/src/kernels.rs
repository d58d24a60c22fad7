//! The kernels the cases name: `kiln_ir::examples` (the example kernels), plus small kernels that
//! exercise one lowering each (the full barrier, single shuffles, every other op). Each takes the
//! wave size.

use kiln_ir::*;

/// A 256-lane workgroup sums 256 floats per workgroup: wave reductions, partial sums through
/// LDS behind `barrier(kind)`, and a final wave reduction by wave 0 (`examples::workgroup_sum`
/// without the row loop, with a choice of barrier).
pub fn workgroup_sum_with(wave: u32, kind: BarrierKind) -> Kernel {
    let name = match kind {
        BarrierKind::Lds => "workgroup_sum_lds",
        BarrierKind::All => "workgroup_sum_all",
    };
    let mut b = KernelBuilder::new(name, wave);
    b.workgroup_size([256, 1, 1]);
    let waves = 256 / wave;
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    let partial = b.lds("partial", ScalarType::F32, waves);
    let wg = b.workgroup_id(Dim::X);
    let lid = b.local_id();
    let c256 = b.u32(256);
    let base = b.mul(wg, c256);
    let i = b.add(base, lid);
    let v = b.load(x, i, Type::F32);
    let s = b.wave_reduce(ReduceOp::Add, v);
    let lane = b.lane();
    let wave_id = b.wave();
    let zero = b.u32(0);
    let first = b.eq(lane, zero);
    b.if_then(first, |b| b.store(partial, wave_id, s));
    b.barrier(kind);
    let w0 = b.eq(wave_id, zero);
    b.if_then(w0, |b| {
        let n = b.u32(waves);
        let in_range = b.lt(lane, n);
        let r =
            b.if_else(in_range, |b| vec![b.load(partial, lane, Type::F32)], |b| vec![b.f32(0.0)]);
        let t = b.wave_reduce(ReduceOp::Add, r[0]);
        let first = b.eq(lane, zero);
        b.if_then(first, |b| b.store(out, wg, t));
    });
    b.finish()
}

/// One `shuffle_xor` by `mask` of a float; every lane stores what it read.
pub fn shuffle_xor(wave: u32, mask: u32) -> Kernel {
    let mut b = KernelBuilder::new(format!("shuffle_xor{mask}"), wave);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    let lane = b.lane();
    let v = b.load(x, lane, Type::F32);
    let s = b.shuffle_xor(v, mask);
    b.store(out, lane, s);
    b.finish()
}

/// Every other op once, so each lowering is compiled on every target: ids, integer and float
/// arithmetic, conversions (bf16 paths included), vector loads, atomics, fences, shuffles,
/// ballot, private arrays.
pub fn op_zoo(wave: u32) -> Kernel {
    let mut b = KernelBuilder::new("op_zoo", wave);
    b.workgroup_size([wave, 2, 1]);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let h = b.buffer("h", ScalarType::F16, Access::ReadWrite);
    let bf = b.buffer("bf", ScalarType::BF16, Access::ReadWrite);
    let out = b.buffer("out", ScalarType::U32, Access::ReadWrite);
    let q = b.buffer("q", ScalarType::I64, Access::ReadWrite);
    let n = b.scalar_param("n", ScalarType::I32);
    let priv_ = b.private("scratch", ScalarType::F32, 4);
    let lane = b.lane();
    let lin = b.local_id();
    let nw = b.num_workgroups(Dim::X);
    let ny = b.num_workgroups(Dim::Y);
    let wid = b.workgroup_id(Dim::Y);
    let y = b.id(IdKind::LocalId(Dim::Y));
    let v4 = b.load(x, lane, Type::vector(ScalarType::F32, 4));
    let a = b.extract(v4, 0);
    let c = b.extract(v4, 3);
    let d = b.div(a, c);
    let s = b.sqrt(d);
    let m = b.min(s, a);
    let m2 = b.max(m, c);
    let f = b.fma(m2, a, c);
    let e = b.unary(UnaryOp::Exp2Approx, f);
    let lg = b.unary(UnaryOp::Log2Approx, e);
    let rs = b.unary(UnaryOp::RsqrtApprox, lg);
    let rc = b.unary(UnaryOp::RcpApprox, rs);
    let r = b.unary(UnaryOp::Round, rc);
    let re = b.unary(UnaryOp::RoundEven, r);
    let i = b.convert(re, Type::I32);
    let narg = b.arg(n);
    let i2 = b.add(i, narg);
    let sh = b.shl(i2, narg);
    let u = b.convert(sh, Type::U32);
    let pc = b.unary(UnaryOp::Popcount, u);
    let tz = b.unary(UnaryOp::Ctz, u);
    let t = b.add(pc, tz);
    let hv = b.load(h, lane, Type::F16);
    let hf = b.fma(hv, hv, hv);
    let hs = b.add(hf, hv);
    b.store(h, lane, hs);
    let bv = b.load(bf, lane, Type::BF16);
    let bff = b.fma(bv, bv, bv);
    let fb = b.convert(f, Type::BF16);
    let bsum = b.add(bff, fb);
    let ib = b.convert(i2, Type::BF16);
    let bsum = b.mul(bsum, ib);
    let dbl = b.convert(f, Type::F64);
    let db = b.convert(dbl, Type::BF16);
    let bsum = b.sub(bsum, db);
    let big = b.load(q, lane, Type::I64);
    let qb = b.convert(big, Type::BF16);
    let bsum = b.add(bsum, qb);
    b.store(bf, lane, bsum);
    let zero = b.u32(0);
    b.store(priv_, zero, f);
    let pv = b.load(priv_, zero, Type::F32);
    let up = b.shuffle(ShuffleMode::Up, pv, 1);
    let down = b.shuffle(ShuffleMode::Down, up, 3);
    let idx = b.shuffle_idx(down, t);
    let bc = b.broadcast(idx, 1);
    let big_s = b.shuffle_xor(big, 1);
    let pos = b.gt(bc, a);
    let mask = b.ballot(pos);
    let mix = b.add(mask, big_s);
    b.store(q, lin, mix);
    let one = b.u32(1);
    let old = b.atomic(AtomicOp::Add, out, zero, one, Scope::Device);
    let old2 = b.atomic(AtomicOp::Max, out, one, old, Scope::Workgroup);
    b.fence(Scope::Device);
    let acc = b.add(old2, nw);
    let acc = b.add(acc, ny);
    let acc = b.add(acc, wid);
    let acc = b.add(acc, y);
    let mx = b.wave_reduce(ReduceOp::Max, acc);
    b.store(out, lin, mx);
    b.finish()
}

/// One packed op (issue 11) on values loaded from `x` (three `u32` a lane: two operands and an
/// accumulator), its result stored to `out`: `variant` names the op (`perm`, `dot_i8`, `dot_u8`,
/// `dot_i8u8`, `fdot2`, `fdot2_approx`, `cvt_f16x2`, `cvt_i8x4`, `nibbles_low`, `nibbles_high`).
pub fn packed(variant: &str, wave: u32) -> Option<Kernel> {
    let mut b = KernelBuilder::new(format!("packed_{variant}"), wave);
    let x = b.buffer("x", ScalarType::U32, Access::Read);
    let out = b.buffer("out", ScalarType::U32, Access::Write);
    let lane = b.lane();
    let three = b.u32(3);
    let i = b.mul(lane, three);
    let [a, c, acc] = [0, 1, 2].map(|n| {
        let k = b.u32(n);
        let j = b.add(i, k);
        b.load(x, j, Type::U32)
    });
    let h2 = Type::vector(ScalarType::F16, 2);
    let r = match variant {
        "perm" => b.perm(a, c, [1, 6, 3, 4]),
        "dot_i8" | "dot_u8" | "dot_i8u8" => {
            let (op, acc) = match variant {
                "dot_i8" => (DotOp::I8, b.bitcast(acc, Type::I32)),
                "dot_u8" => (DotOp::U8, acc),
                _ => (DotOp::I8U8, b.bitcast(acc, Type::I32)),
            };
            let r = b.dot(op, a, c, acc);
            b.bitcast(r, Type::U32)
        }
        "fdot2" | "fdot2_approx" => {
            let op = if variant == "fdot2" { DotOp::F16 } else { DotOp::F16Approx };
            let (ha, hc, f) = (b.bitcast(a, h2), b.bitcast(c, h2), b.bitcast(acc, Type::F32));
            let r = b.dot(op, ha, hc, f);
            b.bitcast(r, Type::U32)
        }
        "cvt_f16x2" => {
            let (fa, fc) = (b.bitcast(a, Type::F32), b.bitcast(c, Type::F32));
            let v = b.make_vector(&[fa, fc]);
            let h = b.packed_convert(PackedConvertOp::F32x2ToF16x2, v);
            b.bitcast(h, Type::U32)
        }
        "cvt_i8x4" => {
            let f = b.packed_convert(PackedConvertOp::I8x4ToF32x4, a);
            let v = b.bitcast(f, Type::vector(ScalarType::U32, 4));
            let four = b.u32(4);
            let j = b.mul(lane, four);
            b.store(out, j, v);
            return Some(b.finish());
        }
        "nibbles_low" => b.packed_convert(PackedConvertOp::NibblesLow, a),
        "nibbles_high" => b.packed_convert(PackedConvertOp::NibblesHigh, a),
        _ => return None,
    };
    b.store(out, lane, r);
    Some(b.finish())
}

/// Lanes in a workgroup of the workgroup-wide examples.
pub const WORKGROUP_LANES: u32 = 256;

/// The example kernels of `kiln_ir::examples` that every arch must compile without scratch or
/// spills: `wave_sum`, `workgroup_sum` and `argmax_row` (256 lanes), `tsum_tokens` (P = T = 8).
pub fn examples(wave: u32) -> Vec<Kernel> {
    vec![
        examples::wave_sum(wave),
        examples::workgroup_sum(wave, WORKGROUP_LANES),
        examples::argmax_row(wave, WORKGROUP_LANES),
        examples::tsum_tokens(wave, 8, 8),
    ]
}

/// Looks a test kernel up by the name a case file uses. `variant` picks the knob:
/// `workgroup_sum` / `all` or `lds` (the small one-row version with that barrier), `tsum_tokens` / `p4`, `shuffle_xor` / `m16`.
pub fn by_name(name: &str, variant: &str, wave: u32) -> Option<Kernel> {
    let knob = |prefix: &str| variant.strip_prefix(prefix).and_then(|n| n.parse::<u32>().ok());
    Some(match name {
        "wave_sum" => examples::wave_sum(wave),
        "workgroup_sum" if variant == "all" => workgroup_sum_with(wave, BarrierKind::All),
        "workgroup_sum" if variant == "lds" => workgroup_sum_with(wave, BarrierKind::Lds),
        "workgroup_sum" => examples::workgroup_sum(wave, WORKGROUP_LANES),
        "argmax_row" => examples::argmax_row(wave, WORKGROUP_LANES),
        "tsum_tokens" => {
            let p = knob("p").unwrap_or(8);
            examples::tsum_tokens(wave, p, p)
        }
        "shuffle_xor" => shuffle_xor(wave, knob("m")?),
        "op_zoo" => op_zoo(wave),
        "mma_tile" => mma_tile(variant)?,
        "packed" => packed(variant, wave)?,
        "q8_0_quants" => q8_0_quants(wave),
        "index64" => index64(wave),
        "handshake" => handshake(wave),
        _ => return None,
    })
}

/// The last-workgroup handshake's arrival as the library writes it
/// (`common::last_of_workgroups`): every lane of a 256-lane workgroup stores its word, a
/// `barrier all`, then lane 0 alone adds one to the counter with a device atomic, which must
/// publish every lane's store (the IR's rule): on NVIDIA by the PTX model's cumulativity, on
/// gfx9 by the barrier's wait for the stores.
pub fn handshake(wave: u32) -> Kernel {
    let mut b = KernelBuilder::new("handshake", wave);
    b.workgroup_size([256, 1, 1]);
    let out = b.buffer("out", ScalarType::U32, Access::Write);
    let count = b.buffer("count", ScalarType::U32, Access::ReadWrite);
    let tid = b.local_id();
    b.store(out, tid, tid);
    b.barrier(BarrierKind::All);
    let zero = b.u32(0);
    let first = b.eq(tid, zero);
    b.if_then(first, |b| {
        let z = b.u32(0);
        let one = b.u32(1);
        let old = b.atomic(AtomicOp::Add, count, z, one, Scope::Device);
        b.store(out, z, old);
    });
    b.finish()
}

/// The 32 quants of Q8_0 block `lane` (34 bytes: an f16 scale, then the quants) read as two
/// `u8x16` at byte `34 * lane + 2` and `+ 18` assuming 2-byte alignment, stored to `out` at
/// `32 * lane` (16-byte aligned): the lowering must split the loads to what 2-byte alignment
/// allows, never assume 16.
pub fn q8_0_quants(wave: u32) -> Kernel {
    let mut b = KernelBuilder::new("q8_0_quants", wave);
    let x = b.buffer("blocks", ScalarType::U8, Access::Read);
    let out = b.buffer("quants", ScalarType::U8, Access::Write);
    let wg = b.workgroup_id(Dim::X);
    let wv = b.u32(wave);
    let base = b.mul(wg, wv);
    let lane = b.lane();
    let l = b.add(base, lane);
    let c34 = b.u32(34);
    let at = b.mul(l, c34);
    let c32 = b.u32(32);
    let dst = b.mul(l, c32);
    let v16 = Type::vector(ScalarType::U8, 16);
    for half in 0..2 {
        let skip = b.u32(2 + 16 * half);
        let src = b.add(at, skip);
        let q = b.load_with(x, src, v16, IndexUnit::Byte, Some(2));
        let o = b.u32(16 * half);
        let d = b.add(dst, o);
        b.store(out, d, q);
    }
    b.finish()
}

/// Read-only `x` read at the 64-bit element index `base + lane` (a `u64` scalar), as an `f32`
/// and an `f32x4`, stored to `out` at the same `u64` index: the parameter keeps `noalias` /
/// `readonly`, so NVPTX still reads `x` with `ld.global.nc`.
pub fn index64(wave: u32) -> Kernel {
    let mut b = KernelBuilder::new("index64", wave);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    let base = b.scalar_param("base", ScalarType::U64);
    let lane = b.lane();
    let l = b.convert(lane, Type::U64);
    let bv = b.arg(base);
    let i = b.add(bv, l);
    let v = b.load(x, i, Type::F32);
    let four = b.u64(4);
    let j = b.mul(i, four);
    let v4 = b.load(x, j, Type::vector(ScalarType::F32, 4));
    let e = b.extract(v4, 3);
    let s = b.add(v, e);
    b.store(out, i, s);
    b.finish()
}

/// The GEMM tile of `kiln_specs::mma` for the matrix shape a variant names (`m16n8k32`,
/// `gfx11_iu8`, `mfma_f16`...), over 2 K steps; f16 shapes multiply f16, int8 shapes `i8 x i8`,
/// with a `_u8` suffix `u8 x i8` (WMMA and PTX only). The wave size is the shape's.
pub fn mma_tile(variant: &str) -> Option<Kernel> {
    use kiln_ir::matrix::{MmaInputs, MmaKind, MmaShape as S};
    let (name, unsigned_a) = match variant.strip_suffix("_u8") {
        Some(n) => (n, true),
        None => (variant, false),
    };
    let shape = match name {
        "gfx11_f16" => S::Gfx11WmmaF16,
        "gfx11_iu8" => S::Gfx11WmmaIu8,
        "gfx12_f16" => S::Gfx12WmmaF16,
        "gfx12_iu8" => S::Gfx12WmmaIu8,
        "mfma_f16" => S::MfmaF16,
        "mfma_i8k16" => S::MfmaI8K16,
        "mfma_i8k32" => S::MfmaI8K32,
        "m16n8k16" => S::NvM16n8k16F16,
        "m16n8k32" => S::NvM16n8k32I8,
        "m16n8k8" => S::NvM16n8k8F16,
        "m8n8k16" => S::NvM8n8k16I8,
        _ => return None,
    };
    let (a, b) = match shape.inputs() {
        MmaInputs::F16 => (ScalarType::F16, ScalarType::F16),
        MmaInputs::Int8 if unsigned_a => (ScalarType::U8, ScalarType::I8),
        MmaInputs::Int8 => (ScalarType::I8, ScalarType::I8),
    };
    Some(kiln_specs::mma::tile(MmaKind::new(shape, a, b).ok()?, 2))
}

/// A variant of a library family (kiln-specs) built for a target at a wave size.
pub fn library(family: &str, variant: &str, t: &Target, wave: u32) -> Option<Kernel> {
    let f = kiln_specs::family(family)?;
    let v = f.variant(variant)?;
    Some((v.build)(t, wave))
}
