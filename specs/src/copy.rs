//! `copy_from_mapped_multi`: up to 16 copies in one launch, e.g. from host memory mapped into the
//! device's address space (pinned, `cuMemHostGetDevicePointer` / `hipHostGetDevicePointer`) to
//! device buffers, as an engine stages a decode step's small inputs.
//!
//! A table of `u64` triples `(src, dst, bytes)` (device-visible addresses) drives it; grid y is
//! the copy. Each copy uses the widest access both pointers allow (16, 8, 4 bytes, else bytes):
//! `bytes / width` vector copies spread over the copy's lanes (consecutive lanes, consecutive
//! vectors), then the last `bytes % width` bytes one a lane. Each copy must be below `4 GiB *
//! width`; regions must not overlap. Engines batch up to 16 copies a launch; any count works.
//!
//! ABI:
//!
//! | param   | kind                     | meaning                                 |
//! |---------|--------------------------|-----------------------------------------|
//! | `table` | u64, read, `3 * count`   | `(src, dst, bytes)` for each copy       |
//! | `count` | u32                      | number of copies (grid y)               |

use crate::{KernelSpec, VariantSpec};
use kiln_ir::package::Admission;
use kiln_ir::{
    Access, Dim, Kernel, KernelBuilder, MemRef, ScalarType, ShapeExpr, Target, Type, Value,
};

/// Lanes a workgroup.
pub const BLOCK: u32 = 256;
/// Workgroups a copy (grid x).
pub const WORKGROUPS: u32 = 32;

/// The family (baseline only).
pub fn spec() -> KernelSpec {
    KernelSpec {
        name: "copy_from_mapped_multi",
        variants: vec![VariantSpec {
            name: "baseline",
            build: copy_from_mapped_multi,
            admit: Admission::default(),
        }],
    }
}

/// Copies `chunks` values of `ty` (`width` bytes each) from `src` to `dst`, lane `gid` of
/// `total` taking every `total`-th.
fn copy_loop(
    b: &mut KernelBuilder,
    (src, dst): (Value, Value),
    chunks: Value,
    (gid, total): (Value, Value),
    ty: Type,
) {
    let width = b.u64(ty.bytes() as u64);
    b.for_range(gid, chunks, total, 4, &[], |b, i, _| {
        let i64v = b.convert(i, Type::U64);
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
pub fn copy_from_mapped_multi(_t: &Target, wave: u32) -> Kernel {
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
    let chunks = b.convert(chunks64, Type::U32);
    let ptrs = (src, dst);
    let lanes = (gid, total);
    b.if_else(
        a16,
        |b| {
            copy_loop(b, ptrs, chunks, lanes, Type::vector(ScalarType::U32, 4));
            vec![]
        },
        |b| {
            b.if_else(
                a8,
                |b| {
                    copy_loop(b, ptrs, chunks, lanes, Type::vector(ScalarType::U32, 2));
                    vec![]
                },
                |b| {
                    b.if_else(
                        a4,
                        |b| {
                            copy_loop(b, ptrs, chunks, lanes, Type::U32);
                            vec![]
                        },
                        |b| {
                            copy_loop(b, ptrs, chunks, lanes, Type::U8);
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
