//! Bench cases: the decode sizes `kiln bench` times a family at, with the bytes each call must
//! move at least (read plus written), which over the device's copy bandwidth gives the floor
//! a result is compared against. Each family's file lists its own (`Bench::Cases`).

use kiln_ir::ScalarType;

/// One timed call.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchCase {
    /// Case name, unique in the library (`argmax_t8`, ...).
    pub name: &'static str,
    /// Scalar arguments by ABI name: (name, type, bits).
    pub scalars: Vec<(&'static str, ScalarType, u64)>,
    /// Input buffers by ABI name: (name, element type, elements); filled with random values.
    pub inputs: Vec<(&'static str, ScalarType, usize)>,
    /// Bytes a call reads and writes at least.
    pub bytes: u64,
    /// Floating-point operations a call does, for a compute-bound case (`kiln bench` then
    /// reports TFLOP/s beside the bytes' floor, which means little there).
    pub flops: Option<u64>,
    /// Inputs whose bytes must be valid data rather than random bytes (expert ids): the
    /// generator gets the bench's generator and returns the input's bytes.
    pub values: Vec<(&'static str, fn(&mut crate::cases::Rng) -> Vec<u8>)>,
}

/// A `u32` scalar argument.
pub fn u32_arg(name: &'static str, v: u32) -> (&'static str, ScalarType, u64) {
    (name, ScalarType::U32, u64::from(v))
}

/// An `f32` scalar argument.
pub fn f32_arg(name: &'static str, v: f32) -> (&'static str, ScalarType, u64) {
    (name, ScalarType::F32, u64::from(v.to_bits()))
}
