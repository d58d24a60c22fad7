//! The GEMVs' early weight loads stay before `griddepcontrol.wait` in the machine code, and no
//! other load joins them. For every sm_90 library object that loads before its wait
//! (`Kernel::reads_before_grid_wait`), the PTX is assembled with ptxas and disassembled with
//! nvdisasm, and the global loads before `ACQBULK` (the wait in the SASS) are counted against
//! the PTX's before `griddepcontrol.wait`:
//! - at least as many 16-byte ones (the held quants; every load where there are none): ptxas
//!   (CUDA 13) moves a load down to its first use, past the wait, unless
//!   something before the wait needs its value; `kiln_specs::prefetch::hold` is that something
//!   (bench/results/early-h200-2026-12-03.md: without it every early `LDG` came after `ACQBULK`
//!   and the kernels timed as if the wait came first);
//! - no more: ptxas also moves `ld.global.nc` loads *up*, past the wait, with the arithmetic on
//!   them. Until 2026-12-05 every early GEMV's activations (written by the grid before) were
//!   `.nc` loads, and its SASS loaded them and ran `IDP` / `IMMA` on them before `ACQBULK`: a race
//!   with that grid, which the interpreter cannot show. The back end now gives the buffers that
//!   may be in flight coherent loads (`kiln_codegen`'s `buffers_maybe_in_flight`).
//!
//! Skipped with a message without ptxas or nvdisasm (pip's `nvidia-cuda-nvcc` and
//! `nvidia-cuda-nvdisasm`, which scripts/setup.sh installs).

use kiln_codegen::{compile, find_nvdisasm, find_ptxas, Options};
use kiln_ir::Target;
use std::process::Command;

/// The SASS of PTX `ptx` for sm_90, through a scratch directory.
fn sass_of(ptx: &str, name: &str, dir: &std::path::Path) -> String {
    let (ptxas, nvdisasm) = (find_ptxas().unwrap(), find_nvdisasm().unwrap());
    let src = dir.join(format!("{name}.ptx"));
    let cubin = dir.join(format!("{name}.cubin"));
    std::fs::write(&src, ptx).unwrap();
    let out = Command::new(ptxas).arg("-arch=sm_90").arg("-o").arg(&cubin).arg(&src).output();
    let out = out.unwrap_or_else(|e| panic!("{name}: running ptxas: {e}"));
    assert!(out.status.success(), "{name}: ptxas: {}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new(nvdisasm).arg(&cubin).output();
    let out = out.unwrap_or_else(|e| panic!("{name}: running nvdisasm: {e}"));
    assert!(out.status.success(), "{name}: nvdisasm: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn early_loads_stay_before_the_wait_in_the_sass() {
    if find_ptxas().is_none() || find_nvdisasm().is_none() {
        println!(
            "SKIP early-load SASS check: needs ptxas and nvdisasm \
             (pip install nvidia-cuda-nvcc nvidia-cuda-nvdisasm)"
        );
        return;
    }
    let t = Target::by_name("sm_90").expect("a kiln target");
    let dir = std::env::temp_dir().join(format!("kiln-early-sass-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut checked = vec![];
    for f in kiln_specs::library() {
        for v in &f.variants {
            let k = (v.build)(t, t.default_wave());
            if k.reads_before_grid_wait().is_empty() {
                continue;
            }
            let o = compile(&k, t, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
            let ptx = String::from_utf8(o.bytes).expect("PTX is text");
            let wait = ptx.find("griddepcontrol.wait").expect("an sm_90 object waits");
            let ptx_loads = ptx[..wait].matches("ld.global").count();
            // The quant vectors (16 bytes), which every early kernel holds (the k4 family
            // leaves its scales free to sink).
            let ptx_wide = ptx[..wait].matches("ld.global.nc.v4").count();
            let sass = sass_of(&ptx, &k.name, &dir);
            let acq = sass.find("ACQBULK").unwrap_or_else(|| panic!("{}: no ACQBULK", k.name));
            // Global loads into registers: `LDG` but not the async copies' `LDGSTS` and
            // `LDGDEPBAR` (their commit).
            let count = |pat: &str| sass[..acq].matches(pat).count();
            let sass_loads = count("LDG") - count("LDGSTS") - count("LDGDEPBAR");
            let sass_wide = sass[..acq].matches("LDG.E.128").count();
            // Async copies into LDS (`LDGSTS`), which an early kernel may issue before the wait
            // instead of loads (none of the library's does since 2026-12-07).
            let ptx_async = ["cp.async.cg.", "cp.async.ca."]
                .iter()
                .map(|c| ptx[..wait].matches(c).count())
                .sum::<usize>();
            let sass_async = count("LDGSTS");
            // Without 16-byte loads or copies (the Q/K/V kernels' words), every load.
            let (held, kept) = if ptx_wide + ptx_async > 0 {
                (ptx_wide + ptx_async, sass_wide + sass_async)
            } else {
                (ptx_loads, sass_loads)
            };
            assert!(
                held > 0 && kept >= held,
                "{}: {held} held loads before the wait in the PTX, {kept} before ACQBULK in \
                 the SASS: an early load sank past the wait",
                k.name
            );
            assert!(
                sass_loads <= ptx_loads,
                "{}: {ptx_loads} global loads before the wait in the PTX, {sass_loads} before \
                 ACQBULK in the SASS: ptxas moved a load made after the wait above it",
                k.name
            );
            // The L2 prefetches of the weights (`kiln_specs::prefetch::rows`, the dense early
            // twins') stay before it too.
            let ptx_pf = ptx[..wait].matches("prefetch.global.L2").count();
            let sass_pf = sass[..acq].matches("CCTL.E.PF2").count();
            assert!(
                sass_pf >= ptx_pf,
                "{}: {ptx_pf} prefetches before the wait in the PTX, {sass_pf} before ACQBULK \
                 in the SASS",
                k.name
            );
            checked.push(format!(
                "{} ({sass_loads} LDG, {sass_async} LDGSTS, {sass_pf} prefetches before ACQBULK)",
                k.name
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("early loads before the wait: {}", checked.join(", "));
    // The k4 wide variants and the dense early twins at least.
    assert!(checked.len() >= 8, "{checked:?}");
}
