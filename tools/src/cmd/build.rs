//! `kiln build`: the kernel library ahead of time into a package, and its resource report.

use anyhow::{bail, Context, Result};
use kiln_codegen::package::{build_package, default_cache_dir, Job};
use kiln_ir::package::{Admission, KernelRoutes, VariantRoute};
use std::collections::BTreeMap;
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
    /// A tuning file (`kiln tune`'s output) for its arch, instead of the shipped
    /// `specs/tuning/<arch>.ron`; other archs keep the shipped tuning.
    #[arg(long, conflicts_with = "no_tuning")]
    tuning: Option<PathBuf>,
    /// Build the families' defaults only, ignoring every tuning file.
    #[arg(long)]
    no_tuning: bool,
}

/// Where each arch's tuning comes from.
struct TuningSource {
    given: Option<kiln_specs::tune::TuningFile>,
    off: bool,
}

impl TuningSource {
    fn for_arch(&self, arch: &str) -> Option<kiln_specs::tune::TuningFile> {
        match (&self.given, self.off) {
            (_, true) => None,
            (Some(f), false) if f.arch == arch => Some(f.clone()),
            (Some(_) | None, false) => kiln_specs::tune::shipped(arch),
        }
    }
}

/// Reads a tuning file given with `--tuning`; its arch is the one it names.
fn read_tuning(p: &std::path::Path) -> Result<kiln_specs::tune::TuningFile> {
    let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
    // The arch it names (a file that does not parse fails the checked parse below, with where).
    let arch =
        ron::from_str::<kiln_specs::tune::TuningFile>(&text).map(|f| f.arch).unwrap_or_default();
    Ok(kiln_specs::tune::parse_tuning(&p.display().to_string(), &arch, &text)?)
}

/// The jobs, route entries and bucket records of the tuned buckets of the built families.
fn tuned_jobs(
    families: &[&kiln_specs::KernelSpec],
    targets: &[&'static kiln_ir::Target],
    source: &TuningSource,
) -> Result<(Vec<Job>, BTreeMap<String, (Vec<VariantRoute>, Vec<kiln_ir::package::TunedBucket>)>)> {
    let mut jobs = vec![];
    let mut per_family = BTreeMap::new();
    for f in families {
        let Some(space) = kiln_specs::tune::space(f.name) else { continue };
        let (routes, records): &mut (Vec<VariantRoute>, Vec<_>) =
            per_family.entry(f.name.to_string()).or_default();
        for &t in targets.iter().filter(|t| f.builds_for(t)) {
            let file = source.for_arch(t.name);
            let applied = kiln_specs::tune::apply(&space, t.name, file.as_ref());
            for (variant, values, bucket) in applied.variants {
                let ir = (space.build)(t, t.default_wave(), &values).map_err(|why| {
                    anyhow::anyhow!(
                        "{}: the tuning of {} for bucket {} ({}) does not build: {why}",
                        f.name,
                        t.name,
                        bucket.name,
                        space.candidate_name(&values)
                    )
                })?;
                kiln_ir::verify(&ir, Some(t))
                    .with_context(|| format!("{}/{variant} for {}", f.name, t.name))?;
                jobs.push(Job { kernel: f.name.into(), variant: variant.clone(), target: t, ir });
                match routes.iter_mut().find(|r| r.variant == variant) {
                    Some(r) => r.admit.archs.push(t.name.to_string()),
                    None => routes.push(VariantRoute {
                        variant,
                        admit: Admission { archs: vec![t.name.to_string()], shapes: bucket.shapes },
                    }),
                }
            }
            records.extend(applied.records);
        }
    }
    Ok((jobs, per_family))
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
    let BuildArgs { arch, all_archs, kernel, out, cache, times, matrix, strict, tuning, no_tuning } =
        a;
    let tuning =
        TuningSource { given: tuning.as_deref().map(read_tuning).transpose()?, off: no_tuning };

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
            for v in f.objects() {
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
    let (tuned, mut tuned_routes) = tuned_jobs(&families, &targets, &tuning)?;
    let tuned_objects = tuned.len();
    jobs.extend(tuned);
    // Tuned variants come first: for their arch and bucket they beat the hand-written ones.
    // Only families with an object for some target have routes (a wave-32-only family in a
    // build for gfx906 alone has none, and routes to no object are refused by the loader).
    let routes = families
        .iter()
        .filter(|f| targets.iter().any(|t| f.builds_for(t)))
        .map(|f| {
            let (mut variants, tuning) = tuned_routes.remove(f.name).unwrap_or_default();
            let own = f.routes();
            variants.extend(own.variants);
            KernelRoutes { variants, tuning, ..own }
        })
        .collect();
    let cache = cache.unwrap_or_else(default_cache_dir);
    eprintln!(
        "kiln build: {} jobs ({} families x variants x {} archs, {tuned_objects} of them tuned) -> {}",
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
