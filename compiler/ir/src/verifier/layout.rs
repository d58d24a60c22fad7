//! Layout: where blocks and instructions sit, and where `yield` goes.

use super::*;

impl Verifier<'_> {
    /// Returns the layout when no block or instruction appears twice (scoping needs a tree).
    pub(super) fn check_layout(&mut self) -> Option<Layout> {
        let k = self.k;
        let mut layout =
            Layout { block_parent: SecondaryMap::new(), inst_block: SecondaryMap::new() };
        let mut reached: SecondaryMap<Block, bool> = SecondaryMap::new();
        let mut tree = true;
        reached[k.entry] = true;
        let mut stack = vec![k.entry];
        while let Some(b) = stack.pop() {
            for &i in &k.blocks[b].insts {
                if let Some(first) = layout.inst_block[i] {
                    let msg = if first == b {
                        format!("expected to appear once, found twice in {b}")
                    } else {
                        format!("expected to appear in one block, found in {first} and {b}")
                    };
                    self.at(i, msg);
                    tree = false;
                    continue;
                }
                layout.inst_block[i] = Some(b);
                for nb in k.insts[i].op.blocks() {
                    if nb == k.entry {
                        self.at(i, format!("nests the entry {nb}: expected a block of its own"));
                        tree = false;
                    } else if reached[nb] {
                        let other = layout.block_parent[nb]
                            .map_or("another op".to_string(), |o| self.inst_desc(o));
                        self.at(
                            i,
                            format!(
                                "nests {nb}: expected a block nested under one op only, found it \
                                 also under {other}"
                            ),
                        );
                        tree = false;
                    } else {
                        reached[nb] = true;
                        layout.block_parent[nb] = Some(i);
                        stack.push(nb);
                    }
                }
            }
        }
        for b in k.blocks.keys() {
            if !reached[b] {
                self.report(
                    Location::Block(b),
                    "expected the entry or a block nested under an op, found a block nested nowhere",
                );
            }
        }
        for i in k.insts.keys() {
            if layout.inst_block[i].is_none() && !self.in_unreached_block(i, &reached) {
                self.at(i, "expected to appear in one block, found in none");
            }
        }
        // Yield placement, in reached blocks.
        if !k.blocks[k.entry].params.is_empty() {
            let n = k.blocks[k.entry].params.len();
            self.report(
                Location::Block(k.entry),
                format!("entry block: expected no parameters, found {n}"),
            );
        }
        for (b, d) in &k.blocks {
            if !reached[b] {
                continue;
            }
            let n = d.insts.len();
            for (pos, &i) in d.insts.iter().enumerate() {
                if !matches!(k.insts[i].op, Op::Yield(_)) {
                    continue;
                }
                if b == k.entry {
                    self.at(i, "expected only in a nested block, found in the entry block");
                } else if pos + 1 != n {
                    self.at(
                        i,
                        format!(
                            "expected only as the last instruction of {b}, found at position {pos} \
                             of {n}"
                        ),
                    );
                }
            }
            if b != k.entry {
                let last = d.insts.last().map(|&i| &k.insts[i].op);
                if !matches!(last, Some(Op::Yield(_))) {
                    let found = match last {
                        Some(op) => format!("`{}`", mnemonic(op)),
                        None => "an empty block".into(),
                    };
                    let desc = self.block_desc(&layout, b);
                    self.report(
                        Location::Block(b),
                        format!("{desc}: expected to end with yield, found {found}"),
                    );
                }
            }
        }
        tree.then_some(layout)
    }

    /// An instruction listed in a block nested nowhere is reported with that block, not again.
    pub(super) fn in_unreached_block(&self, i: Inst, reached: &SecondaryMap<Block, bool>) -> bool {
        self.k.blocks.iter().any(|(b, d)| !reached[b] && d.insts.contains(&i))
    }

    /// `then block of inst7 (if)`, `body of inst9 (for)`, `entry block`.
    pub(super) fn block_desc(&self, layout: &Layout, b: Block) -> String {
        if b == self.k.entry {
            return "entry block".into();
        }
        match layout.block_parent[b] {
            Some(i) => {
                let roles = self.k.insts[i].op.blocks_with_roles();
                let role = roles.iter().find(|(nb, _)| *nb == b).map_or("block", |&(_, r)| r);
                format!("{role} of {}", self.inst_desc(i))
            }
            None => "block nested nowhere".into(),
        }
    }
}
