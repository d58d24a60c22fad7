//! quantize_q8_0 / quantize_q8_1 from f32 and f16: every variant at wave 32 and 64 against
//! (1) a Rust transcription of ggml's quantize_row_q8_0_ref / quantize_row_q8_1_ref, (2) golden
//! bytes from the `gguf` Python package (tests/fixtures/q8_golden.bin, made by
//! tools/q8_golden.py), and (3) each other, bit for bit (also with NaN inputs).

use crate::common;
use common::*;
use half::f16;
use rand::Rng;

/// C's `(int8_t) roundf(v)` as x86 compiles it: `cvttss2si` (INT_MIN when out of range or NaN),
/// then the low byte.
fn c_round_to_i8(v: f32) -> i8 {
    let r = v.round();
    let i = if r.is_nan() || !(-2_147_483_648.0..2_147_483_648.0).contains(&r) {
        i32::MIN
    } else {
        r as i32
    };
    i as i8
}

/// ggml's quantize_row_q8_0_ref (`q8_1 == false`) or quantize_row_q8_1_ref, on f32 input.
fn ggml_ref(x: &[f32], q8_1: bool) -> Vec<u8> {
    let mut out = vec![];
    for blk in x.chunks_exact(32) {
        let mut amax = 0.0f32;
        for &v in blk {
            // #define MAX(a, b) ((a) > (b) ? (a) : (b))
            amax = if amax > v.abs() { amax } else { v.abs() };
        }
        let d = amax / 127.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        let qs: Vec<i8> = blk.iter().map(|&v| c_round_to_i8(v * id)).collect();
        out.extend(f16::from_f32(d).to_bits().to_le_bytes());
        if q8_1 {
            let sum: i32 = qs.iter().map(|&q| q as i32).sum();
            out.extend(f16::from_f32(sum as f32 * d).to_bits().to_le_bytes());
        }
        out.extend(qs.iter().map(|&q| q as u8));
    }
    out
}

/// Compares block bytes; Q8_1's `s` may be NaN (a block with an infinite value), whose bits
/// differ between devices, so there both being NaN is enough.
fn assert_blocks_eq(got: &[u8], want: &[u8], q8_1: bool, what: &str) {
    let bb = if q8_1 { 36 } else { 34 };
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.chunks(bb).zip(want.chunks(bb)).enumerate() {
        if g == w {
            continue;
        }
        if q8_1 && g[..2] == w[..2] && g[4..] == w[4..] {
            let s = |b: &[u8]| f16::from_bits(u16::from_le_bytes([b[2], b[3]]));
            if s(g).is_nan() && s(w).is_nan() {
                continue;
            }
        }
        panic!("{what}: block {i} differs:\n got  {g:?}\n want {w:?}");
    }
}

const FAMILIES: [(&str, bool, bool); 4] = [
    ("quantize_q8_0_f32", false, false),
    ("quantize_q8_0_f16", false, true),
    ("quantize_q8_1_f32", true, false),
    ("quantize_q8_1_f16", true, true),
];

/// Runs every variant of every family on `x` (and its f16 rounding); returns, per family, the
/// output of each variant, after checking each against `want(q8_1, from_f16, input_as_f32)`.
fn check(x: &[f32], what: &str, mut want: impl FnMut(bool, bool, &[f32]) -> Option<Vec<u8>>) {
    let n = x.len() as u32;
    let h: Vec<u16> = x.iter().map(|&v| f16::from_f32(v).to_bits()).collect();
    let hx: Vec<f32> = h.iter().map(|&b| f16::from_bits(b).to_f32()).collect();
    for (name, q8_1, from_f16) in FAMILIES {
        let input = if from_f16 { u16_bytes(&h) } else { f32_bytes(x) };
        let expect = want(q8_1, from_f16, if from_f16 { &hx } else { x });
        for (_, wave) in waves() {
            let mut outs = vec![];
            for (variant, k) in variants(name, wave) {
                let args = run(&k, &Call::new().buf("x", input.clone()).u32("n", n));
                let got = out(&k, &args, "out").to_vec();
                let whole = (n / 32 * if q8_1 { 36 } else { 34 }) as usize;
                assert!(
                    got[whole..].iter().all(|&b| b == 0),
                    "{what}: {name} wrote past the blocks"
                );
                if let Some(e) = &expect {
                    assert_blocks_eq(
                        &got[..whole],
                        e,
                        q8_1,
                        &format!("{what}: {name}/{variant} wave {wave}"),
                    );
                }
                outs.push((variant, got));
            }
            for (variant, o) in &outs[1..] {
                assert_eq!(
                    o, &outs[0].1,
                    "{what}: {name}/{variant} wave {wave} differs from baseline"
                );
            }
        }
    }
}

#[test]
fn q8_matches_gguf_golden_bytes() {
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/q8_golden.bin"))
        .expect("fixture (run specs/tools/q8_golden.py)");
    assert_eq!(&bytes[..4], b"KQ8G");
    let word = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap()) as usize;
    assert_eq!(word(4), 1);
    let n = word(8);
    let mut at = 12;
    let mut take = |len: usize| {
        let s = bytes[at..at + len].to_vec();
        at += len;
        s
    };
    let x = bytes_f32(&take(4 * n));
    let g0 = take(n / 32 * 34);
    let g1 = take(n / 32 * 36);
    let h = bytes_u16(&take(2 * n));
    let hg0 = take(n / 32 * 34);
    let hg1 = take(n / 32 * 36);
    let hx: Vec<f32> = h.iter().map(|&b| f16::from_bits(b).to_f32()).collect();
    // The fixture's f16 inputs are the f32 inputs rounded, as check() makes them.
    assert!(x.iter().zip(&h).all(|(&v, &b)| f16::from_f32(v).to_bits() == b));
    // The Rust transcription of ggml agrees with gguf too.
    assert_blocks_eq(&ggml_ref(&x, false), &g0, false, "ref q8_0");
    assert_blocks_eq(&ggml_ref(&x, true), &g1, true, "ref q8_1");
    assert_blocks_eq(&ggml_ref(&hx, false), &hg0, false, "ref q8_0 f16");
    assert_blocks_eq(&ggml_ref(&hx, true), &hg1, true, "ref q8_1 f16");
    check(&x, "golden", |q8_1, from_f16, _| {
        Some(match (q8_1, from_f16) {
            (false, false) => g0.clone(),
            (true, false) => g1.clone(),
            (false, true) => hg0.clone(),
            (true, true) => hg1.clone(),
        })
    });
}

#[test]
fn q8_random_against_ggml_reference() {
    let mut rng = rng("q8_random_against_ggml_reference");
    for &blocks in &[1usize, 7, 128, 300] {
        let scale = [1e-3f32, 1.0, 50.0, 3e4][rng.gen_range(0..4)];
        let x: Vec<f32> = (0..blocks * 32)
            .map(|_| if rng.gen_ratio(1, 10) { 0.0 } else { rng.gen_range(-scale..scale) })
            .collect();
        check(&x, &format!("random {blocks} blocks, scale {scale}"), |q8_1, _, input| {
            Some(ggml_ref(input, q8_1))
        });
    }
}

#[test]
fn q8_ragged_lengths_are_refused() {
    // n not a multiple of 32 would drop the tail silently: the ABI's rule refuses it before the
    // kernel runs, on every variant and wave size, naming the parameter.
    let mut rng = rng("q8_ragged_lengths_are_refused");
    let ragged =
        [1usize, 5, 31, 33, 100, 4096 + 17, 32 * rng.gen_range(1..200) + rng.gen_range(1..32)];
    for &n in &ragged {
        let x: Vec<f32> = (0..n).map(|_| rng.gen_range(-4.0f32..4.0)).collect();
        for (name, _, from_f16) in FAMILIES {
            let input = if from_f16 {
                u16_bytes(&x.iter().map(|&v| f16::from_f32(v).to_bits()).collect::<Vec<_>>())
            } else {
                f32_bytes(&x)
            };
            for (_, wave) in waves() {
                for (variant, k) in variants(name, wave) {
                    let mut args =
                        args_for(&k, &Call::new().buf("x", input.clone()).u32("n", n as u32));
                    let e = kiln_ir::interp::run(&k, &mut args, &Default::default())
                        .expect_err(&format!("{name}/{variant} n={n} ran"));
                    assert!(
                        matches!(e, kiln_ir::interp::InterpError::ScalarRule(_)),
                        "{name}/{variant} n={n}: {e}"
                    );
                    assert!(e.to_string().contains("`n`"), "{e}");
                }
            }
        }
    }
}

#[test]
fn q8_variants_agree_with_nan() {
    // ggml's amax with NaN depends on where the NaN sits; kiln's ignores it. The variants must
    // still agree with each other bit for bit.
    let mut rng = rng("q8_variants_agree_with_nan");
    let x: Vec<f32> = (0..64 * 32)
        .map(|_| match rng.gen_range(0..40) {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::NEG_INFINITY,
            _ => rng.gen_range(-8.0f32..8.0),
        })
        .collect();
    check(&x, "nan", |_, _, _| None);
}
