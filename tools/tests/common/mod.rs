//! What the command-line tests share: a test's own working directory and cache, running the
//! real `kiln` binary in it, and writing `.npy` inputs. Each test file uses a part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// A test's working directory, with its own cache in `cache/`.
pub struct Env {
    pub dir: tempfile::TempDir,
}

/// A finished `kiln` process.
pub struct Out {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    pub fn show(&self) -> String {
        format!("status {:?}\n--- stdout\n{}--- stderr\n{}", self.status, self.stdout, self.stderr)
    }

    /// Asserts success.
    pub fn ok(self) -> Out {
        assert!(self.status.success(), "kiln failed:\n{}", self.show());
        self
    }

    /// Asserts an orderly failure: exit status 1 (not a panic's 101, not a signal) and an
    /// `error:` line on stderr; returns stderr.
    pub fn fails(self) -> String {
        assert_eq!(self.status.code(), Some(1), "expected an error exit:\n{}", self.show());
        assert!(!self.stderr.contains("panicked"), "kiln panicked:\n{}", self.show());
        assert!(self.stderr.contains("error: "), "no error message:\n{}", self.show());
        self.stderr
    }
}

impl Env {
    pub fn new() -> Env {
        Env { dir: tempfile::tempdir().expect("temp dir") }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn command(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kiln"));
        c.current_dir(self.dir.path()).env("KILN_CACHE_DIR", self.path("cache"));
        // A route override in the caller's environment would change what `run` picks.
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("KILN_ROUTE_") {
                c.env_remove(k);
            }
        }
        c
    }

    pub fn kiln(&self, args: &[&str]) -> Out {
        let o = self.command().args(args).output().expect("kiln runs");
        Out {
            status: o.status,
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    pub fn build(&self, kernels: &str, archs: &str, out: &str) -> Out {
        self.kiln(&["build", "--kernel", kernels, "--arch", archs, "-o", out]).ok()
    }
}

/// A NumPy v1.0 .npy file, written the way `numpy.save` writes it.
pub fn npy(descr: &str, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let dims = match shape {
        [n] => format!("({n},)"),
        s => format!("({})", s.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {dims}, }}");
    // magic (6) + version (2) + header length (2) + header + '\n', padded to 64 bytes.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(data);
    out
}

pub fn write_f32(path: &Path, shape: &[usize], v: &[f32]) {
    let data: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(path, npy("<f4", shape, &data)).expect("write .npy");
}
