//! Test harness: seeded inputs (the seed is printed; `KILN_SEED=n` replays a run), byte
//! conversions, and running a library kernel in the interpreter at a wave size.
#![allow(dead_code)]

use kiln_ir::interp::{self, Arg, RunOptions};
use kiln_ir::{Kernel, ParamKind, Target};
use kiln_specs::{family, KernelSpec};
use rand::rngs::StdRng;
use rand::SeedableRng;

/// A seeded generator; prints the seed so a failure can be replayed with `KILN_SEED`.
pub fn rng(test: &str) -> StdRng {
    let seed = std::env::var("KILN_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
            as u64
    });
    println!("{test}: seed {seed} (KILN_SEED={seed} to replay)");
    StdRng::seed_from_u64(seed)
}

/// The wave sizes every kernel is tested at, with a target that runs each.
pub fn waves() -> Vec<(&'static Target, u32)> {
    vec![(Target::by_name("sm_90").unwrap(), 32), (Target::by_name("gfx942").unwrap(), 64)]
}

/// A family by name.
pub fn fam(name: &str) -> KernelSpec {
    family(name).unwrap_or_else(|| panic!("no family `{name}`"))
}

/// Builds every variant of a family at a wave size: `(variant name, kernel)`.
pub fn variants(name: &str, wave: u32) -> Vec<(&'static str, Kernel)> {
    let target = waves().into_iter().find(|(_, w)| *w == wave).unwrap().0;
    fam(name).variants.iter().map(|v| (v.name, (v.build)(target, wave))).collect()
}

pub fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn bytes_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}
pub fn bytes_i32(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect()
}
pub fn u16_bytes(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn bytes_u16(b: &[u8]) -> Vec<u16> {
    b.chunks_exact(2).map(|c| u16::from_le_bytes(c.try_into().unwrap())).collect()
}
pub fn u64_bytes(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Named arguments for a run; workspaces are allocated zeroed (as the runtime does) unless given.
pub struct Call {
    pub named: Vec<(&'static str, Arg)>,
}

impl Call {
    pub fn new() -> Call {
        Call { named: vec![] }
    }
    pub fn buf(mut self, name: &'static str, bytes: Vec<u8>) -> Call {
        self.named.push((name, Arg::Buffer(bytes)));
        self
    }
    pub fn u32(mut self, name: &'static str, v: u32) -> Call {
        self.named.push((name, Arg::Scalar(v as u64)));
        self
    }
    pub fn f32(mut self, name: &'static str, v: f32) -> Call {
        self.named.push((name, Arg::Scalar(v.to_bits() as u64)));
        self
    }
}

/// The arguments of `k` in parameter order: named ones from `call`, zeroed workspaces sized by
/// their length rule, and zeroed output buffers sized likewise when not given.
pub fn args_for(k: &Kernel, call: &Call) -> Vec<Arg> {
    let scalar = |name: &str| -> u64 {
        match call.named.iter().find(|(n, _)| *n == name) {
            Some((_, Arg::Scalar(v))) => *v,
            _ => 0,
        }
    };
    k.params
        .values()
        .map(|p| {
            if let Some((_, a)) = call.named.iter().find(|(n, _)| *n == p.name) {
                return a.clone();
            }
            match &p.kind {
                ParamKind::Buffer { elem, len, .. } => {
                    let n =
                        len.as_ref().map_or(0, |l| l.eval(|q| scalar(&k.params[q].name)).unwrap());
                    Arg::Buffer(vec![0; (n * elem.bytes() as u64) as usize])
                }
                ParamKind::Scalar(_) => panic!("{}: scalar `{}` not given", k.name, p.name),
            }
        })
        .collect()
}

/// Runs `k` (sanitizer on) and returns every argument afterwards.
pub fn run(k: &Kernel, call: &Call) -> Vec<Arg> {
    let mut args = args_for(k, call);
    run_args(k, &mut args, &RunOptions::default());
    args
}

/// Runs `k` on prepared arguments; panics with the interpreter's error.
pub fn run_args(k: &Kernel, args: &mut [Arg], opts: &RunOptions) {
    if let Err(e) = interp::run(k, args, opts) {
        panic!("{}: {e}", k.name);
    }
}

/// The bytes of buffer argument `name` after a run.
pub fn out<'a>(k: &Kernel, args: &'a [Arg], name: &str) -> &'a [u8] {
    let p = k.param(name).unwrap_or_else(|| panic!("{}: no param `{name}`", k.name));
    let i = k.params.keys().position(|q| q == p).unwrap();
    match &args[i] {
        Arg::Buffer(b) => b,
        Arg::Scalar(_) => panic!("`{name}` is a scalar"),
        Arg::Region(r) => panic!("`{name}` is region {r}: read it from the regions"),
    }
}

/// Asserts every workspace buffer is zero again after a run (the replay contract).
pub fn assert_workspaces_zero(k: &Kernel, args: &[Arg]) {
    for (i, p) in k.params.values().enumerate() {
        if p.workspace {
            if let Arg::Buffer(b) = &args[i] {
                assert!(
                    b.iter().all(|&x| x == 0),
                    "{}: workspace `{}` not left zeroed",
                    k.name,
                    p.name
                );
            }
        }
    }
}

/// f32 equality for results: the same bits, or both NaN.
pub fn same_f32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// The butterfly tree `v[i] += v[i + off]`, `off = len/2, ..., 1` (an xor-butterfly reduction).
pub fn tree_sum(v: &[f32]) -> f32 {
    assert!(v.len().is_power_of_two());
    let mut v = v.to_vec();
    let mut off = v.len() / 2;
    while off >= 1 {
        for i in 0..off {
            v[i] += v[i + off];
        }
        off /= 2;
    }
    v[0]
}
