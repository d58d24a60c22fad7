//! Helpers shared by the interpreter tests: seeded randomness (the seed is printed when a test
//! fails; `KILN_SEED=<n>` replays it), byte conversions, plain-Rust butterflies.
#![allow(dead_code)]

use kiln_ir::interp::{self, Arg, InterpError, RunOptions, RunStats};
use kiln_ir::Kernel;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Prints the seed if the test panics.
pub struct SeedGuard(pub u64);

impl Drop for SeedGuard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("random seed was {0}; rerun with KILN_SEED={0}", self.0);
        }
    }
}

/// A fresh random generator (or `KILN_SEED`'s), with a guard that prints the seed on failure.
pub fn rng() -> (StdRng, SeedGuard) {
    let seed = std::env::var("KILN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    (StdRng::seed_from_u64(seed), SeedGuard(seed))
}

pub const WAVES: [u32; 2] = [32, 64];

pub fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn bytes_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

pub fn bytes_u32(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Little-endian bytes of `bits` values `size` bytes wide.
pub fn bits_bytes(v: &[u64], size: usize) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()[..size].to_vec()).collect()
}

pub fn bytes_bits(b: &[u8], size: usize) -> Vec<u64> {
    b.chunks_exact(size)
        .map(|c| {
            let mut a = [0u8; 8];
            a[..size].copy_from_slice(c);
            u64::from_le_bytes(a)
        })
        .collect()
}

/// Plain xor butterfly with offsets W/2, ..., 1: lane `i` takes `f(v[i], v[i ^ o])`.
pub fn butterfly<T: Copy>(v: &[T], f: impl Fn(T, T) -> T) -> Vec<T> {
    let w = v.len();
    let mut cur = v.to_vec();
    let mut o = w / 2;
    while o >= 1 {
        cur = (0..w).map(|i| f(cur[i], cur[i ^ o])).collect();
        o /= 2;
    }
    cur
}

/// A float of random sign, a magnitude spread over 2^-20 .. 2^20, so that summation order shows
/// in the low bits.
pub fn wild_f32(rng: &mut StdRng) -> f32 {
    let m: f32 = rng.gen_range(1.0..2.0);
    let e = rng.gen_range(-20..20);
    let s = if rng.gen() { -1.0 } else { 1.0 };
    s * m * 2f32.powi(e)
}

pub fn run(k: &Kernel, args: &mut [Arg]) -> Result<RunStats, InterpError> {
    interp::run(k, args, &RunOptions::default())
}

pub fn run_unverified(k: &Kernel, args: &mut [Arg]) -> Result<RunStats, InterpError> {
    interp::run(k, args, &RunOptions { verify: false, ..RunOptions::default() })
}

pub fn buffer(a: &Arg) -> &[u8] {
    match a {
        Arg::Buffer(b) => b,
        Arg::Scalar(_) | Arg::Region(_) => panic!("not a buffer's bytes"),
    }
}
