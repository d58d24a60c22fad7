//! Fingerprints the back end's own sources, so the package cache key changes whenever the code
//! that turns IR into bytes changes (not only when kiln's version number does).

use std::path::Path;

fn hash_dir(dir: &Path, h: &mut blake3::Hasher) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("src dir").flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            hash_dir(&p, h);
        } else if p.extension().is_some_and(|x| x == "rs" || x == "ll") {
            println!("cargo:rerun-if-changed={}", p.display());
            h.update(p.file_name().expect("a file").as_encoded_bytes());
            h.update(&std::fs::read(&p).expect("readable source"));
        }
    }
}

fn main() {
    let mut h = blake3::Hasher::new();
    hash_dir(Path::new("src"), &mut h);
    let hex = h.finalize().to_hex();
    println!("cargo:rustc-env=KILN_CODEGEN_FINGERPRINT={}", &hex[..16]);
    println!("cargo:rerun-if-changed=src");
}
