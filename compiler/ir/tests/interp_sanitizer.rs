//! Every sanitizer class: a planted bug is caught with a message naming the kernel, the op, the
//! workgroup and the lanes, and the corrected kernel passes. At wave 32 and 64.

use crate::interp_util;

use interp_util::*;
use kiln_ir::interp::{self, Arg, InterpError, RunOptions};
use kiln_ir::*;

/// Asserts that `e`'s message names the kernel, the op, the workgroup and the lanes.
fn assert_names(e: &InterpError, kernel: &str, op: &str, wg: [u32; 3], lanes: &str) {
    let msg = e.to_string();
    let [x, y, z] = wg;
    for part in [
        format!("kernel `{kernel}`"),
        format!("({op})"),
        format!("workgroup ({x}, {y}, {z})"),
        lanes.to_string(),
    ] {
        assert!(msg.contains(&part), "message {msg:?} does not contain {part:?}");
    }
    assert!(msg.contains(", inst"), "message {msg:?} names no instruction");
}

fn f32_buf(n: usize) -> Arg {
    Arg::Buffer(f32_bytes(&(0..n).map(|i| i as f32).collect::<Vec<_>>()))
}

fn zeros(n: usize) -> Arg {
    Arg::Buffer(vec![0; 4 * n])
}

/// Two workgroups of one wave copy `x[g*W + lane]` to `out`.
fn copy_kernel(w: u32) -> Kernel {
    let mut b = KernelBuilder::new("oob_global", w);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    b.grid([ShapeExpr::constant(2), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let g = b.workgroup_id(Dim::X);
    let lane = b.lane();
    let wv = b.u32(w);
    let base = b.mul(g, wv);
    let i = b.add(base, lane);
    let v = b.load(x, i, Type::F32);
    b.store(out, i, v);
    b.finish()
}

#[test]
fn out_of_bounds_global() {
    for w in WAVES {
        let wu = w as usize;
        let k = copy_kernel(w);
        let mut args = [f32_buf(2 * wu - 3), zeros(2 * wu)];
        let e = run(&k, &mut args).unwrap_err();
        assert!(matches!(e, InterpError::OutOfBounds { .. }), "{e}");
        assert_names(
            &e,
            "oob_global",
            "load",
            [1, 0, 0],
            &format!("lanes {}..={} (wave 0)", w - 3, w - 1),
        );
        assert!(e.to_string().contains("buffer `x`"), "{e}");
        // Out of bounds is checked even without the sanitizer.
        let opts = RunOptions { sanitize: false, ..RunOptions::default() };
        assert!(interp::run(&k, &mut args, &opts).is_err());

        let mut args = [f32_buf(2 * wu), zeros(2 * wu)];
        run(&k, &mut args).unwrap();
        assert_eq!(bytes_f32(buffer(&args[1]))[2 * wu - 1], (2 * wu - 1) as f32);
    }
}

#[test]
fn the_lowest_failing_workgroup_is_reported() {
    // Every workgroup fails; parallel runs still report workgroup 0.
    let mut b = KernelBuilder::new("all_fail", 32);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    let out = b.buffer("out", ScalarType::F32, Access::Write);
    b.grid([ShapeExpr::constant(4), ShapeExpr::constant(4), ShapeExpr::constant(1)]);
    let lane = b.lane();
    let far = b.u32(1000);
    let i = b.add(lane, far);
    let v = b.load(x, i, Type::F32);
    b.store(out, lane, v);
    let k = b.finish();
    for _ in 0..5 {
        let e = run(&k, &mut [f32_buf(32), zeros(32)]).unwrap_err();
        assert_names(&e, "all_fail", "load", [0, 0, 0], "lanes 0..=31 (wave 0)");
    }
}

#[test]
fn out_of_bounds_lds_and_private() {
    for w in WAVES {
        let mut b = KernelBuilder::new("oob_lds", w);
        let tile = b.lds("tile", ScalarType::F32, w - 1);
        let lane = b.lane();
        let one = b.f32(1.0);
        b.store(tile, lane, one);
        let e = run(&b.finish(), &mut []).unwrap_err();
        assert_names(&e, "oob_lds", "store", [0, 0, 0], &format!("lane {} (wave 0)", w - 1));
        assert!(e.to_string().contains("LDS `tile`"), "{e}");

        let mut b = KernelBuilder::new("oob_private", w);
        let acc = b.private("acc", ScalarType::U32, 4);
        let lane = b.lane();
        let eight = b.u32(8);
        let i = b.rem(lane, eight);
        b.store(acc, i, lane);
        let e = run(&b.finish(), &mut []).unwrap_err();
        assert_names(&e, "oob_private", "store", [0, 0, 0], "lanes 4..=7, 12..=15, 20..=23");
        assert!(e.to_string().contains("private `acc`"), "{e}");
    }
}

#[test]
fn raw_addresses_in_no_buffer_and_read_only_buffers() {
    for w in WAVES {
        let build = |offset: u64, store: bool| {
            let mut b = KernelBuilder::new("raw_address", w);
            let x = b.buffer("x", ScalarType::F32, Access::Read);
            let out = b.buffer("out", ScalarType::F32, Access::Write);
            let lane = b.lane();
            let base = b.buffer_addr(x);
            let off = b.u64(offset);
            let addr = b.add(base, off);
            let v = b.load(MemRef::Global(addr), lane, Type::F32);
            b.store(out, lane, v);
            if store {
                // The verifier cannot see through a raw address; the sanitizer can.
                b.store(MemRef::Global(addr), lane, v);
            }
            b.finish()
        };
        let wu = w as usize;
        let mut args = [f32_buf(wu), zeros(wu)];
        run(&build(0, false), &mut args).unwrap();
        assert_eq!(buffer(&args[1]), buffer(&args[0]));

        let e = run(&build(1 << 41, false), &mut args).unwrap_err();
        assert_names(
            &e,
            "raw_address",
            "load",
            [0, 0, 0],
            &format!("lanes 0..={} (wave 0)", w - 1),
        );
        assert!(e.to_string().contains("in no buffer"), "{e}");

        let e = run(&build(0, true), &mut args).unwrap_err();
        assert!(matches!(e, InterpError::ReadOnly { .. }), "{e}");
        assert_names(
            &e,
            "raw_address",
            "store",
            [0, 0, 0],
            &format!("lanes 0..={} (wave 0)", w - 1),
        );
        assert!(e.to_string().contains("read-only buffer `x`"), "{e}");
    }
}

/// Two waves: each lane writes `tile[lid]`, then reads the other wave's slot `tile[lid ^ W]`,
/// with or without a barrier between.
fn exchange(w: u32, barrier: bool) -> Kernel {
    let mut b = KernelBuilder::new("lds_exchange", w);
    b.workgroup_size([2 * w, 1, 1]);
    let out = b.buffer("out", ScalarType::U32, Access::Write);
    let tile = b.lds("tile", ScalarType::U32, 2 * w);
    let lid = b.local_id();
    b.store(tile, lid, lid);
    if barrier {
        b.barrier(BarrierKind::Lds);
    }
    let wv = b.u32(w);
    let other = b.xor(lid, wv);
    let v = b.load(tile, other, Type::U32);
    b.store(out, lid, v);
    b.finish()
}

#[test]
fn lds_race_between_barriers() {
    for w in WAVES {
        let e = run(&exchange(w, false), &mut [zeros(2 * w as usize)]).unwrap_err();
        assert!(matches!(e, InterpError::LdsRace { .. }), "{e}");
        assert_names(
            &e,
            "lds_exchange",
            "load",
            [0, 0, 0],
            &format!("lanes 0..={} (waves 0, 1)", 2 * w - 1),
        );
        let msg = e.to_string();
        assert!(msg.contains("LDS `tile` byte"), "{msg}");
        assert!(msg.contains("read by wave 0 and written by wave 1"), "{msg}");
        // Without the sanitizer the racy kernel runs (lockstep hides the race).
        let opts = RunOptions { sanitize: false, ..RunOptions::default() };
        interp::run(&exchange(w, false), &mut [zeros(2 * w as usize)], &opts).unwrap();

        let mut args = [zeros(2 * w as usize)];
        run(&exchange(w, true), &mut args).unwrap();
        let got = bytes_u32(buffer(&args[0]));
        assert!(got.iter().enumerate().all(|(i, &v)| v == i as u32 ^ w));
    }
}

#[test]
fn write_after_read_across_waves_is_a_race_and_same_wave_is_not() {
    for w in WAVES {
        // Wave 1 reads slot 0, then wave 0 overwrites it in the same barrier interval.
        let mut b = KernelBuilder::new("war", w);
        b.workgroup_size([2 * w, 1, 1]);
        let out = b.buffer("out", ScalarType::U32, Access::Write);
        let tile = b.lds("tile", ScalarType::U32, 1);
        let lid = b.local_id();
        let wave = b.wave();
        let zero = b.u32(0);
        let first = b.eq(lid, zero);
        b.if_then(first, |b| b.store(tile, zero, lid));
        b.barrier(BarrierKind::Lds);
        let one = b.u32(1);
        let w1 = b.eq(wave, one);
        b.if_then(w1, |b| {
            let v = b.load(tile, zero, Type::U32);
            b.store(out, lid, v);
        });
        let w0 = b.eq(wave, zero);
        b.if_then(w0, |b| b.store(tile, zero, lid));
        let e = run(&b.finish(), &mut [zeros(2 * w as usize)]).unwrap_err();
        assert_names(&e, "war", "store", [0, 0, 0], &format!("lanes 0..={} (wave 0)", w - 1));
        assert!(e.to_string().contains("written by wave 0 and read by wave 1"), "{e}");

        // One wave writing and reading its own bytes needs no barrier.
        let mut b = KernelBuilder::new("same_wave", w);
        let out = b.buffer("out", ScalarType::U32, Access::Write);
        let tile = b.lds("tile", ScalarType::U32, w);
        let lane = b.lane();
        b.store(tile, lane, lane);
        let one = b.u32(1);
        let next = b.xor(lane, one);
        let v = b.load(tile, next, Type::U32);
        b.store(out, lane, v);
        run(&b.finish(), &mut [zeros(w as usize)]).unwrap();
    }
}

#[test]
fn lds_atomics_from_several_waves_do_not_race() {
    for w in WAVES {
        let mut b = KernelBuilder::new("lds_counter", w);
        b.workgroup_size([4 * w, 1, 1]);
        let out = b.buffer("out", ScalarType::U32, Access::Write);
        let counter = b.lds("counter", ScalarType::U32, 1);
        let lid = b.local_id();
        let zero = b.u32(0);
        let first = b.eq(lid, zero);
        b.if_then(first, |b| b.store(counter, zero, zero));
        b.barrier(BarrierKind::Lds);
        let one = b.u32(1);
        let old = b.atomic(AtomicOp::Add, counter, zero, one, Scope::Workgroup);
        b.store(out, lid, old);
        b.barrier(BarrierKind::Lds);
        b.if_then(first, |b| {
            let total = b.load(counter, zero, Type::U32);
            let n = b.u32(4 * w);
            b.store(out, n, total);
        });
        let mut args = [zeros(4 * w as usize + 1)];
        run(&b.finish(), &mut args).unwrap();
        let got = bytes_u32(buffer(&args[0]));
        // Lanes apply their updates in lane order.
        assert!(got[..4 * w as usize].iter().enumerate().all(|(i, &v)| v == i as u32));
        assert_eq!(got[4 * w as usize], 4 * w);
    }
}

#[test]
fn reads_of_lds_never_written() {
    for w in WAVES {
        let build = |writers: u32| {
            let mut b = KernelBuilder::new("lds_uninit", w);
            let out = b.buffer("out", ScalarType::F32, Access::Write);
            let tile = b.lds("tile", ScalarType::F32, w);
            let lane = b.lane();
            let n = b.u32(writers);
            let writes = b.lt(lane, n);
            let one = b.f32(1.0);
            b.if_then(writes, |b| b.store(tile, lane, one));
            b.barrier(BarrierKind::Lds);
            let v = b.load(tile, lane, Type::F32);
            b.store(out, lane, v);
            b.finish()
        };
        let e = run(&build(w / 2), &mut [zeros(w as usize)]).unwrap_err();
        assert!(matches!(e, InterpError::LdsUninit { .. }), "{e}");
        assert_names(
            &e,
            "lds_uninit",
            "load",
            [0, 0, 0],
            &format!("lanes {}..={} (wave 0)", w / 2, w - 1),
        );
        assert!(e.to_string().contains(&format!("LDS `tile` byte {}", 2 * w)), "{e}");
        run(&build(w), &mut [zeros(w as usize)]).unwrap();
    }
}

#[test]
fn barriers_not_reached_by_every_wave() {
    for w in WAVES {
        // A barrier under `wave == 0`: the verifier rejects it; run unverified to see the check.
        let mut b = KernelBuilder::new("divergent_barrier", w);
        b.workgroup_size([2 * w, 1, 1]);
        let wave = b.wave();
        let zero = b.u32(0);
        let first = b.eq(wave, zero);
        b.if_then(first, |b| b.barrier(BarrierKind::Lds));
        let k = b.finish();
        assert!(matches!(run(&k, &mut []), Err(InterpError::Verify { .. })));
        let e = run_unverified(&k, &mut []).unwrap_err();
        assert!(matches!(e, InterpError::DivergentBarrier { .. }), "{e}");
        assert_names(
            &e,
            "divergent_barrier",
            "barrier lds",
            [0, 0, 0],
            &format!("lanes {w}..={} (wave 1) inactive", 2 * w - 1),
        );

        // A barrier inside a loop whose trip count differs per lane: once lane 0 is done, the
        // next barrier misses it.
        let mut b = KernelBuilder::new("loop_barrier", w);
        b.workgroup_size([2 * w, 1, 1]);
        let lid = b.local_id();
        let n = b.u32(2 * w);
        let step = b.u32(2 * w - 1);
        b.for_range(lid, n, step, 1, &[], |b, _, _| {
            b.barrier(BarrierKind::All);
            vec![]
        });
        let e = run_unverified(&b.finish(), &mut []).unwrap_err();
        assert_names(&e, "loop_barrier", "barrier all", [0, 0, 0], "lanes 1..=");

        // Uniform control flow passes.
        let mut b = KernelBuilder::new("uniform_barrier", w);
        b.workgroup_size([2 * w, 1, 1]);
        let lid = b.local_id();
        let zero = b.u32(0);
        let n = b.u32(3);
        let one = b.u32(1);
        b.for_range(zero, n, one, 1, &[], |b, _, _| {
            b.barrier(BarrierKind::Lds);
            vec![]
        });
        let big = b.u32(1 << 20);
        let never = b.gt(lid, big);
        b.if_then(never, |b| b.barrier(BarrierKind::Lds));
        run_unverified(&b.finish(), &mut []).unwrap();
    }
}

#[test]
fn cross_lane_ops_run_by_partial_waves() {
    for w in WAVES {
        // Lanes below `limit` run a cross-lane op; the others skip it. The verifier refuses the
        // divergent `if`; unverified, the sanitizer reports the partial wave, naming the op and
        // the lanes, even where every lane read is active (shuffle up, ballot).
        let build = |limit: u32, kind: u32| {
            let mut b = KernelBuilder::new("partial_wave", w);
            let out = b.buffer("out", ScalarType::U32, Access::Write);
            let lane = b.lane();
            let n = b.u32(limit);
            let inside = b.lt(lane, n);
            b.if_then(inside, |b| {
                let v = match kind {
                    0 => b.shuffle_xor(lane, w / 2),
                    1 => b.broadcast(lane, 0),
                    2 => b.wave_reduce(ReduceOp::Add, lane),
                    3 => b.shuffle(ShuffleMode::Up, lane, 1),
                    4 => {
                        let c = b.u32(0);
                        let src = b.add(lane, c);
                        b.shuffle_idx(lane, src)
                    }
                    5 => {
                        let one = b.u32(1);
                        let bit = b.and(lane, one);
                        let odd = b.eq(bit, one);
                        let mask = b.ballot(odd);
                        b.convert(mask, Type::U32)
                    }
                    6 => {
                        let f = b.convert(lane, Type::F32);
                        b.wave_argmax(f, lane).1
                    }
                    _ => {
                        let f = b.convert(lane, Type::F32);
                        let s = b.tsum(1, &[f]);
                        b.convert(s, Type::U32)
                    }
                };
                b.store(out, lane, v);
            });
            b.finish()
        };
        let ops = [
            "shuffle xor",
            "broadcast",
            "wave_reduce add",
            "shuffle up",
            "shuffle_idx",
            "ballot",
            "wave_argmax",
            "tsum",
        ];
        for (kind, op) in ops.iter().enumerate() {
            let k = build(8, kind as u32);
            let mut args = [zeros(w as usize)];
            let Err(InterpError::Verify { errors, .. }) = run(&k, &mut args) else {
                panic!("{op}: the verifier accepts a cross-lane op under `lane < 8`");
            };
            assert!(errors.to_string().contains("cross-lane op"), "{errors}");
            let e = run_unverified(&k, &mut args).unwrap_err();
            assert!(matches!(e, InterpError::PartialWave { .. }), "{op}: {e}");
            assert_names(
                &e,
                "partial_wave",
                op,
                [0, 0, 0],
                &format!("lanes 0..=7 (wave 0) active, lanes 8..={} (wave 0) inactive", w - 1),
            );
            // Whole waves (every lane inside): the sanitizer lets it run.
            run_unverified(&build(w, kind as u32), &mut args).unwrap();
        }
    }
}

#[test]
fn integer_division_by_zero() {
    for w in WAVES {
        let mut b = KernelBuilder::new("div_zero", w);
        let x = b.buffer("x", ScalarType::I32, Access::Read);
        let y = b.buffer("y", ScalarType::I32, Access::Read);
        let q = b.buffer("q", ScalarType::I32, Access::Write);
        let r = b.buffer("r", ScalarType::I32, Access::Write);
        let lane = b.lane();
        let a = b.load(x, lane, Type::I32);
        let d = b.load(y, lane, Type::I32);
        let qv = b.div(a, d);
        b.store(q, lane, qv);
        let rv = b.rem(a, d);
        b.store(r, lane, rv);
        let k = b.finish();
        let wu = w as usize;
        let xs: Vec<u64> = (0..wu).map(|i| (i as i32 * 7 - 100) as u32 as u64).collect();
        let mut ys: Vec<u64> = (0..wu).map(|i| (i as i32 % 5 + 1) as u32 as u64).collect();
        ys[3] = 0;
        ys[17] = 0;
        let mut args = [
            Arg::Buffer(bits_bytes(&xs, 4)),
            Arg::Buffer(bits_bytes(&ys, 4)),
            zeros(wu),
            zeros(wu),
        ];
        let e = run(&k, &mut args).unwrap_err();
        assert!(matches!(e, InterpError::DivByZero { .. }), "{e}");
        assert_names(&e, "div_zero", "binary div", [0, 0, 0], "lanes 3, 17 (wave 0)");
        // Without the sanitizer: x / 0 is all ones, x % 0 is x.
        let opts = RunOptions { sanitize: false, ..RunOptions::default() };
        interp::run(&k, &mut args, &opts).unwrap();
        let (qs, rs) = (bytes_u32(buffer(&args[2])), bytes_u32(buffer(&args[3])));
        assert_eq!(qs[3], u32::MAX);
        assert_eq!(rs[17], xs[17] as u32);
        assert_eq!(qs[4] as i32, (4 * 7 - 100) / 5);

        ys[3] = 1;
        ys[17] = 1;
        let mut args = [
            Arg::Buffer(bits_bytes(&xs, 4)),
            Arg::Buffer(bits_bytes(&ys, 4)),
            zeros(wu),
            zeros(wu),
        ];
        run(&k, &mut args).unwrap();
    }
}

#[test]
fn loops_that_never_end() {
    for w in WAVES {
        let mut b = KernelBuilder::new("zero_step", w);
        let s = b.scalar_param("step", ScalarType::U32);
        let out = b.buffer("out", ScalarType::U32, Access::Write);
        let lane = b.lane();
        let n = b.u32(w / 2);
        let step = b.arg(s);
        let zero = b.u32(0);
        let c = b.for_range(lane, n, step, 1, &[zero], |b, i, c| vec![b.add(c[0], i)]);
        b.store(out, lane, c[0]);
        let k = b.finish();
        let e = run(&k, &mut [Arg::Scalar(0), zeros(w as usize)]).unwrap_err();
        assert!(matches!(e, InterpError::BadStep { .. }), "{e}");
        assert_names(
            &e,
            "zero_step",
            "for",
            [0, 0, 0],
            &format!("lanes 0..={} (wave 0)", w / 2 - 1),
        );
        run(&k, &mut [Arg::Scalar(3), zeros(w as usize)]).unwrap();
    }
}
