//! `async_copy` and `async_wait`: a copy lands in LDS by its lane's wait, and the interpreter
//! refuses every program whose result could depend on when it lands (a read, write or second
//! copy of bytes in flight, a copy never waited for, another wave's read with no barrier after
//! the wait). At wave 32 and 64, on fresh random data.

use crate::interp_util;

use interp_util::*;
use kiln_ir::interp::{Arg, InterpError, RunOptions};
use kiln_ir::*;
use rand::Rng;

/// Two waves; lane `l` copies `bytes` bytes of `x` at byte `bytes * l + skew` into LDS byte
/// `bytes * l`, in `groups` groups (lane `l`'s copy is in group `l % groups`: each group is
/// closed by a wait with `pending` left in flight); then `finish` waits (if `drain`), a barrier,
/// and every lane reads the word at LDS byte `bytes * (l ^ 1)` (its neighbour's copy) into `out`.
struct Shape {
    bytes: u32,
    skew: u32,
    groups: u32,
    pending: u32,
    drain: bool,
    barrier: bool,
}

const SHAPE: Shape =
    Shape { bytes: 16, skew: 0, groups: 1, pending: 0, drain: true, barrier: true };

fn copy_kernel(w: u32, s: &Shape) -> Kernel {
    let mut b = KernelBuilder::new("async_neighbour", w);
    b.workgroup_size([2 * w, 1, 1]);
    let x = b.buffer("x", ScalarType::U32, Access::Read);
    let out = b.buffer("out", ScalarType::U32, Access::Write);
    let lds = b.lds("stage", ScalarType::U32, 2 * w * s.bytes / 4);
    let l = b.local_id();
    let nb = b.u32(s.bytes);
    let dst = b.mul(l, nb);
    let skew = b.u32(s.skew);
    let src = b.add(dst, skew);
    let ng = b.u32(s.groups);
    let mine = b.rem(l, ng);
    for g in 0..s.groups {
        let gv = b.u32(g);
        let is = b.eq(mine, gv);
        b.if_then(is, |b| b.async_copy(lds, dst, x, src, s.bytes));
        b.async_wait(s.pending);
    }
    if s.drain {
        b.async_wait(0);
    }
    if s.barrier {
        b.barrier(BarrierKind::Lds);
    }
    let one = b.u32(1);
    let other = b.xor(l, one);
    let words = b.u32(s.bytes / 4);
    let at = b.mul(other, words);
    let v = b.load(lds, at, Type::U32);
    b.store(out, l, v);
    b.finish()
}

fn args(rng: &mut impl Rng, w: u32, s: &Shape) -> Vec<Arg> {
    let words = (2 * w * s.bytes + s.skew + 16) as usize / 4;
    let x: Vec<u32> = (0..words).map(|_| rng.gen()).collect();
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    vec![Arg::Buffer(bytes), Arg::Buffer(vec![0; 8 * w as usize])]
}

/// The default run: verified, with the sanitizer.
fn run_sanitized(k: &Kernel, args: &mut [Arg]) -> Result<(), InterpError> {
    run(k, args).map(|_| ())
}

#[test]
fn copies_land_by_the_wait_and_a_neighbour_reads_them_after_a_barrier() {
    let (mut rng, _seed) = rng();
    for w in WAVES {
        for (bytes, groups, pending) in [(16, 1, 0), (8, 2, 1), (4, 3, 2), (16, 4, 3)] {
            let s = Shape { bytes, groups, pending, ..SHAPE };
            let mut a = args(&mut rng, w, &s);
            let x = bytes_u32(buffer(&a[0]));
            run_sanitized(&copy_kernel(w, &s), &mut a)
                .unwrap_or_else(|e| panic!("wave {w} bytes {bytes} groups {groups}: {e}"));
            let got = bytes_u32(buffer(&a[1]));
            let want: Vec<u32> = (0..2 * w).map(|l| x[((l ^ 1) * bytes / 4) as usize]).collect();
            assert_eq!(got, want, "wave {w} bytes {bytes} groups {groups} pending {pending}");
        }
    }
}

#[test]
fn a_read_before_the_wait_is_refused() {
    let (mut rng, _seed) = rng();
    for w in WAVES {
        // The group closed but left in flight (`pending` 1), then the read.
        let s = Shape { pending: 1, drain: false, ..SHAPE };
        let e = run_sanitized(&copy_kernel(w, &s), &mut args(&mut rng, w, &s)).unwrap_err();
        assert!(matches!(e, InterpError::AsyncCopy { .. }), "{e}");
        let msg = e.to_string();
        assert!(msg.contains("in flight") && msg.contains("`stage`"), "{msg}");
        // Two groups, one left in flight: the lanes of the second group read too early.
        let s = Shape { groups: 2, pending: 1, drain: false, ..SHAPE };
        let e = run_sanitized(&copy_kernel(w, &s), &mut args(&mut rng, w, &s)).unwrap_err();
        assert!(matches!(e, InterpError::AsyncCopy { .. }), "{e}");
        // The same without the sanitizer: an in-flight read is wrong on any device.
        let plain = RunOptions { sanitize: false, ..RunOptions::default() };
        let e = interp::run(&copy_kernel(w, &s), &mut args(&mut rng, w, &s), &plain).unwrap_err();
        assert!(matches!(e, InterpError::AsyncCopy { .. }), "{e}");
    }
}

#[test]
fn a_copy_never_waited_for_is_refused() {
    let (mut rng, _seed) = rng();
    for w in WAVES {
        // Every lane copies, then nothing waits; the kernel reads nothing of LDS.
        let mut b = KernelBuilder::new("no_wait", w);
        let x = b.buffer("x", ScalarType::U32, Access::Read);
        let out = b.buffer("out", ScalarType::U32, Access::Write);
        let lds = b.lds("stage", ScalarType::U32, w);
        let l = b.lane();
        let four = b.u32(4);
        let at = b.mul(l, four);
        b.async_copy(lds, at, x, at, 4);
        let v = b.load(x, l, Type::U32);
        b.store(out, l, v);
        let k = b.finish();
        let mut a =
            vec![Arg::Buffer(vec![7; 4 * w as usize]), Arg::Buffer(vec![0; 4 * w as usize])];
        let e = run(&k, &mut a).unwrap_err();
        assert!(matches!(e, InterpError::AsyncCopy { .. }), "{e}");
        assert!(e.to_string().contains("never waited"), "{e}");
        let _ = rng.gen::<u8>();
    }
}

#[test]
fn another_waves_read_needs_a_barrier_after_the_wait() {
    let (mut rng, _seed) = rng();
    for w in WAVES {
        // Lane l reads lane l ^ 1, in its own wave: fine without the barrier.
        let s = Shape { barrier: false, ..SHAPE };
        let mut a = args(&mut rng, w, &s);
        run_sanitized(&copy_kernel(w, &s), &mut a).unwrap_or_else(|e| panic!("wave {w}: {e}"));
        // Reading the other wave's copies without a barrier is a race.
        let mut b = KernelBuilder::new("cross_wave", w);
        b.workgroup_size([2 * w, 1, 1]);
        let x = b.buffer("x", ScalarType::U32, Access::Read);
        let out = b.buffer("out", ScalarType::U32, Access::Write);
        let lds = b.lds("stage", ScalarType::U32, 2 * w);
        let l = b.local_id();
        let four = b.u32(4);
        let at = b.mul(l, four);
        b.async_copy(lds, at, x, at, 4);
        b.async_wait(0);
        let wv = b.u32(w);
        let other = b.xor(l, wv);
        let v = b.load(lds, other, Type::U32);
        b.store(out, l, v);
        let k = b.finish();
        let mut a = args(&mut rng, w, &SHAPE);
        let e = run_sanitized(&k, &mut a).unwrap_err();
        assert!(matches!(e, InterpError::LdsRace { .. }), "{e}");
    }
}

#[test]
fn copies_are_aligned_and_in_bounds() {
    let (mut rng, _seed) = rng();
    for w in WAVES {
        // A source 4 bytes off a 16-byte copy's alignment.
        let s = Shape { skew: 4, ..SHAPE };
        let e = run(&copy_kernel(w, &s), &mut args(&mut rng, w, &s)).unwrap_err();
        assert!(matches!(e, InterpError::Misaligned { .. }), "{e}");
        // A source past the buffer's end.
        let s = SHAPE;
        let mut a = args(&mut rng, w, &s);
        if let Arg::Buffer(x) = &mut a[0] {
            x.truncate((2 * w * 16 - 16) as usize);
        }
        let e = run(&copy_kernel(w, &s), &mut a).unwrap_err();
        assert!(matches!(e, InterpError::OutOfBounds { .. }), "{e}");
    }
}

#[test]
fn the_verifier_checks_sizes_and_the_grid_dependency_wait() {
    let mut b = KernelBuilder::new("bad_size", 32);
    let x = b.buffer("x", ScalarType::U32, Access::Read);
    let lds = b.lds("stage", ScalarType::U32, 32);
    let z = b.u32(0);
    b.async_copy(lds, z, x, z, 12);
    b.async_wait(0);
    let e = verify(&b.finish(), None).unwrap_err().to_string();
    assert!(e.contains("expected 4, 8 or 16, found 12"), "{e}");
    // A copy of a buffer the kernel may write: not before the grid-dependency wait (one of a
    // buffer it only reads may run there: tests/prefetch.rs).
    let mut b = KernelBuilder::new("early_copy", 32);
    let x = b.buffer("x", ScalarType::U32, Access::ReadWrite);
    let lds = b.lds("stage", ScalarType::U32, 32);
    let z = b.u32(0);
    b.async_copy(lds, z, x, z, 4);
    b.grid_dependency_wait();
    b.async_wait(0);
    let e = verify(&b.finish(), None).unwrap_err().to_string();
    assert!(e.contains("async_copy") && e.contains("grid_dependency_wait"), "{e}");
    // A write-only source.
    let mut b = KernelBuilder::new("write_only", 32);
    let y = b.buffer("y", ScalarType::U32, Access::Write);
    let lds = b.lds("stage", ScalarType::U32, 32);
    let z = b.u32(0);
    b.async_copy(lds, z, y, z, 4);
    b.async_wait(0);
    let e = verify(&b.finish(), None).unwrap_err().to_string();
    assert!(e.contains("async_copy"), "{e}");
}
