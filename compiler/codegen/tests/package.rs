//! `build_package` on the file system: the swap replaces a package entirely, an unchanged rebuild
//! comes from the cache, a failed build leaves the old package alone, and nothing that is not a
//! package is ever replaced.
//!
//! The kernels are `kiln_ir::examples` (small, verified for every arch); the builds stay on
//! `gfx1100` and `sm_90` so that both back ends and both object formats are exercised.

use kiln_codegen::package::{build_package, Budget, BuildReport, Job, PackageError};
use kiln_codegen::Options;
use kiln_ir::package::{KernelRoutes, Manifest, MANIFEST_FILE};
use kiln_ir::{examples, Kernel, Target};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh directory under the system temp dir, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir()
            .join(format!("kiln-codegen-package-{}-{tag}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create scratch dir");
        Scratch(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One `baseline` job per kernel and arch.
fn jobs(kernels: &[fn(u32) -> Kernel], archs: &[&str]) -> (Vec<Job>, Vec<KernelRoutes>) {
    let mut jobs = vec![];
    let mut routes = vec![];
    for make in kernels {
        let mut name = String::new();
        for arch in archs {
            let target = Target::by_name(arch).expect("known arch");
            let ir = make(target.default_wave());
            kiln_ir::verify(&ir, Some(target)).expect("example verifies");
            name = ir.name.clone();
            jobs.push(Job { kernel: ir.name.clone(), variant: "baseline".into(), target, ir });
        }
        routes.push(KernelRoutes {
            kernel: name,
            baseline: "baseline".into(),
            variants: vec![],
            tuning: vec![],
        });
    }
    (jobs, routes)
}

fn build(
    kernels: &[fn(u32) -> Kernel],
    archs: &[&str],
    budgets: &[Budget],
    out: &Path,
    cache: &Path,
) -> Result<BuildReport, PackageError> {
    let (jobs, routes) = jobs(kernels, archs);
    build_package(&jobs, routes, budgets, false, out, cache, &Options::default(), false)
}

fn wave_sum(w: u32) -> Kernel {
    examples::wave_sum(w)
}

fn argmax_row(w: u32) -> Kernel {
    examples::argmax_row(w, 256)
}

/// Every file under `dir`, relative, with `/` separators.
fn files_under(dir: &Path) -> BTreeSet<String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        for e in std::fs::read_dir(dir).expect("read_dir") {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).expect("under root");
                out.insert(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}

fn read_manifest(dir: &Path) -> Manifest {
    let text = std::fs::read_to_string(dir.join(MANIFEST_FILE)).expect("manifest readable");
    ron::from_str(&text).expect("manifest parses")
}

/// Checks that `dir` holds exactly the manifest, its objects and its IR files, each object
/// hashing to its `content_hash`; returns the manifest.
fn check_complete(dir: &Path) -> Manifest {
    let m = read_manifest(dir);
    let mut expected: BTreeSet<String> = [MANIFEST_FILE.to_string()].into();
    for o in &m.objects {
        let bytes = std::fs::read(dir.join(&o.file)).expect("object readable");
        assert_eq!(blake3::hash(&bytes).to_hex().to_string(), o.content_hash, "{}", o.file);
        expected.insert(o.file.clone());
        expected.insert(o.ir_file.clone());
    }
    assert_eq!(files_under(dir), expected, "files of {}", dir.display());
    m
}

fn names_in(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("dir entry").file_name().to_string_lossy().to_string())
        .collect()
}

#[test]
fn a_second_build_replaces_the_first_entirely() {
    let root = Scratch::new("swap");
    let out = root.0.join("pkg");
    let cache = Scratch::new("swap-cache");

    let a = build(&[wave_sum], &["sm_90", "gfx1100"], &[], &out, &cache.0).expect("build A");
    let ma = check_complete(&out);
    assert_eq!(ma, a.manifest);
    let archs: BTreeSet<&str> = ma.objects.iter().map(|o| o.arch.as_str()).collect();
    assert_eq!(archs, ["gfx1100", "sm_90"].into());
    assert!(out.join("wave_sum").is_dir());

    // B shares no kernel and no arch file with A: every file of A must be gone.
    let b = build(&[argmax_row], &["gfx1100"], &[], &out, &cache.0).expect("build B");
    let mb = check_complete(&out);
    assert_eq!(mb, b.manifest);
    assert_eq!(mb.objects.len(), 1);
    assert_eq!(mb.objects[0].kernel, "argmax_row");
    assert!(!out.join("wave_sum").exists(), "a directory of the first package survived");
    for o in &ma.objects {
        assert!(!out.join(&o.file).exists(), "{} of the first package survived", o.file);
        assert!(!out.join(&o.ir_file).exists(), "{} of the first package survived", o.ir_file);
    }
    // No staging or old directory is left next to the package.
    assert_eq!(names_in(&root.0), ["pkg".to_string()].into());
}

#[test]
fn an_unchanged_rebuild_comes_from_the_cache() {
    let root = Scratch::new("cache");
    let out = root.0.join("pkg");
    let cache = Scratch::new("cache-cache");
    let first = build(&[wave_sum], &["sm_90", "gfx1100"], &[], &out, &cache.0).expect("build");
    assert_eq!((first.compiled, first.cached), (2, 0));
    assert_eq!(first.compile_times.len(), 2);
    let second = build(&[wave_sum], &["sm_90", "gfx1100"], &[], &out, &cache.0).expect("rebuild");
    assert_eq!((second.compiled, second.cached), (0, 2));
    assert!(second.compile_times.is_empty());
    assert_eq!(second.manifest, first.manifest, "a cached rebuild writes the same package");
    check_complete(&out);
    println!("cold {:?}, cached {:?}", first.elapsed, second.elapsed);
}

#[test]
fn an_over_budget_build_leaves_the_old_package_alone() {
    let root = Scratch::new("budget");
    let out = root.0.join("pkg");
    let cache = Scratch::new("budget-cache");
    build(&[wave_sum], &["gfx1100"], &[], &out, &cache.0).expect("build");
    let before = std::fs::read(out.join(MANIFEST_FILE)).expect("manifest");

    let tight = Budget { kernel: "*".into(), max_vgprs: Some(1), ..Budget::default() };
    let err = build(&[argmax_row], &["gfx1100"], &[tight], &out, &cache.0)
        .expect_err("one VGPR is not enough");
    let msg = err.to_string();
    assert!(matches!(err, PackageError::OverBudget { .. }), "{msg}");
    assert!(msg.contains("argmax_row/baseline on gfx1100") && msg.contains("budget 1"), "{msg}");

    assert_eq!(std::fs::read(out.join(MANIFEST_FILE)).expect("manifest"), before);
    assert_eq!(check_complete(&out).objects[0].kernel, "wave_sum");
    assert_eq!(names_in(&root.0), ["pkg".to_string()].into());
}

#[test]
fn only_a_package_or_an_empty_directory_is_replaced() {
    let root = Scratch::new("guard");
    let cache = Scratch::new("guard-cache");

    // A directory with someone's files in it.
    let theirs = root.0.join("src");
    std::fs::create_dir_all(theirs.join("deep")).expect("mkdir");
    std::fs::write(theirs.join("deep/notes.txt"), "keep me").expect("write");
    let err = build(&[wave_sum], &["gfx1100"], &[], &theirs, &cache.0).expect_err("not a package");
    assert!(matches!(err, PackageError::NotAPackage { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("src") && msg.contains("not a kiln package"), "{msg}");
    assert_eq!(std::fs::read_to_string(theirs.join("deep/notes.txt")).expect("kept"), "keep me");

    // A file.
    let file = root.0.join("file");
    std::fs::write(&file, "data").expect("write");
    let err = build(&[wave_sum], &["gfx1100"], &[], &file, &cache.0).expect_err("a file");
    assert!(matches!(err, PackageError::NotAPackage { .. }), "{err}");
    assert_eq!(std::fs::read_to_string(&file).expect("kept"), "data");

    // An empty directory is fine, and so is the package written there afterwards.
    let empty = root.0.join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    build(&[wave_sum], &["gfx1100"], &[], &empty, &cache.0).expect("empty dir");
    check_complete(&empty);
    build(&[argmax_row], &["gfx1100"], &[], &empty, &cache.0).expect("over a package");
    assert_eq!(check_complete(&empty).objects[0].kernel, "argmax_row");
    assert_eq!(names_in(&root.0), ["empty", "file", "src"].map(String::from).into());
}

#[test]
fn a_corrupted_cache_entry_is_recompiled_not_packaged() {
    let root = Scratch::new("cache-corrupt");
    let out = root.0.join("pkg");
    let cache = Scratch::new("cache-corrupt-cache");
    let first = build(&[wave_sum], &["gfx1100"], &[], &out, &cache.0).expect("first build");
    assert_eq!(first.compiled, 1);
    // Flip one byte of every cached object.
    for e in std::fs::read_dir(&cache.0).expect("cache dir") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "obj") {
            let mut b = std::fs::read(&p).expect("cached object");
            let mid = b.len() / 2;
            b[mid] ^= 0x40;
            std::fs::write(&p, b).expect("rewrite");
        }
    }
    let second = build(&[wave_sum], &["gfx1100"], &[], &out, &cache.0).expect("second build");
    assert_eq!((second.compiled, second.cached), (1, 0), "the corrupted entry was used");
    assert_eq!(check_complete(&out), first.manifest, "the rebuilt package differs from the first");
}

#[test]
fn staging_dirs_of_killed_builds_are_removed() {
    let root = Scratch::new("stale");
    let out = root.0.join("pkg");
    let cache = Scratch::new("stale-cache");
    // A pid that cannot be alive (above pid_max's ceiling) and our own parent's (alive).
    let dead = root.0.join(".pkg.new-4194305");
    let alive = root.0.join(format!(".pkg.new-{}", std::os::unix::process::parent_id()));
    for d in [&dead, &alive] {
        std::fs::create_dir_all(d.join("half")).expect("staging dir");
    }
    build(&[wave_sum], &["sm_90"], &[], &out, &cache.0).expect("build");
    assert!(!dead.exists(), "a dead build's staging dir was left");
    assert!(alive.exists(), "a live build's staging dir was removed");
}

/// Every cache entry's metadata file in `cache`.
fn cache_metas(cache: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(cache)
        .expect("cache dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "ron"))
        .collect()
}

#[test]
fn an_edited_cache_metadata_file_is_recompiled_not_packaged() {
    let root = Scratch::new("cache-meta");
    let out = root.0.join("pkg");
    let cache = Scratch::new("cache-meta-cache");
    let first = build(&[argmax_row], &["gfx1100", "sm_90"], &[], &out, &cache.0).expect("first");
    let metas = cache_metas(&cache.0);
    assert_eq!(metas.len(), 2);
    // What `sed -i 's/vgprs:Some(14)/vgprs:Some(1)/'` does, for whatever count was measured,
    // and a renamed symbol in the other entry.
    for (i, m) in metas.iter().enumerate() {
        let text = std::fs::read_to_string(m).expect("meta");
        let edited = if i == 0 {
            let at = text.find("vgprs:Some(").expect("measured VGPRs") + "vgprs:Some(".len();
            let end = at + text[at..].find(')').expect("closing paren");
            assert_ne!(&text[at..end], "1");
            format!("{}1{}", &text[..at], &text[end..])
        } else {
            text.replacen("symbol:\"argmax_row\"", "symbol:\"argmax_rox\"", 1)
        };
        assert_ne!(edited, text, "the edit changed nothing");
        std::fs::write(m, edited).expect("edit");
    }
    let second = build(&[argmax_row], &["gfx1100", "sm_90"], &[], &out, &cache.0).expect("second");
    assert_eq!((second.compiled, second.cached, second.refused_cache_entries), (2, 0, 2));
    assert_eq!(check_complete(&out), first.manifest, "edited metadata was packaged");
    // The recompiled entries are good again.
    let third = build(&[argmax_row], &["gfx1100", "sm_90"], &[], &out, &cache.0).expect("third");
    assert_eq!((third.compiled, third.cached, third.refused_cache_entries), (0, 2, 0));
}

#[test]
fn the_cache_key_holds_every_tool_version() {
    let (jobs, _) = jobs(&[wave_sum], &["sm_90"]);
    let opts = Options::default();
    let tc = kiln_codegen::package::toolchain();
    let key = kiln_codegen::package::cache_key(&jobs[0], &tc, &opts);
    let mut other = tc.clone();
    other.ptxas = match &tc.ptxas {
        Some(_) => None,
        None => Some("Cuda compilation tools, release 12.8".into()),
    };
    assert_ne!(kiln_codegen::package::cache_key(&jobs[0], &other, &opts), key, "ptxas");
    let mut other = tc.clone();
    other.ld_lld = Some(format!("{:?} and one more", tc.ld_lld));
    assert_ne!(kiln_codegen::package::cache_key(&jobs[0], &other, &opts), key, "ld.lld");
    let mut other = tc.clone();
    other.llvm.push('x');
    assert_ne!(kiln_codegen::package::cache_key(&jobs[0], &other, &opts), key, "llvm");
    assert_eq!(kiln_codegen::package::cache_key(&jobs[0], &tc, &opts), key);
}

#[test]
fn an_arch_given_twice_is_refused_before_anything_is_built() {
    let root = Scratch::new("dup");
    let out = root.0.join("pkg");
    let cache = Scratch::new("dup-cache");
    build(&[wave_sum], &["gfx1100"], &[], &out, &cache.0).expect("build");
    let before = std::fs::read(out.join(MANIFEST_FILE)).expect("manifest");
    let t0 = std::time::Instant::now();
    let err = build(&[argmax_row], &["gfx1030", "gfx1030"], &[], &out, &cache.0)
        .expect_err("gfx1030 twice");
    let msg = err.to_string();
    assert!(matches!(err, PackageError::DuplicateJob { .. }), "{msg}");
    assert!(msg.contains("argmax_row/baseline for gfx1030 is asked for twice"), "{msg}");
    assert!(msg.contains("gfx1030 listed twice"), "{msg}");
    assert!(t0.elapsed() < std::time::Duration::from_secs(5));
    // Nothing was compiled into the cache, and the old package is untouched.
    assert_eq!(cache_metas(&cache.0).len(), 1);
    assert_eq!(std::fs::read(out.join(MANIFEST_FILE)).expect("manifest"), before);
    assert_eq!(names_in(&root.0), ["pkg".to_string()].into());
}

#[test]
fn a_package_that_would_not_open_is_not_swapped_in() {
    let root = Scratch::new("noopen");
    let out = root.0.join("pkg");
    let cache = Scratch::new("noopen-cache");
    build(&[wave_sum], &["gfx1100"], &[], &out, &cache.0).expect("build");
    let before = std::fs::read(out.join(MANIFEST_FILE)).expect("manifest");
    // A route to a variant that is not built: the loader refuses such a package.
    let (jobs, mut routes) = jobs(&[argmax_row], &["gfx1100"]);
    routes[0].variants.push(kiln_ir::package::VariantRoute {
        variant: "fast".into(),
        admit: kiln_ir::package::Admission::default(),
    });
    let err = build_package(&jobs, routes, &[], false, &out, &cache.0, &Options::default(), false)
        .expect_err("a route without an object");
    let msg = err.to_string();
    assert!(matches!(err, PackageError::Invalid(_)), "{msg}");
    assert!(msg.contains("fails the loader's checks, so it was not swapped in"), "{msg}");
    assert!(msg.contains("variant `fast` has no code object"), "{msg}");
    assert_eq!(std::fs::read(out.join(MANIFEST_FILE)).expect("manifest"), before);
    assert_eq!(names_in(&root.0), ["pkg".to_string()].into(), "a staging dir was left");
}

#[test]
fn a_route_admitted_by_a_scalar_its_abi_lacks_is_refused() {
    let root = Scratch::new("admitscalar");
    let out = root.0.join("pkg");
    let cache = Scratch::new("admitscalar-cache");
    let (mut jobs, mut routes) = jobs(&[argmax_row], &["gfx1100"]);
    let fast = Job { variant: "fast".into(), ..jobs[0].clone() };
    jobs.push(fast);
    // A bound on a scalar the kernel does not have would admit no call at all.
    routes[0].variants.push(kiln_ir::package::VariantRoute {
        variant: "fast".into(),
        admit: kiln_ir::package::Admission {
            archs: vec![],
            shapes: vec![("n_rows_typo".into(), 1, 8)],
        },
    });
    let err = build_package(&jobs, routes, &[], false, &out, &cache.0, &Options::default(), false)
        .expect_err("an admission on a missing scalar");
    let msg = err.to_string();
    assert!(matches!(err, PackageError::Invalid(_)), "{msg}");
    assert!(msg.contains("variant `fast` is admitted by `n_rows_typo`"), "{msg}");
    assert!(msg.contains("not a scalar of its ABI (it has: "), "{msg}");
    assert!(!out.exists(), "nothing was swapped in");
}

#[test]
fn leftovers_of_killed_builds_are_removed_and_live_ones_kept() {
    let root = Scratch::new("leftovers");
    let out = root.0.join("pkg");
    let cache = Scratch::new("leftovers-cache");
    // A pid above pid_max's ceiling cannot be alive; our parent is.
    let (dead, alive) = (4194305u32, std::os::unix::process::parent_id());
    let tmp = std::env::temp_dir();
    let mut gone = vec![
        root.0.join(format!(".pkg.old-{dead}")),
        cache.0.join(format!("abc.obj.tmp{dead}")),
        cache.0.join(format!("abc.tmp{dead}")),
    ];
    let mut kept = vec![
        root.0.join(format!(".pkg.old-{alive}")),
        cache.0.join(format!("abc.obj.tmp{alive}")),
        cache.0.join("abc.tmpx"),
    ];
    // Scratch files of the tools in the temp dir (unique names: other tests share it).
    let n = std::process::id();
    gone.push(tmp.join(format!("kiln-{dead}-{n}77.ptx")));
    kept.push(tmp.join(format!("kiln-{alive}-{n}77.ptx")));
    for p in gone.iter().chain(&kept) {
        if p.file_name().unwrap().to_string_lossy().starts_with(".pkg") {
            std::fs::create_dir_all(p.join("half")).expect("dir");
        } else {
            std::fs::write(p, "half").expect("file");
        }
    }
    build(&[wave_sum], &["gfx1100"], &[], &out, &cache.0).expect("build");
    for p in &gone {
        assert!(!p.exists(), "{} was left", p.display());
    }
    for p in &kept {
        assert!(p.exists(), "{} was removed", p.display());
    }
    let _ = std::fs::remove_file(tmp.join(format!("kiln-{alive}-{n}77.ptx")));
}

/// Real objects relabelled for another arch of their vendor fail the loader's checks, naming the
/// arch they were built for (the HSACO's ELF machine, the PTX's `.target`).
#[test]
fn a_real_object_relabelled_for_another_arch_is_refused() {
    use kiln_ir::package::check::{check_package, parse_manifest};
    let root = Scratch::new("relabel");
    let out = root.0.join("pkg");
    let cache = Scratch::new("relabel-cache");
    build(&[wave_sum], &["gfx1100", "sm_90"], &[], &out, &cache.0).expect("build");
    let mpath = out.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&mpath).expect("manifest");
    let read = |rel: &str| std::fs::read(out.join(rel));
    check_package(&parse_manifest(&text, &mpath).expect("parses"), &mpath, read).expect("opens");
    for (from, to, found) in [
        ("gfx1100", "gfx1030", "one built for gfx1100 (e_flags machine 0x41)"),
        ("sm_90", "sm_80", "PTX for sm_90 (`.target sm_90`)"),
    ] {
        let mut m = parse_manifest(&text, &mpath).expect("parses");
        let e = m.objects.iter_mut().find(|o| o.arch == from).expect("object");
        e.arch = to.into();
        e.target_id = e.target_id.replace(from, to);
        let err = check_package(&m, &mpath, read).expect_err("relabelled").to_string();
        assert!(err.contains(&format!("wave_sum/baseline for {to}: code object")), "{err}");
        assert!(err.contains(found), "{err}");
    }
}
