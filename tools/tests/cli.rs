//! The `kiln` command line end to end (DESIGN.md section 8): the real binary on small packages
//! (one or two kernel families, `sm_90` and `gfx1100`), each test in its own temporary directory
//! with its own `KILN_CACHE_DIR`. Everything runs on the `cpu` device; the `cuda` checks expect a
//! clean refusal where there is no GPU. The packages are built here, so the tests need the full
//! (`llvm`) binary.
#![cfg(feature = "llvm")]

mod common;

use common::{npy, write_f32, Env};
use kiln_ir::package::{ObjectFormat, MANIFEST_FILE, MANIFEST_FORMAT};
use kiln_ir::Target;
use kiln_runtime::Package;
use std::collections::BTreeSet;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The two archs of every package here: one NVIDIA (PTX), one AMD (HSACO).
const ARCHS: &str = "sm_90,gfx1100";

/// (kernel, variant, arch) of every object a build of `kernels` x `archs` must write.
fn expected_objects(kernels: &str, archs: &str) -> BTreeSet<(String, String, String)> {
    let mut out = BTreeSet::new();
    for f in kiln_specs::library().iter().filter(|f| kernels.split(',').any(|k| k == f.name)) {
        for a in archs.split(',') {
            for v in &f.variants {
                out.insert((f.name.to_string(), v.name.to_string(), a.to_string()));
            }
            // The shipped tuning's variants of the arch.
            if let Some(space) = kiln_specs::tune::space(f.name) {
                let file = kiln_specs::tune::shipped(a);
                for (v, _, _) in kiln_specs::tune::apply(&space, a, file.as_ref()).variants {
                    out.insert((f.name.to_string(), v, a.to_string()));
                }
            }
        }
    }
    out
}

fn variants_of(kernel: &str) -> Vec<String> {
    let lib = kiln_specs::library();
    let f = lib.iter().find(|f| f.name == kernel).expect("kernel in the library");
    f.variants.iter().map(|v| v.name.to_string()).collect()
}

/// Every file under `dir`, relative.
fn files_under(dir: &Path) -> BTreeSet<String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        for e in std::fs::read_dir(dir).expect("read_dir") {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(p.strip_prefix(root).expect("under root").to_string_lossy().into());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}

/// Opens `dir` with the runtime's loader (which checks every hash) and checks that it holds
/// nothing but the manifest and the files it lists; returns its (kernel, variant, arch) set.
fn open_complete(dir: &Path) -> BTreeSet<(String, String, String)> {
    let pkg = Package::open(dir)
        .unwrap_or_else(|e| panic!("{} is not a complete package: {e}", dir.display()));
    let m = pkg.manifest();
    let mut listed: BTreeSet<String> = [MANIFEST_FILE.to_string()].into();
    for o in &m.objects {
        listed.insert(o.file.clone());
        listed.insert(o.ir_file.clone());
    }
    assert_eq!(
        files_under(dir),
        listed,
        "{} holds files its manifest does not list",
        dir.display()
    );
    m.objects.iter().map(|o| (o.kernel.clone(), o.variant.clone(), o.arch.clone())).collect()
}

// --- targets and argument errors ---------------------------------------------------------------

#[test]
fn targets_lists_every_arch_with_its_wave_sizes() {
    let env = Env::new();
    let out = env.kiln(&["targets"]).ok().stdout;
    // The arch table runs to the first blank line; the dot and matrix sections follow.
    let lines: Vec<&str> = out.lines().take_while(|l| !l.trim().is_empty()).collect();
    assert!(lines[0].split_whitespace().any(|w| w == "wave"), "no header: {out}");
    assert_eq!(lines.len(), kiln_ir::TARGETS.len() + 1, "{out}");
    for section in ["dot products", "matrix multiply-accumulate"] {
        assert!(out.contains(section), "no {section} section: {out}");
    }
    for t in kiln_ir::TARGETS.iter() {
        let line = lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(t.name))
            .unwrap_or_else(|| panic!("{} missing from:\n{out}", t.name));
        let waves = t.wave_sizes.iter().map(|w| w.to_string()).collect::<Vec<_>>().join("/");
        assert_eq!(line.split_whitespace().nth(2), Some(waves.as_str()), "{line}");
    }
}

#[test]
fn build_refuses_an_unknown_arch_and_lists_the_supported_ones() {
    let env = Env::new();
    let err = env.kiln(&["build", "--arch", "gfx9999", "-o", "pkg"]).fails();
    assert!(err.contains("gfx9999"), "{err}");
    for t in kiln_ir::TARGETS.iter() {
        assert!(err.contains(t.name), "{} not listed: {err}", t.name);
    }
    assert!(!env.path("pkg").exists());
}

/// A family built only for wave-32 archs (the `_norm` GEMVs) in a build for gfx906 alone: no
/// objects and no routes for it, the rest of the package good (its routes once named variants
/// with no object, and the loader refused the whole package).
#[test]
fn a_build_for_archs_a_family_skips_has_no_routes_for_it() {
    let env = Env::new();
    let kernels = "argmax_rows,gemv_q4_1_rp_qkv_norm";
    env.kiln(&["build", "--kernel", kernels, "--arch", "gfx906", "-o", "pkg"]).ok();
    let manifest = std::fs::read_to_string(env.path("pkg/manifest.ron")).expect("manifest");
    assert!(manifest.contains("argmax_rows"), "{manifest}");
    assert!(!manifest.contains("gemv_q4_1_rp_qkv_norm"), "{manifest}");
    env.kiln(&["inspect", "pkg"]).ok();
}

#[test]
fn build_refuses_an_unknown_kernel_and_lists_the_library() {
    let env = Env::new();
    let err = env.kiln(&["build", "--kernel", "argmax_rows,no_such_kernel", "-o", "pkg"]).fails();
    assert!(err.contains("no_such_kernel"), "{err}");
    for f in kiln_specs::library() {
        assert!(err.contains(f.name), "{} not listed: {err}", f.name);
    }
    assert!(!env.path("pkg").exists());
}

#[test]
fn build_refuses_a_malformed_matrix_with_its_location() {
    let env = Env::new();
    std::fs::write(
        env.path("m.ron"),
        "(\n  archs: [\"sm_90\"],\n  kernels: []\n  budgets: [],\n)\n",
    )
    .expect("write matrix");
    let err = env.kiln(&["build", "--matrix", "m.ron", "-o", "pkg"]).fails();
    assert!(err.contains("m.ron:4:"), "no file:line in: {err}");
    assert!(!env.path("pkg").exists());
}

#[test]
fn a_build_over_its_budget_fails_saying_by_how_much_and_writes_nothing() {
    let env = Env::new();
    std::fs::write(
        env.path("m.ron"),
        "(archs: [\"gfx1100\"], kernels: [\"argmax_rows\"], budgets: [(kernel: \"argmax_rows\", \
         archs: [\"gfx1100\"], max_vgprs: Some(8), max_scratch: None, max_spills: None)])",
    )
    .expect("write matrix");
    let err = env.kiln(&["build", "--matrix", "m.ron", "-o", "pkg"]).fails();
    assert!(err.contains("argmax_rows") && err.contains("gfx1100"), "{err}");
    assert!(err.contains("budget 8 (over by"), "{err}");
    assert!(!env.path("pkg").exists());
}

// --- build, cache, atomicity --------------------------------------------------------------------

#[test]
fn build_writes_every_object_and_an_unchanged_rebuild_comes_from_the_cache() {
    let env = Env::new();
    let expected = expected_objects("argmax_rows", ARCHS);
    let n = expected.len();

    let t0 = Instant::now();
    let first = env.build("argmax_rows", ARCHS, "pkg");
    let cold = t0.elapsed();
    assert_eq!(open_complete(&env.path("pkg")), expected);
    assert!(first.stdout.contains(&format!("{n} objects: {n} compiled")), "{}", first.stdout);
    assert!(first.stdout.contains("0 from cache"), "{}", first.stdout);

    let pkg = Package::open(env.path("pkg")).expect("opens");
    let m = pkg.manifest().clone();
    // kiln's version plus the back end's source fingerprint (16 hex digits).
    let (version, fingerprint) = m.toolchain.kiln.split_once('+').expect("version+fingerprint");
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    assert!(
        fingerprint.len() == 16 && fingerprint.bytes().all(|c| c.is_ascii_hexdigit()),
        "{}",
        m.toolchain.kiln
    );
    for o in &m.objects {
        let t = Target::by_name(&o.arch).expect("known arch");
        let who = format!("{}/{} {}", o.kernel, o.variant, o.arch);
        assert_eq!(o.wave_size, t.default_wave(), "{who}");
        assert!(o.resources.vgprs.is_some_and(|v| v > 0), "{who}: no VGPR count");
        assert!(o.occupancy.is_some(), "{who}: no occupancy");
        assert!(!o.abi.params.is_empty(), "{who}: no ABI");
        let (format, ext) = match t.name.starts_with("sm_") {
            true => (ObjectFormat::Ptx, ".ptx"),
            false => (ObjectFormat::Hsaco, ".hsaco"),
        };
        assert_eq!(o.format, format, "{who}");
        assert!(o.file.ends_with(ext), "{who}: {}", o.file);
        if format == ObjectFormat::Hsaco {
            assert!(o.resources.sgprs.is_some(), "{who}: no SGPR count");
        }
        // The resource report has the object's row.
        let row = first
            .stdout
            .lines()
            .find(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.len() > 4 && w[0] == o.kernel && w[1] == o.variant && w[2] == o.arch
            })
            .unwrap_or_else(|| panic!("{who} missing from the report:\n{}", first.stdout));
        assert!(row.contains(&o.resources.source), "{row}");
    }
    let header = first.stdout.lines().next().expect("report header");
    for col in ["kernel", "variant", "arch", "wave", "VGPR", "LDS", "spills", "occupancy"] {
        assert!(header.contains(col), "{col} missing from {header}");
    }

    let t0 = Instant::now();
    let again = env.build("argmax_rows", ARCHS, "pkg");
    let warm = t0.elapsed();
    println!("kiln build argmax_rows x {ARCHS}: cold {cold:.2?}, unchanged rebuild {warm:.2?}");
    assert!(again.stdout.contains(&format!("{n} objects: 0 compiled")), "{}", again.stdout);
    assert!(again.stdout.contains(&format!("{n} from cache")), "{}", again.stdout);
    assert!(warm < Duration::from_secs(5), "an unchanged rebuild took {warm:?}");
    assert_eq!(open_complete(&env.path("pkg")), expected);
    assert_eq!(Package::open(env.path("pkg")).expect("opens").manifest(), &m);
}

#[test]
fn build_never_replaces_a_directory_that_is_not_a_package() {
    let env = Env::new();
    std::fs::create_dir_all(env.path("src/deep")).expect("mkdir");
    std::fs::write(env.path("src/deep/notes.txt"), "keep me").expect("write");
    let err =
        env.kiln(&["build", "--kernel", "argmax_rows", "--arch", "gfx1100", "-o", "src"]).fails();
    assert!(err.contains("src") && err.contains("not a kiln package"), "{err}");
    assert_eq!(std::fs::read_to_string(env.path("src/deep/notes.txt")).expect("kept"), "keep me");
}

/// Starts `kiln build`, SIGKILLs it after `delay` unless it finished; says whether it was killed.
fn build_killed_after(env: &Env, kernels: &str, delay: Duration) -> bool {
    let mut child = env
        .command()
        .args(["build", "--kernel", kernels, "--arch", ARCHS, "-o", "pkg"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("kiln starts");
    std::thread::sleep(delay);
    if child.try_wait().expect("try_wait").is_none() {
        child.kill().expect("SIGKILL");
    }
    let status = child.wait().expect("wait");
    assert!(status.success() || status.signal() == Some(9), "{status:?}");
    !status.success()
}

/// Times a complete `kiln build` of `kernels` into `pkg`.
fn timed_build(env: &Env, kernels: &str) -> Duration {
    let t0 = Instant::now();
    env.build(kernels, ARCHS, "pkg");
    t0.elapsed()
}

/// Which of the two packages `dir` holds, after checking it is complete: "absent", "old" or "new".
fn package_state(
    dir: &Path,
    old: &BTreeSet<(String, String, String)>,
    new: &BTreeSet<(String, String, String)>,
) -> &'static str {
    if !dir.exists() {
        return "absent";
    }
    let objects = open_complete(dir);
    if objects == *old {
        "old"
    } else if objects == *new {
        "new"
    } else {
        panic!("{} is neither the old package nor the new one: {objects:?}", dir.display())
    }
}

#[test]
fn a_killed_build_leaves_the_old_package_or_the_new_one() {
    let env = Env::new();
    let pkg = env.path("pkg");
    let small = "argmax_rows";
    let big = "argmax_rows,row_top_prob,rmsnorm_f32,swiglu,quantize_q8_0_f32";
    let (old, new) = (expected_objects(small, ARCHS), expected_objects(big, ARCHS));
    let state = || package_state(&pkg, &old, &new);
    let mut log = vec![];

    // No package yet, empty cache: killed (most likely while compiling), no package appears, or
    // the whole one.
    let killed = build_killed_after(&env, small, Duration::from_millis(300));
    let now = state();
    log.push(format!("first build, kill at 300 ms: killed {killed}, {now}"));
    assert!(now == "absent" || now == "old", "{log:#?}");
    assert!(killed || now == "old", "{log:#?}");
    timed_build(&env, small);
    assert_eq!(state(), "old");

    // Cold builds of a bigger selection, killed while compiling: the old package stays.
    for ms in [300, 1000] {
        let killed = build_killed_after(&env, big, Duration::from_millis(ms));
        let now = state();
        log.push(format!("cold build of 5 families, kill at {ms} ms: killed {killed}, {now}"));
        assert!(now == "old" || (!killed && now == "new"), "{log:#?}");
    }
    timed_build(&env, big);
    assert_eq!(state(), "new");

    // With a warm cache a build is mostly writing the package: kill it at points spread over a
    // whole build, flipping between the two selections, so that some kills land in the write
    // and the swap.
    let times = [timed_build(&env, small), timed_build(&env, big)];
    let mut now = state();
    assert_eq!(now, "new");
    for step in 0..12 {
        let (kernels, i) = if now == "old" { (big, 1) } else { (small, 0) };
        let delay = times[i].mul_f64(0.2 + 0.09 * step as f64);
        let killed = build_killed_after(&env, kernels, delay);
        let was = now;
        now = state();
        log.push(format!(
            "warm build, {was} -> other, kill at {delay:.0?}: killed {killed}, {now}"
        ));
    }

    // Killed builds may leave their staging directory next to the package; nothing else.
    let mut staging = 0;
    for e in std::fs::read_dir(env.dir.path()).expect("read_dir") {
        let name = e.expect("entry").file_name().to_string_lossy().to_string();
        if name.starts_with(".pkg.new-") {
            staging += 1;
        } else {
            assert!(name == "pkg" || name == "cache", "unexpected {name} next to the package");
        }
    }
    println!("{}", log.join("\n"));
    println!("warm builds: small {:.2?}, big {:.2?}", times[0], times[1]);
    println!("{staging} staging directories left by killed builds");
}

// --- tampering ----------------------------------------------------------------------------------

#[test]
fn a_flipped_byte_in_an_object_is_refused() {
    let env = Env::new();
    env.build("argmax_rows", ARCHS, "pkg");
    let pkg = Package::open(env.path("pkg")).expect("opens");
    let o = pkg.manifest().objects.last().expect("objects").clone();
    let path = env.path("pkg").join(&o.file);
    let mut bytes = std::fs::read(&path).expect("object");
    let at = bytes.len() / 2;
    bytes[at] ^= 0x01;
    std::fs::write(&path, &bytes).expect("write");

    let err = env.kiln(&["parity", "--device", "cpu", "--package", "pkg"]).fails();
    let who = format!("{}/{} for {}", o.kernel, o.variant, o.arch);
    assert!(err.contains(&who), "the error does not name {who}: {err}");
    assert!(err.contains(&o.file) && err.contains("modified"), "{err}");
    assert!(err.contains(&format!("expected {}", o.content_hash)), "{err}");
    assert!(err.contains("found "), "{err}");

    // `run` goes through the same loader.
    let err = env
        .kiln(&["run", "argmax_rows", "--package", "pkg", "--shape", "rows=1", "--out", "o"])
        .fails();
    assert!(err.contains(&who), "{err}");
    assert!(!env.path("o").exists());

    bytes[at] ^= 0x01;
    std::fs::write(&path, &bytes).expect("write");
    Package::open(env.path("pkg")).expect("the restored package opens");
}

#[test]
fn a_manifest_of_another_format_is_refused() {
    let env = Env::new();
    env.build("argmax_rows", "gfx1100", "pkg");
    let mpath = env.path("pkg").join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&mpath).expect("manifest");
    let field = format!("format: {MANIFEST_FORMAT},");
    assert!(text.contains(&field), "{text}");
    let next = MANIFEST_FORMAT + 1;
    std::fs::write(&mpath, text.replacen(&field, &format!("format: {next},"), 1)).expect("write");

    for args in [
        &["parity", "--device", "cpu", "--package", "pkg"][..],
        &["run", "argmax_rows", "--package", "pkg", "--shape", "rows=1", "--out", "o"],
    ] {
        let err = env.kiln(args).fails();
        assert!(err.contains(&format!("manifest format {next}")), "{err}");
        assert!(err.contains(&format!("format {MANIFEST_FORMAT} only")), "{err}");
    }
}

// --- run ----------------------------------------------------------------------------------------

fn read_i32(path: &Path) -> Vec<i32> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let f = npyz::NpyFile::new(&bytes[..]).expect("a .npy file");
    match f.dtype() {
        npyz::DType::Plain(t) => assert_eq!(t.to_string(), "<i4", "dtype of {}", path.display()),
        d => panic!("{}: dtype {d:?}", path.display()),
    }
    f.into_vec::<i32>().expect("i32 data")
}

/// `rows` x `n` logits with ties and -inf, deterministic.
fn logits(rows: usize, n: usize) -> Vec<f32> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut v: Vec<f32> = (0..rows * n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32 * 16.0 - 8.0
        })
        .collect();
    // Row 0: a tie for the largest value (the lowest index wins) and a -inf.
    v[700] = 100.0;
    v[123] = 100.0;
    v[5] = f32::NEG_INFINITY;
    // Row 1: the largest value is the last one.
    v[n + n - 1] = 50.0;
    v
}

/// The reference: the first index of the largest value of each row.
fn argmax_rows(v: &[f32], n: usize) -> Vec<i32> {
    v.chunks(n)
        .map(|row| {
            let mut best = 0;
            for (i, x) in row.iter().enumerate() {
                if *x > row[best] {
                    best = i;
                }
            }
            best as i32
        })
        .collect()
}

#[test]
fn run_computes_argmax_on_npy_input_with_every_variant() {
    let env = Env::new();
    env.build("argmax_rows", ARCHS, "pkg");
    let (rows, n) = (2, 1000);
    let x = logits(rows, n);
    let want = argmax_rows(&x, n);
    assert_eq!(want[0], 123);
    assert_eq!(want[1], 999);
    write_f32(&env.path("in.npy"), &[rows, n], &x);
    let common = ["--device", "cpu", "--package", "pkg", "--arg", "logits=in.npy"];
    let shapes = ["--shape", "rows=2", "--shape", "n=1000"];

    let out =
        env.kiln(&[&["run", "argmax_rows"][..], &common, &shapes, &["--out", "routed"]].concat());
    let out = out.ok().stdout;
    assert!(out.contains("ran argmax_rows variant "), "{out}");
    assert_eq!(read_i32(&env.path("routed/out.npy")), want);

    for v in variants_of("argmax_rows") {
        let dir = format!("out_{v}");
        let args =
            [&["run", "argmax_rows", "--variant", &v][..], &common, &shapes, &["--out", &dir]];
        let out = env.kiln(&args.concat()).ok().stdout;
        assert!(out.contains(&format!("ran argmax_rows variant {v} on cpu")), "{out}");
        assert_eq!(read_i32(&env.path(&dir).join("out.npy")), want, "variant {v}");
    }

    let args =
        [&["run", "argmax_rows", "--variant", "nope"][..], &common, &shapes, &["--out", "o"]];
    let err = env.kiln(&args.concat()).fails();
    assert!(err.contains("nope") && err.contains("baseline"), "{err}");
    assert!(!env.path("o").exists());
}

#[test]
fn run_refuses_bad_inputs_and_writes_nothing() {
    let env = Env::new();
    env.build("argmax_rows", "gfx1100", "pkg");
    let (rows, n) = (2, 1000);
    let x: Vec<u8> = logits(rows, n).iter().flat_map(|v| (*v as f64).to_le_bytes()).collect();
    std::fs::write(env.path("f64.npy"), npy("<f8", &[rows, n], &x)).expect("write");
    write_f32(&env.path("short.npy"), &[rows, n - 1], &logits(rows, n)[..rows * (n - 1)]);
    write_f32(&env.path("in.npy"), &[rows, n], &logits(rows, n));
    let base = ["run", "argmax_rows", "--package", "pkg", "--out", "o"];
    let run = |extra: &[&str]| env.kiln(&[&base[..], extra].concat());

    let err = run(&["--arg", "logits=f64.npy", "--shape", "rows=2", "--shape", "n=1000"]).fails();
    assert!(err.contains("logits") && err.contains("f32") && err.contains("f64"), "{err}");

    let err = run(&["--arg", "logits=in.npy", "--shape", "rows=2"]).fails();
    assert!(err.contains("--shape n"), "{err}");

    let err = run(&["--arg", "logits=short.npy", "--shape", "rows=2", "--shape", "n=1000"]).fails();
    assert!(err.contains("logits") && err.contains("1998") && err.contains("2000"), "{err}");

    let err = run(&["--shape", "rows=2", "--shape", "n=1000"]).fails();
    assert!(err.contains("--arg logits"), "{err}");

    let err = run(&[
        "--arg",
        "logits=in.npy",
        "--shape",
        "rows=2",
        "--shape",
        "n=1000",
        "--shape",
        "k=3",
    ])
    .fails();
    assert!(err.contains("`k`") && err.contains("logits"), "{err}");

    assert!(!env.path("o").exists(), "a failed run wrote its output directory");
}

// --- parity -------------------------------------------------------------------------------------

#[test]
fn parity_on_cpu_passes_and_ends_with_the_summary() {
    let env = Env::new();
    // copy_from_mapped_multi has no generic cases: its own path (a table of device addresses
    // into host-mapped sources) runs 3 cases a variant, counted in the summary.
    env.build("argmax_rows,copy_from_mapped_multi", "gfx1100", "pkg");
    let seed = 7;
    let out = env
        .kiln(&["parity", "--device", "cpu", "--package", "pkg", "--seed", &seed.to_string()])
        .ok()
        .stdout;
    let argmax = kiln_specs::cases::cases("argmax_rows", seed, false).len()
        * variants_of("argmax_rows").len();
    let copy = 3 * variants_of("copy_from_mapped_multi").len();
    assert!(argmax > 0);
    let n = argmax + copy;
    assert_eq!(out.lines().last(), Some(format!("{n} passed, 0 failed").as_str()), "{out}");
    let copies = out.lines().filter(|l| l.starts_with("ok   copy_from_mapped_multi/")).count();
    assert_eq!(copies, copy, "{out}");
    assert!(!out.contains("SKIP"), "{out}");
}

#[test]
fn parity_on_cpu_runs_a_variant_whose_ir_is_another_s_once_and_counts_it_apart() {
    let env = Env::new();
    // On gfx1030 (no int8 matrix unit) every wide / mma variant of the k4 family is its
    // baseline's code under its own name.
    env.build("gemv_q8_0_rp_k4", "gfx1030", "pkg");
    let seed = 11;
    let out = env
        .kiln(&["parity", "--device", "cpu", "--package", "pkg", "--seed", &seed.to_string()])
        .ok()
        .stdout;
    let cases = kiln_specs::cases::cases("gemv_q8_0_rp_k4", seed, false).len();
    let variants = variants_of("gemv_q8_0_rp_k4").len();
    assert!(cases > 0 && variants > 1);
    let same = out.lines().filter(|l| l.starts_with("same gemv_q8_0_rp_k4/")).count();
    assert_eq!(same, cases * (variants - 1), "{out}");
    let not_rerun = format!("not re-run: {same} (variant, case) pair(s)");
    assert!(out.contains(&not_rerun), "{out}");
    // Only the baseline's runs count as passed.
    assert_eq!(out.lines().last(), Some(format!("{cases} passed, 0 failed").as_str()), "{out}");
}

#[test]
fn parity_on_a_missing_device_fails_cleanly() {
    let env = Env::new();
    env.build("argmax_rows", ARCHS, "pkg");
    let cuda =
        env.kiln(&["parity", "--device", "cuda", "--package", "pkg", "--kernel", "argmax_rows"]);
    if cuda.status.success() {
        // A machine with a GPU: then parity must hold there too.
        assert!(cuda.stdout.trim_end().ends_with(" passed, 0 failed"), "{}", cuda.show());
        println!("a CUDA device is present: parity ran on it");
    } else {
        let err = cuda.fails();
        assert!(err.contains("cuda"), "{err}");
    }
    let err = env.kiln(&["parity", "--device", "tpu", "--package", "pkg"]).fails();
    assert!(err.contains("tpu") && err.contains("cpu, cuda or hip"), "{err}");
}

// --- inspect ------------------------------------------------------------------------------------

#[test]
fn inspect_shows_resources_ir_llvm_and_isa() {
    let env = Env::new();
    env.build("argmax_rows", ARCHS, "pkg");

    // The resource table: one block per variant, the archs as columns.
    let out = env.kiln(&["inspect", "pkg"]).ok().stdout;
    for v in variants_of("argmax_rows") {
        let at = out.find(&format!("argmax_rows / {v}\n")).unwrap_or_else(|| panic!("{v}: {out}"));
        let mut block = out[at..].lines().skip(1);
        let cols: Vec<&str> = block.next().expect("arch row").split_whitespace().collect();
        assert_eq!(BTreeSet::from_iter(cols.iter().copied()), BTreeSet::from(["sm_90", "gfx1100"]));
        for row in ["wave", "VGPR", "SGPR", "LDS bytes", "scratch", "spills", "occupancy"] {
            let line = block
                .clone()
                .find(|l| l.starts_with(row))
                .unwrap_or_else(|| panic!("{row}: {out}"));
            assert!(line.split_whitespace().count() >= 3, "{line}");
        }
        let wave = block.find(|l| l.starts_with("wave")).expect("wave row");
        assert_eq!(wave.split_whitespace().collect::<Vec<_>>(), ["wave", "32", "32"]);
    }

    let ir = env
        .kiln(&["inspect", "pkg", "--ir", "--variant", "baseline", "--arch", "gfx1100"])
        .ok()
        .stdout;
    assert!(ir.contains("kernel argmax_rows wave=32"), "{ir}");
    assert!(ir.contains("logits: buffer<f32> read"), "{ir}");

    let asm = env
        .kiln(&["inspect", "pkg", "--asm", "--arch", "gfx1100", "--variant", "baseline"])
        .ok()
        .stdout;
    assert!(asm.contains("s_endpgm"), "{asm}");
    assert!(!asm.contains("/ sm_90"), "--arch gfx1100 printed another arch");

    let ptx = env
        .kiln(&["inspect", "pkg", "--asm", "--arch", "sm_90", "--variant", "baseline"])
        .ok()
        .stdout;
    assert!(ptx.contains(".entry") && ptx.contains(".target sm_90"), "{ptx}");

    let ll = env
        .kiln(&["inspect", "pkg", "--llvm", "--arch", "gfx1100", "--variant", "baseline"])
        .ok()
        .stdout;
    assert!(ll.contains("target triple = \"amdgcn-amd-amdhsa\""), "{ll}");
    assert!(ll.contains("define amdgpu_kernel void"), "{ll}");

    let err = env.kiln(&["inspect", "pkg", "--arch", "gfx9999"]).fails();
    assert!(err.contains("gfx9999"), "{err}");
}

#[test]
fn a_closed_stdout_ends_kiln_quietly() {
    let env = Env::new();
    env.build("argmax_rows", "gfx1100", "pkg");
    // `kiln inspect --ir | head -1`: the reader goes away before kiln writes.
    let mut child = env
        .command()
        .args(["inspect", "pkg", "--ir"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kiln starts");
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(o.status.code(), Some(101), "{stderr}");
}

// --- issue 10: what a user hands the command line ------------------------------------------------

fn bf16_bits(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| half::bf16::from_f32(*x).to_bits().to_le_bytes()).collect()
}

#[test]
fn parity_and_bench_refuse_an_unknown_kernel_naming_the_known_ones() {
    let env = Env::new();
    env.build("argmax_rows", "gfx1100", "pkg");
    let err =
        env.kiln(&["parity", "--device", "cpu", "--package", "pkg", "--kernel", "argmux_rows"]);
    let err = err.fails();
    assert!(err.contains("argmux_rows") && err.contains("argmax_rows"), "{err}");
    let err = env
        .kiln(&[
            "bench",
            "--device",
            "cpu",
            "--package",
            "pkg",
            "--kernel",
            "argmux",
            "--json",
            "b",
        ])
        .fails();
    assert!(err.contains("argmux") && err.contains("argmax_t8"), "{err}");
    assert!(err.contains("rmsnorm_f32"), "{err}");
    assert!(!env.path("b").exists());
    // A kernel of the library that the package lacks is refused too, not an empty table.
    let err = env
        .kiln(&["bench", "--device", "cpu", "--package", "pkg", "--kernel", "rmsnorm_f32"])
        .fails();
    assert!(err.contains("rmsnorm_f32") && err.contains("not in the package"), "{err}");
}

#[test]
fn run_refuses_a_name_given_twice_and_a_scalar_out_of_range() {
    let env = Env::new();
    env.build("argmax_rows,rmsnorm_f32", "gfx1100", "pkg");
    let (rows, n) = (2, 1000);
    write_f32(&env.path("in.npy"), &[rows, n], &logits(rows, n));
    write_f32(&env.path("w.npy"), &[n], &vec![1.0; n]);
    let argmax = ["run", "argmax_rows", "--package", "pkg", "--out", "o", "--arg", "logits=in.npy"];
    let run = |base: &[&str], extra: &[&str]| env.kiln(&[base, extra].concat());

    let err = run(&argmax, &["--shape", "rows=2", "--shape", "n=1000", "--shape", "n=999"]).fails();
    assert!(err.contains("--shape n is given twice"), "{err}");
    let err = run(&argmax, &["--arg", "logits=w.npy", "--shape", "rows=2", "--shape", "n=1000"]);
    assert!(err.fails().contains("--arg logits is given twice"));
    let err = run(&argmax, &["--shape", "rows=2", "--shape", "n=4294967296"]).fails();
    assert!(err.contains("out of range for u32"), "{err}");

    let rms = ["run", "rmsnorm_f32", "--package", "pkg", "--out", "o", "--arg", "x=in.npy"];
    let shapes = ["--arg", "weight=w.npy", "--shape", "rows=2", "--shape", "n=1000"];
    let err = run(&rms, &[&shapes[..], &["--shape", "eps=1e39"]].concat()).fails();
    assert!(err.contains("--shape eps") && err.contains("out of range for f32"), "{err}");
    assert!(!env.path("o").exists(), "a refused run wrote its output directory");
    run(&rms, &[&shapes[..], &["--shape", "eps=1e-6"]].concat()).ok();
}

#[test]
fn run_takes_bf16_inputs_as_uint16_bits() {
    let env = Env::new();
    env.build("rmsnorm_bf16", "gfx1100", "pkg");
    let (rows, n) = (3, 256);
    let x: Vec<f32> = logits(rows, n).iter().map(|v| v.clamp(-8.0, 8.0)).collect();
    let x: Vec<f32> = x.iter().map(|v| half::bf16::from_f32(*v).to_f32()).collect();
    let w: Vec<f32> = (0..n).map(|i| 0.5 + i as f32 / n as f32).collect();
    std::fs::write(env.path("x.npy"), npy("<u2", &[rows, n], &bf16_bits(&x))).expect("write");
    write_f32(&env.path("w.npy"), &[n], &w);
    write_f32(&env.path("xf32.npy"), &[rows, n], &x);
    let base = ["run", "rmsnorm_bf16", "--package", "pkg", "--arg", "weight=w.npy"];
    let shapes = ["--shape", "rows=3", "--shape", "n=256", "--shape", "eps=1e-6"];

    let err = env.kiln(&[&base[..], &shapes, &["--arg", "x=xf32.npy", "--out", "o"]].concat());
    let err = err.fails();
    assert!(err.contains("bf16") && err.contains("uint16"), "{err}");

    env.kiln(&[&base[..], &shapes, &["--arg", "x=x.npy", "--out", "o"]].concat()).ok();
    let bytes = std::fs::read(env.path("o/out.npy")).expect("out.npy");
    let f = npyz::NpyFile::new(&bytes[..]).expect("a .npy file");
    let npyz::DType::Plain(t) = f.dtype() else { panic!("dtype") };
    assert_eq!(t.to_string(), "<u2");
    let out: Vec<f32> = f
        .into_vec::<u16>()
        .expect("u16")
        .into_iter()
        .map(|b| half::bf16::from_bits(b).to_f32())
        .collect();
    for (r, row) in x.chunks(n).enumerate() {
        let ms = row.iter().map(|v| v * v).sum::<f32>() / n as f32;
        let scale = 1.0 / (ms + 1e-6).sqrt();
        for i in 0..n {
            let want = row[i] * scale * w[i];
            let got = out[r * n + i];
            assert!((got - want).abs() <= want.abs() / 64.0 + 1e-6, "[{r},{i}] {got} vs {want}");
        }
    }
}

#[test]
fn bench_refuses_a_package_whose_scalar_is_renamed() {
    use kiln_ir::package::{Abi, Manifest};
    let env = Env::new();
    env.build("rmsnorm_f32", "gfx1100", "pkg");
    let dir = env.path("pkg");
    let mpath = dir.join(MANIFEST_FILE);
    let mut m: Manifest =
        ron::from_str(&std::fs::read_to_string(&mpath).expect("manifest")).expect("parses");
    for o in &mut m.objects {
        let ir_path = dir.join(&o.ir_file);
        let mut k = kiln_ir::Kernel::from_ron(&std::fs::read_to_string(&ir_path).expect("ir"))
            .expect("IR parses");
        for p in k.params.values_mut() {
            if p.name == "eps" {
                p.name = "epsilon".into();
            }
        }
        std::fs::write(&ir_path, k.to_ron()).expect("write IR");
        o.abi = Abi::of(&k);
        o.ir_hash = k.content_hash();
    }
    let text = ron::ser::to_string_pretty(&m, ron::ser::PrettyConfig::default()).expect("RON");
    std::fs::write(&mpath, text).expect("write manifest");
    Package::open(&dir).expect("the edited package is consistent");

    let err =
        env.kiln(&["bench", "--device", "cpu", "--package", "pkg", "--bandwidth", "100"]).fails();
    assert!(err.contains("rmsnorm_t8_d4096") && err.contains("`epsilon`"), "{err}");
}

#[test]
fn inspect_asm_shows_the_shipped_objects() {
    let env = Env::new();
    env.build("swiglu", ARCHS, "pkg");
    let m = Package::open(env.path("pkg")).expect("opens").manifest().clone();
    let asm = env.kiln(&["inspect", "pkg", "--asm", "--arch", "gfx1100"]).ok().stdout;
    let hsaco = m.objects.iter().find(|o| o.arch == "gfx1100").expect("gfx1100 object");
    assert!(asm.contains(&format!("; {} disassembled by", hsaco.file)), "{asm}");
    assert!(asm.contains("file format elf64-amdgpu") && asm.contains("s_endpgm"), "{asm}");

    let ptx = m.objects.iter().find(|o| o.arch == "sm_90").expect("sm_90 object");
    let shipped = std::fs::read_to_string(env.path("pkg").join(&ptx.file)).expect("PTX");
    let out = env.kiln(&["inspect", "pkg", "--asm", "--arch", "sm_90"]).ok().stdout;
    assert!(out.contains(&format!("; PTX as shipped in {}", ptx.file)), "{out}");
    assert!(out.contains(&shipped), "the shipped PTX, byte for byte");
}

#[test]
fn build_refuses_an_empty_matrix_clearly() {
    let env = Env::new();
    std::fs::write(env.path("empty.ron"), "\n").expect("write");
    let err = env.kiln(&["build", "--matrix", "empty.ron", "-o", "p"]).fails();
    assert!(err.contains("empty.ron: the build matrix is empty"), "{err}");
    std::fs::write(env.path("none.ron"), "(archs: [], kernels: [], budgets: [])").expect("write");
    let err = env.kiln(&["build", "--matrix", "none.ron", "-o", "p"]).fails();
    assert!(err.contains("no arch to build"), "{err}");
    assert!(!env.path("p").exists());
}

/// An op check asked for only on archs that lack its op builds nothing: a clear refusal naming
/// the archs it is built for, and no package (it used to fail on a manifest that was never
/// written).
#[test]
fn an_op_check_on_an_arch_without_its_op_is_refused_clearly() {
    let env = Env::new();
    let checks = concat!(env!("CARGO_MANIFEST_DIR"), "/../specs/checks.ron");
    let args = ["build", "--matrix", checks, "--arch", "gfx906", "--kernel", "packed_dot_i8u8"];
    let err = env.kiln(&[&args[..], &["-o", "p"]].concat()).fails();
    assert!(err.contains("nothing to build for gfx906") && err.contains("gfx1100"), "{err}");
    assert!(!env.path("p").exists());
    // Where the op exists, the same command builds it.
    let args = ["build", "--matrix", checks, "--arch", "gfx1100", "--kernel", "packed_dot_i8u8"];
    env.kiln(&[&args[..], &["-o", "p"]].concat()).ok();
    assert!(env.path("p/manifest.ron").exists());
}

#[test]
fn bench_floor_comes_from_a_copy_measured_in_the_run_or_the_flag() {
    let env = Env::new();
    env.build("quantize_q8_0_f32", "gfx1100", "pkg");
    let base = ["bench", "--device", "cpu", "--package", "pkg", "--replays", "1"];
    let run = |extra: &[&str]| env.kiln(&[&base[..], extra].concat());
    let read = |p: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(env.path(p)).expect("json")).expect("JSON")
    };

    let out = run(&["--json", "measured.json"]).ok().stdout;
    assert!(out.contains("(measured: a 4 MiB device-to-device copy"), "{out}");
    let j = read("measured.json");
    let gbps = j["bandwidth"]["gbps"].as_f64().expect("gbps");
    assert_eq!(j["bandwidth"]["source"], "measured");
    assert_eq!(j["bandwidth"]["copy_bytes"], 4 << 20);
    assert!(gbps > 0.0 && gbps.is_finite(), "{j}");
    let case = &j["cases"]["quantize_q8_0_t1_k4096"];
    let bytes = case["bytes"].as_f64().expect("bytes");
    let floor = case["floor_us"].as_f64().expect("floor");
    assert!((floor - bytes / (gbps * 1e3)).abs() <= floor * 1e-9, "{j}");

    run(&["--bandwidth", "250", "--json", "given.json"]).ok();
    let j = read("given.json");
    assert_eq!(j["bandwidth"]["source"], "--bandwidth");
    assert_eq!(j["bandwidth_gbps"], 250.0);
    let case = &j["cases"]["quantize_q8_0_t1_k4096"];
    let want = case["bytes"].as_f64().expect("bytes") / 250e3;
    assert!((case["floor_us"].as_f64().expect("floor") - want).abs() < 1e-9, "{j}");

    let err = run(&["--bandwidth", "0"]).fails();
    assert!(err.contains("--bandwidth 0"), "{err}");
}

#[test]
fn run_refuses_a_buffer_given_as_a_scalar_and_the_reverse() {
    let env = Env::new();
    env.build("argmax_rows", "gfx1100", "pkg");
    write_f32(&env.path("in.npy"), &[4], &[1.0, 2.0, 3.0, 0.0]);
    let base = ["run", "argmax_rows", "--package", "pkg", "--out", "o", "--shape", "rows=1"];
    let err = env.kiln(&[&base[..], &["--arg", "n=in.npy", "--shape", "logits=3"]].concat());
    let err = err.fails();
    assert!(err.contains("it takes --shape n=") || err.contains("it takes --arg logits="), "{err}");
}

#[test]
fn parity_fails_a_kernel_that_no_family_of_the_library_has() {
    let env = Env::new();
    env.build("swiglu", "gfx1100", "pkg");
    let mpath = env.path("pkg").join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&mpath).expect("manifest");
    assert!(text.contains("kernel: \"swiglu\""), "{text}");
    std::fs::write(&mpath, text.replace("kernel: \"swiglu\"", "kernel: \"swiglu_v0\""))
        .expect("write");
    Package::open(env.path("pkg")).expect("the renamed package opens");
    let out = env.kiln(&["parity", "--device", "cpu", "--package", "pkg", "--seed", "1"]);
    assert_eq!(out.status.code(), Some(1), "{}", out.show());
    assert!(out.stdout.contains("FAIL swiglu_v0/") && out.stdout.contains("no parity cases"));
    assert!(out.stdout.trim_end().ends_with("0 passed, 1 failed"), "{}", out.show());
}

/// `--device hip` says, before anything else, that the hip device is untested on AMD hardware
/// (here it then fails: no HIP device or no `hip` feature).
#[test]
fn the_hip_device_says_it_is_untested_on_hardware() {
    let env = Env::new();
    env.build("argmax_rows", "gfx1100", "pkg");
    let err = env.kiln(&["parity", "--device", "hip", "--package", "pkg"]).fails();
    assert!(err.contains("untested on AMD hardware"), "{err}");
}
