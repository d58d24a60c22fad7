//! A small FileCheck: ordered substring matching over lines, with the directives kiln's cases use.
//!
//! - `CHECK: text` — the next line at or after the current position containing `text`.
//! - `CHECK-NEXT: text` — the line right after the previous match contains `text`.
//! - `CHECK-SAME: text` — the line of the previous match also contains `text`.
//! - `CHECK-NOT: text` — no line between the previous match and the next positive match (or the
//!   end) contains `text`.
//! - `CHECK-COUNT-N: text` — N successive matches, as N `CHECK:` lines (follow it with a
//!   `CHECK-NOT:` of the same text to say "exactly N").
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
            | Directive::Count(_, t) => t,
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
    let lines: Vec<String> = input.lines().map(normalize).collect();
    let fail = |i: usize, message: String| Err(Mismatch { directive: i, message });
    let excerpt = |at: usize| -> String {
        let end = (at + 3).min(lines.len());
        let shown: Vec<&str> = lines[at.min(lines.len())..end].iter().map(String::as_str).collect();
        if shown.is_empty() {
            "end of input".into()
        } else {
            format!("input from line {}: {:?}", at + 1, shown)
        }
    };
    // `pos`: the first line a positive match may use; `last`: the line of the previous match.
    let mut pos = 0usize;
    let mut last: Option<usize> = None;
    let mut pending_not: Vec<(usize, &str)> = vec![];
    let find = |from: usize, t: &str| (from..lines.len()).find(|&l| lines[l].contains(t));
    let check_nots =
        |pending: &mut Vec<(usize, &str)>, from: usize, to: usize| -> Result<(), Mismatch> {
            for (i, t) in pending.drain(..) {
                if let Some(l) = (from..to).find(|&l| lines[l].contains(t)) {
                    return Err(Mismatch {
                        directive: i,
                        message: format!("`{t}` found on line {}: `{}`", l + 1, lines[l]),
                    });
                }
            }
            Ok(())
        };
    for (i, d) in directives.iter().enumerate() {
        match d {
            Directive::Not(t) => pending_not.push((i, t)),
            Directive::Check(t) | Directive::Count(_, t) => {
                let n = if let Directive::Count(n, _) = d { *n } else { 1 };
                let start = pos;
                for k in 0..n {
                    match find(pos, t) {
                        Some(l) => {
                            if k == 0 {
                                check_nots(&mut pending_not, start, l)?;
                            }
                            last = Some(l);
                            pos = l + 1;
                        }
                        None if n > 1 => {
                            return fail(
                                i,
                                format!(
                                    "`{t}`: found {k} of {n} after line {start}; {}",
                                    excerpt(start)
                                ),
                            )
                        }
                        None => return fail(i, format!("`{t}` not found; {}", excerpt(start))),
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
                if l >= lines.len() || !lines[l].contains(d.text()) {
                    return fail(i, format!("`{t}` not on the next line; {}", excerpt(l)));
                }
                check_nots(&mut pending_not, pos, l)?;
                last = Some(l);
                pos = l + 1;
            }
        }
    }
    check_nots(&mut pending_not, pos, lines.len())
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

    #[test]
    fn blanks_collapse() {
        assert!(check(&ds("CHECK: v_add_f32_dpp   v1, v1, v1 row_xmask:2"), ASM).is_ok());
    }
}
