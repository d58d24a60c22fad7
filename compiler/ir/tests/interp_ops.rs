//! Op semantics against plain-Rust references: control flow with per-lane loops, ids,
//! cross-lane ops within each wave, integer rules, conversions between integers, bitcasts and
//! vectors, private memory, and global atomics ("the last workgroup finishes"). At wave 32 and 64.

use crate::interp_util;

use interp_util::*;
use kiln_ir::interp::{self, Arg, RunOptions};
use kiln_ir::*;
use rand::Rng;
use ScalarType::*;

/// A workgroup of two waves: `out[lid] = f(x[lid], lane, lid)` for `u32` data.
fn two_wave_kernel(
    w: u32,
    out_ty: ScalarType,
    f: impl FnOnce(&mut KernelBuilder, Value, Value, Value) -> Value,
) -> Kernel {
    two_wave_kernel_of(w, U32, out_ty, f)
}

fn two_wave_kernel_of(
    w: u32,
    in_ty: ScalarType,
    out_ty: ScalarType,
    f: impl FnOnce(&mut KernelBuilder, Value, Value, Value) -> Value,
) -> Kernel {
    let mut b = KernelBuilder::new("two_waves", w);
    b.workgroup_size([2 * w, 1, 1]);
    let x = b.buffer("x", in_ty, Access::Read);
    let out = b.buffer("out", out_ty, Access::Write);
    let lid = b.local_id();
    let lane = b.lane();
    let v = b.load(x, lid, in_ty);
    let r = f(&mut b, v, lane, lid);
    b.store(out, lid, r);
    b.finish()
}

/// Runs a two-wave kernel on `xs` (bit patterns of `size` bytes), returns the output bits.
fn run_two_waves(k: &Kernel, xs: &[u64], size: usize, out_size: usize) -> Vec<u64> {
    let mut args = [Arg::Buffer(bits_bytes(xs, size)), Arg::Buffer(vec![0; xs.len() * out_size])];
    run(k, &mut args).unwrap();
    bytes_bits(buffer(&args[1]), out_size)
}

#[test]
fn shuffles_broadcast_and_ballot_stay_within_the_wave() {
    let (mut rng, _seed) = rng();
    for w in WAVES {
        let wu = w as usize;
        let xs: Vec<u64> = (0..2 * wu).map(|_| rng.gen::<u32>() as u64).collect();
        let per_wave = |f: &dyn Fn(&[u64], usize) -> u64| -> Vec<u64> {
            (0..2 * wu).map(|l| f(&xs[l - l % wu..][..wu], l % wu)).collect()
        };
        for o in [1, 3, w / 2, w - 1] {
            let k = two_wave_kernel(w, U32, |b, v, _, _| b.shuffle_xor(v, o));
            let ou = o as usize;
            assert_eq!(run_two_waves(&k, &xs, 4, 4), per_wave(&|v, i| v[i ^ ou]), "xor {o}");
            let k = two_wave_kernel(w, U32, |b, v, _, _| b.shuffle(ShuffleMode::Up, v, o));
            assert_eq!(
                run_two_waves(&k, &xs, 4, 4),
                per_wave(&|v, i| if i >= ou { v[i - ou] } else { v[i] }),
                "up {o}"
            );
            let k = two_wave_kernel(w, U32, |b, v, _, _| b.shuffle(ShuffleMode::Down, v, o));
            assert_eq!(
                run_two_waves(&k, &xs, 4, 4),
                per_wave(&|v, i| if i + ou < wu { v[i + ou] } else { v[i] }),
                "down {o}"
            );
        }
        let k = two_wave_kernel(w, U32, |b, v, lane, _| {
            let seven = b.u32(7);
            let three = b.u32(3);
            let m = b.mul(lane, seven);
            let src = b.add(m, three);
            b.shuffle_idx(v, src)
        });
        assert_eq!(
            run_two_waves(&k, &xs, 4, 4),
            per_wave(&|v, i| v[(i * 7 + 3) % wu]),
            "shuffle_idx"
        );
        let k = two_wave_kernel(w, U32, |b, v, _, _| b.broadcast(v, 5));
        assert_eq!(run_two_waves(&k, &xs, 4, 4), per_wave(&|v, _| v[5]), "broadcast");
        let k = two_wave_kernel(w, U64, |b, v, _, _| {
            let one = b.u32(1);
            let bit = b.and(v, one);
            let odd = b.eq(bit, one);
            b.ballot(odd)
        });
        let ballot = |v: &[u64], _| {
            v.iter().enumerate().filter(|(_, x)| *x & 1 == 1).fold(0u64, |m, (i, _)| m | 1 << i)
        };
        assert_eq!(run_two_waves(&k, &xs, 4, 8), per_wave(&ballot), "ballot");
    }
}

#[test]
fn ballot_sets_the_bits_of_lanes_whose_condition_holds() {
    // Ballot runs under wave-uniform control only (the verifier's cross-lane rule), so every lane
    // of the wave is active and the mask is that of the condition.
    for w in WAVES {
        let k = two_wave_kernel(w, U64, |b, _, lane, _| {
            let ten = b.u32(10);
            let low = b.lt(lane, ten);
            b.ballot(low)
        });
        let got = run_two_waves(&k, &vec![0; 2 * w as usize], 4, 8);
        assert!(got.iter().all(|&m| m == 0x3ff), "{got:x?}");
    }
}

#[test]
fn wave_reductions_are_butterflies() {
    let (mut rng, _seed) = rng();
    for w in WAVES {
        let wu = w as usize;
        let xs: Vec<u64> = (0..2 * wu).map(|_| rng.gen::<u32>() as u64).collect();
        let per_wave = |f: fn(u32, u32) -> u32| -> Vec<u64> {
            (0..2 * wu)
                .map(|l| {
                    let v: Vec<u32> = xs[l - l % wu..][..wu].iter().map(|&x| x as u32).collect();
                    butterfly(&v, f)[l % wu] as u64
                })
                .collect()
        };
        for (op, f) in [
            (ReduceOp::Add, u32::wrapping_add as fn(u32, u32) -> u32),
            (ReduceOp::Min, |a: u32, b: u32| (a as i32).min(b as i32) as u32),
            (ReduceOp::Max, |a: u32, b: u32| (a as i32).max(b as i32) as u32),
        ] {
            let k = two_wave_kernel_of(w, I32, I32, |b, v, _, _| b.wave_reduce(op, v));
            assert_eq!(run_two_waves(&k, &xs, 4, 4), per_wave(f), "i32 {op:?}");
        }
        let k = two_wave_kernel(w, U32, |b, v, _, _| b.wave_reduce(ReduceOp::Max, v));
        assert_eq!(run_two_waves(&k, &xs, 4, 4), per_wave(|a, b| a.max(b)), "u32 max");

        // Floats with NaN and signed zeros: op(own, partner) with the Min/Max rules.
        let fs: Vec<f32> = (0..2 * wu)
            .map(|_| [f32::NAN, 0.0, -0.0, 1.0, -3.0, wild_f32(&mut rng)][rng.gen_range(0..6)])
            .collect();
        let fx: Vec<u64> = fs.iter().map(|x| x.to_bits() as u64).collect();
        let max = |a: f32, b: f32| if a > b || b.is_nan() { a } else { b };
        let min = |a: f32, b: f32| if a < b || b.is_nan() { a } else { b };
        for (op, f) in [
            (ReduceOp::Max, max as fn(f32, f32) -> f32),
            (ReduceOp::Min, min),
            (ReduceOp::Add, |a, b| a + b),
        ] {
            let k = two_wave_kernel_of(w, F32, F32, |b, v, _, _| b.wave_reduce(op, v));
            let got = run_two_waves(&k, &fx, 4, 4);
            for l in 0..2 * wu {
                let want = butterfly(&fs[l - l % wu..][..wu], f)[l % wu];
                let g = f32::from_bits(got[l] as u32);
                assert!(
                    g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                    "f32 {op:?} lane {l}: {g} vs {want}"
                );
            }
        }
    }
}

#[test]
fn wave_argmax_ties_and_nan() {
    let (mut rng, _seed) = rng();
    for w in WAVES {
        let wu = w as usize;
        for case in 0..6 {
            let fs: Vec<f32> = (0..2 * wu)
                .map(|_| match case {
                    0 => f32::NEG_INFINITY,
                    1 => [0.0, -0.0][rng.gen_range(0..2)],
                    2 => [1.0, 2.0, 2.0, f32::NAN][rng.gen_range(0..4)],
                    3 => f32::NAN,
                    _ => [5.0, wild_f32(&mut rng)][rng.gen_range(0..2)],
                })
                .collect();
            // Indices in scrambled order, so "lowest index" is not "lowest lane".
            let mut idx: Vec<u32> = (0..2 * w).map(|i| i * 3 + 1).collect();
            for i in (1..idx.len()).rev() {
                idx.swap(i, rng.gen_range(0..=i));
            }
            let mut b = KernelBuilder::new("argmax", w);
            b.workgroup_size([2 * w, 1, 1]);
            let x = b.buffer("x", F32, Access::Read);
            let ix = b.buffer("ix", U32, Access::Read);
            let ov = b.buffer("ov", F32, Access::Write);
            let oi = b.buffer("oi", U32, Access::Write);
            let lid = b.local_id();
            let v = b.load(x, lid, Type::F32);
            let i = b.load(ix, lid, Type::U32);
            let (rv, ri) = b.wave_argmax(v, i);
            b.store(ov, lid, rv);
            b.store(oi, lid, ri);
            let mut args = [
                Arg::Buffer(f32_bytes(&fs)),
                Arg::Buffer(bits_bytes(&idx.iter().map(|&i| i as u64).collect::<Vec<_>>(), 4)),
                Arg::Buffer(vec![0; 8 * wu]),
                Arg::Buffer(vec![0; 8 * wu]),
            ];
            run(&b.finish(), &mut args).unwrap();
            let (gv, gi) = (bytes_f32(buffer(&args[2])), bytes_u32(buffer(&args[3])));
            for wave in 0..2 {
                // The winner: largest value (NaN largest), lowest index among equals.
                let lanes = wave * wu..(wave + 1) * wu;
                let best = lanes
                    .clone()
                    .max_by(|&a, &b| {
                        let key =
                            |l: usize| (fs[l].is_nan(), if fs[l].is_nan() { 0.0 } else { fs[l] });
                        let (ka, kb) = (key(a), key(b));
                        ka.0.cmp(&kb.0)
                            .then(ka.1.partial_cmp(&kb.1).unwrap())
                            .then(idx[b].cmp(&idx[a]))
                    })
                    .unwrap();
                for l in lanes {
                    assert_eq!(gi[l], idx[best], "wave {w}, case {case}, lane {l}");
                    assert!(
                        gv[l].to_bits() == fs[best].to_bits()
                            || (gv[l].is_nan() && fs[best].is_nan())
                    );
                }
            }
        }
    }
}

#[test]
fn per_lane_loops_and_merged_ifs() {
    for w in WAVES {
        // Lane l runs i in 0..l carrying (sum, odd count); an if inside yields per lane.
        let mut b = KernelBuilder::new("loops", w);
        b.workgroup_size([2 * w, 1, 1]);
        let out = b.buffer("out", U32, Access::Write);
        let lid = b.local_id();
        let zero = b.u32(0);
        let one = b.u32(1);
        let two = b.u32(2);
        let r = b.for_range(zero, lid, one, 1, &[zero, zero], |b, i, c| {
            let bit = b.and(i, one);
            let odd = b.eq(bit, one);
            let add = b.if_else(odd, |b| vec![b.mul(i, two), b.u32(1)], |_| vec![i, zero]);
            vec![b.add(c[0], add[0]), b.add(c[1], add[1])]
        });
        let i2 = b.mul(lid, two);
        b.store(out, i2, r[0]);
        let i21 = b.add(i2, one);
        b.store(out, i21, r[1]);
        let mut args = [Arg::Buffer(vec![0; 16 * w as usize])];
        run(&b.finish(), &mut args).unwrap();
        let got = bytes_u32(buffer(&args[0]));
        for l in 0..2 * w {
            let sum: u32 = (0..l).map(|i| if i % 2 == 1 { 2 * i } else { i }).sum();
            let odd = (0..l).filter(|i| i % 2 == 1).count() as u32;
            assert_eq!((got[2 * l as usize], got[2 * l as usize + 1]), (sum, odd), "lane {l}");
        }
    }
}

#[test]
fn loop_corner_cases() {
    for w in WAVES {
        // Swapped carried values (a, b) -> (b, a + b); the index yielded as a carried value; a
        // signed loop with negative bounds; a u32 loop ending next to u32::MAX.
        let mut b = KernelBuilder::new("corners", w);
        let out = b.buffer("out", U32, Access::Write);
        let lane = b.lane();
        let zero = b.u32(0);
        let one = b.u32(1);
        let fib =
            b.for_range(zero, lane, one, 1, &[zero, one], |b, _, c| vec![c[1], b.add(c[0], c[1])]);
        let last = b.for_range(zero, lane, one, 1, &[zero], |_, i, _| vec![i]);
        let li = b.convert(lane, I32);
        let five = b.i32(5);
        let start = b.i32(-5);
        let end = b.sub(li, five);
        let two = b.i32(2);
        let izero = b.i32(0);
        let signed = b.for_range(start, end, two, 1, &[izero], |b, i, c| vec![b.add(c[0], i)]);
        let s = b.bitcast(signed[0], U32);
        let near = b.u32(u32::MAX - 10);
        let max = b.u32(u32::MAX);
        let four = b.u32(4);
        let count = b.for_range(near, max, four, 1, &[zero], |b, _, c| {
            let one = b.u32(1);
            vec![b.add(c[0], one)]
        });
        let wv = b.u32(w);
        let slots: Vec<Value> = (0..4)
            .map(|k| {
                let kv = b.u32(k);
                let base = b.mul(kv, wv);
                b.add(base, lane)
            })
            .collect();
        b.store(out, slots[0], fib[0]);
        b.store(out, slots[1], last[0]);
        b.store(out, slots[2], s);
        b.store(out, slots[3], count[0]);
        let mut args = [Arg::Buffer(vec![0; 16 * w as usize])];
        run(&b.finish(), &mut args).unwrap();
        let got = bytes_u32(buffer(&args[0]));
        let wu = w as usize;
        for l in 0..wu {
            let (mut a, mut c) = (0u32, 1u32);
            for _ in 0..l {
                (a, c) = (c, a.wrapping_add(c));
            }
            assert_eq!(got[l], a, "fib lane {l}");
            assert_eq!(got[wu + l], l.saturating_sub(1) as u32, "last index lane {l}");
            let s: i32 = (-5..l as i32 - 5).step_by(2).sum();
            assert_eq!(got[2 * wu + l] as i32, s, "signed loop lane {l}");
            assert_eq!(got[3 * wu + l], 3, "near u32::MAX lane {l}");
        }
    }
}

#[test]
fn ids_in_three_dimensions() {
    for w in WAVES {
        let size = [8u32, 4, 2];
        let mut b = KernelBuilder::new("ids", w);
        b.workgroup_size(size);
        b.grid([ShapeExpr::constant(2), ShapeExpr::constant(3), ShapeExpr::constant(1)]);
        let out = b.buffer("out", U32, Access::Write);
        let kinds = [
            IdKind::LocalId(Dim::X),
            IdKind::LocalId(Dim::Y),
            IdKind::LocalId(Dim::Z),
            IdKind::LocalLinear,
            IdKind::Lane,
            IdKind::Wave,
            IdKind::NumWaves,
            IdKind::WaveSize,
            IdKind::WorkgroupId(Dim::X),
            IdKind::WorkgroupId(Dim::Y),
            IdKind::WorkgroupSize(Dim::Y),
            IdKind::NumWorkgroups(Dim::Y),
        ];
        let n = kinds.len() as u32;
        let lin = b.local_id();
        let gx = b.workgroup_id(Dim::X);
        let gy = b.workgroup_id(Dim::Y);
        let two = b.u32(2);
        let gy2 = b.mul(gy, two);
        let g = b.add(gy2, gx);
        let c64 = b.u32(64);
        let gbase = b.mul(g, c64);
        let item = b.add(gbase, lin);
        let nv = b.u32(n);
        let base = b.mul(item, nv);
        for (j, &kind) in kinds.iter().enumerate() {
            let v = b.id(kind);
            let jv = b.u32(j as u32);
            let at = b.add(base, jv);
            b.store(out, at, v);
        }
        let mut args = [Arg::Buffer(vec![0; 4 * 6 * 64 * kinds.len()])];
        run(&b.finish(), &mut args).unwrap();
        let got = bytes_u32(buffer(&args[0]));
        for g in 0..6u32 {
            for lin in 0..64u32 {
                let want = [
                    lin % 8,
                    (lin / 8) % 4,
                    lin / 32,
                    lin,
                    lin % w,
                    lin / w,
                    64 / w,
                    w,
                    g % 2,
                    g / 2,
                    4,
                    3,
                ];
                let at = ((g * 64 + lin) * n) as usize;
                assert_eq!(&got[at..at + n as usize], &want, "workgroup {g}, lane {lin}");
            }
        }
    }
}

#[test]
fn integer_rules() {
    // (type, op, a, b, want) with values as bit patterns of the type.
    let cases: &[(ScalarType, BinaryOp, i64, i64, i64)] = &[
        (U8, BinaryOp::Add, 200, 100, 44),
        (I8, BinaryOp::Mul, 100, 3, 44),
        (I16, BinaryOp::Sub, -32768, 1, 32767),
        (I32, BinaryOp::Div, -7, 2, -3),
        (I32, BinaryOp::Rem, -7, 2, -1),
        (I32, BinaryOp::Div, i32::MIN as i64, -1, i32::MIN as i64),
        (I32, BinaryOp::Rem, i32::MIN as i64, -1, 0),
        (U32, BinaryOp::Div, -7, 2, (u32::MAX / 2 - 3) as i64),
        (U32, BinaryOp::Shl, 1, 33, 2),
        (I8, BinaryOp::Shr, -128, 9, -64),
        (U8, BinaryOp::Shr, 128, 9, 64),
        (I32, BinaryOp::Shr, -1, 31, -1),
        (U64, BinaryOp::Shl, 1, 64 + 63, i64::MIN),
        (I32, BinaryOp::Min, -1, 1, -1),
        (U32, BinaryOp::Min, -1, 1, 1),
        (I16, BinaryOp::Max, -5, -6, -5),
        (U16, BinaryOp::Xor, 0xff00, 0x0ff0, 0xf0f0),
    ];
    for &(ty, op, a, b, want) in cases {
        let mask = if ty.bits() == 64 { u64::MAX } else { (1u64 << ty.bits()) - 1 };
        let got =
            map(ty, ty, &[(a as u64) & mask, (b as u64) & mask], |k, v| k.binary(op, v[0], v[1]));
        assert_eq!(got, (want as u64) & mask, "{ty} {op:?} {a} {b}");
    }
    let unary: &[(ScalarType, UnaryOp, i64, i64)] = &[
        (I32, UnaryOp::Neg, i32::MIN as i64, i32::MIN as i64),
        (I32, UnaryOp::Abs, i32::MIN as i64, i32::MIN as i64),
        (I8, UnaryOp::Abs, -5, 5),
        (U8, UnaryOp::Not, 0x0f, 0xf0),
        (U32, UnaryOp::Popcount, 0xf0f0, 8),
        (I16, UnaryOp::Popcount, -1, 16),
        (U32, UnaryOp::Ctz, 0, 32),
        (U64, UnaryOp::Ctz, 0, 64),
        (I32, UnaryOp::Ctz, 8, 3),
    ];
    for &(ty, op, a, want) in unary {
        let mask = if ty.bits() == 64 { u64::MAX } else { (1u64 << ty.bits()) - 1 };
        let got = map(ty, ty, &[(a as u64) & mask, 0], |k, v| k.unary(op, v[0]));
        assert_eq!(got, (want as u64) & mask, "{ty} {op:?} {a}");
    }
}

/// Runs `f` on one lane: inputs `xs` of type `ty` (the first one or two), returns the output bits.
fn map(
    ty: ScalarType,
    out: ScalarType,
    xs: &[u64],
    f: impl Fn(&mut KernelBuilder, &[Value]) -> Value,
) -> u64 {
    let mut results = Vec::new();
    for w in WAVES {
        let mut b = KernelBuilder::new("map", w);
        let x = b.buffer("x", ty, Access::Read);
        let o = b.buffer("out", out, Access::Write);
        let zero = b.u32(0);
        let one = b.u32(1);
        let a = b.load(x, zero, ty);
        let c = b.load(x, one, ty);
        let r = f(&mut b, &[a, c]);
        b.store(o, zero, r);
        let mut args = [Arg::Buffer(bits_bytes(xs, ty.bytes() as usize)), Arg::Buffer(vec![0; 8])];
        run(&b.finish(), &mut args).unwrap();
        results.push(bytes_bits(buffer(&args[1]), out.bytes() as usize)[0]);
    }
    assert_eq!(results[0], results[1]);
    results[0]
}

#[test]
fn integer_conversions_follow_the_source() {
    let cases: &[(ScalarType, ScalarType, u64, u64)] = &[
        (I8, U32, 0xff, 0xffff_ffff), // sign-extended: the source is signed
        (U8, I32, 0xff, 0xff),
        (I32, U16, 0xffff_ffff, 0xffff), // truncated
        (U64, I8, 0x1234_5681, 0x81),
        (I16, I64, 0x8000, 0xffff_ffff_ffff_8000),
        (U32, F32, 0xffff_ffff, 4294967296f32.to_bits() as u64),
        (I32, F64, 0xffff_fffe, (-2f64).to_bits()),
    ];
    for &(from, to, x, want) in cases {
        assert_eq!(map(from, to, &[x, 0], |b, v| b.convert(v[0], to)), want, "{from} -> {to}");
    }
    // i1 converts to 0 / 1 (not -1); floats convert to i1 by truncating and saturating.
    for (x, want) in [(0u64, 0u64), (7, 1)] {
        let got = map(U32, I32, &[x, 0], |b, v| {
            let zero = b.u32(0);
            let nz = b.ne(v[0], zero);
            b.convert(nz, I32)
        });
        assert_eq!(got, want);
        let got = map(U32, F32, &[x, 0], |b, v| {
            let zero = b.u32(0);
            let nz = b.ne(v[0], zero);
            b.convert(nz, F32)
        });
        assert_eq!(f32::from_bits(got as u32), want as f32);
    }
}

#[test]
fn bitcasts_and_vectors_are_little_endian() {
    let (mut rng, _seed) = rng();
    for w in WAVES {
        let wu = w as usize;
        let xs: Vec<f32> = (0..4 * wu).map(|_| wild_f32(&mut rng)).collect();
        let mut b = KernelBuilder::new("vectors", w);
        let x = b.buffer("x", F32, Access::Read);
        let sum = b.buffer("sum", F32, Access::Write);
        let halves = b.buffer("halves", U16, Access::Write);
        let words = b.buffer("words", U32, Access::Write);
        let lane = b.lane();
        let four = b.u32(4);
        let i = b.mul(lane, four);
        let v = b.load(x, i, Type::vector(F32, 4));
        let twice = b.add(v, v);
        let e: Vec<Value> = (0..4).map(|k| b.extract(twice, k)).collect();
        let s01 = b.add(e[0], e[1]);
        let s23 = b.add(e[2], e[3]);
        let s = b.add(s01, s23);
        b.store(sum, lane, s);
        // f32 -> f16 x2 -> u32 -> u16 x2.
        let h0 = b.convert(e[0], ScalarType::F16);
        let h1 = b.convert(e[1], ScalarType::F16);
        let pair = b.make_vector(&[h0, h1]);
        let word = b.bitcast(pair, U32);
        let as_u16 = b.bitcast(word, Type::vector(U16, 2));
        let two = b.u32(2);
        let hi = b.mul(lane, two);
        b.store(halves, hi, as_u16);
        // u64 -> u32 x2: element 0 is the low half.
        let bits0 = b.bitcast(e[0], U32);
        let bits1 = b.bitcast(e[1], U32);
        let wide = b.make_vector(&[bits0, bits1]);
        let as_u64 = b.bitcast(wide, U64);
        let back = b.bitcast(as_u64, Type::vector(U32, 2));
        b.store(words, hi, back);
        let mut args = [
            Arg::Buffer(f32_bytes(&xs)),
            Arg::Buffer(vec![0; 4 * wu]),
            Arg::Buffer(vec![0; 4 * wu]),
            Arg::Buffer(vec![0; 8 * wu]),
        ];
        run(&b.finish(), &mut args).unwrap();
        let sums = bytes_f32(buffer(&args[1]));
        let hs = bytes_bits(buffer(&args[2]), 2);
        let ws = bytes_u32(buffer(&args[3]));
        for l in 0..wu {
            let t: Vec<f32> = xs[4 * l..4 * l + 4].iter().map(|x| x + x).collect();
            assert_eq!(sums[l].to_bits(), ((t[0] + t[1]) + (t[2] + t[3])).to_bits());
            assert_eq!(hs[2 * l], half::f16::from_f32(t[0]).to_bits() as u64);
            assert_eq!(hs[2 * l + 1], half::f16::from_f32(t[1]).to_bits() as u64);
            assert_eq!((ws[2 * l], ws[2 * l + 1]), (t[0].to_bits(), t[1].to_bits()));
        }
    }
}

#[test]
fn private_memory_is_per_lane() {
    for w in WAVES {
        let mut b = KernelBuilder::new("private", w);
        let out = b.buffer("out", U32, Access::Write);
        let scratch = b.private("scratch", U32, 4);
        let lane = b.lane();
        for j in 0..4 {
            let jv = b.u32(j);
            let v = b.mul(lane, jv);
            b.store(scratch, jv, v);
        }
        let zero = b.u32(0);
        let four = b.u32(4);
        let one = b.u32(1);
        let s = b.for_range(zero, four, one, 1, &[zero], |b, j, c| {
            let v = b.load(scratch, j, Type::U32);
            vec![b.add(c[0], v)]
        });
        b.store(out, lane, s[0]);
        let mut args = [Arg::Buffer(vec![0; 4 * w as usize])];
        run(&b.finish(), &mut args).unwrap();
        assert!(bytes_u32(buffer(&args[0])).iter().enumerate().all(|(l, &v)| v == 6 * l as u32));
    }
}

/// Each workgroup sums its wave into `partial[g]`; the workgroup that increments the counter last
/// sums the partials in order into `out[0]` and resets the counter for the next launch.
fn last_block_sum(w: u32) -> Kernel {
    let mut b = KernelBuilder::new("last_block_sum", w);
    let x = b.buffer("x", F32, Access::Read);
    let partial = b.buffer("partial", F32, Access::ReadWrite);
    let counter = b.buffer("counter", U32, Access::ReadWrite);
    let out = b.buffer("out", F32, Access::Write);
    let groups = b.scalar_param("groups", U32);
    b.grid([ShapeExpr::scaled(&[groups], 1, 1), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let g = b.workgroup_id(Dim::X);
    let lane = b.lane();
    let wv = b.u32(w);
    let base = b.mul(g, wv);
    let i = b.add(base, lane);
    let v = b.load(x, i, Type::F32);
    let s = b.wave_reduce(ReduceOp::Add, v);
    let zero = b.u32(0);
    let lane0 = b.eq(lane, zero);
    b.if_then(lane0, |b| {
        b.store(partial, g, s);
        b.fence(Scope::Device);
        let one = b.u32(1);
        let old = b.atomic(AtomicOp::Add, counter, zero, one, Scope::Device);
        let n = b.arg(groups);
        let last_old = b.sub(n, one);
        let last = b.eq(old, last_old);
        b.if_then(last, |b| {
            b.fence(Scope::Device);
            let z = b.f32(0.0);
            let total = b.for_range(zero, n, one, 1, &[z], |b, k, c| {
                let p = b.load(partial, k, Type::F32);
                vec![b.add(c[0], p)]
            });
            b.store(out, zero, total[0]);
            b.store(counter, zero, zero);
        });
    });
    b.finish()
}

#[test]
fn the_last_workgroup_finishes() {
    let (mut rng, _seed) = rng();
    for w in WAVES {
        let groups = 37usize;
        let xs: Vec<f32> = (0..groups * w as usize).map(|_| wild_f32(&mut rng)).collect();
        let k = last_block_sum(w);
        let mut args = [
            Arg::Buffer(f32_bytes(&xs)),
            Arg::Buffer(vec![0; 4 * groups]),
            Arg::Buffer(vec![0; 4]),
            Arg::Buffer(vec![0; 4]),
            Arg::Scalar(groups as u64),
        ];
        let want =
            xs.chunks(w as usize).map(|c| butterfly(c, |a, b| a + b)[0]).fold(0.0f32, |a, p| a + p);
        // Twice: the kernel resets its counter, so a replay works too.
        for _ in 0..2 {
            let stats = interp::run(&k, &mut args, &RunOptions::default()).unwrap();
            assert_eq!(stats.workgroups, groups as u64);
            assert_eq!(bytes_f32(buffer(&args[3]))[0].to_bits(), want.to_bits());
            assert_eq!(bytes_u32(buffer(&args[2]))[0], 0);
        }
    }
}

#[test]
fn launch_errors_name_the_kernel() {
    let k = last_block_sum(32);
    let e = run(&k, &mut [Arg::Scalar(1)]).unwrap_err();
    assert!(
        e.to_string().contains("kernel `last_block_sum`: bad launch: 1 arguments for 5 parameters"),
        "{e}"
    );
    let mut args = [
        Arg::Buffer(vec![]),
        Arg::Buffer(vec![]),
        Arg::Buffer(vec![]),
        Arg::Buffer(vec![]),
        Arg::Buffer(vec![]),
    ];
    let e = run(&k, &mut args).unwrap_err();
    assert!(e.to_string().contains("`groups` is a scalar, got a buffer"), "{e}");
    // A buffer shorter than its declared length is refused before launch.
    let k = kiln_ir::examples::workgroup_sum(32, 64);
    let mut args =
        [Arg::Buffer(vec![0; 40]), Arg::Buffer(vec![0; 4]), Arg::Scalar(11), Arg::Scalar(1)];
    let e = run(&k, &mut args).unwrap_err();
    assert!(e.to_string().contains("buffer `x` has 40 bytes, needs 44"), "{e}");
    // Sizes that overflow are errors, not panics.
    let opts = RunOptions { grid: Some([u32::MAX; 3]), ..RunOptions::default() };
    let mut args =
        [Arg::Buffer(vec![0; 44]), Arg::Buffer(vec![0; 4]), Arg::Scalar(11), Arg::Scalar(1)];
    let e = interp::run(&k, &mut args, &opts).unwrap_err();
    assert!(e.to_string().contains("bad launch: a grid of"), "{e}");
    let mut b = KernelBuilder::new("huge", 32);
    let n = b.scalar_param("n", U64);
    b.buffer_with_len("x", F32, Access::Read, ShapeExpr::scaled(&[n, n], 1, 1));
    let e = run(&b.finish(), &mut [Arg::Scalar(u64::MAX), Arg::Buffer(vec![])]).unwrap_err();
    assert!(e.to_string().contains("the length of `x` (n*n) overflows 64 bits"), "{e}");
    let max = u32::MAX as u64;
    let mut args = [Arg::Buffer(vec![]), Arg::Buffer(vec![]), Arg::Scalar(max), Arg::Scalar(max)];
    assert!(run(&k, &mut args).is_err());
}
