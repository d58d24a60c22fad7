//! kiln-specs: the kernel library. One kernel family a file, written with [`KernelBuilder`];
//! `build.ron` is the build matrix (which families, variants and archs are built, and budgets).
//!
//! A family has a baseline and speed variants. Every variant computes the same function as its
//! baseline, bit for bit (`kiln parity` proves it), and carries an admission rule for the router.
//!
//! A family's file holds everything about it: builders, admissions, its parity cases
//! ([`Parity`]) and its bench cases ([`Bench`]), all in the [`KernelSpec`] its `spec()` /
//! `specs()` returns. [`library`] is the registry: adding a family is its file plus one line
//! there. The fields are not optional, so the compiler asks a new family for its cases, and
//! `every_family_has_parity_and_bench_cases` (tests below) refuses an empty list.

use kiln_ir::package::{Admission, KernelRoutes, VariantRoute};
use kiln_ir::{Kernel, Target};

pub mod argmax;
pub mod attention;
pub mod bench;
pub mod cases;
mod common;
pub mod copy;
pub mod copy_at;
pub mod gemv;
pub mod get_rows;
pub mod ld_matrix;
pub mod math;
pub mod mem_access;
pub mod mma;
pub mod packed_ops;
pub mod prefetch;
pub mod quantize;
pub mod rmsnorm;
pub mod swiglu;
pub mod top_prob;
pub mod tune;
use serde::{Deserialize, Serialize};

/// Builds one variant's IR for a target at a wave size.
pub type BuildFn = fn(&Target, u32) -> Kernel;

/// One variant of a kernel family.
#[derive(Clone)]
pub struct VariantSpec {
    /// Variant name; the baseline is called `baseline`.
    pub name: &'static str,
    /// Builds the IR.
    pub build: BuildFn,
    /// When the router may take it. One admission is one box of shapes; a variant with two
    /// (taken at two places of the preference order) is listed twice under one name with the
    /// same `build` ([`KernelSpec::objects`] builds it once).
    pub admit: Admission,
}

/// How `kiln parity` drives a family: the harness a family's cases need.
#[derive(Clone, Copy)]
pub enum Parity {
    /// Scalars and input buffers by ABI parameter name; the harness sizes the outputs from the
    /// ABI's length rules and compares them with the interpreter's. The function gets a
    /// generator seeded from the run's seed and the family's name, and `large` (add the real
    /// decode sizes).
    Buffers(fn(&mut cases::Rng, bool) -> Vec<cases::Case>),
    /// A table of `(src, dst, bytes)` device addresses (`copy_from_mapped_multi`): the harness
    /// allocates each source in host-mapped memory and each destination in a device buffer,
    /// with guard bytes around every copy, and compares with a host memcpy. The function gets
    /// the run's seed and `large`.
    CopyTable(fn(u64, bool) -> Vec<copy::CopyCase>),
    /// Like [`Parity::Buffers`], but the device is compared with the interpreter by `check`
    /// instead of bit for bit: for an op the hardware computes in an order the interpreter
    /// cannot know (f16 `mma`). `check(case, output, interpreter, device)` returns what it
    /// measured (printed) or why the difference is out of bounds. Variants are still compared
    /// with the baseline bit for bit on the interpreter.
    Within {
        /// The cases.
        cases: fn(&mut cases::Rng, bool) -> Vec<cases::Case>,
        /// The comparison of one output.
        check: WithinFn,
    },
}

/// A bounded comparison ([`Parity::Within`]): `(case, output name, interpreter bytes, device
/// bytes) -> Ok(what was measured) | Err(why it is out of bounds)`.
pub type WithinFn = fn(&cases::Case, &str, &[u8], &[u8]) -> Result<String, String>;

/// What `kiln bench` times for a family.
#[derive(Clone, Copy)]
pub enum Bench {
    /// Decode-size cases with the bytes each moves (for the bandwidth floor).
    Cases(fn() -> Vec<bench::BenchCase>),
    /// None, and why (a family whose inputs the generic bench cannot build says so here).
    Without(&'static str),
}

/// A kernel family: a baseline and its speed variants, with its test and bench cases.
#[derive(Clone)]
pub struct KernelSpec {
    /// Family name (`argmax_rows`, ...).
    pub name: &'static str,
    /// The variants; the first is the baseline.
    pub variants: Vec<VariantSpec>,
    /// Its parity cases.
    pub parity: Parity,
    /// Its bench cases.
    pub bench: Bench,
    /// The archs it is built for: `None` for every arch; `Some` for a family whose ops some
    /// targets lack (the op checks), so `--all-archs` builds it only where it verifies.
    pub archs: Option<Vec<String>>,
    /// The family's own resource budgets (each names this family), checked by every build on
    /// top of the build matrix's (`specs/build.ron` keeps the rules for every family: no
    /// scratch, no spills).
    pub budgets: Vec<Budget>,
}

impl KernelSpec {
    /// The baseline variant.
    pub fn baseline(&self) -> &VariantSpec {
        &self.variants[0]
    }
    /// The variants to build, one each: a name listed again is a second admission of the same
    /// variant (a second place in the routes, the same IR: [`VariantSpec`]), built once.
    pub fn objects(&self) -> impl Iterator<Item = &VariantSpec> {
        self.variants
            .iter()
            .enumerate()
            .filter(|(i, v)| !self.variants[..*i].iter().any(|w| w.name == v.name))
            .map(|(_, v)| v)
    }
    /// A variant by name.
    pub fn variant(&self, name: &str) -> Option<&VariantSpec> {
        self.variants.iter().find(|v| v.name == name)
    }
    /// The variant the admissions give a call on `arch`, as the runtime's router takes them
    /// from a package: the first variant after the baseline whose admission takes the arch and
    /// whose shape rules all hold (`shape` gives each rule's scalar), else the baseline.
    pub fn routed(&self, arch: &str, shape: &dyn Fn(&str) -> u64) -> &'static str {
        self.variants[1..]
            .iter()
            .find(|v| {
                let a = &v.admit;
                (a.archs.is_empty() || a.archs.iter().any(|x| x == arch))
                    && a.shapes.iter().all(|(s, lo, hi)| (*lo..=*hi).contains(&shape(s)))
            })
            .map_or(self.baseline().name, |v| v.name)
    }
    /// True when the family is built for `t`.
    pub fn builds_for(&self, t: &Target) -> bool {
        self.archs.as_ref().is_none_or(|a| a.iter().any(|n| n == t.name))
    }
    /// The family's hand-written routes: every speed variant with its admission, in preference
    /// order, the baseline last (a build puts its tuned variants first).
    pub fn routes(&self) -> KernelRoutes {
        KernelRoutes {
            kernel: self.name.into(),
            baseline: self.baseline().name.into(),
            variants: self.variants[1..]
                .iter()
                .map(|v| VariantRoute { variant: v.name.into(), admit: v.admit.clone() })
                .collect(),
            tuning: vec![],
        }
    }
    /// The bench cases (none for [`Bench::Without`]).
    pub fn bench_cases(&self) -> Vec<bench::BenchCase> {
        match self.bench {
            Bench::Cases(f) => f(),
            Bench::Without(_) => vec![],
        }
    }
}

/// Resource budget for a family on some archs: a build that misses it fails. One type for the
/// matrix and the builder; unknown (misspelled) keys are refused.
pub use kiln_ir::package::Budget;

/// The build matrix (`specs/build.ron`). A field it does not know is refused (a misspelled
/// field would otherwise be dropped silently).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildMatrix {
    /// Archs built by default.
    pub archs: Vec<String>,
    /// Families built (empty: all).
    pub kernels: Vec<String>,
    /// Budgets.
    pub budgets: Vec<Budget>,
}

/// A build matrix that does not parse or names what does not exist.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MatrixError {
    /// The text is empty (an empty file, say).
    #[error(
        "{origin}: the build matrix is empty; expected (archs: [\"sm_90\", ...], kernels: [], \
         budgets: [])"
    )]
    Empty {
        /// Where the text came from.
        origin: String,
    },
    /// Not valid RON for a [`BuildMatrix`].
    #[error("{origin}:{line}:{col}: {message}")]
    Syntax {
        /// Where the text came from (a file name).
        origin: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What the parser expected.
        message: String,
    },
    /// An arch that is not in the target table.
    #[error("{origin}: {source}")]
    Arch {
        /// Where the text came from.
        origin: String,
        /// The unknown arch, with the supported list.
        source: kiln_ir::target::UnknownTarget,
    },
    /// A kernel family that is not in the library.
    #[error("{origin}: unknown kernel `{name}` in {field}; the library has: {known}")]
    Kernel {
        /// Where the text came from.
        origin: String,
        /// The field (`kernels` or `budgets`).
        field: &'static str,
        /// The unknown name.
        name: String,
        /// The library's families.
        known: String,
    },
}

/// Parses and checks a build matrix: every arch must be in the target table and every kernel
/// (in `kernels` and in budgets, `*` aside) in the library.
pub fn parse_build_matrix(origin: &str, text: &str) -> Result<BuildMatrix, MatrixError> {
    if text.trim().is_empty() {
        return Err(MatrixError::Empty { origin: origin.to_string() });
    }
    let m: BuildMatrix = ron::from_str(text).map_err(|e| MatrixError::Syntax {
        origin: origin.to_string(),
        line: e.position.line,
        col: e.position.col,
        message: e.code.to_string(),
    })?;
    let archs = m.archs.iter().chain(m.budgets.iter().flat_map(|b| b.archs.iter()));
    for a in archs {
        kiln_ir::Target::by_name(a)
            .map_err(|source| MatrixError::Arch { origin: origin.to_string(), source })?;
    }
    let lib = all_families();
    let known = || lib.iter().map(|f| f.name).collect::<Vec<_>>().join(", ");
    let kernels = m.kernels.iter().map(|k| ("kernels", k));
    let budgets = m.budgets.iter().map(|b| ("budgets", &b.kernel)).filter(|(_, k)| *k != "*");
    for (field, k) in kernels.chain(budgets) {
        if !lib.iter().any(|f| f.name == k) {
            return Err(MatrixError::Kernel {
                origin: origin.to_string(),
                field,
                name: k.clone(),
                known: known(),
            });
        }
    }
    Ok(m)
}

/// The build matrix shipped with the library (`specs/build.ron`; a test keeps it valid).
pub fn build_matrix() -> BuildMatrix {
    parse_build_matrix("specs/build.ron", include_str!("../build.ron"))
        .unwrap_or_else(|e| panic!("the shipped build matrix is invalid: {e}"))
}

/// Every kernel family of the library: the registry (one line a family file).
pub fn library() -> Vec<KernelSpec> {
    let mut v = vec![];
    v.push(argmax::spec());
    v.push(top_prob::spec());
    v.extend(quantize::specs());
    v.extend(swiglu::specs());
    v.extend(rmsnorm::specs());
    v.push(copy::spec());
    v.push(copy_at::spec());
    v.extend(gemv::specs());
    v.extend(attention::specs());
    v.push(get_rows::spec());
    v
}

/// The op checks: small kernels of single IR ops (packed dot products, permutes, converts,
/// unaligned and 64-bit-indexed memory access) with parity cases, so each op is proven bit for
/// bit on every device. Not part of the shipped library: `specs/checks.ron` builds them
/// (`kiln build --matrix specs/checks.ron`), and `kiln parity` runs them like any family.
pub fn checks() -> Vec<KernelSpec> {
    let mut v = vec![];
    v.extend(packed_ops::specs());
    v.extend(mem_access::specs());
    v.extend(mma::specs());
    v.push(ld_matrix::spec());
    v
}

/// The library and the op checks: every family a build matrix may name.
pub fn all_families() -> Vec<KernelSpec> {
    let mut v = library();
    v.extend(checks());
    v
}

/// The names of every family (library and op checks), comma separated (for error messages).
pub fn family_names() -> String {
    all_families().iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
}

/// Looks a family (library or op check) up by name.
pub fn family(name: &str) -> Option<KernelSpec> {
    all_families().into_iter().find(|k| k.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_ir::{ParamKind, TARGETS};
    use std::collections::BTreeSet;

    /// Every registered family has parity cases, and either bench cases or a stated reason for
    /// having none; every case names only parameters the family's ABI has, with their types.
    #[test]
    fn every_family_has_parity_and_bench_cases() {
        let mut bench_names = BTreeSet::new();
        for f in all_families() {
            let n = match f.parity {
                Parity::Buffers(g) | Parity::Within { cases: g, .. } => {
                    g(&mut cases::rng_for(f.name, 7), false).len()
                }
                Parity::CopyTable(g) => g(7, false).len(),
            };
            assert!(n > 0, "family {} has no parity cases", f.name);
            let k = (f.baseline().build)(&TARGETS[0], TARGETS[0].default_wave());
            let scalar = |name: &str| {
                k.params.values().find(|p| p.name == name).and_then(|p| match p.kind {
                    ParamKind::Scalar(t) => Some(t),
                    ParamKind::Buffer { .. } => None,
                })
            };
            let input = |name: &str| {
                k.params.values().find(|p| p.name == name && !p.workspace).and_then(|p| {
                    match p.kind {
                        ParamKind::Buffer { elem, access, .. } if access.reads() => Some(elem),
                        _ => None,
                    }
                })
            };
            if let Parity::Buffers(g) | Parity::Within { cases: g, .. } = f.parity {
                for c in g(&mut cases::rng_for(f.name, 7), false) {
                    for (name, ty, _) in &c.scalars {
                        assert_eq!(scalar(name), Some(*ty), "{} case {}: {name}", f.name, c.name);
                    }
                    for (name, ty, _) in &c.inputs {
                        assert_eq!(input(name), Some(*ty), "{} case {}: {name}", f.name, c.name);
                    }
                }
            }
            match f.bench {
                Bench::Cases(g) => {
                    let cases = g();
                    assert!(!cases.is_empty(), "family {} lists no bench cases", f.name);
                    for c in cases {
                        assert!(bench_names.insert(c.name), "bench case {} twice", c.name);
                        assert!(c.bytes > 0, "{}: no bytes", c.name);
                        for (name, ty, _) in &c.scalars {
                            assert_eq!(scalar(name), Some(*ty), "bench {}: {name}", c.name);
                        }
                        for (name, ty, _) in &c.inputs {
                            assert_eq!(input(name), Some(*ty), "bench {}: {name}", c.name);
                        }
                        let scalars = k
                            .params
                            .values()
                            .filter(|p| matches!(p.kind, ParamKind::Scalar(_)))
                            .count();
                        assert_eq!(c.scalars.len(), scalars, "bench {}: every scalar", c.name);
                    }
                }
                Bench::Without(why) => assert!(!why.is_empty(), "{}: say why no bench", f.name),
            }
        }
    }

    /// A family's own budgets name the family (a budget for another would be checked on the
    /// wrong kernel, or on none) and only archs of the target table.
    #[test]
    fn family_budgets_name_their_family() {
        for f in all_families() {
            for b in &f.budgets {
                assert_eq!(b.kernel, f.name, "a budget in family {}", f.name);
                for a in &b.archs {
                    assert!(kiln_ir::Target::by_name(a).is_ok(), "{}: arch {a}", f.name);
                }
            }
        }
    }

    /// A variant listed twice (two admissions) builds the same IR both times and is one
    /// object, and the baseline is listed once.
    #[test]
    fn a_variant_named_twice_is_one_variant() {
        let t = kiln_ir::Target::by_name("sm_90").unwrap();
        for f in all_families() {
            assert_eq!(f.objects().filter(|v| v.name == "baseline").count(), 1, "{}", f.name);
            for (i, v) in f.variants.iter().enumerate() {
                if let Some(w) = f.variants[..i].iter().find(|w| w.name == v.name) {
                    let (a, b) = ((w.build)(t, 32), (v.build)(t, 32));
                    assert_eq!(a, b, "{}/{} listed twice with two builds", f.name, v.name);
                }
            }
        }
        // The i8 decode attention lists `mma8a` twice (two admissions): one object.
        let f = all_families()
            .into_iter()
            .find(|f| f.name == "attention_decode_q8_0_i8_d128")
            .expect("the i8 decode attention");
        assert_eq!(f.variants.iter().filter(|v| v.name == "mma8a").count(), 2);
        assert_eq!(f.objects().filter(|v| v.name == "mma8a").count(), 1);
        assert_eq!(f.objects().count() + 1, f.variants.len());
    }

    #[test]
    fn family_names_are_unique() {
        let lib = all_families();
        let names: BTreeSet<_> = lib.iter().map(|f| f.name).collect();
        assert_eq!(names.len(), lib.len());
    }

    /// `specs/checks.ron` builds exactly the op checks, and each is built where it verifies.
    #[test]
    fn the_checks_matrix_names_every_op_check() {
        let m = parse_build_matrix("specs/checks.ron", include_str!("../checks.ron")).unwrap();
        let names: BTreeSet<String> = checks().iter().map(|f| f.name.to_string()).collect();
        assert_eq!(m.kernels.iter().cloned().collect::<BTreeSet<_>>(), names);
        for f in checks() {
            for t in TARGETS {
                let k = (f.baseline().build)(t, t.default_wave());
                let ok = kiln_ir::verify(&k, Some(t)).is_ok();
                assert_eq!(ok, f.builds_for(t), "{} on {t}", f.name);
            }
        }
    }
}
