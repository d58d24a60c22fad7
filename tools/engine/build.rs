//! Tells the tests what this machine has, so a test that needs what is absent is compiled as
//! `#[ignore]`d with the reason (every run counts it as ignored, never as passed):
//! - `cfg(kiln_smollm2)`: the SmolLM2 GGUF files of `scripts/fetch-smollm2.sh` (in `models/` of
//!   the workspace, or `$KILN_MODELS`); `KILN_MODELS_DIR` says where;
//! - `cfg(kiln_engine_package)`: a kiln package to run the engine's kernels from
//!   (`$KILN_ENGINE_PACKAGE`, or the workspace's `dist/`); `KILN_ENGINE_PACKAGE_DIR` says where.
use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(kiln_smollm2)");
    println!("cargo::rustc-check-cfg=cfg(kiln_engine_package)");
    println!("cargo:rerun-if-env-changed=KILN_MODELS");
    println!("cargo:rerun-if-env-changed=KILN_ENGINE_PACKAGE");
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../..");
    let models = std::env::var("KILN_MODELS").map(PathBuf::from).unwrap_or(root.join("models"));
    println!("cargo:rerun-if-changed={}", models.display());
    let files = ["SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2-135M-Instruct.Q8_0.gguf"];
    if files.iter().all(|f| models.join(f).is_file()) {
        println!("cargo:rustc-cfg=kiln_smollm2");
    }
    println!("cargo:rustc-env=KILN_MODELS_DIR={}", models.display());
    let package =
        std::env::var("KILN_ENGINE_PACKAGE").map(PathBuf::from).unwrap_or(root.join("dist"));
    let manifest = package.join("manifest.ron");
    println!("cargo:rerun-if-changed={}", manifest.display());
    if manifest.is_file() {
        println!("cargo:rustc-cfg=kiln_engine_package");
    }
    println!("cargo:rustc-env=KILN_ENGINE_PACKAGE_DIR={}", package.display());
}
