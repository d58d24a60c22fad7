//! Runs every `cases/*.kt` file and reports each failing case by name. `KILN_BLESS=1` rewrites
//! the blessable cases from the current output instead.

use kiln_codegen_tests::case::{case_files, run, Case, Compiler};
use std::path::Path;

#[test]
fn cases() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("cases");
    let bless = std::env::var("KILN_BLESS").is_ok_and(|v| v == "1");
    let files = case_files(&dir);
    assert!(!files.is_empty(), "no case files in {}", dir.display());
    let mut compiler = Compiler::default();
    let mut failures = vec![];
    for path in &files {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).unwrap();
        let outcome = Case::parse(path, &text).and_then(|c| run(&c, &mut compiler, bless));
        match outcome {
            Ok(()) => println!("ok    {name}"),
            Err(e) => {
                println!("FAIL  {name}: {e}");
                failures.push(format!("{name}: {e}"));
            }
        }
    }
    println!("{} passed, {} failed", files.len() - failures.len(), failures.len());
    assert!(failures.is_empty(), "{} case(s) failed:\n{}", failures.len(), failures.join("\n"));
}
