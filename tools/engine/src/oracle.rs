//! The comparison with the outside oracle: llama.cpp's teacher-forced top-8 logits at every
//! position of a few prompts (`tests/data/oracle-*.json`, written by `tools/engine/ref/oracle.cpp`
//! through `scripts/engine-oracle.sh`), against the engine's logits for the same ids.
//!
//! Per position: is the engine's top-1 llama.cpp's, and for each of llama.cpp's top 8 ids the
//! difference of the two logits. A differing top-1 is a "near tie" when llama.cpp's own logits
//! of the two ids are within [`Agreement::NEAR_TIE`] of each other (two builds of one model
//! disagree there first).

use crate::model::{Decoder, ModelError, MAX_T};

/// Why a fixture could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    /// Not JSON of the expected shape.
    #[error("oracle fixture: {0}")]
    Format(String),
}

/// One prompt of a fixture.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptRef {
    /// The text.
    pub text: String,
    /// llama.cpp's ids.
    pub ids: Vec<u32>,
    /// llama.cpp's top-1 after each id.
    pub top1: Vec<u32>,
    /// llama.cpp's top 8 `(id, logit)` after each id.
    pub top8: Vec<Vec<(u32, f32)>>,
}

/// A fixture: prompts with llama.cpp's logits.
#[derive(Clone, Debug, PartialEq)]
pub struct Fixture {
    /// The model file it was made from.
    pub model: String,
    /// The prompts.
    pub prompts: Vec<PromptRef>,
}

fn bad(what: impl Into<String>) -> FixtureError {
    FixtureError::Format(what.into())
}

fn u32s(v: &serde_json::Value, what: &str) -> Result<Vec<u32>, FixtureError> {
    v.as_array()
        .ok_or_else(|| bad(format!("{what}: expected an array")))?
        .iter()
        .map(|x| x.as_u64().map(|u| u as u32).ok_or_else(|| bad(format!("{what}: expected ids"))))
        .collect()
}

impl Fixture {
    /// Parses a fixture's JSON.
    pub fn parse(text: &str) -> Result<Fixture, FixtureError> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        let model = v["model"].as_str().unwrap_or("").to_string();
        let prompts = v["prompts"].as_array().ok_or_else(|| bad("no `prompts` array"))?;
        let mut out = vec![];
        for (i, p) in prompts.iter().enumerate() {
            let ids = u32s(&p["ids"], &format!("prompt {i} ids"))?;
            let top1 = u32s(&p["top1"], &format!("prompt {i} top1"))?;
            let top8 = p["top8"]
                .as_array()
                .ok_or_else(|| bad(format!("prompt {i}: no top8")))?
                .iter()
                .map(|pos| {
                    pos.as_array()
                        .ok_or_else(|| bad(format!("prompt {i}: a top8 entry is not an array")))?
                        .iter()
                        .map(|pair| match (pair[0].as_u64(), pair[1].as_f64()) {
                            (Some(id), Some(l)) => Ok((id as u32, l as f32)),
                            _ => Err(bad(format!("prompt {i}: a top8 pair is not [id, logit]"))),
                        })
                        .collect::<Result<Vec<_>, _>>()
                })
                .collect::<Result<Vec<_>, _>>()?;
            if top1.len() != ids.len() || top8.len() != ids.len() {
                return Err(bad(format!("prompt {i}: ids, top1 and top8 differ in length")));
            }
            let text = p["text"].as_str().unwrap_or("").to_string();
            out.push(PromptRef { text, ids, top1, top8 });
        }
        Ok(Fixture { model, prompts: out })
    }

    /// Positions over all prompts.
    pub fn positions(&self) -> usize {
        self.prompts.iter().map(|p| p.ids.len()).sum()
    }
}

/// How the engine agreed with the oracle.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Agreement {
    /// Positions compared.
    pub positions: usize,
    /// Positions whose top-1 equals llama.cpp's.
    pub top1_equal: usize,
    /// Differing top-1s that are near ties in llama.cpp's own logits.
    pub near_ties: usize,
    /// The largest `|kiln - llama.cpp|` over the top-8 logits of every position.
    pub max_abs_diff: f32,
    /// The mean of `|kiln - llama.cpp|` over the same.
    pub mean_abs_diff: f64,
    /// Where the largest difference is: `(prompt, position, id, kiln, llama.cpp)`.
    pub worst: Option<(usize, usize, u32, f32, f32)>,
    /// The positions whose top-1 differs: `(prompt, position, kiln, llama.cpp)`.
    pub mismatches: Vec<(usize, usize, u32, u32)>,
    /// Per prompt, the BLAKE3 hash of the engine's logits at every position compared (f32,
    /// little-endian, in order): two runs with equal digests gave the same logits bit for bit.
    pub digests: Vec<String>,
}

impl Agreement {
    /// A logit gap in llama.cpp's own logits under which a differing top-1 counts as a near tie.
    pub const NEAR_TIE: f32 = 0.5;

    /// The share of positions with the same top-1.
    pub fn top1_rate(&self) -> f64 {
        self.top1_equal as f64 / self.positions.max(1) as f64
    }
}

impl std::fmt::Display for Agreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "top-1 equal at {}/{} positions ({:.2}%; {} of the others near ties under {}), top-8 \
             logits |kiln - llama.cpp| max {:.4}, mean {:.4}",
            self.top1_equal,
            self.positions,
            100.0 * self.top1_rate(),
            self.near_ties,
            Agreement::NEAR_TIE,
            self.max_abs_diff,
            self.mean_abs_diff
        )?;
        if let Some((p, i, id, k, l)) = self.worst {
            write!(f, " (prompt {p} position {i} id {id}: kiln {k:.4}, llama.cpp {l:.4})")?;
        }
        Ok(())
    }
}

/// Runs the first `max_positions` ids of each prompt (all when `None`) through `dec` in steps of
/// `chunk` tokens (1..=8) and compares with the oracle; `progress` gets each prompt's index.
pub fn compare(
    dec: &mut Decoder<'_>,
    fx: &Fixture,
    chunk: usize,
    max_positions: Option<usize>,
    progress: &mut dyn FnMut(usize, &Agreement),
) -> Result<Agreement, ModelError> {
    let chunk = chunk.clamp(1, MAX_T);
    let mut a = Agreement::default();
    let mut sum = 0f64;
    let mut count = 0usize;
    for (pi, p) in fx.prompts.iter().enumerate() {
        let n = max_positions.map_or(p.ids.len(), |m| m.min(p.ids.len()));
        dec.reset();
        let mut digest = blake3::Hasher::new();
        let mut pos = 0;
        while pos < n {
            let ids = &p.ids[pos..(pos + chunk).min(n)];
            let out = dec.step(ids, true)?;
            let logits = out.logits.expect("asked for logits");
            let vocab = logits.len() / ids.len();
            for (j, &next) in out.next.iter().enumerate() {
                let i = pos + j;
                let row = &logits[j * vocab..(j + 1) * vocab];
                let bytes: Vec<u8> = row.iter().flat_map(|x| x.to_le_bytes()).collect();
                digest.update(&bytes);
                a.positions += 1;
                if next == p.top1[i] {
                    a.top1_equal += 1;
                } else {
                    let lref = |id: u32| p.top8[i].iter().find(|x| x.0 == id).map(|x| x.1);
                    let near = match (lref(next), lref(p.top1[i])) {
                        (Some(x), Some(y)) => (y - x).abs() <= Agreement::NEAR_TIE,
                        _ => false,
                    };
                    a.near_ties += usize::from(near);
                    a.mismatches.push((pi, i, next, p.top1[i]));
                }
                for &(id, l) in &p.top8[i] {
                    let k = row[id as usize];
                    let d = (k - l).abs();
                    sum += d as f64;
                    count += 1;
                    // A NaN difference stays the worst once found.
                    if !a.max_abs_diff.is_nan() && (d.is_nan() || d > a.max_abs_diff) {
                        a.max_abs_diff = d;
                        a.worst = Some((pi, i, id, k, l));
                    }
                }
            }
            pos += ids.len();
        }
        a.mean_abs_diff = sum / count.max(1) as f64;
        a.digests.push(digest.finalize().to_hex().to_string());
        progress(pi, &a);
    }
    Ok(a)
}
