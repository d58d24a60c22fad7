//! Opening an AOT package (DESIGN.md section 5) and every reason to refuse one.
//!
//! Opening trusts nothing in the directory: the manifest's format, every code object's bytes
//! against its `content_hash`, every IR file against its `ir_hash`, and every ABI hash against
//! the parameters it claims to hash are checked before a single byte goes to a device. The
//! device-side checks (arch, wave size, LDS, registers) happen when a [`crate::Runtime`] loads
//! the objects of its arch, and report through the same [`LoadError`].

use crate::RuntimeError;
use kiln_ir::package::{Abi, KernelRoutes, Manifest, ObjectEntry, MANIFEST_FILE, MANIFEST_FORMAT};
use kiln_ir::Kernel;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
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
    /// The manifest is not valid RON for the manifest types.
    #[error("{path}: not a kiln manifest: {message}")]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// The manifest's format version is not the one this runtime reads.
    #[error("{path}: manifest format {found}, this runtime reads format {expected} only")]
    UnknownFormat {
        /// The manifest file.
        path: PathBuf,
        /// The version this runtime reads.
        expected: u32,
        /// The version in the manifest.
        found: u32,
    },
    /// A path in the manifest leaves the package directory.
    #[error("{kernel}/{variant} for {arch}: path `{path}` leaves the package directory")]
    PathOutside {
        /// Kernel.
        kernel: String,
        /// Variant.
        variant: String,
        /// Arch.
        arch: String,
        /// The path as written.
        path: String,
    },
    /// A file named in the manifest is missing or unreadable.
    #[error("{kernel}/{variant} for {arch}: cannot read `{file}`: {message}")]
    MissingFile {
        /// Kernel.
        kernel: String,
        /// Variant.
        variant: String,
        /// Arch.
        arch: String,
        /// The file, relative to the package.
        file: String,
        /// Why.
        message: String,
    },
    /// Two entries for the same kernel, variant and arch.
    #[error("{kernel}/{variant} for {arch}: listed twice in the manifest")]
    Duplicate {
        /// Kernel.
        kernel: String,
        /// Variant.
        variant: String,
        /// Arch.
        arch: String,
    },
    /// A code object's bytes do not hash to the manifest's `content_hash`.
    #[error(
        "{kernel}/{variant} for {arch}: code object `{file}` was modified: blake3 expected \
         {expected}, found {found}"
    )]
    ContentHash {
        /// Kernel.
        kernel: String,
        /// Variant.
        variant: String,
        /// Arch.
        arch: String,
        /// The object file.
        file: String,
        /// The manifest's hash.
        expected: String,
        /// The hash of the bytes on disk.
        found: String,
    },
    /// An IR file does not parse.
    #[error("{kernel}/{variant} for {arch}: IR file `{file}` does not parse: {message}")]
    IrParse {
        /// Kernel.
        kernel: String,
        /// Variant.
        variant: String,
        /// Arch.
        arch: String,
        /// The IR file.
        file: String,
        /// The parser's message.
        message: String,
    },
    /// An IR file's kernel does not hash to the manifest's `ir_hash`.
    #[error(
        "{kernel}/{variant} for {arch}: IR file `{file}` does not match the manifest: ir_hash \
         expected {expected}, found {found}"
    )]
    IrHash {
        /// Kernel.
        kernel: String,
        /// Variant.
        variant: String,
        /// Arch.
        arch: String,
        /// The IR file.
        file: String,
        /// The manifest's hash.
        expected: String,
        /// The hash of the kernel in the file.
        found: String,
    },
    /// The manifest's ABI hash is not the hash of the parameters it lists, or the parameters
    /// are not the IR kernel's.
    #[error("{kernel}/{variant} for {arch}: ABI mismatch: expected {expected}, found {found}")]
    Abi {
        /// Kernel.
        kernel: String,
        /// Variant.
        variant: String,
        /// Arch.
        arch: String,
        /// What the ABI should be (re-derived).
        expected: String,
        /// What the manifest says.
        found: String,
    },
    /// A field of the manifest entry disagrees with the IR or the target table.
    #[error("{kernel}/{variant} for {arch}: {what}: expected {expected}, found {found}")]
    Inconsistent {
        /// Kernel.
        kernel: String,
        /// Variant.
        variant: String,
        /// Arch.
        arch: String,
        /// Which field.
        what: &'static str,
        /// The expected value.
        expected: String,
        /// The value found.
        found: String,
    },
    /// A route names a variant that has no code object for any arch.
    #[error("routes of {kernel}: variant `{variant}` has no code object in the package")]
    RouteWithoutObject {
        /// Kernel.
        kernel: String,
        /// Variant.
        variant: String,
    },
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
        "{kernel}/{variant} for {arch}: wave size {found}, the device runs waves of {}",
        expected.iter().map(|w| w.to_string()).collect::<Vec<_>>().join(" or ")
    )]
    WrongWave {
        /// Kernel.
        kernel: String,
        /// Variant.
        variant: String,
        /// Arch.
        arch: String,
        /// The wave sizes the device runs.
        expected: Vec<u32>,
        /// The object's wave size.
        found: u32,
    },
    /// An object needing more of a resource than the device has.
    #[error(
        "{kernel}/{variant} for {arch}: needs {found} {resource}, the device allows at most \
         {limit}"
    )]
    Resource {
        /// Kernel.
        kernel: String,
        /// Variant.
        variant: String,
        /// Arch.
        arch: String,
        /// What (`LDS bytes`, `VGPRs per lane`, ...).
        resource: &'static str,
        /// The device's limit.
        limit: u64,
        /// What the object needs.
        found: u64,
    },
    /// An object in a format the device cannot load.
    #[error("{kernel}/{variant} for {arch}: a {found} object cannot load on a {device} device")]
    WrongFormat {
        /// Kernel.
        kernel: String,
        /// Variant.
        variant: String,
        /// Arch.
        arch: String,
        /// The device kind.
        device: String,
        /// The object's format.
        found: String,
    },
    /// The IR fails the verifier (cpu device).
    #[error("{kernel}/{variant} for {arch}: the IR fails verification: {message}")]
    Verify {
        /// Kernel.
        kernel: String,
        /// Variant.
        variant: String,
        /// Arch.
        arch: String,
        /// The verifier's errors.
        message: String,
    },
    /// The driver refused the object.
    #[error("{kernel}/{variant} for {arch}: the driver refused the object: {source}")]
    Driver {
        /// Kernel.
        kernel: String,
        /// Variant.
        variant: String,
        /// Arch.
        arch: String,
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

    pub(crate) fn who(&self) -> (String, String, String) {
        who(&self.entry)
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
    /// Opens the package in `dir` and checks it (format, hashes, ABI); see [`LoadError`].
    pub fn open(dir: impl AsRef<Path>) -> Result<Package, RuntimeError> {
        let dir = dir.as_ref();
        let mpath = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&mpath)
            .map_err(|source| LoadError::Io { path: mpath.clone(), source })?;
        let manifest = parse_manifest(&text, &mpath)?;
        let mut p = Package::check(manifest, &mpath, |rel| std::fs::read(dir.join(rel)))?;
        p.dir = Some(dir.to_path_buf());
        Ok(p)
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
        read: impl Fn(&str) -> std::io::Result<Vec<u8>>,
    ) -> Result<Package, LoadError> {
        check_format(manifest.format, mpath)?;
        let mut seen = BTreeSet::new();
        let mut objects = Vec::with_capacity(manifest.objects.len());
        for e in &manifest.objects {
            if !seen.insert((&e.kernel, &e.variant, &e.arch)) {
                let (kernel, variant, arch) = who(e);
                return Err(LoadError::Duplicate { kernel, variant, arch });
            }
            objects.push(check_object(e, &read)?);
        }
        for r in &manifest.routes {
            let names = std::iter::once(&r.baseline).chain(r.variants.iter().map(|v| &v.variant));
            for v in names {
                if !manifest.objects.iter().any(|e| e.kernel == r.kernel && &e.variant == v) {
                    return Err(LoadError::RouteWithoutObject {
                        kernel: r.kernel.clone(),
                        variant: v.clone(),
                    });
                }
            }
        }
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
        Some(KernelRoutes { kernel: kernel.to_string(), baseline, variants: vec![] })
    }
}

fn parse_manifest(text: &str, path: &Path) -> Result<Manifest, LoadError> {
    // Read the format first, so a newer manifest is refused for its version rather than for
    // whichever field changed.
    #[derive(serde::Deserialize)]
    struct Head {
        format: u32,
    }
    if let Ok(h) = ron::from_str::<Head>(text) {
        check_format(h.format, path)?;
    }
    ron::from_str(text)
        .map_err(|e| LoadError::Manifest { path: path.to_path_buf(), message: e.to_string() })
}

/// Refuses a manifest `format` other than the one this runtime reads.
fn check_format(format: u32, path: &Path) -> Result<(), LoadError> {
    if format == MANIFEST_FORMAT {
        Ok(())
    } else {
        Err(LoadError::UnknownFormat {
            path: path.to_path_buf(),
            expected: MANIFEST_FORMAT,
            found: format,
        })
    }
}

/// The kernel, variant and arch an entry is about, as the errors name them.
fn who(e: &ObjectEntry) -> (String, String, String) {
    (e.kernel.clone(), e.variant.clone(), e.arch.clone())
}

fn relative(e: &ObjectEntry, rel: &str) -> Result<(), LoadError> {
    let p = Path::new(rel);
    let ok = !rel.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)));
    if ok {
        Ok(())
    } else {
        let (kernel, variant, arch) = who(e);
        Err(LoadError::PathOutside { kernel, variant, arch, path: rel.to_string() })
    }
}

fn check_object(
    e: &ObjectEntry,
    read: &impl Fn(&str) -> std::io::Result<Vec<u8>>,
) -> Result<PackageObject, LoadError> {
    let missing = |file: &str, err: std::io::Error| {
        let (kernel, variant, arch) = who(e);
        LoadError::MissingFile {
            kernel,
            variant,
            arch,
            file: file.to_string(),
            message: err.to_string(),
        }
    };
    relative(e, &e.file)?;
    relative(e, &e.ir_file)?;

    let bytes = read(&e.file).map_err(|err| missing(&e.file, err))?;
    let found = blake3::hash(&bytes).to_hex().to_string();
    if found != e.content_hash {
        let (kernel, variant, arch) = who(e);
        return Err(LoadError::ContentHash {
            kernel,
            variant,
            arch,
            file: e.file.clone(),
            expected: e.content_hash.clone(),
            found,
        });
    }

    let ir_bytes = read(&e.ir_file).map_err(|err| missing(&e.ir_file, err))?;
    let ir_text = String::from_utf8_lossy(&ir_bytes);
    let ir = Kernel::from_ron(&ir_text).map_err(|err| {
        let (kernel, variant, arch) = who(e);
        LoadError::IrParse {
            kernel,
            variant,
            arch,
            file: e.ir_file.clone(),
            message: err.to_string(),
        }
    })?;
    let found = ir.content_hash();
    if found != e.ir_hash {
        let (kernel, variant, arch) = who(e);
        return Err(LoadError::IrHash {
            kernel,
            variant,
            arch,
            file: e.ir_file.clone(),
            expected: e.ir_hash.clone(),
            found,
        });
    }

    let rehash = Abi::hash_params(&e.abi.params);
    if rehash != e.abi.hash {
        let (kernel, variant, arch) = who(e);
        return Err(LoadError::Abi {
            kernel,
            variant,
            arch,
            expected: format!("hash {rehash} (of the listed parameters)"),
            found: format!("hash {}", e.abi.hash),
        });
    }
    let ir_abi = Abi::of(&ir);
    if ir_abi != e.abi {
        let (kernel, variant, arch) = who(e);
        return Err(LoadError::Abi {
            kernel,
            variant,
            arch,
            expected: format!("the IR's parameters ({})", describe_params(&ir_abi)),
            found: format!("({})", describe_params(&e.abi)),
        });
    }

    let inconsistent = |what: &'static str, expected: String, found: String| {
        let (kernel, variant, arch) = who(e);
        LoadError::Inconsistent { kernel, variant, arch, what, expected, found }
    };
    if e.wave_size != ir.wave_size {
        return Err(inconsistent(
            "wave size (IR vs manifest)",
            ir.wave_size.to_string(),
            e.wave_size.to_string(),
        ));
    }
    if e.resources.wave_size != e.wave_size {
        return Err(inconsistent(
            "wave size recorded in the code object",
            e.wave_size.to_string(),
            e.resources.wave_size.to_string(),
        ));
    }
    if e.workgroup_size != ir.workgroup_size {
        return Err(inconsistent(
            "workgroup size (IR vs manifest)",
            format!("{:?}", ir.workgroup_size),
            format!("{:?}", e.workgroup_size),
        ));
    }
    if e.grid != ir.grid {
        return Err(inconsistent(
            "grid rule (IR vs manifest)",
            format!("{:?}", ir.grid),
            format!("{:?}", e.grid),
        ));
    }
    if e.symbol.is_empty() {
        return Err(inconsistent("symbol", "a symbol name".into(), "an empty string".into()));
    }
    Ok(PackageObject { entry: e.clone(), bytes: bytes.into(), ir: Arc::new(ir) })
}

/// `x: f32 buffer (read), n: u32, ...`
pub(crate) fn describe_params(abi: &Abi) -> String {
    abi.params
        .iter()
        .map(|p| {
            let ws = if p.workspace { " workspace" } else { "" };
            match &p.kind {
                kiln_ir::ParamKind::Buffer { elem, access, .. } => {
                    format!("{}: {elem} buffer ({}){ws}", p.name, access.name())
                }
                kiln_ir::ParamKind::Scalar(t) => format!("{}: {t}", p.name),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{CpuOptions, Device};
    use crate::testing::{self, PackageDir};
    use crate::Runtime;

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
        assert!(matches!(e, RuntimeError::Load(LoadError::ContentHash { .. })), "{text}");
        assert!(text.contains("scale/baseline for gfx1100"), "{text}");
        assert!(text.contains(&format!("expected {}", p.objects[0].content_hash)), "{text}");
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

    /// A PTX the JIT refuses fails the load with ptxas's own message.
    fn jit_failure_shows_the_ptxas_log(dev: &Device) {
        if dev.kind() != crate::DeviceKind::Cuda {
            eprintln!("skipping: only the cuda device compiles at load (the driver's PTX JIT)");
            return;
        }
        let (_d, pkg) = testing::package_for(dev, &[testing::scale_with_ptx_error()]).unwrap();
        let e = Runtime::load_with(dev, &pkg, crate::Overrides::none()).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, RuntimeError::Load(LoadError::Driver { .. })), "{text}");
        assert!(text.contains("scale/baseline for sm_"), "{text}");
        assert!(text.contains("cuModuleLoadDataEx failed"), "{text}");
        assert!(text.contains("ptxas says:") && text.contains("f_undeclared"), "{text}");
    }

    testing::testgen!(refuses_resources_beyond_the_device, jit_failure_shows_the_ptxas_log);
}
