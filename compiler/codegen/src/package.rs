//! AOT packages (DESIGN.md section 5): kernel x arch jobs compiled in parallel with a progress bar,
//! a content-addressed cache, and an atomic write of the package directory.
//!
//! Atomicity: the package is written to a fresh sibling directory and then swapped with the old one
//! by `renameat2(RENAME_EXCHANGE)` (Linux), so a build killed at any point leaves the package
//! directory either the old one or the new one, never a mix. Cache entries are written to a temporary
//! file and renamed, so concurrent builds never see half an object.

use crate::{compile, llvm_version, occupancy, CodegenError, Options};
use indicatif::{ProgressBar, ProgressStyle};
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

/// A resource budget (from the specs' build matrix).
#[derive(Clone, Debug, Default)]
pub struct BudgetRule {
    /// Kernel family, or `*`.
    pub kernel: String,
    /// Archs (empty: all).
    pub archs: Vec<String>,
    /// Most VGPRs per lane.
    pub max_vgprs: Option<u32>,
    /// Most scratch bytes.
    pub max_scratch: Option<u32>,
    /// Most spills (VGPR + SGPR).
    pub max_spills: Option<u32>,
}

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
}

#[derive(Serialize, Deserialize)]
struct CacheMeta {
    /// blake3 of the object bytes: a corrupted cache entry is recompiled, never packaged.
    object_hash: String,
    resources: Resources,
    symbol: String,
    format: ObjectFormat,
}

/// The toolchain of this build.
pub fn toolchain() -> Toolchain {
    // The version alone would let a changed back end reuse stale cached objects: the fingerprint
    // of the back end's sources (build.rs) is part of it.
    Toolchain {
        kiln: format!("{}+{}", env!("CARGO_PKG_VERSION"), env!("KILN_CODEGEN_FINGERPRINT")),
        llvm: llvm_version(),
    }
}

fn cache_key(job: &Job, tc: &Toolchain, opts: &Options) -> String {
    let text = format!(
        "{}|{}|{}|{}|{}|{}",
        job.ir.content_hash(),
        job.target.name,
        job.ir.wave_size,
        tc.kiln,
        tc.llvm,
        ron::ser::to_string(opts).unwrap_or_default()
    );
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

/// The default cache directory: `$KILN_CACHE_DIR`, else `target/kiln-cache` under the current directory.
pub fn default_cache_dir() -> PathBuf {
    std::env::var_os("KILN_CACHE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/kiln-cache"))
}

/// Writes `bytes` to `path` atomically (temporary file + rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), PackageError> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io(path))
}

fn check_budget(job: &Job, res: &Resources, budgets: &[BudgetRule]) -> Result<(), PackageError> {
    for b in budgets {
        if b.kernel != "*" && b.kernel != job.kernel {
            continue;
        }
        if !b.archs.is_empty() && !b.archs.iter().any(|a| a == job.target.name) {
            continue;
        }
        let spills = res.vgpr_spills.unwrap_or(0) + res.sgpr_spills.unwrap_or(0);
        let checks = [
            ("VGPRs", res.vgprs, b.max_vgprs),
            ("scratch bytes", res.scratch_bytes, b.max_scratch),
            ("spills", Some(spills), b.max_spills),
        ];
        for (what, found, budget) in checks {
            if let (Some(found), Some(budget)) = (found, budget) {
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

/// Builds a package into `out`: compiles (or takes from `cache_dir`) every job, checks budgets,
/// writes objects, IR files and the manifest, and swaps the directory in atomically.
///
/// `out` must be absent, an empty directory or an earlier package ([`PackageError::NotAPackage`]
/// otherwise): nothing else is ever deleted.
pub fn build_package(
    jobs: &[Job],
    routes: Vec<KernelRoutes>,
    budgets: &[BudgetRule],
    out: &Path,
    cache_dir: &Path,
    opts: &Options,
    progress: bool,
) -> Result<BuildReport, PackageError> {
    let start = Instant::now();
    check_replaceable(out)?;
    let tc = toolchain();
    std::fs::create_dir_all(cache_dir).map_err(io(cache_dir))?;
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
        time: Duration,
    }

    let results: Vec<Result<Done, PackageError>> = jobs
        .par_iter()
        .map(|job| {
            let t0 = Instant::now();
            let key = cache_key(job, &tc, opts);
            let obj_path = cache_dir.join(format!("{key}.obj"));
            let meta_path = cache_dir.join(format!("{key}.ron"));
            let cached = match (std::fs::read(&obj_path), std::fs::read_to_string(&meta_path)) {
                (Ok(bytes), Ok(meta)) => ron::from_str::<CacheMeta>(&meta)
                    .ok()
                    .filter(|m| m.object_hash == blake3::hash(&bytes).to_hex().as_str())
                    .map(|m| (bytes, m)),
                _ => None,
            };
            let (bytes, meta, was_cached) = match cached {
                Some((b, m)) => (b, m, true),
                None => {
                    let o = compile(&job.ir, job.target, opts)?;
                    let meta = CacheMeta {
                        object_hash: blake3::hash(&o.bytes).to_hex().to_string(),
                        resources: o.resources,
                        symbol: o.symbol,
                        format: o.format,
                    };
                    write_atomic(&obj_path, &o.bytes)?;
                    let text = ron::ser::to_string(&meta).expect("meta serializes");
                    write_atomic(&meta_path, text.as_bytes())?;
                    (o.bytes, meta, false)
                }
            };
            check_budget(job, &meta.resources, budgets)?;
            let ext = match meta.format {
                ObjectFormat::Hsaco => "hsaco",
                ObjectFormat::Ptx => "ptx",
            };
            let stem = format!("{}/{}.{}", job.kernel, job.variant, job.target.name);
            let entry = ObjectEntry {
                kernel: job.kernel.clone(),
                variant: job.variant.clone(),
                symbol: meta.symbol,
                consts: job.ir.consts.clone(),
                arch: job.target.name.to_string(),
                target_id: format!("{}--{}", job.target.triple(), job.target.name),
                wave_size: job.ir.wave_size,
                workgroup_size: job.ir.workgroup_size,
                grid: job.ir.grid.clone(),
                abi: Abi::of(&job.ir),
                occupancy: occupancy(job.target, &job.ir, &meta.resources),
                resources: meta.resources,
                ir_hash: job.ir.content_hash(),
                // IR files are content-addressed: one file per distinct kernel IR, shared by
                // every arch it was built for.
                ir_file: format!("ir/{}.ron", job.ir.content_hash()),
                file: format!("{stem}.{ext}"),
                format: meta.format,
                content_hash: blake3::hash(&bytes).to_hex().to_string(),
            };
            bar.inc(1);
            bar.set_message(format!("{} {} {}", job.kernel, job.variant, job.target.name));
            Ok(Done {
                entry,
                bytes,
                ir_text: ron::ser::to_string(&job.ir).expect("a kernel serializes"),
                cached: was_cached,
                time: t0.elapsed(),
            })
        })
        .collect();
    bar.finish_and_clear();

    let mut done = Vec::with_capacity(results.len());
    for r in results {
        done.push(r?);
    }

    // Write the new package next to `out`, then swap it in.
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    let name = out.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or("dist".into());
    remove_stale_staging(parent, &name);
    let staging = parent.join(format!(".{name}.new-{}", std::process::id()));
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(io(&staging))?;
    }
    for d in &done {
        for (rel, bytes) in
            [(&d.entry.file, &d.bytes[..]), (&d.entry.ir_file, d.ir_text.as_bytes())]
        {
            let p = staging.join(rel);
            std::fs::create_dir_all(p.parent().expect("has a parent")).map_err(io(&p))?;
            std::fs::write(&p, bytes).map_err(io(&p))?;
        }
    }
    let manifest = Manifest {
        format: MANIFEST_FORMAT,
        toolchain: tc,
        objects: done.iter().map(|d| d.entry.clone()).collect(),
        routes,
    };
    let text = ron::ser::to_string_pretty(&manifest, ron::ser::PrettyConfig::default())
        .expect("manifest serializes");
    let mpath = staging.join(MANIFEST_FILE);
    std::fs::write(&mpath, text).map_err(io(&mpath))?;
    swap_in(&staging, out)?;

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
        manifest,
        elapsed: start.elapsed(),
    })
}

/// Removes staging directories `.NAME.new-PID` left by builds that were killed (their process is
/// gone); a concurrent build's staging directory (its process alive) is left alone.
fn remove_stale_staging(parent: &Path, name: &str) {
    let prefix = format!(".{name}.new-");
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().to_string();
        let Some(pid) = file.strip_prefix(&prefix).and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
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
    let old = staging.with_extension("old");
    std::fs::rename(out, &old).map_err(io(out))?;
    std::fs::rename(staging, out).map_err(io(out))?;
    std::fs::remove_dir_all(&old).map_err(io(&old))
}
