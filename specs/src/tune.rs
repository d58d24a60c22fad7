//! Per-arch tuning (`kiln tune`): each tunable family declares its knob space (the constants its
//! variants are built from: rows a wave, splits, block sizes...) and the shape buckets that
//! matter; `kiln tune` builds every candidate, gates it on parity, times the survivors and writes
//! the winner per bucket to `specs/tuning/<arch>.ron` with its provenance; `kiln build` reads
//! that file and builds each tuned bucket's knobs as a variant `tuned_<bucket>`, routed first for
//! that arch and that bucket's shapes.
//!
//! Why knobs are data here and not variants: a family's hand-written variants stay (they are the
//! defaults, and the fallback on every untuned arch); the space only says which constants may
//! change without changing the result. Every candidate must give its baseline's bits: the gate
//! in `kiln tune` refuses one that does not, so a knob that would change an order can never be
//! recorded, whatever it measures.

use crate::bench::BenchCase;
use kiln_ir::package::{Provenance, Tuned, TunedBucket};
use kiln_ir::{Kernel, Target};
use serde::{Deserialize, Serialize};

/// One knob: its name (as it reads in a variant name) and the values tried.
#[derive(Clone, Debug, PartialEq)]
pub struct Knob {
    /// Name (`rows`, `splits`).
    pub name: &'static str,
    /// Values tried, in order.
    pub values: Vec<u32>,
    /// The value a tuning entry that does not name this knob stands for (an entry written
    /// before the knob existed: the knob's value in the code it measured). `None`: every entry
    /// must name it.
    pub omitted: Option<u32>,
}

/// A shape bucket: the calls one tuned variant serves, and the call that is timed for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Bucket {
    /// Name, unique in the family (`t1_nlo`): it names the tuned variant (`tuned_t1_nlo`).
    pub name: &'static str,
    /// The ranges `(scalar, min, max)`, inclusive, that admit a call into the bucket.
    pub shapes: Vec<(String, u64, u64)>,
    /// The call timed for the bucket (its scalars must fall in `shapes`).
    pub case: BenchCase,
}

/// Builds a candidate from its knob values (in the space's order), or says why that
/// combination is not one (a knob that does not apply, a block past the workgroup limit).
pub type TuneBuildFn = fn(&Target, u32, &[u32]) -> Result<Kernel, String>;

/// A family's knob space.
#[derive(Clone)]
pub struct TuneSpace {
    /// The family.
    pub family: &'static str,
    /// The knobs; a candidate is one value of each.
    pub knobs: Vec<Knob>,
    /// The buckets.
    pub buckets: Vec<Bucket>,
    /// Builds a candidate.
    pub build: TuneBuildFn,
    /// Which candidates are worth timing for a bucket (all: `|_, _| true`); a GEMV pass of 8
    /// tokens for one token, say, is not.
    pub fits: fn(&Bucket, &[u32]) -> bool,
}

impl TuneSpace {
    /// Every combination of knob values, in order (the first knob varies slowest).
    pub fn combinations(&self) -> Vec<Vec<u32>> {
        let mut all = vec![vec![]];
        for k in &self.knobs {
            all = all
                .into_iter()
                .flat_map(|prefix: Vec<u32>| {
                    k.values.iter().map(move |&v| {
                        let mut c = prefix.clone();
                        c.push(v);
                        c
                    })
                })
                .collect();
        }
        all
    }

    /// The name of a candidate: its knobs, `rows2_unroll1`.
    pub fn candidate_name(&self, values: &[u32]) -> String {
        self.knobs
            .iter()
            .zip(values)
            .map(|(k, v)| format!("{}{v}", k.name))
            .collect::<Vec<_>>()
            .join("_")
    }

    /// The variant name of a candidate in a candidate package.
    pub fn candidate_variant(&self, values: &[u32]) -> String {
        format!("cand_{}", self.candidate_name(values))
    }

    /// The knob values a candidate variant name stands for.
    pub fn parse_candidate(&self, variant: &str) -> Option<Vec<u32>> {
        let rest = variant.strip_prefix("cand_")?;
        self.combinations().into_iter().find(|c| self.candidate_name(c) == rest)
    }

    /// A bucket by name.
    pub fn bucket(&self, name: &str) -> Option<&Bucket> {
        self.buckets.iter().find(|b| b.name == name)
    }

    /// Checks knob values given by name (a tuning file's): every knob of the space, in order,
    /// with one of its values; knobs at the end that have an [`Knob::omitted`] value may be
    /// left out (entries written before they existed) and take it. Returns the values.
    pub fn values_of(&self, knobs: &[(String, u32)]) -> Result<Vec<u32>, String> {
        let names: Vec<&str> = self.knobs.iter().map(|k| k.name).collect();
        let given: Vec<&str> = knobs.iter().map(|k| k.0.as_str()).collect();
        let rest = self.knobs.get(given.len()..).unwrap_or(&[]);
        let filled = names.starts_with(&given) && rest.iter().all(|k| k.omitted.is_some());
        if !filled {
            return Err(format!(
                "knobs {} given; {} has knobs {} (in that order)",
                given.join(", "),
                self.family,
                names.join(", ")
            ));
        }
        for (k, (_, v)) in self.knobs.iter().zip(knobs) {
            if !k.values.contains(v) {
                return Err(format!(
                    "knob {}={v} is not in {}'s space ({:?})",
                    k.name, self.family, k.values
                ));
            }
        }
        Ok(knobs.iter().map(|k| k.1).chain(rest.iter().filter_map(|k| k.omitted)).collect())
    }
}

/// The variant a tuned bucket is built as.
pub fn tuned_variant(bucket: &str) -> String {
    format!("tuned_{bucket}")
}

/// Every family's knob space (the registry: one line a tunable family).
pub fn spaces() -> Vec<TuneSpace> {
    let mut v = vec![crate::argmax::tune_space(), crate::top_prob::tune_space()];
    v.extend(crate::gemv::tune_spaces());
    v.extend(crate::attention::tune::tune_spaces());
    v
}

/// The knob space of `family`.
pub fn space(family: &str) -> Option<TuneSpace> {
    spaces().into_iter().find(|s| s.family == family)
}

/// A tuning file, `specs/tuning/<arch>.ron`: the winner of each tuned bucket on one arch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuningFile {
    /// The arch.
    pub arch: String,
    /// One entry a tuned (family, bucket).
    pub entries: Vec<TuningEntry>,
}

/// The winner of one bucket, and the evidence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuningEntry {
    /// The family.
    pub kernel: String,
    /// The bucket.
    pub bucket: String,
    /// The winner's knobs, in the space's order; `None` when the default routes were at least
    /// as fast as every candidate (the bucket stays on the defaults, and the best candidate is
    /// the runner-up).
    pub knobs: Option<Vec<(String, u32)>>,
    /// The time of what serves the bucket (graph replay, median), us.
    pub time_us: f64,
    /// The variant the default routes take for the bucket's timed call, and its time.
    pub default: (String, f64),
    /// The second fastest candidate and its time.
    pub runner_up: Option<(String, f64)>,
    /// Where and when.
    pub provenance: Provenance,
}

impl TuningEntry {
    /// The manifest's record of this entry, built as `variant`, when a candidate won.
    pub fn tuned(&self, variant: String) -> Option<Tuned> {
        Some(Tuned {
            variant,
            knobs: self.knobs.clone()?,
            time_us: self.time_us,
            default: self.default.clone(),
            runner_up: self.runner_up.clone(),
            provenance: self.provenance.clone(),
        })
    }
}

/// A tuning file that does not parse or names what does not exist.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TuningError {
    /// Not RON for a [`TuningFile`].
    #[error("{origin}:{line}:{col}: {message}")]
    Syntax {
        /// The file.
        origin: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What the parser expected.
        message: String,
    },
    /// The file is for another arch than the one asked for.
    #[error("{origin}: the file tunes {found}, expected {expected}")]
    WrongArch {
        /// The file.
        origin: String,
        /// The arch asked for.
        expected: String,
        /// The file's.
        found: String,
    },
    /// An entry that names no tunable family, no bucket of it, or knobs outside its space.
    #[error("{origin}: entry {index} ({kernel}/{bucket}): {message}")]
    Entry {
        /// The file.
        origin: String,
        /// 0-based entry index.
        index: usize,
        /// Its family.
        kernel: String,
        /// Its bucket.
        bucket: String,
        /// What is wrong.
        message: String,
    },
}

/// Parses a tuning file for `arch` and checks every entry against the knob spaces.
pub fn parse_tuning(origin: &str, arch: &str, text: &str) -> Result<TuningFile, TuningError> {
    let f: TuningFile = ron::from_str(text).map_err(|e| TuningError::Syntax {
        origin: origin.to_string(),
        line: e.position.line,
        col: e.position.col,
        message: e.code.to_string(),
    })?;
    if f.arch != arch {
        return Err(TuningError::WrongArch {
            origin: origin.to_string(),
            expected: arch.to_string(),
            found: f.arch.clone(),
        });
    }
    let spaces = spaces();
    for (index, e) in f.entries.iter().enumerate() {
        let err = |message: String| TuningError::Entry {
            origin: origin.to_string(),
            index,
            kernel: e.kernel.clone(),
            bucket: e.bucket.clone(),
            message,
        };
        let Some(space) = spaces.iter().find(|s| s.family == e.kernel) else {
            let known: Vec<&str> = spaces.iter().map(|s| s.family).collect();
            return Err(err(format!(
                "no tunable family of that name (tunable: {})",
                known.join(", ")
            )));
        };
        if space.bucket(&e.bucket).is_none() {
            let known: Vec<&str> = space.buckets.iter().map(|b| b.name).collect();
            return Err(err(format!("no such bucket (buckets: {})", known.join(", "))));
        }
        if let Some(knobs) = &e.knobs {
            space.values_of(knobs).map_err(err)?;
        }
        if f.entries[..index].iter().any(|o| o.kernel == e.kernel && o.bucket == e.bucket) {
            return Err(err("a second entry for the same bucket".into()));
        }
    }
    Ok(f)
}

/// The tuning files shipped with the library, by arch (one line a tuned arch; a test checks
/// that it lists every file of `specs/tuning`).
pub const SHIPPED: &[(&str, &str)] = &[("sm_90", include_str!("../tuning/sm_90.ron"))];

/// The shipped tuning of `arch`, if it was tuned.
pub fn shipped(arch: &str) -> Option<TuningFile> {
    let (_, text) = SHIPPED.iter().find(|(a, _)| *a == arch)?;
    Some(
        parse_tuning(&format!("specs/tuning/{arch}.ron"), arch, text)
            .unwrap_or_else(|e| panic!("a shipped tuning file is invalid: {e}")),
    )
}

/// What a build makes of a family's tuning on one target: the tuned variants to build (name,
/// knob values, admission ranges) and the record of every bucket (tuned or default) for the
/// manifest.
pub struct Applied {
    /// `(variant, knob values, bucket)` to build and route first.
    pub variants: Vec<(String, Vec<u32>, Bucket)>,
    /// One record a bucket.
    pub records: Vec<TunedBucket>,
}

/// Applies `file` (the arch's tuning, if any) to `space` on `arch`.
pub fn apply(space: &TuneSpace, arch: &str, file: Option<&TuningFile>) -> Applied {
    let mut variants = vec![];
    let mut records = vec![];
    for b in &space.buckets {
        let entry = file.and_then(|f| {
            f.entries.iter().find(|e| e.kernel == space.family && e.bucket == b.name)
        });
        let tuned = entry.and_then(|e| {
            let name = tuned_variant(b.name);
            let values = space.values_of(e.knobs.as_ref()?).expect("checked when parsed");
            variants.push((name.clone(), values, b.clone()));
            e.tuned(name)
        });
        records.push(TunedBucket {
            arch: arch.to_string(),
            bucket: b.name.to_string(),
            shapes: b.shapes.clone(),
            tuned,
        });
    }
    Applied { variants, records }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_shipped_file_is_listed_and_parses() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tuning");
        let mut files: BTreeSet<String> = BTreeSet::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            if let Some(arch) = name.strip_suffix(".ron") {
                files.insert(arch.to_string());
            }
        }
        let listed: BTreeSet<String> = SHIPPED.iter().map(|(a, _)| a.to_string()).collect();
        assert_eq!(files, listed, "specs/tuning/*.ron and tune::SHIPPED differ");
        for (arch, _) in SHIPPED {
            kiln_ir::Target::by_name(arch).unwrap();
            assert!(shipped(arch).is_some());
        }
    }

    #[test]
    fn spaces_are_well_formed() {
        let mut families = BTreeSet::new();
        for s in spaces() {
            assert!(families.insert(s.family), "two spaces for {}", s.family);
            assert!(crate::family(s.family).is_some(), "{} is not a family", s.family);
            assert!(!s.buckets.is_empty() && !s.knobs.is_empty(), "{}", s.family);
            let mut names = BTreeSet::new();
            for b in &s.buckets {
                assert!(names.insert(b.name), "{}: bucket {} twice", s.family, b.name);
                assert!(
                    b.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                    "{}: bucket name {} must be a variant-name part",
                    s.family,
                    b.name
                );
                // The timed call falls in its bucket.
                for (p, lo, hi) in &b.shapes {
                    let v = b.case.scalars.iter().find(|c| c.0 == p).map(|c| c.2);
                    assert!(
                        v.is_some_and(|v| v >= *lo && v <= *hi),
                        "{}/{}: the timed call's {p} is outside {lo}..={hi}",
                        s.family,
                        b.name
                    );
                }
                assert!(
                    s.combinations().iter().any(|c| (s.fits)(b, c)),
                    "{}/{}: no candidate fits",
                    s.family,
                    b.name
                );
            }
            // Names are unique and parse back.
            let combos = s.combinations();
            let names: BTreeSet<String> = combos.iter().map(|c| s.candidate_name(c)).collect();
            assert_eq!(names.len(), combos.len(), "{}", s.family);
            let c = &combos[combos.len() / 2];
            assert_eq!(s.parse_candidate(&s.candidate_variant(c)).as_ref(), Some(c));
        }
    }

    /// Every candidate of every space builds (or says why not) and verifies, on an NVIDIA and
    /// an AMD arch at its wave size, and at least one candidate a bucket builds.
    #[test]
    fn candidates_build_and_verify() {
        for t in ["sm_90", "gfx1100", "gfx906"].map(|n| Target::by_name(n).unwrap()) {
            for s in spaces() {
                let built: Vec<Vec<u32>> = s
                    .combinations()
                    .into_iter()
                    .filter(|c| match (s.build)(t, t.default_wave(), c) {
                        Ok(k) => {
                            kiln_ir::verify(&k, Some(t)).unwrap_or_else(|e| {
                                panic!("{}/{} on {}: {e}", s.family, s.candidate_name(c), t.name)
                            });
                            true
                        }
                        Err(_) => false,
                    })
                    .collect();
                for b in &s.buckets {
                    assert!(
                        built.iter().any(|c| (s.fits)(b, c)),
                        "{}/{} on {}: no candidate builds",
                        s.family,
                        b.name,
                        t.name
                    );
                }
            }
        }
    }

    fn entry(kernel: &str, bucket: &str, knobs: Vec<(String, u32)>) -> TuningEntry {
        TuningEntry {
            kernel: kernel.into(),
            bucket: bucket.into(),
            knobs: Some(knobs),
            time_us: 3.0,
            default: ("split".into(), 3.5),
            runner_up: None,
            provenance: Provenance::default(),
        }
    }

    #[test]
    fn a_bad_tuning_file_is_refused_with_where() {
        let s = space("argmax_rows").unwrap();
        let good_knobs: Vec<(String, u32)> =
            s.knobs.iter().map(|k| (k.name.to_string(), k.values[0])).collect();
        let bucket = s.buckets[0].name;
        let file = |entries| TuningFile { arch: "sm_90".into(), entries };
        let text = |f: &TuningFile| ron::ser::to_string_pretty(f, Default::default()).unwrap();
        let ok = file(vec![entry("argmax_rows", bucket, good_knobs.clone())]);
        assert_eq!(parse_tuning("t.ron", "sm_90", &text(&ok)).unwrap(), ok);
        let e = parse_tuning("t.ron", "gfx1100", &text(&ok)).unwrap_err().to_string();
        assert!(e.contains("tunes sm_90, expected gfx1100"), "{e}");
        let e = parse_tuning("t.ron", "sm_90", "(arch: \"sm_90\", entries: [], extra: 1)")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.ron:1:") && e.contains("extra"), "{e}");
        let bad = file(vec![entry("argmux_rows", bucket, good_knobs.clone())]);
        let e = parse_tuning("t.ron", "sm_90", &text(&bad)).unwrap_err().to_string();
        assert!(e.contains("entry 0") && e.contains("tunable: argmax_rows"), "{e}");
        let bad = file(vec![entry("argmax_rows", "nowhere", good_knobs.clone())]);
        let e = parse_tuning("t.ron", "sm_90", &text(&bad)).unwrap_err().to_string();
        assert!(e.contains("no such bucket") && e.contains(bucket), "{e}");
        let mut knobs = good_knobs.clone();
        knobs[0].1 = 12345;
        let bad = file(vec![entry("argmax_rows", bucket, knobs)]);
        let e = parse_tuning("t.ron", "sm_90", &text(&bad)).unwrap_err().to_string();
        assert!(e.contains("12345") && e.contains("not in"), "{e}");
        let bad = file(vec![
            entry("argmax_rows", bucket, good_knobs.clone()),
            entry("argmax_rows", bucket, good_knobs.clone()),
        ]);
        let e = parse_tuning("t.ron", "sm_90", &text(&bad)).unwrap_err().to_string();
        assert!(e.contains("entry 1") && e.contains("second entry"), "{e}");
    }

    /// A knob added to a space after a file was tuned (the GEMVs' `e`, early loads) may be left
    /// out of that file's entries, which then mean its `omitted` value; a knob without one may
    /// not, and a value outside the space is refused as before.
    #[test]
    fn a_knob_added_later_may_be_left_out_of_older_entries() {
        let s = space("gemv_q8_0_rp").unwrap();
        let names: Vec<&str> = s.knobs.iter().map(|k| k.name).collect();
        assert_eq!(names, ["p", "r", "u", "w", "e"]);
        let knobs = |vals: &[u32]| -> Vec<(String, u32)> {
            names.iter().zip(vals).map(|(n, &v)| (n.to_string(), v)).collect()
        };
        assert_eq!(s.values_of(&knobs(&[1, 2, 8, 2])).unwrap(), [1, 2, 8, 2, 0]);
        assert_eq!(s.values_of(&knobs(&[1, 2, 8, 2, 1])).unwrap(), [1, 2, 8, 2, 1]);
        assert_eq!(s.values_of(&knobs(&[1, 2, 8, 2, 2])).unwrap(), [1, 2, 8, 2, 2]);
        let e = s.values_of(&knobs(&[1, 2, 8])).unwrap_err();
        assert!(e.contains("p, r, u given") && e.contains("p, r, u, w, e"), "{e}");
        let e = s.values_of(&knobs(&[1, 2, 8, 2, 3])).unwrap_err();
        assert!(e.contains("e=3") && e.contains("not in"), "{e}");
        // The shipped file's GEMV entries name four knobs: they still parse, as `e = 0`.
        let f = shipped("sm_90").unwrap();
        assert!(f.entries.iter().any(|e| e.kernel == "gemv_q8_0_rp" && e.knobs.is_some()));
        // Early candidates are timed only with one token a pass.
        let b = s.bucket("t2_nlo").unwrap();
        assert!(!(s.fits)(b, &[2, 2, 8, 2, 1]) && (s.fits)(b, &[2, 2, 8, 2, 0]));
        assert!(!(s.fits)(b, &[2, 2, 8, 2, 2]));
    }

    #[test]
    fn applying_a_file_tunes_its_buckets_and_records_the_rest_as_defaults() {
        let s = space("argmax_rows").unwrap();
        let knobs: Vec<(String, u32)> =
            s.knobs.iter().map(|k| (k.name.to_string(), *k.values.last().unwrap())).collect();
        let kept = TuningEntry { knobs: None, ..entry("argmax_rows", s.buckets[1].name, vec![]) };
        let f = TuningFile {
            arch: "sm_90".into(),
            entries: vec![entry("argmax_rows", s.buckets[0].name, knobs.clone()), kept],
        };
        let f = parse_tuning("t.ron", "sm_90", &ron::to_string(&f).unwrap()).unwrap();
        let a = apply(&s, "sm_90", Some(&f));
        // The bucket whose default won stays on the defaults.
        assert_eq!(a.variants.len(), 1);
        assert_eq!(a.variants[0].0, tuned_variant(s.buckets[0].name));
        assert_eq!(a.records.len(), s.buckets.len());
        assert_eq!(a.records[0].tuned.as_ref().unwrap().knobs, knobs);
        assert!(a.records[1..].iter().all(|r| r.tuned.is_none()));
        let none = apply(&s, "gfx1100", None);
        assert!(none.variants.is_empty() && none.records.iter().all(|r| r.tuned.is_none()));
    }
}
