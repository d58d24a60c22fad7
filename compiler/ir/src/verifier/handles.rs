//! Handles: every entity anything refers to is in range, and definitions agree both ways.

use super::*;

impl Verifier<'_> {
    pub(super) fn check_handles(&mut self) {
        let k = self.k;
        let (nv, ni, nb, np) = (k.values.len(), k.insts.len(), k.blocks.len(), k.params.len());
        let (nl, npriv) = (k.lds.len(), k.private.len());
        if k.entry.index() >= nb {
            self.report(
                Location::Kernel,
                format!(
                    "entry block {}: expected a block below block{nb}, found out of range",
                    k.entry
                ),
            );
        }
        let mut bad = Vec::new();
        let shape_params = |e: &ShapeExpr, what: &str, bad: &mut Vec<(Location, String)>| {
            for &p in &e.factors {
                if p.index() >= np {
                    bad.push((
                        Location::Kernel,
                        format!("{what} refers to {p}, out of range ({np} parameters)"),
                    ));
                }
            }
        };
        for (d, e) in k.grid.iter().enumerate() {
            shape_params(e, &format!("grid dimension {}", ["x", "y", "z"][d]), &mut bad);
        }
        for (p, d) in &k.params {
            if let ParamKind::Buffer { len: Some(e), .. } = &d.kind {
                shape_params(e, &format!("the length of {p} ({})", d.name), &mut bad);
            }
        }
        for (v, d) in &k.values {
            // The definition's side of the link; the instruction's and block's sides are below.
            let found = match d.def {
                ValueDef::Result(i, n) if i.index() < ni => k.insts[i].results.get(n as usize),
                ValueDef::Param(b, n) if b.index() < nb => k.blocks[b].params.get(n as usize),
                ValueDef::Result(i, _) => {
                    bad.push((
                        Location::Value(v),
                        format!("defined as a result of {i}: expected an instruction in range, found {i} of {ni}"),
                    ));
                    continue;
                }
                ValueDef::Param(b, _) => {
                    bad.push((
                        Location::Value(v),
                        format!("defined as a parameter of {b}: expected a block in range, found {b} of {nb}"),
                    ));
                    continue;
                }
            };
            if found != Some(&v) {
                let found = found.map_or("nothing there".to_string(), |f| f.to_string());
                bad.push((
                    Location::Value(v),
                    format!("defined as {}: expected {v} there, found {found}", def_desc(d.def)),
                ));
            }
        }
        for (i, d) in &k.insts {
            let loc = || Location::Inst { inst: i, op: mnemonic(&d.op) };
            for v in d.op.args() {
                if v.index() >= nv {
                    bad.push((loc(), format!("operand {v} is out of range ({nv} values)")));
                }
            }
            for (n, &r) in d.results.iter().enumerate() {
                if r.index() >= nv {
                    bad.push((loc(), format!("result {r} is out of range ({nv} values)")));
                } else if k.values[r].def != ValueDef::Result(i, n as u32) {
                    bad.push((
                        loc(),
                        format!(
                            "result {n} is {r}: expected {r} defined as result {n} of {i}, found it \
                             defined as {}",
                            def_desc(k.values[r].def)
                        ),
                    ));
                }
            }
            for b in d.op.blocks() {
                if b.index() >= nb {
                    bad.push((loc(), format!("nested {b} is out of range ({nb} blocks)")));
                }
            }
            let mut param = |p: Param| {
                if p.index() >= np {
                    bad.push((loc(), format!("{p} is out of range ({np} parameters)")));
                }
            };
            if let Some(p) = d.op.param() {
                param(p);
            }
            match d.op.memory() {
                Some(MemRef::Lds(s)) if s.index() >= nl => {
                    bad.push((loc(), format!("{s} is out of range ({nl} LDS slots)")))
                }
                Some(MemRef::Private(s)) if s.index() >= npriv => {
                    bad.push((loc(), format!("{s} is out of range ({npriv} private arrays)")))
                }
                Some(
                    MemRef::Buffer(_) | MemRef::Lds(_) | MemRef::Private(_) | MemRef::Global(_),
                )
                | None => {}
            }
        }
        for (b, d) in &k.blocks {
            for (n, &p) in d.params.iter().enumerate() {
                if p.index() >= nv {
                    bad.push((
                        Location::Block(b),
                        format!("parameter {p} is out of range ({nv} values)"),
                    ));
                } else if k.values[p].def != ValueDef::Param(b, n as u32) {
                    bad.push((
                        Location::Block(b),
                        format!(
                            "parameter {n} is {p}: expected {p} defined as parameter {n} of {b}, \
                             found it defined as {}",
                            def_desc(k.values[p].def)
                        ),
                    ));
                }
            }
            for &i in &d.insts {
                if i.index() >= ni {
                    bad.push((
                        Location::Block(b),
                        format!("{i} is out of range ({ni} instructions)"),
                    ));
                }
            }
        }
        for (loc, msg) in bad {
            self.report(loc, msg);
        }
    }
}
