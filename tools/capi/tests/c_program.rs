//! The C API from C: `examples/argmax.c` compiled with the system's C compiler against the static
//! library and `include/kiln.h`, run on the cpu device over a package of argmax_rows built here
//! (random logits, fresh each run, with ties, NaN and -inf; a refused launch; a captured graph
//! replayed with a variable changed). On a GPU the same program runs with `cuda` (see
//! docs/embedding.md).

use kiln_codegen::package::{build_package, Job};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds argmax_rows for `arch` into `dir`.
fn package(dir: &Path, cache: &Path, arch: &str) {
    let t = kiln_ir::Target::by_name(arch).expect("a known arch");
    let f = kiln_specs::family("argmax_rows").expect("argmax_rows");
    let jobs: Vec<Job> = f
        .variants
        .iter()
        .map(|v| Job {
            kernel: f.name.into(),
            variant: v.name.into(),
            target: t,
            ir: (v.build)(t, t.default_wave()),
        })
        .collect();
    let routes = vec![f.routes()];
    build_package(&jobs, routes, &[], false, dir, cache, &Default::default(), false)
        .expect("the package builds");
}

/// This crate's static library. Cargo compiles the library's crate types (static, dynamic, rlib)
/// in one invocation, into the directory of this test's executable: the static library there is
/// the code this test links when it was written with the rlib beside it (within a minute: the
/// invocation writes one after the other). Otherwise it is built here, into a target directory
/// of its own (`target/capi-static`: no lock shared with the running `cargo test`).
fn static_lib() -> PathBuf {
    let deps = std::env::current_exe().expect("the test's path").with_file_name("");
    let modified = |f: &str| std::fs::metadata(deps.join(f)).and_then(|m| m.modified()).ok();
    if let (Some(a), Some(rlib)) = (modified("libkiln_capi.a"), modified("libkiln_capi.rlib")) {
        let apart = rlib.duration_since(a).unwrap_or_default();
        if apart < std::time::Duration::from_secs(60) {
            return deps.join("libkiln_capi.a");
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = root.join("target/capi-static");
    let status = Command::new(env!("CARGO"))
        .args(["build", "-p", "kiln-capi", "--lib"])
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(&root)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "cargo build -p kiln-capi failed");
    let lib = target.join("debug/libkiln_capi.a");
    assert!(lib.is_file(), "{} not built", lib.display());
    lib
}

#[test]
fn a_c_program_runs_argmax_through_the_c_api() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("pkg");
    package(&pkg, &tmp.path().join("cache"), "gfx1100");
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = tmp.path().join("argmax");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-I"])
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join("examples/argmax.c"))
        .arg(static_lib())
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("{cc} runs: {e}"));
    assert!(built.status.success(), "{cc} failed:\n{}", String::from_utf8_lossy(&built.stderr));
    let seed =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
            as u64;
    let run = Command::new(&exe)
        .arg(&pkg)
        .arg("cpu")
        .arg(seed.to_string())
        .arg("gfx1100")
        .output()
        .expect("the C program runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "seed {seed}\n{stdout}\n{stderr}");
    assert!(stdout.contains("refused: ") && stdout.contains("logits"), "{stdout}");
    assert!(stdout.contains("launch ok: variant "), "{stdout}");
    assert!(stdout.contains("graph ok") && stdout.ends_with("all checks passed\n"), "{stdout}");
}
