//! The structural checks of a package: everything that can be known about a package without a
//! device. `Package::open` (kiln-runtime) runs them before a single byte reaches a driver, and
//! `build_package` (kiln-codegen) runs them on the package it has staged before swapping it in, so
//! a build never replaces a good package with one that no loader accepts.
//!
//! Trust nothing in the directory. Checked, in order, for each object:
//! - paths stay inside the package; no (kernel, variant, arch) is listed twice;
//! - the arch is in the target table, `target_id` is the one the builder writes for it, and the
//!   format is the one of its vendor (HSACO for AMD, PTX for NVIDIA);
//! - the code object's bytes hash to `content_hash`, and the object is for the arch it is listed
//!   for: an HSACO is an AMDGPU ELF whose `e_flags` machine is the arch's, a PTX's `.target` is the
//!   arch; the symbol is defined in it (`.entry` in PTX, the symbol and its `.kd` descriptor in an
//!   HSACO);
//! - the IR file parses, hashes to `ir_hash` and passes the verifier (without a target: the
//!   device checks wave size and limits against what it runs), so every device launches verified
//!   IR;
//! - the ABI hashes to its hash and is the IR's; wave size, workgroup size and grid agree with the
//!   IR, and so does the wave size recorded with the resources (the resources themselves are
//!   checked against the device's limits when a device loads the object);
//! - the toolchain names a kiln and an LLVM version; every route names variants that exist, and
//!   a route's admission bounds only scalars its variant's ABI has (else no call is admitted).

// The errors carry the names and hashes they report; a package is opened once, not in a loop.
#![allow(clippy::result_large_err)]

use super::{Abi, KernelRoutes, Manifest, ObjectEntry, ObjectFormat, MANIFEST_FORMAT};
use crate::target::{UnknownTarget, Vendor};
use crate::{Kernel, Target};
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};

/// Why a package is not one that any loader accepts. Each variant names the file or the
/// kernel/variant/arch it is about, what was expected and what was found.
#[derive(Debug, thiserror::Error)]
pub enum InvalidPackage {
    /// The manifest is not valid RON for the manifest types.
    #[error("{path}: not a kiln manifest: {message}")]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// The manifest's format version is not the one this reader reads.
    #[error("{path}: manifest format {found}, this runtime reads format {expected} only")]
    UnknownFormat {
        /// The manifest file.
        path: PathBuf,
        /// The version this reader reads.
        expected: u32,
        /// The version in the manifest.
        found: u32,
    },
    /// The toolchain record is incomplete.
    #[error("{path}: toolchain: expected {what}, found an empty string")]
    Toolchain {
        /// The manifest file.
        path: PathBuf,
        /// Which version is missing.
        what: &'static str,
    },
    /// A path in the manifest leaves the package directory.
    #[error("{at}: path `{path}` leaves the package directory")]
    PathOutside {
        /// The object entry.
        at: ObjectId,
        /// The path as written.
        path: String,
    },
    /// A file named in the manifest is missing or unreadable.
    #[error("{at}: cannot read `{file}`: {message}")]
    MissingFile {
        /// The object entry.
        at: ObjectId,
        /// The file, relative to the package.
        file: String,
        /// Why.
        message: String,
    },
    /// Two entries for the same kernel, variant and arch.
    #[error("{at}: listed twice in the manifest")]
    Duplicate {
        /// The object entry.
        at: ObjectId,
    },
    /// An object listed for an arch that is not in the target table.
    #[error("{kernel}/{variant}: {source}")]
    UnknownArch {
        /// Kernel.
        kernel: String,
        /// Variant.
        variant: String,
        /// The target table's message.
        source: UnknownTarget,
    },
    /// A code object's bytes do not hash to the manifest's `content_hash`.
    #[error(
        "{at}: code object `{file}` was modified: blake3 expected \
         {expected}, found {found}"
    )]
    ContentHash {
        /// The object entry.
        at: ObjectId,
        /// The object file.
        file: String,
        /// The manifest's hash.
        expected: String,
        /// The hash of the bytes on disk.
        found: String,
    },
    /// A code object that is not what its entry says (format, arch, symbol).
    #[error("{at}: code object `{file}`: expected {expected}, found {found}")]
    Object {
        /// The object entry.
        at: ObjectId,
        /// The object file.
        file: String,
        /// What the entry implies.
        expected: String,
        /// What the bytes hold.
        found: String,
    },
    /// An IR file does not parse.
    #[error("{at}: IR file `{file}` does not parse: {message}")]
    IrParse {
        /// The object entry.
        at: ObjectId,
        /// The IR file.
        file: String,
        /// The parser's message.
        message: String,
    },
    /// An IR file's kernel does not hash to the manifest's `ir_hash`.
    #[error(
        "{at}: IR file `{file}` does not match the manifest: ir_hash \
         expected {expected}, found {found}"
    )]
    IrHash {
        /// The object entry.
        at: ObjectId,
        /// The IR file.
        file: String,
        /// The manifest's hash.
        expected: String,
        /// The hash of the kernel in the file.
        found: String,
    },
    /// The IR fails the verifier.
    #[error("{at}: IR file `{file}` fails verification: {message}")]
    IrVerify {
        /// The object entry.
        at: ObjectId,
        /// The IR file.
        file: String,
        /// The verifier's errors.
        message: String,
    },
    /// The manifest's ABI hash is not the hash of the parameters it lists, or the parameters
    /// are not the IR kernel's.
    #[error("{at}: ABI mismatch: expected {expected}, found {found}")]
    Abi {
        /// The object entry.
        at: ObjectId,
        /// What the ABI should be (re-derived).
        expected: String,
        /// What the manifest says.
        found: String,
    },
    /// A field of the manifest entry disagrees with the IR or the target table.
    #[error("{at}: {what}: expected {expected}, found {found}")]
    Inconsistent {
        /// The object entry.
        at: ObjectId,
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
    /// A route's admission bounds a scalar its variant's ABI does not have, so no call would
    /// ever be admitted.
    #[error(
        "routes of {kernel}: variant `{variant}` is admitted by `{param}`, which is not a scalar \
         of its ABI (it has: {scalars})"
    )]
    AdmissionWithoutScalar {
        /// Kernel.
        kernel: String,
        /// Variant.
        variant: String,
        /// The admission's parameter.
        param: String,
        /// The ABI's scalars.
        scalars: String,
    },
}

/// One checked code object: its entry, its bytes and its verified kernel IR.
#[derive(Clone, Debug)]
pub struct CheckedObject {
    /// The manifest entry.
    pub entry: ObjectEntry,
    /// The code object's bytes.
    pub bytes: Vec<u8>,
    /// The kernel IR (shared by the objects built from it for other archs).
    pub ir: std::sync::Arc<Kernel>,
}

/// Parses a manifest; `path` names it in errors. A format other than [`MANIFEST_FORMAT`] is
/// refused for its version rather than for whichever field changed.
pub fn parse_manifest(text: &str, path: &Path) -> Result<Manifest, InvalidPackage> {
    #[derive(serde::Deserialize)]
    struct Head {
        format: u32,
    }
    if let Ok(h) = ron::from_str::<Head>(text) {
        check_format(h.format, path)?;
    }
    ron::from_str(text)
        .map_err(|e| InvalidPackage::Manifest { path: path.to_path_buf(), message: e.to_string() })
}

fn check_format(format: u32, path: &Path) -> Result<(), InvalidPackage> {
    if format == MANIFEST_FORMAT {
        Ok(())
    } else {
        Err(InvalidPackage::UnknownFormat {
            path: path.to_path_buf(),
            expected: MANIFEST_FORMAT,
            found: format,
        })
    }
}

/// Checks a whole package (see the module doc); `read` returns a file by its path relative to the
/// package, `mpath` names the manifest in errors. Returns the objects in manifest order.
pub fn check_package(
    manifest: &Manifest,
    mpath: &Path,
    read: impl Fn(&str) -> std::io::Result<Vec<u8>> + Sync,
) -> Result<Vec<CheckedObject>, InvalidPackage> {
    check_format(manifest.format, mpath)?;
    for (what, v) in [
        ("a kiln version", &manifest.toolchain.kiln),
        ("an LLVM version", &manifest.toolchain.llvm),
    ] {
        if v.trim().is_empty() {
            return Err(InvalidPackage::Toolchain { path: mpath.to_path_buf(), what });
        }
    }
    // An IR is built for many archs (the whole library: 1050 IR files for 4944 objects): each
    // file inside the package is read, parsed, hashed and verified once, and every object that
    // lists it is checked against that. Files and objects are checked in parallel; the error
    // reported is the first object's in manifest order, as a check one object at a time gives.
    let mut files: Vec<&str> = manifest
        .objects
        .iter()
        .filter(|e| relative(e, &e.ir_file).is_ok())
        .map(|e| e.ir_file.as_str())
        .collect();
    files.sort_unstable();
    files.dedup();
    let irs: HashMap<&str, IrFile> =
        files.par_iter().map(|&f| (f, IrFile::load(f, &read))).collect();
    let checked: Vec<Result<CheckedObject, InvalidPackage>> =
        manifest.objects.par_iter().map(|e| check_object(e, &read, &irs)).collect();
    let mut seen = BTreeSet::new();
    let mut objects = Vec::with_capacity(checked.len());
    for (e, r) in manifest.objects.iter().zip(checked) {
        if !seen.insert((&e.kernel, &e.variant, &e.arch)) {
            return Err(InvalidPackage::Duplicate { at: who(e) });
        }
        objects.push(r?);
    }
    check_routes(manifest, &manifest.routes)?;
    Ok(objects)
}

/// What an IR file of the package is, for every object that lists it.
enum IrFile {
    /// Not readable: the reader's message.
    Missing(String),
    /// Not a kernel's RON: the parser's message.
    Parse(String),
    /// A kernel, its content hash, and what the verifier says of it.
    Parsed { ir: std::sync::Arc<Kernel>, hash: String, verified: Result<(), String> },
}

impl IrFile {
    fn load(file: &str, read: &impl Fn(&str) -> std::io::Result<Vec<u8>>) -> IrFile {
        let bytes = match read(file) {
            Ok(b) => b,
            Err(err) => return IrFile::Missing(err.to_string()),
        };
        let ir = match Kernel::from_ron(&String::from_utf8_lossy(&bytes)) {
            Ok(ir) => ir,
            Err(err) => return IrFile::Parse(err.to_string()),
        };
        let hash = ir.content_hash();
        let verified = crate::verify(&ir, None).map_err(|errs| errs.to_string());
        IrFile::Parsed { ir: std::sync::Arc::new(ir), hash, verified }
    }
}

fn check_routes(m: &Manifest, routes: &[KernelRoutes]) -> Result<(), InvalidPackage> {
    for r in routes {
        let names = std::iter::once(&r.baseline).chain(r.variants.iter().map(|v| &v.variant));
        for v in names {
            if !m.objects.iter().any(|e| e.kernel == r.kernel && &e.variant == v) {
                return Err(InvalidPackage::RouteWithoutObject {
                    kernel: r.kernel.clone(),
                    variant: v.clone(),
                });
            }
        }
        // An admission bounds scalars the variant's ABI has (every object of the variant).
        for v in &r.variants {
            for e in m.objects.iter().filter(|e| e.kernel == r.kernel && e.variant == v.variant) {
                let scalars: Vec<&str> = e
                    .abi
                    .params
                    .iter()
                    .filter(|p| matches!(p.kind, crate::ParamKind::Scalar(_)))
                    .map(|p| p.name.as_str())
                    .collect();
                if let Some((param, _, _)) =
                    v.admit.shapes.iter().find(|(p, _, _)| !scalars.contains(&p.as_str()))
                {
                    return Err(InvalidPackage::AdmissionWithoutScalar {
                        kernel: r.kernel.clone(),
                        variant: v.variant.clone(),
                        param: param.clone(),
                        scalars: scalars.join(", "),
                    });
                }
            }
        }
        // A tuned bucket names a variant built for its arch.
        for (b, t) in r.tuning.iter().filter_map(|b| b.tuned.as_ref().map(|t| (b, t))) {
            let built = m
                .objects
                .iter()
                .any(|e| e.kernel == r.kernel && e.variant == t.variant && e.arch == b.arch);
            if !built || !r.variants.iter().any(|v| v.variant == t.variant) {
                return Err(InvalidPackage::RouteWithoutObject {
                    kernel: r.kernel.clone(),
                    variant: format!("{} (tuned for {} on {})", t.variant, b.bucket, b.arch),
                });
            }
        }
    }
    Ok(())
}

/// The kernel, variant and arch an object entry is about, as the errors name them
/// (`kernel/variant for arch`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectId {
    /// Kernel.
    pub kernel: String,
    /// Variant.
    pub variant: String,
    /// Arch.
    pub arch: String,
}

impl std::fmt::Display for ObjectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{} for {}", self.kernel, self.variant, self.arch)
    }
}

/// The [`ObjectId`] of an entry.
pub fn who(e: &ObjectEntry) -> ObjectId {
    ObjectId { kernel: e.kernel.clone(), variant: e.variant.clone(), arch: e.arch.clone() }
}

fn relative(e: &ObjectEntry, rel: &str) -> Result<(), InvalidPackage> {
    let p = Path::new(rel);
    let ok = !rel.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)));
    if ok {
        Ok(())
    } else {
        Err(InvalidPackage::PathOutside { at: who(e), path: rel.to_string() })
    }
}

/// The machine number (`EF_AMDGPU_MACH_*`, the low byte of `e_flags`) of an AMD arch's code
/// objects, from the target table; `None` for NVIDIA or an arch the table does not know.
pub fn amdgpu_elf_mach(arch: &str) -> Option<u32> {
    crate::Target::by_name(arch).ok().and_then(|t| t.elf_mach)
}

const EM_AMDGPU: u16 = 224;
const EF_AMDGPU_MACH: u32 = 0xff;

/// What an HSACO's ELF header says it is for: `Ok(mach)` or a description of what it is.
fn hsaco_mach(bytes: &[u8]) -> Result<u32, String> {
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" {
        return Err("not an ELF file".into());
    }
    if bytes[4] != 2 || bytes[5] != 1 {
        return Err(format!("ELF class {} data {} (not 64-bit little-endian)", bytes[4], bytes[5]));
    }
    let machine = u16::from_le_bytes([bytes[18], bytes[19]]);
    if machine != EM_AMDGPU {
        return Err(format!("an ELF for machine {machine} (not AMDGPU, {EM_AMDGPU})"));
    }
    let flags = u32::from_le_bytes([bytes[48], bytes[49], bytes[50], bytes[51]]);
    Ok(flags & EF_AMDGPU_MACH)
}

/// The arch of a PTX module: the first name of its `.target` line.
fn ptx_target(text: &str) -> Option<&str> {
    text.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix(".target"))
        .and_then(|t| t.split([',', ' ', '\t']).map(str::trim).find(|s| !s.is_empty()))
}

/// Checks that the bytes are an object of the entry's format, for its arch, defining its symbol.
fn check_object_bytes(
    e: &ObjectEntry,
    target: &Target,
    bytes: &[u8],
) -> Result<(), InvalidPackage> {
    let refuse = |expected: String, found: String| InvalidPackage::Object {
        at: who(e),
        file: e.file.clone(),
        expected,
        found,
    };
    let contains = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    match e.format {
        ObjectFormat::Hsaco => {
            let mach = hsaco_mach(bytes).map_err(|found| {
                refuse(format!("an AMDGPU ELF code object for {}", e.arch), found)
            })?;
            let want = amdgpu_elf_mach(&e.arch);
            if want != Some(mach) {
                let found = crate::TARGETS
                    .iter()
                    .find(|t| amdgpu_elf_mach(t.name) == Some(mach))
                    .map(|t| t.name.to_string())
                    .unwrap_or_else(|| "an unknown arch".into());
                return Err(refuse(
                    format!("a code object built for {}", e.arch),
                    format!("one built for {found} (e_flags machine {mach:#x})"),
                ));
            }
            let sym = format!("\0{}\0", e.symbol);
            let kd = format!("\0{}.kd\0", e.symbol);
            if !contains(sym.as_bytes()) || !contains(kd.as_bytes()) {
                return Err(refuse(
                    format!("the symbol `{}` and its `{}.kd` descriptor", e.symbol, e.symbol),
                    "no such symbol".into(),
                ));
            }
        }
        ObjectFormat::Ptx => {
            let text = std::str::from_utf8(bytes)
                .map_err(|_| refuse("PTX text".into(), "bytes that are not UTF-8".into()))?;
            match ptx_target(text) {
                Some(t) if t == target.name => {}
                Some(t) => {
                    return Err(refuse(
                        format!("PTX for {}", e.arch),
                        format!("PTX for {t} (`.target {t}`)"),
                    ))
                }
                None => return Err(refuse("a `.target` line".into(), "none".into())),
            }
            let entry = format!(".entry {}(", e.symbol);
            let entry_space = format!(".entry {} (", e.symbol);
            if !text.contains(&entry) && !text.contains(&entry_space) {
                return Err(refuse(format!("`.entry {}`", e.symbol), "no such entry".into()));
            }
            // An object launched to overlap its predecessor must wait for it: a manifest that
            // claims the wait for an object without it would make the runtime race.
            if e.grid_dependency && !text.contains("griddepcontrol.wait") {
                return Err(refuse(
                    "`griddepcontrol.wait` (the manifest says the object waits for the grids it \
                     depends on)"
                        .into(),
                    "no such instruction".into(),
                ));
            }
        }
    }
    if e.grid_dependency && e.format == ObjectFormat::Hsaco {
        return Err(refuse(
            "no grid dependency (AMD objects have none)".into(),
            "an object marked as waiting for its predecessor".into(),
        ));
    }
    Ok(())
}

fn check_object(
    e: &ObjectEntry,
    read: &impl Fn(&str) -> std::io::Result<Vec<u8>>,
    irs: &HashMap<&str, IrFile>,
) -> Result<CheckedObject, InvalidPackage> {
    let missing = |file: &str, message: String| InvalidPackage::MissingFile {
        at: who(e),
        file: file.to_string(),
        message,
    };
    let inconsistent = |what: &'static str, expected: String, found: String| {
        InvalidPackage::Inconsistent { at: who(e), what, expected, found }
    };
    relative(e, &e.file)?;
    relative(e, &e.ir_file)?;

    let target = Target::by_name(&e.arch).map_err(|source| InvalidPackage::UnknownArch {
        kernel: e.kernel.clone(),
        variant: e.variant.clone(),
        source,
    })?;
    let target_id = format!("{}--{}", target.triple(), target.name);
    if e.target_id != target_id {
        return Err(inconsistent("target id", target_id, e.target_id.clone()));
    }
    let format = match target.vendor {
        Vendor::Amd => ObjectFormat::Hsaco,
        Vendor::Nvidia => ObjectFormat::Ptx,
    };
    if e.format != format {
        return Err(inconsistent(
            "object format of the arch's vendor",
            format!("{format:?}"),
            format!("{:?}", e.format),
        ));
    }
    if e.symbol.is_empty() {
        return Err(inconsistent("symbol", "a symbol name".into(), "an empty string".into()));
    }

    let bytes = read(&e.file).map_err(|err| missing(&e.file, err.to_string()))?;
    let found = blake3::hash(&bytes).to_hex().to_string();
    if found != e.content_hash {
        return Err(InvalidPackage::ContentHash {
            at: who(e),
            file: e.file.clone(),
            expected: e.content_hash.clone(),
            found,
        });
    }
    check_object_bytes(e, target, &bytes)?;

    // Every relative IR file was loaded by `check_package`.
    let (ir, found, verified) = match &irs[e.ir_file.as_str()] {
        IrFile::Missing(message) => return Err(missing(&e.ir_file, message.clone())),
        IrFile::Parse(message) => {
            let (file, message) = (e.ir_file.clone(), message.clone());
            return Err(InvalidPackage::IrParse { at: who(e), file, message });
        }
        IrFile::Parsed { ir, hash, verified } => (ir, hash, verified),
    };
    if *found != e.ir_hash {
        return Err(InvalidPackage::IrHash {
            at: who(e),
            file: e.ir_file.clone(),
            expected: e.ir_hash.clone(),
            found: found.clone(),
        });
    }
    if let Err(message) = verified {
        return Err(InvalidPackage::IrVerify {
            at: who(e),
            file: e.ir_file.clone(),
            message: message.clone(),
        });
    }

    let rehash = Abi::hash_params(&e.abi.params);
    if rehash != e.abi.hash {
        return Err(InvalidPackage::Abi {
            at: who(e),
            expected: format!("hash {rehash} (of the listed parameters)"),
            found: format!("hash {}", e.abi.hash),
        });
    }
    let ir_abi = Abi::of(ir);
    if ir_abi != e.abi {
        return Err(InvalidPackage::Abi {
            at: who(e),
            expected: format!("the IR's parameters ({})", describe_params(&ir_abi)),
            found: format!("({})", describe_params(&e.abi)),
        });
    }

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
    Ok(CheckedObject { entry: e.clone(), bytes, ir: ir.clone() })
}

/// `x: f32 buffer (read), n: u32, ...`
pub fn describe_params(abi: &Abi) -> String {
    abi.params
        .iter()
        .map(|p| {
            let ws = if p.workspace { " workspace" } else { "" };
            match &p.kind {
                crate::ParamKind::Buffer { elem, access, .. } => {
                    format!("{}: {elem} buffer ({}){ws}", p.name, access.name())
                }
                crate::ParamKind::Scalar(t) => format!("{}: {t}", p.name),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_amd_target_has_an_elf_machine() {
        for t in crate::TARGETS {
            match t.vendor {
                Vendor::Amd => assert!(amdgpu_elf_mach(t.name).is_some(), "{}", t.name),
                Vendor::Nvidia => assert!(amdgpu_elf_mach(t.name).is_none(), "{}", t.name),
            }
        }
        let machs: Vec<u32> =
            crate::TARGETS.iter().filter_map(|t| amdgpu_elf_mach(t.name)).collect();
        let distinct: BTreeSet<u32> = machs.iter().copied().collect();
        assert_eq!(distinct.len(), machs.len(), "machine numbers are distinct");
    }

    #[test]
    fn reads_the_ptx_target() {
        assert_eq!(ptx_target("// x\n.version 7.8\n.target sm_90\n"), Some("sm_90"));
        assert_eq!(ptx_target(".target sm_80, texmode_independent\n"), Some("sm_80"));
        assert_eq!(ptx_target(".version 7.8\n"), None);
    }

    #[test]
    fn reads_the_elf_machine() {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        h[18..20].copy_from_slice(&EM_AMDGPU.to_le_bytes());
        // gfx906 with the xnack/sramecc feature bits set above the machine byte.
        h[48..52].copy_from_slice(&0x52fu32.to_le_bytes());
        assert_eq!(hsaco_mach(&h), Ok(0x2f));
        h[18] = 62;
        assert!(hsaco_mach(&h).unwrap_err().contains("not AMDGPU"));
        assert_eq!(hsaco_mach(b"fake").unwrap_err(), "not an ELF file");
    }
}
