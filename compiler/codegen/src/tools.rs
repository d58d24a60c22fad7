//! The two external programs: `ld.lld` (turns AMDGPU objects into HSACOs; LLVM's linker is not
//! part of the LLVM libraries) and `ptxas` (optional: measures NVIDIA registers and assembles PTX in
//! the tests). Both are looked up once per process, and so are their versions, which are part of
//! the toolchain a package records and of every build cache key.
//!
//! `ld.lld`: `$KILN_LD_LLD`, then `ld.lld-19` / `ld.lld` on `PATH`, then `/usr/lib/llvm-19/bin`.
//! `ptxas`: `$KILN_PTXAS`, then `ptxas` on `PATH`, then `/usr/local/cuda/bin`, then the one that
//! `python3 -m pip install nvidia-cuda-nvcc` puts under `site-packages/nvidia/*/bin` (the CUDA 13
//! wheels use `nvidia/cu13/bin`, older ones `nvidia/cuda_nvcc/bin`).
//! `nvdisasm` (only the tests: SASS of an assembled PTX) is found the same way
//! (`$KILN_NVDISASM`; pip's `nvidia-cuda-nvdisasm`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

fn from_env(var: &str) -> Option<PathBuf> {
    std::env::var_os(var).map(PathBuf::from).filter(|p| is_executable(p))
}

/// The `ld.lld` that links HSACOs, if one is installed.
pub fn find_ld_lld() -> Option<&'static Path> {
    static LLD: OnceLock<Option<PathBuf>> = OnceLock::new();
    LLD.get_or_init(|| {
        from_env("KILN_LD_LLD")
            .or_else(|| on_path("ld.lld-19"))
            .or_else(|| on_path("ld.lld"))
            .or_else(|| {
                Some(PathBuf::from("/usr/lib/llvm-19/bin/ld.lld")).filter(|p| is_executable(p))
            })
    })
    .as_deref()
}

/// The `ptxas` used to measure NVIDIA resources, if one is found.
pub fn find_ptxas() -> Option<&'static Path> {
    static PTXAS: OnceLock<Option<PathBuf>> = OnceLock::new();
    PTXAS.get_or_init(|| find_cuda_tool("KILN_PTXAS", "ptxas")).as_deref()
}

/// A CUDA tool: `$env`, then `tool` on `PATH`, then `/usr/local/cuda/bin`, then pip's
/// `site-packages/nvidia/*/bin`.
fn find_cuda_tool(env: &str, tool: &str) -> Option<PathBuf> {
    from_env(env)
        .or_else(|| on_path(tool))
        .or_else(|| Some(Path::new("/usr/local/cuda/bin").join(tool)).filter(|p| is_executable(p)))
        .or_else(|| pip_tool(tool))
}

/// The first line of `tool --version`, or a note that it did not say.
fn version_of(tool: &Path) -> String {
    match Command::new(tool).arg("--version").output() {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            // ptxas prints a banner; its last line is the release ("Cuda compilation tools,
            // release 12.8, V12.8.93"), ld.lld's first line is its version.
            let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
            let pick = if lines.iter().any(|l| l.contains("release")) {
                lines.iter().rev().find(|l| l.contains("release"))
            } else {
                lines.first()
            };
            pick.map(|l| l.to_string())
                .unwrap_or_else(|| format!("{} (no version)", tool.display()))
        }
        _ => format!("{} (--version failed)", tool.display()),
    }
}

/// The version of the `ld.lld` in use (`None` when there is none).
pub fn ld_lld_version() -> Option<&'static str> {
    static V: OnceLock<Option<String>> = OnceLock::new();
    V.get_or_init(|| find_ld_lld().map(version_of)).as_deref()
}

/// The version of the `ptxas` in use (`None` when there is none: NVIDIA resources are then not
/// measured).
pub fn ptxas_version() -> Option<&'static str> {
    static V: OnceLock<Option<String>> = OnceLock::new();
    V.get_or_init(|| find_ptxas().map(version_of)).as_deref()
}

/// True when a process with this id exists (a process of another user counts as alive).
pub(crate) fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Removes `kiln-PID-N*` scratch files in the temp directory whose process is gone (a build killed
/// before its [`TempFile`]s were dropped); another live process's files are left alone.
pub(crate) fn remove_stale_temp_files() {
    remove_stale_temp_files_in(&std::env::temp_dir());
}

pub(crate) fn remove_stale_temp_files_in(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(rest) = name.strip_prefix("kiln-") else { continue };
        let mut parts = rest.splitn(3, '-');
        let (Some(pid), Some(n)) = (parts.next(), parts.next()) else { continue };
        let n_ok = n
            .split('.')
            .next()
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        let Ok(pid) = pid.parse::<u32>() else { continue };
        let stale = n_ok && parts.next().is_none() && pid != std::process::id() && !pid_alive(pid);
        if stale && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The `nvdisasm` that prints the SASS of a cubin, if one is found (tests only).
pub fn find_nvdisasm() -> Option<&'static Path> {
    static NVDISASM: OnceLock<Option<PathBuf>> = OnceLock::new();
    NVDISASM.get_or_init(|| find_cuda_tool("KILN_NVDISASM", "nvdisasm")).as_deref()
}

/// `tool` under pip's `site-packages/nvidia/*/bin`: asks python where the `nvidia` namespace
/// package lives and looks for `*/bin/<tool>` below it.
fn pip_tool(tool: &str) -> Option<PathBuf> {
    let out = Command::new("python3")
        .args(["-c", "import nvidia; print('\\n'.join(nvidia.__path__))"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    for root in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let mut dirs: Vec<PathBuf> =
            std::fs::read_dir(root).ok()?.filter_map(|e| e.ok().map(|e| e.path())).collect();
        dirs.sort();
        if let Some(p) = dirs.iter().map(|d| d.join("bin").join(tool)).find(|p| is_executable(p)) {
            return Some(p);
        }
    }
    None
}

/// A scratch file that removes itself.
pub(crate) struct TempFile(pub PathBuf);

impl TempFile {
    /// A fresh path in the system temp directory with the given suffix.
    pub fn new(suffix: &str) -> TempFile {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let name = format!("kiln-{}-{n}{suffix}", std::process::id());
        TempFile(std::env::temp_dir().join(name))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
