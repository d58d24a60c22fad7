//! Resource reports and `kiln inspect`.

use anyhow::{bail, Context, Result};
use kiln_ir::package::ObjectEntry;
use std::path::Path;

fn opt(v: Option<u32>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

fn occ(o: &ObjectEntry) -> String {
    match &o.occupancy {
        Some(oc) => format!("{} ({:?})", oc.waves_per_simd, oc.limiter).to_lowercase(),
        None => "-".into(),
    }
}

/// The resource report: one row per code object.
#[cfg(feature = "llvm")]
pub fn resource_report(m: &kiln_ir::package::Manifest) -> String {
    let mut objs: Vec<&ObjectEntry> = m.objects.iter().collect();
    objs.sort_by(|a, b| (&a.kernel, &a.variant, &a.arch).cmp(&(&b.kernel, &b.variant, &b.arch)));
    let mut s = format!(
        "{:<24} {:<12} {:<8} {:>4} {:>5} {:>5} {:>5} {:>6} {:>7} {:>6}  {:<18} {}\n",
        "kernel",
        "variant",
        "arch",
        "wave",
        "VGPR",
        "SGPR",
        "AGPR",
        "LDS",
        "scratch",
        "spills",
        "occupancy",
        "source"
    );
    for o in objs {
        let r = &o.resources;
        let spills = match (r.vgpr_spills, r.sgpr_spills) {
            (None, None) => "-".to_string(),
            (a, b) => (a.unwrap_or(0) + b.unwrap_or(0)).to_string(),
        };
        s += &format!(
            "{:<24} {:<12} {:<8} {:>4} {:>5} {:>5} {:>5} {:>6} {:>7} {:>6}  {:<18} {}\n",
            o.kernel,
            o.variant,
            o.arch,
            o.wave_size,
            opt(r.vgprs),
            opt(r.sgprs),
            opt(r.agprs),
            r.lds_bytes,
            opt(r.scratch_bytes),
            spills,
            occ(o),
            r.source
        );
    }
    s
}

/// `kiln inspect`.
pub fn inspect(
    dir: &Path,
    arch: Option<String>,
    kernel: Option<String>,
    variant: Option<String>,
    ir: bool,
    llvm: bool,
    asm: bool,
    _resources: bool,
) -> Result<()> {
    // The loader's checks first (format, hashes, ABI): inspect never shows a tampered package.
    let pkg = kiln_runtime::Package::open(dir)?;
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
        if llvm || asm {
            print_compiled(&k, &o.arch, llvm, asm, dir, o)?;
        }
    }
    Ok(())
}

#[cfg(feature = "llvm")]
fn print_compiled(
    k: &kiln_ir::Kernel,
    arch: &str,
    llvm: bool,
    asm: bool,
    _: &Path,
    _: &ObjectEntry,
) -> Result<()> {
    let t = kiln_ir::Target::by_name(arch)?;
    let opts = kiln_codegen::Options { emit_llvm: llvm, emit_asm: asm, ..Default::default() };
    let o = kiln_codegen::compile(k, t, &opts)?;
    if let Some(s) = o.llvm_ir.filter(|_| llvm) {
        println!("{s}");
    }
    if let Some(s) = o.asm.filter(|_| asm) {
        println!("{s}");
    }
    Ok(())
}

#[cfg(not(feature = "llvm"))]
fn print_compiled(
    _: &kiln_ir::Kernel,
    _: &str,
    llvm: bool,
    asm: bool,
    dir: &Path,
    o: &ObjectEntry,
) -> Result<()> {
    if asm && o.format == kiln_ir::package::ObjectFormat::Ptx {
        let p = dir.join(&o.file);
        println!(
            "{}",
            std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?
        );
        return Ok(());
    }
    let _ = llvm;
    bail!(
        "this kiln is the runtime-only build (no LLVM): --llvm and AMD --asm need the full `kiln`"
    )
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
            ("occupancy", Box::new(occ)),
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
