//! Scoping (SSA): a value is used only where its definition is visible.

use super::*;

impl Verifier<'_> {
    pub(super) fn check_scoping(&mut self, layout: &Layout) {
        let mut visible: SecondaryMap<Value, bool> = SecondaryMap::new();
        let mut defined: Vec<Value> = Vec::new();
        self.scope_block(layout, self.k.entry, &mut visible, &mut defined);
    }

    pub(super) fn scope_block(
        &mut self,
        layout: &Layout,
        b: Block,
        visible: &mut SecondaryMap<Value, bool>,
        defined: &mut Vec<Value>,
    ) {
        let k = self.k;
        let mark = defined.len();
        for &p in &k.blocks[b].params {
            visible[p] = true;
            defined.push(p);
        }
        for &i in &k.blocks[b].insts {
            let d = &k.insts[i];
            let mut args = d.op.args();
            args.sort();
            args.dedup();
            for v in args {
                if !visible[v] {
                    let msg = self.scope_error(layout, b, v);
                    self.at(i, msg);
                }
            }
            for nb in d.op.blocks() {
                self.scope_block(layout, nb, visible, defined);
            }
            for &r in &d.results {
                visible[r] = true;
                defined.push(r);
            }
        }
        for v in defined.drain(mark..) {
            visible[v] = false;
        }
    }

    pub(super) fn scope_error(&self, layout: &Layout, used_in: Block, v: Value) -> String {
        let (def_block, found) = match self.k.values[v].def {
            ValueDef::Result(d, _) => {
                (layout.inst_block[d], format!("a result of {}", self.inst_desc(d)))
            }
            ValueDef::Param(pb, n) => (Some(pb), format!("parameter {n}")),
        };
        let expected = format!("expected a value defined in {used_in} or a block enclosing it");
        match def_block {
            None => format!("operand {v}: {expected}, found {found}, which is in no block"),
            Some(db) if layout.encloses(db, used_in) => {
                format!("operand {v}: expected a definition before this use, found {found} after it")
            }
            Some(db) => format!(
                "operand {v}: {expected}, found {found} of {db} ({}), which does not enclose this use",
                self.block_desc(layout, db)
            ),
        }
    }
}
