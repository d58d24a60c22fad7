//! copy_from_mapped_multi: every alignment class and ragged sizes in one launch, at wave 32 and
//! 64. The interpreter gives each buffer argument a fake base address (`(param + 1) << 40`), and
//! the kernel's only buffer is the table, so the test's source and destination regions live in
//! the table's buffer, after the table; the sanitizer is off for it, since the kernel writes into
//! a buffer it declares read-only (on a device the regions are other allocations).

mod common;
use common::*;
use kiln_ir::interp::{Arg, RunOptions};
use rand::Rng;

const TABLE_BASE: u64 = 1 << 40; // param 0

#[test]
fn copies_every_alignment_and_size() {
    let mut rng = rng("copies_every_alignment_and_size");
    for (_, wave) in waves() {
        let k = &variants("copy_from_mapped_multi", wave)[0].1;
        // (src offset mod 16, dst offset mod 16, bytes)
        let mut cases: Vec<(u64, u64, u64)> = vec![
            (0, 0, 4096),
            (0, 0, 4096 + 5),
            (8, 8, 1000),
            (8, 0, 64),
            (4, 12, 4 * 77),
            (4, 4, 4 * 77 + 3),
            (1, 3, 999),
            (0, 0, 0),
            (0, 0, 1),
            (2, 2, 15),
            (0, 0, 16 * 9000 + 15),
        ];
        while cases.len() < 16 {
            cases.push((rng.gen_range(0..16), rng.gen_range(0..16), rng.gen_range(0..5000)));
        }
        let count = cases.len() as u64;
        let mut data_off = (3 * count * 8).div_ceil(64) * 64;
        let mut table = vec![];
        let mut regions = vec![];
        for &(sa, da, bytes) in &cases {
            let src = data_off + sa;
            data_off = (src + bytes).div_ceil(64) * 64;
            let dst = data_off + da;
            data_off = (dst + bytes).div_ceil(64) * 64 + 64;
            table.extend([TABLE_BASE + src, TABLE_BASE + dst, bytes]);
            regions.push((src as usize, dst as usize, bytes as usize));
        }
        let mut buf: Vec<u8> = (0..data_off as usize).map(|_| rng.gen()).collect();
        buf[..table.len() * 8].copy_from_slice(&u64_bytes(&table));
        let mut want = buf.clone();
        for &(s, d, n) in &regions {
            want.copy_within(s..s + n, d);
        }
        let mut args = vec![Arg::Buffer(buf), Arg::Scalar(count)];
        let opts = RunOptions { sanitize: false, ..Default::default() };
        run_args(k, &mut args, &opts);
        let Arg::Buffer(got) = &args[0] else { unreachable!() };
        for (i, &(s, d, n)) in regions.iter().enumerate() {
            assert_eq!(&got[d..d + n], &want[d..d + n], "wave {wave} copy {i} {:?}", cases[i]);
            assert_eq!(&got[d + n..d + n + 1], &want[d + n..d + n + 1], "copy {i} overran");
            let _ = s;
        }
        assert_eq!(got, &want, "wave {wave}: bytes outside the destinations changed");
    }
}
