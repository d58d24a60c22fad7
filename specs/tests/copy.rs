//! copy_from_mapped_multi: every alignment class and ragged sizes in one launch, at wave 32 and
//! 64, with the sanitizer on. Each source and each destination is its own region at its own
//! address (as host-mapped memory and device buffers are on a GPU), with guard bytes around the
//! copy, so a stray or overrunning access is either out of bounds or shows in the guards.

use crate::common;
use common::*;
use kiln_ir::interp::{self, Arg, InterpError, Region, RunOptions};
use rand::rngs::StdRng;
use rand::Rng;

/// Where the sources live (as host-mapped memory might) and where the destinations do.
const SRC_BASE: u64 = 0x7f3a_0000_0000;
const DST_BASE: u64 = 0x0000_7000_0000_0000;
/// Regions are this far apart: more than the largest copy.
const STRIDE: u64 = 1 << 20;
/// Random bytes before and after each copy, inside its region.
const GUARD: u64 = 64;

/// One copy: the offset of its source and destination within a 16-byte-aligned start (the
/// alignment class), and its size.
#[derive(Clone, Copy, Debug)]
struct Copy {
    src_align: u64,
    dst_align: u64,
    bytes: u64,
}

/// The table and the regions (sources first, then destinations) of `copies`, and the regions
/// as they must be after the launch. `short` makes copy `i`'s destination region end one byte
/// before its copy does.
fn layout(
    copies: &[Copy],
    rng: &mut StdRng,
    short: Option<usize>,
) -> (Vec<u64>, Vec<Region>, Vec<Region>) {
    let mut table = vec![];
    let (mut srcs, mut dsts, mut want) = (vec![], vec![], vec![]);
    for (i, c) in copies.iter().enumerate() {
        let (src_base, dst_base) = (SRC_BASE + i as u64 * STRIDE, DST_BASE + i as u64 * STRIDE);
        let (s, d) = (GUARD + c.src_align, GUARD + c.dst_align);
        let src: Vec<u8> = (0..s + c.bytes + GUARD).map(|_| rng.gen()).collect();
        let mut dst: Vec<u8> = (0..d + c.bytes + GUARD).map(|_| rng.gen()).collect();
        if short == Some(i) {
            dst.truncate((d + c.bytes - 1) as usize);
        }
        let mut after = dst.clone();
        let (s, d, n) = (s as usize, d as usize, c.bytes as usize);
        if short != Some(i) {
            after[d..d + n].copy_from_slice(&src[s..s + n]);
        }
        table.extend([src_base + s as u64, dst_base + d as u64, c.bytes]);
        srcs.push(Region { base: src_base, bytes: src });
        want.push(Region { base: dst_base, bytes: after });
        dsts.push(Region { base: dst_base, bytes: dst });
    }
    let mut regions = srcs.clone();
    regions.extend(dsts);
    let mut expected = srcs;
    expected.extend(want);
    (table, regions, expected)
}

fn launch(k: &kiln_ir::Kernel, table: &[u64], regions: &mut [Region]) -> Result<(), InterpError> {
    let count = table.len() as u64 / 3;
    let mut args = vec![Arg::Buffer(u64_bytes(table)), Arg::Scalar(count)];
    interp::run_with_memory(k, &mut args, regions, &RunOptions::default()).map(|_| ())
}

#[test]
fn copies_every_alignment_and_size() {
    let mut rng = rng("copies_every_alignment_and_size");
    let c = |src_align, dst_align, bytes| Copy { src_align, dst_align, bytes };
    for (_, wave) in waves() {
        let k = &variants("copy_from_mapped_multi", wave)[0].1;
        let mut copies = vec![
            c(0, 0, 4096),           // 16 bytes a lane
            c(0, 0, 4096 + 5),       // and a tail
            c(8, 8, 1000),           // 8
            c(8, 0, 64),             // 8 (the looser of the two)
            c(4, 12, 4 * 77),        // 4
            c(4, 4, 4 * 77 + 3),     // 4 and a tail
            c(1, 3, 999),            // bytes
            c(2, 2, 4097),           // 2-aligned: bytes
            c(0, 0, 0),              // nothing
            c(0, 0, 1),              // one byte, all tail
            c(2, 2, 15),             // all tail
            c(0, 0, 16 * 9000 + 15), // more vectors than lanes in the grid
        ];
        while copies.len() < 16 {
            copies.push(c(rng.gen_range(0..16), rng.gen_range(0..16), rng.gen_range(0..5000)));
        }
        let (table, mut regions, want) = layout(&copies, &mut rng, None);
        launch(k, &table, &mut regions).unwrap_or_else(|e| panic!("wave {wave}: {e}"));
        let n = copies.len();
        for (i, c) in copies.iter().enumerate() {
            let (got, want) = (&regions[n + i].bytes, &want[n + i].bytes);
            let (d, end) =
                ((GUARD + c.dst_align) as usize, (GUARD + c.dst_align + c.bytes) as usize);
            assert_eq!(&got[d..end], &want[d..end], "wave {wave} copy {i} {c:?}");
            assert_eq!(
                &got[..d],
                &want[..d],
                "wave {wave} copy {i} {c:?}: bytes before it changed"
            );
            assert_eq!(got[end], want[end], "wave {wave} copy {i} {c:?} overran");
            assert_eq!(
                &got[end..],
                &want[end..],
                "wave {wave} copy {i} {c:?}: bytes after it changed"
            );
        }
        assert_eq!(regions, want, "wave {wave}: a source changed");
    }
}

#[test]
fn an_overrunning_copy_is_out_of_bounds() {
    let mut rng = rng("an_overrunning_copy_is_out_of_bounds");
    for (_, wave) in waves() {
        let k = &variants("copy_from_mapped_multi", wave)[0].1;
        // Copy 2: 16-byte vectors for 96 bytes, then a tail of 4 bytes on lanes 0..=3 of the
        // copy's first workgroup; its destination ends one byte early, so lane 3's tail store
        // is out of bounds.
        let copies = [
            Copy { src_align: 0, dst_align: 0, bytes: 64 },
            Copy { src_align: 8, dst_align: 8, bytes: 100 },
            Copy { src_align: 0, dst_align: 0, bytes: 100 },
        ];
        let (table, mut regions, _) = layout(&copies, &mut rng, Some(2));
        let e = launch(k, &table, &mut regions).unwrap_err();
        assert!(matches!(e, InterpError::OutOfBounds { .. }), "{e}");
        let msg = e.to_string();
        let dst = DST_BASE + 2 * STRIDE;
        for part in [
            "kernel `copy_from_mapped_multi`".to_string(),
            "(store)".into(),
            "workgroup (0, 2, 0)".into(),
            "lane 3 (wave 0)".into(),
            format!("address {:#x}", dst + GUARD + 99),
            format!("byte {0} of region at {dst:#x} ({0} bytes) is past its end", GUARD + 99),
        ] {
            assert!(msg.contains(&part), "wave {wave}: {msg:?} does not contain {part:?}");
        }
    }
}
