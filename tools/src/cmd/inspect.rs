//! `kiln inspect`: a package's resources side by side, its IR, the LLVM IR (recompiled from the
//! package's IR: the package ships no LLVM IR) and the ISA of the objects it ships: the AMD code
//! objects disassembled with `llvm-objdump`, the PTX as shipped. `--asm` never recompiles, so it
//! shows what a device loads.

use crate::report::opt;
use anyhow::{anyhow, bail, Context, Result};
use kiln_ir::package::{ObjectEntry, ObjectFormat};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Arguments of `kiln inspect`.
#[derive(clap::Args)]
pub struct InspectArgs {
    /// Package directory.
    dir: PathBuf,
    #[arg(long)]
    arch: Option<String>,
    #[arg(long)]
    kernel: Option<String>,
    #[arg(long)]
    variant: Option<String>,
    /// Print the kernel IR.
    #[arg(long)]
    ir: bool,
    /// Print the LLVM IR (recompiled from the package's IR; needs the full `kiln`).
    #[arg(long)]
    llvm: bool,
    /// Print the ISA of the shipped objects: AMD code objects disassembled with llvm-objdump
    /// ($KILN_LLVM_OBJDUMP, else $LLVM_SYS_191_PREFIX/bin, else PATH), PTX as shipped.
    #[arg(long)]
    asm: bool,
    /// Resource table, all archs of a kernel side by side (the default).
    #[arg(long)]
    resources: bool,
}

/// `kiln inspect`.
pub fn inspect(a: InspectArgs) -> Result<()> {
    let InspectArgs { dir, arch, kernel, variant, ir, llvm, asm, resources: _ } = a;
    // The loader's checks first (format, hashes, ABI): inspect never shows a tampered package.
    let pkg = super::open_package(&dir)?;
    let m = pkg.manifest().clone();
    if let Some(a) = &arch {
        kiln_ir::Target::by_name(a)?;
    }
    let sel: Vec<&ObjectEntry> = m
        .objects
        .iter()
        .filter(|o| arch.as_ref().is_none_or(|a| &o.arch == a))
        .filter(|o| kernel.as_ref().is_none_or(|k| &o.kernel == k))
        .filter(|o| variant.as_ref().is_none_or(|v| &o.variant == v))
        .collect();
    if sel.is_empty() {
        bail!("no object in {} matches the selection", dir.display());
    }
    if !(ir || llvm || asm) {
        print!("{}", side_by_side(&sel));
        return Ok(());
    }
    for o in sel {
        println!("; {} / {} / {} (wave {})", o.kernel, o.variant, o.arch, o.wave_size);
        let p = dir.join(&o.ir_file);
        let text =
            std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
        let k =
            kiln_ir::Kernel::from_ron(&text).with_context(|| format!("parsing {}", p.display()))?;
        if ir {
            println!("{}", kiln_ir::print::print(&k));
        }
        if llvm {
            print_llvm(&k, &o.arch)?;
        }
        if asm {
            print!("{}", shipped_asm(&dir, o)?);
        }
    }
    Ok(())
}

#[cfg(feature = "llvm")]
fn print_llvm(k: &kiln_ir::Kernel, arch: &str) -> Result<()> {
    let t = kiln_ir::Target::by_name(arch)?;
    let opts = kiln_codegen::Options { emit_llvm: true, ..Default::default() };
    let o = kiln_codegen::compile(k, t, &opts)?;
    println!("; LLVM IR recompiled from the package's IR");
    println!("{}", o.llvm_ir.unwrap_or_default());
    Ok(())
}

#[cfg(not(feature = "llvm"))]
fn print_llvm(_: &kiln_ir::Kernel, _: &str) -> Result<()> {
    bail!("this kiln is the runtime-only build (no LLVM): --llvm needs the full `kiln`")
}

/// The ISA of a shipped object: the PTX text, or the code object disassembled.
pub fn shipped_asm(dir: &Path, o: &ObjectEntry) -> Result<String> {
    let path = dir.join(&o.file);
    match o.format {
        ObjectFormat::Ptx => {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            Ok(format!("; PTX as shipped in {}\n{text}\n", o.file))
        }
        ObjectFormat::Hsaco => {
            let objdump = llvm_objdump()?;
            let out = Command::new(&objdump)
                .arg("-d")
                .arg(format!("--mcpu={}", o.arch))
                .arg(&path)
                .output()
                .with_context(|| format!("running {}", objdump.display()))?;
            if !out.status.success() {
                bail!(
                    "{} -d {} failed: {}",
                    objdump.display(),
                    path.display(),
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
            Ok(format!(
                "; {} disassembled by {}\n{}",
                o.file,
                objdump.display(),
                String::from_utf8_lossy(&out.stdout)
            ))
        }
    }
}

/// The first llvm-objdump that runs: $KILN_LLVM_OBJDUMP, $LLVM_SYS_191_PREFIX/bin/llvm-objdump,
/// llvm-objdump-19, llvm-objdump.
fn llvm_objdump() -> Result<PathBuf> {
    let mut tried = vec![];
    if let Some(p) = std::env::var_os("KILN_LLVM_OBJDUMP") {
        tried.push(PathBuf::from(p));
    }
    if let Some(p) = std::env::var_os("LLVM_SYS_191_PREFIX") {
        tried.push(PathBuf::from(p).join("bin/llvm-objdump"));
    }
    tried.extend(["llvm-objdump-19", "llvm-objdump"].map(PathBuf::from));
    let runs =
        |p: &PathBuf| Command::new(p).arg("--version").output().is_ok_and(|o| o.status.success());
    tried.iter().find(|p| runs(p)).cloned().ok_or_else(|| {
        let names: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
        anyhow!(
            "--asm of an AMD code object needs llvm-objdump (LLVM 19); tried {} (set \
             KILN_LLVM_OBJDUMP)",
            names.join(", ")
        )
    })
}

/// Resources with all archs of each kernel variant side by side.
fn side_by_side(sel: &[&ObjectEntry]) -> String {
    let mut keys: Vec<(String, String)> =
        sel.iter().map(|o| (o.kernel.clone(), o.variant.clone())).collect();
    keys.sort();
    keys.dedup();
    let mut s = String::new();
    for (k, v) in keys {
        let objs: Vec<&&ObjectEntry> =
            sel.iter().filter(|o| o.kernel == k && o.variant == v).collect();
        s += &format!("{k} / {v}\n{:<12}", "");
        for o in &objs {
            s += &format!(" {:>14}", o.arch);
        }
        s += "\n";
        let rows: [(&str, Box<dyn Fn(&ObjectEntry) -> String>); 9] = [
            ("wave", Box::new(|o| o.wave_size.to_string())),
            ("workgroup", Box::new(|o| o.workgroup_size.iter().product::<u32>().to_string())),
            ("VGPR", Box::new(|o| opt(o.resources.vgprs))),
            ("SGPR", Box::new(|o| opt(o.resources.sgprs))),
            ("AGPR", Box::new(|o| opt(o.resources.agprs))),
            ("LDS bytes", Box::new(|o| o.resources.lds_bytes.to_string())),
            ("scratch", Box::new(|o| opt(o.resources.scratch_bytes))),
            (
                "spills",
                Box::new(|o| {
                    opt(o.resources.vgpr_spills.map(|v| v + o.resources.sgpr_spills.unwrap_or(0)))
                }),
            ),
            ("occupancy", Box::new(crate::report::occ)),
        ];
        for (name, f) in rows.iter() {
            s += &format!("{name:<12}");
            for o in &objs {
                s += &format!(" {:>14}", f(o));
            }
            s += "\n";
        }
        s += "\n";
    }
    s
}
