//! Alignment, byte indices and 64-bit indices of loads and stores: every access is checked
//! against the alignment it assumes at its real address (a misaligned one is an error naming the
//! kernel, op, lanes and address, as hardware would fault), an access at a stated lower alignment
//! reads and writes the same bytes as a plain Rust model, and 64-bit indices are not truncated.
//! At wave 32 and 64.

use crate::interp_util;

use interp_util::*;
use kiln_ir::interp::{self, Arg, InterpError, Region, RunOptions};
use kiln_ir::*;
use rand::Rng;

/// The default address of buffer parameter `p` (interp::buffer_base).
fn buffer_base(p: u64) -> u64 {
    (p + 1) << 40
}

/// Lane `l` loads `ty` from `x` at index `stride * l + off` (`off` a scalar argument, counting
/// `unit`s) assuming `align`, and stores it to `out` at element `l` (naturally aligned).
fn strided(w: u32, ty: Type, stride: u32, unit: IndexUnit, align: Option<u32>) -> Kernel {
    let mut b = KernelBuilder::new("strided", w);
    let x = b.buffer("x", ScalarType::U8, Access::Read);
    let out = b.buffer("out", ty.scalar, Access::Write);
    let off = b.scalar_param("off", ScalarType::U32);
    let lane = b.lane();
    let s = b.u32(stride);
    let i = b.mul(lane, s);
    let o = b.arg(off);
    let i = b.add(i, o);
    let v = b.load_with(x, i, ty, unit, align);
    let lanes = b.u32(ty.lanes.max(1) as u32);
    let d = b.mul(lane, lanes);
    b.store(out, d, v);
    b.finish()
}

fn run_strided(k: &Kernel, x: &[u8], out_bytes: usize, off: u32) -> Result<Vec<u8>, InterpError> {
    let mut args =
        [Arg::Buffer(x.to_vec()), Arg::Buffer(vec![0; out_bytes]), Arg::Scalar(off as u64)];
    run(k, &mut args)?;
    Ok(buffer(&args[1]).to_vec())
}

#[track_caller]
fn assert_misaligned(e: &InterpError, op: &str, lanes: &str, detail: &str) {
    assert!(matches!(e, InterpError::Misaligned { .. }), "{e}");
    let s = e.to_string();
    assert!(s.contains(&format!("({op})")), "op {op} not in: {s}");
    assert!(s.contains(lanes), "{lanes} not in: {s}");
    assert!(s.contains(detail), "{detail} not in: {s}");
    assert!(s.starts_with("kernel `"), "{s}");
}

#[test]
fn a_misaligned_vector_load_names_op_lane_and_address() {
    let v4 = Type::vector(ScalarType::F32, 4);
    for w in WAVES {
        let n = 16 * w as usize + 16;
        let x = vec![0u8; n];
        // f32x4 at element 4l + 1 of a u8 buffer read as f32: byte 16l + 4, natural alignment 16.
        let k = strided(w, v4, 4, IndexUnit::Element, None);
        let e = run_strided(&k, &x, 16 * w as usize, 1).unwrap_err();
        let lanes = format!("lanes 0..={} (wave 0)", w - 1);
        let addr = format!("address {:#x}", buffer_base(0) + 4);
        assert_misaligned(
            &e,
            "load",
            &lanes,
            &format!("load of 16 bytes at {addr}, expected a multiple of 16"),
        );
        // Aligned (off 0 or 4) passes; so does off 1 once 4-byte alignment is stated.
        run_strided(&k, &x, 16 * w as usize, 4).unwrap();
        let k4 = strided(w, v4, 4, IndexUnit::Element, Some(4));
        run_strided(&k4, &x, 16 * w as usize, 1).unwrap();
        // One lane misaligned: a byte index where only odd lanes are off.
        let kb = strided(w, Type::U32, 2, IndexUnit::Byte, None);
        let e = run_strided(&kb, &x, 4 * w as usize, 0).unwrap_err();
        let odd: Vec<String> = (1..w).step_by(2).map(|l| l.to_string()).collect();
        assert!(e.to_string().contains(&format!("address {:#x}", buffer_base(0) + 2)), "{e}");
        assert!(e.to_string().contains(&odd[..3].join(", ")), "{e}");
        assert!(!e.to_string().contains("lanes 0,"), "{e}");
    }
}

/// Unaligned vector loads of every width and stated alignment read exactly the bytes a plain
/// Rust model reads, in both index units.
#[test]
fn unaligned_loads_read_the_same_bytes_as_the_model() {
    let (mut rng, _g) = rng();
    let tys = [
        Type::vector(ScalarType::U8, 16),
        Type::vector(ScalarType::U8, 8),
        Type::vector(ScalarType::F16, 8),
        Type::vector(ScalarType::F32, 4),
        Type::vector(ScalarType::F32, 3),
        Type::vector(ScalarType::U32, 2),
        Type::U64,
        Type::U32,
    ];
    for w in WAVES {
        for ty in tys {
            let size = ty.bytes() as usize;
            let x: Vec<u8> = (0..size * w as usize * 3 + 64).map(|_| rng.gen()).collect();
            for align in [1u32, 2, 4, 8, 16].into_iter().filter(|&a| a <= size as u32) {
                // Byte unit: lane l reads at byte stride*l + off with off and stride multiples of
                // `align` (random), so the access is aligned to `align` but maybe no more.
                let stride = align * rng.gen_range(1..=(2 * size as u32 / align).max(1));
                let off = align * rng.gen_range(0..8);
                let k = strided(w, ty, stride, IndexUnit::Byte, Some(align));
                let got = run_strided(&k, &x, size * w as usize, off).unwrap();
                for l in 0..w as usize {
                    let at = stride as usize * l + off as usize;
                    assert_eq!(
                        &got[size * l..size * (l + 1)],
                        &x[at..at + size],
                        "wave {w}, {ty} align {align} stride {stride} off {off}, lane {l}"
                    );
                }
            }
            // Element unit at natural alignment equals the byte unit at the same byte offset.
            let es = ty.scalar.bytes() as usize;
            let stride = ty.lanes.max(1) as u32;
            let k = strided(w, ty, stride, IndexUnit::Element, None);
            let kb = strided(w, ty, stride * es as u32, IndexUnit::Byte, None);
            let a = run_strided(&k, &x, size * w as usize, 0).unwrap();
            let b = run_strided(&kb, &x, size * w as usize, 0).unwrap();
            assert_eq!(a, b, "wave {w} {ty}");
            assert_eq!(&a[..size], &x[..size]);
        }
    }
}

/// A Q8_0 block is 34 bytes (an f16 scale, 32 quants): lane l reads block l's quants as two
/// `u8x16` at byte 34l + 2 and 34l + 18 assuming 2-byte alignment, and its scale as an f16.
fn q8_0_quants(w: u32, align: Option<u32>) -> Kernel {
    let mut b = KernelBuilder::new("q8_0_quants", w);
    let x = b.buffer("blocks", ScalarType::U8, Access::Read);
    let out = b.buffer("quants", ScalarType::U8, Access::Write);
    let scales = b.buffer("scales", ScalarType::F16, Access::Write);
    let lane = b.lane();
    let c34 = b.u32(34);
    let at = b.mul(lane, c34);
    let v16 = Type::vector(ScalarType::U8, 16);
    let scale = b.load_with(x, at, Type::F16, IndexUnit::Byte, None);
    b.store(scales, lane, scale);
    let c32 = b.u32(32);
    let dst = b.mul(lane, c32);
    for half in 0..2 {
        let skip = b.u32(2 + 16 * half);
        let src = b.add(at, skip);
        let q = b.load_with(x, src, v16, IndexUnit::Byte, align);
        let o = b.u32(16 * half);
        let d = b.add(dst, o);
        b.store(out, d, q);
    }
    b.finish()
}

#[test]
fn q8_0_quants_read_as_two_u8x16_at_2_byte_alignment() {
    let (mut rng, _g) = rng();
    for w in WAVES {
        let wu = w as usize;
        let x: Vec<u8> = (0..34 * wu).map(|_| rng.gen()).collect();
        let mut args =
            [Arg::Buffer(x.clone()), Arg::Buffer(vec![0; 32 * wu]), Arg::Buffer(vec![0; 2 * wu])];
        run(&q8_0_quants(w, Some(2)), &mut args).unwrap();
        for l in 0..wu {
            assert_eq!(
                &buffer(&args[1])[32 * l..32 * l + 32],
                &x[34 * l + 2..34 * l + 34],
                "lane {l}"
            );
            assert_eq!(&buffer(&args[2])[2 * l..2 * l + 2], &x[34 * l..34 * l + 2], "lane {l}");
        }
        // Claiming the natural 16-byte alignment is refused: lane 0's quants sit at byte 2.
        let mut args =
            [Arg::Buffer(x.clone()), Arg::Buffer(vec![0; 32 * wu]), Arg::Buffer(vec![0; 2 * wu])];
        let e = run(&q8_0_quants(w, None), &mut args).unwrap_err();
        assert_misaligned(
            &e,
            "load",
            "lanes 0..=6, 8..=14",
            &format!(
                "load of 16 bytes at address {:#x}, expected a multiple of 16",
                buffer_base(0) + 2
            ),
        );
    }
}

/// Lane l stores `value` (a u32 made of lane-dependent bytes) at byte `5l + off` of `out` with 1-byte alignment.
#[test]
fn unaligned_byte_index_stores_write_the_model_bytes() {
    for w in WAVES {
        let wu = w as usize;
        let mut b = KernelBuilder::new("unaligned_store", w);
        let out = b.buffer("out", ScalarType::U8, Access::ReadWrite);
        let lane = b.lane();
        let c5 = b.u32(5);
        let one = b.u32(1);
        let at = b.mul(lane, c5);
        let at = b.add(at, one);
        let k = b.u32(0x0101_0101);
        let v = b.mul(lane, k);
        let base = b.u32(0xa0b0_c0d0);
        let v = b.xor(v, base);
        b.store_with(out, at, v, IndexUnit::Byte, Some(1));
        let k = b.finish();
        let mut args = [Arg::Buffer(vec![0xee; 5 * wu + 8])];
        run(&k, &mut args).unwrap();
        let mut want = vec![0xee; 5 * wu + 8];
        for l in 0..wu {
            let v = (l as u32).wrapping_mul(0x0101_0101) ^ 0xa0b0_c0d0;
            want[5 * l + 1..5 * l + 5].copy_from_slice(&v.to_le_bytes());
        }
        assert_eq!(buffer(&args[0]), &want[..]);
        let text = print::print(&k);
        assert!(text.contains("[byte v") && text.contains(", align 1"), "{text}");
    }
}

/// LDS and private accesses are checked at their offset in the allocation (16-byte aligned on
/// hardware); atomics at their natural alignment.
#[test]
fn lds_private_and_atomic_alignment() {
    for w in WAVES {
        let mut b = KernelBuilder::new("lds_align", w);
        let out = b.buffer("out", ScalarType::F32, Access::Write);
        let lds = b.lds("tile", ScalarType::F32, 4 * w);
        let lane = b.lane();
        let f = b.f32(1.0);
        let four = b.u32(4);
        let i = b.mul(lane, four);
        for e in 0..4 {
            let c = b.u32(e);
            let j = b.add(i, c);
            b.store(lds, j, f);
        }
        b.barrier(BarrierKind::Lds);
        let one = b.u32(1);
        let j = b.add(i, one);
        let v2 = b.load(lds, j, Type::vector(ScalarType::F32, 2));
        let e = b.extract(v2, 0);
        b.store(out, lane, e);
        let e = run(&b.finish(), &mut [Arg::Buffer(vec![0; 4 * w as usize])]).unwrap_err();
        assert_misaligned(
            &e,
            "load",
            "lanes 0..=",
            "load of 8 bytes at LDS byte 4, expected a multiple of 8",
        );

        let mut b = KernelBuilder::new("private_align", w);
        let out = b.buffer("out", ScalarType::U32, Access::Write);
        let p = b.private("scratch", ScalarType::U8, 16);
        let lane = b.lane();
        let three = b.u32(3);
        b.store_with(p, three, lane, IndexUnit::Byte, Some(1));
        let v = b.load_with(p, three, Type::U32, IndexUnit::Byte, None);
        b.store(out, lane, v);
        let e = run(&b.finish(), &mut [Arg::Buffer(vec![0; 4 * w as usize])]).unwrap_err();
        assert_misaligned(
            &e,
            "load",
            "lanes 0..=",
            "load of 4 bytes at byte 3 of private `scratch`, expected a multiple of 4",
        );

        let mut b = KernelBuilder::new("atomic_align", w);
        let x = b.buffer("x", ScalarType::U32, Access::ReadWrite);
        let addr = b.buffer_addr(x);
        let two = b.u64(2);
        let a = b.add(addr, two);
        let zero = b.u32(0);
        let one = b.u32(1);
        b.atomic(AtomicOp::Add, MemRef::Global(a), zero, one, Scope::Device);
        let e = run(&b.finish(), &mut [Arg::Buffer(vec![0; 16])]).unwrap_err();
        assert_misaligned(
            &e,
            "atomic add",
            "lanes 0..=",
            &format!(
                "atomic of 4 bytes at address {:#x}, expected a multiple of 4",
                buffer_base(0) + 2
            ),
        );
    }
}

/// A region at an odd address: the check uses the real address (base + offset), not the offset.
#[test]
fn the_real_address_is_checked() {
    for w in WAVES {
        let mut b = KernelBuilder::new("real_address", w);
        let x = b.buffer("x", ScalarType::U32, Access::Read);
        let out = b.buffer("out", ScalarType::U32, Access::Write);
        let lane = b.lane();
        let v = b.load(x, lane, Type::U32);
        b.store(out, lane, v);
        let k = b.finish();
        let wu = w as usize;
        for (base, ok) in [(0x1000u64, true), (0x1002, false), (0x1004, true)] {
            let mut mem = [Region { base, bytes: vec![7; 4 * wu] }];
            let mut args = [Arg::Region(0), Arg::Buffer(vec![0; 4 * wu])];
            let r = interp::run_with_memory(&k, &mut args, &mut mem, &RunOptions::default());
            match (r, ok) {
                (Ok(_), true) => assert_eq!(bytes_u32(buffer(&args[1])), vec![0x0707_0707; wu]),
                (Err(e), false) => assert_misaligned(
                    &e,
                    "load",
                    "lanes 0..=",
                    &format!("load of 4 bytes at address {base:#x}, expected a multiple of 4"),
                ),
                (r, ok) => panic!("base {base:#x}: {:?}, expected ok {ok}", r.map(|_| ())),
            }
        }
    }
}

/// 64-bit indices reach past 4 GiB without wrapping; signed ones are sign-extended.
#[test]
fn sixty_four_bit_indices_are_not_truncated() {
    for w in WAVES {
        let wu = w as usize;
        // u64 index 2^32 + lane into a small buffer: out of bounds at byte 4 * 2^32, not lane.
        let mut b = KernelBuilder::new("index64", w);
        let x = b.buffer("x", ScalarType::U32, Access::Read);
        let out = b.buffer("out", ScalarType::U32, Access::Write);
        let hi = b.scalar_param("hi", ScalarType::U64);
        let lane = b.lane();
        let l64 = b.convert(lane, Type::U64);
        let h = b.arg(hi);
        let i = b.add(h, l64);
        let v = b.load(x, i, Type::U32);
        b.store(out, lane, v);
        let k = b.finish();
        let x: Vec<u8> = (0..w).flat_map(|i| (i * 11).to_le_bytes()).collect();
        let mut args = [Arg::Buffer(x.clone()), Arg::Buffer(vec![0; 4 * wu]), Arg::Scalar(0)];
        run(&k, &mut args).unwrap();
        assert_eq!(bytes_u32(buffer(&args[1])), (0..w).map(|i| i * 11).collect::<Vec<_>>());
        let mut args = [Arg::Buffer(x), Arg::Buffer(vec![0; 4 * wu]), Arg::Scalar(1 << 32)];
        let e = run(&k, &mut args).unwrap_err();
        assert!(matches!(e, InterpError::OutOfBounds { .. }), "{e}");
        assert!(e.to_string().contains(&format!("at byte {} of buffer `x`", 4u64 << 32)), "{e}");

        // i64 index -1 - lane from the end of a region read through its raw address.
        let mut b = KernelBuilder::new("index_neg", w);
        let x = b.buffer("x", ScalarType::U32, Access::Read);
        let out = b.buffer("out", ScalarType::U32, Access::Write);
        let lane = b.lane();
        let end = b.buffer_addr(x);
        let n = b.u64(4 * wu as u64);
        let end = b.add(end, n);
        let l = b.convert(lane, Type::I64);
        let m1 = b.i32(-1);
        let m1 = b.convert(m1, Type::I64);
        let i = b.sub(m1, l);
        let v = b.load(MemRef::Global(end), i, Type::U32);
        b.store(out, lane, v);
        let x: Vec<u8> = (0..w).flat_map(|i| (i * 3 + 5).to_le_bytes()).collect();
        let mut args = [Arg::Buffer(x), Arg::Buffer(vec![0; 4 * wu])];
        run(&b.finish(), &mut args).unwrap();
        assert_eq!(
            bytes_u32(buffer(&args[1])),
            (0..w).rev().map(|i| i * 3 + 5).collect::<Vec<_>>()
        );
    }
}
