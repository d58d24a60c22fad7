//! The text form: a snapshot of a fixed kernel that uses most ops, and the printer's promises
//! (deterministic, `Display` equals `print`, robust on broken kernels).

use crate::common;

use cranelift_entity::EntityRef;
use kiln_ir::*;

/// A kernel touching most of the syntax; it verifies, but computes nothing useful.
fn snapshot_kernel() -> Kernel {
    let mut b = KernelBuilder::new("snapshot", 32);
    b.workgroup_size([64, 2, 1]);
    b.const_param("tile_k", 128);
    b.const_param("cols_per_lane", 4);
    let n = b.scalar_param("n", ScalarType::U32);
    let scale = b.scalar_param("scale", ScalarType::F32);
    b.grid([
        ShapeExpr { factors: vec![n], num: 1, den: 64, add: 1 },
        ShapeExpr::constant(2),
        ShapeExpr::constant(1),
    ]);
    let x = b.buffer_with_len("x", ScalarType::F16, Access::Read, ShapeExpr::scaled(&[n], 8, 1));
    let y = b.buffer("y", ScalarType::F32, Access::Write);
    let counter = b.workspace("done", ScalarType::U32, ShapeExpr::constant(1));
    let tile = b.lds("tile 0", ScalarType::F32, 33);
    let _flags = b.lds("flags", ScalarType::U8, 4);
    let acc = b.private("acc", ScalarType::F32, 4);
    let lane = b.lane();
    let ly = b.id(IdKind::LocalId(Dim::Y));
    let nv = b.arg(n);
    let sv = b.arg(scale);
    let addr = b.buffer_addr(x);
    let h = b.f16(1.5);
    let m1 = b.i32(-1);
    let t = b.bool(true);
    let v4 = b.load(x, lane, Type::vector(ScalarType::F16, 4));
    let e = b.extract(v4, 1);
    let ef = b.convert(e, Type::F32);
    let hf = b.convert(h, Type::F32);
    let prod = b.fma(ef, sv, hf);
    let g = b.load(MemRef::Global(addr), lane, Type::F16);
    let gf = b.convert(g, Type::F32);
    let vec2 = b.make_vector(&[prod, gf]);
    let lo = b.extract(vec2, 0);
    let sh = b.shuffle_xor(lo, 16);
    let dn = b.shuffle(ShuffleMode::Down, sh, 1);
    let bc = b.broadcast(dn, 0);
    let zero = b.u32(0);
    let is0 = b.eq(lane, zero);
    let mask = b.ballot(is0);
    let _ = b.convert(mask, Type::U32);
    let neg = b.lt(m1, m1);
    let both = b.and(neg, t);
    b.store(tile, lane, bc);
    b.barrier(BarrierKind::Lds);
    let r = b.if_else(
        both,
        |b| {
            let q = b.load(tile, zero, Type::F32);
            vec![q]
        },
        |b| {
            let q = b.unary(UnaryOp::RsqrtApprox, bc);
            vec![q]
        },
    );
    let one = b.u32(1);
    let four = b.u32(4);
    let fz = b.f32(0.0);
    let sums = b.for_range(zero, four, one, 4, &[fz, r[0]], |b, i, c| {
        b.store(acc, i, c[1]);
        let p = b.load(acc, i, Type::F32);
        let s = b.add(c[0], p);
        vec![s, c[1]]
    });
    let ts = b.tsum(2, &[sums[0], sums[1]]);
    let (mx, at) = b.wave_argmax(ts, lane);
    let red = b.wave_reduce(ReduceOp::Max, mx);
    b.store(y, at, red);
    b.fence(Scope::Device);
    let old = b.atomic(AtomicOp::Add, counter, zero, one, Scope::Device);
    let last = b.eq(old, nv);
    let ly0 = b.eq(ly, zero);
    let both = b.and(last, ly0);
    b.if_then(both, |b| b.store(counter, zero, zero));
    b.finish()
}

const SNAPSHOT: &str = r#"kernel snapshot wave=32 workgroup=[64,2,1]
  const cols_per_lane = 4
  const tile_k = 128
  grid [ceil(arg0/64)+1, 2, 1]
  arg0 n: u32
  arg1 scale: f32
  arg2 x: buffer<f16> read len=arg0*8
  arg3 y: buffer<f32> write
  arg4 done: buffer<u32> read_write len=1 workspace
  lds0 "tile 0": f32[33] offset=0 bytes=132
  lds1 flags: u8[4] offset=144 bytes=4
  priv0 acc: f32[4]
{
  v0:u32 = id lane
  v1:u32 = id local_id.y
  v2:u32 = arg arg0
  v3:f32 = arg arg1
  v4:u64 = buffer_addr arg2
  v5:f16 = const f16 1.5 (0x3e00)
  v6:i32 = const i32 -1
  v7:i1 = const i1 true
  v8:f16x4 = load f16x4 arg2[v0]
  v9:f16 = extract v8, 1
  v10:f32 = convert f32 v9
  v11:f32 = convert f32 v5
  v12:f32 = fma v10, v3, v11
  v13:f16 = load f16 global(v4)[v0]
  v14:f32 = convert f32 v13
  v15:f32x2 = make_vector f32x2 v12, v14
  v16:f32 = extract v15, 0
  v17:f32 = shuffle xor v16, 16
  v18:f32 = shuffle down v17, 1
  v19:f32 = broadcast v18, lane 0
  v20:u32 = const u32 0
  v21:i1 = cmp eq v0, v20
  v22:u64 = ballot v21
  v23:u32 = convert u32 v22
  v24:i1 = cmp lt v6, v6
  v25:i1 = binary and v24, v7
  store lds0[v0] = v19
  barrier lds
  v28:f32 = if v25 {
    v26:f32 = load f32 lds0[v20]
    yield v26
  } else {
    v27:f32 = unary rsqrt_approx v19
    yield v27
  }
  v29:u32 = const u32 1
  v30:u32 = const u32 4
  v31:f32 = const f32 0.0 (0x00000000)
  v37:f32, v38:f32 = for v32:u32 in v20..v30 step v29 unroll 4 carry(v33:f32 = v31, v34:f32 = v28) {
    store priv0[v32] = v34
    v35:f32 = load f32 priv0[v32]
    v36:f32 = binary add v33, v35
    yield v36, v34
  }
  v39:f32 = tsum<2> v37, v38
  v40:f32, v41:u32 = wave_argmax v39, v0
  v42:f32 = wave_reduce max v40
  store arg3[v41] = v42
  fence device
  v43:u32 = atomic add device arg4[v20], v29
  v44:i1 = cmp eq v43, v2
  v45:i1 = cmp eq v1, v20
  v46:i1 = binary and v44, v45
  if v46 {
    store arg4[v20] = v20
    yield
  } else {
    yield
  }
}
"#;

#[test]
fn snapshot() {
    let k = snapshot_kernel();
    if let Err(e) = verify(&k, Some(Target::by_name("gfx1100").unwrap())) {
        panic!("{e}");
    }
    let text = print::print(&k);
    assert_eq!(text, SNAPSHOT);
    assert_eq!(k.to_string(), text);
}

#[test]
fn ids_mode_names_instructions_and_blocks() {
    let text = print::print_with_ids(&common::if_else());
    let expected = r#"kernel clamp_pair wave=32 workgroup=[32,1,1]
  grid [1, 1, 1]
  arg0 x: buffer<f32> read_write
{ ; block0
  v0:u32 = id lane ; inst0
  v1:f32 = load f32 arg0[v0] ; inst1
  v2:f32 = const f32 0.0 (0x00000000) ; inst2
  v3:i1 = cmp lt v1, v2 ; inst3
  v8:f32, v9:u32 = if v3 { ; inst10 block1
    v4:f32 = const f32 0.0 (0x00000000) ; inst4
    v5:u32 = const u32 1 ; inst5
    yield v4, v5 ; inst6
  } else { ; block2
    v6:f32 = unary sqrt v1 ; inst7
    v7:u32 = const u32 0 ; inst8
    yield v6, v7 ; inst9
  }
  store arg0[v0] = v8 ; inst11
  v10:u32 = const u32 1024 ; inst12
  v11:u32 = binary add v0, v10 ; inst13
  v12:f32 = bitcast f32 v9 ; inst14
  store arg0[v11] = v12 ; inst15
}
"#;
    assert_eq!(text, expected);
}

#[test]
fn printing_is_deterministic() {
    for k in common::all() {
        assert_eq!(print::print(&k), print::print(&k.clone()));
        let back = Kernel::from_ron(&k.to_ron()).unwrap();
        assert_eq!(print::print(&back), print::print(&k));
    }
}

#[test]
fn constants_print_exactly() {
    use print::const_value;
    assert_eq!(const_value(Type::F32, 1.5f32.to_bits() as u64), "1.5 (0x3fc00000)");
    assert_eq!(const_value(Type::F32, (-0.0f32).to_bits() as u64), "-0.0 (0x80000000)");
    assert_eq!(const_value(Type::F32, 0x7fc0_0001), "NaN (0x7fc00001)");
    assert_eq!(const_value(Type::F32, 1), "1e-45 (0x00000001)");
    assert_eq!(const_value(Type::F64, 0.1f64.to_bits()), "0.1 (0x3fb999999999999a)");
    assert_eq!(const_value(Type::BF16, 0x3f80), "1.0 (0x3f80)");
    assert_eq!(const_value(Type::F16, 0x7c00), "inf (0x7c00)");
    assert_eq!(const_value(Type::I8, 0x80), "-128");
    assert_eq!(const_value(Type::I64, u64::MAX), "-1");
    assert_eq!(const_value(Type::U64, u64::MAX), "18446744073709551615");
    assert_eq!(const_value(Type::BOOL, 0), "false");
    assert_eq!(const_value(Type::U8, 0x1ff), "bits=0x1ff");
    assert_eq!(const_value(Type::vector(ScalarType::F32, 2), 0), "bits=0x0");
}

#[test]
fn shape_expressions() {
    use print::shape_expr;
    let (a, b) = (Param::from_u32(0), Param::from_u32(3));
    assert_eq!(shape_expr(&ShapeExpr::constant(7)), "7");
    assert_eq!(shape_expr(&ShapeExpr::scaled(&[a], 1, 1)), "arg0");
    assert_eq!(shape_expr(&ShapeExpr::scaled(&[a, b], 34, 32)), "ceil(arg0*arg3*34/32)");
    let e = ShapeExpr { factors: vec![], num: 5, den: 2, add: 1 };
    assert_eq!(shape_expr(&e), "ceil(5/2)+1");
}

#[test]
fn broken_kernels_print_without_panicking() {
    // A block nested twice, an operand out of range, an instruction out of range.
    let mut k = common::wave_sum();
    let if_inst = *k.blocks[k.entry].insts.last().unwrap();
    let Op::If { then_block, .. } = k.insts[if_inst].op.clone() else { panic!() };
    k.insts[if_inst].op = Op::If { cond: Value::new(99), then_block, else_block: then_block };
    k.blocks[k.entry].insts.push(Inst::new(77));
    let text = print::print(&k);
    assert!(text.contains("if v99 {"), "{text}");
    assert!(text.contains("? block1 is already printed above"), "{text}");
    assert!(text.contains("? inst77 is out of range"), "{text}");
    // A `for` whose body lost its parameters.
    let mut k = common::carried_loop();
    let body = k.blocks.keys().nth(1).unwrap();
    k.blocks[body].params.clear();
    let text = print::print(&k);
    assert!(text.contains("for ? in v1..v2 step v3 unroll 1 carry(? = v4, ? = v5) {"), "{text}");
    assert!(verify(&k, None).is_err());
}
