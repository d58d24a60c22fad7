//! `prefetch` and `grid_dependency_wait`: a prefetch changes no value but must address its
//! buffer as a load would, and the verifier keeps everything but arithmetic, prefetches and loads
//! (or async copies into LDS) of buffers the kernel only reads after the wait. At wave 32 and
//! 64, on fresh random data.

use crate::interp_util;

use interp_util::*;
use kiln_ir::interp::{Arg, InterpError};
use kiln_ir::*;
use rand::Rng;

/// `out[i] = x[i] * 2` for `n` lanes of one wave, after each lane prefetches byte
/// `4 i + extra` of `x` and the kernel waits for the grids before it.
fn prefetch_copy(w: u32, extra: u32) -> Kernel {
    let mut b = KernelBuilder::new("prefetch_copy", w);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    let lane = b.lane();
    let four = b.u32(4);
    let at = b.mul(lane, four);
    let e = b.u32(extra);
    let at = b.add(at, e);
    b.prefetch(x, at);
    b.grid_dependency_wait();
    let v = b.load(x, lane, Type::F32);
    let two = b.f32(2.0);
    let y = b.mul(v, two);
    b.store(out, lane, y);
    b.finish()
}

#[test]
fn a_prefetch_changes_nothing_and_must_stay_in_its_buffer() {
    let (mut rng, _seed) = rng();
    for w in WAVES {
        let x: Vec<f32> = (0..w).map(|_| rng.gen_range(-4.0f32..4.0)).collect();
        let mut args = [Arg::Buffer(f32_bytes(&x)), Arg::Buffer(vec![0; 4 * w as usize])];
        run(&prefetch_copy(w, 3), &mut args).unwrap_or_else(|e| panic!("wave {w}: {e}"));
        let got = bytes_f32(buffer(&args[1]));
        let want: Vec<f32> = x.iter().map(|v| v * 2.0).collect();
        assert_eq!(got, want, "wave {w}");
        // Byte 4 (W - 1) + 4 of a 4 W-byte buffer: past its end, on the last lane only.
        let mut args = [Arg::Buffer(f32_bytes(&x)), Arg::Buffer(vec![0; 4 * w as usize])];
        let e = run(&prefetch_copy(w, 4), &mut args).unwrap_err();
        assert!(matches!(e, InterpError::OutOfBounds { .. }), "{e}");
        let msg = e.to_string();
        assert!(msg.contains("prefetch") && msg.contains(&format!("{}", w - 1)), "{msg}");
    }
}

/// A kernel whose body before the wait is `before`, with `x` and `out` buffers.
fn with_prologue(before: impl FnOnce(&mut KernelBuilder, Param, Param)) -> Kernel {
    let mut b = KernelBuilder::new("wait_rules", 32);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    before(&mut b, x, out);
    b.grid_dependency_wait();
    let lane = b.lane();
    let v = b.load(x, lane, Type::F32);
    b.store(out, lane, v);
    b.finish()
}

fn verify_error(k: &Kernel) -> String {
    match verify(k, None) {
        Ok(()) => panic!("kernel {} verified", k.name),
        Err(e) => e.to_string(),
    }
}

#[test]
fn only_arithmetic_prefetches_and_read_only_loads_run_before_the_wait() {
    // Arithmetic, control flow and prefetches: fine.
    let ok = with_prologue(|b, x, _| {
        let lane = b.lane();
        let zero = b.u32(0);
        let first = b.eq(lane, zero);
        b.if_then(first, |b| {
            let z = b.u32(0);
            b.prefetch(x, z)
        });
    });
    verify(&ok, None).unwrap_or_else(|e| panic!("{e}"));
    assert!(ok.reads_before_grid_wait().is_empty(), "a prefetch reads no value");
    // A load of a buffer the kernel only reads (nested in an if): fine, and listed.
    let early = with_prologue(|b, x, _| {
        let lane = b.lane();
        let zero = b.u32(0);
        let first = b.eq(lane, zero);
        b.if_then(first, |b| {
            let z = b.u32(0);
            b.load(x, z, Type::F32);
        });
    });
    verify(&early, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(early.reads_before_grid_wait(), vec![early.param("x").unwrap()]);
    // A load of a buffer the kernel also writes, a store, a barrier, a cross-lane op: each
    // refused, named.
    let load = with_prologue(|b, _, _| {
        let rw = b.buffer("rw", ScalarType::F32, Access::ReadWrite);
        let z = b.u32(0);
        b.load(rw, z, Type::F32);
    });
    let store = with_prologue(|b, _, out| {
        let z = b.u32(0);
        let f = b.f32(1.0);
        b.store(out, z, f);
    });
    let barrier = with_prologue(|b, _, _| b.barrier(BarrierKind::Lds));
    let shuffle = with_prologue(|b, _, _| {
        let lane = b.lane();
        b.shuffle_xor(lane, 1);
    });
    for (k, op) in [(load, "load"), (store, "store"), (barrier, "barrier"), (shuffle, "shuffle")] {
        let e = verify_error(&k);
        assert!(
            e.contains(&format!("`{op}")) && e.contains("before the grid_dependency_wait"),
            "{e}"
        );
    }
}

/// `out[i] = x[i] * 2` for one wave, `x` staged in LDS by async copies issued before the
/// grid-dependency wait (`src` is the buffer copied from: `x`, or a read-write one).
fn staged_copy(w: u32, read_write: bool) -> Kernel {
    let mut b = KernelBuilder::new("staged_copy", w);
    let access = if read_write { Access::ReadWrite } else { Access::Read };
    let x = b.buffer("x", ScalarType::F32, access);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    let lds = b.lds("ring", ScalarType::F32, w);
    let lane = b.lane();
    let four = b.u32(4);
    let at = b.mul(lane, four);
    b.async_copy(lds, at, x, at, 4);
    b.async_wait(1);
    b.grid_dependency_wait();
    b.async_wait(0);
    let v = b.load(lds, lane, Type::F32);
    let two = b.f32(2.0);
    let y = b.mul(v, two);
    b.store(out, lane, y);
    b.finish()
}

#[test]
fn async_copies_of_read_only_buffers_may_run_before_the_wait() {
    let (mut rng, _seed) = rng();
    for w in WAVES {
        let k = staged_copy(w, false);
        verify(&k, None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(k.reads_before_grid_wait(), vec![k.param("x").unwrap()], "listed");
        let x: Vec<f32> = (0..w).map(|_| rng.gen_range(-4.0f32..4.0)).collect();
        let mut args = [Arg::Buffer(f32_bytes(&x)), Arg::Buffer(vec![0; 4 * w as usize])];
        run(&k, &mut args).unwrap_or_else(|e| panic!("wave {w}: {e}"));
        let want: Vec<f32> = x.iter().map(|v| v * 2.0).collect();
        assert_eq!(bytes_f32(buffer(&args[1])), want, "wave {w}");
        // From a buffer the kernel may write: refused, named.
        let e = verify_error(&staged_copy(w, true));
        assert!(e.contains("`async_copy") && e.contains("before the grid_dependency_wait"), "{e}");
    }
}

#[test]
fn the_wait_is_one_and_top_level() {
    let twice = with_prologue(|b, _, _| b.grid_dependency_wait());
    assert!(verify_error(&twice).contains("a second grid_dependency_wait"));
    let mut b = KernelBuilder::new("nested_wait", 32);
    let lane = b.lane();
    let zero = b.u32(0);
    let first = b.eq(lane, zero);
    b.if_then(first, |b| b.grid_dependency_wait());
    let e = verify_error(&b.finish());
    assert!(e.contains("must be in the kernel's top-level block"), "{e}");
    // A prefetch reads a buffer, nothing else.
    let mut b = KernelBuilder::new("lds_prefetch", 32);
    let lds = b.lds("t", ScalarType::F32, 32);
    let zero = b.u32(0);
    b.push_inst(Op::Prefetch { mem: MemRef::Lds(lds), index: zero }, &[]);
    let e = verify_error(&b.finish());
    assert!(e.contains("expected a buffer"), "{e}");
}
