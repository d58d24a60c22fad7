//! Sets `cfg(kiln_smollm2)` when the SmolLM2 GGUF files of `scripts/fetch-smollm2.sh` are there
//! (`models/` of the workspace, or `$KILN_MODELS`), so the tests that need them run; without
//! them those tests are compiled as `#[ignore]`d with the reason, and every run counts them as
//! ignored, never as passed. `KILN_MODELS_DIR` tells the tests where the files are.
use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(kiln_smollm2)");
    println!("cargo:rerun-if-env-changed=KILN_MODELS");
    let dir = match std::env::var("KILN_MODELS") {
        Ok(d) => PathBuf::from(d),
        Err(_) => PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../models"),
    };
    println!("cargo:rerun-if-changed={}", dir.display());
    let files = ["SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2-135M-Instruct.Q8_0.gguf"];
    if files.iter().all(|f| dir.join(f).is_file()) {
        println!("cargo:rustc-cfg=kiln_smollm2");
    }
    println!("cargo:rustc-env=KILN_MODELS_DIR={}", dir.display());
}
