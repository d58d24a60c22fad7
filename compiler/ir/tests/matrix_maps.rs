//! The matrix lane maps against the vendors' documents, their inverse, and the fragment-level
//! model against an independent whole-matrix product on random and edge inputs.

use half::f16;
use kiln_ir::matrix::{
    from_lanes, mma_fragments, mma_reference, to_lanes, AmdMmaOperands, FragmentRole, LaneElement,
    Matrix, MatrixError, MmaInputs, MmaKind, MmaLowering, MmaShape,
};
use kiln_ir::target::MatrixFlavor;
use kiln_ir::{ScalarType, Target, TARGETS};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;

const ROLES: [FragmentRole; 3] = [FragmentRole::A, FragmentRole::B, FragmentRole::C];

fn coord(shape: MmaShape, role: FragmentRole, lane: u32, e: u32) -> (u32, u32) {
    shape.coord(role, lane, e).unwrap()
}

/// Every (row, col) of every operand is held by exactly one (lane, element), except gfx11 A/B
/// where it is held by exactly the two documented copies: lane l < 16 and lane l + 16, same element.
#[test]
fn every_map_covers_its_matrix_exactly_once_or_at_the_documented_copies() {
    for shape in MmaShape::ALL {
        for role in ROLES {
            let (rows, cols) = shape.dims(role);
            let per_lane = shape.elements_per_lane(role);
            let mut holders: HashMap<(u32, u32), Vec<LaneElement>> = HashMap::new();
            for lane in 0..shape.wave_size() {
                for element in 0..per_lane {
                    let (r, c) = coord(shape, role, lane, element);
                    assert!(
                        r < rows && c < cols,
                        "{shape} {role} lane {lane} e {element} -> ({r},{c})"
                    );
                    holders.entry((r, c)).or_default().push(LaneElement { lane, element });
                }
            }
            assert_eq!(
                holders.len() as u32,
                rows * cols,
                "{shape} {role}: not every element covered"
            );
            for ((r, c), hs) in &holders {
                if shape.duplicated(role) {
                    assert_eq!(hs.len(), 2, "{shape} {role} ({r},{c}) held by {hs:?}");
                    assert!(hs[0].lane < 16, "{shape} {role} ({r},{c}) {hs:?}");
                    assert_eq!(
                        hs[1],
                        LaneElement { lane: hs[0].lane + 16, element: hs[0].element }
                    );
                } else {
                    assert_eq!(hs.len(), 1, "{shape} {role} ({r},{c}) held by {hs:?}");
                }
            }
        }
    }
}

#[test]
fn only_gfx11_a_and_b_are_duplicated() {
    for shape in MmaShape::ALL {
        for role in ROLES {
            let expected = matches!(shape, MmaShape::Gfx11WmmaF16 | MmaShape::Gfx11WmmaIu8)
                && role != FragmentRole::C;
            assert_eq!(shape.duplicated(role), expected, "{shape} {role}");
        }
    }
}

/// `home` is the inverse of `coord`: its owner and duplicate map back to the coordinate, and every
/// (lane, element) is the owner or the duplicate of the coordinate it holds.
#[test]
fn home_inverts_coord() {
    for shape in MmaShape::ALL {
        for role in ROLES {
            let (rows, cols) = shape.dims(role);
            for r in 0..rows {
                for c in 0..cols {
                    let home = shape.home(role, r, c).unwrap();
                    assert_eq!(coord(shape, role, home.owner.lane, home.owner.element), (r, c));
                    assert_eq!(home.duplicate.is_some(), shape.duplicated(role));
                    if let Some(d) = home.duplicate {
                        assert_eq!(coord(shape, role, d.lane, d.element), (r, c));
                        assert!(home.owner.lane < 16 && d.lane == home.owner.lane + 16);
                    }
                }
            }
            for lane in 0..shape.wave_size() {
                for element in 0..shape.elements_per_lane(role) {
                    let (r, c) = coord(shape, role, lane, element);
                    let home = shape.home(role, r, c).unwrap();
                    let me = LaneElement { lane, element };
                    assert!(
                        home.owner == me || home.duplicate == Some(me),
                        "{shape} {role} {me:?}"
                    );
                }
            }
        }
    }
}

/// The PTX ISA's "Matrix Fragments for mma.mXnYkZ" formulas, written out as the document states
/// them (groupID, threadID_in_group, and the per-element cases), for every lane and element.
#[test]
fn ptx_maps_match_the_isa_formulas() {
    for lane in 0..32u32 {
        let group_id = lane >> 2;
        let tig = lane % 4;
        // m16n8k16 f16: A a0..a7, B b0..b3, C c0..c3.
        for i in 0..8 {
            let row = if i < 2 || (4..6).contains(&i) { group_id } else { group_id + 8 };
            let col = if i < 4 { tig * 2 + (i & 1) } else { tig * 2 + (i & 1) + 8 };
            assert_eq!(coord(MmaShape::NvM16n8k16F16, FragmentRole::A, lane, i), (row, col));
        }
        for i in 0..4 {
            let row = if i < 2 { tig * 2 + (i & 1) } else { tig * 2 + (i & 1) + 8 };
            assert_eq!(coord(MmaShape::NvM16n8k16F16, FragmentRole::B, lane, i), (row, group_id));
        }
        for shape in [MmaShape::NvM16n8k16F16, MmaShape::NvM16n8k32I8, MmaShape::NvM16n8k8F16] {
            for i in 0..4 {
                let row = if i < 2 { group_id } else { group_id + 8 };
                let col = tig * 2 + (i & 1);
                assert_eq!(coord(shape, FragmentRole::C, lane, i), (row, col), "{shape}");
            }
        }
        // m16n8k32 s8/u8: A a0..a15, B b0..b7.
        for i in 0..16 {
            let row = if i < 4 || (8..12).contains(&i) { group_id } else { group_id + 8 };
            let col = if i < 8 { tig * 4 + (i & 3) } else { tig * 4 + (i & 3) + 16 };
            assert_eq!(coord(MmaShape::NvM16n8k32I8, FragmentRole::A, lane, i), (row, col));
        }
        for i in 0..8 {
            let row = if i < 4 { tig * 4 + (i & 3) } else { tig * 4 + (i & 3) + 16 };
            assert_eq!(coord(MmaShape::NvM16n8k32I8, FragmentRole::B, lane, i), (row, group_id));
        }
        // m16n8k8 f16: A a0..a3 (rows g for a0,a1; g+8 for a2,a3), B b0,b1.
        for i in 0..4 {
            let row = if i < 2 { group_id } else { group_id + 8 };
            let col = tig * 2 + (i & 1);
            assert_eq!(coord(MmaShape::NvM16n8k8F16, FragmentRole::A, lane, i), (row, col));
        }
        for i in 0..2 {
            let row = tig * 2 + i;
            assert_eq!(coord(MmaShape::NvM16n8k8F16, FragmentRole::B, lane, i), (row, group_id));
        }
        // m8n8k16 s8/u8: A a0..a3, B b0..b3, C c0,c1.
        for i in 0..4 {
            assert_eq!(
                coord(MmaShape::NvM8n8k16I8, FragmentRole::A, lane, i),
                (group_id, tig * 4 + i)
            );
            assert_eq!(
                coord(MmaShape::NvM8n8k16I8, FragmentRole::B, lane, i),
                (tig * 4 + i, group_id)
            );
        }
        for i in 0..2 {
            assert_eq!(
                coord(MmaShape::NvM8n8k16I8, FragmentRole::C, lane, i),
                (group_id, tig * 2 + i)
            );
        }
    }
}

/// Spot checks against the PTX ISA's figures.
#[test]
fn ptx_spot_checks() {
    let a = |s, lane, e| coord(s, FragmentRole::A, lane, e);
    let m16 = MmaShape::NvM16n8k16F16;
    // Lane 0: a0, a1 are row 0 cols 0, 1; a2, a3 row 8; a4, a5 row 0 cols 8, 9; a6, a7 row 8.
    let lane0: Vec<_> = (0..8).map(|e| a(m16, 0, e)).collect();
    assert_eq!(lane0, [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]);
    assert_eq!(a(m16, 5, 0), (1, 2));
    assert_eq!(coord(m16, FragmentRole::C, 31, 3), (15, 7));
    assert_eq!(coord(m16, FragmentRole::B, 0, 2), (8, 0));
    let k32 = MmaShape::NvM16n8k32I8;
    assert_eq!(a(k32, 0, 4), (8, 0));
    assert_eq!(a(k32, 0, 8), (0, 16));
    assert_eq!(a(k32, 31, 15), (15, 31));
    assert_eq!(coord(k32, FragmentRole::B, 0, 4), (16, 0));
    assert_eq!(coord(MmaShape::NvM8n8k16I8, FragmentRole::C, 3, 0), (0, 6));
    assert_eq!(coord(MmaShape::NvM8n8k16I8, FragmentRole::C, 3, 1), (0, 7));
    assert_eq!(coord(MmaShape::NvM16n8k8F16, FragmentRole::B, 7, 0), (6, 1));
    assert_eq!(coord(MmaShape::NvM16n8k8F16, FragmentRole::B, 7, 1), (7, 1));
}

/// The AMD Matrix Instruction Calculator's "register to matrix element mapping" formulas (wave32
/// for WMMA, wave64 for MFMA), written in its GPR_num / GPR_bits terms, for every lane and element.
#[test]
fn amd_maps_match_the_calculator_register_formulas() {
    for shape in MmaShape::ALL {
        if !matches!(
            shape.flavor(),
            MatrixFlavor::WmmaGfx11 | MatrixFlavor::WmmaGfx12 | MatrixFlavor::Mfma
        ) {
            continue;
        }
        for role in ROLES {
            let regs = shape.registers(role);
            for lane in 0..shape.wave_size() {
                for e in 0..shape.elements_per_lane(role) {
                    let gpr = e / regs.elements_per_register;
                    let gpr_bits = (e % regs.elements_per_register) * regs.element_bits;
                    let (h, r) = (lane / 16, lane % 16);
                    let k = match shape {
                        MmaShape::Gfx11WmmaF16 => 2 * gpr + gpr_bits / 16,
                        MmaShape::Gfx11WmmaIu8 => 4 * gpr + gpr_bits / 8,
                        MmaShape::Gfx12WmmaF16 => {
                            8 * (gpr / 2) + 4 * h + 2 * (gpr % 2) + gpr_bits / 16
                        }
                        MmaShape::Gfx12WmmaIu8 => 8 * h + 4 * gpr + gpr_bits / 8,
                        MmaShape::MfmaF16 => 4 * h + 2 * gpr + gpr_bits / 16,
                        MmaShape::MfmaI8K16 => 4 * h + gpr_bits / 8,
                        MmaShape::MfmaI8K32 => 8 * h + 4 * gpr + gpr_bits / 8,
                        MmaShape::NvM16n8k16F16
                        | MmaShape::NvM16n8k32I8
                        | MmaShape::NvM16n8k8F16
                        | MmaShape::NvM8n8k16I8 => unreachable!("AMD shapes only"),
                    };
                    let expected = match role {
                        FragmentRole::A => (r, k),
                        FragmentRole::B => (k, r),
                        FragmentRole::C => match shape.flavor() {
                            MatrixFlavor::WmmaGfx11 => (2 * gpr + h, r),
                            MatrixFlavor::WmmaGfx12 => (8 * h + gpr, r),
                            MatrixFlavor::Mfma => (4 * h + gpr % 4, r),
                            MatrixFlavor::None | MatrixFlavor::MmaSync => {
                                unreachable!("AMD shapes only")
                            }
                        },
                    };
                    assert_eq!(
                        coord(shape, role, lane, e),
                        expected,
                        "{shape} {role} lane {lane} e {e}"
                    );
                }
            }
        }
    }
}

/// Spot checks read off the calculator's `--matrix-layout` tables.
#[test]
fn amd_spot_checks() {
    use FragmentRole::{A, B, C};
    assert_eq!(coord(MmaShape::Gfx11WmmaF16, C, 0, 1), (2, 0));
    assert_eq!(coord(MmaShape::Gfx11WmmaF16, C, 16, 0), (1, 0));
    assert_eq!(coord(MmaShape::Gfx11WmmaIu8, A, 20, 9), (4, 9));
    assert_eq!(coord(MmaShape::Gfx12WmmaF16, A, 0, 2), (0, 2));
    assert_eq!(coord(MmaShape::Gfx12WmmaF16, A, 0, 4), (0, 8));
    assert_eq!(coord(MmaShape::Gfx12WmmaF16, A, 16, 0), (0, 4));
    assert_eq!(coord(MmaShape::Gfx12WmmaF16, C, 16, 0), (8, 0));
    assert_eq!(coord(MmaShape::Gfx12WmmaIu8, B, 17, 7), (15, 1));
    assert_eq!(coord(MmaShape::MfmaF16, A, 16, 0), (0, 4));
    assert_eq!(coord(MmaShape::MfmaF16, C, 63, 3), (15, 15));
    assert_eq!(coord(MmaShape::MfmaI8K32, A, 48, 7), (0, 31));
}

#[test]
fn register_packing() {
    use FragmentRole::{A, B, C};
    for shape in MmaShape::ALL {
        for role in ROLES {
            let r = shape.registers(role);
            assert_eq!(
                r.count * r.elements_per_register,
                shape.elements_per_lane(role),
                "{shape} {role}"
            );
            assert_eq!(r.elements_per_register * r.element_bits, 32, "{shape} {role}");
            assert_eq!(
                r.ptx_type.is_some(),
                shape.flavor() == MatrixFlavor::MmaSync,
                "{shape} {role}"
            );
        }
    }
    let regs = |s: MmaShape, role| {
        let r = s.registers(role);
        (r.count, r.elements_per_register, r.llvm_type, r.ptx_type)
    };
    // PTX: m16n8k16 A is four .f16x2 (.b32) registers holding 8 halves, B two, C four .f32.
    assert_eq!(regs(MmaShape::NvM16n8k16F16, A), (4, 2, "i32", Some(".b32")));
    assert_eq!(regs(MmaShape::NvM16n8k16F16, B), (2, 2, "i32", Some(".b32")));
    assert_eq!(regs(MmaShape::NvM16n8k16F16, C), (4, 1, "float", Some(".f32")));
    assert_eq!(regs(MmaShape::NvM16n8k32I8, A), (4, 4, "i32", Some(".b32")));
    assert_eq!(regs(MmaShape::NvM16n8k32I8, B), (2, 4, "i32", Some(".b32")));
    assert_eq!(regs(MmaShape::NvM16n8k32I8, C), (4, 1, "i32", Some(".s32")));
    assert_eq!(regs(MmaShape::NvM16n8k8F16, A), (2, 2, "i32", Some(".b32")));
    assert_eq!(regs(MmaShape::NvM16n8k8F16, B), (1, 2, "i32", Some(".b32")));
    assert_eq!(regs(MmaShape::NvM8n8k16I8, A), (1, 4, "i32", Some(".b32")));
    assert_eq!(regs(MmaShape::NvM8n8k16I8, C), (2, 1, "i32", Some(".s32")));
    // AMD: VGPR counts as the calculator's detail pages give them.
    assert_eq!(regs(MmaShape::Gfx11WmmaF16, A), (8, 2, "<16 x half>", None));
    assert_eq!(regs(MmaShape::Gfx11WmmaIu8, B), (4, 4, "<4 x i32>", None));
    assert_eq!(regs(MmaShape::Gfx11WmmaF16, C), (8, 1, "<8 x float>", None));
    assert_eq!(regs(MmaShape::Gfx12WmmaF16, A), (4, 2, "<8 x half>", None));
    assert_eq!(regs(MmaShape::Gfx12WmmaIu8, A), (2, 4, "<2 x i32>", None));
    assert_eq!(regs(MmaShape::MfmaF16, A), (2, 2, "<4 x half>", None));
    assert_eq!(regs(MmaShape::MfmaI8K16, A), (1, 4, "i32", None));
    assert_eq!(regs(MmaShape::MfmaI8K32, A), (2, 4, "i64", None));
    assert_eq!(regs(MmaShape::MfmaI8K32, C), (4, 1, "<4 x i32>", None));
}

#[test]
fn shapes_and_waves() {
    let mnk: Vec<_> =
        MmaShape::ALL.iter().map(|s| (s.mnk(), s.wave_size(), s.accumulator())).collect();
    use ScalarType::{F32, I32};
    assert_eq!(
        mnk,
        [
            ((16, 16, 16), 32, F32),
            ((16, 16, 16), 32, I32),
            ((16, 16, 16), 32, F32),
            ((16, 16, 16), 32, I32),
            ((16, 16, 16), 64, F32),
            ((16, 16, 16), 64, I32),
            ((16, 16, 32), 64, I32),
            ((16, 8, 16), 32, F32),
            ((16, 8, 32), 32, I32),
            ((16, 8, 8), 32, F32),
            ((8, 8, 16), 32, I32),
        ]
    );
    assert_eq!(MmaShape::Gfx11WmmaF16.elements_per_lane(FragmentRole::A), 16);
    assert_eq!(MmaShape::Gfx12WmmaF16.elements_per_lane(FragmentRole::A), 8);
}

/// Every listed arch is a kiln target of the shape's flavour; every target with a matrix flavour
/// has an f16 and an 8-bit shape; gfx906 and gfx1030 have none.
#[test]
fn archs_agree_with_the_target_table() {
    for shape in MmaShape::ALL {
        for arch in shape.archs() {
            let t = Target::by_name(arch).unwrap();
            assert_eq!(t.features.matrix, shape.flavor(), "{shape} on {arch}");
            assert!(t.wave_sizes.contains(&shape.wave_size()), "{shape} on {arch}");
            assert!(shape.mnemonic(arch).is_some());
        }
    }
    for t in TARGETS {
        let shapes = MmaShape::on_arch(t.name);
        if t.features.matrix == MatrixFlavor::None {
            assert!(shapes.is_empty(), "{}", t.name);
        } else {
            assert!(shapes.iter().any(|s| s.inputs() == MmaInputs::F16), "{}", t.name);
            assert!(shapes.iter().any(|s| s.inputs() == MmaInputs::Int8), "{}", t.name);
        }
    }
    assert!(MmaShape::on_arch("gfx906").is_empty());
    assert!(MmaShape::on_arch("gfx1030").is_empty());
    assert_eq!(MmaShape::on_arch("sm_75"), [MmaShape::NvM16n8k8F16, MmaShape::NvM8n8k16I8]);
    assert_eq!(MmaShape::on_arch("gfx90a"), [MmaShape::MfmaF16, MmaShape::MfmaI8K16]);
    assert_eq!(MmaShape::on_arch("gfx942"), [MmaShape::MfmaF16, MmaShape::MfmaI8K32]);
    assert_eq!(MmaShape::MfmaF16.mnemonic("gfx90a"), Some("v_mfma_f32_16x16x16f16"));
    assert_eq!(MmaShape::MfmaF16.mnemonic("gfx942"), Some("v_mfma_f32_16x16x16_f16"));
    assert_eq!(MmaShape::MfmaI8K16.mnemonic("gfx942"), None);
    assert_eq!(MmaShape::NvM16n8k16F16.mnemonic("sm_75"), None);
}

#[test]
fn kinds_and_lowering() {
    use ScalarType::{F16, I8, U8};
    assert_eq!(MmaKind::all().len(), 5 + 4 * 4 + 2);
    assert!(matches!(
        MmaKind::new(MmaShape::MfmaI8K32, U8, I8),
        Err(MatrixError::UnsupportedTypes { shape: MmaShape::MfmaI8K32, a: U8, b: I8, .. })
    ));
    assert!(MmaKind::new(MmaShape::Gfx12WmmaF16, F16, I8).is_err());
    assert!(MmaKind::new(MmaShape::NvM16n8k32I8, F16, F16).is_err());
    let ptx = |s, a, b| match MmaKind::new(s, a, b).unwrap().lowering() {
        MmaLowering::Ptx { instruction } => instruction,
        MmaLowering::Amd { intrinsic, .. } => panic!("{intrinsic} for {s}"),
    };
    assert_eq!(
        ptx(MmaShape::NvM16n8k16F16, F16, F16),
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
    );
    assert_eq!(
        ptx(MmaShape::NvM16n8k32I8, I8, I8),
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"
    );
    assert_eq!(
        ptx(MmaShape::NvM16n8k32I8, U8, I8),
        "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32"
    );
    assert_eq!(
        ptx(MmaShape::NvM16n8k8F16, F16, F16),
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32"
    );
    assert_eq!(
        ptx(MmaShape::NvM8n8k16I8, I8, U8),
        "mma.sync.aligned.m8n8k16.row.col.s32.s8.u8.s32"
    );
    for kind in MmaKind::all() {
        match kind.lowering() {
            MmaLowering::Amd { intrinsic, declaration, operands } => {
                assert!(declaration.contains(&format!("@{intrinsic}(")), "{kind}");
                for role in ROLES {
                    assert!(
                        declaration.contains(kind.shape().registers(role).llvm_type),
                        "{kind} {role}"
                    );
                }
                let expected = match kind.shape().flavor() {
                    MatrixFlavor::Mfma => AmdMmaOperands::Mfma,
                    _ if kind.shape().inputs() == MmaInputs::F16 => AmdMmaOperands::Wmma,
                    _ => AmdMmaOperands::WmmaIu8 {
                        a_signed: kind.a() == I8,
                        b_signed: kind.b() == I8,
                    },
                };
                assert_eq!(operands, expected, "{kind}");
            }
            MmaLowering::Ptx { instruction } => {
                assert_eq!(kind.shape().flavor(), MatrixFlavor::MmaSync);
                assert!(instruction.starts_with(kind.shape().mnemonic("sm_90").unwrap()));
            }
        }
    }
}

#[test]
fn kind_round_trips_through_ron() {
    for kind in MmaKind::all() {
        let text = ron::to_string(&kind).unwrap();
        assert_eq!(ron::from_str::<MmaKind>(&text).unwrap(), kind, "{text}");
    }
    // A kind the hardware does not have is refused on the way in, with the reason.
    let err = ron::from_str::<MmaKind>("(shape: MfmaI8K32, a: U8, b: I8)").unwrap_err();
    assert!(err.to_string().contains("MFMA has no unsigned form"), "{err}");
}

fn random_matrix(rng: &mut StdRng, elem: ScalarType, rows: u32, cols: u32) -> Matrix {
    let mut m = Matrix::zeros(elem, rows, cols);
    for b in &mut m.bits {
        *b = match elem {
            // Finite halves of moderate size, some negative, some tiny.
            ScalarType::F16 => f16::from_f32(rng.gen_range(-8.0f32..8.0)).to_bits() as u64,
            ScalarType::F32 => rng.gen_range(-100.0f32..100.0).to_bits() as u64,
            ScalarType::I8 | ScalarType::U8 => rng.gen::<u8>() as u64,
            ScalarType::I32 => rng.gen::<u32>() as u64,
            _ => unreachable!(),
        };
    }
    m
}

fn int(elem: ScalarType, bits: u64) -> i64 {
    match elem {
        ScalarType::I8 => bits as u8 as i8 as i64,
        ScalarType::U8 => bits as u8 as i64,
        ScalarType::I32 => bits as u32 as i32 as i64,
        _ => unreachable!(),
    }
}

/// D computed lane by lane straight from the fragments: for each D (lane, element), find the
/// (row, col) by `coord`, then scan A's and B's fragments for the elements of that row and
/// column (by `coord` again, not `home`), and multiply in i64 / f64.
fn lane_by_lane(kind: MmaKind, a: &[u64], b: &[u64], c: &[u64]) -> Vec<u64> {
    let s = kind.shape();
    let (_, _, k) = s.mnk();
    let find = |role, lanes: &[u64], want: (u32, u32)| {
        let per = s.elements_per_lane(role);
        for lane in 0..s.wave_size() {
            for e in 0..per {
                if coord(s, role, lane, e) == want {
                    return lanes[(lane * per + e) as usize];
                }
            }
        }
        unreachable!()
    };
    let per = s.elements_per_lane(FragmentRole::C);
    let mut d = vec![0; c.len()];
    for lane in 0..s.wave_size() {
        for e in 0..per {
            let (i, j) = coord(s, FragmentRole::C, lane, e);
            let cv = c[(lane * per + e) as usize];
            d[(lane * per + e) as usize] = match s.inputs() {
                MmaInputs::Int8 => {
                    let sum: i64 = (0..k)
                        .map(|kk| {
                            int(kind.a(), find(FragmentRole::A, a, (i, kk)))
                                * int(kind.b(), find(FragmentRole::B, b, (kk, j)))
                        })
                        .sum();
                    (int(ScalarType::I32, cv) + sum) as i32 as u32 as u64
                }
                MmaInputs::F16 => {
                    let mut acc = f32::from_bits(cv as u32) as f64;
                    for kk in 0..k {
                        let x = f16::from_bits(find(FragmentRole::A, a, (i, kk)) as u16).to_f64();
                        let y = f16::from_bits(find(FragmentRole::B, b, (kk, j)) as u16).to_f64();
                        acc += x * y;
                    }
                    (acc as f32).to_bits() as u64
                }
            };
        }
    }
    d
}

/// The fragment-level model equals a lane-by-lane product on random matrices, for every kind,
/// including gfx11 (whose loads fill both half-waves).
#[test]
fn fragment_model_equals_the_lane_by_lane_product_on_random_inputs() {
    let mut rng = StdRng::seed_from_u64(11);
    for kind in MmaKind::all() {
        let s = kind.shape();
        for _ in 0..4 {
            let mats: Vec<Matrix> = ROLES
                .iter()
                .map(|&role| {
                    let (r, c) = s.dims(role);
                    random_matrix(&mut rng, kind.elem(role), r, c)
                })
                .collect();
            let lanes: Vec<Vec<u64>> = ROLES
                .iter()
                .zip(&mats)
                .map(|(&role, m)| to_lanes(kind, role, m).unwrap())
                .collect();
            let d = mma_fragments(kind, &lanes[0], &lanes[1], &lanes[2]).unwrap();
            assert_eq!(d, lane_by_lane(kind, &lanes[0], &lanes[1], &lanes[2]), "{kind}");
            let whole = mma_reference(kind, &mats[0], &mats[1], &mats[2]).unwrap();
            assert_eq!(from_lanes(kind, FragmentRole::C, &d).unwrap(), whole, "{kind}");
        }
    }
}

fn filled(elem: ScalarType, rows: u32, cols: u32, bits: u64) -> Matrix {
    Matrix { elem, rows, cols, bits: vec![bits; (rows * cols) as usize] }
}

/// -128 x -128 over all of K, plus C at the i32 limits: the sum is exact and the add wraps.
#[test]
fn integer_edges_wrap() {
    for kind in MmaKind::all() {
        let s = kind.shape();
        if s.inputs() != MmaInputs::Int8 {
            continue;
        }
        let (m, n, k) = s.mnk();
        let extreme = |t| if t == ScalarType::I8 { 0x80 } else { 0xff };
        let value = |t| int(t, extreme(t));
        let a = filled(kind.a(), m, k, extreme(kind.a()));
        let b = filled(kind.b(), k, n, extreme(kind.b()));
        let sum = value(kind.a()) * value(kind.b()) * k as i64;
        for c0 in [i32::MAX, i32::MIN, 0, -1] {
            let c = filled(ScalarType::I32, m, n, c0 as u32 as u64);
            let lanes = |role, mat: &Matrix| to_lanes(kind, role, mat).unwrap();
            let d = mma_fragments(
                kind,
                &lanes(FragmentRole::A, &a),
                &lanes(FragmentRole::B, &b),
                &lanes(FragmentRole::C, &c),
            )
            .unwrap();
            let want = c0.wrapping_add(sum as i32) as u32 as u64;
            assert!(d.iter().all(|&x| x == want), "{kind} C={c0}: {d:?}");
        }
    }
    // A concrete case: 16 x (-128 x -128) = 262144 onto i32::MAX wraps negative.
    let kind = MmaKind::new(MmaShape::NvM8n8k16I8, ScalarType::I8, ScalarType::I8).unwrap();
    let d = mma_reference(
        kind,
        &filled(ScalarType::I8, 8, 16, 0x80),
        &filled(ScalarType::I8, 16, 8, 0x80),
        &filled(ScalarType::I32, 8, 8, i32::MAX as u64),
    )
    .unwrap();
    assert_eq!(d.get(3, 4) as u32 as i32, i32::MAX.wrapping_add(262_144));
    assert!((d.get(3, 4) as u32 as i32) < 0);
}

fn f16_matrix(rows: u32, cols: u32, f: impl Fn(u32, u32) -> f32) -> Matrix {
    let mut m = Matrix::zeros(ScalarType::F16, rows, cols);
    for r in 0..rows {
        for c in 0..cols {
            m.set(r, c, f16::from_f32(f(r, c)).to_bits() as u64);
        }
    }
    m
}

/// f16 products are exact, the sum is taken in f64 (so 2^24 + 1 - 2^24 is 1, where an f32 running
/// sum would give 0), and NaN / inf propagate.
#[test]
fn f16_reference_arithmetic() {
    let kind = MmaKind::new(MmaShape::NvM16n8k16F16, ScalarType::F16, ScalarType::F16).unwrap();
    let zero_c = Matrix::zeros(ScalarType::F32, 16, 8);
    let f = |m: &Matrix, r, c| f32::from_bits(m.get(r, c) as u32);
    // The largest half squared is exact in f32.
    let a = f16_matrix(16, 16, |_, k| if k == 0 { 65504.0 } else { 0.0 });
    let b = f16_matrix(16, 8, |k, _| if k == 0 { 65504.0 } else { 0.0 });
    assert_eq!(f(&mma_reference(kind, &a, &b, &zero_c).unwrap(), 0, 0), 65504.0f32 * 65504.0);
    // Cancellation: k0 gives 2^24, k1 gives 1, k2 gives -2^24.
    let a =
        f16_matrix(16, 16, |_, k| [4096.0, 1.0, -4096.0].get(k as usize).copied().unwrap_or(0.0));
    let b = f16_matrix(16, 8, |k, _| [4096.0, 1.0, 4096.0].get(k as usize).copied().unwrap_or(0.0));
    assert_eq!(f(&mma_reference(kind, &a, &b, &zero_c).unwrap(), 5, 5), 1.0);
    // NaN in A row 3 poisons row 3 only; inf x 0 is NaN.
    let a = f16_matrix(16, 16, |r, _| if r == 3 { f32::NAN } else { 1.0 });
    let b = f16_matrix(16, 8, |_, _| 1.0);
    let d = mma_reference(kind, &a, &b, &zero_c).unwrap();
    assert!(f(&d, 3, 0).is_nan() && f(&d, 3, 7).is_nan());
    assert_eq!(f(&d, 4, 0), 16.0);
    let a = f16_matrix(16, 16, |_, k| if k == 0 { f32::INFINITY } else { 1.0 });
    let b = f16_matrix(16, 8, |k, _| if k == 0 { 0.0 } else { 1.0 });
    assert!(f(&mma_reference(kind, &a, &b, &zero_c).unwrap(), 0, 0).is_nan());
    // C is added: 1 + 16 * 1.
    let one_c = Matrix {
        elem: ScalarType::F32,
        rows: 16,
        cols: 8,
        bits: vec![1.0f32.to_bits() as u64; 128],
    };
    let a = f16_matrix(16, 16, |_, _| 1.0);
    assert_eq!(f(&mma_reference(kind, &a, &b, &one_c).unwrap(), 15, 7), 16.0);
}

/// gfx11: copies that differ are refused, naming the lanes; equal copies are read once.
#[test]
fn gfx11_duplicate_half_wave() {
    let kind = MmaKind::new(MmaShape::Gfx11WmmaIu8, ScalarType::I8, ScalarType::U8).unwrap();
    let mut rng = StdRng::seed_from_u64(3);
    let a = random_matrix(&mut rng, ScalarType::I8, 16, 16);
    let b = random_matrix(&mut rng, ScalarType::U8, 16, 16);
    let c = random_matrix(&mut rng, ScalarType::I32, 16, 16);
    let la = to_lanes(kind, FragmentRole::A, &a).unwrap();
    let lb = to_lanes(kind, FragmentRole::B, &b).unwrap();
    let lc = to_lanes(kind, FragmentRole::C, &c).unwrap();
    // The load fills both half-waves identically.
    assert_eq!(la[..256], la[256..]);
    assert_eq!(lb[..256], lb[256..]);
    assert!(mma_fragments(kind, &la, &lb, &lc).is_ok());
    // Lane 21 element 9 is A[5][9]'s duplicate.
    let mut bad = la.clone();
    bad[21 * 16 + 9] ^= 1;
    match mma_fragments(kind, &bad, &lb, &lc) {
        Err(MatrixError::DuplicateMismatch {
            role: FragmentRole::A,
            lane: 5,
            twin: 21,
            element: 9,
            value,
            twin_value,
            ..
        }) => {
            assert_eq!(value, a.get(5, 9) & 0xff);
            assert_eq!(twin_value, (a.get(5, 9) ^ 1) & 0xff);
        }
        other => panic!("{other:?}"),
    }
    // On B the owner lane 2 differs from lane 18.
    let mut bad = lb.clone();
    bad[2 * 16 + 15] ^= 0x80;
    assert!(matches!(
        mma_fragments(kind, &la, &bad, &lc),
        Err(MatrixError::DuplicateMismatch {
            role: FragmentRole::B,
            lane: 2,
            twin: 18,
            element: 15,
            ..
        })
    ));
    // The home of B[15][2] says so.
    let home = MmaShape::Gfx11WmmaIu8.home(FragmentRole::B, 15, 2).unwrap();
    assert_eq!(home.owner, LaneElement { lane: 2, element: 15 });
    assert_eq!(home.duplicate, Some(LaneElement { lane: 18, element: 15 }));
}

#[test]
fn bad_requests_are_errors_that_say_what_and_where() {
    let s = MmaShape::MfmaI8K32;
    assert_eq!(
        s.coord(FragmentRole::A, 64, 0),
        Err(MatrixError::Lane { shape: s, role: FragmentRole::A, lane: 64, wave: 64 })
    );
    let e = s.coord(FragmentRole::A, 0, 8).unwrap_err();
    assert_eq!(
        e,
        MatrixError::Element { shape: s, role: FragmentRole::A, element: 8, per_lane: 8 }
    );
    assert!(e.to_string().contains("element 8 is past the 8"), "{e}");
    assert!(matches!(
        s.home(FragmentRole::B, 32, 0),
        Err(MatrixError::Coord { rows: 32, cols: 16, .. })
    ));
    assert!(s.home(FragmentRole::B, 31, 15).is_ok());
    let kind = MmaKind::new(s, ScalarType::I8, ScalarType::I8).unwrap();
    let short = vec![0; 10];
    assert_eq!(
        mma_fragments(kind, &short, &short, &short),
        Err(MatrixError::FragmentLength {
            shape: s,
            role: FragmentRole::A,
            expected: 512,
            found: 10
        })
    );
    let wrong = Matrix::zeros(ScalarType::U8, 16, 32);
    let e = to_lanes(kind, FragmentRole::A, &wrong).unwrap_err();
    assert!(matches!(e, MatrixError::MatrixMismatch { found_elem: ScalarType::U8, .. }));
    assert!(e.to_string().contains("expected a 16 x 32 i8 matrix"), "{e}");
}
