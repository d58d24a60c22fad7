//! `ld_matrix`: the op check (not shipped) of the IR's `ld_matrix` (NVIDIA `ldmatrix`), for device
//! parity against the interpreter: a pure data movement, so bit for bit. Registered in
//! [`crate::checks`] and built by `specs/checks.ron` for the archs that have the instruction.
//!
//! ABI:
//!
//! | param | kind                    | meaning                                         |
//! |-------|-------------------------|-------------------------------------------------|
//! | `x`   | u16, read, `1536 n`     | a block of 32 rows x 24 elements a wave          |
//! | `out` | u16, write, `1792 n`    | 14 elements a lane: x4, then x2 `.trans`, then x1 |
//! | `n`   | u32                     | workgroups (two waves each)                     |
//!
//! Each wave stages its block in LDS (rows of 48 bytes, so every 8-element row piece starts on
//! 16 bytes), then lane `l` names, for the four matrices, row `(5l + 3) % 32` at column `8 (l %
//! 3)`; for the two transposed ones row `(7l + 1) % 32` at `8 ((l + 1) % 3)`; for the one, row
//! `31 - l` at 16: rows in every order, and pieces at each of the three columns.

use crate::cases::{Case, Rng};
use crate::{Bench, KernelSpec, Parity, VariantSpec};
use kiln_ir::package::Admission;
use kiln_ir::target::Capability;
use kiln_ir::verifier::target::Requirement;
use kiln_ir::{Access, BarrierKind, Kernel, KernelBuilder, ScalarType, ShapeExpr, Target, Type};

/// Waves a workgroup.
const WAVES: u32 = 2;
/// Rows and elements a row of a wave's block.
const ROWS: u32 = 32;
const COLS: u32 = 24;
/// Elements a lane writes.
const PER_LANE: u32 = 14;

/// Lane `l`'s `(row, column)` for each of the three loads: `x4`, `x2 .trans`, `x1`.
pub fn rows_of(l: u32) -> [(u32, u32); 3] {
    [((5 * l + 3) % 32, 8 * (l % 3)), ((7 * l + 1) % 32, 8 * ((l + 1) % 3)), (31 - l, 16)]
}

/// The archs with `ldmatrix`.
pub fn archs() -> Vec<String> {
    Requirement::Capability(Capability::LdMatrix).archs().into_iter().map(String::from).collect()
}

/// The family (baseline only), built where the instruction exists.
pub fn spec() -> KernelSpec {
    KernelSpec {
        name: "ld_matrix",
        variants: vec![VariantSpec {
            name: "baseline",
            build,
            admit: Admission { archs: archs(), shapes: vec![] },
        }],
        parity: Parity::Buffers(|rng, _| cases(rng.next_u64())),
        bench: Bench::Without("an op check: its cases prove bits, not speed"),
        archs: Some(archs()),
        budgets: vec![],
    }
}

/// The kernel (wave 32: the op's only wave size).
pub fn build(_t: &Target, wave: u32) -> Kernel {
    let mut b = KernelBuilder::new("ld_matrix", wave);
    b.workgroup_size([WAVES * wave, 1, 1]);
    let x = b.buffer("x", ScalarType::U16, Access::Read);
    let out = b.buffer("out", ScalarType::U16, Access::Write);
    let n = b.scalar_param("n", ScalarType::U32);
    let block = (ROWS * COLS) as u64;
    b.set_buffer_len(x, ShapeExpr::scaled(&[n], block * WAVES as u64, 1));
    b.set_buffer_len(out, ShapeExpr::scaled(&[n], (PER_LANE * WAVES * wave) as u64, 1));
    b.grid([ShapeExpr::scaled(&[n], 1, 1), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let lds = b.lds("blocks", ScalarType::U16, WAVES * ROWS * COLS);
    let wg = b.workgroup_id(kiln_ir::Dim::X);
    let (wave_id, lane) = (b.wave(), b.lane());
    let wv = b.u32(WAVES);
    let gw = b.mul(wg, wv);
    let gw = b.add(gw, wave_id);
    let bv = b.u32(ROWS * COLS);
    let src = b.mul(gw, bv);
    let mine = b.mul(wave_id, bv);
    let (w, nv) = (b.u32(wave), b.u32(ROWS * COLS));
    b.for_range(lane, nv, w, 1, &[], |b, i, _| {
        let at = b.add(src, i);
        let v = b.load(x, at, Type::scalar(ScalarType::U16));
        let to = b.add(mine, i);
        b.store(lds, to, v);
        vec![]
    });
    b.barrier(BarrierKind::Lds);
    // Lane `l`'s row index for each load, as a chain of selects over constants (`rows_of` is
    // host arithmetic; the table is the same for every wave).
    let index = |b: &mut KernelBuilder, which: usize| {
        let mut at = b.u32(0);
        for l in 0..32 {
            let (r, c) = rows_of(l)[which];
            let lv = b.u32(l);
            let here = b.eq(lane, lv);
            let v = b.u32(r * COLS + c);
            at = b.select(here, v, at);
        }
        b.add(mine, at)
    };
    let gl = b.mul(gw, w);
    let gl = b.add(gl, lane);
    let pl = b.u32(PER_LANE);
    let base = b.mul(gl, pl);
    let mut e = 0;
    for (which, (matrices, trans)) in [(4, false), (2, true), (1, false)].into_iter().enumerate() {
        let at = index(&mut b, which);
        let m = b.ld_matrix(lds, at, matrices, trans);
        for k in 0..2 * matrices {
            let v = b.extract(m, k as u8);
            let o = b.u32(e);
            let o = b.add(base, o);
            b.store(out, o, v);
            e += 1;
        }
    }
    b.finish()
}

/// Parity cases: one and three workgroups of random elements, and blocks of all-ones and of a
/// NaN's bits (moved, never computed on).
pub fn cases(seed: u64) -> Vec<Case> {
    let mut rng = Rng::new(seed);
    [(1u32, None), (3, None), (1, Some(0xffffu16)), (2, Some(0x7e01))]
        .into_iter()
        .map(|(n, fill)| {
            let len = (n * WAVES * ROWS * COLS) as usize;
            let x: Vec<u8> = (0..len)
                .flat_map(|_| fill.unwrap_or_else(|| rng.next_u64() as u16).to_le_bytes())
                .collect();
            Case {
                name: format!("n={n} fill={fill:?}"),
                scalars: vec![("n".to_string(), ScalarType::U32, n as u64)],
                inputs: vec![("x".to_string(), ScalarType::U16, x)],
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_ir::interp::{self, Arg, RunOptions};

    /// On the interpreter (sm_90's wave): each lane's 14 elements are the pairs the PTX ISA's
    /// fragment layout of `ldmatrix` names (lane `l` takes row `l / 4`, columns `2 (l % 4)` and
    /// one past, of each matrix; transposed, rows `2 (l % 4)` and one past at column `l / 4`),
    /// from the rows lanes `8j .. 8j + 8` named.
    #[test]
    fn each_lane_gets_its_pairs() {
        let t = Target::by_name("sm_90").unwrap();
        let k = build(t, 32);
        for c in cases(11) {
            let n = c.scalars[0].2 as usize;
            let x: Vec<u16> =
                c.inputs[0].2.chunks(2).map(|p| u16::from_le_bytes([p[0], p[1]])).collect();
            let mut args = vec![
                Arg::Buffer(c.inputs[0].2.clone()),
                Arg::Buffer(vec![0; n * (PER_LANE * WAVES * 32) as usize * 2]),
                Arg::Scalar(n as u64),
            ];
            interp::run(&k, &mut args, &RunOptions::default()).unwrap();
            let Arg::Buffer(got) = &args[1] else { unreachable!() };
            let got: Vec<u16> = got.chunks(2).map(|p| u16::from_le_bytes([p[0], p[1]])).collect();
            for gw in 0..n * WAVES as usize {
                let block = &x[gw * (ROWS * COLS) as usize..];
                let at = |r: u32, col: u32| block[(r * COLS + col) as usize];
                for l in 0..32u32 {
                    let (g, t4) = (l / 4, l % 4);
                    let mut want = vec![];
                    for (which, (matrices, trans)) in
                        [(4u32, false), (2, true), (1, false)].into_iter().enumerate()
                    {
                        for j in 0..matrices {
                            let row = |i: u32| rows_of(8 * j + i)[which];
                            if trans {
                                for i in [2 * t4, 2 * t4 + 1] {
                                    let (r, col) = row(i);
                                    want.push(at(r, col + g));
                                }
                            } else {
                                let (r, col) = row(g);
                                want.push(at(r, col + 2 * t4));
                                want.push(at(r, col + 2 * t4 + 1));
                            }
                        }
                    }
                    let o = (gw * 32 + l as usize) * PER_LANE as usize;
                    assert_eq!(&got[o..o + PER_LANE as usize], &want[..], "{} lane {l}", c.name);
                }
            }
        }
    }
}
