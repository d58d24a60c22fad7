//! Global memory beyond the buffer arguments (`run_with_memory`): raw addresses reach caller
//! regions at their own addresses, buffer arguments can be regions, and every access outside
//! them, or crossing an end, is an out-of-bounds error naming the kernel, op, workgroup and
//! lanes. At wave 32 and 64, with the sanitizer on.

use crate::interp_util;

use interp_util::*;
use kiln_ir::interp::{self, Arg, InterpError, Region, RunOptions};
use kiln_ir::*;

/// Lane `l`: `*(u32*)table[2l+1] = *(u32*)table[2l]`, two workgroups of one wave (lane `l` of
/// workgroup `g` uses entry `g*W + l`).
fn gather_scatter(w: u32) -> Kernel {
    let mut b = KernelBuilder::new("gather_scatter", w);
    let table = b.buffer("table", ScalarType::U64, Access::Read);
    b.grid([ShapeExpr::constant(2), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let g = b.workgroup_id(Dim::X);
    let wv = b.u32(w);
    let lane = b.lane();
    let base = b.mul(g, wv);
    let i = b.add(base, lane);
    let two = b.u32(2);
    let s = b.mul(i, two);
    let one = b.u32(1);
    let d = b.add(s, one);
    let src = b.load(table, s, Type::U64);
    let dst = b.load(table, d, Type::U64);
    let zero = b.u32(0);
    let v = b.load(MemRef::Global(src), zero, Type::U32);
    b.store(MemRef::Global(dst), zero, v);
    b.finish()
}

fn u64_bytes(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

const SRC: u64 = 0x7f12_3456_0000;
const DST: u64 = 0x0000_5555_0000_0100;

fn regions(w: usize) -> Vec<Region> {
    let src = (0..2 * w as u32).flat_map(|i| (i * 7 + 1).to_le_bytes()).collect();
    vec![Region { base: SRC, bytes: src }, Region { base: DST, bytes: vec![0xee; 16 * w + 4] }]
}

/// Entry `i` copies source word `i` to destination word `2i + 1` (odd words, so the even ones
/// show any stray write).
fn table(w: usize) -> Vec<u64> {
    (0..2 * w as u64).flat_map(|i| [SRC + 4 * i, DST + 4 * (2 * i + 1)]).collect()
}

#[test]
fn raw_addresses_reach_regions() {
    for w in WAVES {
        let wu = w as usize;
        let mut mem = regions(wu);
        let mut args = [Arg::Buffer(u64_bytes(&table(wu)))];
        interp::run_with_memory(&gather_scatter(w), &mut args, &mut mem, &RunOptions::default())
            .unwrap();
        let got = bytes_u32(&mem[1].bytes);
        for i in 0..2 * wu {
            assert_eq!(got[2 * i + 1], i as u32 * 7 + 1, "wave {w} word {i}");
            assert_eq!(got[2 * i], 0xeeee_eeee, "wave {w}: word {} written", 2 * i);
        }
        assert_eq!(&mem[1].bytes[16 * wu..], &[0xee; 4], "past the last destination");
        assert_eq!(mem[0], regions(wu)[0], "the source changed");
    }
}

#[test]
fn two_workgroups_scattering_to_one_word_race() {
    // Entry W (workgroup 1, lane 0) sends its word where entry 0 (workgroup 0) sent its own: a
    // race between workgroups in a region no parameter names, found through the raw addresses.
    for w in WAVES {
        let wu = w as usize;
        let mut t = table(wu);
        t[2 * wu + 1] = t[1];
        let mut mem = regions(wu);
        let mut args = [Arg::Buffer(u64_bytes(&t))];
        let e = interp::run_with_memory(
            &gather_scatter(w),
            &mut args,
            &mut mem,
            &RunOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(e, InterpError::WorkgroupRace { .. }), "{e}");
        let msg = e.to_string();
        assert!(msg.contains(&format!("byte 4 of region at {DST:#x}")), "{msg}");
        assert!(msg.contains("workgroup (1, 0, 0)") && msg.contains("(0, 0, 0)"), "{msg}");
    }
}

/// Asserts that an out-of-bounds error names the kernel, the op, workgroup 1 and the lanes.
fn assert_oob(e: &InterpError, op: &str, lanes: &str, detail: &str) {
    assert!(matches!(e, InterpError::OutOfBounds { .. }), "{e}");
    let msg = e.to_string();
    for part in
        ["kernel `gather_scatter`", &format!("({op})"), "workgroup (1, 0, 0)", lanes, detail]
    {
        assert!(msg.contains(part), "message {msg:?} does not contain {part:?}");
    }
}

#[test]
fn accesses_outside_regions_are_out_of_bounds() {
    for w in WAVES {
        let wu = w as usize;
        let k = gather_scatter(w);
        let run = |t: &[u64]| {
            let mut mem = regions(wu);
            let mut args = [Arg::Buffer(u64_bytes(t))];
            let e = interp::run_with_memory(&k, &mut args, &mut mem, &RunOptions::default());
            (e, mem)
        };
        // Lanes 3 and 17 of workgroup 1 read just past the source region: in no region.
        let mut t = table(wu);
        for l in [3, 17] {
            t[2 * (wu + l)] = SRC + 8 * wu as u64;
        }
        let (e, mem) = run(&t);
        let e = e.unwrap_err();
        assert_oob(&e, "load", "lanes 3, 17 (wave 0)", "in no buffer or region");
        assert!(e.to_string().contains(&format!("address {:#x}", SRC + 8 * wu as u64)), "{e}");
        let overrun = format!("byte {0} of region at {SRC:#x} ({0} bytes) is past its end", 8 * wu);
        assert!(e.to_string().contains(&overrun), "{e}");
        // Workgroup 0 may have run; nothing of workgroup 1 was stored.
        assert!(bytes_u32(&mem[1].bytes)[2 * wu..].iter().all(|&x| x == 0xeeee_eeee));

        // Lane 5 writes a word whose last two bytes cross the destination region's end.
        let mut t = table(wu);
        t[2 * (wu + 5) + 1] = DST + 16 * wu as u64 + 2;
        let e = run(&t).0.unwrap_err();
        assert_oob(
            &e,
            "store",
            "lane 5 (wave 0)",
            &format!("byte {} of region at {DST:#x} ({} bytes)", 16 * wu + 2, 16 * wu + 4),
        );

        // Below every region: out of bounds too.
        let mut t = table(wu);
        t[2 * wu + 1] = DST - 4;
        assert_oob(&run(&t).0.unwrap_err(), "store", "lane 0 (wave 0)", "in no buffer or region");

        // Without the sanitizer, still an error.
        let mut mem = regions(wu);
        let mut args = [Arg::Buffer(u64_bytes(&t))];
        let opts = RunOptions { sanitize: false, ..RunOptions::default() };
        assert!(interp::run_with_memory(&k, &mut args, &mut mem, &opts).is_err());
    }
}

/// `out[l] = x[l] + 1` through the parameters, and `addr[l] = BufferAddr(x)`.
fn param_kernel(w: u32, out_access: Access) -> Kernel {
    let mut b = KernelBuilder::new("params_in_regions", w);
    let x = b.buffer("x", ScalarType::U32, Access::Read);
    let out = b.buffer("out", ScalarType::U32, out_access);
    let addr = b.buffer("addr", ScalarType::U64, Access::Write);
    for p in [x, out, addr] {
        b.set_buffer_len(p, ShapeExpr::constant(w as u64));
    }
    let lane = b.lane();
    let v = b.load(x, lane, Type::U32);
    let one = b.u32(1);
    let r = b.add(v, one);
    b.store(out, lane, r);
    let a = b.buffer_addr(x);
    b.store(addr, lane, a);
    b.finish()
}

#[test]
fn buffer_arguments_can_be_regions() {
    for w in WAVES {
        let wu = w as usize;
        let x: Vec<u8> = (0..w).flat_map(|i| (i * 3).to_le_bytes()).collect();
        let mut mem = vec![
            Region { base: 0x1234_5678_9000, bytes: x.clone() },
            Region { base: 0x10, bytes: vec![0; 4 * wu] },
        ];
        let mut args = [Arg::Region(0), Arg::Region(1), Arg::Buffer(vec![0; 8 * wu])];
        let k = param_kernel(w, Access::Write);
        interp::run_with_memory(&k, &mut args, &mut mem, &RunOptions::default()).unwrap();
        assert_eq!(bytes_u32(&mem[1].bytes), (0..w).map(|i| i * 3 + 1).collect::<Vec<_>>());
        let addrs =
            buffer(&args[2]).chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap()));
        assert!(
            addrs.into_iter().all(|a| a == 0x1234_5678_9000),
            "BufferAddr is the region's base"
        );
        assert_eq!(mem[0].bytes, x);

        // Two parameters naming one region, one of them written, alias (`noalias` on a GPU):
        // refused before anything runs.
        let mut mem = vec![Region { base: 1 << 50, bytes: x.clone() }];
        let mut args = [Arg::Region(0), Arg::Region(0), Arg::Buffer(vec![0; 8 * wu])];
        let k = param_kernel(w, Access::ReadWrite);
        let e = interp::run_with_memory(&k, &mut args, &mut mem, &RunOptions::default());
        assert!(matches!(e, Err(InterpError::Launch { .. })), "{e:?}");
        assert_eq!(mem[0].bytes, x);

        // A parameter declared read-only stays read-only when it is a region.
        let k = param_kernel(w, Access::Read);
        let mut args = [Arg::Region(0), Arg::Region(1), Arg::Buffer(vec![0; 8 * wu])];
        let mut mem =
            vec![Region { base: 0, bytes: x.clone() }, Region { base: 1 << 20, bytes: x.clone() }];
        let opts = RunOptions { verify: false, ..RunOptions::default() };
        let e = interp::run_with_memory(&k, &mut args, &mut mem, &opts).unwrap_err();
        assert!(matches!(e, InterpError::ReadOnly { .. }), "{e}");
        assert!(e.to_string().contains("read-only buffer `out`"), "{e}");
    }
}

#[test]
fn bad_memory_layouts_are_launch_errors() {
    let k = param_kernel(32, Access::Write);
    let x = || Region { base: 0x1000, bytes: vec![0; 128] };
    let launch = |args: &mut [Arg], mem: &mut [Region]| {
        let e = interp::run_with_memory(&k, args, mem, &RunOptions::default()).unwrap_err();
        assert!(matches!(e, InterpError::Launch { .. }), "{e}");
        e.to_string()
    };
    let bufs = || [Arg::Region(0), Arg::Buffer(vec![0; 128]), Arg::Buffer(vec![0; 256])];

    let mut mem = [x(), Region { base: 0x1000 + 127, bytes: vec![0; 4] }];
    let e = launch(&mut bufs(), &mut mem);
    assert!(e.contains("region at 0x1000 (128 bytes) overlaps region at 0x107f"), "{e}");

    // `out` (parameter 1) lives at 2 << 40 by default.
    let mut mem = [x(), Region { base: (2 << 40) + 64, bytes: vec![0; 4] }];
    let e = launch(&mut bufs(), &mut mem);
    assert!(e.contains("buffer `out` (128 bytes) overlaps region at 0x20000000040"), "{e}");

    let mut mem = [x(), Region { base: u64::MAX - 2, bytes: vec![0; 4] }];
    let e = launch(&mut bufs(), &mut mem);
    assert!(e.contains("runs past the end of the address space"), "{e}");

    let e =
        launch(&mut [Arg::Region(1), Arg::Buffer(vec![0; 128]), Arg::Buffer(vec![])], &mut [x()]);
    assert!(e.contains("`x` is region 1, but the run has 1 regions"), "{e}");

    let mut mem = [Region { base: 0x1000, bytes: vec![0; 64] }];
    let e = launch(&mut bufs(), &mut mem);
    assert!(e.contains("buffer `x` has 64 bytes, needs 128"), "{e}");
}
