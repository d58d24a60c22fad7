//! Resource reports: the table `kiln build` prints, and the helpers `kiln inspect` shares.

use kiln_ir::package::ObjectEntry;

pub(crate) fn opt(v: Option<u32>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

pub(crate) fn occ(o: &ObjectEntry) -> String {
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
