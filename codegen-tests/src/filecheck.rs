//! A small FileCheck: ordered substring matching over lines, with the directives kiln's cases use.
//!
//! - `CHECK: text` — the next line at or after the current position containing `text`.
//! - `CHECK-NEXT: text` — the line right after the previous match contains `text`.
//! - `CHECK-SAME: text` — the line of the previous match also contains `text`.
//! - `CHECK-NOT: text` — no line between the previous match and the next positive match (or the
//!   end of the block) contains `text`. Only that stretch: to forbid a text everywhere, use the
//!   case's implicit-check-not header.
//! - `CHECK-COUNT-N: text` — N successive matches, as N `CHECK:` lines (follow it with a
//!   `CHECK-NOT:` of the same text to say "exactly N").
//! - `CHECK-LABEL: text` — splits the input into blocks: every label is found first, in order,
//!   and the directives after a label match only between it and the next label (the line after
//!   the label onwards; `CHECK-NEXT`/`CHECK-SAME` right after a label refer to the label's line).
//!   A `CHECK-NOT` therefore never reaches past the next label, and a match never crosses one.
//!
//! Implicit check-nots (`; implicit-check-not: a|b` in a case, LLVM FileCheck's
//! `--implicit-check-not`): each text is forbidden on every line of the input that no positive
//! directive matched, as if a `CHECK-NOT:` stood before every positive directive and at the end
//! of every block.
//!
//! Matching is by substring with runs of blanks collapsed (assembly separates with tabs),
//! never by regex, so a pattern means what it says.

use std::fmt;

/// One directive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Directive {
    /// `CHECK:`
    Check(String),
    /// `CHECK-NEXT:`
    Next(String),
    /// `CHECK-SAME:`
    Same(String),
    /// `CHECK-NOT:`
    Not(String),
    /// `CHECK-COUNT-N:`
    Count(usize, String),
    /// `CHECK-LABEL:`
    Label(String),
}

impl Directive {
    /// Parses one line; `None` when it is not a directive.
    pub fn parse(line: &str) -> Option<Result<Directive, String>> {
        let line = line.trim();
        let (head, text) = line.split_once(':')?;
        let text = normalize(text);
        Some(Ok(match head.trim() {
            "CHECK" => Directive::Check(text),
            "CHECK-NEXT" => Directive::Next(text),
            "CHECK-SAME" => Directive::Same(text),
            "CHECK-NOT" => Directive::Not(text),
            "CHECK-LABEL" => Directive::Label(text),
            h => match h.strip_prefix("CHECK-COUNT-").map(str::parse::<usize>) {
                Some(Ok(n)) if n > 0 => Directive::Count(n, text),
                Some(_) => return Some(Err(format!("bad count in `{line}`"))),
                None => return None,
            },
        }))
    }

    fn text(&self) -> &str {
        match self {
            Directive::Check(t)
            | Directive::Next(t)
            | Directive::Same(t)
            | Directive::Not(t)
            | Directive::Count(_, t)
            | Directive::Label(t) => t,
        }
    }
}

impl fmt::Display for Directive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Directive::Check(t) => write!(f, "CHECK: {t}"),
            Directive::Next(t) => write!(f, "CHECK-NEXT: {t}"),
            Directive::Same(t) => write!(f, "CHECK-SAME: {t}"),
            Directive::Not(t) => write!(f, "CHECK-NOT: {t}"),
            Directive::Count(n, t) => write!(f, "CHECK-COUNT-{n}: {t}"),
            Directive::Label(t) => write!(f, "CHECK-LABEL: {t}"),
        }
    }
}

/// Collapses runs of whitespace to one space and trims.
pub fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A failed check: which directive, and where in the input the search stood.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// Index of the failing directive.
    pub directive: usize,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "directive {}: {}", self.directive + 1, self.message)
    }
}

/// Runs `directives` over `input`.
pub fn check(directives: &[Directive], input: &str) -> Result<(), Mismatch> {
    check_with(directives, input, &[])
}

/// Runs `directives` over `input`, with `implicit_not` texts forbidden on every unmatched line.
pub fn check_with(
    directives: &[Directive],
    input: &str,
    implicit_not: &[String],
) -> Result<(), Mismatch> {
    let lines: Vec<String> = input.lines().map(normalize).collect();
    let implicit: Vec<String> =
        implicit_not.iter().map(|t| normalize(t)).filter(|t| !t.is_empty()).collect();
    // The labels first, in order: each splits the input.
    let mut labels: Vec<(usize, usize)> = vec![]; // (directive index, line)
    let mut from = 0usize;
    for (i, d) in directives.iter().enumerate() {
        if let Directive::Label(t) = d {
            let Some(l) = (from..lines.len()).find(|&l| lines[l].contains(t.as_str())) else {
                return Err(Mismatch {
                    directive: i,
                    message: format!("label `{t}` not found; {}", excerpt(&lines, from)),
                });
            };
            labels.push((i, l));
            from = l + 1;
        }
    }
    // Blocks: before the first label, then after each label up to the next one.
    let mut start_d = 0usize;
    let mut start_l = 0usize;
    let mut last = None;
    for k in 0..=labels.len() {
        let (end_d, end_l) = labels.get(k).copied().unwrap_or((directives.len(), lines.len()));
        let block = Block { lines: &lines, start: start_l, end: end_l, implicit: &implicit };
        block.run(&directives[start_d..end_d], start_d, last)?;
        if let Some(&(d, l)) = labels.get(k) {
            start_d = d + 1;
            start_l = l + 1;
            last = Some(l);
        }
    }
    Ok(())
}

fn excerpt(lines: &[String], at: usize) -> String {
    let end = (at + 3).min(lines.len());
    let shown: Vec<&str> = lines[at.min(lines.len())..end].iter().map(String::as_str).collect();
    if shown.is_empty() {
        "end of input".into()
    } else {
        format!("input from line {}: {:?}", at + 1, shown)
    }
}

/// The lines `start..end` of the input, matched by the directives of one label's block.
struct Block<'a> {
    lines: &'a [String],
    start: usize,
    end: usize,
    implicit: &'a [String],
}

impl Block<'_> {
    /// Fails on the first of `pending` (and the implicit texts) found in `from..to`.
    fn check_nots(
        &self,
        pending: &mut Vec<(usize, &str)>,
        from: usize,
        to: usize,
        at: usize,
    ) -> Result<(), Mismatch> {
        let implicit = self.implicit.iter().map(|t| (at, t.as_str(), true));
        let explicit: Vec<(usize, &str, bool)> =
            pending.drain(..).map(|(i, t)| (i, t, false)).collect();
        for (i, t, is_implicit) in explicit.into_iter().chain(implicit) {
            if let Some(l) = (from..to).find(|&l| self.lines[l].contains(t)) {
                let kind = if is_implicit { "implicit-check-not " } else { "" };
                return Err(Mismatch {
                    directive: i,
                    message: format!("{kind}`{t}` found on line {}: `{}`", l + 1, self.lines[l]),
                });
            }
        }
        Ok(())
    }

    /// Runs `ds` (directive `base` onwards, no labels among them); `last` is the line of the
    /// previous match (the label's).
    fn run(&self, ds: &[Directive], base: usize, mut last: Option<usize>) -> Result<(), Mismatch> {
        let lines = self.lines;
        let fail = |i: usize, message: String| Err(Mismatch { directive: base + i, message });
        let find = |from: usize, t: &str| (from..self.end).find(|&l| lines[l].contains(t));
        // `pos`: the first line a positive match may use.
        let mut pos = self.start;
        let mut pending_not: Vec<(usize, &str)> = vec![];
        for (i, d) in ds.iter().enumerate() {
            match d {
                Directive::Not(t) => pending_not.push((base + i, t)),
                Directive::Label(_) => unreachable!("labels split the blocks"),
                Directive::Check(t) | Directive::Count(_, t) => {
                    let n = if let Directive::Count(n, _) = d { *n } else { 1 };
                    let start = pos;
                    for k in 0..n {
                        match find(pos, t) {
                            Some(l) => {
                                let from = if k == 0 { start } else { pos };
                                if k == 0 {
                                    self.check_nots(&mut pending_not, from, l, base + i)?;
                                } else {
                                    self.check_nots(&mut vec![], from, l, base + i)?;
                                }
                                last = Some(l);
                                pos = l + 1;
                            }
                            None if n > 1 => {
                                return fail(
                                    i,
                                    format!(
                                        "`{t}`: found {k} of {n} after line {start}; {}",
                                        excerpt(lines, start)
                                    ),
                                )
                            }
                            None => {
                                return fail(
                                    i,
                                    format!("`{t}` not found; {}", excerpt(lines, start)),
                                )
                            }
                        }
                    }
                }
                Directive::Same(t) => match last {
                    Some(l) if lines[l].contains(d.text()) => {}
                    Some(l) => {
                        return fail(
                            i,
                            format!("`{t}` not on the matched line {}: `{}`", l + 1, lines[l]),
                        )
                    }
                    None => return fail(i, "CHECK-SAME without a previous match".into()),
                },
                Directive::Next(t) => {
                    let Some(prev) = last else {
                        return fail(i, "CHECK-NEXT without a previous match".into());
                    };
                    let l = prev + 1;
                    if l >= self.end || !lines[l].contains(d.text()) {
                        return fail(
                            i,
                            format!("`{t}` not on the next line; {}", excerpt(lines, l)),
                        );
                    }
                    self.check_nots(&mut pending_not, pos, l, base + i)?;
                    last = Some(l);
                    pos = l + 1;
                }
            }
        }
        let at = base + ds.len().saturating_sub(1);
        self.check_nots(&mut pending_not, pos, self.end, at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ds(text: &str) -> Vec<Directive> {
        text.lines().filter_map(Directive::parse).map(Result::unwrap).collect()
    }

    const ASM: &str = "\ts_wait_dscnt 0x0\n\ts_barrier_signal -1\n\ts_barrier_wait -1\n\tds_load_b32 v0, v0\n\tv_add_f32_dpp v1, v1, v1 row_xmask:1\n\tv_add_f32_dpp v1, v1, v1 row_xmask:2\n";

    #[test]
    fn ordered_next_not_count() {
        assert!(check(&ds("CHECK: s_wait_dscnt 0x0\nCHECK-NEXT: s_barrier_signal -1\nCHECK-NEXT: s_barrier_wait -1\nCHECK-NOT: global_inv\nCHECK: ds_load"), ASM).is_ok());
        assert!(check(&ds("CHECK-COUNT-2: row_xmask\nCHECK-NOT: row_xmask"), ASM).is_ok());
        assert!(check(&ds("CHECK-COUNT-3: row_xmask"), ASM).is_err());
        assert!(check(&ds("CHECK: v_add_f32_dpp\nCHECK-SAME: row_xmask:1"), ASM).is_ok());
        assert!(check(&ds("CHECK: v_add_f32_dpp\nCHECK-SAME: row_xmask:2"), ASM).is_err());
        assert!(check(&ds("CHECK: s_barrier_signal\nCHECK-NEXT: ds_load"), ASM).is_err());
        assert!(check(&ds("CHECK: s_barrier_wait\nCHECK: s_wait_dscnt"), ASM).is_err());
        let e = check(&ds("CHECK: s_wait_dscnt\nCHECK-NOT: s_barrier_wait\nCHECK: ds_load"), ASM)
            .unwrap_err();
        assert_eq!(e.directive, 1);
    }

    /// The stretch a `CHECK-NOT` covers ends at the next positive match: a text after it passes
    /// unless an implicit check-not forbids it on every unmatched line.
    #[test]
    fn check_not_is_local_and_implicit_check_not_is_global() {
        let not_then_match = ds("CHECK-NOT: row_xmask\nCHECK: s_wait_dscnt");
        assert!(check(&not_then_match, ASM).is_ok(), "the narrow reading");
        let only = ds("CHECK: s_wait_dscnt");
        let e = check_with(&only, ASM, &["row_xmask".into()]).unwrap_err();
        assert!(e.message.contains("implicit-check-not `row_xmask` found on line 5"), "{e}");
        // Matched lines are exempt: exactly two row_xmask lines.
        let two = ds("CHECK-COUNT-2: row_xmask");
        assert!(check_with(&two, ASM, &["row_xmask".into()]).is_ok());
        let one = ds("CHECK: row_xmask:1");
        assert!(check_with(&one, ASM, &["row_xmask".into()]).is_err());
        // Between the matches of a count too.
        let asm = "a x\nb\na y\n";
        let e = check_with(&ds("CHECK-COUNT-2: a"), asm, &["b".into()]).unwrap_err();
        assert!(e.message.contains("line 2"), "{e}");
    }

    #[test]
    fn labels_split_the_input() {
        let asm = "f:\n  load\n  add\ng:\n  store\n  add\n";
        assert!(check(&ds("CHECK-LABEL: f:\nCHECK: add\nCHECK-LABEL: g:\nCHECK: add"), asm).is_ok());
        // A match never crosses a label: f has no store.
        let e = check(&ds("CHECK-LABEL: f:\nCHECK: store\nCHECK-LABEL: g:"), asm).unwrap_err();
        assert_eq!(e.directive, 1, "{e}");
        // A CHECK-NOT at the end of a block stops at the next label...
        assert!(check(&ds("CHECK-LABEL: f:\nCHECK: load\nCHECK-NOT: store\nCHECK-LABEL: g:"), asm)
            .is_ok());
        // ...and covers the whole block after the last one.
        let e = check(&ds("CHECK-LABEL: g:\nCHECK-NOT: add"), asm).unwrap_err();
        assert!(e.message.contains("line 6"), "{e}");
        // CHECK-NEXT right after a label is the label's next line.
        assert!(check(&ds("CHECK-LABEL: g:\nCHECK-NEXT: store"), asm).is_ok());
        assert!(check(&ds("CHECK-LABEL: g:\nCHECK-NEXT: add"), asm).is_err());
        // Labels must be in order.
        let e = check(&ds("CHECK-LABEL: g:\nCHECK-LABEL: f:"), asm).unwrap_err();
        assert!(e.message.contains("label `f:` not found"), "{e}");
        // Implicit check-nots hold in every block, not on label lines.
        assert!(check_with(&ds("CHECK-LABEL: f:\nCHECK-LABEL: g:"), asm, &["f:".into()]).is_ok());
        assert!(check_with(&ds("CHECK-LABEL: f:"), asm, &["store".into()]).is_err());
    }

    #[test]
    fn blanks_collapse() {
        assert!(check(&ds("CHECK: v_add_f32_dpp   v1, v1, v1 row_xmask:2"), ASM).is_ok());
    }
}
