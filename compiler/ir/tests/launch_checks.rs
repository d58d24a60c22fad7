//! What the interpreter's entry refuses before any lane runs, and the pieces of the ABI it checks
//! with: shape expressions (one checked evaluator, one printer), scalar rules, aliasing, and work
//! of absurd size.

use crate::common;
use crate::interp_util;

use interp_util::*;
use kiln_ir::interp::{self, Arg, InterpError, Region, RunOptions, MAX_LANES};
use kiln_ir::*;
use rand::Rng;
use std::time::{Duration, Instant};

// ---- shape expressions ----

#[test]
fn shape_expressions_evaluate_with_checked_arithmetic() {
    let (mut rng, _seed) = rng();
    let (a, b) = (Param::new(0), Param::new(1));
    let below = |rng: &mut rand::rngs::StdRng, lo: u64, bits: std::ops::Range<u32>| {
        let b = rng.gen_range(bits);
        rng.gen_range(lo..(1u64 << b).max(lo + 1))
    };
    for _ in 0..2000 {
        let (x, y) = (below(&mut rng, 0, 1..40), rng.gen::<u32>() as u64);
        let e = ShapeExpr {
            factors: vec![a, b],
            num: below(&mut rng, 1, 1..30),
            den: rng.gen_range(1..100),
            add: below(&mut rng, 0, 1..64),
        };
        let arg = |p: Param| if p == a { x } else { y };
        let exact = (x as u128 * y as u128 * e.num as u128).div_ceil(e.den as u128) + e.add as u128;
        match e.eval(arg) {
            Ok(v) => assert_eq!(v as u128, exact, "{e} with {x}, {y}"),
            // Checked per step: an intermediate product may overflow where the result would not.
            Err(ShapeOverflow) => {
                assert!(
                    x as u128 * y as u128 * e.num as u128 > u64::MAX as u128
                        || exact > u64::MAX as u128
                )
            }
        }
    }
    let big = ShapeExpr::scaled(&[a, b], 1, 1);
    assert_eq!(big.eval(|_| u64::MAX), Err(ShapeOverflow));
    assert_eq!(big.eval(|_| 1 << 32), Err(ShapeOverflow));
    assert_eq!(big.eval(|_| (1 << 32) - 1), Ok(((1u64 << 32) - 1).pow(2)));
    let add = ShapeExpr { factors: vec![a], num: 1, den: 1, add: 2 };
    assert_eq!(add.eval(|_| u64::MAX - 1), Err(ShapeOverflow));
    assert_eq!(add.eval(|_| u64::MAX - 2), Ok(u64::MAX));
    // A fallible lookup's error comes back as is.
    assert_eq!(
        big.try_eval(|p| if p == b { Err("no b") } else { Ok(3) }, || "overflow"),
        Err("no b")
    );
}

#[test]
fn shape_expressions_print_with_given_names() {
    let (a, b) = (Param::new(0), Param::new(3));
    let e = ShapeExpr { factors: vec![a, b], num: 34, den: 32, add: 1 };
    assert_eq!(e.to_string(), "ceil(arg0*arg3*34/32)+1");
    assert_eq!(print::shape_expr(&e), e.to_string());
    let names = |p: Param| ["n", "", "", "rows"][p.index()].to_string();
    assert_eq!(e.text(names), "ceil(n*rows*34/32)+1");
    assert_eq!(ShapeExpr::constant(0).text(names), "0");
}

#[test]
fn an_overflowing_length_is_a_launch_error() {
    let k = common::argmax();
    let mut args =
        [Arg::Scalar(1 << 31), Arg::Scalar(1 << 31), Arg::Buffer(vec![]), Arg::Buffer(vec![])];
    let opts = RunOptions { grid: Some([1, 1, 1]), ..RunOptions::default() };
    let e = interp::run(&k, &mut args, &opts).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, InterpError::Launch { .. }), "{msg}");
    assert!(
        msg.contains("the length of `x` in bytes") && msg.contains("overflows 64 bits"),
        "{msg}"
    );
}

// ---- absurd work ----

#[test]
fn absurd_grids_are_refused_up_front() {
    // `argmax_rows rows=4294967295 n=0`: 2^32 - 1 workgroups of 64 lanes would run for hours.
    let k = common::argmax();
    let mut args =
        [Arg::Scalar(0), Arg::Scalar(u32::MAX as u64), Arg::Buffer(vec![]), Arg::Buffer(vec![])];
    let opts = RunOptions::default();
    let start = Instant::now();
    let e = interp::run(&k, &mut args, &opts).unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(5));
    let msg = e.to_string();
    assert!(
        msg.contains("a grid of [4294967295, 1, 1] workgroups of 64 lanes is 274877906880 lanes")
            && msg.contains(&MAX_LANES.to_string()),
        "{msg}"
    );
    // The same kernel at a sane size runs: the refusal is about size.
    let opts = RunOptions { grid: Some([1, 1, 1]), ..RunOptions::default() };
    let mut args = [Arg::Scalar(0), Arg::Scalar(1), Arg::Buffer(vec![]), Arg::Buffer(vec![0; 4])];
    interp::run(&k, &mut args, &opts).unwrap();
}

// ---- aliasing ----

/// `out[i] = x[i] + 1` for one wave, `x` and `out` given as regions.
fn add_one() -> Kernel {
    let mut b = KernelBuilder::new("add_one", 32);
    let x = b.buffer("x", ScalarType::U32, Access::Read);
    let y = b.buffer("y", ScalarType::U32, Access::Read);
    let out = b.buffer("out", ScalarType::U32, Access::Write);
    let lane = b.lane();
    let v = b.load(x, lane, Type::U32);
    let w = b.load(y, lane, Type::U32);
    let s = b.add(v, w);
    b.store(out, lane, s);
    b.finish()
}

#[test]
fn overlapping_buffers_where_one_is_written_are_refused() {
    let k = add_one();
    let region = || {
        vec![
            Region { base: 1 << 50, bytes: vec![1; 128] },
            Region { base: 1 << 51, bytes: vec![0; 128] },
        ]
    };
    // `x` and `out` are one region: `out` is written.
    let mut regions = region();
    let mut args = [Arg::Region(0), Arg::Region(1), Arg::Region(0)];
    let e =
        interp::run_with_memory(&k, &mut args, &mut regions, &RunOptions::default()).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, InterpError::Launch { .. }), "{msg}");
    assert!(msg.contains("buffers `x` and `out` are both region 0, and `out` is written"), "{msg}");
    assert_eq!(regions[0].bytes, vec![1; 128], "nothing ran");
    // Read-only sharing is fine: `x` and `y` are one region.
    let mut regions = region();
    let mut args = [Arg::Region(0), Arg::Region(0), Arg::Region(1)];
    interp::run_with_memory(&k, &mut args, &mut regions, &RunOptions::default()).unwrap();
    assert_eq!(bytes_u32(&regions[1].bytes), vec![0x0202_0202; 32]);
}

// ---- scalar rules ----

/// Quantize-like: `n` must be a multiple of 32 (the kernel works in blocks of 32) and at least 32.
fn blocks_of_32() -> Kernel {
    let mut b = KernelBuilder::new("blocks", 32);
    let n = b.scalar_param("n", ScalarType::U32);
    b.scalar_rule(n, ScalarRule::MultipleOf(32));
    b.scalar_rule(n, ScalarRule::AtLeast(32));
    let x = b.buffer_with_len("x", ScalarType::U32, Access::Write, ShapeExpr::scaled(&[n], 1, 1));
    b.grid([ShapeExpr::scaled(&[n], 1, 32), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let g = b.workgroup_id(Dim::X);
    let lane = b.lane();
    let w = b.u32(32);
    let base = b.mul(g, w);
    let i = b.add(base, lane);
    b.store(x, i, lane);
    b.finish()
}

#[test]
fn scalar_rules_are_checked_before_launch() {
    let k = blocks_of_32();
    verify(&k, None).unwrap();
    let (mut rng, _seed) = rng();
    for _ in 0..200 {
        let n: u64 = rng.gen_range(0..4096);
        let ok = k.check_scalars(|_| n);
        assert_eq!(ok.is_ok(), n.is_multiple_of(32) && n >= 32, "n = {n}: {ok:?}");
        let mut args = [Arg::Scalar(n), Arg::Buffer(vec![0; 4 * n as usize])];
        let r = run(&k, &mut args);
        if n.is_multiple_of(32) && n >= 32 {
            r.unwrap();
            assert_eq!(
                bytes_u32(buffer(&args[1])),
                (0..n as u32).map(|i| i % 32).collect::<Vec<_>>()
            );
        } else {
            let e = r.unwrap_err();
            assert!(matches!(e, InterpError::ScalarRule(_)), "{e}");
            assert!(buffer(&args[1]).iter().all(|&b| b == 0), "nothing ran");
        }
    }
    let e = k.check_scalars(|_| 33).unwrap_err();
    assert_eq!(e.to_string(), "kernel `blocks`: scalar `n` is 33: expected a multiple of 32");
    assert_eq!((e.param.as_str(), e.value, e.rule), ("n", 33, ScalarRule::MultipleOf(32)));
    let e = k.check_scalars(|_| 0).unwrap_err();
    assert_eq!(e.to_string(), "kernel `blocks`: scalar `n` is 0: expected at least 32");
}

#[test]
fn signed_scalars_are_checked_by_value() {
    let mut b = KernelBuilder::new("signed", 32);
    let d = b.scalar_param("d", ScalarType::I32);
    b.scalar_rule(d, ScalarRule::AtLeast(0));
    b.scalar_rule(d, ScalarRule::AtMost(7));
    let k = b.finish();
    verify(&k, None).unwrap();
    k.check_scalars(|_| 7).unwrap();
    let e = k.check_scalars(|_| (-1i32) as u32 as u64).unwrap_err();
    assert_eq!(e.to_string(), "kernel `signed`: scalar `d` is -1: expected at least 0");
    let e = k.check_scalars(|_| 8).unwrap_err();
    assert_eq!(e.to_string(), "kernel `signed`: scalar `d` is 8: expected at most 7");
}

#[test]
fn scalar_rules_in_the_text_form_and_serde() {
    let k = blocks_of_32();
    assert!(
        print::print(&k).contains("  arg0 n: u32 multiple_of=32 at_least=32\n"),
        "{}",
        print::print(&k)
    );
    let back = Kernel::from_ron(&k.to_ron()).unwrap();
    assert_eq!(back, k);
    assert_ne!(back.content_hash(), {
        let mut plain = k.clone();
        plain.params[Param::new(0)].rules.clear();
        plain.content_hash()
    });
    // A kernel without rules serializes as before: no `rules` field, so its content hash (and
    // every existing package's) is unchanged.
    let plain = common::argmax();
    assert!(!plain.to_ron().contains("rules"));
    assert!(!ron::ser::to_string(&plain).unwrap().contains("rules"));
}

#[test]
fn the_verifier_checks_scalar_rules() {
    let mut b = KernelBuilder::new("bad_rules", 32);
    let n = b.scalar_param("n", ScalarType::U32);
    let f = b.scalar_param("eps", ScalarType::F32);
    let x = b.buffer("x", ScalarType::F32, Access::Read);
    b.scalar_rule(n, ScalarRule::MultipleOf(0));
    b.scalar_rule(n, ScalarRule::AtLeast(10));
    b.scalar_rule(n, ScalarRule::AtMost(9));
    b.scalar_rule(f, ScalarRule::AtLeast(1));
    b.scalar_rule(x, ScalarRule::MultipleOf(4));
    let errs: Vec<String> =
        verify(&b.finish(), None).unwrap_err().0.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        errs,
        [
            "kernel bad_rules: arg0 (n): rule multiple_of=0: expected a multiple of at least 1, found 0",
            "kernel bad_rules: arg0 (n): rules: expected bounds some value meets, found at least 10 and at most 9",
            "kernel bad_rules: arg1 (eps): rule at_least=1: expected an integer scalar, found a scalar f32",
            "kernel bad_rules: arg2 (x): rule multiple_of=4: expected an integer scalar, found a buffer<f32>",
        ]
    );
}
