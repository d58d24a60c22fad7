//! What `kiln tune` keeps beside the candidate package: the plan (which candidates were built,
//! which fell at build time and why) and the progress log (every gate verdict and every
//! timing, one JSON line each, appended as they come), so an interrupted run resumes where it
//! stopped instead of measuring again.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

/// The plan's file name inside the candidate package.
pub const PLAN_FILE: &str = "tune-plan.ron";
/// The progress log's file name inside the candidate package.
pub const PROGRESS_FILE: &str = "tune-progress.jsonl";

/// The candidates of one build.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The arch built for.
    pub arch: String,
    /// The LLVM that built them.
    pub llvm: String,
    /// One entry a family.
    pub families: Vec<FamilyPlan>,
}

/// The candidates of one family.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FamilyPlan {
    /// The family.
    pub family: String,
    /// Candidate variants built and within budget.
    pub candidates: Vec<String>,
    /// Candidates that fell at build time, and why.
    pub refused: Vec<(String, String)>,
}

impl Plan {
    /// Writes the plan into the package directory.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let text = ron::ser::to_string_pretty(self, ron::ser::PrettyConfig::default())
            .expect("a plan serializes");
        let p = dir.join(PLAN_FILE);
        std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
    }

    /// Reads the plan of a candidate package.
    pub fn read(dir: &Path) -> Result<Plan> {
        let p = dir.join(PLAN_FILE);
        let text = std::fs::read_to_string(&p).with_context(|| {
            format!(
                "reading {}: {} is not a candidate package of `kiln tune` (build one with the \
                 full kiln: kiln tune --arch A --kernel K --build-only --candidates {})",
                p.display(),
                dir.display(),
                dir.display()
            )
        })?;
        ron::from_str(&text).map_err(|e| {
            anyhow::anyhow!("{}:{}:{}: {}", p.display(), e.position.line, e.position.col, e.code)
        })
    }
}

/// One line of the progress log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Event {
    /// A candidate's parity verdict.
    Gate {
        /// The device it ran on.
        device: String,
        /// The family.
        family: String,
        /// The candidate variant.
        candidate: String,
        /// `None`: bit for bit; else why it fell.
        refused: Option<String>,
    },
    /// A timing of a variant (candidate or default) on a bucket's call.
    Time {
        /// The device.
        device: String,
        /// The family.
        family: String,
        /// The bucket.
        bucket: String,
        /// The variant timed.
        variant: String,
        /// Graph replay, us (median).
        us: f64,
    },
}

/// The progress log of a candidate package: read at start, appended as events come.
pub struct Progress {
    file: std::fs::File,
    /// Every event so far (this run's and earlier runs').
    pub events: Vec<Event>,
}

impl Progress {
    /// Opens (or starts) the log in `dir`. A line that does not parse (a run killed mid-write)
    /// is dropped with a warning: it is measured again.
    pub fn open(dir: &Path) -> Result<Progress> {
        let p = dir.join(PROGRESS_FILE);
        let mut events = vec![];
        let mut torn = false;
        if let Ok(text) = std::fs::read_to_string(&p) {
            torn = !text.is_empty() && !text.ends_with('\n');
            for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
                match serde_json::from_str::<Event>(line) {
                    Ok(e) => events.push(e),
                    Err(e) => eprintln!("{}:{}: dropped ({e}); measured again", p.display(), i + 1),
                }
            }
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .with_context(|| format!("opening {}", p.display()))?;
        let mut progress = Progress { file, events };
        if torn {
            // The next line starts on a line of its own.
            writeln!(progress.file).context("appending to the progress log")?;
        }
        Ok(progress)
    }

    /// Records an event (flushed at once: a kill loses at most the line being written).
    pub fn record(&mut self, e: Event) -> Result<()> {
        let line = serde_json::to_string(&e).expect("an event serializes");
        writeln!(self.file, "{line}").context("appending to the progress log")?;
        self.file.flush()?;
        self.events.push(e);
        Ok(())
    }

    /// The gate verdict of a candidate on `device`, if it was given.
    pub fn gate(&self, device: &str, family: &str, candidate: &str) -> Option<Option<String>> {
        self.events.iter().rev().find_map(|e| match e {
            Event::Gate { device: d, family: f, candidate: c, refused }
                if d == device && f == family && c == candidate =>
            {
                Some(refused.clone())
            }
            Event::Gate { .. } | Event::Time { .. } => None,
        })
    }

    /// The time of a variant on a bucket on `device`, if it was measured.
    pub fn time(&self, device: &str, family: &str, bucket: &str, variant: &str) -> Option<f64> {
        self.events.iter().rev().find_map(|e| match e {
            Event::Time { device: d, family: f, bucket: b, variant: v, us }
                if d == device && f == family && b == bucket && v == variant =>
            {
                Some(*us)
            }
            Event::Time { .. } | Event::Gate { .. } => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_survives_a_torn_line_and_resumes() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = Progress::open(dir.path()).unwrap();
        p.record(Event::Gate {
            device: "d".into(),
            family: "f".into(),
            candidate: "cand_a1".into(),
            refused: Some("differs".into()),
        })
        .unwrap();
        p.record(Event::Time {
            device: "d".into(),
            family: "f".into(),
            bucket: "b".into(),
            variant: "cand_a2".into(),
            us: 3.5,
        })
        .unwrap();
        drop(p);
        // A run killed mid-line.
        let path = dir.path().join(PROGRESS_FILE);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"kind\":\"time\",\"dev");
        std::fs::write(&path, text).unwrap();
        let mut p = Progress::open(dir.path()).unwrap();
        assert_eq!(p.events.len(), 2);
        p.record(Event::Gate {
            device: "d".into(),
            family: "f".into(),
            candidate: "cand_a3".into(),
            refused: None,
        })
        .unwrap();
        drop(p);
        let p = Progress::open(dir.path()).unwrap();
        assert_eq!(p.events.len(), 3, "the line after the torn one is whole");
        assert_eq!(p.gate("d", "f", "cand_a3"), Some(None));
        assert_eq!(p.gate("d", "f", "cand_a1"), Some(Some("differs".into())));
        assert_eq!(p.gate("other device", "f", "cand_a1"), None);
        assert_eq!(p.time("d", "f", "b", "cand_a2"), Some(3.5));
        assert_eq!(p.time("d", "f", "b", "cand_a1"), None);
    }
}
