//! `ld_matrix` on the interpreter: the fragments it gives equal `frag_load`'s (built from the
//! lane maps alone) for the A and both B layouts of NVIDIA's `m16n8k16` f16 shape, with 1, 2 and
//! 4 matrices and the transposed form, on fresh random halves (NaN and infinity bits included);
//! and the refusals: a row that is misaligned or past the slot, a partial wave, wave 64, and an
//! arch without the instruction (named with those that have it).

use crate::interp_util;

use interp_util::*;
use kiln_ir::interp::{Arg, InterpError, RunOptions};
use kiln_ir::matrix::{FragLayout, FragmentRole, MmaKind, MmaShape};
use kiln_ir::*;
use rand::Rng;

/// Rows and columns staged, and the LDS row stride in halves (a multiple of 8: rows start on
/// 16 bytes).
const ROWS: u32 = 16;
const COLS: u32 = 32;
const STRIDE: u32 = COLS + 8;

fn kind() -> MmaKind {
    MmaKind::new(MmaShape::NvM16n8k16F16, ScalarType::F16, ScalarType::F16).unwrap()
}

/// How a test names the rows: lane `l`'s `(row, col)` of the staged block for the loads.
type RowOf = fn(u32) -> (u32, u32);

/// One wave stages `x` (`ROWS x COLS` halves) into LDS, then writes the elements of
/// `frag_load(role, layout)` at `at` to `want` and those of `ld_matrix(matrices, trans)` with
/// lane `l` naming `row_of(l)` to `got` (a lane's elements after one another). `skew` adds
/// elements to every row index (a misaligned row); `partial` runs `ld_matrix` in half the wave.
struct Case {
    role: FragmentRole,
    layout: FragLayout,
    at: u32,
    matrices: u32,
    trans: bool,
    row_of: RowOf,
    skew: u32,
    partial: bool,
}

fn kernel(c: &Case, wave: u32) -> Kernel {
    let k = kind();
    let mut b = KernelBuilder::new("ld_matrix_case", wave);
    b.workgroup_size([wave, 1, 1]);
    let x = b.buffer("x", ScalarType::F16, Access::Read);
    let want = b.buffer("want", ScalarType::F16, Access::Write);
    let got = b.buffer("got", ScalarType::F16, Access::Write);
    let lds = b.lds("block", ScalarType::F16, ROWS * STRIDE);
    let lane = b.lane();
    let (zero, n, w) = (b.u32(0), b.u32(ROWS * COLS), b.u32(wave));
    b.for_range(lane, n, w, 1, &[], |b, i, _| {
        let cols = b.u32(COLS);
        let r = b.div(i, cols);
        let col = b.rem(i, cols);
        let v = b.load(x, i, Type::F16);
        let st = b.u32(STRIDE);
        let at = b.mul(r, st);
        let at = b.add(at, col);
        b.store(lds, at, v);
        vec![]
    });
    b.barrier(BarrierKind::Lds);
    let (at, stride) = (b.u32(c.at), b.u32(STRIDE));
    let f = b.frag_load(k, c.role, lds, at, stride, c.layout);
    let per = k.shape().elements_per_lane(c.role);
    let per_v = b.u32(per);
    let base = b.mul(lane, per_v);
    for e in 0..per {
        let v = b.extract(f, e as u8);
        let ev = b.u32(e);
        let o = b.add(base, ev);
        b.store(want, o, v);
    }
    // Lane `l`'s row, as a table lookup of constants (`row_of` is host code).
    let mut index = zero;
    for l in 0..32 {
        let (r, col) = (c.row_of)(l);
        let lv = b.u32(l);
        let here = b.eq(lane, lv);
        let iv = b.u32(r * STRIDE + col + c.skew);
        index = b.select(here, iv, index);
    }
    let load = |b: &mut KernelBuilder| {
        let m = b.ld_matrix(lds, index, c.matrices, c.trans);
        let mv = b.u32(2 * c.matrices);
        let base = b.mul(lane, mv);
        for e in 0..2 * c.matrices {
            let v = b.extract(m, e as u8);
            let ev = b.u32(e);
            let o = b.add(base, ev);
            b.store(got, o, v);
        }
    };
    if c.partial {
        let sixteen = b.u32(16);
        let low = b.lt(lane, sixteen);
        b.if_then(low, load);
    } else {
        load(&mut b);
    }
    b.finish()
}

/// Random halves, with NaN, infinity and -0 bits among them (moved, never computed on).
fn halves(rng: &mut impl Rng) -> Vec<u64> {
    (0..ROWS * COLS)
        .map(|i| match i % 37 {
            0 => 0x7e01,
            1 => 0xfc00,
            2 => 0x8000,
            _ => rng.gen::<u16>() as u64,
        })
        .collect()
}

fn run_case(c: &Case, x: &[u64], opts: &RunOptions) -> Result<(Vec<u64>, Vec<u64>), InterpError> {
    let k = kernel(c, 32);
    let per = k_per(c);
    let mut args = vec![
        Arg::Buffer(bits_bytes(x, 2)),
        Arg::Buffer(vec![0; 32 * per * 2]),
        Arg::Buffer(vec![0; 32 * 2 * c.matrices as usize * 2]),
    ];
    interp::run(&k, &mut args, opts)?;
    Ok((bytes_bits(buffer(&args[1]), 2), bytes_bits(buffer(&args[2]), 2)))
}

fn k_per(c: &Case) -> usize {
    kind().shape().elements_per_lane(c.role) as usize
}

/// The A fragment: matrices (rows 0-7, cols 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15).
fn a_rows(l: u32) -> (u32, u32) {
    (l % 8 + 8 * ((l / 8) % 2), 8 * (l / 16))
}
/// K^T's B fragment from K's rows (`B(k, n) = K[n][k]`): rows `n`, cols `k` and `k + 8`.
fn kt_rows(l: u32) -> (u32, u32) {
    (l % 8, 8 * ((l / 8) % 2))
}
/// V's B fragment from V's rows (`B(k, n) = V[k][n]`), transposed: rows `k`, then `k + 8`;
/// matrices 2 and 3 are the next 8 columns (`n + 8`).
fn v_rows(l: u32) -> (u32, u32) {
    (l % 8 + 8 * ((l / 8) % 2), 8 * (l / 16))
}

const PLAIN: Case = Case {
    role: FragmentRole::A,
    layout: FragLayout::RowMajor,
    at: 0,
    matrices: 4,
    trans: false,
    row_of: a_rows,
    skew: 0,
    partial: false,
};

/// Each layout's fragment, as `frag_load` builds it from the lane maps: the A fragment by 4
/// matrices, the column-major B by 2 (and its second k step by matrices 2-3 of an x4), the
/// row-major B by 2 transposed (and the next n tile by matrices 2-3), one matrix alone.
#[test]
fn fragments_equal_frag_load() {
    let (mut rng, _g) = rng();
    let x = halves(&mut rng);
    let opts = RunOptions::default();
    let (want, got) = run_case(&PLAIN, &x, &opts).unwrap();
    assert_eq!(got, want, "A, x4");
    let kt16: RowOf = |l| (l % 8, 16 + 8 * ((l / 8) % 2));
    for (at, row_of) in [(0, kt_rows as RowOf), (16, kt16)] {
        let c = Case {
            role: FragmentRole::B,
            layout: FragLayout::ColMajor,
            at,
            matrices: 2,
            row_of,
            ..PLAIN
        };
        let (want, got) = run_case(&c, &x, &opts).unwrap();
        assert_eq!(got, want, "B column-major at {at}, x2");
    }
    // x4 over two k steps: matrices 2-3 are k + 16; compare them with the frag_load at 16.
    let c4 = Case {
        role: FragmentRole::B,
        layout: FragLayout::ColMajor,
        matrices: 4,
        row_of: |l| (l % 8, 8 * (l / 8)),
        ..PLAIN
    };
    let (want0, got4) = run_case(&c4, &x, &opts).unwrap();
    let c16 = Case { at: 16, ..c4 };
    let (want16, _) = run_case(&c16, &x, &opts).unwrap();
    for l in 0..32 {
        assert_eq!(&got4[l * 8..l * 8 + 4], &want0[l * 4..l * 4 + 4], "lane {l}, k step 0");
        assert_eq!(&got4[l * 8 + 4..l * 8 + 8], &want16[l * 4..l * 4 + 4], "lane {l}, k step 1");
    }
    // Row-major B (V's rows) by the transposed form; x4: matrices 2-3 are columns n + 8.
    let v = Case {
        role: FragmentRole::B,
        layout: FragLayout::RowMajor,
        matrices: 4,
        trans: true,
        row_of: v_rows,
        ..PLAIN
    };
    let (want0, got4) = run_case(&v, &x, &opts).unwrap();
    let (want8, _) = run_case(&Case { at: 8, ..v }, &x, &opts).unwrap();
    for l in 0..32 {
        assert_eq!(&got4[l * 8..l * 8 + 4], &want0[l * 4..l * 4 + 4], "lane {l}, n tile 0");
        assert_eq!(&got4[l * 8 + 4..l * 8 + 8], &want8[l * 4..l * 4 + 4], "lane {l}, n tile 1");
    }
    // One matrix: the first pair of the A fragment.
    let one = Case { matrices: 1, ..PLAIN };
    let (want, got) = run_case(&one, &x, &opts).unwrap();
    for l in 0..32 {
        assert_eq!(&got[l * 2..l * 2 + 2], &want[l * 8..l * 8 + 2], "lane {l}, x1");
    }
}

/// A row that starts 2 bytes off 16, a row past the slot, and half a wave: refused.
#[test]
fn refusals_on_the_interpreter() {
    let (mut rng, _g) = rng();
    let x = halves(&mut rng);
    let opts = RunOptions::default();
    let e = run_case(&Case { skew: 1, ..PLAIN }, &x, &opts).unwrap_err();
    assert!(matches!(e, InterpError::Misaligned { .. }), "{e}");
    let past = Case { row_of: |l| (ROWS - 1 + l % 8, 0), ..PLAIN };
    let e = run_case(&past, &x, &opts).unwrap_err();
    assert!(matches!(e, InterpError::OutOfBounds { .. }), "{e}");
    let unverified = RunOptions { verify: false, ..RunOptions::default() };
    let e = run_case(&Case { partial: true, ..PLAIN }, &x, &unverified).unwrap_err();
    assert!(matches!(e, InterpError::PartialWave { .. }), "{e}");
}

/// The verifier: divergent control, wave 64, and every arch without `ldmatrix` (named, with
/// the archs that have it); every NVIDIA arch of the table takes it.
#[test]
fn verifier_refusals() {
    let e = verify(&kernel(&Case { partial: true, ..PLAIN }, 32), None).unwrap_err().to_string();
    assert!(e.contains("ld_matrix"), "{e}");
    let e = verify(&kernel(&PLAIN, 64), None).unwrap_err().to_string();
    assert!(e.contains("ld_matrix runs in waves of 32"), "{e}");
    let k = kernel(&PLAIN, 32);
    for t in TARGETS.iter().filter(|t| t.supports_wave(32)) {
        let r = verify(&k, Some(t));
        if t.sm().is_some() {
            assert!(r.is_ok(), "{}: {r:?}", t.name);
        } else {
            let e = r.unwrap_err().to_string();
            assert!(e.contains("`ldmatrix`") && e.contains("sm_90"), "{}: {e}", t.name);
        }
    }
}
