//! The serde (RON) form and the content hash.

use crate::common;

use kiln_ir::*;

#[test]
fn library_like_kernels_verify() {
    for k in common::all() {
        let targets: &[&str] =
            if k.wave_size == 64 { &["gfx942", "gfx1100"] } else { &["gfx1100", "sm_90"] };
        for t in targets {
            let t = Target::by_name(t).unwrap();
            if let Err(e) = verify(&k, Some(t)) {
                panic!("{} on {t}:\n{e}\n{}", k.name, print::print(&k));
            }
        }
    }
}

#[test]
fn ron_round_trip_gives_an_equal_kernel() {
    for k in common::all() {
        let text = k.to_ron();
        let back = Kernel::from_ron(&text).unwrap_or_else(|e| panic!("{}: {e}", k.name));
        assert_eq!(back, k, "{} changed in the round trip", k.name);
        assert_eq!(back.content_hash(), k.content_hash());
        assert_eq!(back.to_ron(), text, "{}: serialization is not stable", k.name);
        assert!(verify(&back, None).is_ok());
    }
}

#[test]
fn content_hash_is_stable_and_sensitive() {
    assert_eq!(common::wave_sum().content_hash(), common::wave_sum().content_hash());
    assert_eq!(common::argmax().content_hash(), common::argmax().content_hash());
    // One constant changed: the argmax loop's stride.
    let mut k = common::argmax();
    let i =
        k.insts.keys().find(|&i| k.insts[i].op == Op::Const { ty: Type::U32, bits: 64 }).unwrap();
    k.insts[i].op = Op::Const { ty: Type::U32, bits: 32 };
    assert_ne!(k.content_hash(), common::argmax().content_hash());
    // A compile-time parameter changed.
    let mut k = common::lds_reduce();
    k.consts.insert("rows_per_workgroup".into(), 2);
    assert_ne!(k.content_hash(), common::lds_reduce().content_hash());
    // Every kernel hashes differently.
    let mut hashes: Vec<String> = common::all().iter().map(|k| k.content_hash()).collect();
    let n = hashes.len();
    hashes.sort();
    hashes.dedup();
    assert_eq!(hashes.len(), n);
}

/// A fixed kernel for the golden hash; keep it as it is.
fn golden_kernel() -> Kernel {
    let mut b = KernelBuilder::new("golden_scale", 32);
    let x = b.buffer("x", ScalarType::F32, Access::ReadWrite);
    let lane = b.lane();
    let v = b.load(x, lane, Type::F32);
    let half = b.f32(0.5);
    let s = b.mul(v, half);
    b.store(x, lane, s);
    b.finish()
}

/// A change here means the serialization changed, and with it every cache key: make sure that is
/// intended (old packages and caches stop matching), then update the literal.
#[test]
fn golden_content_hash() {
    let k = golden_kernel();
    assert!(verify(&k, None).is_ok());
    assert_eq!(
        k.content_hash(),
        "aea6adda23d68ee0d6f8a08a2db304be03287707d695a185a58e48e580cc152d"
    );
}
