//! Fuzzing of what users hand kiln: the manifest (RON), the kernel IR (RON), build matrices and
//! .npy files, through the loaders the commands use (`Package::open` and, when it accepts,
//! `Runtime::load` on the cpu device, as `kiln::cmd::open_package` / `load_package` call them;
//! `Kernel::from_ron` + `verify`; `parse_build_matrix`; the CLI's npy reader).
//!
//! Each input is a real one (a package built here, the library's kernels, the shipped matrix,
//! .npy files as NumPy writes them) mutated by a list of edits that proptest draws: numbers
//! replaced by edge values (so a mutant often still parses and reaches the checks behind the
//! parser), identifiers swapped for others of the same input (type and variant names), bytes
//! flipped, inserted, deleted, slices duplicated, and the text cut short. Asserted for every case:
//! no panic, no hang (each case runs on a watchdog thread and must finish in `CASE_LIMIT`), and
//! every rejection names the file and what is wrong.
//!
//! `KILN_FUZZ_CASES` (default 200 a target, a few seconds) sets the number of cases; the long run
//! is `KILN_FUZZ_CASES=100000 cargo test -p kiln --release --test fuzz`.
#![cfg(feature = "llvm")]

use kiln::cmd::{load_package, open_package};
use kiln_ir::package::MANIFEST_FILE;
use kiln_runtime::{CpuOptions, Device, Overrides};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::Duration;

/// The longest one case may take before it counts as a hang.
const CASE_LIMIT: Duration = Duration::from_secs(20);

fn cases() -> u32 {
    std::env::var("KILN_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(200)
}

/// Prints a line every 5,000 cases, so a long run stopped early still says how far it got (every
/// case before the line passed: a failing case ends the run).
fn progress(target: &str, done: &Cell<u64>) {
    done.set(done.get() + 1);
    if done.get().is_multiple_of(5000) {
        eprintln!("{target}: {} cases passed so far", done.get());
    }
}

fn config() -> Config {
    Config { cases: cases(), failure_persistence: None, ..Config::default() }
}

/// One edit of a mutation; positions and choices are taken modulo what the input has.
#[derive(Clone, Debug)]
enum Edit {
    /// Replace the `n`-th number with an edge value.
    Number(usize, usize),
    /// Replace the `n`-th identifier with the `m`-th identifier of the input.
    Ident(usize, usize),
    /// Flip bits of the byte at a position.
    Flip(usize, u8),
    /// Insert a byte that matters to RON or npy headers.
    Insert(usize, usize),
    /// Delete up to `len` bytes at a position.
    Delete(usize, usize),
    /// Duplicate up to `len` bytes at a position.
    Duplicate(usize, usize),
    /// Cut the input at a position.
    Truncate(usize),
}

const EDGE_NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "7",
    "16",
    "31",
    "64",
    "255",
    "4096",
    "65535",
    "2147483647",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "-1",
    "1e39",
    "NaN",
];

const SPECIAL_BYTES: &[u8] = b"()[]{},:\"'\\ 0123456789-e.xTrueFalseNone\n\x00\xff";

fn edit() -> impl Strategy<Value = Edit> {
    let big = 0usize..1 << 20;
    prop_oneof![
        4 => (big.clone(), 0..EDGE_NUMBERS.len()).prop_map(|(a, b)| Edit::Number(a, b)),
        2 => (big.clone(), big.clone()).prop_map(|(a, b)| Edit::Ident(a, b)),
        1 => (big.clone(), 1u8..=255).prop_map(|(a, b)| Edit::Flip(a, b)),
        1 => (big.clone(), 0..SPECIAL_BYTES.len()).prop_map(|(a, b)| Edit::Insert(a, b)),
        1 => (big.clone(), 1usize..64).prop_map(|(a, b)| Edit::Delete(a, b)),
        1 => (big.clone(), 1usize..256).prop_map(|(a, b)| Edit::Duplicate(a, b)),
        1 => big.prop_map(Edit::Truncate),
    ]
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    prop::collection::vec(edit(), 1..6)
}

/// Byte ranges of the numbers (`[0-9]+`, with a leading `-`) and identifiers of `b`.
fn tokens(b: &[u8]) -> (Vec<(usize, usize)>, Vec<(usize, usize)>) {
    let (mut nums, mut idents) = (vec![], vec![]);
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if b[i].is_ascii_digit() || (b[i] == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            nums.push((start, i));
        } else if b[i].is_ascii_alphabetic() || b[i] == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            idents.push((start, i));
        } else {
            i += 1;
        }
    }
    (nums, idents)
}

/// Applies the edits to `base`.
fn mutate(base: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut b = base.to_vec();
    for e in edits {
        let at = |p: usize, b: &Vec<u8>| if b.is_empty() { 0 } else { p % b.len() };
        match *e {
            Edit::Number(n, v) => {
                let (nums, _) = tokens(&b);
                if let Some(&(s, t)) = nums.get(n % nums.len().max(1)) {
                    b.splice(s..t, EDGE_NUMBERS[v].bytes());
                }
            }
            Edit::Ident(n, m) => {
                let (_, ids) = tokens(&b);
                if !ids.is_empty() {
                    let (s, t) = ids[n % ids.len()];
                    let (s2, t2) = ids[m % ids.len()];
                    let with = b[s2..t2].to_vec();
                    b.splice(s..t, with);
                }
            }
            Edit::Flip(p, x) => {
                let p = at(p, &b);
                if let Some(v) = b.get_mut(p) {
                    *v ^= x;
                }
            }
            Edit::Insert(p, c) => {
                let p = at(p, &b);
                b.insert(p, SPECIAL_BYTES[c]);
            }
            Edit::Delete(p, len) => {
                let p = at(p, &b);
                let end = (p + len).min(b.len());
                b.drain(p..end);
            }
            Edit::Duplicate(p, len) => {
                let p = at(p, &b);
                let end = (p + len).min(b.len());
                let slice = b[p..end].to_vec();
                b.splice(p..p, slice);
            }
            Edit::Truncate(p) => {
                let p = at(p, &b);
                b.truncate(p);
            }
        }
    }
    b
}

/// Runs `f` on a watchdog thread: a panic or a run past [`CASE_LIMIT`] fails the case.
fn guarded<T: Send + 'static>(
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, TestCaseError> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(CASE_LIMIT) {
        Ok(v) => Ok(v),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            Err(TestCaseError::fail(format!("{what}: no answer in {CASE_LIMIT:?} (a hang)")))
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Err(TestCaseError::fail(format!("{what}: panicked (message above)")))
        }
    }
}

// --- the manifest -----------------------------------------------------------------------------

/// A fresh directory for this process under cargo's test scratch directory (`target/tmp`), so
/// the packages shared by the tests of a run are not left in the system's temporary directory.
fn work_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("fuzz-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    dir
}

/// A package of two families (with admission rules and workspaces) for an AMD and an NVIDIA
/// arch, built once by the real binary.
fn base_package() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = work_dir("base");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kiln"))
            .args(["build", "--kernel", "argmax_rows,copy_from_mapped_multi"])
            .args(["--arch", "gfx1100,sm_90", "-o"])
            .arg(dir.join("pkg"))
            .env("KILN_CACHE_DIR", dir.join("cache"))
            .output()
            .expect("kiln runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        dir.join("pkg")
    })
}

/// A copy of the base package whose manifest the cases rewrite (one a test thread).
fn scratch_package() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = work_dir(&format!("scratch{n}")).join("pkg");
    std::fs::create_dir_all(&dir).expect("mkdir");
    copy_tree(base_package(), &dir);
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let dest = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            std::fs::create_dir_all(&dest).expect("mkdir");
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).expect("copy");
        }
    }
}

#[test]
fn fuzz_manifest() {
    let dir = scratch_package();
    let mpath = dir.join(MANIFEST_FILE);
    let base = std::fs::read(base_package().join(MANIFEST_FILE)).expect("manifest");
    let (accepted, refused, done) = (Cell::new(0u64), Cell::new(0u64), Cell::new(0u64));
    let mut runner = proptest::test_runner::TestRunner::new(config());
    runner
        .run(&edits(), |edits| {
            let text = mutate(&base, &edits);
            std::fs::write(&mpath, &text).expect("write manifest");
            let d = dir.clone();
            let r = guarded("open_package + load_package", move || {
                let p = open_package(&d).map_err(|e| format!("{e:#}"))?;
                let dev = Device::cpu(CpuOptions::default());
                load_package(&dev, &p, &d, Overrides::none())
                    .map(|_| ())
                    .map_err(|e| format!("{e:#}"))
            })?;
            match r {
                Ok(()) => accepted.set(accepted.get() + 1),
                Err(e) => {
                    refused.set(refused.get() + 1);
                    prop_assert!(
                        e.contains(&dir.display().to_string()),
                        "the refusal does not name the package: {e}\ninput:\n{}",
                        String::from_utf8_lossy(&text)
                    );
                }
            }
            progress("fuzz_manifest", &done);
            Ok(())
        })
        .unwrap();
    eprintln!(
        "fuzz_manifest: {} cases, {} accepted, {} refused",
        cases(),
        accepted.get(),
        refused.get()
    );
}

/// A case the long run found: a route naming a variant with no object was refused without
/// naming the package (the loader names the route entry only).
#[test]
fn a_route_without_an_object_names_the_package() {
    let dir = scratch_package();
    let mpath = dir.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&mpath).expect("manifest");
    let at = text.rfind("variant: \"split\"").expect("a route of the split variant");
    let edited = format!("{}variant: \"format\"{}", &text[..at], &text[at + 16..]);
    std::fs::write(&mpath, edited).expect("write");
    let e = format!("{:#}", open_package(&dir).expect_err("refused"));
    assert!(e.contains("routes of argmax_rows") && e.contains("`format`"), "{e}");
    assert!(e.contains(&dir.display().to_string()), "{e}");
}

// --- the IR -------------------------------------------------------------------------------------

fn base_kernels() -> Vec<(String, &'static kiln_ir::Target)> {
    let mut out = vec![];
    for name in ["gfx1100", "sm_90", "gfx906"] {
        let t = kiln_ir::Target::by_name(name).expect("target");
        for f in kiln_specs::library() {
            for v in &f.variants {
                out.push(((v.build)(t, t.default_wave()).to_ron(), t));
            }
        }
    }
    out
}

#[test]
fn fuzz_ir() {
    let bases = base_kernels();
    let (accepted, refused, done) = (Cell::new(0u64), Cell::new(0u64), Cell::new(0u64));
    let mut runner = proptest::test_runner::TestRunner::new(config());
    runner
        .run(&(0..bases.len(), edits()), |(which, edits)| {
            let (text, target) = &bases[which];
            let text = String::from_utf8_lossy(&mutate(text.as_bytes(), &edits)).into_owned();
            let t: &'static kiln_ir::Target = target;
            let input = text.clone();
            let r = guarded("Kernel::from_ron + verify", move || {
                let k = kiln_ir::Kernel::from_ron(&input).map_err(|e| format!("{e}"))?;
                kiln_ir::verify(&k, Some(t)).map_err(|e| e.to_string())
            })?;
            match r {
                Ok(()) => accepted.set(accepted.get() + 1),
                Err(e) => {
                    refused.set(refused.get() + 1);
                    prop_assert!(!e.trim().is_empty(), "an empty error for:\n{text}");
                }
            }
            progress("fuzz_ir", &done);
            Ok(())
        })
        .unwrap();
    eprintln!("fuzz_ir: {} cases, {} verified, {} refused", cases(), accepted.get(), refused.get());
}

// --- build matrices -------------------------------------------------------------------------------

#[test]
fn fuzz_build_matrix() {
    let base = include_str!("../../specs/build.ron");
    let (accepted, refused, done) = (Cell::new(0u64), Cell::new(0u64), Cell::new(0u64));
    let mut runner = proptest::test_runner::TestRunner::new(config());
    runner
        .run(&edits(), |edits| {
            let text = String::from_utf8_lossy(&mutate(base.as_bytes(), &edits)).into_owned();
            let input = text.clone();
            let r = guarded("parse_build_matrix", move || {
                kiln_specs::parse_build_matrix("fuzzed.ron", &input).map(|_| ())
            })?;
            match r {
                Ok(()) => accepted.set(accepted.get() + 1),
                Err(e) => {
                    refused.set(refused.get() + 1);
                    let e = e.to_string();
                    prop_assert!(e.starts_with("fuzzed.ron"), "no file name: {e}\n{text}");
                }
            }
            progress("fuzz_build_matrix", &done);
            Ok(())
        })
        .unwrap();
    eprintln!(
        "fuzz_build_matrix: {} cases, {} accepted, {} refused",
        cases(),
        accepted.get(),
        refused.get()
    );
}

// --- .npy files -------------------------------------------------------------------------------------

/// A NumPy v1.0 .npy file, written the way `numpy.save` writes it.
fn npy(descr: &str, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let dims = match shape {
        [n] => format!("({n},)"),
        s => format!("({})", s.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {dims}, }}");
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(data);
    out
}

fn base_npys() -> Vec<Vec<u8>> {
    let data: Vec<u8> = (0..96u8).collect();
    vec![
        npy("<f4", &[24], &data),
        npy("<f4", &[2, 3, 4], &data),
        npy("<u2", &[48], &data),
        npy("<f2", &[6, 8], &data),
        npy("|u1", &[96], &data),
        npy("<i8", &[12], &data),
        npy("<f8", &[3, 4], &data),
        npy("|b1", &[96], &data),
    ]
}

#[test]
fn fuzz_npy() {
    let bases = base_npys();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("input.npy");
    let (accepted, refused, done) = (Cell::new(0u64), Cell::new(0u64), Cell::new(0u64));
    let mut runner = proptest::test_runner::TestRunner::new(config());
    runner
        .run(&(0..bases.len(), edits()), |(which, edits)| {
            let bytes = mutate(&bases[which], &edits);
            std::fs::write(&path, &bytes).expect("write");
            let p = path.clone();
            let r = guarded("npy::read", move || {
                kiln::npy::read(&p).map(|_| ()).map_err(|e| format!("{e:#}"))
            })?;
            match r {
                Ok(()) => accepted.set(accepted.get() + 1),
                Err(e) => {
                    refused.set(refused.get() + 1);
                    prop_assert!(
                        e.contains(&path.display().to_string()),
                        "no file name: {e}\ninput: {bytes:?}"
                    );
                }
            }
            progress("fuzz_npy", &done);
            Ok(())
        })
        .unwrap();
    eprintln!(
        "fuzz_npy: {} cases, {} accepted, {} refused",
        cases(),
        accepted.get(),
        refused.get()
    );
}
