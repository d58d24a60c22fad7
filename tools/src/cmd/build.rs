//! `kiln build`: the kernel library ahead of time into a package, and its resource report.

use anyhow::{bail, Context, Result};
use kiln_codegen::package::{build_package, default_cache_dir, Job};
use kiln_ir::package::{KernelRoutes, VariantRoute};
use std::path::PathBuf;

/// Arguments of `kiln build`.
#[derive(clap::Args)]
pub struct BuildArgs {
    /// Archs to build (comma separated); default: the build matrix's archs.
    #[arg(long, value_delimiter = ',')]
    arch: Vec<String>,
    /// Every supported arch.
    #[arg(long, conflicts_with = "arch")]
    all_archs: bool,
    /// Kernel families to build (comma separated); default: all.
    #[arg(long, value_delimiter = ',')]
    kernel: Vec<String>,
    /// Output package directory.
    #[arg(short = 'o', long, default_value = "dist")]
    out: PathBuf,
    /// Cache directory (default: $KILN_CACHE_DIR or target/kiln-cache).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Also write per kernel x arch compile times (ms) to this file.
    #[arg(long)]
    times: Option<PathBuf>,
    /// A build matrix (archs, kernels, budgets) instead of the shipped specs/build.ron.
    #[arg(long)]
    matrix: Option<PathBuf>,
    /// Fail when a budget could not be checked because its resource was not measured
    /// (NVIDIA registers without ptxas); CI builds with it.
    #[arg(long)]
    strict: bool,
}

/// Resolves arch names against the target table (an unknown one is an error naming the list).
fn targets_for(
    arch: &[String],
    all: bool,
    matrix: &kiln_specs::BuildMatrix,
) -> Result<Vec<&'static kiln_ir::Target>> {
    let names: Vec<String> = if all {
        kiln_ir::TARGETS.iter().map(|t| t.name.to_string()).collect()
    } else if arch.is_empty() {
        matrix.archs.clone()
    } else {
        arch.to_vec()
    };
    names.iter().map(|n| kiln_ir::Target::by_name(n).map_err(Into::into)).collect()
}

/// `kiln build`.
pub fn build(a: BuildArgs) -> Result<()> {
    let BuildArgs { arch, all_archs, kernel, out, cache, times, matrix, strict } = a;

    let matrix = match &matrix {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            kiln_specs::parse_build_matrix(&p.display().to_string(), &text)?
        }
        None => kiln_specs::build_matrix(),
    };
    let targets = targets_for(&arch, all_archs, &matrix)?;
    if targets.is_empty() {
        bail!(
            "no arch to build: the build matrix lists none and no --arch or --all-archs was given"
        );
    }
    // The library by default; a family named by --kernel or the matrix may also be an op check.
    let all = kiln_specs::all_families();
    for k in &kernel {
        if !all.iter().any(|f| f.name == k) {
            bail!("unknown kernel `{k}`; known: {}", kiln_specs::family_names());
        }
    }
    let named = |f: &&kiln_specs::KernelSpec| {
        if kernel.is_empty() && matrix.kernels.is_empty() {
            kiln_specs::library().iter().any(|l| l.name == f.name)
        } else {
            (kernel.is_empty() || kernel.iter().any(|k| k == f.name))
                && (matrix.kernels.is_empty() || matrix.kernels.iter().any(|k| k == f.name))
        }
    };
    let families: Vec<_> = all.iter().filter(named).collect();
    let mut jobs = vec![];
    for f in &families {
        // A family whose ops some targets lack is built only where it verifies.
        for &t in targets.iter().filter(|t| f.builds_for(t)) {
            for v in &f.variants {
                let ir = (v.build)(t, t.default_wave());
                kiln_ir::verify(&ir, Some(t))
                    .with_context(|| format!("{}/{} for {}", f.name, v.name, t.name))?;
                jobs.push(Job { kernel: f.name.into(), variant: v.name.into(), target: t, ir });
            }
        }
    }
    if jobs.is_empty() {
        let only: Vec<String> = families
            .iter()
            .filter_map(|f| f.archs.as_ref().map(|a| format!("{} ({})", f.name, a.join(", "))))
            .collect();
        bail!(
            "nothing to build for {}: {}",
            targets.iter().map(|t| t.name).collect::<Vec<_>>().join(", "),
            if only.is_empty() {
                "no family selected".to_string()
            } else {
                format!(
                    "these are built only for the archs that have their ops: {}",
                    only.join("; ")
                )
            }
        );
    }
    let budgets = budgets_for(&matrix, &families);
    let routes = families
        .iter()
        .map(|f| KernelRoutes {
            kernel: f.name.into(),
            baseline: f.baseline().name.into(),
            variants: f.variants[1..]
                .iter()
                .map(|v| VariantRoute { variant: v.name.into(), admit: v.admit.clone() })
                .collect(),
            tuning: vec![],
        })
        .collect();
    let cache = cache.unwrap_or_else(default_cache_dir);
    eprintln!(
        "kiln build: {} jobs ({} families x variants x {} archs) -> {}",
        jobs.len(),
        families.len(),
        targets.len(),
        out.display()
    );
    let rep = build_package(
        &jobs,
        routes,
        &budgets,
        strict,
        &out,
        &cache,
        &kiln_codegen::Options::default(),
        std::io::IsTerminal::is_terminal(&std::io::stderr()),
    )?;
    print!("{}", crate::report::resource_report(&rep.manifest));
    if rep.refused_cache_entries > 0 {
        eprintln!(
            "note: {} cache entr(ies) did not match their seal (edited or corrupted) and were \
             compiled again",
            rep.refused_cache_entries
        );
    }
    if !rep.unchecked.is_empty() {
        eprintln!(
            "warning: {} budget check(s) not made, the resource was not measured (--strict \
             fails the build):",
            rep.unchecked.len()
        );
        for u in &rep.unchecked {
            eprintln!("  {u}");
        }
    }
    let compile_ms: f64 = rep.compile_times.iter().map(|t| t.3.as_secs_f64() * 1e3).sum();
    println!(
        "{} objects: {} compiled ({:.1} ms per kernel x arch on average, summed over threads), {} from cache; {:.2} s wall; package {}",
        rep.manifest.objects.len(),
        rep.compiled,
        if rep.compiled > 0 { compile_ms / rep.compiled as f64 } else { 0.0 },
        rep.cached,
        rep.elapsed.as_secs_f64(),
        out.display()
    );
    if let Some(p) = times {
        let mut s = String::from("kernel,variant,arch,compile_ms\n");
        for (k, v, a, t) in &rep.compile_times {
            s += &format!("{k},{v},{a},{:.2}\n", t.as_secs_f64() * 1e3);
        }
        std::fs::write(&p, s).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}

/// The budgets a build checks: the matrix's, then each built family's own.
fn budgets_for(
    matrix: &kiln_specs::BuildMatrix,
    families: &[&kiln_specs::KernelSpec],
) -> Vec<kiln_specs::Budget> {
    matrix.budgets.iter().chain(families.iter().flat_map(|f| f.budgets.iter())).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_specs::Budget;

    /// A family's own budget is checked beside the matrix's; a family that is not built adds
    /// none.
    #[test]
    fn a_familys_budgets_join_the_matrix_budgets() {
        let budget = |kernel: &str, vgprs| Budget {
            kernel: kernel.into(),
            archs: vec!["gfx1201".into()],
            max_vgprs: Some(vgprs),
            max_scratch: None,
            max_spills: None,
            variants: vec![],
        };
        let mut lib = kiln_specs::library();
        let (first, second) = (lib[0].name, lib[1].name);
        lib[0].budgets.push(budget(first, 45));
        lib[1].budgets.push(budget(second, 59));
        let matrix = kiln_specs::build_matrix();
        let built = [&lib[0]];
        let all = budgets_for(&matrix, &built);
        assert_eq!(all.len(), matrix.budgets.len() + 1);
        assert_eq!(all[..matrix.budgets.len()], matrix.budgets[..]);
        assert_eq!(all.last(), Some(&budget(first, 45)));
    }
}
