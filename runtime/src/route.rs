//! Routes: which variant of a kernel a call runs (DESIGN.md section 6).
//!
//! The variants of [`KernelRoutes`] are tried in order; the first admitted one wins, else the
//! baseline. A variant is admitted when the arch is in its `archs` (or `archs` is empty), every
//! `(param, min, max)` range holds for the call's scalar arguments, and the package has its
//! object for the arch. Nothing is compiled when none fits: a missing baseline is an error.
//!
//! `KILN_ROUTE_<KERNEL>` (the kernel name upper-cased, other characters as `_`) overrides:
//! `=<variant>` or `=baseline` forces that variant whatever its admission rule says (it must be
//! built for the arch), `=!<variant>[,!<variant>..]` forbids variants. A variable that looks like
//! one but names no kernel of the package (misspelled, another case) is warned about on stderr,
//! with the known names, once per process.

use crate::value::Scalar;
use kiln_ir::package::KernelRoutes;
use std::collections::BTreeMap;
use std::fmt;

/// Why routing failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RouteError {
    /// An override forces a variant that has no object for the arch.
    #[error(
        "{var}={value}: {kernel} has no variant `{value}` built for {arch}; built for {arch}: {}",
        if available.is_empty() { "none".to_string() } else { available.join(", ") }
    )]
    ForcedMissing {
        /// The environment variable.
        var: String,
        /// Its value.
        value: String,
        /// Kernel.
        kernel: String,
        /// Arch.
        arch: String,
        /// Variants built for the arch.
        available: Vec<String>,
    },
    /// No variant was admitted and the baseline cannot run either.
    #[error(
        "{kernel} on {arch}: no variant admitted and no baseline to fall back to (nothing is \
         compiled at run time):\n{explanation}"
    )]
    NoObject {
        /// Kernel.
        kernel: String,
        /// Arch.
        arch: String,
        /// The router's explanation.
        explanation: String,
    },
}

/// One environment override.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Override {
    /// Run this variant (`baseline` names the baseline).
    Force(String),
    /// Never run these variants.
    Forbid(Vec<String>),
}

/// The route overrides in force, keyed by kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    by_var: BTreeMap<String, (String, Override)>,
    /// Variables that look like route overrides in another case (`kiln_route_x`): never
    /// applied, kept to be warned about.
    miscased: Vec<String>,
}

/// The environment variable that overrides `kernel`'s route: `KILN_ROUTE_` and the kernel's name
/// upper-cased, with every character other than a letter or digit written as `_`.
pub fn route_var(kernel: &str) -> String {
    let name: String = kernel
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' })
        .collect();
    format!("KILN_ROUTE_{name}")
}

impl Overrides {
    /// No overrides.
    pub fn none() -> Overrides {
        Overrides::default()
    }

    /// The `KILN_ROUTE_*` variables of the process environment.
    pub fn from_env() -> Overrides {
        Overrides::from_vars(std::env::vars())
    }

    /// The `KILN_ROUTE_*` entries of a list of variables (others are ignored).
    pub fn from_vars<K: AsRef<str>, V: AsRef<str>>(
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Overrides {
        let mut o = Overrides::default();
        for (k, v) in vars {
            let (k, v) = (k.as_ref(), v.as_ref().trim());
            if k.starts_with("KILN_ROUTE_") && !v.is_empty() {
                o.by_var.insert(k.to_string(), (v.to_string(), parse(v)));
            } else if k.to_ascii_uppercase().starts_with("KILN_ROUTE_") && !v.is_empty() {
                o.miscased.push(k.to_string());
            }
        }
        o
    }

    /// Sets the override of `kernel` from a value written as in the environment
    /// (`variant`, `baseline`, `!variant,!other`).
    pub fn set(&mut self, kernel: &str, value: &str) {
        self.by_var.insert(route_var(kernel), (value.to_string(), parse(value)));
    }

    /// One line for each variable that looks like a route override but matches none of
    /// `kernels` exactly (a misspelled kernel, another case), naming the variables that would:
    /// such a variable changes nothing.
    pub fn unmatched(&self, kernels: &[&str]) -> Vec<String> {
        let known: Vec<String> = kernels.iter().map(|k| route_var(k)).collect();
        let unknown = self.by_var.keys().filter(|v| !known.contains(v));
        unknown
            .chain(&self.miscased)
            .map(|v| {
                format!(
                    "{v} matches no kernel of the package and is ignored; the route variables are \
                     (exactly, upper case): {}",
                    known.join(", ")
                )
            })
            .collect()
    }

    /// Prints [`Overrides::unmatched`] to stderr, each line once per process (a server that
    /// loads many runtimes warns once). Returns the lines printed now.
    pub fn warn_unmatched(&self, kernels: &[&str]) -> Vec<String> {
        static WARNED: std::sync::Mutex<std::collections::BTreeSet<String>> =
            std::sync::Mutex::new(std::collections::BTreeSet::new());
        let mut warned = WARNED.lock().unwrap_or_else(|p| p.into_inner());
        let fresh: Vec<String> =
            self.unmatched(kernels).into_iter().filter(|w| warned.insert(w.clone())).collect();
        for w in &fresh {
            eprintln!("kiln: warning: {w}");
        }
        fresh
    }

    /// True when no override is set.
    pub fn is_empty(&self) -> bool {
        self.by_var.is_empty()
    }

    /// The override of `kernel`: its variable, its value as written, and what it means.
    pub fn get(&self, kernel: &str) -> Option<(String, &str, &Override)> {
        let var = route_var(kernel);
        let (value, o) = self.by_var.get(&var)?;
        Some((var, value, o))
    }
}

fn parse(v: &str) -> Override {
    if v.starts_with('!') {
        Override::Forbid(
            v.split(',').map(|s| s.trim().trim_start_matches('!').to_string()).collect(),
        )
    } else {
        Override::Force(v.to_string())
    }
}

/// Why a variant was, or was not, taken.
#[derive(Clone, Debug, PartialEq)]
pub enum Reason {
    /// The first admitted variant.
    Admitted,
    /// The baseline, as no variant was admitted.
    Fallback,
    /// Forced by an override.
    Forced {
        /// The variable.
        var: String,
        /// Its value.
        value: String,
    },
    /// Another variant is forced.
    OtherForced {
        /// The variable.
        var: String,
        /// Its value.
        value: String,
    },
    /// Forbidden by an override.
    Forbidden {
        /// The variable.
        var: String,
        /// Its value.
        value: String,
    },
    /// The package has no object of it for the arch.
    NotBuilt {
        /// The arch.
        arch: String,
    },
    /// Its rule admits other archs only.
    ArchNotAdmitted {
        /// The arch.
        arch: String,
        /// The archs it admits.
        archs: Vec<String>,
    },
    /// A scalar argument is outside its range.
    OutOfRange {
        /// The scalar parameter.
        param: String,
        /// The call's value.
        value: Scalar,
        /// Inclusive minimum.
        min: u64,
        /// Inclusive maximum.
        max: u64,
    },
    /// The call has no scalar of that name.
    MissingScalar {
        /// The scalar parameter.
        param: String,
    },
    /// The scalar is not a non-negative integer.
    NotAShape {
        /// The scalar parameter.
        param: String,
        /// The call's value.
        value: Scalar,
    },
    /// Admitted, but an earlier variant was taken.
    Shadowed {
        /// The variant taken.
        by: String,
    },
    /// The baseline, not needed as a variant was admitted.
    NotNeeded {
        /// The variant taken.
        by: String,
    },
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Admitted => write!(f, "taken: first admitted variant"),
            Reason::Fallback => write!(f, "taken: no variant admitted"),
            Reason::Forced { var, value } => write!(f, "forced by {var}={value}"),
            Reason::OtherForced { var, value } => {
                write!(f, "not taken: {var}={value} forces another variant")
            }
            Reason::Forbidden { var, value } => write!(f, "not taken: forbidden by {var}={value}"),
            Reason::NotBuilt { arch } => write!(f, "not built for {arch}"),
            Reason::ArchNotAdmitted { arch, archs } => {
                write!(f, "not taken: admitted on {} only, not {arch}", archs.join(", "))
            }
            Reason::OutOfRange { param, value, min, max } => {
                write!(f, "not taken: {param}={value} outside {min}..={max}")
            }
            Reason::MissingScalar { param } => {
                write!(f, "not taken: the call has no scalar `{param}`")
            }
            Reason::NotAShape { param, value } => {
                write!(f, "not taken: {param}={value} is not a non-negative integer")
            }
            Reason::Shadowed { by } => write!(f, "not taken: admitted, but `{by}` comes first"),
            Reason::NotNeeded { by } => write!(f, "not taken: `{by}` was admitted"),
        }
    }
}

/// The verdict on one variant.
#[derive(Clone, Debug, PartialEq)]
pub struct RouteStep {
    /// The variant.
    pub variant: String,
    /// True for the one taken.
    pub taken: bool,
    /// Why.
    pub reason: Reason,
}

/// A routing decision with a reason for every variant.
#[derive(Clone, Debug, PartialEq)]
pub struct RouteDecision {
    /// Kernel.
    pub kernel: String,
    /// Arch.
    pub arch: String,
    /// One step per variant, in order, the baseline last.
    pub steps: Vec<RouteStep>,
    outcome: Result<String, RouteError>,
    /// For a family with a knob space: whether the variant taken is tuned (with the evidence)
    /// or the family's default.
    pub tuning: Option<String>,
}

impl RouteDecision {
    /// The variant taken, or why none can run.
    pub fn chosen(&self) -> Result<&str, RouteError> {
        self.outcome.as_deref().map_err(Clone::clone)
    }

    /// One line per variant: `split_rows: not taken: n=300000 outside 1..=262144`.
    pub fn explain(&self) -> String {
        let head = match &self.outcome {
            Ok(v) => format!("{} on {}: {v}", self.kernel, self.arch),
            Err(_) => format!("{} on {}: no variant can run", self.kernel, self.arch),
        };
        let mut s = head;
        for st in &self.steps {
            s += &format!("\n  {}: {}", st.variant, st.reason);
        }
        if let Some(t) = &self.tuning {
            s += &format!("\n  {t}");
        }
        s
    }
}

impl fmt::Display for RouteDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.explain())
    }
}

/// What a routing decision depends on besides the rules.
pub struct RouteQuery<'a> {
    /// The arch.
    pub arch: &'a str,
    /// The call's scalar arguments, by parameter name.
    pub scalars: &'a dyn Fn(&str) -> Option<Scalar>,
    /// Whether a variant has an object for the arch.
    pub built: &'a dyn Fn(&str) -> bool,
    /// Overrides.
    pub overrides: &'a Overrides,
}

/// Routes calls of one kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Router {
    routes: KernelRoutes,
}

impl Router {
    /// A router over the kernel's rules.
    pub fn new(routes: KernelRoutes) -> Router {
        Router { routes }
    }

    /// The rules.
    pub fn routes(&self) -> &KernelRoutes {
        &self.routes
    }

    /// Every variant name once (a variant with two admissions is listed twice in the routes),
    /// the baseline last.
    pub fn variant_names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = vec![];
        for name in self.routes.variants.iter().map(|v| v.variant.as_str()) {
            if !v.contains(&name) {
                v.push(name);
            }
        }
        v.push(&self.routes.baseline);
        v
    }

    /// The variant to run, without the explanation: the same choice as [`Router::decide`]
    /// (which explains it), without allocating unless an override is set or nothing can run.
    pub fn choose(&self, q: &RouteQuery<'_>) -> Result<&str, RouteError> {
        let r = &self.routes;
        if !q.overrides.is_empty() && q.overrides.get(&r.kernel).is_some() {
            let d = self.decide(q);
            let chosen = d.chosen()?;
            return Ok(self.variant_names().into_iter().find(|v| *v == chosen).expect("a variant"));
        }
        for v in &r.variants {
            let arch_ok = v.admit.archs.is_empty() || v.admit.archs.iter().any(|a| a == q.arch);
            if arch_ok && (q.built)(&v.variant) && admits(&v.admit.shapes, q.scalars) {
                return Ok(&v.variant);
            }
        }
        if (q.built)(&r.baseline) {
            Ok(&r.baseline)
        } else {
            Err(self.decide(q).chosen().expect_err("decide agrees that nothing can run"))
        }
    }

    /// Decides, with a reason for every variant.
    pub fn decide(&self, q: &RouteQuery<'_>) -> RouteDecision {
        let r = &self.routes;
        let arch = q.arch.to_string();
        let mut steps = vec![];
        let ov = q.overrides.get(&r.kernel);
        let outcome = match ov {
            Some((var, value, Override::Force(v))) => {
                let target = if v == "baseline" { r.baseline.as_str() } else { v.as_str() };
                let mut ok = false;
                for name in self.variant_names() {
                    let reason = if name == target {
                        if (q.built)(name) {
                            ok = true;
                            Reason::Forced { var: var.clone(), value: value.to_string() }
                        } else {
                            Reason::NotBuilt { arch: arch.clone() }
                        }
                    } else {
                        Reason::OtherForced { var: var.clone(), value: value.to_string() }
                    };
                    steps.push(RouteStep {
                        variant: name.to_string(),
                        taken: ok && name == target,
                        reason,
                    });
                }
                if ok {
                    Ok(target.to_string())
                } else {
                    Err(RouteError::ForcedMissing {
                        var,
                        value: value.to_string(),
                        kernel: r.kernel.clone(),
                        arch: arch.clone(),
                        available: self
                            .variant_names()
                            .into_iter()
                            .filter(|n| (q.built)(n))
                            .map(String::from)
                            .collect(),
                    })
                }
            }
            _ => {
                let (forbid_var, forbid_value, forbidden) = match &ov {
                    Some((var, value, Override::Forbid(list))) => {
                        (var.clone(), value.to_string(), list.clone())
                    }
                    _ => (String::new(), String::new(), vec![]),
                };
                let forbidden_reason =
                    || Reason::Forbidden { var: forbid_var.clone(), value: forbid_value.clone() };
                let mut chosen: Option<String> = None;
                for v in &r.variants {
                    let reason = if forbidden.contains(&v.variant) {
                        forbidden_reason()
                    } else if !v.admit.archs.is_empty() && !v.admit.archs.contains(&arch) {
                        Reason::ArchNotAdmitted { arch: arch.clone(), archs: v.admit.archs.clone() }
                    } else if !(q.built)(&v.variant) {
                        Reason::NotBuilt { arch: arch.clone() }
                    } else if let Some(why) = out_of_range(&v.admit.shapes, q.scalars) {
                        why
                    } else if let Some(by) = &chosen {
                        Reason::Shadowed { by: by.clone() }
                    } else {
                        chosen = Some(v.variant.clone());
                        Reason::Admitted
                    };
                    let taken = reason == Reason::Admitted;
                    steps.push(RouteStep { variant: v.variant.clone(), taken, reason });
                }
                let base = &r.baseline;
                let (reason, outcome) = if let Some(by) = chosen.clone() {
                    (Reason::NotNeeded { by: by.clone() }, Ok(by))
                } else if forbidden.contains(base) {
                    (forbidden_reason(), Err(()))
                } else if !(q.built)(base) {
                    (Reason::NotBuilt { arch: arch.clone() }, Err(()))
                } else {
                    (Reason::Fallback, Ok(base.clone()))
                };
                let taken = reason == Reason::Fallback;
                steps.push(RouteStep { variant: base.clone(), taken, reason });
                outcome.map_err(|()| RouteError::NoObject {
                    kernel: r.kernel.clone(),
                    arch: arch.clone(),
                    explanation: steps
                        .iter()
                        .map(|s| format!("  {}: {}", s.variant, s.reason))
                        .collect::<Vec<_>>()
                        .join("\n"),
                })
            }
        };
        let tuning = outcome.as_ref().ok().and_then(|v| tuning_note(r, &arch, v));
        RouteDecision { kernel: r.kernel.clone(), arch, steps, outcome, tuning }
    }
}

/// What the explanation says about tuning: which bucket's tuned variant was taken and on what
/// evidence, or that the family's defaults serve the call. `None` for a family without a knob
/// space (nothing to say).
fn tuning_note(r: &KernelRoutes, arch: &str, chosen: &str) -> Option<String> {
    if let Some((b, t)) = r.tuned(arch, chosen) {
        let knobs: Vec<String> = t.knobs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let p = &t.provenance;
        let runner_up = match &t.runner_up {
            Some((name, us)) => format!(", runner-up {name} {us:.2} us"),
            None => String::new(),
        };
        return Some(format!(
            "tuned: bucket `{}` of {arch} ({}): {:.2} us against the default `{}` {:.2} us{runner_up}; \
             measured on {} (driver {}, {}) on {} by kiln {} (LLVM {})",
            b.bucket,
            knobs.join(" "),
            t.time_us,
            t.default.0,
            t.default.1,
            p.device,
            p.driver,
            p.clocks,
            p.date,
            p.kiln,
            p.llvm
        ));
    }
    let on_arch: Vec<_> = r.tuning.iter().filter(|b| b.arch == arch).collect();
    if on_arch.is_empty() {
        return None;
    }
    let tuned = on_arch.iter().filter(|b| b.tuned.is_some()).count();
    Some(if tuned == 0 {
        format!("default: {} is untuned on {arch}; the family's default routes decide", r.kernel)
    } else {
        format!(
            "default: no tuned bucket of {arch} admits the call ({tuned} of {} buckets tuned); \
             the family's default routes decide",
            on_arch.len()
        )
    })
}

fn admits(shapes: &[(String, u64, u64)], scalars: &dyn Fn(&str) -> Option<Scalar>) -> bool {
    shapes.iter().all(|(param, min, max)| {
        scalars(param).and_then(|v| v.as_shape()).is_some_and(|n| n >= *min && n <= *max)
    })
}

fn out_of_range(
    shapes: &[(String, u64, u64)],
    scalars: &dyn Fn(&str) -> Option<Scalar>,
) -> Option<Reason> {
    for (param, min, max) in shapes {
        let Some(value) = scalars(param) else {
            return Some(Reason::MissingScalar { param: param.clone() });
        };
        let Some(n) = value.as_shape() else {
            return Some(Reason::NotAShape { param: param.clone(), value });
        };
        if n < *min || n > *max {
            return Some(Reason::OutOfRange { param: param.clone(), value, min: *min, max: *max });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_ir::package::{Admission, VariantRoute};

    fn routes() -> KernelRoutes {
        KernelRoutes {
            kernel: "argmax_rows".into(),
            baseline: "baseline".into(),
            variants: vec![
                VariantRoute {
                    variant: "split_rows".into(),
                    admit: Admission { archs: vec![], shapes: vec![("n".into(), 1, 262144)] },
                },
                VariantRoute {
                    variant: "wide".into(),
                    admit: Admission { archs: vec![], shapes: vec![] },
                },
                VariantRoute {
                    variant: "rdna".into(),
                    admit: Admission { archs: vec!["gfx1100".into()], shapes: vec![] },
                },
            ],
            tuning: vec![],
        }
    }

    fn decide(arch: &str, n: u32, built: &[&str], o: &Overrides) -> RouteDecision {
        let scalars = move |p: &str| (p == "n").then(|| Scalar::from(n));
        let built = |v: &str| built.contains(&v);
        Router::new(routes()).decide(&RouteQuery {
            arch,
            scalars: &scalars,
            built: &built,
            overrides: o,
        })
    }

    #[test]
    fn first_admitted_wins_and_every_variant_has_a_reason() {
        let all = ["split_rows", "wide", "rdna", "baseline"];
        let d = decide("gfx1100", 300_000, &all, &Overrides::none());
        assert_eq!(d.chosen(), Ok("wide"));
        let text = d.explain();
        assert!(text.contains("split_rows: not taken: n=300000 outside 1..=262144"), "{text}");
        assert!(text.contains("rdna: not taken: admitted, but `wide` comes first"), "{text}");
        assert!(text.contains("baseline: not taken: `wide` was admitted"), "{text}");

        let d = decide("gfx906", 1000, &["split_rows", "baseline"], &Overrides::none());
        assert_eq!(d.chosen(), Ok("split_rows"));
        let d = decide("gfx906", 300_000, &["split_rows", "baseline"], &Overrides::none());
        assert_eq!(d.chosen(), Ok("baseline"));
        let text = d.explain();
        assert!(text.contains("wide: not built for gfx906"), "{text}");
        assert!(text.contains("rdna: not taken: admitted on gfx1100 only, not gfx906"), "{text}");
        assert!(text.contains("baseline: taken: no variant admitted"), "{text}");
    }

    #[test]
    fn missing_baseline_is_an_error_not_a_compile() {
        let d = decide("gfx906", 300_000, &["split_rows"], &Overrides::none());
        let e = d.chosen().unwrap_err();
        let text = e.to_string();
        assert!(text.contains("no baseline to fall back to"), "{text}");
        assert!(text.contains("baseline: not built for gfx906"), "{text}");
    }

    #[test]
    fn overrides_force_and_forbid() {
        let all = ["split_rows", "wide", "rdna", "baseline"];
        let o = Overrides::from_vars([("KILN_ROUTE_ARGMAX_ROWS", "baseline"), ("PATH", "/bin")]);
        let d = decide("gfx1100", 10, &all, &o);
        assert_eq!(d.chosen(), Ok("baseline"));
        assert!(d.explain().contains("baseline: forced by KILN_ROUTE_ARGMAX_ROWS=baseline"));

        // Forcing ignores the shape range, not the arch's objects.
        let o = Overrides::from_vars([("KILN_ROUTE_ARGMAX_ROWS", "split_rows")]);
        assert_eq!(decide("gfx1100", 300_000, &all, &o).chosen(), Ok("split_rows"));
        let e = decide("gfx906", 10, &["baseline"], &o).chosen().unwrap_err();
        assert!(matches!(e, RouteError::ForcedMissing { .. }));
        assert!(e.to_string().contains("KILN_ROUTE_ARGMAX_ROWS=split_rows"), "{e}");
        let e = decide(
            "gfx1100",
            10,
            &all,
            &Overrides::from_vars([("KILN_ROUTE_ARGMAX_ROWS", "nope")]),
        );
        assert!(e.chosen().is_err());

        let o = Overrides::from_vars([("KILN_ROUTE_ARGMAX_ROWS", "!split_rows,!wide")]);
        let d = decide("gfx1100", 10, &all, &o);
        assert_eq!(d.chosen(), Ok("rdna"));
        assert!(d.explain().contains("split_rows: not taken: forbidden by KILN_ROUTE_ARGMAX_ROWS"));
    }

    #[test]
    fn choose_agrees_with_decide() {
        let names = ["split_rows", "wide", "rdna", "baseline"];
        let values =
            ["", "baseline", "wide", "rdna", "nope", "!wide", "!split_rows,!wide", "!baseline"];
        for _ in 0..500 {
            let arch = ["gfx1100", "gfx906"][rand::random::<usize>() % 2];
            let n = [0u32, 1, 1000, 262144, 262145, 300_000][rand::random::<usize>() % 6];
            let built: Vec<&str> = names.iter().copied().filter(|_| rand::random()).collect();
            let v = values[rand::random::<usize>() % values.len()];
            let o = Overrides::from_vars([("KILN_ROUTE_ARGMAX_ROWS", v)]);
            let scalars = move |p: &str| (p == "n").then(|| Scalar::from(n));
            let is_built = |v: &str| built.contains(&v);
            let q = RouteQuery { arch, scalars: &scalars, built: &is_built, overrides: &o };
            let router = Router::new(routes());
            let (fast, slow) = (router.choose(&q), router.decide(&q));
            assert_eq!(fast, slow.chosen(), "{arch} n={n} built={built:?} override={v:?}\n{slow}");
        }
    }

    /// A variant listed twice (two admission boxes: the i8 decode attention lists `mma8a` for
    /// one or two tokens from `pos` 4000 and for eight from 16384): each entry is tried in its
    /// place, and the explanation gives each its reason.
    #[test]
    fn a_variant_with_two_admissions_is_taken_by_either() {
        let spec = kiln_specs::attention::decode::specs()
            .into_iter()
            .find(|f| f.name == "attention_decode_q8_0_i8_d128")
            .expect("the family");
        assert_eq!(spec.variants.iter().filter(|v| v.name == "mma8a").count(), 2);
        let router = Router::new(spec.routes());
        let o = Overrides::none();
        let all = |_: &str| true;
        for (t, pos, want) in
            [(1u32, 4095u32, "mma8a"), (8, 32760, "mma8a"), (4, 32764, "mma8"), (8, 4088, "mma8")]
        {
            let scalars = move |p: &str| match p {
                "n_tokens" => Some(Scalar::from(t)),
                "pos" => Some(Scalar::from(pos)),
                _ => None,
            };
            let q = RouteQuery { arch: "sm_90", scalars: &scalars, built: &all, overrides: &o };
            assert_eq!(router.choose(&q), Ok(want), "T = {t} pos {pos}");
            let d = router.decide(&q);
            assert_eq!(d.chosen(), Ok(want), "T = {t} pos {pos}");
            let names = router.variant_names();
            assert_eq!(names.iter().filter(|n| **n == "mma8a").count(), 1, "{names:?}");
            if (t, pos) == (8, 32760) {
                let text = d.explain();
                assert!(text.contains("mma8a: not taken: n_tokens=8 outside 1..=2"), "{text}");
                assert!(text.contains("mma8a: taken"), "{text}");
            }
        }
    }

    /// The prompt attention's routes as the specs write them (H200 figures): on NVIDIA's wide
    /// archs `w4gx` below `LONG_CHUNK` rows and the long-chunk variant from there, the other Q /
    /// out types their one wide variant at every length, and no wide variant elsewhere.
    #[test]
    fn the_prompt_attention_routes_by_chunk_length() {
        use kiln_specs::attention::prefill::{specs, LONG_CHUNK};
        let o = Overrides::none();
        let all = |_: &str| true;
        for spec in specs() {
            let router = Router::new(spec.routes());
            let f16 = spec.name.starts_with("attention_prefill_f16");
            let plain = !spec.name.ends_with("_qbf16") && !spec.name.ends_with("_of16");
            for arch in ["sm_80", "sm_86", "sm_89", "sm_90", "gfx1100", "gfx942", "gfx906"] {
                for t in [1, 17, LONG_CHUNK - 1, LONG_CHUNK, 8192] {
                    let scalars = move |p: &str| (p == "n_tokens").then(|| Scalar::from(t));
                    let q = RouteQuery { arch, scalars: &scalars, built: &all, overrides: &o };
                    let got = router.choose(&q).unwrap();
                    let want = match (arch.starts_with("sm_"), plain, f16, t >= LONG_CHUNK) {
                        (false, ..) => {
                            assert!(!got.starts_with("w4"), "{} on {arch}: {got}", spec.name);
                            continue;
                        }
                        (true, false, true, _) => "w4g",
                        (true, false, false, _) => "w4qs",
                        (true, true, _, false) => "w4gx",
                        (true, true, true, true) => "w4gxa",
                        (true, true, false, true) => "w4qsxc",
                    };
                    assert_eq!(got, want, "{} on {arch} at n_tokens = {t}", spec.name);
                }
            }
        }
    }

    /// The decode attention's Q8_0 head-dim-64 routes (SmolLM2's 9 q / 3 kv; H200 figures in
    /// the specs): one token from `R1X_FROM_POS` on takes `r1x` on the archs it was measured
    /// on; shorter contexts keep `short_r1` / `short_r1t640`, more tokens and other archs `r1`.
    #[test]
    fn the_decode_attention_routes_r1x_past_r1x_from_pos_at_head_dim_64() {
        use kiln_specs::attention::decode::{specs, R1X_ARCHS, R1X_FROM_POS};
        let o = Overrides::none();
        let all = |_: &str| true;
        let d64 = ["attention_decode_q8_0_d64", "attention_decode_rope_q8_0_d64_q8_1s"];
        let families: Vec<_> = specs().into_iter().filter(|s| d64.contains(&s.name)).collect();
        assert_eq!(families.len(), d64.len());
        let from = u32::try_from(R1X_FROM_POS).unwrap();
        for spec in families {
            let router = Router::new(spec.routes());
            for arch in ["sm_90", "sm_80", "sm_89", "gfx1100", "gfx906"] {
                let measured = R1X_ARCHS.contains(&arch);
                for (t, pos) in [(1u32, 173u32), (1, from - 1), (1, from), (1, 2013), (2, 2013)] {
                    let scalars = move |p: &str| match p {
                        "n_tokens" => Some(Scalar::from(t)),
                        "pos" => Some(Scalar::from(pos)),
                        "group" => Some(Scalar::from(3u32)),
                        _ => None,
                    };
                    let q = RouteQuery { arch, scalars: &scalars, built: &all, overrides: &o };
                    let got = router.choose(&q).unwrap();
                    let want_r1x = measured && t == 1 && pos >= from;
                    assert_eq!(
                        got == "r1x",
                        want_r1x,
                        "{} on {arch}, T {t} pos {pos}: {got}",
                        spec.name
                    );
                    if pos == 173 {
                        assert_eq!(got, "short_r1", "{} on {arch}", spec.name);
                    }
                    if pos == 2013 && !want_r1x {
                        assert_eq!(got, "r1", "{} on {arch}, T {t}", spec.name);
                    }
                }
            }
        }
    }

    #[test]
    fn route_var_names() {
        assert_eq!(route_var("argmax_rows"), "KILN_ROUTE_ARGMAX_ROWS");
        assert_eq!(route_var("q8.gemv-4"), "KILN_ROUTE_Q8_GEMV_4");
    }

    /// A misspelled or wrong-case route variable is reported with the known names, once per
    /// process; exact names are not.
    #[test]
    fn unmatched_route_variables_are_warned_once() {
        let o = Overrides::from_vars([
            ("KILN_ROUTE_ARGMAX_ROWS", "baseline"),
            ("KILN_ROUTE_ARGMAX_ROW", "baseline"),
            ("kiln_route_argmax_rows", "split_rows"),
            ("Kiln_Route_Scale", "!fast"),
            ("PATH", "/bin"),
        ]);
        let kernels = ["argmax_rows", "rms-norm"];
        let lines = o.unmatched(&kernels);
        assert_eq!(lines.len(), 3, "{lines:#?}");
        for (line, var) in lines.iter().zip([
            "KILN_ROUTE_ARGMAX_ROW",
            "kiln_route_argmax_rows",
            "Kiln_Route_Scale",
        ]) {
            assert!(line.starts_with(&format!("{var} matches no kernel of the package")), "{line}");
            assert!(line.ends_with("KILN_ROUTE_ARGMAX_ROWS, KILN_ROUTE_RMS_NORM"), "{line}");
        }
        // The miscased one is not applied.
        assert_eq!(o.get("argmax_rows").map(|g| g.1), Some("baseline"));
        // Once per process: a second load warns about nothing new.
        let first = o.warn_unmatched(&kernels);
        assert_eq!(first, lines);
        assert!(o.warn_unmatched(&kernels).is_empty());
        assert!(Overrides::from_vars([("KILN_ROUTE_ARGMAX_ROWS", "x")])
            .unmatched(&kernels)
            .is_empty());
    }
}
