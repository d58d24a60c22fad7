//! The first half of `kiln tune` (needs LLVM): every candidate of the asked families built for
//! one arch into a candidate package, beside the families' own variants (the defaults it is
//! timed against), each candidate checked against the build's budgets. What falls here, and why,
//! goes into the plan; the second half (any `kiln`, on the GPU machine) reads it.

use super::plan::{FamilyPlan, Plan};
use anyhow::{Context, Result};
use kiln_codegen::package::{build_package, check_budget, Job};
use kiln_ir::package::{Admission, VariantRoute};
use kiln_specs::tune::TuneSpace;
use std::path::Path;

/// The admission arch of a candidate: none, so it runs only when forced.
const NEVER: &str = "tune-candidate (forced only)";

/// Builds the candidates of `spaces` that fit one of the `buckets` (all when empty) for
/// `target` into the package `dir`, and writes the plan beside it.
pub fn build(
    spaces: &[TuneSpace],
    buckets: &[String],
    target: &'static kiln_ir::Target,
    dir: &Path,
    cache: &Path,
) -> Result<Plan> {
    let matrix = kiln_specs::build_matrix();
    let mut jobs = vec![];
    let mut routes = vec![];
    let mut budgets = matrix.budgets.clone();
    let mut plan = Plan { arch: target.name.to_string(), llvm: String::new(), families: vec![] };
    for space in spaces {
        let family = kiln_specs::family(space.family)
            .with_context(|| format!("{}: not a family of the library", space.family))?;
        budgets.extend(family.budgets.iter().cloned());
        let wave = target.default_wave();
        for v in family.objects() {
            let ir = (v.build)(target, wave);
            kiln_ir::verify(&ir, Some(target))
                .with_context(|| format!("{}/{} for {}", family.name, v.name, target.name))?;
            jobs.push(Job { kernel: family.name.into(), variant: v.name.into(), target, ir });
        }
        routes.push(family.routes());
        let mut fp = FamilyPlan { family: family.name.to_string(), ..FamilyPlan::default() };
        let wanted: Vec<_> = space
            .buckets
            .iter()
            .filter(|b| buckets.is_empty() || buckets.iter().any(|n| n == b.name))
            .collect();
        for c in space.combinations() {
            if !wanted.iter().any(|b| (space.fits)(b, &c)) {
                continue;
            }
            let variant = space.candidate_variant(&c);
            match (space.build)(target, wave, &c) {
                Ok(ir) => match kiln_ir::verify(&ir, Some(target)) {
                    Ok(()) => {
                        jobs.push(Job {
                            kernel: family.name.into(),
                            variant: variant.clone(),
                            target,
                            ir,
                        });
                        fp.candidates.push(variant);
                    }
                    Err(e) => fp.refused.push((variant, format!("does not verify: {e}"))),
                },
                Err(why) => fp.refused.push((variant, format!("not a candidate: {why}"))),
            }
        }
        // Candidates are routed only when forced (their admission names no real arch), so the
        // package's default routes are the family's own.
        let r = routes.last_mut().expect("pushed above");
        r.variants.extend(fp.candidates.iter().map(|c| VariantRoute {
            variant: c.clone(),
            admit: Admission { archs: vec![NEVER.into()], shapes: vec![] },
        }));
        plan.families.push(fp);
    }
    eprintln!(
        "kiln tune: building {} objects ({} candidates) for {} -> {}",
        jobs.len(),
        plan.families.iter().map(|f| f.candidates.len()).sum::<usize>(),
        target.name,
        dir.display()
    );
    // Budgets are checked candidate by candidate below: one over its budget falls alone.
    let rep = build_package(
        &jobs,
        routes,
        &[],
        false,
        dir,
        cache,
        &kiln_codegen::Options::default(),
        std::io::IsTerminal::is_terminal(&std::io::stderr()),
    )?;
    plan.llvm = rep.manifest.toolchain.llvm.clone();
    for fp in &mut plan.families {
        let mut kept = vec![];
        for variant in std::mem::take(&mut fp.candidates) {
            let job = jobs
                .iter()
                .find(|j| j.kernel == fp.family && j.variant == variant)
                .expect("every candidate has its job");
            let entry = rep
                .manifest
                .objects
                .iter()
                .find(|o| o.kernel == fp.family && o.variant == variant)
                .expect("every job has its object");
            let mut unchecked = vec![];
            match check_budget(job, &entry.resources, &budgets, &mut unchecked) {
                Ok(()) if unchecked.is_empty() => kept.push(variant),
                Ok(()) => fp
                    .refused
                    .push((variant, format!("budget not checked: {}", unchecked.join("; ")))),
                Err(e) => fp.refused.push((variant, format!("over budget: {e}"))),
            }
        }
        fp.candidates = kept;
    }
    plan.write(dir)?;
    Ok(plan)
}
