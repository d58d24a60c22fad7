//! The example kernels are test support, not API: `kiln_ir::examples` exists only with the
//! `testing` feature, which is off by default and enabled by dev-dependencies and test crates.

#[test]
fn examples_are_behind_the_testing_feature() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    assert!(lib.contains("#[cfg(feature = \"testing\")]\npub mod examples;"), "{lib}");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("\ntesting = []\n"), "{manifest}");
    assert!(!manifest.contains("default ="), "the testing feature must not be on by default");
    // This crate's own tests see it through the dev-dependency on itself.
    assert_eq!(kiln_ir::examples::wave_sum(32).name, "wave_sum");
}
