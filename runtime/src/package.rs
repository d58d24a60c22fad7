//! Opening an AOT package (DESIGN.md section 5) and every reason to refuse one.
//!
//! Opening trusts nothing in the directory: [`kiln_ir::package::check`] (the same checks a build
//! runs before it swaps a package in) checks the manifest's format and toolchain, every code
//! object's bytes against its `content_hash` and against the arch it is listed for, every IR file
//! against its `ir_hash` and the verifier, and every ABI, before a single byte goes to a device.
//! Because the IR is verified here, every device launches verified IR. The device-side checks (arch, wave size, LDS, registers) happen when a [`crate::Runtime`] loads
//! the objects of its arch, and report through the same [`LoadError`].

use crate::RuntimeError;
use kiln_ir::package::check::{self, InvalidPackage, ObjectId};
use kiln_ir::package::{Abi, KernelRoutes, Manifest, ObjectEntry, MANIFEST_FILE};
use kiln_ir::Kernel;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a package, or one of its code objects, was refused.
///
/// Each variant names the kernel, variant and arch it is about, and says what was expected and
/// what was found.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The package fails the structural checks that the builder also runs
    /// ([`kiln_ir::package::check`]).
    #[error(transparent)]
    Invalid(#[from] InvalidPackage),
    /// An architecture that is not in the target table.
    #[error("unknown arch `{arch}`: {source}")]
    UnknownArch {
        /// The name.
        arch: String,
        /// The target table's message.
        source: kiln_ir::target::UnknownTarget,
    },
    /// The package holds no code object for the device's arch.
    #[error(
        "the package has no code object for {arch} (the device's arch); it has {}; objects \
         load only on the exact arch they were built for, and nothing is compiled at run time",
        if available.is_empty() { "none".to_string() } else { available.join(", ") }
    )]
    NoObjectsForArch {
        /// The device's arch.
        arch: String,
        /// What the package has (`kernel/variant for arch`).
        available: Vec<String>,
    },
    /// An object built for another arch.
    #[error(
        "{kernel}/{variant}: built for {found}, the device is {expected}; an object loads only \
         on the exact arch it was built for"
    )]
    WrongArch {
        /// Kernel.
        kernel: String,
        /// Variant.
        variant: String,
        /// The device's arch.
        expected: String,
        /// The object's arch.
        found: String,
    },
    /// An object whose wave size the device does not run.
    #[error(
        "{object}: wave size {found}, the device runs waves of {}",
        expected.iter().map(|w| w.to_string()).collect::<Vec<_>>().join(" or ")
    )]
    WrongWave {
        /// The object.
        object: ObjectId,
        /// The wave sizes the device runs.
        expected: Vec<u32>,
        /// The object's wave size.
        found: u32,
    },
    /// An object needing more of a resource than the device has.
    #[error("{object}: needs {found} {resource}, the device allows at most {limit}")]
    Resource {
        /// The object.
        object: ObjectId,
        /// What (`LDS bytes`, `VGPRs per lane`, ...).
        resource: &'static str,
        /// The device's limit.
        limit: u64,
        /// What the object needs.
        found: u64,
    },
    /// An object in a format the device cannot load.
    #[error("{object}: a {found} object cannot load on a {device} device")]
    WrongFormat {
        /// The object.
        object: ObjectId,
        /// The device kind.
        device: String,
        /// The object's format.
        found: String,
    },
    /// The IR fails the verifier (cpu device).
    #[error("{object}: the IR fails verification: {message}")]
    Verify {
        /// The object.
        object: ObjectId,
        /// The verifier's errors.
        message: String,
    },
    /// The driver refused the object.
    #[error("{object}: the driver refused the object: {source}")]
    Driver {
        /// The object.
        object: ObjectId,
        /// The driver's error (with the JIT log, when there is one).
        source: Box<crate::DeviceError>,
    },
}

/// One code object of a package, checked, with its bytes and its kernel IR.
#[derive(Clone, Debug)]
pub struct PackageObject {
    /// The manifest entry.
    pub entry: ObjectEntry,
    bytes: Arc<[u8]>,
    ir: Arc<Kernel>,
}

impl PackageObject {
    /// The code object's bytes (checked against `content_hash`).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The kernel IR (checked against `ir_hash`); the cpu device runs it.
    pub fn ir(&self) -> &Arc<Kernel> {
        &self.ir
    }

    pub(crate) fn who(&self) -> ObjectId {
        check::who(&self.entry)
    }
}

/// An opened, checked package.
#[derive(Clone, Debug)]
pub struct Package {
    dir: Option<PathBuf>,
    manifest: Manifest,
    objects: Vec<PackageObject>,
}

impl Package {
    /// Opens the package in `dir` and checks it (format, hashes, ABI, arch of every object,
    /// verified IR: [`kiln_ir::package::check`]); see [`LoadError`].
    ///
    /// The manifest and every file are read through one handle on the directory, so they all
    /// come from the same package even when a build swaps a new one in meanwhile. A build deletes
    /// the package it replaced, so a read can still fail halfway; when it does and the path now
    /// names another directory, the open starts over on the new package (a few times at most).
    pub fn open(dir: impl AsRef<Path>) -> Result<Package, RuntimeError> {
        const ATTEMPTS: usize = 8;
        let dir = dir.as_ref();
        let mut attempt = 1;
        loop {
            let handle = DirHandle::open(dir)?;
            match Package::open_at(&handle, dir) {
                Ok(mut p) => {
                    p.dir = Some(dir.to_path_buf());
                    return Ok(p);
                }
                Err(_) if attempt < ATTEMPTS && handle.replaced(dir) => attempt += 1,
                Err(e) => return Err(e.into()),
            }
        }
    }

    fn open_at(handle: &DirHandle, dir: &Path) -> Result<Package, LoadError> {
        let mpath = dir.join(MANIFEST_FILE);
        let bytes = handle
            .read(MANIFEST_FILE)
            .map_err(|source| LoadError::Io { path: mpath.clone(), source })?;
        let text = String::from_utf8(bytes).map_err(|e| LoadError::Io {
            path: mpath.clone(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        })?;
        let manifest = check::parse_manifest(&text, &mpath)?;
        Package::check(manifest, &mpath, |rel| handle.read(rel))
    }

    /// Builds a package from a manifest and its files held in memory (keyed by the manifest's
    /// relative paths), with the same checks as [`Package::open`].
    pub fn from_memory(
        manifest: Manifest,
        files: &BTreeMap<String, Vec<u8>>,
    ) -> Result<Package, RuntimeError> {
        Ok(Package::check(manifest, Path::new("<memory>/manifest.ron"), |rel| {
            files.get(rel).cloned().ok_or_else(|| std::io::ErrorKind::NotFound.into())
        })?)
    }

    fn check(
        manifest: Manifest,
        mpath: &Path,
        read: impl Fn(&str) -> std::io::Result<Vec<u8>> + Sync,
    ) -> Result<Package, LoadError> {
        let objects = check::check_package(&manifest, mpath, read)?
            .into_iter()
            .map(|o| PackageObject { entry: o.entry, bytes: o.bytes.into(), ir: o.ir })
            .collect();
        Ok(Package { dir: None, manifest, objects })
    }

    /// The directory it was opened from (`None` when built in memory).
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Every code object, in manifest order.
    pub fn objects(&self) -> &[PackageObject] {
        &self.objects
    }

    /// The archs the package has objects for, in order of first appearance.
    pub fn archs(&self) -> Vec<&str> {
        let mut out: Vec<&str> = vec![];
        for o in &self.objects {
            if !out.contains(&o.entry.arch.as_str()) {
                out.push(&o.entry.arch);
            }
        }
        out
    }

    /// The kernel names, sorted.
    pub fn kernels(&self) -> Vec<&str> {
        let set: BTreeSet<&str> = self.objects.iter().map(|o| o.entry.kernel.as_str()).collect();
        set.into_iter().collect()
    }

    /// The object of `kernel`/`variant` for `arch`.
    pub fn find(&self, kernel: &str, variant: &str, arch: &str) -> Option<&PackageObject> {
        self.objects.iter().find(|o| {
            o.entry.kernel == kernel && o.entry.variant == variant && o.entry.arch == arch
        })
    }

    /// The routing rules of `kernel`: the manifest's, or, when it has none, a baseline alone
    /// (`baseline` if such a variant exists, else the kernel's first variant).
    pub fn routes(&self, kernel: &str) -> Option<KernelRoutes> {
        if let Some(r) = self.manifest.routes.iter().find(|r| r.kernel == kernel) {
            return Some(r.clone());
        }
        let mut variants = self.objects.iter().filter(|o| o.entry.kernel == kernel);
        let first = variants.next()?;
        let baseline = if self
            .objects
            .iter()
            .any(|o| o.entry.kernel == kernel && o.entry.variant == "baseline")
        {
            "baseline".to_string()
        } else {
            first.entry.variant.clone()
        };
        Some(KernelRoutes {
            kernel: kernel.to_string(),
            baseline,
            variants: vec![],
            tuning: vec![],
        })
    }
}

/// An open directory: files are opened relative to it (`openat`), so they come from the
/// directory that was opened even after its path is renamed to another.
struct DirHandle(std::fs::File);

impl DirHandle {
    fn open(dir: &Path) -> Result<DirHandle, LoadError> {
        std::fs::File::open(dir)
            .map(DirHandle)
            .map_err(|source| LoadError::Io { path: dir.to_path_buf(), source })
    }

    /// Reads `rel` (checked to stay inside the package before it gets here).
    fn read(&self, rel: &str) -> std::io::Result<Vec<u8>> {
        use std::io::Read;
        use std::os::fd::{AsRawFd, FromRawFd};
        let name = std::ffi::CString::new(rel)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        // SAFETY: the directory descriptor is open for the life of `self`, `name` is a valid
        // NUL-terminated path, and the returned descriptor is owned by the File below.
        let fd = unsafe {
            libc::openat(self.0.as_raw_fd(), name.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC)
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor that nothing else owns.
        let mut f = unsafe { std::fs::File::from_raw_fd(fd) };
        let mut out = vec![];
        f.read_to_end(&mut out)?;
        Ok(out)
    }

    /// True when `dir` no longer names the directory this handle holds (a build swapped it).
    fn replaced(&self, dir: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        let Ok(held) = self.0.metadata() else { return true };
        match std::fs::metadata(dir) {
            Ok(now) => (now.dev(), now.ino()) != (held.dev(), held.ino()),
            Err(_) => true,
        }
    }
}

/// A stand-in HSACO for packages that only the cpu device runs (it runs the IR, never the
/// object): an AMDGPU ELF header for `arch` and the symbol with its `.kd` descriptor, so that the
/// package passes the same checks as a built one. No GPU can load it.
pub fn cpu_only_hsaco(arch: &str, symbol: &str) -> Vec<u8> {
    let mach = check::amdgpu_elf_mach(arch).unwrap_or(0);
    let mut b = vec![0u8; 64];
    b[..4].copy_from_slice(b"\x7fELF");
    b[4] = 2; // ELFCLASS64
    b[5] = 1; // little-endian
    b[6] = 1; // EV_CURRENT
    b[18..20].copy_from_slice(&224u16.to_le_bytes()); // EM_AMDGPU
    b[48..52].copy_from_slice(&mach.to_le_bytes());
    b.extend_from_slice(format!("\0{symbol}\0{symbol}.kd\0cpu-only stand-in\0").as_bytes());
    b
}

/// `x: f32 buffer (read), n: u32, ...`
pub(crate) fn describe_params(abi: &Abi) -> String {
    check::describe_params(abi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{CpuOptions, Device};
    use crate::testing::{self, PackageDir};
    use crate::Runtime;
    use kiln_ir::package::{ObjectFormat, MANIFEST_FILE};

    fn open(p: &PackageDir) -> (tempfile::TempDir, Result<Package, RuntimeError>) {
        let dir = p.write();
        let r = Package::open(dir.path());
        (dir, r)
    }

    fn load_err(p: &PackageDir, dev: &Device) -> LoadError {
        let (_dir, pkg) = open(p);
        match Runtime::load_with(dev, &pkg.unwrap(), crate::Overrides::none()) {
            Err(RuntimeError::Load(e)) => e,
            other => panic!("expected a load error, got {other:?}"),
        }
    }

    fn one(arch: &str) -> PackageDir {
        let mut p = PackageDir::new();
        p.add_fake(&testing::scale().ir, "baseline", arch);
        p
    }

    #[test]
    fn opens_a_good_package() {
        let (_dir, pkg) = open(&one("gfx1100"));
        let pkg = pkg.unwrap();
        assert_eq!(pkg.archs(), ["gfx1100"]);
        assert_eq!(pkg.kernels(), ["scale"]);
        assert!(pkg.find("scale", "baseline", "gfx1100").is_some());
        assert_eq!(pkg.routes("scale").unwrap().baseline, "baseline");
    }

    #[test]
    fn refuses_a_flipped_byte_in_an_object() {
        let p = one("gfx1100");
        let dir = p.write();
        let file = dir.path().join(&p.objects[0].file);
        let mut bytes = std::fs::read(&file).unwrap();
        let i = rand::random::<usize>() % bytes.len();
        bytes[i] ^= 1 << (rand::random::<u32>() % 8);
        std::fs::write(&file, bytes).unwrap();
        let e = Package::open(dir.path()).unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(e, RuntimeError::Load(LoadError::Invalid(InvalidPackage::ContentHash { .. }))),
            "{text}"
        );
        assert!(text.contains("scale/baseline for gfx1100"), "{text}");
        assert!(text.contains(&format!("expected {}", p.objects[0].content_hash)), "{text}");
    }

    /// The manifest's `grid_dependency` must be what the object does: PTX that claims to wait
    /// for its predecessor without `griddepcontrol.wait` (a stale cached object under a new
    /// manifest) is refused, as is the claim on an AMD object; a true claim opens.
    #[test]
    fn refuses_a_grid_dependency_the_object_does_not_have() {
        let ptx = |wait: &str| {
            format!(
                ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry scale(\n)\n{{\n\t{wait}\n\tret;\n}}\n"
            )
        };
        let k = &testing::scale().ir;
        let mut waits = PackageDir::new();
        waits.add(
            k,
            "baseline",
            "sm_90",
            ptx("griddepcontrol.wait;").as_bytes(),
            ObjectFormat::Ptx,
        );
        assert!(waits.objects[0].grid_dependency, "the entry says what the PTX does");
        let (_d, r) = open(&waits);
        r.unwrap();

        let mut stale = PackageDir::new();
        stale.add(k, "baseline", "sm_90", ptx("").as_bytes(), ObjectFormat::Ptx);
        assert!(!stale.objects[0].grid_dependency);
        let (_d, r) = open(&stale);
        r.unwrap();
        stale.objects[0].grid_dependency = true;
        let (_d, r) = open(&stale);
        let text = r.unwrap_err().to_string();
        assert!(text.contains("scale/baseline for sm_90"), "{text}");
        assert!(
            text.contains("griddepcontrol.wait") && text.contains("no such instruction"),
            "{text}"
        );

        let mut amd = one("gfx1100");
        amd.objects[0].grid_dependency = true;
        let (_d, r) = open(&amd);
        let text = r.unwrap_err().to_string();
        assert!(text.contains("AMD objects have none"), "{text}");
    }

    #[test]
    fn refuses_an_abi_hash_that_is_not_the_params_hash() {
        let mut p = one("gfx1100");
        p.objects[0].abi.hash = "0".repeat(64);
        let (_d, r) = open(&p);
        let text = r.unwrap_err().to_string();
        assert!(text.contains("scale/baseline for gfx1100: ABI mismatch"), "{text}");
        assert!(text.contains(&format!("found hash {}", "0".repeat(64))), "{text}");
    }

    #[test]
    fn refuses_an_abi_that_is_not_the_irs() {
        // A consistent hash over different parameters: the ABI no longer matches the IR.
        let mut p = one("gfx1100");
        let abi = &mut p.objects[0].abi;
        abi.params[2].kind = kiln_ir::ParamKind::Scalar(kiln_ir::ScalarType::I32);
        abi.hash = Abi::hash_params(&abi.params);
        let (_d, r) = open(&p);
        let text = r.unwrap_err().to_string();
        assert!(text.contains("ABI mismatch: expected the IR's parameters"), "{text}");
        assert!(text.contains("n: u32") && text.contains("n: i32"), "{text}");
    }

    #[test]
    fn refuses_a_modified_ir_file_and_an_unknown_format() {
        let p = one("gfx1100");
        let dir = p.write();
        let mut k = testing::scale().ir;
        k.workgroup_size = [64, 1, 1];
        std::fs::write(dir.path().join(&p.objects[0].ir_file), k.to_ron()).unwrap();
        let text = Package::open(dir.path()).unwrap_err().to_string();
        assert!(text.contains("does not match the manifest: ir_hash expected"), "{text}");

        let m = dir.path().join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&m).unwrap().replacen("format: 1", "format: 2", 1);
        std::fs::write(&m, text).unwrap();
        let text = Package::open(dir.path()).unwrap_err().to_string();
        assert!(text.contains("manifest format 2, this runtime reads format 1 only"), "{text}");
    }

    #[test]
    fn refuses_paths_outside_and_duplicates() {
        let mut p = one("gfx1100");
        p.objects[0].file = "../escape.hsaco".into();
        let text = open(&p).1.unwrap_err().to_string();
        assert!(text.contains("leaves the package directory"), "{text}");

        let mut p = one("gfx1100");
        p.objects.push(p.objects[0].clone());
        let text = open(&p).1.unwrap_err().to_string();
        assert!(text.contains("listed twice"), "{text}");
    }

    /// An HSACO built for one arch listed under another is refused at open, naming both.
    #[test]
    fn refuses_an_hsaco_built_for_another_arch() {
        let k = testing::scale().ir;
        let mut p = PackageDir::new();
        p.add(&k, "baseline", "gfx1030", &cpu_only_hsaco("gfx1100", "scale"), ObjectFormat::Hsaco);
        let e = open(&p).1.unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, RuntimeError::Load(LoadError::Invalid(InvalidPackage::Object { .. }))));
        assert!(text.contains("scale/baseline for gfx1030"), "{text}");
        assert!(text.contains("expected a code object built for gfx1030"), "{text}");
        assert!(text.contains("one built for gfx1100 (e_flags machine 0x41)"), "{text}");

        // Not an ELF at all.
        let mut p = PackageDir::new();
        p.add(&k, "baseline", "gfx1100", b"fake code object", ObjectFormat::Hsaco);
        let text = open(&p).1.unwrap_err().to_string();
        assert!(text.contains("found not an ELF file"), "{text}");

        // The right arch, another symbol.
        let mut p = PackageDir::new();
        p.add(&k, "baseline", "gfx1100", &cpu_only_hsaco("gfx1100", "other"), ObjectFormat::Hsaco);
        let text = open(&p).1.unwrap_err().to_string();
        assert!(text.contains("the symbol `scale` and its `scale.kd` descriptor"), "{text}");
    }

    /// A PTX whose `.target` is not its arch, or that lacks its entry, is refused at open.
    #[test]
    fn refuses_a_ptx_for_another_arch_or_symbol() {
        let k = testing::scale();
        let ok = k.ptx.replace("{target}", "sm_90");
        let mut p = PackageDir::new();
        p.add(&k.ir, "baseline", "sm_90", ok.as_bytes(), ObjectFormat::Ptx);
        assert!(open(&p).1.is_ok());

        let mut p = PackageDir::new();
        p.add(&k.ir, "baseline", "sm_80", ok.as_bytes(), ObjectFormat::Ptx);
        let text = open(&p).1.unwrap_err().to_string();
        assert!(text.contains("expected PTX for sm_80, found PTX for sm_90"), "{text}");

        let mut p = PackageDir::new();
        p.add(&k.ir, "baseline", "sm_90", ok.as_bytes(), ObjectFormat::Ptx);
        p.objects[0].symbol = "scale2".into();
        let text = open(&p).1.unwrap_err().to_string();
        assert!(text.contains("expected `.entry scale2`"), "{text}");
    }

    /// `target_id`, the vendor's format, recorded resources and the toolchain are checked.
    #[test]
    fn refuses_wrong_labels() {
        let mut p = one("gfx1100");
        p.objects[0].target_id = "amdgcn-amd-amdhsa--gfx1030".into();
        let text = open(&p).1.unwrap_err().to_string();
        assert!(
            text.contains(
                "target id: expected amdgcn-amd-amdhsa--gfx1100, found amdgcn-amd-amdhsa--gfx1030"
            ),
            "{text}"
        );

        let mut p = one("gfx1100");
        p.objects[0].format = ObjectFormat::Ptx;
        let text = open(&p).1.unwrap_err().to_string();
        assert!(
            text.contains("object format of the arch's vendor: expected Hsaco, found Ptx"),
            "{text}"
        );

        let p = one("gfx1100");
        let dir = p.write();
        let m = dir.path().join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&m).unwrap().replacen("kiln: \"test\"", "kiln: \"\"", 1);
        std::fs::write(&m, text).unwrap();
        let text = Package::open(dir.path()).unwrap_err().to_string();
        assert!(text.contains("toolchain: expected a kiln version"), "{text}");
    }

    /// A package whose IR marks a scalar as a workspace fails at open, on every device, instead of
    /// reaching the launch (where it used to panic on cuda and hip, which skipped the verifier).
    #[test]
    fn refuses_ir_that_fails_the_verifier_at_open() {
        let mut k = testing::scale().ir;
        let n = k.params.keys().find(|&p| k.params[p].name == "n").unwrap();
        k.params[n].workspace = true;
        let mut p = PackageDir::new();
        p.add(&k, "baseline", "gfx1100", &cpu_only_hsaco("gfx1100", "scale"), ObjectFormat::Hsaco);
        let e = open(&p).1.unwrap_err();
        let text = e.to_string();
        assert!(matches!(
            e,
            RuntimeError::Load(LoadError::Invalid(InvalidPackage::IrVerify { .. }))
        ));
        assert!(text.contains("scale/baseline for gfx1100: IR file"), "{text}");
        assert!(text.contains("workspace: expected a buffer, found a scalar u32"), "{text}");
    }

    /// A build swaps a new package in (rename exchange) and deletes the old one while readers open
    /// it: every open succeeds and sees one whole package, never a mix or a vanished file.
    #[test]
    #[cfg(target_os = "linux")]
    fn opening_while_a_build_swaps_never_fails() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("pkg");
        let a = one("gfx1100");
        let mut b = PackageDir::new();
        b.add_fake(&testing::scale().ir, "baseline", "gfx1201");
        let write_to = |p: &PackageDir, dst: &Path| {
            let d = p.write();
            copy_dir(d.path(), dst);
        };
        write_to(&a, &out);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let swapper = {
            let (out, stop, root) = (out.clone(), stop.clone(), root.path().to_path_buf());
            let pkgs = [a, b];
            std::thread::spawn(move || {
                let mut i = 0usize;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    i += 1;
                    let staging = root.join(format!(".pkg.new-{i}"));
                    write_to(&pkgs[i % 2], &staging);
                    exchange(&staging, &out);
                    std::fs::remove_dir_all(&staging).unwrap();
                    // Builds take seconds; a swap every few milliseconds is already far more.
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                i
            })
        };
        let t0 = std::time::Instant::now();
        let mut opens = 0;
        while t0.elapsed() < std::time::Duration::from_millis(1500) {
            let p = Package::open(&out).unwrap_or_else(|e| panic!("open {opens}: {e}"));
            assert_eq!(p.objects().len(), 1);
            opens += 1;
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let swaps = swapper.join().unwrap();
        assert!(opens > 10 && swaps > 10, "{opens} opens, {swaps} swaps");
    }

    #[cfg(target_os = "linux")]
    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            if e.path().is_dir() {
                copy_dir(&e.path(), &to.join(e.file_name()));
            } else {
                std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
            }
        }
    }

    #[cfg(target_os = "linux")]
    fn exchange(a: &Path, b: &Path) {
        use std::os::unix::ffi::OsStrExt;
        let a = std::ffi::CString::new(a.as_os_str().as_bytes()).unwrap();
        let b = std::ffi::CString::new(b.as_os_str().as_bytes()).unwrap();
        // SAFETY: valid NUL-terminated paths.
        let rc = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                a.as_ptr(),
                libc::AT_FDCWD,
                b.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
    }

    #[test]
    fn refuses_an_object_of_another_arch() {
        // A gfx1100 object on a gfx1201 device.
        let dev = Device::cpu(CpuOptions::arch("gfx1201"));
        let e = load_err(&one("gfx1100"), &dev);
        let text = e.to_string();
        assert!(matches!(e, LoadError::NoObjectsForArch { .. }), "{text}");
        assert!(text.contains("no code object for gfx1201"), "{text}");
        assert!(text.contains("scale/baseline for gfx1100"), "{text}");

        let (_d, pkg) = open(&one("gfx1100"));
        let pkg = pkg.unwrap();
        let Err(e) = dev.load_object(&pkg.objects()[0], "gfx1201") else { panic!("loaded") };
        assert!(matches!(e, LoadError::WrongArch { .. }));
        assert_eq!(
            e.to_string(),
            "scale/baseline: built for gfx1100, the device is gfx1201; an object loads only on \
             the exact arch it was built for"
        );
    }

    #[test]
    fn refuses_a_wave_size_the_device_does_not_run() {
        // gfx906 runs wave 64 only; the object is wave 32.
        let dev = Device::cpu(CpuOptions::arch("gfx906"));
        let e = load_err(&one("gfx906"), &dev);
        assert!(matches!(e, LoadError::WrongWave { found: 32, .. }), "{e}");
        assert_eq!(
            e.to_string(),
            "scale/baseline for gfx906: wave size 32, the device runs waves of 64"
        );
    }

    /// On gfx90a / gfx942 a code object's VGPR count holds its AGPRs too (one 512-register
    /// file): 256 VGPRs and 96 AGPRs (352, `gemv_q8_0_rp_k4/wide_t2_g4` for gfx942) load, 513
    /// do not; where there are no AGPRs the limit stays 256.
    #[test]
    fn cdna_vgpr_counts_include_the_agprs() {
        let mut b = kiln_ir::KernelBuilder::new("wide", 64);
        b.grid(std::array::from_fn(|_| kiln_ir::ShapeExpr::constant(1)));
        let k = b.finish();
        for (arch, vgprs, agprs, ok) in [
            ("gfx942", 352, 96, true),
            ("gfx90a", 512, 256, true),
            ("gfx942", 513, 256, false),
            ("gfx906", 256, 0, true),
            ("gfx906", 257, 0, false),
        ] {
            let mut p = PackageDir::new();
            p.add_fake(&k, "baseline", arch);
            p.objects[0].resources.vgprs = Some(vgprs);
            p.objects[0].resources.agprs = Some(agprs);
            let dev = Device::cpu(CpuOptions::arch(arch));
            let (_dir, pkg) = open(&p);
            let r = Runtime::load_with(&dev, &pkg.unwrap(), crate::Overrides::none());
            match r {
                Ok(_) => assert!(ok, "{arch}: {vgprs} VGPRs loaded"),
                Err(e) => {
                    let text = e.to_string();
                    assert!(!ok, "{arch}: {vgprs} VGPRs refused: {text}");
                    let limit = if arch == "gfx906" { 256 } else { 512 };
                    assert!(text.contains(&format!("at most {limit}")), "{text}");
                }
            }
        }
    }

    #[test]
    fn refuses_inconsistent_wave_sizes() {
        let mut p = one("gfx1100");
        p.objects[0].resources.wave_size = 64;
        let text = open(&p).1.unwrap_err().to_string();
        assert!(
            text.contains("wave size recorded in the code object: expected 32, found 64"),
            "{text}"
        );
    }

    #[test]
    fn unknown_cpu_arch_is_refused() {
        let dev = Device::cpu(CpuOptions::arch("gfx9999"));
        let text = load_err(&one("gfx1100"), &dev).to_string();
        assert!(text.contains("unknown arch `gfx9999`"), "{text}");
    }

    /// LDS and registers beyond the device, on every device (cuda checks the driver's limits).
    fn refuses_resources_beyond_the_device(dev: &Device) {
        let k = testing::scale();
        let probe = testing::package_for(dev, std::slice::from_ref(&k));
        let Some((_d, pkg)) = probe else { return };
        let rt = Runtime::load_with(dev, &pkg, crate::Overrides::none()).unwrap();
        let limits = dev.limits(rt.arch()).unwrap();
        for (what, edit) in [
            (
                "LDS bytes per workgroup",
                Box::new(|r: &mut kiln_ir::package::Resources, l: &crate::DeviceLimits| {
                    r.lds_bytes = l.lds_per_workgroup as u32 + 16
                }) as Box<dyn Fn(&mut _, &_)>,
            ),
            (
                "VGPRs per lane",
                Box::new(|r: &mut kiln_ir::package::Resources, l: &crate::DeviceLimits| {
                    r.vgprs = Some(l.max_vgprs + 1)
                }),
            ),
        ] {
            let mut m = pkg.manifest().clone();
            edit(&mut m.objects[0].resources, &limits);
            let files: BTreeMap<String, Vec<u8>> = pkg
                .objects()
                .iter()
                .flat_map(|o| {
                    [
                        (o.entry.file.clone(), o.bytes().to_vec()),
                        (o.entry.ir_file.clone(), o.ir().to_ron().into_bytes()),
                    ]
                })
                .collect();
            let bad = Package::from_memory(m, &files).unwrap();
            let e = Runtime::load_with(dev, &bad, crate::Overrides::none()).unwrap_err();
            let text = e.to_string();
            assert!(matches!(e, RuntimeError::Load(LoadError::Resource { .. })), "{text}");
            assert!(text.contains(&format!("scale/baseline for {}", rt.arch())), "{text}");
            assert!(text.contains(what) && text.contains("the device allows at most"), "{text}");
        }
    }

    /// A PTX the JIT refuses fails the load with ptxas's own message. Only the cuda device
    /// compiles at load (the driver's PTX JIT), so this runs on cuda only: there is no cpu or hip
    /// instance that would return early and count as a pass.
    fn jit_failure_shows_the_ptxas_log(dev: &Device) {
        assert_eq!(dev.kind(), crate::DeviceKind::Cuda, "a cuda-only test body");
        let (_d, pkg) = testing::package_for(dev, &[testing::scale_with_ptx_error()]).unwrap();
        let e = Runtime::load_with(dev, &pkg, crate::Overrides::none()).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, RuntimeError::Load(LoadError::Driver { .. })), "{text}");
        assert!(text.contains("scale/baseline for sm_"), "{text}");
        assert!(text.contains("cuModuleLoadDataEx failed"), "{text}");
        assert!(text.contains("ptxas says:") && text.contains("f_undeclared"), "{text}");
    }

    testing::testgen!(refuses_resources_beyond_the_device);

    #[test]
    #[ignore = "needs a CUDA device: cargo test -p kiln-runtime -- --ignored cuda"]
    fn cuda_jit_failure_shows_the_ptxas_log() {
        testing::on_device(crate::DeviceKind::Cuda, jit_failure_shows_the_ptxas_log)
    }
}
