//! `include/kiln.h` is what cbindgen makes of `src/lib.rs` today: a stale header fails here
//! (`KILN_BLESS=1 cargo test -p kiln-capi --test header` writes the new one).

#[test]
fn the_committed_header_is_current() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let config = cbindgen::Config::from_file(format!("{dir}/cbindgen.toml")).expect("config");
    let mut text = Vec::new();
    cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut text);
    let text = String::from_utf8(text).expect("UTF-8");
    let path = format!("{dir}/include/kiln.h");
    if std::env::var_os("KILN_BLESS").is_some() {
        std::fs::write(&path, &text).expect("write the header");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "include/kiln.h is stale: run KILN_BLESS=1 cargo test -p kiln-capi --test header"
    );
}
