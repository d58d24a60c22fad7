//! The uniformity analysis, rule by rule.

use kiln_ir::uniformity::{analyze, Uniformity::*};
use kiln_ir::*;

#[test]
fn lattice() {
    assert!(WorkgroupUniform > WaveUniform && WaveUniform > Divergent);
    assert_eq!(WorkgroupUniform.meet(WaveUniform), WaveUniform);
    assert_eq!(Divergent.join(WaveUniform), WaveUniform);
    assert_eq!(WaveUniform.to_string(), "wave-uniform");
}

#[test]
fn sources() {
    let mut b = KernelBuilder::new("sources", 32);
    b.workgroup_size([32, 4, 1]);
    let n = b.scalar_param("n", ScalarType::U32);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let c = b.u32(1);
    let a = b.arg(n);
    let addr = b.buffer_addr(x);
    let wg = b.workgroup_id(Dim::X);
    let ws = b.id(IdKind::WaveSize);
    let nw = b.id(IdKind::NumWaves);
    let wave = b.wave();
    let lane = b.lane();
    let lin = b.local_id();
    let lx = b.id(IdKind::LocalId(Dim::X));
    let ly = b.id(IdKind::LocalId(Dim::Y)); // x spans one whole wave: wave-uniform
    let lz = b.id(IdKind::LocalId(Dim::Z)); // the workgroup is 1 deep: always 0
    let k = b.finish();
    let u = analyze(&k);
    for v in [c, a, addr, wg, ws, nw, lz] {
        assert_eq!(u.value(v), WorkgroupUniform, "{v}");
    }
    for v in [wave, ly] {
        assert_eq!(u.value(v), WaveUniform, "{v}");
    }
    for v in [lane, lin, lx] {
        assert_eq!(u.value(v), Divergent, "{v}");
    }
}

#[test]
fn cross_lane_ops() {
    let mut b = KernelBuilder::new("cross", 32);
    let lane = b.lane();
    let one = b.f32(1.0);
    let f = b.convert(lane, Type::F32);
    let red = b.wave_reduce(ReduceOp::Add, f);
    let bc_div = b.broadcast(f, 0);
    let bc_uni = b.broadcast(one, 0);
    let sh_div = b.shuffle_xor(f, 1);
    let sh_uni = b.shuffle_xor(one, 1);
    let t = b.bool(true);
    let bal = b.ballot(t);
    let (am, ai) = b.wave_argmax(f, lane);
    let t1 = b.tsum(1, &[f]);
    let t2 = b.tsum(2, &[f, f]);
    let sum = b.add(red, one); // meet of its operands
    let k = b.finish();
    let u = analyze(&k);
    for v in [red, bc_div, bal, am, ai, t1, sum] {
        assert_eq!(u.value(v), WaveUniform, "{v}");
    }
    assert_eq!(u.value(bc_uni), WorkgroupUniform);
    assert_eq!(u.value(sh_uni), WorkgroupUniform);
    assert_eq!(u.value(sh_div), Divergent);
    assert_eq!(u.value(t2), Divergent);
}

#[test]
fn memory() {
    let mut b = KernelBuilder::new("memory", 32);
    let x = b.buffer("x", ScalarType::U32, Access::ReadWrite);
    let tile = b.lds("tile", ScalarType::U32, 32);
    let p = b.private("p", ScalarType::U32, 4);
    let zero = b.u32(0);
    let lane = b.lane();
    let wave = b.wave();
    let g = b.load(x, zero, Type::U32);
    let l = b.load(tile, wave, Type::U32);
    let d = b.load(x, lane, Type::U32);
    let pr = b.load(p, zero, Type::U32);
    let at = b.atomic(AtomicOp::Add, x, zero, zero, Scope::Device);
    let k = b.finish();
    let u = analyze(&k);
    assert_eq!(u.value(g), WorkgroupUniform);
    assert_eq!(u.value(l), WaveUniform);
    assert_eq!(u.value(d), Divergent);
    assert_eq!(u.value(pr), Divergent);
    assert_eq!(u.value(at), Divergent);
}

#[test]
fn control_flow() {
    let mut b = KernelBuilder::new("control", 32);
    let lane = b.lane();
    let zero = b.u32(0);
    let one = b.u32(1);
    let four = b.u32(4);
    let first = b.eq(lane, zero);
    let t = b.bool(true);
    let mut inside = None;
    // Both arms yield constants, but which one depends on a divergent condition.
    let r = b.if_else(
        first,
        |b| {
            let c = b.u32(7);
            inside = Some(c);
            vec![c]
        },
        |b| vec![b.u32(8)],
    );
    let r2 = b.if_else(t, |_| vec![one], |_| vec![zero]);
    let mut index = None;
    let carried = b.for_range(zero, four, one, 1, &[zero], |b, i, c| {
        index = Some(i);
        let n = b.add(c[0], one);
        vec![n]
    });
    let mut div_index = None;
    b.for_range(zero, lane, one, 1, &[], |_, i, _| {
        div_index = Some(i);
        vec![]
    });
    let k = b.finish();
    let u = analyze(&k);
    assert_eq!(u.value(inside.unwrap()), Divergent, "defined under a divergent if");
    assert_eq!(u.value(r[0]), Divergent);
    assert_eq!(u.value(r2[0]), WorkgroupUniform);
    assert_eq!(u.value(index.unwrap()), WorkgroupUniform);
    assert_eq!(u.value(carried[0]), WorkgroupUniform);
    assert_eq!(u.value(div_index.unwrap()), Divergent);
    assert_eq!(u.block(k.entry), WorkgroupUniform);
    assert_eq!(u.block(Block::from_u32(1)), Divergent);
}
