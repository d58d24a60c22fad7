//! Every match over ops (and their sub-enums) in the verifier, the uniformity analysis, the
//! printer, the op helpers and the interpreter is exhaustive: no `_ =>` arm, so that adding an op
//! makes the compiler list every site that must decide about it. A catch-all that is not over
//! ops is written without `_ =>` in these files (an `if let`, or the remaining variants named).

use std::path::Path;

const FILES: &[&str] = &[
    "src/ops",
    "src/print.rs",
    "src/uniformity.rs",
    "src/verifier",
    "src/interp/prepare.rs",
    "src/interp/arith.rs",
    "src/interp/exec",
    "src/interp/packed.rs",
];

fn sources(path: &Path, out: &mut Vec<(String, String)>) {
    if path.is_dir() {
        for e in std::fs::read_dir(path).unwrap() {
            sources(&e.unwrap().path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push((path.display().to_string(), std::fs::read_to_string(path).unwrap()));
    }
}

#[test]
fn no_catch_all_arms_over_ops() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for f in FILES {
        let p = root.join(f);
        assert!(p.exists(), "{f} is gone: update this list");
        sources(&p, &mut files);
    }
    assert!(files.len() >= 10, "{files:?}");
    let mut found = Vec::new();
    for (path, text) in &files {
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if code.trim_start().starts_with("_ =>") || code.contains("| _ =>") {
                found.push(format!("{path}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "catch-all arms:\n{}", found.join("\n"));
}
