//! The verifier: one test per invariant, asserting the whole error line (kernel, entity, what was
//! expected and what was found), plus kernels that must pass and a kernel with many errors.

mod common;

use cranelift_entity::EntityRef;
use kiln_ir::verifier::Location;
use kiln_ir::*;

fn errors_on(k: &Kernel, target: Option<&str>) -> Vec<String> {
    let t = target.map(|n| Target::by_name(n).unwrap());
    match verify(k, t) {
        Ok(()) => vec![],
        Err(e) => e.0.iter().map(|e| e.to_string()).collect(),
    }
}

/// `want` is among the errors.
#[track_caller]
fn has_on(k: &Kernel, target: Option<&str>, want: &str) {
    let errs = errors_on(k, target);
    assert!(
        errs.iter().any(|e| e == want),
        "expected the error\n  {want}\nfound:\n  {}\nin:\n{}",
        errs.join("\n  "),
        print::print_with_ids(k)
    );
}

#[track_caller]
fn has(k: &Kernel, want: &str) {
    has_on(k, None, want)
}

/// `want` is the only error.
#[track_caller]
fn only(k: &Kernel, want: &str) {
    let errs = errors_on(k, None);
    assert_eq!(errs, vec![want.to_string()], "in:\n{}", print::print_with_ids(k));
}

#[track_caller]
fn passes(k: &Kernel, target: Option<&str>) {
    let errs = errors_on(k, target);
    assert!(errs.is_empty(), "{}\nin:\n{}", errs.join("\n"), print::print_with_ids(k));
}

fn kb(name: &str) -> KernelBuilder {
    KernelBuilder::new(name, 32)
}

fn v(n: usize) -> Value {
    Value::new(n)
}

// ---- correct kernels ----

#[test]
fn correct_kernels_pass() {
    for k in common::all() {
        passes(&k, None);
        let targets: &[&str] = if k.wave_size == 64 {
            &["gfx906", "gfx942", "gfx1030", "gfx1100"]
        } else {
            &["gfx1030", "gfx1100", "gfx1201", "sm_75", "sm_90"]
        };
        for t in targets {
            passes(&k, Some(t));
        }
    }
}

#[test]
fn error_fields_name_the_kernel_and_entity() {
    let mut b = kb("fields");
    let x = b.f32(1.0);
    let y = b.i32(1);
    b.add(x, y);
    let k = b.finish();
    let err = verify(&k, None).unwrap_err();
    assert_eq!(err.0.len(), 1);
    let e = &err.0[0];
    assert_eq!(e.kernel, "fields");
    assert_eq!(e.location, Location::Inst { inst: Inst::new(2), op: "binary add".into() });
    assert_eq!(e.message, "operand types differ: expected f32 (type of v0), found i32 (v1)");
    assert_eq!(
        err.to_string(),
        "kernel fields: inst2 (binary add): operand types differ: expected f32 (type of v0), found i32 (v1)"
    );
}

#[test]
fn all_errors_are_reported() {
    let mut b = KernelBuilder::new("many", 32);
    b.workgroup_size([48, 1, 1]);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let f = b.f32(2.0);
    let i = b.u32(3);
    b.rem(f, f);
    b.add(f, i);
    b.store(x, i, f);
    b.shuffle_xor(f, 32);
    let k = b.finish();
    let errs = errors_on(&k, None);
    assert_eq!(
        errs,
        vec![
            "kernel many: workgroup size: expected a multiple of the wave size 32 (whole waves), found 48 lanes ([48,1,1])",
            "kernel many: inst2 (binary rem): operand v0: expected an integer type, found f32",
            "kernel many: inst3 (binary add): operand types differ: expected f32 (type of v0), found u32 (v1)",
            "kernel many: inst4 (store): store on arg0 (x): expected a buffer with write access, found read",
            "kernel many: inst5 (shuffle xor): offset: expected 1..32 (the wave size is 32), found 32",
        ]
    );
}

// ---- handles ----

#[test]
fn operand_out_of_range_stops_later_checks() {
    let mut b = KernelBuilder::new("handles", 48); // a bad wave size, not reported: handles come first
    let a = b.u32(1);
    b.push_inst(Op::Binary { op: BinaryOp::Add, lhs: a, rhs: v(99) }, &[Type::U32]);
    only(&b.finish(), "kernel handles: inst1 (binary add): operand v99 is out of range (2 values)");
}

#[test]
fn other_handles_out_of_range() {
    let mut b = kb("handles");
    let zero = b.u32(0);
    b.push_inst(
        Op::Load {
            mem: MemRef::Lds(LdsSlot::new(3)),
            index: zero,
            ty: Type::F32,
            align: None,
            unit: IndexUnit::Element,
        },
        &[Type::F32],
    );
    b.push_inst(Op::Arg(Param::new(5)), &[Type::U32]);
    let mut k = b.finish();
    k.blocks[k.entry].insts.push(Inst::new(40));
    k.grid[1] = ShapeExpr::scaled(&[Param::new(7)], 1, 1);
    let errs = errors_on(&k, None);
    assert_eq!(
        errs,
        vec![
            "kernel handles: grid dimension y refers to arg7, out of range (0 parameters)",
            "kernel handles: inst1 (load): lds3 is out of range (0 LDS slots)",
            "kernel handles: inst2 (arg): arg5 is out of range (0 parameters)",
            "kernel handles: block0: inst40 is out of range (3 instructions)",
        ]
    );
}

#[test]
fn value_definitions_agree_with_results() {
    let mut k = common::wave_sum();
    // v2 (the wave_reduce result) claims to be the lane id.
    k.values[v(2)].def = ValueDef::Result(Inst::new(0), 0);
    let errs = errors_on(&k, None);
    assert_eq!(
        errs,
        vec![
            "kernel wave_sum: v2: defined as result 0 of inst0: expected v2 there, found v0",
            "kernel wave_sum: inst2 (wave_reduce add): result 0 is v2: expected v2 defined as result 0 of inst2, found it defined as result 0 of inst0",
        ]
    );
}

// ---- interface ----

#[test]
fn wave_size_is_32_or_64() {
    let mut k = common::wave_sum();
    k.wave_size = 16;
    k.workgroup_size = [16, 1, 1];
    only(&k, "kernel wave_sum: wave size: expected 32 or 64, found 16");
}

#[test]
fn workgroup_is_whole_waves() {
    let mut k = common::wave_sum();
    k.workgroup_size = [16, 3, 1];
    only(
        &k,
        "kernel wave_sum: workgroup size: expected a multiple of the wave size 32 (whole waves), found 48 lanes ([16,3,1])",
    );
}

#[test]
fn workgroup_at_most_1024_lanes() {
    let mut k = common::wave_sum();
    k.workgroup_size = [64, 32, 1];
    only(&k, "kernel wave_sum: workgroup size: expected at most 1024 lanes, found 2048 lanes ([64,32,1])");
}

#[test]
fn workgroup_dimensions_at_least_1() {
    let mut k = common::wave_sum();
    k.workgroup_size = [32, 0, 1];
    only(
        &k,
        "kernel wave_sum: workgroup size: expected every dimension at least 1, found [32,0,1]",
    );
}

#[test]
fn kernel_name_is_a_symbol() {
    let mut k = common::wave_sum();
    k.name = "wave sum".into();
    only(&k, "kernel wave sum: name: expected a symbol name without spaces, found \"wave sum\"");
}

#[test]
fn parameter_names_unique_and_present() {
    let mut b = kb("names");
    b.buffer("x", ScalarType::F32, Access::Read);
    b.buffer("x", ScalarType::F32, Access::Write);
    b.scalar_param("", ScalarType::U32);
    let k = b.finish();
    assert_eq!(
        errors_on(&k, None),
        vec![
            "kernel names: arg1 (x): name: expected a unique name, found \"x\" already used by arg0",
            "kernel names: arg2 (): name: expected a name, found an empty one",
        ]
    );
}

#[test]
fn workspaces_are_buffers_with_a_length() {
    let mut b = kb("ws");
    let n = b.scalar_param("n", ScalarType::U32);
    let c = b.workspace("counter", ScalarType::U32, ShapeExpr::constant(1));
    let mut k = b.finish();
    k.params[n].workspace = true;
    if let ParamKind::Buffer { len, .. } = &mut k.params[c].kind {
        *len = None;
    }
    assert_eq!(
        errors_on(&k, None),
        vec![
            "kernel ws: arg0 (n): workspace: expected a buffer, found a scalar u32",
            "kernel ws: arg1 (counter): workspace: expected a length (the runtime allocates it), found none",
        ]
    );
}

#[test]
fn shape_expressions_use_integer_scalars() {
    let mut b = kb("shapes");
    let s = b.scalar_param("scale", ScalarType::F32);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    b.grid([ShapeExpr::scaled(&[s], 1, 1), ShapeExpr::scaled(&[x], 1, 1), ShapeExpr::constant(1)]);
    b.set_buffer_len(x, ShapeExpr { factors: vec![], num: 4, den: 0, add: 0 });
    let k = b.finish();
    assert_eq!(
        errors_on(&k, None),
        vec![
            "kernel shapes: grid dimension x: expected integer scalar parameters, found arg0 (scale) of type f32",
            "kernel shapes: grid dimension y: expected integer scalar parameters, found arg1 (x), a buffer",
            "kernel shapes: arg1 (x): length: expected a divisor of at least 1, found 0",
        ]
    );
}

#[test]
fn lds_and_private_arrays_are_not_empty() {
    let mut b = kb("empty");
    b.lds("tile", ScalarType::F32, 0);
    b.private("acc", ScalarType::F32, 0);
    assert_eq!(
        errors_on(&b.finish(), None),
        vec![
            "kernel empty: lds0 (tile): length: expected at least 1 element, found 0",
            "kernel empty: priv0 (acc): length: expected at least 1 element, found 0",
        ]
    );
}

// ---- layout ----

#[test]
fn block_nested_under_two_ops() {
    let mut k = common::wave_sum();
    let if_inst = *k.blocks[k.entry].insts.last().unwrap();
    let Op::If { cond, then_block, .. } = k.insts[if_inst].op.clone() else { panic!() };
    k.insts[if_inst].op = Op::If { cond, then_block, else_block: then_block };
    let errs = errors_on(&k, None);
    assert_eq!(
        errs,
        vec![
            "kernel wave_sum: inst8 (if): nests block1: expected a block nested under one op only, found it also under inst8 (if)",
            "kernel wave_sum: block2: expected the entry or a block nested under an op, found a block nested nowhere",
        ]
    );
}

#[test]
fn entry_block_is_nested_nowhere() {
    let mut k = common::wave_sum();
    let if_inst = *k.blocks[k.entry].insts.last().unwrap();
    let Op::If { cond, else_block, .. } = k.insts[if_inst].op.clone() else { panic!() };
    k.insts[if_inst].op = Op::If { cond, then_block: k.entry, else_block };
    has(&k, "kernel wave_sum: inst8 (if): nests the entry block0: expected a block of its own");
}

#[test]
fn instruction_in_one_block_once() {
    let mut k = common::wave_sum();
    let entry = k.entry;
    let first = k.blocks[entry].insts[0];
    k.blocks[entry].insts.push(first);
    k.blocks[Block::new(1)].insts.insert(0, first);
    let errs = errors_on(&k, None);
    assert_eq!(
        errs,
        vec![
            "kernel wave_sum: inst0 (id lane): expected to appear once, found twice in block0",
            "kernel wave_sum: inst0 (id lane): expected to appear in one block, found in block0 and block1",
        ]
    );
}

#[test]
fn instruction_in_no_block() {
    let mut k = common::wave_sum();
    let entry = k.entry;
    k.blocks[entry].insts.retain(|&i| i != Inst::new(1));
    let errs = errors_on(&k, None);
    assert!(
        errs.contains(
            &"kernel wave_sum: inst1 (load): expected to appear in one block, found in none".into()
        ),
        "{errs:?}"
    );
    // Its result v1 is then used where it has no definition.
    has(&k, "kernel wave_sum: inst2 (wave_reduce add): operand v1: expected a value defined in block0 or a block enclosing it, found a result of inst1 (load), which is in no block");
}

#[test]
fn block_nested_nowhere() {
    let mut k = common::wave_sum();
    k.blocks.push(BlockData::default());
    only(&k, "kernel wave_sum: block3: expected the entry or a block nested under an op, found a block nested nowhere");
}

#[test]
fn no_yield_in_the_entry_block() {
    let mut b = kb("entry_yield");
    b.push_inst(Op::Yield(Default::default()), &[]);
    only(&b.finish(), "kernel entry_yield: inst0 (yield): expected only in a nested block, found in the entry block");
}

#[test]
fn yield_only_last() {
    let mut k = common::wave_sum();
    // The then block is [store, yield]: make it [yield, store].
    k.blocks[Block::new(1)].insts.swap(0, 1);
    let errs = errors_on(&k, None);
    assert_eq!(
        errs,
        vec![
            "kernel wave_sum: inst6 (yield): expected only as the last instruction of block1, found at position 0 of 2",
            "kernel wave_sum: block1: then block of inst8 (if): expected to end with yield, found `store`",
        ]
    );
}

#[test]
fn nested_blocks_end_with_yield() {
    let mut k = common::wave_sum();
    k.insts[Inst::new(7)].op = Op::Fence(Scope::Workgroup);
    only(&k, "kernel wave_sum: block2: else block of inst8 (if): expected to end with yield, found `fence workgroup`");
    // An emptied block: its yield is now in no block as well.
    k.blocks[Block::new(2)].insts.clear();
    has(&k, "kernel wave_sum: block2: else block of inst8 (if): expected to end with yield, found an empty block");
    has(
        &k,
        "kernel wave_sum: inst7 (fence workgroup): expected to appear in one block, found in none",
    );
}

#[test]
fn entry_block_has_no_parameters() {
    let mut k = common::wave_sum();
    let entry = k.entry;
    let p = k.values.push(ValueData { ty: Type::U32, def: ValueDef::Param(entry, 0) });
    k.blocks[entry].params.push(p);
    only(&k, "kernel wave_sum: block0: entry block: expected no parameters, found 1");
}

// ---- scoping ----

#[test]
fn use_before_definition() {
    let mut b = kb("order");
    let a = b.u32(1);
    b.add(a, a);
    let mut k = b.finish();
    let entry = k.entry;
    k.blocks[entry].insts.swap(0, 1);
    only(&k, "kernel order: inst1 (binary add): operand v0: expected a definition before this use, found a result of inst0 (const) after it");
}

#[test]
fn for_body_parameters_are_visible_only_inside() {
    let mut b = kb("escape");
    let zero = b.u32(0);
    let ten = b.u32(10);
    let one = b.u32(1);
    let mut index = None;
    b.for_range(zero, ten, one, 1, &[], |_, i, _| {
        index = Some(i);
        vec![]
    });
    let i = index.unwrap();
    b.add(i, one);
    only(
        &b.finish(),
        "kernel escape: inst5 (binary add): operand v3: expected a value defined in block0 or a block enclosing it, found parameter 0 of block1 (body of inst4 (for)), which does not enclose this use",
    );
}

#[test]
fn values_of_a_nested_block_stay_inside() {
    let mut b = kb("leak");
    let t = b.bool(true);
    let inner = std::cell::Cell::new(None);
    b.if_else(
        t,
        |b| {
            inner.set(Some(b.u32(5)));
            vec![]
        },
        |b| {
            let x = inner.get().unwrap();
            b.add(x, x);
            vec![]
        },
    );
    let x = inner.get().unwrap();
    b.add(x, x);
    let errs = errors_on(&b.finish(), None);
    assert_eq!(
        errs,
        vec![
            "kernel leak: inst3 (binary add): operand v1: expected a value defined in block2 or a block enclosing it, found a result of inst1 (const) of block1 (then block of inst5 (if)), which does not enclose this use",
            "kernel leak: inst6 (binary add): operand v1: expected a value defined in block0 or a block enclosing it, found a result of inst1 (const) of block1 (then block of inst5 (if)), which does not enclose this use",
        ]
    );
}

#[test]
fn results_of_an_if_only_after_it() {
    let mut b = kb("early");
    let t = b.bool(true);
    let r = b.if_else(t, |b| vec![b.u32(1)], |b| vec![b.u32(2)]);
    let mut k = b.finish();
    // The then block yields the if's own result.
    let then_yield = k.blocks[Block::new(1)].insts[1];
    k.insts[then_yield].op = Op::Yield([r[0]].into_iter().collect());
    only(&k, "kernel early: inst2 (yield): operand v3: expected a definition before this use, found a result of inst5 (if) after it");
}

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

// ---- barriers and uniformity ----

/// A kernel of two waves running `op` under `if cond`, where `cond` comes from `make_cond`.
fn cross_lane_under(
    name: &str,
    make_cond: impl Fn(&mut KernelBuilder) -> Value,
    op: impl Fn(&mut KernelBuilder, Value) -> Value,
) -> Kernel {
    let mut b = kb(name);
    b.workgroup_size([64, 1, 1]);
    let out = b.buffer("out", ScalarType::U32, Access::Write);
    let lane = b.lane();
    let cond = make_cond(&mut b);
    b.if_then(cond, |b| {
        let v = op(b, lane);
        b.store(out, lane, v);
    });
    b.finish()
}

#[test]
fn cross_lane_ops_under_divergent_control() {
    // `if lane < 16 { shuffle_xor }` passes on the interpreter without the rule and is undefined
    // on NVIDIA (full-mask shfl.sync): every cross-lane op is refused under a divergent `if`.
    let ops: [(&str, &dyn Fn(&mut KernelBuilder, Value) -> Value); 7] = [
        ("shuffle xor", &|b, v| b.shuffle_xor(v, 1)),
        ("shuffle_idx", &|b, v| b.shuffle_idx(v, v)),
        ("broadcast", &|b, v| b.broadcast(v, 0)),
        ("ballot", &|b, v| {
            let c = b.eq(v, v);
            let m = b.ballot(c);
            b.convert(m, Type::U32)
        }),
        ("wave_reduce max", &|b, v| b.wave_reduce(ReduceOp::Max, v)),
        ("wave_argmax", &|b, v| {
            let f = b.convert(v, Type::F32);
            b.wave_argmax(f, v).1
        }),
        ("tsum", &|b, v| {
            let f = b.convert(v, Type::F32);
            let s = b.tsum(1, &[f]);
            b.convert(s, Type::U32)
        }),
    ];
    for (name, op) in ops {
        let divergent = |b: &mut KernelBuilder| {
            let lane = b.lane();
            let n = b.u32(16);
            b.lt(lane, n)
        };
        let k = cross_lane_under("divergent_cross_lane", divergent, op);
        let errs = errors_on(&k, None);
        let want = format!(
            "({name}): cross-lane op (every lane of the wave must run it) under non-uniform control \
             flow: expected wave-uniform conditions, found v"
        );
        assert!(
            errs.len() == 1
                && errs[0].contains(&want)
                && errs[0].contains("(divergent) as the condition of"),
            "{name}: {errs:#?}"
        );
        // Wave-uniform conditions: the wave id, a broadcast result, a workgroup-uniform scalar.
        let by_wave = |b: &mut KernelBuilder| {
            let wave = b.wave();
            let zero = b.u32(0);
            b.eq(wave, zero)
        };
        passes(&cross_lane_under("wave_cross_lane", by_wave, op), None);
        let by_broadcast = |b: &mut KernelBuilder| {
            let lane = b.lane();
            let first = b.broadcast(lane, 3);
            let three = b.u32(3);
            b.eq(first, three)
        };
        passes(&cross_lane_under("broadcast_cross_lane", by_broadcast, op), None);
    }
}

#[test]
fn cross_lane_op_in_a_divergent_loop() {
    let mut b = kb("loop_shuffle");
    let out = b.buffer("out", ScalarType::U32, Access::Write);
    let lane = b.lane();
    let zero = b.u32(0);
    let one = b.u32(1);
    let r = b.for_range(zero, lane, one, 1, &[lane], |b, _, c| vec![b.shuffle_xor(c[0], 1)]);
    b.store(out, lane, r[0]);
    let errs = errors_on(&b.finish(), None);
    assert!(
        errs.len() == 1
            && errs[0].contains("(shuffle xor): cross-lane op")
            && errs[0].contains("(divergent) as the end of"),
        "{errs:#?}"
    );
}

#[test]
fn barrier_under_a_divergent_if() {
    let mut b = kb("divergent_barrier");
    let lane = b.lane();
    let zero = b.u32(0);
    let first = b.eq(lane, zero);
    b.if_then(first, |b| b.barrier(BarrierKind::Lds));
    only(
        &b.finish(),
        "kernel divergent_barrier: inst3 (barrier lds): barrier under non-uniform control flow: expected workgroup-uniform conditions, found v2 (divergent) as the condition of inst6 (if)",
    );
}

#[test]
fn barrier_under_a_wave_uniform_if() {
    let mut b = kb("wave_barrier");
    b.workgroup_size([64, 1, 1]);
    let wave = b.wave();
    let zero = b.u32(0);
    let first = b.eq(wave, zero);
    b.if_then(first, |b| b.barrier(BarrierKind::All));
    only(
        &b.finish(),
        "kernel wave_barrier: inst3 (barrier all): barrier under non-uniform control flow: expected workgroup-uniform conditions, found v2 (wave-uniform) as the condition of inst6 (if)",
    );
}

#[test]
fn barrier_under_uniform_control_flow_passes() {
    let mut b = kb("uniform_barrier");
    b.workgroup_size([128, 1, 1]);
    let n = b.scalar_param("n", ScalarType::U32);
    let x = b.buffer("x", ScalarType::U32, Access::Read);
    let tile = b.lds("tile", ScalarType::U32, 128);
    let wg = b.workgroup_id(Dim::X);
    let nv = b.arg(n);
    let zero = b.u32(0);
    let one = b.u32(1);
    let cond = b.lt(wg, nv);
    let local = b.local_id();
    b.if_then(cond, |b| {
        // A loop over uniform bounds; a load at a uniform index is uniform too.
        let limit = b.load(x, wg, Type::U32);
        b.for_range(zero, limit, one, 2, &[], |b, i, _| {
            b.store(tile, local, i);
            b.barrier(BarrierKind::Lds);
            let peek = b.load(tile, zero, Type::U32);
            let go = b.gt(peek, zero);
            b.if_then(go, |b| b.barrier(BarrierKind::Lds));
            vec![]
        });
    });
    passes(&b.finish(), Some("gfx1100"));
}

#[test]
fn barrier_in_a_loop_with_divergent_bounds() {
    let mut b = kb("divergent_loop");
    let lane = b.lane();
    let zero = b.u32(0);
    let one = b.u32(1);
    b.for_range(zero, lane, one, 1, &[], |b, _, _| {
        b.barrier(BarrierKind::Lds);
        vec![]
    });
    only(
        &b.finish(),
        "kernel divergent_loop: inst3 (barrier lds): barrier under non-uniform control flow: expected workgroup-uniform conditions, found v0 (divergent) as the end of inst5 (for)",
    );
}

#[test]
fn barrier_error_names_the_outermost_divergent_condition() {
    let mut b = kb("nested");
    let lane = b.lane();
    let zero = b.u32(0);
    let first = b.eq(lane, zero);
    b.if_then(first, |b| {
        // Uniform in itself, but computed under a divergent if.
        let t = b.bool(true);
        b.if_then(t, |b| b.barrier(BarrierKind::Lds));
    });
    only(
        &b.finish(),
        "kernel nested: inst4 (barrier lds): barrier under non-uniform control flow: expected workgroup-uniform conditions, found v2 (divergent) as the condition of inst10 (if)",
    );
}

#[test]
fn carried_values_reach_a_fixpoint() {
    // A carried value starts uniform but picks up the lane id in the body, so after the loop a
    // branch on it is divergent.
    let mut b = kb("carried");
    let lane = b.lane();
    let zero = b.u32(0);
    let one = b.u32(1);
    let four = b.u32(4);
    let r = b.for_range(zero, four, one, 1, &[zero, zero], |b, _, c| {
        let next = b.add(c[0], lane);
        vec![c[1], next]
    });
    let go = b.eq(r[0], zero);
    b.if_then(go, |b| b.barrier(BarrierKind::Lds));
    let k = b.finish();
    let info = uniformity::analyze(&k);
    // The first carried value only becomes divergent on the second trip around the loop.
    assert_eq!(info.value(r[0]), uniformity::Uniformity::Divergent);
    assert_eq!(info.value(r[1]), uniformity::Uniformity::Divergent);
    only(
        &k,
        "kernel carried: inst8 (barrier lds): barrier under non-uniform control flow: expected workgroup-uniform conditions, found v10 (divergent) as the condition of inst11 (if)",
    );
}

// ---- target ----

#[test]
fn wave_size_supported_by_the_target() {
    let k = common::argmax(); // wave 64
    passes(&k, Some("gfx942"));
    passes(&k, Some("gfx1100"));
    has_on(&k, Some("sm_90"), "kernel argmax_rows: wave size on sm_90: expected 32, found 64 (archs with wave size 64: gfx906, gfx90a, gfx942, gfx1030, gfx1100, gfx1101, gfx1151, gfx1200, gfx1201)");
    let k = common::wave_sum(); // wave 32
    has_on(&k, Some("gfx906"), "kernel wave_sum: wave size on gfx906: expected 64, found 32 (archs with wave size 32: gfx1030, gfx1100, gfx1101, gfx1151, gfx1200, gfx1201, sm_75, sm_80, sm_86, sm_89, sm_90)");
}

#[test]
fn lds_within_the_target() {
    let mut b = kb("big_lds");
    b.lds("a", ScalarType::F32, 8192); // 32 KiB
    b.lds("b", ScalarType::F16, 8193); // 16 KiB + 2, padded to 16 bytes
    let k = b.finish();
    assert_eq!(k.lds_bytes(), 49168);
    passes(&k, Some("gfx1100"));
    has_on(&k, Some("sm_90"), "kernel big_lds: LDS on sm_90: expected at most 49152 bytes a workgroup, found 49168 (16 over; archs with 49168 bytes of LDS a workgroup: gfx906, gfx90a, gfx942, gfx1030, gfx1100, gfx1101, gfx1151, gfx1200, gfx1201)");
}
