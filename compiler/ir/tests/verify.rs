//! The verifier: one test per invariant, asserting the whole error line (kernel, entity, what was
//! expected and what was found), plus kernels that must pass and a kernel with many errors.

use crate::common;

use cranelift_entity::EntityRef;
use kiln_ir::verifier::Location;
use kiln_ir::*;

use crate::verify_support;
use verify_support::*;

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
