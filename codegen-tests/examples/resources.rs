//! Resources and occupancy of the example kernels, read from the code objects:
//! `cargo run -p kiln-codegen-tests --example resources -- gfx906 gfx1100 gfx1201 sm_90`.

use kiln_codegen::{compile, occupancy, Options};
use kiln_codegen_tests::kernels;
use kiln_ir::Target;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut archs: Vec<String> = std::env::args().skip(1).collect();
    if archs.is_empty() {
        archs = kiln_ir::TARGETS.iter().map(|t| t.name.to_string()).collect();
    }
    println!(
        "{:<8} {:<14} {:>4} {:>5} {:>5} {:>5} {:>7} {:>6} {:>6}  occupancy",
        "arch", "kernel", "wave", "vgpr", "sgpr", "agpr", "lds", "scratch", "spills"
    );
    for a in &archs {
        let t = Target::by_name(a)?;
        for k in kernels::examples(t.default_wave()) {
            let o = compile(&k, t, &Options::default())?;
            let r = &o.resources;
            let n = |v: Option<u32>| v.map_or("-".to_string(), |v| v.to_string());
            let spills = r.vgpr_spills.unwrap_or(0) + r.sgpr_spills.unwrap_or(0);
            let occ = occupancy(t, &k, r)
                .map_or("-".into(), |o| format!("{} ({:?})", o.waves_per_simd, o.limiter));
            println!(
                "{:<8} {:<14} {:>4} {:>5} {:>5} {:>5} {:>7} {:>6} {:>6}  {occ}",
                t.name,
                k.name,
                r.wave_size,
                n(r.vgprs),
                n(r.sgprs),
                n(r.agprs),
                r.lds_bytes,
                n(r.scratch_bytes),
                spills
            );
        }
    }
    Ok(())
}
