//! The sanitizer's check across workgroups: global bytes one workgroup writes and another reads or
//! writes in the same launch are an error unless a device atomic orders them (the handshake of
//! the split kernels), in both of the interpreter's models (workgroups in parallel, in order).

use crate::interp_util;

use interp_util::*;
use kiln_ir::interp::{self, Arg, InterpError, RunOptions};
use kiln_ir::*;

const GROUPS: u32 = 5;

fn parallel(on: bool) -> RunOptions {
    RunOptions { parallel: on, ..RunOptions::default() }
}

/// Workgroup `g` writes `out[g]` (lane 0), then lane 0 reads `out[(g + shift) % GROUPS]` into
/// `seen[g]`: with `shift` 0 each reads its own; otherwise a neighbour's.
fn neighbour(w: u32, shift: u32) -> Kernel {
    let mut b = KernelBuilder::new("neighbour", w);
    let out = b.buffer("out", ScalarType::U32, Access::ReadWrite);
    let seen = b.buffer("seen", ScalarType::U32, Access::Write);
    b.grid([ShapeExpr::constant(GROUPS as u64), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let g = b.workgroup_id(Dim::X);
    let lane = b.lane();
    let zero = b.u32(0);
    let first = b.eq(lane, zero);
    b.if_then(first, |b| {
        b.store(out, g, g);
        let s = b.u32(shift);
        let n = b.u32(GROUPS);
        let j = b.add(g, s);
        let j = b.rem(j, n);
        let v = b.load(out, j, Type::U32);
        b.store(seen, g, v);
    });
    b.finish()
}

#[test]
fn a_workgroup_reading_anothers_output_is_a_race_whatever_the_order() {
    for w in WAVES {
        let k = neighbour(w, 0);
        for on in [true, false] {
            let mut args = [Arg::Buffer(vec![0; 4 * 5]), Arg::Buffer(vec![0; 4 * 5])];
            interp::run(&k, &mut args, &parallel(on)).unwrap();
            assert_eq!(bytes_u32(buffer(&args[1])), vec![0, 1, 2, 3, 4]);
        }
        let k = neighbour(w, 1);
        let mut messages = Vec::new();
        for on in [true, true, true, false] {
            let mut args = [Arg::Buffer(vec![0; 4 * 5]), Arg::Buffer(vec![0; 4 * 5])];
            let e = interp::run(&k, &mut args, &parallel(on)).unwrap_err();
            assert!(matches!(e, InterpError::WorkgroupRace { .. }), "{e}");
            let msg = e.to_string();
            assert!(msg.contains("kernel `neighbour`") && msg.contains("buffer `out`"), "{msg}");
            if on {
                messages.push(msg);
            } else {
                // In order, workgroup 0 reads byte 4 before workgroup 1 writes it: the write is
                // the access that finds the race.
                assert!(msg.contains("(store)") && msg.contains("was read by workgroup"), "{msg}");
            }
        }
        // In parallel the report does not depend on which workgroup the host ran first.
        assert!(messages.windows(2).all(|m| m[0] == m[1]), "{messages:?}");
        assert!(messages[0].contains("byte 0 of buffer `out`"), "{}", messages[0]);
        // Without the sanitizer nothing is checked.
        let mut args = [Arg::Buffer(vec![0; 4 * 5]), Arg::Buffer(vec![0; 4 * 5])];
        let opts = RunOptions { sanitize: false, ..RunOptions::default() };
        interp::run(&k, &mut args, &opts).unwrap();
    }
}

#[test]
fn two_workgroups_writing_one_byte_race() {
    let mut b = KernelBuilder::new("same_byte", 32);
    let out = b.buffer("out", ScalarType::U8, Access::Write);
    b.grid([ShapeExpr::constant(2), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let g = b.workgroup_id(Dim::X);
    let lane = b.lane();
    let zero = b.u32(0);
    let first = b.eq(lane, zero);
    // Workgroup g writes bytes g..g + 2 (as two u8 stores): byte 1 is written by both.
    b.if_then(first, |b| {
        let v = b.const_bits(ScalarType::U8, 7);
        b.store(out, g, v);
        let one = b.u32(1);
        let i = b.add(g, one);
        b.store(out, i, v);
    });
    let k = b.finish();
    for on in [true, false] {
        let mut args = [Arg::Buffer(vec![0; 3])];
        let e = interp::run(&k, &mut args, &parallel(on)).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("byte 1 of buffer `out`") && msg.contains("written"), "{msg}");
        assert!(msg.contains("workgroup (1, 0, 0)") && msg.contains("(0, 0, 0)"), "{msg}");
    }
}

/// Planted bugs of the last-workgroup handshake ([`handshake`]).
#[derive(Clone, Copy, Default)]
struct Plan {
    /// The lane that writes the workgroup's partial (lane 0 makes the atomic).
    writer: u32,
    /// A `barrier all` between the partial's store and the atomic.
    barrier_before: bool,
    /// The partial is stored after the atomic instead of before.
    late_write: bool,
    /// The lane of the last workgroup that reads the partials.
    reader: u32,
    /// Two waves a workgroup instead of one.
    two_waves: bool,
    /// The count shared through LDS and a `barrier all` (between the atomic and the reader's
    /// fence; a barrier of LDS would leave the workgroup's own partial, written by wave 0,
    /// unordered with a reader in wave 1) instead of a broadcast.
    barrier_after: bool,
    /// The reader's device fence.
    reader_fence: bool,
}

/// Each workgroup stores `partial[g] = g + 1`; lane 0 adds one to `counter[0]`; the workgroup
/// that brings it to `GROUPS` sums the partials into `out[0]` and resets the counter.
fn handshake(w: u32, plan: Plan) -> Kernel {
    let mut b = KernelBuilder::new("handshake", w);
    let partial = b.buffer("partial", ScalarType::U32, Access::ReadWrite);
    let counter = b.buffer("counter", ScalarType::U32, Access::ReadWrite);
    let out = b.buffer("out", ScalarType::U32, Access::Write);
    b.grid([ShapeExpr::constant(GROUPS as u64), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    if plan.two_waves {
        b.workgroup_size([2 * w, 1, 1]);
    }
    let g = b.workgroup_id(Dim::X);
    let lane = b.local_id();
    let zero = b.u32(0);
    let one = b.u32(1);
    let writer = b.u32(plan.writer);
    let writes = b.eq(lane, writer);
    let store = |b: &mut KernelBuilder| {
        b.if_then(writes, |b| {
            let v = b.add(g, one);
            b.store(partial, g, v);
        })
    };
    if !plan.late_write {
        store(&mut b);
    }
    if plan.barrier_before {
        b.barrier(BarrierKind::All);
    }
    let first = b.eq(lane, zero);
    let old = b.if_else(
        first,
        |b| {
            let one = b.u32(1);
            vec![b.atomic(AtomicOp::Add, counter, zero, one, Scope::Device)]
        },
        |b| vec![b.u32(0)],
    )[0];
    if plan.late_write {
        store(&mut b);
    }
    let old = if plan.barrier_after {
        let flag = b.lds("flag", ScalarType::U32, 1);
        b.if_then(first, |b| b.store(flag, zero, old));
        b.barrier(BarrierKind::All);
        b.load(flag, zero, Type::U32)
    } else {
        b.broadcast(old, 0)
    };
    let last = b.u32(GROUPS - 1);
    let is_last = b.eq(old, last);
    b.if_then(is_last, |b| {
        if plan.reader_fence {
            b.fence(Scope::Device);
        }
        let reader = b.u32(plan.reader);
        let reads = b.eq(lane, reader);
        b.if_then(reads, |b| {
            let n = b.u32(GROUPS);
            let sum = b.for_range(zero, n, one, 1, &[zero], |b, i, acc| {
                let v = b.load(partial, i, Type::U32);
                vec![b.add(acc[0], v)]
            })[0];
            b.store(out, zero, sum);
        });
        let first = b.eq(lane, zero);
        b.if_then(first, |b| b.store(counter, zero, zero));
    });
    b.finish()
}

fn run_handshake(w: u32, plan: Plan) -> Result<u32, InterpError> {
    let k = handshake(w, plan);
    let mut args = [
        Arg::Buffer(vec![0; 4 * GROUPS as usize]),
        Arg::Buffer(vec![0; 4]),
        Arg::Buffer(vec![0; 4]),
    ];
    run(&k, &mut args)?;
    assert_eq!(bytes_u32(buffer(&args[1])), vec![0], "the counter is reset");
    Ok(bytes_u32(buffer(&args[2]))[0])
}

#[test]
fn the_last_workgroup_handshake_orders_the_partials() {
    let sum = GROUPS * (GROUPS + 1) / 2;
    let ok = Plan { reader_fence: true, ..Plan::default() };
    for w in WAVES {
        // The lane that made the atomic reads: its atomic acquires (the fence is not needed).
        assert_eq!(run_handshake(w, ok).unwrap(), sum);
        assert_eq!(run_handshake(w, Plan { reader_fence: false, ..ok }).unwrap(), sum);
        // Another lane writes the partial: a `barrier all` before the atomic orders it.
        let other = Plan { writer: 1, barrier_before: true, ..ok };
        assert_eq!(run_handshake(w, other).unwrap(), sum);
        // Another lane of the wave reads after its device fence: the count came by a broadcast,
        // or through LDS and a barrier.
        let reader = Plan { reader: 3, ..ok };
        assert_eq!(run_handshake(w, reader).unwrap(), sum);
        assert_eq!(run_handshake(w, Plan { barrier_after: true, ..reader }).unwrap(), sum);
        // A lane of another wave: after the barrier and its own fence.
        let wave1 = Plan { reader: w + 3, two_waves: true, barrier_after: true, ..ok };
        assert_eq!(run_handshake(w, wave1).unwrap(), sum);
    }
}

#[test]
fn a_broken_handshake_is_a_race() {
    let ok = Plan { reader_fence: true, ..Plan::default() };
    let bugs = [
        ("the partial of another lane, no barrier before the atomic", Plan { writer: 1, ..ok }),
        ("the partial stored after the atomic", Plan { late_write: true, ..ok }),
        (
            "another lane reads, no fence of its own",
            Plan { reader: 3, barrier_after: true, reader_fence: false, ..ok },
        ),
        (
            "a lane of another wave reads, no fence of its own",
            Plan { reader: 35, two_waves: true, barrier_after: true, reader_fence: false, ..ok },
        ),
    ];
    for w in WAVES {
        for (what, plan) in bugs {
            let e = run_handshake(w, plan).expect_err(what);
            assert!(matches!(e, InterpError::WorkgroupRace { .. }), "{what}: {e}");
            let msg = e.to_string();
            assert!(msg.contains("buffer `partial`"), "{what}: {msg}");
            assert!(msg.contains("workgroup (4, 0, 0)") && msg.contains("(load)"), "{what}: {msg}");
        }
    }
}

/// Every workgroup's lane 0 reads `x[0]` into `seen[g]` and adds one to `count[0]`; with
/// `reread`, the first to count reads `x[0]` again after its atomic (into `seen[GROUPS]`); the
/// last to count writes `x[0]` after a device fence. The read before each atomic is published
/// by it, so the last workgroup's write is ordered after it; the first's read after its atomic
/// is ordered by nothing: on a GPU it may come after the write.
fn reread(w: u32, reread: bool) -> Kernel {
    let mut b = KernelBuilder::new("reread", w);
    let x = b.buffer("x", ScalarType::U32, Access::ReadWrite);
    let count = b.buffer("count", ScalarType::U32, Access::ReadWrite);
    let seen = b.buffer("seen", ScalarType::U32, Access::Write);
    b.grid([ShapeExpr::constant(GROUPS as u64), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let g = b.workgroup_id(Dim::X);
    let lane = b.lane();
    let zero = b.u32(0);
    let first = b.eq(lane, zero);
    b.if_then(first, |b| {
        let v = b.load(x, zero, Type::U32);
        b.store(seen, g, v);
        let one = b.u32(1);
        let old = b.atomic(AtomicOp::Add, count, zero, one, Scope::Device);
        let is_first = b.eq(old, zero);
        if reread {
            b.if_then(is_first, |b| {
                let v = b.load(x, zero, Type::U32);
                let at = b.u32(GROUPS);
                b.store(seen, at, v);
            });
        }
        let last = b.u32(GROUPS - 1);
        let is_last = b.eq(old, last);
        b.if_then(is_last, |b| {
            b.fence(Scope::Device);
            let seven = b.u32(7);
            b.store(x, zero, seven);
        });
    });
    b.finish()
}

#[test]
fn a_write_is_checked_against_every_workgroup_that_read_the_byte() {
    for w in WAVES {
        let args = || {
            let seen = vec![0; 4 * (GROUPS as usize + 1)];
            [Arg::Buffer(vec![3, 0, 0, 0]), Arg::Buffer(vec![0; 4]), Arg::Buffer(seen)]
        };
        let mut a = args();
        run(&reread(w, false), &mut a).unwrap();
        assert_eq!(bytes_u32(buffer(&a[0])), vec![7]);
        assert_eq!(bytes_u32(buffer(&a[2])), vec![3, 3, 3, 3, 3, 0]);
        // The unordered read is neither the first nor the last read of the byte (in order and
        // in reverse order): the workgroups between read it too, before their atomics.
        let e = run(&reread(w, true), &mut args()).unwrap_err();
        assert!(matches!(e, InterpError::WorkgroupRace { .. }), "{e}");
        let msg = e.to_string();
        assert!(msg.contains("buffer `x`") && msg.contains("(store)"), "{msg}");
        assert!(msg.contains("was read by workgroup (0, 0, 0)"), "{msg}");
    }
}

/// One workgroup of two waves: lane `l` of wave 0 writes `out[l]`, then (after a barrier of
/// `kind`, or none) lane `l` of wave 1 reads it into `seen[l]`.
fn two_waves(w: u32, barrier: Option<BarrierKind>) -> Kernel {
    let mut b = KernelBuilder::new("two_waves", w);
    let out = b.buffer("out", ScalarType::U32, Access::ReadWrite);
    let seen = b.buffer("seen", ScalarType::U32, Access::Write);
    b.workgroup_size([2 * w, 1, 1]);
    let tid = b.local_id();
    let lane = b.lane();
    let wv = b.u32(w);
    let wave0 = b.lt(tid, wv);
    b.if_then(wave0, |b| b.store(out, lane, tid));
    if let Some(kind) = barrier {
        b.barrier(kind);
    }
    let wave1 = b.ge(tid, wv);
    b.if_then(wave1, |b| {
        let v = b.load(out, lane, Type::U32);
        b.store(seen, lane, v);
    });
    b.finish()
}

#[test]
fn waves_of_one_workgroup_need_a_barrier_all_between_global_accesses() {
    for w in WAVES {
        let n = 4 * w as usize;
        for barrier in [None, Some(BarrierKind::Lds)] {
            let mut args = [Arg::Buffer(vec![0; n]), Arg::Buffer(vec![0; n])];
            let e = run(&two_waves(w, barrier), &mut args).unwrap_err();
            assert!(matches!(e, InterpError::WaveRace { .. }), "{e}");
            let msg = e.to_string();
            assert!(
                msg.contains("byte 0 of buffer `out` read by wave 1 and written by wave 0"),
                "{msg}"
            );
            assert!(msg.contains("(load)") && msg.contains(&format!("lanes {w}..=")), "{msg}");
        }
        let mut args = [Arg::Buffer(vec![0; n]), Arg::Buffer(vec![0; n])];
        run(&two_waves(w, Some(BarrierKind::All)), &mut args).unwrap();
        assert_eq!(bytes_u32(buffer(&args[1])), (0..w).collect::<Vec<_>>());
    }
}

/// One workgroup of two waves: lane 0 of wave 0 writes the `u16` at byte `at` of `out`, then
/// (no barrier) lane 0 of wave 1 reads the 4 bytes from `at - 2` (2-byte aligned) into `seen`.
fn halves(w: u32, at: u32) -> Kernel {
    let mut b = KernelBuilder::new("halves", w);
    let out = b.buffer("out", ScalarType::U16, Access::ReadWrite);
    let seen = b.buffer("seen", ScalarType::U32, Access::Write);
    b.workgroup_size([2 * w, 1, 1]);
    let tid = b.local_id();
    let zero = b.u32(0);
    let first = b.eq(tid, zero);
    b.if_then(first, |b| {
        let i = b.u32(at / 2);
        let v = b.const_bits(ScalarType::U16, 7);
        b.store(out, i, v);
    });
    let wv = b.u32(w);
    let reader = b.eq(tid, wv);
    b.if_then(reader, |b| {
        let i = b.u32(at - 2);
        let v = b.load_with(out, i, Type::U32, IndexUnit::Byte, Some(2));
        b.store(seen, zero, v);
    });
    b.finish()
}

#[test]
fn a_wave_race_is_found_in_a_read_that_straddles_the_shadow_pages() {
    // The read's first two bytes were not written (no race there), its last two were: the race
    // is at the first written byte, in the same page as the read's start or in the next one.
    for w in WAVES {
        for at in [8u32, 64, 66] {
            let mut args = [Arg::Buffer(vec![0; 128]), Arg::Buffer(vec![0; 4])];
            let e = run(&halves(w, at), &mut args).unwrap_err();
            assert!(matches!(e, InterpError::WaveRace { .. }), "{e}");
            let msg = e.to_string();
            let want = format!("byte {at} of buffer `out` read by wave 1 and written by wave 0");
            assert!(msg.contains(&want), "{msg}");
        }
    }
}

#[test]
fn a_result_that_depends_on_the_order_of_the_workgroups_is_refused() {
    // Each workgroup takes a slot with an atomic and writes its id there: no byte is touched by
    // two workgroups, but which slot a workgroup gets depends on the order they run in.
    let mut b = KernelBuilder::new("slots", 32);
    let counter = b.buffer("counter", ScalarType::U32, Access::ReadWrite);
    let out = b.buffer("out", ScalarType::U32, Access::Write);
    b.grid([ShapeExpr::constant(GROUPS as u64), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let g = b.workgroup_id(Dim::X);
    let lane = b.lane();
    let zero = b.u32(0);
    let first = b.eq(lane, zero);
    b.if_then(first, |b| {
        let one = b.u32(1);
        let slot = b.atomic(AtomicOp::Add, counter, zero, one, Scope::Device);
        b.store(out, slot, g);
    });
    let k = b.finish();
    let args = || [Arg::Buffer(vec![0; 4]), Arg::Buffer(vec![0; 4 * GROUPS as usize])];
    let mut a = args();
    let e = run(&k, &mut a).unwrap_err();
    assert!(matches!(e, InterpError::OrderDependent { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("kernel `slots`")
            && msg.contains("byte 0 of buffer `out` is 0x00 with the workgroups run in order and 0x04 in reverse order"),
        "{msg}"
    );
    // Without the sanitizer: one run, in order.
    let mut a = args();
    let opts = RunOptions { sanitize: false, ..RunOptions::default() };
    interp::run(&k, &mut a, &opts).unwrap();
    assert_eq!(bytes_u32(buffer(&a[1])), (0..GROUPS).collect::<Vec<_>>());
}
