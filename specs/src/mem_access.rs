//! `mem_access`: test kernels (not shipped) for the memory access forms of issue 11, for device
//! parity against the interpreter: loads below their natural alignment, byte indices into packed
//! blocks, and 64-bit element indices; one family a form ([`specs`]), registered in
//! [`crate::checks`] and built by `specs/checks.ron`.
//!
//! ABI of every family:
//!
//! | param    | kind              | meaning                                           |
//! |----------|-------------------|---------------------------------------------------|
//! | `blocks` | u8, read, `34*n`  | `n` Q8_0-shaped blocks of 34 bytes                |
//! | `out`    | u8, write, `32*n` | 32 bytes a block                                  |
//! | `n`      | u32               | blocks (a lane each)                              |
//! | `base`   | u64               | `index64` only: added to the element index (0)    |
//!
//! - `unaligned_q8`: block `i`'s bytes 2..34 as two `u8x16` at byte `34i + 2`, align 2;
//! - `byte_offset`: the same 32 bytes as eight `u32` at byte `34i + 2 + 4k`, align 2;
//! - `index64`: the same bytes read as sixteen `u8x2` at the `u64` index `base + 34i + 2 + 2k`
//!   (in `u8` elements, the scalar's unit; naturally 2-byte aligned).

use crate::cases::{Case, Rng};
use crate::{Bench, KernelSpec, Parity, VariantSpec};
use kiln_ir::package::Admission;
use kiln_ir::{Access, IndexUnit, Kernel, KernelBuilder, ScalarType, ShapeExpr, Target, Type};

/// Lanes a workgroup.
pub const BLOCK: u32 = 64;

/// The three access forms, a family each (baseline only: their ABIs differ), every arch.
pub fn specs() -> Vec<KernelSpec> {
    let family = |name, build: crate::BuildFn, parity| KernelSpec {
        name,
        variants: vec![VariantSpec { name: "baseline", build, admit: Admission::default() }],
        parity: Parity::Buffers(parity),
        bench: Bench::Without("an op check: its cases prove bits, not speed"),
        archs: None,
        budgets: vec![],
    };
    vec![
        family("mem_unaligned_q8", unaligned_q8, |rng, _| cases(rng.next_u64(), "unaligned_q8")),
        family("mem_byte_offset", byte_offset, |rng, _| cases(rng.next_u64(), "byte_offset")),
        family("mem_index64", index64, |rng, _| cases(rng.next_u64(), "index64")),
    ]
}

/// The shared frame: parameters, grid, and the lane's block (`None` past `n`).
fn frame(
    name: &str,
    wave: u32,
    f: impl FnOnce(&mut KernelBuilder, [kiln_ir::Param; 3], kiln_ir::Value),
) -> Kernel {
    let mut b = KernelBuilder::new(name, wave);
    b.workgroup_size([BLOCK, 1, 1]);
    let blocks = b.buffer("blocks", ScalarType::U8, Access::Read);
    let out = b.buffer("out", ScalarType::U8, Access::Write);
    let n = b.scalar_param("n", ScalarType::U32);
    b.set_buffer_len(blocks, ShapeExpr::scaled(&[n], 34, 1));
    b.set_buffer_len(out, ShapeExpr::scaled(&[n], 32, 1));
    b.grid([
        ShapeExpr::scaled(&[n], 1, BLOCK as u64),
        ShapeExpr::constant(1),
        ShapeExpr::constant(1),
    ]);
    let wg = b.workgroup_id(kiln_ir::Dim::X);
    let bl = b.u32(BLOCK);
    let i = b.mul(wg, bl);
    let local = b.local_id();
    let i = b.add(i, local);
    let nv = b.arg(n);
    let live = b.lt(i, nv);
    b.if_then(live, |b| f(b, [blocks, out, n], i));
    b.finish()
}

/// Two `u8x16` at 2-byte alignment.
pub fn unaligned_q8(_t: &Target, wave: u32) -> Kernel {
    frame("mem_unaligned_q8", wave, |b, [blocks, out, _], i| {
        let c34 = b.u32(34);
        let at = b.mul(i, c34);
        let c32 = b.u32(32);
        let dst = b.mul(i, c32);
        for h in 0..2 {
            let s = b.u32(2 + 16 * h);
            let s = b.add(at, s);
            let q =
                b.load_with(blocks, s, Type::vector(ScalarType::U8, 16), IndexUnit::Byte, Some(2));
            let o = b.u32(16 * h);
            let d = b.add(dst, o);
            b.store(out, d, q);
        }
    })
}

/// Eight `u32` at byte offsets, 2-byte alignment, stored with byte indices at 4-byte alignment.
pub fn byte_offset(_t: &Target, wave: u32) -> Kernel {
    frame("mem_byte_offset", wave, |b, [blocks, out, _], i| {
        let c34 = b.u32(34);
        let at = b.mul(i, c34);
        let c32 = b.u32(32);
        let dst = b.mul(i, c32);
        for k in 0..8 {
            let s = b.u32(2 + 4 * k);
            let s = b.add(at, s);
            let v = b.load_with(blocks, s, Type::U32, IndexUnit::Byte, Some(2));
            let o = b.u32(4 * k);
            let d = b.add(dst, o);
            b.store_with(out, d, v, IndexUnit::Byte, Some(4));
        }
    })
}

/// `u8x2` elements at a `u64` element index.
pub fn index64(_t: &Target, wave: u32) -> Kernel {
    let mut k = frame("mem_index64", wave, |b, [blocks, out, _], i| {
        let base = b.scalar_param("base", ScalarType::U64);
        let bv = b.arg(base);
        let i64v = b.convert(i, Type::U64);
        let c34 = b.u64(34);
        let at = b.mul(i64v, c34);
        let at = b.add(at, bv);
        let c32 = b.u64(32);
        let dst = b.mul(i64v, c32);
        let ty = Type::vector(ScalarType::U8, 2);
        for k in 0..16u64 {
            let s = b.u64(2 + 2 * k);
            let s = b.add(at, s);
            let v = b.load(blocks, s, ty);
            let o = b.u64(2 * k);
            let d = b.add(dst, o);
            b.store(out, d, v);
        }
    });
    k.name = "mem_index64".into();
    k
}

/// Parity cases: random blocks for block counts around the workgroup size (1, 63, 64, 65, 1000),
/// and blocks of all-0xff and all-zero bytes.
pub fn cases(seed: u64, variant: &str) -> Vec<Case> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for (n, fill) in [
        (1u32, None),
        (63, None),
        (64, None),
        (65, None),
        (1000, None),
        (7, Some(0xff)),
        (7, Some(0)),
    ] {
        let bytes: Vec<u8> =
            (0..34 * n).map(|_| fill.unwrap_or_else(|| rng.next_u64() as u8)).collect();
        let mut scalars = vec![("n".to_string(), ScalarType::U32, n as u64)];
        if variant == "index64" {
            scalars.push(("base".to_string(), ScalarType::U64, 0));
        }
        out.push(Case {
            name: format!("{variant} n={n} fill={fill:?}"),
            scalars,
            inputs: vec![("blocks".to_string(), ScalarType::U8, bytes)],
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_ir::interp::{self, Arg, RunOptions};

    /// Every variant copies bytes 2..34 of each block on the interpreter, at wave 32 and 64.
    #[test]
    fn every_variant_reads_the_quants() {
        let t = Target::by_name("gfx1100").unwrap();
        for (f, variant) in specs().iter().zip(["unaligned_q8", "byte_offset", "index64"]) {
            for wave in [32, 64] {
                let k = (f.baseline().build)(t, wave);
                for c in cases(5, variant) {
                    let n = c.scalars[0].2 as usize;
                    let x = c.inputs[0].2.clone();
                    let mut args = vec![Arg::Buffer(x.clone()), Arg::Buffer(vec![0xee; 32 * n])];
                    args.extend(c.scalars.iter().map(|s| Arg::Scalar(s.2)));
                    interp::run(&k, &mut args, &RunOptions::default()).unwrap();
                    let Arg::Buffer(got) = &args[1] else { unreachable!() };
                    for i in 0..n {
                        assert_eq!(
                            &got[32 * i..32 * i + 32],
                            &x[34 * i + 2..34 * i + 34],
                            "{}",
                            c.name
                        );
                    }
                }
            }
        }
    }
}
