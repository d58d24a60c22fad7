//! AOT packages (DESIGN.md section 5): kernel x arch jobs compiled in parallel with a progress bar,
//! a content-addressed cache, and an atomic write of the package directory.
//!
//! Atomicity: the package is written to a fresh sibling directory, checked with the loader's own
//! checks ([`kiln_ir::package::check`]), and only then swapped with the old one by
//! `renameat2(RENAME_EXCHANGE)` (Linux), so a build killed at any point leaves the package
//! directory either the old one or the new one, never a mix, and never one that does not open.
//! Jobs that would put two objects under one (kernel, variant, arch) are refused before anything
//! is compiled. Cache entries are written to a temporary file and renamed, so concurrent builds
//! never see half an object. What a killed build leaves behind (staging directories, temporary
//! cache files, scratch files of the tools) is removed by the next build, once its process is gone.
//!
//! The cache is keyed by everything that changes an entry: the IR, the target, the options and
//! every tool's version (kiln's back end, LLVM, ld.lld, ptxas: without ptxas NVIDIA resources are
//! not measured, so its absence is part of the key too). An entry is sealed: its metadata records
//! the blake3 of the key, the metadata and the object together, so an edited metadata file (say,
//! fewer VGPRs) is recompiled like a corrupted object, never packaged.
//!
//! Budgets: a budget on a resource that was not measured is not silently passed: the build
//! reports it as unchecked ([`BuildReport::unchecked`]), and a strict build refuses it.

use crate::tools::{ld_lld_version, pid_alive, ptxas_version, remove_stale_temp_files};
use crate::{compile, llvm_version, occupancy, CodegenError, Options};
use indicatif::{ProgressBar, ProgressStyle};
use kiln_ir::package::check::{check_package, parse_manifest, InvalidPackage};
use kiln_ir::package::*;
use kiln_ir::{Kernel, Target};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One unit of work: a kernel variant's IR for one target.
#[derive(Clone, Debug)]
pub struct Job {
    /// Kernel family.
    pub kernel: String,
    /// Variant name.
    pub variant: String,
    /// The target.
    pub target: &'static Target,
    /// The IR (built for the target's wave size).
    pub ir: Kernel,
}

pub use kiln_ir::package::Budget;

/// Errors of a package build.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    /// A job failed to compile.
    #[error(transparent)]
    Codegen(#[from] CodegenError),
    /// A kernel missed its budget.
    #[error("{kernel}/{variant} on {arch}: {what} is {found}, budget {budget} (over by {over})")]
    OverBudget {
        /// Kernel family.
        kernel: String,
        /// Variant.
        variant: String,
        /// Arch.
        arch: String,
        /// Which resource.
        what: &'static str,
        /// Measured.
        found: u32,
        /// Allowed.
        budget: u32,
        /// found - budget.
        over: u32,
    },
    /// An NVIDIA object whose workgroup needs more registers than an SM has: it could never
    /// launch (ptxas sizes registers without the workgroup size: kiln gives it no `maxntid`).
    #[error(
        "{kernel}/{variant} on {arch}: a workgroup of {lanes} lanes at {registers} registers a \
         lane needs {needed} registers, the SM has {file}: it could not launch (cap the kernel's \
         registers, or use fewer lanes)"
    )]
    WorkgroupDoesNotFit {
        /// Kernel family.
        kernel: String,
        /// Variant.
        variant: String,
        /// Arch.
        arch: String,
        /// Lanes a workgroup.
        lanes: u32,
        /// Registers a lane (ptxas).
        registers: u32,
        /// Registers the workgroup needs (a lane's rounded to the allocation granule).
        needed: u32,
        /// The SM's register file.
        file: u32,
    },
    /// Budgets on resources that were not measured, in a strict build.
    #[error(
        "{} budget check(s) could not be made because the resource was not measured (a strict \
         build refuses this; install ptxas to measure NVIDIA resources): {}",
        unchecked.len(),
        unchecked.join("; ")
    )]
    Unchecked {
        /// One line per budget and object: what was not measured.
        unchecked: Vec<String>,
    },
    /// Two jobs for the same kernel, variant and arch (an arch or a family given twice): the
    /// package would list an object twice, which no loader accepts.
    #[error(
        "{kernel}/{variant} for {arch} is asked for twice (is {arch} listed twice in --arch or \
         the build matrix?); a package holds one object per kernel, variant and arch"
    )]
    DuplicateJob {
        /// Kernel family.
        kernel: String,
        /// Variant.
        variant: String,
        /// Arch.
        arch: String,
    },
    /// The package written fails the loader's checks; it was not swapped in.
    #[error("the new package fails the loader's checks, so it was not swapped in: {0}")]
    Invalid(Box<InvalidPackage>),
    /// The output path holds something other than a kiln package; swapping the new package in
    /// would delete it.
    #[error(
        "{path}: exists and is not a kiln package (no {}); refusing to replace it: choose \
         another output directory, or remove it first",
        MANIFEST_FILE
    )]
    NotAPackage {
        /// The output path.
        path: PathBuf,
    },
    /// File system trouble.
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> PackageError + '_ {
    move |source| PackageError::Io { path: path.to_path_buf(), source }
}

/// What a build did.
#[derive(Clone, Debug)]
pub struct BuildReport {
    /// The manifest written.
    pub manifest: Manifest,
    /// Jobs compiled (cache misses).
    pub compiled: usize,
    /// Jobs served from the cache.
    pub cached: usize,
    /// Wall time.
    pub elapsed: Duration,
    /// Compile time of each compiled job (kernel, variant, arch, time).
    pub compile_times: Vec<(String, String, String, Duration)>,
    /// Budget checks that could not be made (the resource was not measured), one line each;
    /// a strict build fails instead ([`PackageError::Unchecked`]).
    pub unchecked: Vec<String>,
    /// Cache entries found under the job's key but refused (their seal did not match) and
    /// compiled again.
    pub refused_cache_entries: usize,
}

/// What the cache keeps beside an object.
#[derive(Serialize, Deserialize)]
struct CacheMeta {
    resources: Resources,
    symbol: String,
    format: ObjectFormat,
    /// [`crate::CompiledObject::grid_dependency`]; false for entries written before it existed.
    #[serde(default)]
    grid_dependency: bool,
}

/// A cache entry's metadata file: the metadata and its seal.
#[derive(Serialize, Deserialize)]
struct CacheFile {
    meta: CacheMeta,
    /// blake3 over the key, the metadata's RON and the object's bytes: an entry whose object or
    /// metadata was changed after it was written is recompiled, never packaged.
    seal: String,
}

fn seal(key: &str, meta: &CacheMeta, object: &[u8]) -> String {
    let mut h = blake3::Hasher::new();
    h.update(key.as_bytes());
    h.update(&[0]);
    h.update(ron::ser::to_string(meta).expect("meta serializes").as_bytes());
    h.update(&[0]);
    h.update(object);
    h.finalize().to_hex().to_string()
}

/// The entry under `key`, when both files are there and its seal matches. `Err(())` when an
/// entry is there but refused.
fn read_cache_entry(
    key: &str,
    obj: &Path,
    meta: &Path,
) -> Result<Option<(Vec<u8>, CacheMeta)>, ()> {
    let (bytes, text) = match (std::fs::read(obj), std::fs::read_to_string(meta)) {
        (Ok(b), Ok(t)) => (b, t),
        (Err(_), Err(_)) => return Ok(None),
        _ => return Err(()),
    };
    let file: CacheFile = ron::from_str(&text).map_err(|_| ())?;
    if seal(key, &file.meta, &bytes) == file.seal {
        Ok(Some((bytes, file.meta)))
    } else {
        Err(())
    }
}

/// The toolchain of this build.
pub fn toolchain() -> Toolchain {
    // The version alone would let a changed back end reuse stale cached objects: the fingerprint
    // of the back end's sources (build.rs) is part of it.
    Toolchain {
        kiln: format!("{}+{}", env!("CARGO_PKG_VERSION"), env!("KILN_CODEGEN_FINGERPRINT")),
        llvm: llvm_version(),
        ld_lld: ld_lld_version().map(String::from),
        ptxas: ptxas_version().map(String::from),
    }
}

/// The cache key of a job: everything that changes its object or the resources recorded for it.
/// The whole toolchain is in it, so a new ld.lld or ptxas (or ptxas appearing, which turns
/// unmeasured NVIDIA resources into measured ones) never reuses an entry of the old one.
pub fn cache_key(job: &Job, tc: &Toolchain, opts: &Options) -> String {
    key_of(&job.ir, &job.ir.content_hash(), job.target, tc, opts)
}

/// The key of `ir` (whose content hash is `ir_hash`) for `target`.
fn key_of(ir: &Kernel, ir_hash: &str, target: &Target, tc: &Toolchain, opts: &Options) -> String {
    let text = format!(
        "{}|{}|{}|{}|{}|ld.lld {:?}|ptxas {:?}|{}",
        ir_hash,
        target.name,
        ir.wave_size,
        tc.kiln,
        tc.llvm,
        tc.ld_lld,
        tc.ptxas,
        ron::ser::to_string(opts).unwrap_or_default()
    );
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

/// An object from [`compile_cached`].
pub struct CachedCompile {
    /// The object (without LLVM IR or assembly text).
    pub object: crate::CompiledObject,
    /// Taken from the cache, not compiled.
    pub cached: bool,
    /// An entry was found under the key but its seal did not match: compiled again.
    pub refused_cache_entry: bool,
}

/// Compiles `ir` for `target`, or takes the object from `cache_dir` when an entry with a matching
/// seal is there under the job's key ([`cache_key`]); a fresh object is written to the cache
/// atomically. `kiln build` and the object gates of the tests share entries through this.
pub fn compile_cached(
    ir: &Kernel,
    target: &'static Target,
    opts: &Options,
    cache_dir: &Path,
    tc: &Toolchain,
) -> Result<CachedCompile, PackageError> {
    compile_cached_hashed(ir, &ir.content_hash(), target, opts, cache_dir, tc)
}

/// [`compile_cached`] of `ir` whose content hash the caller has (`ir_hash`).
fn compile_cached_hashed(
    ir: &Kernel,
    ir_hash: &str,
    target: &'static Target,
    opts: &Options,
    cache_dir: &Path,
    tc: &Toolchain,
) -> Result<CachedCompile, PackageError> {
    let key = key_of(ir, ir_hash, target, tc, opts);
    let obj_path = cache_dir.join(format!("{key}.obj"));
    let meta_path = cache_dir.join(format!("{key}.ron"));
    let found = read_cache_entry(&key, &obj_path, &meta_path);
    let refused_cache_entry = found.is_err();
    if let Ok(Some((bytes, m))) = found {
        let object = crate::CompiledObject {
            format: m.format,
            bytes,
            llvm_ir: None,
            asm: None,
            resources: m.resources,
            symbol: m.symbol,
            grid_dependency: m.grid_dependency,
        };
        return Ok(CachedCompile { object, cached: true, refused_cache_entry });
    }
    let o = compile(ir, target, opts)?;
    let meta = CacheMeta {
        resources: o.resources.clone(),
        symbol: o.symbol.clone(),
        format: o.format,
        grid_dependency: o.grid_dependency,
    };
    let file = CacheFile { seal: seal(&key, &meta, &o.bytes), meta };
    write_atomic(&obj_path, &o.bytes)?;
    let text = ron::ser::to_string(&file).expect("meta serializes");
    write_atomic(&meta_path, text.as_bytes())?;
    Ok(CachedCompile { object: o, cached: false, refused_cache_entry })
}

/// The default cache directory: `$KILN_CACHE_DIR`, else `target/kiln-cache` under the current directory.
pub fn default_cache_dir() -> PathBuf {
    std::env::var_os("KILN_CACHE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/kiln-cache"))
}

/// Writes `bytes` to `path` atomically (temporary file `PATH.tmpPID-N` + rename); a temporary
/// file left by a killed process is removed by the next build ([`remove_stale_cache_temps`]).
/// `N` counts the calls of this process: two threads writing the same path (two jobs of one build
/// with the same cache key) each rename their own file, never each other's.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), PackageError> {
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}-{n}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    if let Err(e) = std::fs::write(&tmp, bytes) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(&tmp)(e));
    }
    std::fs::rename(&tmp, path).map_err(io(path))
}

/// The process id in a name ending in `.tmpPID` or `.tmpPID-N`.
fn temp_pid(name: &str) -> Option<u32> {
    let (_, tail) = name.rsplit_once(".tmp")?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let pid = match tail.split_once('-') {
        Some((pid, n)) => digits(n).then_some(pid)?,
        None => tail,
    };
    digits(pid).then(|| pid.parse().ok())?
}

/// Removes `*.tmpPID` files in `dir` whose process is gone (a killed build, a full disk).
pub fn remove_stale_cache_temps(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if let Some(pid) = temp_pid(&name) {
            if pid != std::process::id() && !pid_alive(pid) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// Checks the budgets that apply to a job: over budget is an error; a budget on a resource that
/// was not measured adds a line to `unchecked`.
pub fn check_budget(
    job: &Job,
    res: &Resources,
    budgets: &[Budget],
    unchecked: &mut Vec<String>,
) -> Result<(), PackageError> {
    fits_register_file(job, res)?;
    // Spills are measured when the VGPR spills are (NVIDIA has no SGPRs: none is zero there).
    let spills = res.vgpr_spills.map(|v| v + res.sgpr_spills.unwrap_or(0));
    for b in budgets.iter().filter(|b| b.applies_to(&job.kernel, &job.variant, job.target.name)) {
        let checks = [
            ("VGPRs", res.vgprs, b.max_vgprs),
            ("scratch bytes", res.scratch_bytes, b.max_scratch),
            ("spills", spills, b.max_spills),
        ];
        for (what, found, budget) in checks {
            let Some(budget) = budget else { continue };
            let Some(found) = found else {
                unchecked.push(format!(
                    "{}/{} on {}: {what} not measured (resources: {}); budget {budget} not checked",
                    job.kernel, job.variant, job.target.name, res.source
                ));
                continue;
            };
            if found > budget {
                return Err(PackageError::OverBudget {
                    kernel: job.kernel.clone(),
                    variant: job.variant.clone(),
                    arch: job.target.name.to_string(),
                    what,
                    found,
                    budget,
                    over: found - budget,
                });
            }
        }
    }
    Ok(())
}

/// Not a budget but a limit: on NVIDIA a workgroup's lanes share one SM's register file, and
/// ptxas, given no workgroup size, may allocate more registers a lane than the workgroup can hold
/// (AMD's back end sizes registers for `amdgpu-flat-work-group-size`). Unmeasured registers (no
/// ptxas) are not checked here; the runtime still refuses such a launch.
fn fits_register_file(job: &Job, res: &Resources) -> Result<(), PackageError> {
    let (kiln_ir::target::Vendor::Nvidia, Some(registers)) = (job.target.vendor, res.vgprs) else {
        return Ok(());
    };
    let granule = job.target.vgpr_granule.max(1);
    let lanes = job.ir.workgroup_lanes();
    let needed = registers.div_ceil(granule) * granule * lanes;
    let file = job.target.vgpr_file;
    if needed > file {
        return Err(PackageError::WorkgroupDoesNotFit {
            kernel: job.kernel.clone(),
            variant: job.variant.clone(),
            arch: job.target.name.to_string(),
            lanes,
            registers,
            needed,
            file,
        });
    }
    Ok(())
}

/// `out` may be replaced only when it is absent, an empty directory or a package: the swap deletes
/// whatever was there before.
fn check_replaceable(out: &Path) -> Result<(), PackageError> {
    let meta = match std::fs::metadata(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        r => r.map_err(io(out))?,
    };
    let replaceable = meta.is_dir()
        && (out.join(MANIFEST_FILE).is_file()
            || std::fs::read_dir(out).map_err(io(out))?.next().is_none());
    if replaceable {
        Ok(())
    } else {
        Err(PackageError::NotAPackage { path: out.to_path_buf() })
    }
}

/// Refuses two jobs for one kernel, variant and arch, before anything is compiled.
fn check_distinct(jobs: &[Job]) -> Result<(), PackageError> {
    let mut seen = std::collections::BTreeSet::new();
    for j in jobs {
        if !seen.insert((&j.kernel, &j.variant, j.target.name)) {
            return Err(PackageError::DuplicateJob {
                kernel: j.kernel.clone(),
                variant: j.variant.clone(),
                arch: j.target.name.to_string(),
            });
        }
    }
    Ok(())
}

/// Builds a package into `out`: compiles (or takes from `cache_dir`) every job, checks budgets,
/// writes objects, IR files and the manifest, checks the written package with the loader's
/// checks, and swaps the directory in atomically.
///
/// `out` must be absent, an empty directory or an earlier package ([`PackageError::NotAPackage`]
/// otherwise): nothing else is ever deleted. With `strict`, a budget on a resource that was not
/// measured fails the build ([`PackageError::Unchecked`]); without, it is listed in
/// [`BuildReport::unchecked`].
pub fn build_package(
    jobs: &[Job],
    routes: Vec<KernelRoutes>,
    budgets: &[Budget],
    strict: bool,
    out: &Path,
    cache_dir: &Path,
    opts: &Options,
    progress: bool,
) -> Result<BuildReport, PackageError> {
    let start = Instant::now();
    check_replaceable(out)?;
    check_distinct(jobs)?;
    let tc = toolchain();
    std::fs::create_dir_all(cache_dir).map_err(io(cache_dir))?;
    remove_stale_cache_temps(cache_dir);
    remove_stale_temp_files();
    let bar = if progress { ProgressBar::new(jobs.len() as u64) } else { ProgressBar::hidden() };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{bar:40}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );

    struct Done {
        entry: ObjectEntry,
        bytes: Vec<u8>,
        ir_text: String,
        cached: bool,
        refused_cache_entry: bool,
        unchecked: Vec<String>,
        time: Duration,
    }

    let results: Vec<Result<Done, PackageError>> = jobs
        .par_iter()
        .map(|job| {
            let t0 = Instant::now();
            // One serialization of the IR a job: its file's text, its hash, the cache key.
            let (ir_text, ir_hash) = job.ir.compact_ron_and_hash();
            let CachedCompile { object: o, cached: was_cached, refused_cache_entry } =
                compile_cached_hashed(&job.ir, &ir_hash, job.target, opts, cache_dir, &tc)?;
            let mut unchecked = vec![];
            check_budget(job, &o.resources, budgets, &mut unchecked)?;
            let ext = match o.format {
                ObjectFormat::Hsaco => "hsaco",
                ObjectFormat::Ptx => "ptx",
            };
            let stem = format!("{}/{}.{}", job.kernel, job.variant, job.target.name);
            let entry = ObjectEntry {
                kernel: job.kernel.clone(),
                variant: job.variant.clone(),
                symbol: o.symbol,
                consts: job.ir.consts.clone(),
                arch: job.target.name.to_string(),
                target_id: format!("{}--{}", job.target.triple(), job.target.name),
                wave_size: job.ir.wave_size,
                workgroup_size: job.ir.workgroup_size,
                grid: job.ir.grid.clone(),
                abi: Abi::of(&job.ir),
                occupancy: occupancy(job.target, &job.ir, &o.resources),
                resources: o.resources,
                // IR files are content-addressed: one file per distinct kernel IR, shared by
                // every arch it was built for.
                ir_file: format!("ir/{ir_hash}.ron"),
                ir_hash,
                file: format!("{stem}.{ext}"),
                format: o.format,
                content_hash: blake3::hash(&o.bytes).to_hex().to_string(),
                grid_dependency: o.grid_dependency,
            };
            bar.inc(1);
            bar.set_message(format!("{} {} {}", job.kernel, job.variant, job.target.name));
            Ok(Done {
                entry,
                bytes: o.bytes,
                ir_text,
                cached: was_cached,
                refused_cache_entry,
                unchecked,
                time: t0.elapsed(),
            })
        })
        .collect();
    bar.finish_and_clear();

    let mut done = Vec::with_capacity(results.len());
    for r in results {
        done.push(r?);
    }
    let unchecked: Vec<String> = done.iter().flat_map(|d| d.unchecked.iter().cloned()).collect();
    if strict && !unchecked.is_empty() {
        return Err(PackageError::Unchecked { unchecked });
    }

    // Write the new package next to `out`, then swap it in.
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    let name = out.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or("dist".into());
    remove_stale_staging(parent, &name);
    let staging = parent.join(format!(".{name}.new-{}", std::process::id()));
    let manifest = Manifest {
        format: MANIFEST_FORMAT,
        toolchain: tc,
        objects: done.iter().map(|d| d.entry.clone()).collect(),
        routes,
    };
    let files = done
        .iter()
        .flat_map(|d| [(&d.entry.file, &d.bytes[..]), (&d.entry.ir_file, d.ir_text.as_bytes())]);
    // Whatever goes wrong from here on (a full disk, a package that does not open), the staging
    // directory goes and the old package stays.
    if let Err(e) = write_staging(&staging, &manifest, files) {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    if let Err(e) = swap_in(&staging, out) {
        // A lost race (another build created `out` meanwhile) leaves no staging directory.
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }

    Ok(BuildReport {
        compiled: done.iter().filter(|d| !d.cached).count(),
        cached: done.iter().filter(|d| d.cached).count(),
        compile_times: done
            .iter()
            .filter(|d| !d.cached)
            .map(|d| {
                (d.entry.kernel.clone(), d.entry.variant.clone(), d.entry.arch.clone(), d.time)
            })
            .collect(),
        unchecked,
        refused_cache_entries: done.iter().filter(|d| d.refused_cache_entry).count(),
        manifest,
        elapsed: start.elapsed(),
    })
}

/// Writes the package into `staging` and checks it, from the disk, with the loader's checks.
fn write_staging<'a>(
    staging: &Path,
    manifest: &Manifest,
    files: impl Iterator<Item = (&'a String, &'a [u8])>,
) -> Result<(), PackageError> {
    if staging.exists() {
        std::fs::remove_dir_all(staging).map_err(io(staging))?;
    }
    for (rel, bytes) in files {
        let p = staging.join(rel);
        std::fs::create_dir_all(p.parent().expect("has a parent")).map_err(io(&p))?;
        std::fs::write(&p, bytes).map_err(io(&p))?;
    }
    let text = ron::ser::to_string_pretty(manifest, ron::ser::PrettyConfig::default())
        .expect("manifest serializes");
    let mpath = staging.join(MANIFEST_FILE);
    std::fs::write(&mpath, &text).map_err(io(&mpath))?;
    let written = std::fs::read_to_string(&mpath).map_err(io(&mpath))?;
    let invalid = |e| PackageError::Invalid(Box::new(e));
    let reread = parse_manifest(&written, &mpath).map_err(invalid)?;
    check_package(&reread, &mpath, |rel| std::fs::read(staging.join(rel))).map_err(invalid)?;
    Ok(())
}

/// Removes staging directories `.NAME.new-PID` (and `.NAME.old-PID`, the old package of the
/// fallback swap) left by builds that were killed (their process is gone); a concurrent build's
/// directories (its process alive) are left alone.
fn remove_stale_staging(parent: &Path, name: &str) {
    let prefixes = [format!(".{name}.new-"), format!(".{name}.old-")];
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().to_string();
        let pid = prefixes
            .iter()
            .find_map(|p| file.strip_prefix(p.as_str()))
            .and_then(|p| p.parse::<u32>().ok());
        let Some(pid) = pid else { continue };
        if pid != std::process::id() && !pid_alive(pid) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Replaces `out` by `staging` atomically; `staging` is removed afterwards.
fn swap_in(staging: &Path, out: &Path) -> Result<(), PackageError> {
    if !out.exists() {
        return std::fs::rename(staging, out).map_err(io(out));
    }
    #[cfg(target_os = "linux")]
    {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        let a = CString::new(staging.as_os_str().as_bytes()).expect("no NUL in path");
        let b = CString::new(out.as_os_str().as_bytes()).expect("no NUL in path");
        // SAFETY: both are valid NUL-terminated paths; AT_FDCWD resolves them relative to the cwd.
        let rc = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                a.as_ptr(),
                libc::AT_FDCWD,
                b.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        if rc == 0 {
            // `staging` now holds the old package.
            return std::fs::remove_dir_all(staging).map_err(io(staging));
        }
    }
    // Fallback (no RENAME_EXCHANGE): move the old one aside, then the new one in.
    let name = out.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let old = staging.with_file_name(format!(".{name}.old-{}", std::process::id()));
    std::fs::rename(out, &old).map_err(io(out))?;
    std::fs::rename(staging, out).map_err(io(out))?;
    std::fs::remove_dir_all(&old).map_err(io(&old))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(arch: &str) -> Job {
        let target = Target::by_name(arch).expect("known arch");
        let ir = kiln_ir::examples::wave_sum(target.default_wave());
        Job { kernel: ir.name.clone(), variant: "baseline".into(), target, ir }
    }

    fn budget() -> Budget {
        Budget {
            kernel: "*".into(),
            archs: vec![],
            max_vgprs: Some(32),
            max_scratch: Some(0),
            max_spills: Some(0),
            variants: vec![],
        }
    }

    #[test]
    fn a_budget_on_an_unmeasured_resource_is_reported_not_passed() {
        // What nvptx records without ptxas.
        let res = Resources {
            wave_size: 32,
            source: "not measured (no ptxas)".into(),
            ..Resources::default()
        };
        let mut unchecked = vec![];
        check_budget(&job("sm_90"), &res, &[budget()], &mut unchecked).expect("nothing over");
        assert_eq!(unchecked.len(), 3, "{unchecked:?}");
        assert!(unchecked[0].starts_with("wave_sum/baseline on sm_90: VGPRs not measured"));
        assert!(
            unchecked[0].contains("(resources: not measured (no ptxas)); budget 32 not checked")
        );
        assert!(
            unchecked[1].contains("scratch bytes not measured") && unchecked[2].contains("spills")
        );
    }

    #[test]
    fn measured_resources_are_checked_against_every_budget_that_applies() {
        let rand = |m: u32| (blake3::hash(&m.to_le_bytes()).as_bytes()[0] as u32) % m;
        for round in 0..50u32 {
            let vgprs = 1 + rand(round + 64) % 64;
            let spills = rand(round + 1000) % 3;
            let res = Resources {
                vgprs: Some(vgprs),
                scratch_bytes: Some(0),
                vgpr_spills: Some(spills),
                sgpr_spills: None,
                wave_size: 32,
                ..Resources::default()
            };
            let mut unchecked = vec![];
            let r = check_budget(&job("sm_90"), &res, &[budget()], &mut unchecked);
            assert!(unchecked.is_empty());
            match r {
                Ok(()) => assert!(vgprs <= 32 && spills == 0, "{vgprs} {spills}"),
                Err(PackageError::OverBudget { what, found, budget, .. }) => {
                    assert!(found > budget, "{what}");
                    assert!(vgprs > 32 || spills > 0);
                }
                Err(e) => panic!("{e}"),
            }
            // A budget for another arch or kernel does not apply.
            let other = Budget { archs: vec!["gfx1100".into()], ..budget() };
            let named = Budget { kernel: "copy".into(), ..budget() };
            check_budget(&job("sm_90"), &res, &[other, named], &mut unchecked).expect("no budget");
        }
    }

    /// An NVIDIA workgroup whose lanes' registers exceed the SM's file is refused, naming the
    /// numbers; one that fits, or an AMD object, or unmeasured registers, pass.
    #[test]
    fn a_workgroup_that_cannot_hold_its_registers_is_refused() {
        let target = Target::by_name("sm_90").unwrap();
        let ir = kiln_ir::examples::wave_sum(32);
        let lanes = ir.workgroup_lanes();
        let j = Job { kernel: "k".into(), variant: "v".into(), target, ir };
        let res = |vgprs| Resources { vgprs, wave_size: 32, ..Resources::default() };
        let most = target.vgpr_file / lanes;
        let mut unchecked = vec![];
        check_budget(&j, &res(Some(most)), &[], &mut unchecked).expect("fits exactly");
        check_budget(&j, &res(None), &[], &mut unchecked).expect("not measured");
        match check_budget(&j, &res(Some(most + 1)), &[], &mut unchecked) {
            Err(e @ PackageError::WorkgroupDoesNotFit { .. }) => {
                let m = e.to_string();
                assert!(m.contains(&format!("a workgroup of {lanes} lanes")), "{m}");
                assert!(m.contains("could not launch"), "{m}");
            }
            r => panic!("{} registers a lane for {lanes} lanes: {r:?}", most + 1),
        }
        let amd = Job { target: Target::by_name("gfx1100").unwrap(), ..j };
        check_budget(&amd, &res(Some(most + 1)), &[], &mut unchecked).expect("AMD sizes its own");
    }

    #[test]
    fn a_cached_compile_reuses_sealed_entries_and_refuses_tampered_ones() {
        let dir = std::env::temp_dir().join(format!("kiln-cache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (j, tc, opts) = (job("gfx1100"), toolchain(), Options::default());
        let first = compile_cached(&j.ir, j.target, &opts, &dir, &tc).unwrap();
        assert!(!first.cached && !first.refused_cache_entry);
        let again = compile_cached(&j.ir, j.target, &opts, &dir, &tc).unwrap();
        assert!(again.cached && !again.refused_cache_entry);
        assert_eq!(again.object.bytes, first.object.bytes);
        assert_eq!(again.object.resources, first.object.resources);
        // One byte of the object changed after it was written: refused, compiled again.
        let obj = dir.join(format!("{}.obj", cache_key(&j, &tc, &opts)));
        let mut bytes = std::fs::read(&obj).unwrap();
        let at = bytes.len() / 2;
        bytes[at] ^= 0x40;
        std::fs::write(&obj, &bytes).unwrap();
        let fresh = compile_cached(&j.ir, j.target, &opts, &dir, &tc).unwrap();
        assert!(!fresh.cached && fresh.refused_cache_entry);
        assert_eq!(fresh.object.bytes, first.object.bytes);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn temporary_file_names_give_their_pid() {
        assert_eq!(temp_pid("abc.obj.tmp123"), Some(123));
        assert_eq!(temp_pid("abc.tmp7"), Some(7));
        assert_eq!(temp_pid("abc.tmp"), None);
        assert_eq!(temp_pid("abc.tmpx1"), None);
        assert_eq!(temp_pid("abc.obj"), None);
        assert_eq!(temp_pid("abc.obj.tmp123-4"), Some(123));
        assert_eq!(temp_pid("abc.tmp123-"), None);
        assert_eq!(temp_pid("abc.tmp-4"), None);
        assert_eq!(temp_pid("abc.tmp12-x"), None);
    }

    /// Two jobs of one build can share a cache key (the same kernel under two variant names):
    /// their threads write the same entry at once. Each write must land whole, none fail.
    #[test]
    fn concurrent_writes_of_one_path_all_succeed() {
        let dir = std::env::temp_dir().join(format!("kiln-write-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("entry.obj");
        let bodies: Vec<Vec<u8>> = (0..8u8).map(|t| vec![t; 4096 + t as usize]).collect();
        std::thread::scope(|s| {
            for body in &bodies {
                let path = &path;
                s.spawn(move || {
                    for _ in 0..200 {
                        write_atomic(path, body).expect("a concurrent write");
                    }
                });
            }
        });
        let found = std::fs::read(&path).unwrap();
        assert!(bodies.contains(&found), "a torn entry of {} bytes", found.len());
        let left: Vec<_> =
            std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left.len(), 1, "temporary files were left: {left:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
