//! Parity cases: inputs for `kiln parity` and the benchmarks, fresh random data from a seed plus
//! the edge cases each family must survive (ties, NaN, -inf, zeros, odd sizes, denormals, exact
//! halves, huge values, negative zero).
//!
//! A case names scalar arguments and input buffers by ABI parameter name; outputs are allocated
//! by the harness from the ABI's length rules.

use crate::Parity;
use half::{bf16, f16};
use kiln_ir::ScalarType;

/// One set of arguments.
#[derive(Clone, Debug)]
pub struct Case {
    /// What the case exercises (shown on failure).
    pub name: String,
    /// Scalar arguments: (name, type, bits).
    pub scalars: Vec<(String, ScalarType, u64)>,
    /// Input buffers: (name, element type, bytes).
    pub inputs: Vec<(String, ScalarType, Vec<u8>)>,
}

/// A small, fast, seedable generator (SplitMix64), so cases are reproducible from the printed seed
/// without a dependency in the library.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `[0, n)`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Roughly normal (sum of four uniforms, centred), scaled.
    pub fn normal(&mut self, scale: f32) -> f32 {
        let s: f64 = (0..4).map(|_| self.unit()).sum::<f64>() - 2.0;
        (s * 1.7320508 * scale as f64) as f32
    }
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn encode(v: &[f32], ty: ScalarType) -> Vec<u8> {
    match ty {
        ScalarType::F32 => f32_bytes(v),
        ScalarType::F16 => v.iter().flat_map(|&x| f16::from_f32(x).to_le_bytes()).collect(),
        ScalarType::BF16 => v.iter().flat_map(|&x| bf16::from_f32(x).to_le_bytes()).collect(),
        other => panic!("no float encoding for {other}"),
    }
}

pub(crate) fn u32s(name: &str, v: u32) -> (String, ScalarType, u64) {
    (name.to_string(), ScalarType::U32, v as u64)
}

/// Logit rows with edge cases: row kinds cycle through random, ties at the max, a NaN, all -inf,
/// all zeros, and one finite value among -inf.
fn logit_rows(rng: &mut Rng, rows: usize, n: usize, edges: bool) -> Vec<f32> {
    let mut v = Vec::with_capacity(rows * n);
    for r in 0..rows {
        let mut row: Vec<f32> = (0..n).map(|_| rng.normal(3.0)).collect();
        if edges {
            match r % 6 {
                1 => {
                    // ties: the max repeated at random places (lowest index must win)
                    let m = row.iter().cloned().fold(f32::MIN, f32::max) + 1.0;
                    for _ in 0..4 {
                        let i = rng.below(n as u64) as usize;
                        row[i] = m;
                    }
                }
                2 => {
                    let i = rng.below(n as u64) as usize;
                    row[i] = f32::NAN;
                    let j = rng.below(n as u64) as usize;
                    row[j] = f32::NAN;
                }
                3 => row.iter_mut().for_each(|x| *x = f32::NEG_INFINITY),
                4 => row
                    .iter_mut()
                    .enumerate()
                    .for_each(|(i, x)| *x = if i % 2 == 0 { 0.0 } else { -0.0 }),
                5 => {
                    row.iter_mut().for_each(|x| *x = f32::NEG_INFINITY);
                    let i = rng.below(n as u64) as usize;
                    row[i] = rng.normal(1.0);
                }
                _ => {}
            }
        }
        v.extend(row);
    }
    v
}

/// Activations for quantization with the Q8 edge cases in some blocks: all-zero, exact halves,
/// huge values, denormals, negative zero.
pub(crate) fn activations(rng: &mut Rng, n: usize, edges: bool) -> Vec<f32> {
    let mut v: Vec<f32> = (0..n).map(|_| rng.normal(1.0)).collect();
    if edges {
        for (b, block) in v.chunks_mut(32).enumerate() {
            match b % 7 {
                1 => block.iter_mut().for_each(|x| *x = 0.0),
                2 => {
                    // amax 127 gives d = 1, id = 1: x = k + 0.5 are exact halves
                    for (i, x) in block.iter_mut().enumerate() {
                        *x = (i as f32 - 16.0) + 0.5;
                    }
                    block[0] = 127.0;
                }
                // huge, but finite in every input type (f16 tops out at 65504): ggml leaves
                // infinities undefined, so they are not a case
                3 => block.iter_mut().for_each(|x| *x = (*x * 6.0e4).clamp(-65504.0, 65504.0)),
                4 => block.iter_mut().for_each(|x| *x *= 1.0e-40),
                5 => {
                    block.iter_mut().for_each(|x| *x = -0.0);
                    block[3] = 1.0;
                }
                _ => {}
            }
        }
    }
    v
}

pub(crate) fn floats(name: &str, ty: ScalarType, v: &[f32]) -> (String, ScalarType, Vec<u8>) {
    (name.to_string(), ty, encode(v, ty))
}

/// Rows of logits at `rows x n` shapes with every row kind of [`logit_rows`] (`argmax_rows` and
/// `row_top_prob` share them); `large` adds the real vocabulary sizes.
pub(crate) fn logit_row_cases(rng: &mut Rng, large: bool) -> Vec<Case> {
    let mut shapes = vec![(1, 1), (3, 7), (6, 1000), (2, 4099), (1, 65536 + 33)];
    if large {
        shapes.extend([(1, 248_320), (8, 248_320), (2, 262_144)]);
    }
    shapes
        .into_iter()
        .map(|(rows, n)| {
            let v = logit_rows(rng, rows, n, true);
            Case {
                name: format!("rows={rows} n={n} (random, ties, NaN, -inf, zeros)"),
                scalars: vec![u32s("rows", rows as u32), u32s("n", n as u32)],
                inputs: vec![floats("logits", ScalarType::F32, &v)],
            }
        })
        .collect()
}

/// The parity cases of a library family with [`Parity::Buffers`] cases (none for another
/// harness or an unknown name); `large` adds the real decode sizes (e.g. 8 x 248,320 logits).
pub fn cases(family: &str, seed: u64, large: bool) -> Vec<Case> {
    match crate::family(family).map(|f| f.parity) {
        Some(Parity::Buffers(f)) | Some(Parity::Within { cases: f, .. }) => {
            f(&mut rng_for(family, seed), large)
        }
        Some(Parity::CopyTable(_)) | None => vec![],
    }
}

/// The generator a family's [`Parity::Buffers`] cases draw from: the run's seed mixed with the
/// family's name, so each family draws different data from one seed.
pub fn rng_for(family: &str, seed: u64) -> Rng {
    Rng::new(seed ^ blake_ish(family))
}

/// A fixed 64-bit mix of a name, so each family draws different data from one seed.
fn blake_ish(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

/// A test kernel's lanes: 256-lane workgroups over `n` lanes, `body(b, i)` for each lane `i <
/// n` (the buffers, their lengths and what the body computes are the caller's).
#[cfg(test)]
pub(crate) fn over_lanes(
    b: &mut kiln_ir::KernelBuilder,
    n: kiln_ir::Param,
    body: impl FnOnce(&mut kiln_ir::KernelBuilder, kiln_ir::Value),
) {
    use kiln_ir::ShapeExpr;
    b.workgroup_size([256, 1, 1]);
    b.grid([ShapeExpr::scaled(&[n], 1, 256), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let wg = b.workgroup_id(kiln_ir::Dim::X);
    let c256 = b.u32(256);
    let i = b.mul(wg, c256);
    let l = b.local_id();
    let i = b.add(i, l);
    let nv = b.arg(n);
    let inside = b.lt(i, nv);
    b.if_then(inside, |b| body(b, i));
}

/// A test kernel of `n` lanes: `y[i] = f(inputs[i]...)` over f32 buffers named `inputs` (`y`
/// f32 too: a result of another type is bitcast to it). Run it with [`run_probe`].
#[cfg(test)]
pub(crate) fn probe(
    name: &str,
    inputs: &[&str],
    f: impl FnOnce(&mut kiln_ir::KernelBuilder, &[kiln_ir::Value]) -> kiln_ir::Value,
) -> kiln_ir::Kernel {
    use kiln_ir::{Access, KernelBuilder, ShapeExpr, Type, Value};
    let mut b = KernelBuilder::new(name, 32);
    let n = b.scalar_param("n", ScalarType::U32);
    let ins: Vec<_> = inputs.iter().map(|&x| b.buffer(x, ScalarType::F32, Access::Read)).collect();
    let y = b.buffer("y", ScalarType::F32, Access::Write);
    for &p in ins.iter().chain([&y]) {
        b.set_buffer_len(p, ShapeExpr::scaled(&[n], 1, 1));
    }
    over_lanes(&mut b, n, |b, i| {
        let vs: Vec<Value> = ins.iter().map(|&p| b.load(p, i, Type::F32)).collect();
        let e = f(b, &vs);
        b.store(y, i, e);
    });
    b.finish()
}

/// Runs a [`probe`] kernel on the interpreter over `inputs` (by name, all of one length);
/// returns the bits of `y`.
#[cfg(test)]
pub(crate) fn run_probe(k: &kiln_ir::Kernel, inputs: &[(&str, &[f32])]) -> Vec<u32> {
    let n = inputs[0].1.len();
    let bufs: Vec<_> = inputs.iter().map(|&(name, xs)| floats(name, ScalarType::F32, xs)).collect();
    run(k, &bufs, &[u32s("n", n as u32)])["y"]
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Runs `k` on the interpreter with inputs and scalars by name; returns every written buffer by
/// name (sized by the ABI's length rules, filled with 0xA5 first). For the specs' own tests.
#[cfg(test)]
pub(crate) fn run(
    k: &kiln_ir::Kernel,
    inputs: &[(String, ScalarType, Vec<u8>)],
    scalars: &[(String, ScalarType, u64)],
) -> std::collections::BTreeMap<String, Vec<u8>> {
    run_inner(k, inputs, scalars, false)
}

/// As [`run`], with the read-write buffers given as inputs among the outputs too.
#[cfg(test)]
pub(crate) fn run_written(
    k: &kiln_ir::Kernel,
    inputs: &[(String, ScalarType, Vec<u8>)],
    scalars: &[(String, ScalarType, u64)],
) -> std::collections::BTreeMap<String, Vec<u8>> {
    run_inner(k, inputs, scalars, true)
}

#[cfg(test)]
fn run_inner(
    k: &kiln_ir::Kernel,
    inputs: &[(String, ScalarType, Vec<u8>)],
    scalars: &[(String, ScalarType, u64)],
    all_written: bool,
) -> std::collections::BTreeMap<String, Vec<u8>> {
    use kiln_ir::interp::{self, Arg, RunOptions};
    use kiln_ir::ParamKind;
    use std::collections::BTreeMap;
    let scalar = |name: &str| scalars.iter().find(|s| s.0 == name).map(|s| s.2);
    let by_param: BTreeMap<kiln_ir::Param, u64> =
        k.params.iter().filter_map(|(p, d)| scalar(&d.name).map(|v| (p, v))).collect();
    let mut args = vec![];
    let mut outs = vec![];
    for (i, (_, d)) in k.params.iter().enumerate() {
        match &d.kind {
            ParamKind::Scalar(_) => args.push(Arg::Scalar(scalar(&d.name).expect(&d.name))),
            ParamKind::Buffer { elem, access, len } => {
                if let Some(inp) = inputs.iter().find(|x| x.0 == d.name) {
                    args.push(Arg::Buffer(inp.2.clone()));
                    if all_written && access.writes() {
                        outs.push((i, d.name.clone()));
                    }
                } else {
                    assert!(access.writes(), "no input {}", d.name);
                    let n = len.as_ref().unwrap().eval(|p| by_param[&p]).unwrap();
                    args.push(Arg::Buffer(vec![0xA5; n as usize * elem.bytes() as usize]));
                    outs.push((i, d.name.clone()));
                }
            }
        }
    }
    interp::run(k, &mut args, &RunOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", k.name));
    outs.into_iter()
        .map(|(i, name)| match &args[i] {
            Arg::Buffer(b) => (name, b.clone()),
            Arg::Scalar(_) | Arg::Region(_) => unreachable!(),
        })
        .collect()
}
