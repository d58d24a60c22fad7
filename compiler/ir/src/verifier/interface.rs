//! The kernel's interface: name, wave, workgroup, parameters, shapes, LDS and private sizes.

use super::*;

impl Verifier<'_> {
    pub(super) fn check_interface(&mut self) {
        let k = self.k;
        if k.name.is_empty() || k.name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            self.report(
                Location::Kernel,
                format!("name: expected a symbol name without spaces, found {:?}", k.name),
            );
        }
        let w = k.wave_size;
        if w != 32 && w != 64 {
            self.report(Location::Kernel, format!("wave size: expected 32 or 64, found {w}"));
        }
        let [x, y, z] = k.workgroup_size;
        let size = format!("[{x},{y},{z}]");
        if x == 0 || y == 0 || z == 0 {
            self.report(
                Location::Kernel,
                format!("workgroup size: expected every dimension at least 1, found {size}"),
            );
        } else {
            let lanes = x as u64 * y as u64 * z as u64;
            if lanes > 1024 {
                self.report(
                    Location::Kernel,
                    format!(
                        "workgroup size: expected at most 1024 lanes, found {lanes} lanes ({size})"
                    ),
                );
            } else if lanes.checked_rem(w as u64).is_some_and(|r| r != 0) {
                self.report(
                    Location::Kernel,
                    format!(
                        "workgroup size: expected a multiple of the wave size {w} (whole waves), \
                         found {lanes} lanes ({size})"
                    ),
                );
            }
        }
        for (d, e) in k.grid.iter().enumerate() {
            self.check_shape(
                Location::Kernel,
                &format!("grid dimension {}", ["x", "y", "z"][d]),
                e,
            );
        }
        let mut names: HashMap<&str, Param> = HashMap::new();
        for (p, d) in &k.params {
            let loc = self.param_loc(p);
            if d.name.is_empty() {
                self.report(loc.clone(), "name: expected a name, found an empty one");
            } else if let Some(first) = names.insert(&d.name, p) {
                self.report(
                    loc.clone(),
                    format!(
                        "name: expected a unique name, found {:?} already used by {first}",
                        d.name
                    ),
                );
                names.insert(&d.name, first);
            }
            match &d.kind {
                ParamKind::Buffer { len, .. } => {
                    if let Some(e) = len {
                        self.check_shape(loc.clone(), "length", e);
                    } else if d.workspace {
                        self.report(
                            loc.clone(),
                            "workspace: expected a length (the runtime allocates it), found none",
                        );
                    }
                }
                ParamKind::Scalar(t) => {
                    if d.workspace {
                        self.report(
                            loc.clone(),
                            format!("workspace: expected a buffer, found a scalar {t}"),
                        );
                    }
                }
            }
            self.check_rules(loc, &d.kind, &d.rules);
        }
        for (s, d) in &k.lds {
            if d.len == 0 {
                let loc = Location::Lds { slot: s, name: d.name.clone() };
                self.report(loc, "length: expected at least 1 element, found 0");
            }
        }
        for (s, d) in &k.private {
            if d.len == 0 {
                let loc = Location::Private { slot: s, name: d.name.clone() };
                self.report(loc, "length: expected at least 1 element, found 0");
            }
        }
    }

    pub(super) fn check_shape(&mut self, loc: Location, what: &str, e: &ShapeExpr) {
        if e.den == 0 {
            self.report(loc.clone(), format!("{what}: expected a divisor of at least 1, found 0"));
        }
        for &p in &e.factors {
            match &self.k.params[p].kind {
                ParamKind::Scalar(t) if t.is_int() => {}
                ParamKind::Scalar(t) => {
                    let found = format!("{} of type {t}", self.param_desc(p));
                    self.report(
                        loc.clone(),
                        format!("{what}: expected integer scalar parameters, found {found}"),
                    );
                }
                ParamKind::Buffer { .. } => {
                    let found = format!("{}, a buffer", self.param_desc(p));
                    self.report(
                        loc.clone(),
                        format!("{what}: expected integer scalar parameters, found {found}"),
                    );
                }
            }
        }
    }

    /// Scalar rules: only on integer scalars; a multiple of at least 1; bounds that some value
    /// meets.
    pub(super) fn check_rules(&mut self, loc: Location, kind: &ParamKind, rules: &[ScalarRule]) {
        if rules.is_empty() {
            return;
        }
        match kind {
            ParamKind::Scalar(t) if t.is_int() => {}
            ParamKind::Scalar(t) => {
                let r = rules[0].text();
                self.report(
                    loc,
                    format!("rule {r}: expected an integer scalar, found a scalar {t}"),
                );
                return;
            }
            ParamKind::Buffer { elem, .. } => {
                let r = rules[0].text();
                self.report(
                    loc,
                    format!("rule {r}: expected an integer scalar, found a buffer<{elem}>"),
                );
                return;
            }
        }
        let (mut lo, mut hi) = (0u64, u64::MAX);
        for &r in rules {
            match r {
                ScalarRule::MultipleOf(0) => self.report(
                    loc.clone(),
                    "rule multiple_of=0: expected a multiple of at least 1, found 0",
                ),
                ScalarRule::MultipleOf(_) => {}
                ScalarRule::AtLeast(n) => lo = lo.max(n),
                ScalarRule::AtMost(n) => hi = hi.min(n),
            }
        }
        if lo > hi {
            self.report(
                loc,
                format!(
                    "rules: expected bounds some value meets, found at least {lo} and at most {hi}"
                ),
            );
        }
    }
}
