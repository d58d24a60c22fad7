//! `mma` on targets without a matrix unit: the GEMM tile for gfx906 (wave 64) or gfx1030 (wave
//! 32) is refused by the verifier (as `kiln build` runs it before compiling), naming the op, the
//! target and the archs that have a matrix unit of that kind; a target with another shape of the
//! kind (gfx1100 given a gfx12 shape) is refused naming the shape's archs. The lowering refuses
//! too, rather than hand LLVM an intrinsic it cannot select (which aborts the process).

use kiln_codegen::{compile, Options};
use kiln_codegen_tests::kernels::mma_tile;
use kiln_ir::Target;

fn refusal(variant: &str, arch: &str) -> String {
    let k = mma_tile(variant).unwrap();
    let t = Target::by_name(arch).unwrap();
    let lowered = match compile(&k, t, &Options::default()) {
        Ok(_) => panic!("{variant} compiled on {arch}"),
        Err(e) => e.to_string(),
    };
    assert!(lowered.contains("mma") && lowered.contains("archs that have it"), "{lowered}");
    kiln_ir::verify(&k, Some(t)).expect_err(variant).to_string()
}

#[test]
fn targets_without_a_matrix_unit_refuse_mma() {
    for (variant, arch) in
        [("mfma_i8k16", "gfx906"), ("m16n8k32", "gfx1030"), ("gfx11_f16", "gfx1030")]
    {
        let text = refusal(variant, arch);
        assert!(text.contains(&format!("not supported on {arch}")), "{text}");
        assert!(text.contains("mma"), "{text}");
        for has in ["gfx90a", "gfx942", "gfx1100", "gfx1151", "gfx1201", "sm_75", "sm_90"] {
            assert!(text.contains(has), "{variant} on {arch}: {has} missing: {text}");
        }
        assert!(!text.contains("gfx906,") && !text.contains("gfx1030,"), "{text}");
    }
}

#[test]
fn a_shape_of_another_generation_is_refused_naming_its_archs() {
    let text = refusal("gfx12_iu8", "gfx1100");
    assert!(text.contains("not supported on gfx1100"), "{text}");
    assert!(text.contains("gfx1200, gfx1201"), "{text}");
    let text = refusal("mfma_i8k32", "gfx90a");
    assert!(text.contains("(archs that have it: gfx942)"), "{text}");
}
