//! The verifier's type rules, per op: one test per rule, asserting the whole error line.

use crate::common;
use crate::verify_support;

use cranelift_entity::EntityRef;
use kiln_ir::*;
use verify_support::*;

// ---- types ----

#[test]
fn value_types_are_legal() {
    let mut b = kb("legal");
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let zero = b.u32(0);
    b.load(x, zero, Type::vector(ScalarType::F32, 5));
    b.load(x, zero, Type::vector(ScalarType::F32, 8));
    let a = b.f32(1.0);
    let c = b.make_vector(&[a, a]);
    b.cmp(CmpOp::Lt, c, c);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel legal: inst1 (load): result v1: expected a legal type (a scalar, or 2, 3, 4, 8 or 16 non-i1 lanes within 16 bytes), found f32x5",
            "kernel legal: inst2 (load): result v2: expected a legal type (a scalar, or 2, 3, 4, 8 or 16 non-i1 lanes within 16 bytes), found f32x8",
            "kernel legal: inst5 (cmp lt): result v5: expected a legal type (a scalar, or 2, 3, 4, 8 or 16 non-i1 lanes within 16 bytes), found i1x2",
        ]
    );
}

#[test]
fn result_count_and_types_match_the_op() {
    let mut b = kb("results");
    let a = b.u32(1);
    b.push_inst(Op::Binary { op: BinaryOp::Add, lhs: a, rhs: a }, &[Type::I32]);
    b.push_inst(Op::Barrier(BarrierKind::All), &[Type::U32]);
    b.push_inst(Op::Cmp { op: CmpOp::Eq, lhs: a, rhs: a }, &[Type::U32]);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel results: inst1 (binary add): result v1: expected type u32, found i32",
            "kernel results: inst2 (barrier all): results: expected 0 (nothing), found 1 (u32)",
            "kernel results: inst3 (cmp eq): result v3: expected type i1, found u32",
        ]
    );
}

#[test]
fn constants_are_scalars_that_fit() {
    let mut b = kb("consts");
    b.const_bits(Type::U8, 0x1ff);
    b.const_bits(Type::BOOL, 2);
    b.const_bits(Type::vector(ScalarType::F32, 2), 0);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel consts: inst0 (const): bits: expected a value of at most 8 bits for u8, found 0x1ff",
            "kernel consts: inst1 (const): bits: expected a value of at most 1 bits for i1, found 0x2",
            "kernel consts: inst2 (const): type: expected a scalar, found f32x2",
        ]
    );
}

#[test]
fn arg_and_buffer_addr_name_the_right_parameter() {
    let mut b = kb("params");
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let n = b.scalar_param("n", ScalarType::U32);
    b.arg(x);
    b.buffer_addr(n);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel params: inst0 (arg): parameter: expected a scalar parameter, found arg0 (x), a buffer<f32> (use buffer_addr)",
            "kernel params: inst1 (buffer_addr): parameter: expected a buffer, found arg1 (n), a scalar u32",
        ]
    );
}

#[test]
fn binary_operands_have_one_type() {
    let mut b = kb("argmax_rows");
    let x = b.f32(1.0);
    let y = b.i32(2);
    b.add(x, y);
    only(&b.finish(), "kernel argmax_rows: inst2 (binary add): operand types differ: expected f32 (type of v0), found i32 (v1)");
}

#[test]
fn integer_only_binary_ops() {
    let mut b = kb("ints");
    let f = b.f32(1.0);
    b.rem(f, f);
    b.shl(f, f);
    b.shr(f, f);
    b.xor(f, f);
    b.and(f, f);
    let t = b.bool(true);
    b.or(t, t); // fine: logical or
    b.add(t, t); // not fine: arithmetic on i1
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel ints: inst1 (binary rem): operand v0: expected an integer type, found f32",
            "kernel ints: inst2 (binary shl): operand v0: expected an integer type, found f32",
            "kernel ints: inst3 (binary shr): operand v0: expected an integer type, found f32",
            "kernel ints: inst4 (binary xor): operand v0: expected an integer or i1 type, found f32",
            "kernel ints: inst5 (binary and): operand v0: expected an integer or i1 type, found f32",
            "kernel ints: inst8 (binary add): operand v6: expected an integer or float type, found i1",
        ]
    );
}

#[test]
fn unary_operand_classes() {
    let mut b = kb("unary");
    let i = b.u32(4);
    let d = b.f64(2.0);
    let f = b.f32(2.0);
    b.sqrt(i);
    b.unary(UnaryOp::Exp2Approx, d);
    b.unary(UnaryOp::RsqrtApprox, f); // fine
    b.unary(UnaryOp::Popcount, f);
    b.unary(UnaryOp::IsNan, i);
    b.not(f);
    let t = b.bool(false);
    b.neg(t);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel unary: inst3 (unary sqrt): operand v0: expected a float type, found u32",
            "kernel unary: inst4 (unary exp2_approx): operand v1: expected f32 (approximate ops are f32 only), found f64",
            "kernel unary: inst6 (unary popcount): operand v2: expected an integer type, found f32",
            "kernel unary: inst7 (unary is_nan): operand v0: expected a float type, found u32",
            "kernel unary: inst8 (unary not): operand v2: expected an integer or i1 type, found f32",
            "kernel unary: inst10 (unary neg): operand v9: expected an integer or float type, found i1",
        ]
    );
}

#[test]
fn fma_takes_floats_of_one_type() {
    let mut b = kb("fma");
    let i = b.u32(1);
    let f = b.f32(1.0);
    let h = b.f16(1.0);
    b.fma(i, i, i);
    b.fma(f, f, h);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel fma: inst3 (fma): operand v0: expected a float type, found u32",
            "kernel fma: inst4 (fma): operand types differ: expected f32 (type of v1), found f16 (v2)",
        ]
    );
}

#[test]
fn compares() {
    let mut b = kb("cmp");
    let i = b.u32(1);
    let f = b.f32(1.0);
    let t = b.bool(true);
    b.lt(i, f);
    b.lt(t, t);
    b.eq(t, t); // fine
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel cmp: inst3 (cmp lt): operand types differ: expected u32 (type of v0), found f32 (v1)",
            "kernel cmp: inst4 (cmp lt): operand v2: expected an integer or float type, found i1",
        ]
    );
}

#[test]
fn select_condition_and_arms() {
    let mut b = kb("select");
    let i = b.u32(1);
    let f = b.f32(1.0);
    let t = b.bool(true);
    b.select(i, f, f);
    b.select(t, f, i);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel select: inst3 (select): condition v0: expected i1, found u32",
            "kernel select: inst4 (select): arm types differ: expected f32 (type of v1), found u32 (v0)",
        ]
    );
}

#[test]
fn convert_scalar_to_scalar() {
    let mut b = kb("convert");
    let f = b.f32(1.0);
    let t = b.bool(true);
    let vec = b.make_vector(&[f, f]);
    b.convert(vec, Type::F32);
    b.convert(f, Type::BOOL);
    b.convert(t, Type::F32); // fine: i1 to 0.0 / 1.0
    b.convert(f, Type::vector(ScalarType::F16, 2));
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel convert: inst3 (convert): operand v2: expected a scalar (integer, float or i1), found f32x2",
            "kernel convert: inst4 (convert): target type: expected a scalar integer or float, found i1",
            "kernel convert: inst6 (convert): target type: expected a scalar integer or float, found f16x2",
        ]
    );
}

#[test]
fn bitcast_keeps_the_size() {
    let mut b = kb("bitcast");
    let f = b.f32(1.0);
    b.bitcast(f, Type::U32); // fine
    b.bitcast(f, Type::U64);
    b.bitcast(f, Type::vector(ScalarType::F16, 2)); // fine
    only(
        &b.finish(),
        "kernel bitcast: inst2 (bitcast): size: expected u64 (8 bytes) to have the size of f32 (v0), found 4 bytes",
    );
}

#[test]
fn extract_lane_in_range() {
    let mut b = kb("extract");
    let f = b.f32(1.0);
    let vec = b.make_vector(&[f, f, f, f]);
    b.extract(vec, 3); // fine
    b.extract(vec, 4);
    b.push_inst(Op::Extract { vector: f, lane: 0 }, &[Type::F32]);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel extract: inst3 (extract): lane: expected below 4 (lanes of f32x4), found 4",
            "kernel extract: inst4 (extract): operand v0: expected a vector, found f32",
        ]
    );
}

#[test]
fn make_vector_elements_match() {
    let mut b = kb("make_vector");
    let f = b.f32(1.0);
    let i = b.u32(1);
    let ty = Type::vector(ScalarType::F32, 2);
    b.push_inst(Op::MakeVector { ty, elems: [f, i].into_iter().collect() }, &[ty]);
    b.push_inst(Op::MakeVector { ty, elems: [f].into_iter().collect() }, &[ty]);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel make_vector: inst2 (make_vector): element v1: expected f32, found u32",
            "kernel make_vector: inst3 (make_vector): elements: expected 2 (lanes of f32x2), found 1",
        ]
    );
}

#[test]
fn memory_index_types() {
    let mut b = kb("index");
    let x = b.buffer("x", ScalarType::F32, Access::ReadWrite);
    let u32v = b.u32(0);
    let u16v = b.convert(u32v, ScalarType::U16);
    let fv = b.f32(0.0);
    let i32v = b.i32(0);
    let u64v = b.u64(1 << 33);
    let i64v = b.convert(i32v, Type::I64);
    b.load(x, u16v, Type::F32);
    b.store(x, fv, fv);
    // Fine: 32- and 64-bit indices, signed or not, on every kind of memory access.
    b.load(x, i32v, Type::F32);
    b.load(x, u64v, Type::F32);
    b.store(x, i64v, fv);
    b.atomic(AtomicOp::Add, x, u64v, u32v, Scope::Device);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel index: inst6 (load): index v1: expected u32, i32, u64 or i64, found u16",
            "kernel index: inst7 (store): index v2: expected u32, i32, u64 or i64, found f32",
        ]
    );
}

#[test]
fn stated_alignment_is_a_power_of_two_up_to_the_access_size() {
    let mut b = kb("align");
    let x = b.buffer("x", ScalarType::U8, Access::ReadWrite);
    let zero = b.u32(0);
    let v4 = Type::vector(ScalarType::F32, 4);
    let v3 = Type::vector(ScalarType::F32, 3);
    // Fine: every power of two up to the size, in both units.
    for a in [1, 2, 4, 8, 16] {
        b.load_with(x, zero, v4, IndexUnit::Byte, Some(a));
    }
    let w = b.load_with(x, zero, v3, IndexUnit::Element, Some(8));
    b.store_with(x, zero, w, IndexUnit::Byte, Some(4));
    let h = b.load_with(x, zero, Type::F16, IndexUnit::Byte, Some(2));
    // Refused: not a power of two, zero, past the size (f32x3 is 12 bytes: at most 8).
    b.load_with(x, zero, v4, IndexUnit::Byte, Some(3));
    b.load_with(x, zero, v4, IndexUnit::Element, Some(0));
    b.load_with(x, zero, v4, IndexUnit::Byte, Some(32));
    b.store_with(x, zero, w, IndexUnit::Element, Some(16));
    b.store_with(x, zero, h, IndexUnit::Byte, Some(4));
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel align: inst9 (load): align: expected a power of two from 1 to 16 (the bytes of f32x4), found 3",
            "kernel align: inst10 (load): align: expected a power of two from 1 to 16 (the bytes of f32x4), found 0",
            "kernel align: inst11 (load): align: expected a power of two from 1 to 16 (the bytes of f32x4), found 32",
            "kernel align: inst12 (store): align: expected a power of two from 1 to 12 (the bytes of f32x3), found 16",
            "kernel align: inst13 (store): align: expected a power of two from 1 to 2 (the bytes of f16), found 4",
        ]
    );
}

#[test]
fn memory_references_and_access() {
    let mut b = kb("access");
    let r = b.buffer("weights", ScalarType::F32, Access::Read);
    let w = b.buffer("out", ScalarType::F32, Access::Write);
    let n = b.scalar_param("n", ScalarType::U32);
    let zero = b.u32(0);
    let f = b.f32(0.0);
    b.load(w, zero, Type::F32);
    b.store(r, zero, f);
    b.load(n, zero, Type::F32);
    b.load(MemRef::Global(zero), zero, Type::F32);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel access: inst2 (load): load on arg1 (out): expected a buffer with read access, found write",
            "kernel access: inst3 (store): store on arg0 (weights): expected a buffer with write access, found read",
            "kernel access: inst4 (load): memory: expected a buffer, found arg2 (n), a scalar u32",
            "kernel access: inst5 (load): address v0: expected u64, found u32",
        ]
    );
}

#[test]
fn atomics_on_32_and_64_bit_integers() {
    let mut b = kb("atomics");
    let c = b.buffer("counter", ScalarType::U32, Access::ReadWrite);
    let w = b.buffer("out", ScalarType::U32, Access::Write);
    let p = b.private("scratch", ScalarType::U32, 4);
    let zero = b.u32(0);
    let f = b.f32(1.0);
    let h = b.const_bits(Type::U8, 1);
    b.atomic(AtomicOp::Add, c, zero, zero, Scope::Device); // fine
    b.atomic(AtomicOp::Add, c, zero, f, Scope::Device);
    b.atomic(AtomicOp::Max, c, zero, h, Scope::Workgroup);
    b.atomic(AtomicOp::Or, w, zero, zero, Scope::Device);
    b.atomic(AtomicOp::Exchange, p, zero, zero, Scope::Workgroup);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel atomics: inst4 (atomic add): value v1: expected a scalar 32- or 64-bit integer, found f32",
            "kernel atomics: inst5 (atomic max): value v2: expected a scalar 32- or 64-bit integer, found u8",
            "kernel atomics: inst6 (atomic or): atomic on arg1 (out): expected a buffer with read_write access, found write",
            "kernel atomics: inst7 (atomic exchange): memory: expected global memory or LDS, found private priv0",
        ]
    );
}

#[test]
fn shuffle_offsets_within_the_wave() {
    let mut b = kb("shuffles");
    let f = b.f32(1.0);
    b.shuffle_xor(f, 16); // fine
    b.shuffle_xor(f, 0);
    b.shuffle_xor(f, 32);
    b.shuffle(ShuffleMode::Down, f, 31); // fine
    b.shuffle(ShuffleMode::Up, f, 40);
    let i = b.i32(0);
    b.shuffle_idx(f, i);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel shuffles: inst2 (shuffle xor): offset: expected 1..32 (the wave size is 32), found 0",
            "kernel shuffles: inst3 (shuffle xor): offset: expected 1..32 (the wave size is 32), found 32",
            "kernel shuffles: inst5 (shuffle up): offset: expected 0..32 (the wave size is 32), found 40",
            "kernel shuffles: inst7 (shuffle_idx): lane v6: expected u32, found i32",
        ]
    );
    // The same offsets are fine in a wave of 64.
    let mut b = KernelBuilder::new("shuffles64", 64);
    let f = b.f32(1.0);
    b.shuffle_xor(f, 32);
    b.broadcast(f, 63);
    passes(&b.finish(), Some("gfx942"));
}

#[test]
fn broadcast_lane_and_ballot_condition() {
    let mut b = kb("broadcast");
    let f = b.f32(1.0);
    b.broadcast(f, 32);
    b.ballot(f);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel broadcast: inst1 (broadcast): lane: expected below the wave size 32, found 32",
            "kernel broadcast: inst2 (ballot): condition v0: expected i1, found f32",
        ]
    );
}

#[test]
fn wave_reductions() {
    let mut b = kb("reductions");
    let f = b.f32(1.0);
    let i = b.u32(1);
    let t = b.bool(true);
    let vec = b.make_vector(&[f, f]);
    b.wave_reduce(ReduceOp::Add, t);
    b.wave_reduce(ReduceOp::Max, vec);
    b.wave_argmax(i, i);
    b.wave_argmax(f, f);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel reductions: inst4 (wave_reduce add): value v2: expected a scalar integer or float, found i1",
            "kernel reductions: inst5 (wave_reduce max): value v3: expected a scalar integer or float, found f32x2",
            "kernel reductions: inst6 (wave_argmax): value v1: expected a scalar float, found u32",
            "kernel reductions: inst7 (wave_argmax): index v0: expected u32, found f32",
        ]
    );
}

#[test]
fn tsum_p_is_a_power_of_two_within_the_wave() {
    let mut b = kb("tsum");
    let f = b.f32(1.0);
    let h = b.f16(1.0);
    let i = b.u32(1);
    b.tsum(3, &[f, f, f]);
    b.tsum(64, &[f]);
    b.tsum(2, &[f, f, f]);
    b.tsum(4, &[f, h]);
    b.tsum(1, &[i]);
    b.push_inst(Op::Tsum { p: 0, values: Default::default() }, &[Type::F32]);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel tsum: inst3 (tsum): p: expected a power of two in 1..=32 (the wave size), found 3",
            "kernel tsum: inst4 (tsum): p: expected a power of two in 1..=32 (the wave size), found 64",
            "kernel tsum: inst5 (tsum): values: expected 1..=2 (one per token, p = 2), found 3",
            "kernel tsum: inst6 (tsum): value types differ: expected f32 (type of v0), found f16 (v1)",
            "kernel tsum: inst7 (tsum): value v2: expected a scalar float, found u32",
            "kernel tsum: inst8 (tsum): p: expected a power of two in 1..=32 (the wave size), found 0",
            "kernel tsum: inst8 (tsum): values: expected 1..=0 (one per token, p = 0), found 0",
        ]
    );
    for t in 1..=8 {
        passes(&common::tsum(t), Some("gfx1100"));
    }
}

#[test]
fn if_condition_and_yields() {
    let mut b = kb("ifs");
    let i = b.u32(1);
    b.if_then(i, |_| {});
    let t = b.bool(true);
    b.if_else(t, |b| vec![b.f32(1.0)], |b| vec![b.u32(1)]);
    b.if_else(t, |b| vec![b.f32(1.0)], |_| vec![]);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel ifs: inst3 (if): condition v0: expected i1, found u32",
            "kernel ifs: inst9 (if): else block block4 yields v3 as value 0: expected f32 (the if's result types), found u32",
            "kernel ifs: inst13 (if): else block block6 yields 0 values (nothing): expected 1 (the if's result types: f32)",
        ]
    );
}

#[test]
fn if_blocks_have_no_parameters() {
    let mut k = common::wave_sum();
    let b1 = Block::new(1);
    let p = k.values.push(ValueData { ty: Type::U32, def: ValueDef::Param(b1, 0) });
    k.blocks[b1].params.push(p);
    only(&k, "kernel wave_sum: inst8 (if): then block block1: expected no parameters, found 1");
}

#[test]
fn for_bounds_and_body() {
    let mut b = kb("loops");
    let z = b.u32(0);
    let n = b.u64(10);
    let s = b.i32(1);
    let f = b.f32(0.0);
    b.for_range(z, n, s, 1, &[], |_, _, _| vec![]);
    let fz = b.f32(0.0);
    b.for_range(fz, fz, fz, 0, &[], |_, _, _| vec![]);
    b.for_range(z, z, z, 1, &[f], |_, i, _| vec![i]);
    b.for_range(z, z, z, 1, &[f], |_, _, _| vec![]);
    let neg = b.i32(-2);
    b.for_range(neg, neg, neg, 1, &[], |_, _, _| vec![]);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel loops: inst5 (for): end type differs from start: expected u32 (type of v0), found u64 (v1)",
            "kernel loops: inst5 (for): step type differs from start: expected u32 (type of v0), found i32 (v2)",
            "kernel loops: inst8 (for): start v5: expected u32 or i32, found f32",
            "kernel loops: inst8 (for): unroll: expected at least 1 (1: no unrolling), found 0",
            "kernel loops: inst10 (for): step v0: expected a positive constant, found 0",
            "kernel loops: inst10 (for): body block3 yields v7 as value 0: expected f32 (the carried types), found u32",
            "kernel loops: inst12 (for): step v0: expected a positive constant, found 0",
            "kernel loops: inst12 (for): body block4 yields 0 values (nothing): expected 1 (the carried types: f32)",
            "kernel loops: inst15 (for): step v13: expected a positive constant, found -2",
        ]
    );
}

#[test]
fn for_body_parameters_are_index_and_carried() {
    let mut k = common::carried_loop();
    let body = Block::new(1);
    let p = k.blocks[body].params[2];
    k.values[p].ty = Type::F32;
    let errs = errors_on(&k, None);
    assert!(
        errs.contains(&"kernel sum_count: inst16 (for): body block1 parameters: expected [index, carried...] of types (i32, f32, i32), found (i32, f32, f32)".into()),
        "{errs:#?}"
    );
}

#[test]
fn ld_matrix_forms() {
    let mut b = kb("ld_matrix");
    let halves = b.lds("halves", ScalarType::F16, 256);
    let words = b.lds("words", ScalarType::U32, 64);
    let x = b.buffer("x", ScalarType::F16, Access::Read);
    let zero = b.u32(0);
    b.ld_matrix(halves, zero, 4, true); // fine
    let t = Type::vector(ScalarType::F16, 6);
    b.push_inst(
        Op::LdMatrix { mem: MemRef::Lds(halves), index: zero, matrices: 3, trans: false },
        &[t],
    );
    let t = Type::vector(ScalarType::U32, 2);
    b.push_inst(
        Op::LdMatrix { mem: MemRef::Lds(words), index: zero, matrices: 1, trans: false },
        &[t],
    );
    let t = Type::vector(ScalarType::F16, 2);
    b.push_inst(
        Op::LdMatrix { mem: MemRef::Buffer(x), index: zero, matrices: 1, trans: false },
        &[t],
    );
    let errs = errors_on(&b.finish(), None);
    let errs: Vec<&str> =
        errs.iter().map(|e| e.split_once(": ").map_or(e.as_str(), |p| p.1)).collect();
    assert_eq!(
        errs,
        vec![
            "inst2 (ld_matrix x3): matrices: expected 1, 2 or 4, found 3",
            "inst2 (ld_matrix x3): result v2: expected a legal type (a scalar, or 2, 3, 4, 8 or 16 \
             non-i1 lanes within 16 bytes), found f16x6",
            "inst3 (ld_matrix x1): memory: expected 16-bit elements, found u32",
            "inst4 (ld_matrix x1): memory: expected an LDS slot, found Buffer(arg0)",
        ]
    );
}
