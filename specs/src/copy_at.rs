//! `copy_at_i32`: `dst[at + i] = src[i]` for `i < n`, leaving the rest of `dst` as it was; an
//! element whose place `at + i` is at or past `cap` is left out (it is not written anywhere).
//!
//! A decode graph's last node: it copies the step's greedy tokens to their positions in a token
//! history kept in host memory mapped into the device (`Device::alloc_host_mapped`), which the
//! host reads in place once the step is done (`ReadBack::in_place`). No copy is queued between
//! two replays of the graph: on the H200 such a copy (`cuMemcpyDtoHAsync` of 4 bytes after each
//! SmolLM2 step) cost about 9 us a token. Each step writes its own positions, so a step queued
//! behind another never overwrites what the host has not read yet.
//!
//! ABI:
//!
//! | param | kind                    | meaning                                  |
//! |-------|-------------------------|------------------------------------------|
//! | `src` | i32, read, `n`          | the values                               |
//! | `dst` | i32, read-write, `cap`  | where they go, from element `at`         |
//! | `n`   | u32, at least 1         | values                                   |
//! | `at`  | u32                     | first place in `dst`                     |
//! | `cap` | u32                     | length of `dst`                          |
//!
//! The place is computed in 64 bits, so `at` near `u32::MAX` never wraps onto the start of
//! `dst`.

use crate::cases::{Case, Rng};
use crate::{Bench, KernelSpec, Parity, VariantSpec};
use kiln_ir::package::Admission;
use kiln_ir::{
    Access, Dim, Kernel, KernelBuilder, ScalarRule, ScalarType, ShapeExpr, Target, Type,
};

/// Lanes a workgroup (at least a wave at every wave size).
pub const BLOCK: u32 = 64;

/// The family (baseline only: a step copies 1 to 8 values).
pub fn spec() -> KernelSpec {
    KernelSpec {
        name: "copy_at_i32",
        variants: vec![VariantSpec {
            name: "baseline",
            build: copy_at,
            admit: Admission::default(),
        }],
        parity: Parity::Buffers(parity_cases),
        bench: Bench::Without(
            "a few bytes a call: timed inside the engine's decode step (kiln generate --profile)",
        ),
        archs: None,
        budgets: vec![],
    }
}

/// The kernel: a lane a value, grid `ceil(n / BLOCK)`.
pub fn copy_at(_t: &Target, wave: u32) -> Kernel {
    let mut b = KernelBuilder::new("copy_at_i32", wave);
    b.workgroup_size([BLOCK, 1, 1]);
    b.const_param("block", BLOCK as i64);
    let src = b.buffer("src", ScalarType::I32, Access::Read);
    let dst = b.buffer("dst", ScalarType::I32, Access::ReadWrite);
    let n = b.scalar_param("n", ScalarType::U32);
    let at = b.scalar_param("at", ScalarType::U32);
    let cap = b.scalar_param("cap", ScalarType::U32);
    b.scalar_rule(n, ScalarRule::AtLeast(1));
    b.set_buffer_len(src, ShapeExpr::scaled(&[n], 1, 1));
    b.set_buffer_len(dst, ShapeExpr::scaled(&[cap], 1, 1));
    b.grid([
        ShapeExpr::scaled(&[n], 1, BLOCK as u64),
        ShapeExpr::constant(1),
        ShapeExpr::constant(1),
    ]);
    let (n_v, at_v, cap_v) = (b.arg(n), b.arg(at), b.arg(cap));
    let wg = b.workgroup_id(Dim::X);
    let local = b.local_id();
    let bl = b.u32(BLOCK);
    let i = b.mul(wg, bl);
    let i = b.add(i, local);
    let inside = b.lt(i, n_v);
    b.if_then(inside, |b| {
        let i64v = b.convert(i, Type::U64);
        let at64 = b.convert(at_v, Type::U64);
        let cap64 = b.convert(cap_v, Type::U64);
        let place = b.add(at64, i64v);
        let fits = b.lt(place, cap64);
        b.if_then(fits, |b| {
            let v = b.load(src, i, Type::scalar(ScalarType::I32));
            let place = b.convert(place, Type::U32);
            b.store(dst, place, v);
        });
    });
    b.finish()
}

/// Random values and histories: one value, a decode step's 8, a count past a workgroup; places
/// at the start, inside, at the end, partly and wholly past `cap`, and at `u32::MAX` (a place
/// that would wrap in 32 bits).
fn parity_cases(rng: &mut Rng, large: bool) -> Vec<Case> {
    let mut shapes: Vec<(u32, u32, u32)> = vec![
        (1, 0, 1),
        (1, 2303, 2304),
        (8, 0, 2312),
        (8, 2301, 2304),
        (8, 2304, 2304),
        (3, 17, 100),
        (BLOCK + 1, 5, 300),
        (200, u32::MAX - 2, 300),
    ];
    if large {
        shapes.push((8, 131_064, 131_072));
    }
    shapes
        .into_iter()
        .map(|(n, at, cap)| {
            let mut words = |len: u32| -> Vec<u8> {
                (0..len).flat_map(|_| (rng.next_u64() as u32).to_le_bytes()).collect()
            };
            let src = words(n);
            let dst = words(cap);
            Case {
                name: format!("n={n} at={at} cap={cap}"),
                scalars: vec![
                    ("n".into(), ScalarType::U32, u64::from(n)),
                    ("at".into(), ScalarType::U32, u64::from(at)),
                    ("cap".into(), ScalarType::U32, u64::from(cap)),
                ],
                inputs: vec![
                    ("src".into(), ScalarType::I32, src),
                    ("dst".into(), ScalarType::I32, dst),
                ],
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_ir::interp::{self, Arg, RunOptions};
    use rand::{Rng as _, SeedableRng};

    fn run(n: u32, at: u32, src: &[i32], dst: &[i32]) -> Vec<i32> {
        let t = Target::by_name("gfx1100").unwrap();
        let k = copy_at(t, 32);
        let bytes = |v: &[i32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let mut args = [
            Arg::Buffer(bytes(src)),
            Arg::Buffer(bytes(dst)),
            Arg::Scalar(u64::from(n)),
            Arg::Scalar(u64::from(at)),
            Arg::Scalar(dst.len() as u64),
        ];
        interp::run(&k, &mut args, &RunOptions::default()).unwrap();
        let Arg::Buffer(out) = &args[1] else { unreachable!() };
        out.chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect()
    }

    /// Against a host copy on random places, partly past the end and at `u32::MAX`: the values
    /// land at `at..`, nothing else in `dst` changes, nothing past `cap` is written.
    #[test]
    fn copies_to_its_place_and_nowhere_else() {
        let mut rng = rand::rngs::StdRng::from_entropy();
        for _ in 0..20 {
            let n = rng.gen_range(1..200u32);
            let cap = rng.gen_range(1..400u32);
            let at = match rng.gen_range(0..4) {
                0 => u32::MAX - rng.gen_range(0..3),
                1 => cap.saturating_sub(rng.gen_range(0..n)),
                _ => rng.gen_range(0..cap),
            };
            let src: Vec<i32> = (0..n).map(|_| rng.gen()).collect();
            let dst: Vec<i32> = (0..cap).map(|_| rng.gen()).collect();
            let mut want = dst.clone();
            for (i, &v) in src.iter().enumerate() {
                let place = u64::from(at) + i as u64;
                if place < u64::from(cap) {
                    want[place as usize] = v;
                }
            }
            assert_eq!(run(n, at, &src, &dst), want, "n {n} at {at} cap {cap}");
        }
    }
}
