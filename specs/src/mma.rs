//! Matrix multiply-accumulate test kernels: one wave computes a GEMM tile with the target's
//! matrix instruction (WMMA, MFMA or `mma.sync`), through the builder's fragment loads, `mma`
//! and fragment store. Not part of the shipped library: these kernels prove the lowering of
//! `mma` on a device against the interpreter (integer kinds bit for bit; f16 kinds within a
//! bound measured on the GPU, see [`F16_NOTE`]).
//!
//! The tile: D (M x N, row-major) is A (M x K*steps, row-major) times B (K*steps x N,
//! column-major) plus C (M x N, row-major), K (the shape's k) at a time, the accumulator carried
//! by a loop, so that the loads of every step and the chaining of D into C are exercised.

use kiln_ir::matrix::{FragLayout, FragmentRole, MmaInputs, MmaKind, MmaShape};
use kiln_ir::{Access, Kernel, KernelBuilder, ScalarType, ShapeExpr, Target};

/// Why f16 tiles are compared within a bound: neither vendor specifies the order or the
/// intermediate precision of the K-long sum inside the instruction; the interpreter sums in f64
/// from C and rounds once.
pub const F16_NOTE: &str =
    "f16 mma: hardware accumulation order is unspecified; compare within a measured bound";

/// K steps of the tiles built for devices.
pub const STEPS: u32 = 4;

/// The kind the tile of `inputs` uses on `t` (signed bytes for the int8 shapes), if `t` has one.
pub fn kind_for(t: &Target, inputs: MmaInputs) -> Option<MmaKind> {
    let shape = MmaShape::on_arch(t.name).into_iter().find(|s| {
        s.inputs() == inputs
            // sm_80+ has both generations: take the newer, larger shapes.
            && !(t.sm().is_some_and(|sm| sm >= 80)
                && matches!(s, MmaShape::NvM16n8k8F16 | MmaShape::NvM8n8k16I8))
    })?;
    let elem = match inputs {
        MmaInputs::F16 => ScalarType::F16,
        MmaInputs::Int8 => ScalarType::I8,
    };
    MmaKind::new(shape, elem, elem).ok()
}

/// The GEMM tile of `kind` over `steps` K steps. Parameters: `a`, `b` (read), `c` (read),
/// `d` (write); one workgroup of one wave.
pub fn tile(kind: MmaKind, steps: u32) -> Kernel {
    let shape = kind.shape();
    let (_, n, k) = shape.mnk();
    let kt = k * steps;
    let name = match shape.inputs() {
        MmaInputs::F16 => "mma_tile_f16",
        MmaInputs::Int8 => "mma_tile_i8",
    };
    let mut b = KernelBuilder::new(name, shape.wave_size());
    b.workgroup_size([shape.wave_size(), 1, 1]);
    b.grid([ShapeExpr::constant(1), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
    let (m, _, _) = shape.mnk();
    let pa = b.buffer_with_len("a", kind.a(), Access::Read, ShapeExpr::constant((m * kt) as u64));
    let pb = b.buffer_with_len("b", kind.b(), Access::Read, ShapeExpr::constant((kt * n) as u64));
    let acc = shape.accumulator();
    let pc = b.buffer_with_len("c", acc, Access::Read, ShapeExpr::constant((m * n) as u64));
    let pd = b.buffer_with_len("d", acc, Access::Write, ShapeExpr::constant((m * n) as u64));
    let (zero, nn, ktv, kv) = (b.u32(0), b.u32(n), b.u32(kt), b.u32(k));
    let c = b.frag_load(kind, FragmentRole::C, pc, zero, nn, FragLayout::RowMajor);
    let (end, one) = (b.u32(steps), b.u32(1));
    let d = b.for_range(zero, end, one, 1, &[c], |b, s, carried| {
        let base = b.mul(s, kv);
        let fa = b.frag_load(kind, FragmentRole::A, pa, base, ktv, FragLayout::RowMajor);
        let fb = b.frag_load(kind, FragmentRole::B, pb, base, ktv, FragLayout::ColMajor);
        vec![b.mma(kind, fa, fb, carried[0])]
    })[0];
    b.frag_store(pd, zero, nn, FragLayout::RowMajor, d);
    b.finish()
}

/// The int8 tile for a target (at its shape's wave size), if it has an int8 matrix shape.
pub fn tile_i8(t: &Target) -> Option<Kernel> {
    kind_for(t, MmaInputs::Int8).map(|k| tile(k, STEPS))
}

/// The f16 tile for a target, if it has an f16 matrix shape.
pub fn tile_f16(t: &Target) -> Option<Kernel> {
    kind_for(t, MmaInputs::F16).map(|k| tile(k, STEPS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_ir::TARGETS;

    /// Every target with a matrix unit gets both tiles, each verifying there; gfx906 and gfx1030
    /// get none.
    #[test]
    fn tiles_verify_on_every_matrix_target() {
        for t in TARGETS.iter() {
            let has = !MmaShape::on_arch(t.name).is_empty();
            for k in [tile_i8(t), tile_f16(t)] {
                assert_eq!(k.is_some(), has, "{}", t.name);
                if let Some(k) = k {
                    assert_eq!(kiln_ir::verify(&k, Some(t)), Ok(()), "{} {}", t.name, k.name);
                }
            }
        }
        let sm90 = Target::by_name("sm_90").unwrap();
        assert_eq!(kind_for(sm90, MmaInputs::Int8).unwrap().shape(), MmaShape::NvM16n8k32I8);
        let sm75 = Target::by_name("sm_75").unwrap();
        assert_eq!(kind_for(sm75, MmaInputs::Int8).unwrap().shape(), MmaShape::NvM8n8k16I8);
    }
}
