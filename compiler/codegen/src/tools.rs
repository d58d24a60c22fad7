//! The two external programs: `ld.lld` (turns AMDGPU objects into HSACOs; LLVM's linker is not
//! part of the LLVM libraries) and `ptxas` (optional: measures NVIDIA registers and assembles PTX in
//! the tests). Both are looked up once per process.
//!
//! `ld.lld`: `$KILN_LD_LLD`, then `ld.lld-19` / `ld.lld` on `PATH`, then `/usr/lib/llvm-19/bin`.
//! `ptxas`: `$KILN_PTXAS`, then `ptxas` on `PATH`, then `/usr/local/cuda/bin`, then the one that
//! `python3 -m pip install nvidia-cuda-nvcc` puts under `site-packages/nvidia/*/bin` (the CUDA 13
//! wheels use `nvidia/cu13/bin`, older ones `nvidia/cuda_nvcc/bin`).

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
    PTXAS
        .get_or_init(|| {
            from_env("KILN_PTXAS")
                .or_else(|| on_path("ptxas"))
                .or_else(|| {
                    Some(PathBuf::from("/usr/local/cuda/bin/ptxas")).filter(|p| is_executable(p))
                })
                .or_else(pip_ptxas)
        })
        .as_deref()
}

/// Asks python where the `nvidia` namespace package lives and looks for `*/bin/ptxas` below it.
fn pip_ptxas() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args(["-c", "import nvidia; print('\\n'.join(nvidia.__path__))"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    for root in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let mut dirs: Vec<PathBuf> =
            std::fs::read_dir(root).ok()?.filter_map(|e| e.ok().map(|e| e.path())).collect();
        dirs.sort();
        if let Some(p) = dirs.iter().map(|d| d.join("bin/ptxas")).find(|p| is_executable(p)) {
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
