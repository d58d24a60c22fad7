//! Helpers shared by the verifier's test files: run the verifier and assert on whole error lines.
#![allow(dead_code)]

use cranelift_entity::EntityRef;
use kiln_ir::*;

pub fn errors_on(k: &Kernel, target: Option<&str>) -> Vec<String> {
    let t = target.map(|n| Target::by_name(n).unwrap());
    match verify(k, t) {
        Ok(()) => vec![],
        Err(e) => e.0.iter().map(|e| e.to_string()).collect(),
    }
}

/// `want` is among the errors.
#[track_caller]
pub fn has_on(k: &Kernel, target: Option<&str>, want: &str) {
    let errs = errors_on(k, target);
    assert!(
        errs.iter().any(|e| e == want),
        "expected the error\n  {want}\nfound:\n  {}\nin:\n{}",
        errs.join("\n  "),
        print::print_with_ids(k)
    );
}

#[track_caller]
pub fn has(k: &Kernel, want: &str) {
    has_on(k, None, want)
}

/// `want` is the only error.
#[track_caller]
pub fn only(k: &Kernel, want: &str) {
    let errs = errors_on(k, None);
    assert_eq!(errs, vec![want.to_string()], "in:\n{}", print::print_with_ids(k));
}

#[track_caller]
pub fn passes(k: &Kernel, target: Option<&str>) {
    let errs = errors_on(k, target);
    assert!(errs.is_empty(), "{}\nin:\n{}", errs.join("\n"), print::print_with_ids(k));
}

pub fn kb(name: &str) -> KernelBuilder {
    KernelBuilder::new(name, 32)
}

pub fn v(n: usize) -> Value {
    Value::new(n)
}
