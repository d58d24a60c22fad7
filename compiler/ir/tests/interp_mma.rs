//! `mma` and the fragment loads and stores on the interpreter: a GEMM tile built from the
//! builder's `frag_load` / `mma` / `frag_store` for every matrix kind, against a plain Rust
//! product over whole matrices (not the lane maps), on random and edge inputs; and the verifier
//! refusing fragments where they do not belong.

use crate::interp_util;

use half::f16;
use interp_util::{bits_bytes, buffer, bytes_bits, rng, run};
use kiln_ir::interp::Arg;
use kiln_ir::matrix::{FragLayout, FragmentRole, MmaInputs, MmaKind, MmaShape};
use kiln_ir::{verify, Access, Kernel, KernelBuilder, ScalarType, Target, Type, TARGETS};
use rand::rngs::StdRng;
use rand::Rng;

/// One wave computes D (M x N) = A (M x K*steps, row-major) x B (K*steps x N, column-major) + C
/// (row-major), K at a time, carrying the accumulator fragment through a loop.
fn tile(kind: MmaKind, steps: u32) -> Kernel {
    let shape = kind.shape();
    let (_, n, k) = shape.mnk();
    let kt = k * steps;
    let mut b = KernelBuilder::new(format!("mma_tile_{}", steps), shape.wave_size());
    b.workgroup_size([shape.wave_size(), 1, 1]);
    let pa = b.buffer("a", kind.a(), Access::Read);
    let pb = b.buffer("b", kind.b(), Access::Read);
    let pc = b.buffer("c", shape.accumulator(), Access::Read);
    let pd = b.buffer("d", shape.accumulator(), Access::Write);
    let (zero, nn, ktv, kv) = (b.u32(0), b.u32(n), b.u32(kt), b.u32(k));
    let c = b.frag_load(kind, FragmentRole::C, pc, zero, nn, FragLayout::RowMajor);
    let end = b.u32(steps);
    let one = b.u32(1);
    let d = b.for_range(zero, end, one, 1, &[c], |b, s, carried| {
        let base = b.mul(s, kv);
        let fa = b.frag_load(kind, FragmentRole::A, pa, base, ktv, FragLayout::RowMajor);
        let fb = b.frag_load(kind, FragmentRole::B, pb, base, ktv, FragLayout::ColMajor);
        vec![b.mma(kind, fa, fb, carried[0])]
    })[0];
    b.frag_store(pd, zero, nn, FragLayout::RowMajor, d);
    b.finish()
}

fn ival(t: ScalarType, bits: u64) -> i64 {
    match t {
        ScalarType::I8 => bits as u8 as i8 as i64,
        ScalarType::U8 => bits as u8 as i64,
        other => panic!("{other}"),
    }
}

/// The plain product, step by step as the hardware chains it (f16: each step's products summed
/// from C in f64 and rounded once to f32, the model the interpreter documents).
fn expected(kind: MmaKind, steps: u32, a: &[u64], b: &[u64], c: &[u64]) -> Vec<u64> {
    let (m, n, k) = kind.shape().mnk();
    let kt = (k * steps) as usize;
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let mut d = c.to_vec();
    for s in 0..steps as usize {
        for i in 0..m {
            for j in 0..n {
                let (arow, bcol) = (i * kt, j * kt);
                let ks = s * k..(s + 1) * k;
                d[i * n + j] = match kind.shape().inputs() {
                    MmaInputs::Int8 => {
                        let sum: i64 = ks
                            .map(|kk| ival(kind.a(), a[arow + kk]) * ival(kind.b(), b[bcol + kk]))
                            .sum();
                        (d[i * n + j] as u32 as i32).wrapping_add(sum as i32) as u32 as u64
                    }
                    MmaInputs::F16 => {
                        let mut acc = f32::from_bits(d[i * n + j] as u32) as f64;
                        for kk in ks {
                            acc += f16::from_bits(a[arow + kk] as u16).to_f64()
                                * f16::from_bits(b[bcol + kk] as u16).to_f64();
                        }
                        (acc as f32).to_bits() as u64
                    }
                };
            }
        }
    }
    d
}

fn input(kind: MmaKind, role: FragmentRole, rng: &mut StdRng, edge: bool) -> u64 {
    let t = kind.elem(role);
    match t {
        ScalarType::I8 if edge => 0x80,
        ScalarType::U8 if edge => 0xff,
        ScalarType::I8 | ScalarType::U8 => rng.gen::<u8>() as u64,
        ScalarType::F16 if edge => f16::MAX.to_bits() as u64,
        ScalarType::F16 => f16::from_f32(rng.gen_range(-4.0f32..4.0)).to_bits() as u64,
        ScalarType::I32 if edge => 0x7fff_ff00 + rng.gen_range(0..256u64),
        ScalarType::I32 => rng.gen::<u32>() as u64,
        ScalarType::F32 => (rng.gen_range(-100.0f32..100.0)).to_bits() as u64,
        other => panic!("{other}"),
    }
}

fn run_tile(kind: MmaKind, steps: u32, a: &[u64], b: &[u64], c: &[u64]) -> Vec<u64> {
    let k = tile(kind, steps);
    let mut args = vec![
        Arg::Buffer(bits_bytes(a, kind.a().bytes() as usize)),
        Arg::Buffer(bits_bytes(b, kind.b().bytes() as usize)),
        Arg::Buffer(bits_bytes(c, 4)),
        Arg::Buffer(vec![0; c.len() * 4]),
    ];
    run(&k, &mut args).unwrap_or_else(|e| panic!("{kind}: {e}"));
    bytes_bits(buffer(&args[3]), 4)
}

/// Every kind, several K steps, random inputs: the interpreter's tile equals the plain product
/// bit for bit (the lane maps, loads, stores and model agree).
#[test]
fn gemm_tile_of_every_kind_equals_the_plain_product() {
    let (mut rng, _g) = rng();
    for kind in MmaKind::all() {
        let (m, n, k) = kind.shape().mnk();
        for steps in [1, 3] {
            let kt = k * steps;
            let a: Vec<u64> =
                (0..m * kt).map(|_| input(kind, FragmentRole::A, &mut rng, false)).collect();
            let b: Vec<u64> =
                (0..kt * n).map(|_| input(kind, FragmentRole::B, &mut rng, false)).collect();
            let c: Vec<u64> =
                (0..m * n).map(|_| input(kind, FragmentRole::C, &mut rng, false)).collect();
            let got = run_tile(kind, steps, &a, &b, &c);
            assert_eq!(got, expected(kind, steps, &a, &b, &c), "{kind}, {steps} steps");
        }
    }
}

/// Edges: -128 x -128 (and 255 x 255) in every product, an accumulator near i32::MAX that wraps,
/// f16::MAX in every product, and inf / NaN inputs (column 0 of D is NaN).
#[test]
fn gemm_tile_edges() {
    let (mut rng, _g) = rng();
    for kind in MmaKind::all() {
        let (m, n, k) = kind.shape().mnk();
        let steps = 2;
        let kt = k * steps;
        let a: Vec<u64> =
            (0..m * kt).map(|_| input(kind, FragmentRole::A, &mut rng, true)).collect();
        let mut b: Vec<u64> =
            (0..kt * n).map(|_| input(kind, FragmentRole::B, &mut rng, true)).collect();
        let c: Vec<u64> =
            (0..m * n).map(|_| input(kind, FragmentRole::C, &mut rng, true)).collect();
        if kind.shape().inputs() == MmaInputs::F16 {
            b[0] = f16::INFINITY.to_bits() as u64;
            b[1] = f16::NAN.to_bits() as u64;
        }
        let got = run_tile(kind, steps, &a, &b, &c);
        let want = expected(kind, steps, &a, &b, &c);
        assert_eq!(got, want, "{kind}");
        if kind.shape().inputs() == MmaInputs::Int8
            && kind.a() == ScalarType::I8
            && kind.b() == ScalarType::I8
        {
            // 2K products of 16384 added to ~2^31 - 256: wrapped negative.
            assert!((got[0] as u32 as i32) < 0, "{kind}: {:#x}", got[0]);
        }
        if kind.shape().inputs() == MmaInputs::F16 {
            assert!(f32::from_bits(got[0] as u32).is_nan(), "{kind}: inf and NaN reach D");
            let far = f32::from_bits(got[n as usize - 1] as u32);
            assert!(far.is_finite() && far > 1e9, "{kind}: 2K products of f16::MAX: {far}");
        }
    }
}

/// The verifier: on each target, exactly the kinds whose shape it has verify; gfx906 and gfx1030
/// are refused naming the archs with a matrix unit of that kind; a fragment cannot be stored by a
/// plain store; the wave size must be the shape's.
#[test]
fn verifier_checks_the_target_the_wave_and_fragment_use() {
    for kind in MmaKind::all() {
        let k = tile(kind, 1);
        for t in TARGETS.iter().filter(|t| t.supports_wave(kind.shape().wave_size())) {
            let r = verify(&k, Some(t));
            if kind.shape().archs().contains(&t.name) {
                assert_eq!(r, Ok(()), "{kind} on {t}");
            } else {
                let text = r.expect_err(&format!("{kind} on {t}")).to_string();
                assert!(text.contains("mma") && text.contains("not supported on"), "{text}");
            }
        }
    }
    let i8 = MmaKind::new(MmaShape::NvM16n8k32I8, ScalarType::I8, ScalarType::I8).unwrap();
    let k = tile(i8, 1);
    for arch in ["gfx906", "gfx1030"] {
        let t = Target::by_name(arch).unwrap();
        let text = verify(&k, Some(t)).unwrap_err().to_string();
        assert!(text.contains(&format!("not supported on {arch}")), "{text}");
        for has in ["gfx90a", "gfx942", "gfx1100", "gfx1201", "sm_75", "sm_90"] {
            assert!(text.contains(has), "{text}");
        }
    }
    // A wave-64 kernel with an NVIDIA shape.
    let mut b = KernelBuilder::new("wrong_wave", 64);
    let z = b.i32(0);
    let zero8 = b.const_bits(ScalarType::I8, 0);
    let fa = b.fragment_splat(i8, FragmentRole::A, zero8);
    let fb = b.fragment_splat(i8, FragmentRole::B, zero8);
    let fc = b.fragment_splat(i8, FragmentRole::C, z);
    b.mma(i8, fa, fb, fc);
    let text = verify(&b.finish(), None).unwrap_err().to_string();
    assert!(text.contains("runs in waves of 32, found a kernel of wave size 64"), "{text}");
    // A plain store of a fragment.
    let mut b = KernelBuilder::new("plain_store", 32);
    let out = b.buffer("out", ScalarType::I32, Access::Write);
    let z = b.i32(0);
    let fc = b.fragment_splat(i8, FragmentRole::C, z);
    let idx = b.u32(0);
    b.store(out, idx, fc);
    let text = verify(&b.finish(), None).unwrap_err().to_string();
    assert!(text.contains("does not take fragments"), "{text}");
    assert_eq!(Type::fragment(i8, FragmentRole::A).lanes, 16);
}

/// `mma` under a lane-dependent `if` is refused (every lane of the wave must run it).
#[test]
fn mma_needs_wave_uniform_control() {
    let kind = MmaKind::new(MmaShape::NvM16n8k16F16, ScalarType::F16, ScalarType::F16).unwrap();
    let mut b = KernelBuilder::new("divergent_mma", 32);
    let h = b.f16(1.0);
    let f = b.f32(0.0);
    let fa = b.fragment_splat(kind, FragmentRole::A, h);
    let fb = b.fragment_splat(kind, FragmentRole::B, h);
    let fc = b.fragment_splat(kind, FragmentRole::C, f);
    let lane = b.lane();
    let one = b.u32(1);
    let cond = b.lt(lane, one);
    b.if_then(cond, |b| {
        b.mma(kind, fa, fb, fc);
    });
    let text = verify(&b.finish(), None).unwrap_err().to_string();
    assert!(text.contains("cross-lane op"), "{text}");
}

/// The fragment loads' affine form of every map agrees with the map at every lane.
#[test]
fn every_lane_map_is_affine() {
    for shape in MmaShape::ALL {
        for role in [FragmentRole::A, FragmentRole::B, FragmentRole::C] {
            for e in 0..shape.elements_per_lane(role) {
                let fit = shape.affine(role, e).unwrap();
                for lane in 0..shape.wave_size() {
                    assert_eq!(fit.at(lane), shape.coord(role, lane, e).unwrap());
                }
            }
        }
    }
}

/// The text form names the op and its kind and types fragments as such; a kernel with fragments
/// round-trips through serde, and one without keeps its text free of the new field.
#[test]
fn printer_and_serde() {
    let kind = MmaKind::new(MmaShape::Gfx11WmmaF16, ScalarType::F16, ScalarType::F16).unwrap();
    let k = tile(kind, 2);
    let text = kiln_ir::print::print(&k);
    assert!(text.contains("mma <gfx11 wmma.f32.16x16x16.f16 (f16 x f16)>"), "{text}");
    assert!(text.contains("f16x16 frag A of gfx11 wmma.f32.16x16x16.f16 (f16 x f16)"), "{text}");
    assert!(text.contains("f32x8 frag C/D of"), "{text}");
    let ron = k.to_ron();
    assert!(ron.contains("fragment"), "{ron}");
    assert_eq!(Kernel::from_ron(&ron).unwrap(), k);
    let plain = kiln_ir::examples::wave_sum(32);
    assert!(!plain.to_ron().contains("fragment"));
}

/// A fragment load then store of every role of every kind copies the matrix exactly (each
/// element written once, by its owner: gfx11 A/B lanes 16-31 hold copies and do not store),
/// with a row stride wider than the matrix so that the layouts' strides are exercised.
#[test]
fn fragment_load_store_round_trips_every_role() {
    let (mut rng, _g) = rng();
    for kind in MmaKind::all() {
        for role in [FragmentRole::A, FragmentRole::B, FragmentRole::C] {
            for layout in [FragLayout::RowMajor, FragLayout::ColMajor] {
                let (rows, cols) = kind.shape().dims(role);
                let elem = kind.elem(role);
                let major = match layout {
                    FragLayout::RowMajor => cols,
                    FragLayout::ColMajor => rows,
                };
                let stride = major + 3;
                let minor = match layout {
                    FragLayout::RowMajor => rows,
                    FragLayout::ColMajor => cols,
                };
                let len = (stride * minor + 5) as usize;
                let mut b = KernelBuilder::new("round_trip", kind.shape().wave_size());
                b.workgroup_size([kind.shape().wave_size(), 1, 1]);
                let src = b.buffer("src", elem, Access::Read);
                let dst = b.buffer("dst", elem, Access::Write);
                let (base, st) = (b.u32(5), b.u32(stride));
                let f = b.frag_load(kind, role, src, base, st, layout);
                b.frag_store(dst, base, st, layout, f);
                let k = b.finish();
                assert_eq!(verify(&k, None), Ok(()));
                let data: Vec<u64> =
                    (0..len).map(|_| rng.gen::<u64>() & ((1u64 << elem.bits()) - 1)).collect();
                let size = elem.bytes() as usize;
                let mut args =
                    vec![Arg::Buffer(bits_bytes(&data, size)), Arg::Buffer(vec![0; len * size])];
                run(&k, &mut args).unwrap_or_else(|e| panic!("{kind} {role}: {e}"));
                let got = bytes_bits(buffer(&args[1]), size);
                let mut want = vec![0u64; len];
                for r in 0..rows {
                    for c in 0..cols {
                        let i = (5 + match layout {
                            FragLayout::RowMajor => r * stride + c,
                            FragLayout::ColMajor => c * stride + r,
                        }) as usize;
                        want[i] = data[i];
                    }
                }
                assert_eq!(got, want, "{kind} {role} {layout:?}");
            }
        }
    }
}

/// gfx11: an A fragment whose lanes 16-31 differ from lanes 0-15 is refused by the model (which
/// copy the hardware reads is not documented), never guessed.
#[test]
fn gfx11_differing_duplicates_are_refused() {
    let kind = MmaKind::new(MmaShape::Gfx11WmmaIu8, ScalarType::I8, ScalarType::I8).unwrap();
    let mut b = KernelBuilder::new("dup", 32);
    b.workgroup_size([32, 1, 1]);
    let out = b.buffer("out", ScalarType::I32, Access::Write);
    let lane = b.lane();
    let lane8 = b.convert(lane, ScalarType::I8);
    let fa = b.fragment_splat(kind, FragmentRole::A, lane8);
    let one = b.const_bits(ScalarType::I8, 1);
    let fb = b.fragment_splat(kind, FragmentRole::B, one);
    let z = b.i32(0);
    let fc = b.fragment_splat(kind, FragmentRole::C, z);
    let d = b.mma(kind, fa, fb, fc);
    let (base, st) = (b.u32(0), b.u32(16));
    b.frag_store(out, base, st, FragLayout::RowMajor, d);
    let k = b.finish();
    let mut args = vec![Arg::Buffer(vec![0; 16 * 16 * 4])];
    let text = run(&k, &mut args).unwrap_err().to_string();
    assert!(text.contains("gfx11 needs lanes 16-31 to repeat lanes 0-15"), "{text}");
}
