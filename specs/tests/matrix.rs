//! The build matrix: the shipped one is valid; a malformed one is refused with its location, and
//! unknown archs and kernels are named.

use kiln_specs::{build_matrix, parse_build_matrix, MatrixError};

#[test]
fn the_shipped_matrix_is_valid() {
    let m = build_matrix();
    assert!(!m.archs.is_empty());
}

#[test]
fn a_syntax_error_names_the_file_line_and_column() {
    let text = "(\n    archs: [\"sm_90\"],\n    kernels: [\n    budgets: [],\n)";
    let e = parse_build_matrix("my.ron", text).unwrap_err();
    let MatrixError::Syntax { line, .. } = &e else { panic!("{e}") };
    assert_eq!(*line, 4, "{e}");
    assert!(e.to_string().starts_with("my.ron:4:"), "{e}");
}

#[test]
fn unknown_archs_and_kernels_are_named() {
    let e = parse_build_matrix("m.ron", "(archs: [\"gfx1234\"], kernels: [], budgets: [])")
        .unwrap_err()
        .to_string();
    assert!(e.contains("gfx1234") && e.contains("gfx1201") && e.contains("sm_90"), "{e}");
    let e = parse_build_matrix("m.ron", "(archs: [\"sm_90\"], kernels: [\"argmux\"], budgets: [])")
        .unwrap_err()
        .to_string();
    assert!(e.contains("argmux") && e.contains("argmax_rows"), "{e}");
    let e = parse_build_matrix(
        "m.ron",
        "(archs: [], kernels: [], budgets: [(kernel: \"nope\", archs: [], max_vgprs: Some(64), max_scratch: None, max_spills: None)])",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("nope") && e.contains("budgets"), "{e}");
}

#[test]
fn a_misspelled_budget_key_is_refused_naming_the_file() {
    let ok = "(archs: [\"sm_90\"], kernels: [], budgets: [(kernel: \"*\", archs: [], \
              max_vgprs: Some(64), max_scratch: Some(0), max_spills: None)])";
    assert_eq!(parse_build_matrix("b.ron", ok).unwrap().budgets[0].max_vgprs, Some(64));
    for (good, bad) in [("max_vgprs", "max_vgpr"), ("max_scratch", "Max_scratch")] {
        let text = ok.replace(good, bad);
        let e = parse_build_matrix("budgets.ron", &text).unwrap_err();
        assert!(matches!(e, MatrixError::Syntax { .. }), "{e}");
        let e = e.to_string();
        assert!(e.starts_with("budgets.ron:1:") && e.contains(bad), "{e}");
    }
}

#[test]
fn an_empty_matrix_says_so() {
    for text in ["", "  \n\t"] {
        let e = parse_build_matrix("empty.ron", text).unwrap_err();
        assert!(matches!(e, MatrixError::Empty { .. }), "{e}");
        assert!(e.to_string().starts_with("empty.ron: the build matrix is empty"), "{e}");
    }
}

#[test]
fn an_unknown_field_is_refused() {
    let e = parse_build_matrix("m.ron", "(archs: [], kernels: [], budgets: [], kernls: [])")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("m.ron:1:") && e.contains("kernls"), "{e}");
}
