//! The packed ops (issue 11) against plain-Rust models on random and edge inputs, at wave 32 and
//! 64: the byte permute, the integer dot products (overflowing accumulators, -128 x -128,
//! 255 x 255), the f16 pair dot (NaN, infinities, denormal halves), the packed conversions; and
//! the verifier refusing a dot flavour on a target without it, naming the archs that have it.

use crate::interp_util;

use half::f16;
use interp_util::*;
use kiln_ir::interp::Arg;
use kiln_ir::target::Target;
use kiln_ir::*;
use rand::rngs::StdRng;
use rand::Rng;

/// `out[l*n..] = f(x[3l], x[3l+1], x[3l+2])` over two waves, the result `n` `u32` a lane.
fn kernel(w: u32, n: u32, f: impl FnOnce(&mut KernelBuilder, [Value; 3]) -> Value) -> Kernel {
    let mut b = KernelBuilder::new("packed", w);
    b.workgroup_size([2 * w, 1, 1]);
    let x = b.buffer("x", ScalarType::U32, Access::Read);
    let out = b.buffer("out", ScalarType::U32, Access::Write);
    let lid = b.local_id();
    let three = b.u32(3);
    let i = b.mul(lid, three);
    let ins = [0, 1, 2].map(|k| {
        let k = b.u32(k);
        let j = b.add(i, k);
        b.load(x, j, Type::U32)
    });
    let r = f(&mut b, ins);
    let nn = b.u32(n);
    let j = b.mul(lid, nn);
    b.store(out, j, r);
    b.finish()
}

/// Runs `k` on triples, returns `n` words a lane.
fn run_triples(k: &Kernel, xs: &[[u32; 3]], n: usize) -> Vec<u32> {
    let flat: Vec<u64> = xs.iter().flatten().map(|&v| v as u64).collect();
    let mut args = [Arg::Buffer(bits_bytes(&flat, 4)), Arg::Buffer(vec![0; xs.len() * 4 * n])];
    run(k, &mut args).unwrap();
    bytes_u32(buffer(&args[1]))
}

const EDGE_WORDS: [u32; 10] = [
    0,
    0x8080_8080,
    0xffff_ffff,
    0x7f7f_7f7f,
    0x0102_0304,
    0x80ff_7f01,
    0x7fff_ffff,
    0x8000_0000,
    0x0f0f_f0f0,
    0xdead_beef,
];

/// Triples for two waves: every edge pair first, then random ones.
fn triples(rng: &mut StdRng, w: u32, edge: &[u32]) -> Vec<[u32; 3]> {
    let mut v = vec![];
    for (i, &a) in edge.iter().enumerate() {
        for (j, &b) in edge.iter().enumerate() {
            v.push([a, b, edge[(i + j) % edge.len()]]);
        }
    }
    v.truncate(2 * w as usize);
    while v.len() < 2 * w as usize {
        v.push([rng.gen(), rng.gen(), rng.gen()]);
    }
    v
}

fn bytes(x: u32) -> [u8; 4] {
    x.to_le_bytes()
}

#[test]
fn perm_picks_bytes_of_b_a() {
    let (mut rng, _seed) = rng();
    for w in WAVES {
        for _ in 0..8 {
            let sel: [u8; 4] = std::array::from_fn(|_| rng.gen_range(0..8));
            let xs = triples(&mut rng, w, &EDGE_WORDS);
            let k = kernel(w, 1, |b, [a, c, _]| b.perm(a, c, sel));
            let want: Vec<u32> = xs
                .iter()
                .map(|&[a, c, _]| {
                    let all = [bytes(a), bytes(c)].concat();
                    u32::from_le_bytes(sel.map(|s| all[s as usize]))
                })
                .collect();
            assert_eq!(run_triples(&k, &xs, 1), want, "selector {sel:?}");
        }
    }
}

fn dot_model(op: DotOp, a: u32, b: u32, acc: u32) -> u32 {
    let (ba, bb) = (bytes(a), bytes(b));
    let lane = |x: u8, signed: bool| if signed { x as i8 as i64 } else { x as i64 };
    let (sa, sb) = match op {
        DotOp::I8 => (true, true),
        DotOp::U8 => (false, false),
        DotOp::I8U8 => (true, false),
        DotOp::F16 | DotOp::F16Approx => unreachable!(),
    };
    let accw = if op == DotOp::U8 { acc as i64 } else { acc as i32 as i64 };
    let s: i64 = (0..4).map(|i| lane(ba[i], sa) * lane(bb[i], sb)).sum();
    (accw + s) as u32
}

#[test]
fn integer_dots_wrap_like_the_model() {
    let (mut rng, _seed) = rng();
    let mut edge = EDGE_WORDS.to_vec();
    edge.extend([i32::MAX as u32, i32::MIN as u32, 0xffff_0000]);
    for w in WAVES {
        for op in [DotOp::I8, DotOp::U8, DotOp::I8U8] {
            let xs = triples(&mut rng, w, &edge);
            let k = kernel(w, 1, |b, [a, c, acc]| {
                if op == DotOp::U8 {
                    b.dot(op, a, c, acc)
                } else {
                    let acc = b.bitcast(acc, Type::I32);
                    let r = b.dot(op, a, c, acc);
                    b.bitcast(r, Type::U32)
                }
            });
            let want: Vec<u32> = xs.iter().map(|&[a, c, acc]| dot_model(op, a, c, acc)).collect();
            assert_eq!(run_triples(&k, &xs, 1), want, "{op:?}");
        }
    }
    // The edges by hand: -128 * -128 * 4 = 65536; 255 * 255 * 4 = 260100; MAX + 1 wraps.
    assert_eq!(dot_model(DotOp::I8, 0x8080_8080, 0x8080_8080, 0), 65536);
    assert_eq!(dot_model(DotOp::U8, u32::MAX, u32::MAX, 0), 260_100);
    assert_eq!(dot_model(DotOp::I8U8, u32::MAX, u32::MAX, 0), (-1020i32) as u32);
    assert_eq!(dot_model(DotOp::I8, 0x0000_0001, 0x0000_0001, i32::MAX as u32), i32::MIN as u32);
}

const EDGE_HALVES: [u16; 10] =
    [0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x83ff, 0x7bff, 0x3c00, 0xbc01];

fn fdot2_model(a: u32, b: u32, c: u32) -> u32 {
    let h = |x: u32, i: u32| f16::from_bits((x >> (16 * i)) as u16).to_f32();
    let inner = h(a, 1).mul_add(h(b, 1), f32::from_bits(c));
    h(a, 0).mul_add(h(b, 0), inner).to_bits()
}

fn same_float(got: u32, want: u32) -> bool {
    got == want || (f32::from_bits(got).is_nan() && f32::from_bits(want).is_nan())
}

#[test]
fn fdot2_is_the_fma_chain_high_pair_first() {
    let (mut rng, _seed) = rng();
    let mut edge: Vec<u32> = vec![];
    for (i, &h) in EDGE_HALVES.iter().enumerate() {
        edge.push((h as u32) << 16 | EDGE_HALVES[(i + 3) % EDGE_HALVES.len()] as u32);
    }
    edge.extend([0x7f80_0000, 0x0000_0001, 0x7f7f_ffff, 0xff80_0000]);
    for w in WAVES {
        for op in [DotOp::F16, DotOp::F16Approx] {
            let xs = triples(&mut rng, w, &edge);
            let h2 = Type::vector(ScalarType::F16, 2);
            let k = kernel(w, 1, |b, [a, c, acc]| {
                let (ha, hc, f) = (b.bitcast(a, h2), b.bitcast(c, h2), b.bitcast(acc, Type::F32));
                let r = b.dot(op, ha, hc, f);
                b.bitcast(r, Type::U32)
            });
            let got = run_triples(&k, &xs, 1);
            for (&[a, c, acc], &g) in xs.iter().zip(&got) {
                let want = fdot2_model(a, c, acc);
                assert!(same_float(g, want), "{op:?} {a:#x} {c:#x} {acc:#x}: {g:#x} != {want:#x}");
            }
        }
    }
    // The order matters: 2*1 + round(2^-24 * 1 + -2) rounds the inner sum to -2 (a tie, to
    // even), giving 0, where the other order would give 2^-24.
    let (one, two, tiny) = (0x3c00u32, 0x4000u32, 0x0001u32);
    assert_eq!(fdot2_model(tiny << 16 | two, one << 16 | one, (-2.0f32).to_bits()), 0);
}

#[test]
fn packed_conversions_match_the_model() {
    let (mut rng, _seed) = rng();
    let mut edge = EDGE_WORDS.to_vec();
    for f in [65520.0f32, 65519.99, 1e-8, f32::NAN, 2049.0, -0.0, 5.96e-8, f32::INFINITY] {
        edge.push(f.to_bits());
    }
    for w in WAVES {
        let xs = triples(&mut rng, w, &edge);
        let k = kernel(w, 1, |b, [a, c, _]| {
            let (fa, fc) = (b.bitcast(a, Type::F32), b.bitcast(c, Type::F32));
            let v = b.make_vector(&[fa, fc]);
            let h = b.packed_convert(PackedConvertOp::F32x2ToF16x2, v);
            b.bitcast(h, Type::U32)
        });
        let got = run_triples(&k, &xs, 1);
        for (&[a, c, _], &g) in xs.iter().zip(&got) {
            for (x, gh) in [(a, g as u16), (c, (g >> 16) as u16)] {
                let want = f16::from_f32(f32::from_bits(x));
                let ok = gh == want.to_bits() || (want.is_nan() && f16::from_bits(gh).is_nan());
                assert!(ok, "f32 {x:#x} -> f16 {gh:#x}, expected {:#x}", want.to_bits());
            }
        }
        let k = kernel(w, 4, |b, [a, _, _]| {
            let f = b.packed_convert(PackedConvertOp::I8x4ToF32x4, a);
            b.bitcast(f, Type::vector(ScalarType::U32, 4))
        });
        let want: Vec<u32> =
            xs.iter().flat_map(|&[a, _, _]| bytes(a).map(|x| (x as i8 as f32).to_bits())).collect();
        assert_eq!(run_triples(&k, &xs, 4), want, "i8x4 -> f32x4");
        for (op, shift) in [(PackedConvertOp::NibblesLow, 0), (PackedConvertOp::NibblesHigh, 4)] {
            let k = kernel(w, 1, |b, [a, _, _]| b.packed_convert(op, a));
            let want: Vec<u32> = xs
                .iter()
                .map(|&[a, _, _]| u32::from_le_bytes(bytes(a).map(|x| (x >> shift) & 15)))
                .collect();
            assert_eq!(run_triples(&k, &xs, 1), want, "{op:?}");
        }
    }
}

#[test]
fn dot_flavours_are_refused_where_the_table_lacks_them() {
    let k = kernel(32, 1, |b, [a, c, acc]| {
        let acc = b.bitcast(acc, Type::I32);
        let r = b.dot(DotOp::I8U8, a, c, acc);
        b.bitcast(r, Type::U32)
    });
    for arch in ["gfx906", "gfx1030"] {
        let t = Target::by_name(arch).unwrap();
        let k = if t.supports_wave(32) { k.clone() } else { kernel_w64_i8u8() };
        let e = verify(&k, Some(t)).unwrap_err().to_string();
        assert!(e.contains("dot4.i8u8"), "{arch}: {e}");
        assert!(e.contains("gfx1100") && e.contains("gfx1201") && e.contains("sm_90"), "{e}");
        assert!(!e.contains("gfx906,") && !e.contains("gfx1030,"), "{e}");
    }
    for arch in ["gfx1100", "gfx1201", "sm_90"] {
        verify(&k, Some(Target::by_name(arch).unwrap())).unwrap();
    }
    // The hardware f16 dot is AMD only; the exact one runs everywhere.
    let h2 = Type::vector(ScalarType::F16, 2);
    let f16dot = |op| {
        kernel(32, 1, move |b, [a, c, acc]| {
            let (ha, hc, f) = (b.bitcast(a, h2), b.bitcast(c, h2), b.bitcast(acc, Type::F32));
            let r = b.dot(op, ha, hc, f);
            b.bitcast(r, Type::U32)
        })
    };
    let sm90 = Target::by_name("sm_90").unwrap();
    let e = verify(&f16dot(DotOp::F16Approx), Some(sm90)).unwrap_err().to_string();
    assert!(e.contains("dot2.f16") && e.contains("gfx1100"), "{e}");
    verify(&f16dot(DotOp::F16), Some(sm90)).unwrap();
}

fn kernel_w64_i8u8() -> Kernel {
    kernel(64, 1, |b, [a, c, acc]| {
        let acc = b.bitcast(acc, Type::I32);
        let r = b.dot(DotOp::I8U8, a, c, acc);
        b.bitcast(r, Type::U32)
    })
}

#[test]
fn packed_ops_print_with_their_flavour() {
    let k = kernel(32, 1, |b, [a, c, acc]| {
        let p = b.perm(a, c, [0, 5, 2, 7]);
        let n = b.packed_convert(PackedConvertOp::NibblesHigh, p);
        b.dot(DotOp::U8, n, c, acc)
    });
    let text = print::print(&k);
    assert!(text.contains("perm v"), "{text}");
    assert!(text.contains(", [0, 5, 2, 7]"), "{text}");
    assert!(text.contains("packed_convert nibbles_high v"), "{text}");
    assert!(text.contains("dot u8 v"), "{text}");
}
