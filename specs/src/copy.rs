//! `copy_from_mapped_multi`: up to 16 copies in one launch, e.g. from host memory mapped into the
//! device's address space (pinned, `cuMemHostGetDevicePointer` / `hipHostGetDevicePointer`) to
//! device buffers, as an engine stages a decode step's small inputs.
//!
//! A table of `u64` triples `(src, dst, bytes)` (device-visible addresses) drives it; grid y is
//! the copy. Each copy uses the widest access both pointers allow (16, 8, 4 bytes, else bytes):
//! `bytes / width` vector copies spread over the copy's lanes (consecutive lanes, consecutive
//! vectors), then the last `bytes % width` bytes one a lane. The vectors are walked in blocks of
//! [`BLOCK_CHUNKS`] (an outer loop over blocks, a `u32` loop inside), so any 64-bit length is
//! copied whole (a single `u32` loop truncated a copy of `2^32 + 3` bytes to 3). Regions must not
//! overlap. Engines batch up to 16 copies a launch; any count works.
//!
//! ABI:
//!
//! | param   | kind                     | meaning                                 |
//! |---------|--------------------------|-----------------------------------------|
//! | `table` | u64, read, `3 * count`   | `(src, dst, bytes)` for each copy       |
//! | `count` | u32                      | number of copies (grid y)               |

use crate::cases::Rng;
use crate::{Bench, KernelSpec, Parity, VariantSpec};
use kiln_ir::package::Admission;
use kiln_ir::{
    Access, Dim, Kernel, KernelBuilder, MemRef, ScalarType, ShapeExpr, Target, Type, Value,
};

/// Lanes a workgroup.
pub const BLOCK: u32 = 256;
/// Workgroups a copy (grid x).
pub const WORKGROUPS: u32 = 32;
/// Vectors a block of the outer loop: `2^31`, so the inner `u32` loop's index plus a stride
/// never wraps.
pub const BLOCK_CHUNKS: u64 = 1 << 31;

/// The family (baseline only).
pub fn spec() -> KernelSpec {
    KernelSpec {
        name: "copy_from_mapped_multi",
        variants: vec![VariantSpec {
            name: "baseline",
            build: copy_from_mapped_multi,
            admit: Admission::default(),
        }],
        parity: Parity::CopyTable(parity_cases),
        bench: Bench::Without(
            "its input is a table of device addresses, which the generic bench cannot build; \
             kiln bench's bandwidth measurement times device copies",
        ),
        archs: None,
        budgets: vec![],
    }
}

/// One copy of a [`CopyCase`]: where it starts in its source and destination buffers (the
/// alignment class) and how many bytes it copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopySpec {
    /// Offset of the copy into its source buffer.
    pub src_off: usize,
    /// Offset of the copy into its destination buffer (after the guard bytes).
    pub dst_off: usize,
    /// Bytes copied.
    pub bytes: usize,
}

/// One launch of up to 16 copies ([`Parity::CopyTable`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyCase {
    /// What it exercises (printed).
    pub name: String,
    /// The copies, in table order.
    pub copies: Vec<CopySpec>,
    /// Seed of the bytes the harness fills the buffers with.
    pub seed: u64,
}

/// The parity cases: 16 copies of every alignment class with ragged sizes (0, 1, 15, 4097, ...),
/// 16 random ones, a single copy; `large` adds 16 copies of up to 4 MiB.
pub fn parity_cases(seed: u64, large: bool) -> Vec<CopyCase> {
    let c = |src_off, dst_off, bytes| CopySpec { src_off, dst_off, bytes };
    let mut rng = Rng::new(seed ^ 0x636f_7079);
    let mut random = |n: usize, max: u64| -> Vec<CopySpec> {
        (0..n)
            .map(|_| {
                let bytes = match rng.below(4) {
                    0 => rng.below(17),
                    _ => rng.below(max),
                };
                c(rng.below(64) as usize, rng.below(64) as usize, bytes as usize)
            })
            .collect()
    };
    let mut out = vec![
        CopyCase {
            name: "16 copies, every alignment class, sizes 0 1 15 4097 ...".into(),
            copies: vec![
                c(0, 0, 4096),           // 16 bytes a lane
                c(16, 32, 4096 + 5),     // and a tail
                c(8, 8, 1000),           // 8
                c(8, 0, 64),             // 8: the looser of the two
                c(4, 12, 4 * 77),        // 4
                c(4, 4, 4 * 77 + 3),     // 4 and a tail
                c(1, 3, 999),            // bytes
                c(2, 2, 4097),           // 2-aligned: bytes
                c(0, 0, 0),              // nothing
                c(0, 0, 1),              // all tail
                c(2, 2, 15),             // all tail
                c(0, 0, 16 * 9000 + 15), // more vectors than lanes in the grid
                c(5, 5, 4097),
                c(12, 4, 777),
                c(3, 0, 16),
                c(64, 128, 1 << 16),
            ],
            seed: seed ^ 1,
        },
        CopyCase { name: "16 random copies".into(), copies: random(16, 20_000), seed: seed ^ 2 },
        CopyCase { name: "one copy".into(), copies: vec![c(7, 9, 4097)], seed: seed ^ 3 },
    ];
    if large {
        out.push(CopyCase {
            name: "16 copies of up to 4 MiB".into(),
            copies: random(16, 4 << 20),
            seed: seed ^ 4,
        });
    }
    out
}

/// Copies `chunks` (`u64`) values of `ty` (`width` bytes each) from `src` to `dst`, lane `gid`
/// of `total` taking every `total`-th, in blocks of `block` values.
fn copy_loop(
    b: &mut KernelBuilder,
    (src, dst): (Value, Value),
    chunks: Value,
    (gid, total): (Value, Value),
    ty: Type,
    block: u64,
) {
    let width = b.u64(ty.bytes() as u64);
    let blk = b.u64(block);
    let blocks = b.div(chunks, blk);
    let whole = b.mul(blocks, blk);
    let partial = b.lt(whole, chunks);
    let one64 = b.u64(1);
    let zero64 = b.u64(0);
    let extra = b.select(partial, one64, zero64);
    let blocks = b.add(blocks, extra);
    let blocks = b.convert(blocks, Type::U32);
    let (zero, one) = (b.u32(0), b.u32(1));
    b.for_range(zero, blocks, one, 1, &[], |b, r, _| {
        let r64 = b.convert(r, Type::U64);
        let first = b.mul(r64, blk);
        let left = b.sub(chunks, first);
        let n = b.min(left, blk);
        let n = b.convert(n, Type::U32);
        copy_block(b, (src, dst), (first, n), (gid, total), (ty, width));
        vec![]
    });
}

/// Values `first + i` for `i` in `gid..n` by `total`.
fn copy_block(
    b: &mut KernelBuilder,
    (src, dst): (Value, Value),
    (first, n): (Value, Value),
    (gid, total): (Value, Value),
    (ty, width): (Type, Value),
) {
    b.for_range(gid, n, total, 4, &[], |b, i, _| {
        let i64v = b.convert(i, Type::U64);
        let i64v = b.add(first, i64v);
        let off = b.mul(i64v, width);
        let s = b.add(src, off);
        let d = b.add(dst, off);
        let zero = b.u32(0);
        let v = b.load(MemRef::Global(s), zero, ty);
        b.store(MemRef::Global(d), zero, v);
        vec![]
    });
}

/// The kernel: `table`, `count`; grid `[WORKGROUPS, count, 1]`.
pub fn copy_from_mapped_multi(t: &Target, wave: u32) -> Kernel {
    copy_in_blocks(t, wave, BLOCK_CHUNKS)
}

/// The kernel with blocks of `block` vectors (tests use small blocks to reach the outer loop).
pub fn copy_in_blocks(_t: &Target, wave: u32, block: u64) -> Kernel {
    let mut b = KernelBuilder::new("copy_from_mapped_multi", wave);
    b.workgroup_size([BLOCK, 1, 1]);
    b.const_param("block", BLOCK as i64);
    b.const_param("workgroups", WORKGROUPS as i64);
    let table = b.buffer("table", ScalarType::U64, Access::Read);
    let count = b.scalar_param("count", ScalarType::U32);
    b.set_buffer_len(table, ShapeExpr::scaled(&[count], 3, 1));
    b.grid([
        ShapeExpr::constant(WORKGROUPS as u64),
        ShapeExpr::scaled(&[count], 1, 1),
        ShapeExpr::constant(1),
    ]);
    let c = b.workgroup_id(Dim::Y);
    let three = b.u32(3);
    let k = b.mul(c, three);
    let one = b.u32(1);
    let two = b.u32(2);
    let src = b.load(table, k, Type::U64);
    let k1 = b.add(k, one);
    let dst = b.load(table, k1, Type::U64);
    let k2 = b.add(k, two);
    let bytes = b.load(table, k2, Type::U64);

    let wg = b.workgroup_id(Dim::X);
    let local = b.local_id();
    let bl = b.u32(BLOCK);
    let gid = b.mul(wg, bl);
    let gid = b.add(gid, local);
    let total = b.u32(BLOCK * WORKGROUPS);

    let both = b.or(src, dst);
    let zero64 = b.u64(0);
    let aligned_to = |b: &mut KernelBuilder, m: u64| {
        let mm = b.u64(m - 1);
        let low = b.and(both, mm);
        b.eq(low, zero64)
    };
    let a16 = aligned_to(&mut b, 16);
    let a8 = aligned_to(&mut b, 8);
    let a4 = aligned_to(&mut b, 4);
    let w16 = b.u64(16);
    let w8 = b.u64(8);
    let w4 = b.u64(4);
    let w1 = b.u64(1);
    let width = b.select(a4, w4, w1);
    let width = b.select(a8, w8, width);
    let width = b.select(a16, w16, width);
    let chunks64 = b.div(bytes, width);
    let chunks = chunks64;
    let ptrs = (src, dst);
    let lanes = (gid, total);
    b.if_else(
        a16,
        |b| {
            copy_loop(b, ptrs, chunks, lanes, Type::vector(ScalarType::U32, 4), block);
            vec![]
        },
        |b| {
            b.if_else(
                a8,
                |b| {
                    copy_loop(b, ptrs, chunks, lanes, Type::vector(ScalarType::U32, 2), block);
                    vec![]
                },
                |b| {
                    b.if_else(
                        a4,
                        |b| {
                            copy_loop(b, ptrs, chunks, lanes, Type::U32, block);
                            vec![]
                        },
                        |b| {
                            copy_loop(b, ptrs, chunks, lanes, Type::U8, block);
                            vec![]
                        },
                    );
                    vec![]
                },
            );
            vec![]
        },
    );
    // The tail: bytes % width, a byte a lane.
    let bulk = b.mul(chunks64, width);
    let tail = b.sub(bytes, bulk);
    let gid64 = b.convert(gid, Type::U64);
    let mine = b.lt(gid64, tail);
    b.if_then(mine, |b| {
        let off = b.add(bulk, gid64);
        let s = b.add(src, off);
        let d = b.add(dst, off);
        let zero = b.u32(0);
        let v = b.load(MemRef::Global(s), zero, Type::U8);
        b.store(MemRef::Global(d), zero, v);
    });
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_ir::interp::{self, Arg, InterpError, Region, RunOptions};
    use rand::{Rng, SeedableRng};

    fn table(copies: &[(u64, u64, u64)]) -> Vec<u8> {
        copies.iter().flat_map(|&(s, d, n)| [s, d, n]).flat_map(u64::to_le_bytes).collect()
    }

    fn run(k: &Kernel, copies: &[(u64, u64, u64)], mem: &mut [Region]) -> Result<(), InterpError> {
        let mut args = [Arg::Buffer(table(copies)), Arg::Scalar(copies.len() as u64)];
        interp::run_with_memory(k, &mut args, mem, &RunOptions::default()).map(|_| ())
    }

    /// A copy of `2^32 + 3` bytes from a 64-byte region: the kernel must try to copy past the
    /// region (an out-of-bounds error), not truncate the length to 3 bytes and succeed, as the
    /// single `u32` loop did.
    #[test]
    fn a_copy_past_4_gib_chunks_is_not_truncated() {
        let t = Target::by_name("gfx1100").unwrap();
        let k = copy_from_mapped_multi(t, 32);
        let (src, dst) = (0x10_0001u64, 0x20_0001u64);
        let mut mem =
            [Region { base: src, bytes: vec![7; 64] }, Region { base: dst, bytes: vec![0; 64] }];
        let e = run(&k, &[(src, dst, (1 << 32) + 3)], &mut mem).unwrap_err();
        assert!(matches!(e, InterpError::OutOfBounds { .. }), "{e}");
        assert!(e.to_string().contains("is past its end"), "{e}");
    }

    /// With blocks of a few vectors (so the outer loop runs many times), every length and
    /// alignment copies exactly the source bytes and nothing else.
    #[test]
    fn blocked_copies_match_memcpy() {
        let t = Target::by_name("gfx1100").unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        for block in [1u64, 3, 64] {
            let k = copy_in_blocks(t, 32, block);
            for _ in 0..3 {
                let n: u64 = rng.gen_range(0..3000);
                let (so, d_o) = [(0u64, 0u64), (8, 8), (4, 12), (1, 2)][rng.gen_range(0..4)];
                let (src, dst) = (0x10_0000u64, 0x40_0000u64);
                let data: Vec<u8> = (0..n + 32).map(|_| rng.gen()).collect();
                let mut mem = [
                    Region { base: src, bytes: data.clone() },
                    Region { base: dst, bytes: vec![0xee; n as usize + 32] },
                ];
                run(&k, &[(src + so, dst + d_o, n)], &mut mem).unwrap();
                let mut want = vec![0xee; n as usize + 32];
                want[d_o as usize..(d_o + n) as usize]
                    .copy_from_slice(&data[so as usize..(so + n) as usize]);
                assert_eq!(mem[1].bytes, want, "block {block}, {n} bytes, offsets {so} {d_o}");
            }
        }
    }
}
