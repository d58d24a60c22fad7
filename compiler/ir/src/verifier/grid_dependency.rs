//! The grid-dependency wait ([`Op::GridDependencyWait`]): at most one, in the kernel's top-level
//! block, and nothing before it that writes memory, synchronizes or crosses lanes. Code before
//! the wait runs while the grids launched before this one may still be writing, so it may only
//! compute, prefetch ([`Op::Prefetch`] changes no value) and load from buffer parameters the
//! kernel only reads (its weights), into registers or, by [`Op::AsyncCopy`] (closed and waited
//! for by [`Op::AsyncWait`]), into its own LDS, which no other grid can see. Those buffers are
//! listed with the object
//! ([`Kernel::reads_before_grid_wait`], `ObjectEntry::early_reads`), and a runtime overlaps the
//! launch with the grids before it only when none of them writes what they are bound to; so
//! every value such a load returns is the one the interpreter reads.

use super::*;

impl Verifier<'_> {
    pub(super) fn check_grid_dependency(&mut self, layout: &Layout) {
        let k = self.k;
        let mut waits = k.insts.iter().filter(|(_, d)| matches!(d.op, Op::GridDependencyWait));
        let Some((first, _)) = waits.next() else {
            return;
        };
        for (i, _) in waits {
            self.at(
                i,
                format!(
                    "a second grid_dependency_wait (the first is {first}): a kernel waits once"
                ),
            );
        }
        if layout.inst_block[first] != Some(k.entry) {
            self.at(first, "grid_dependency_wait must be in the kernel's top-level block");
            return;
        }
        let top = &k.blocks[k.entry].insts;
        let mut stack: Vec<Inst> = top.iter().take_while(|&&i| i != first).copied().collect();
        while let Some(i) = stack.pop() {
            let op = &k.insts[i].op;
            // No memory access but a prefetch (which changes no value) and a load of a buffer
            // the kernel only reads (into registers, or into the workgroup's own LDS by an
            // async copy, and the lane's wait for its copies), nothing that orders or
            // synchronizes across lanes (fence, barrier, a second wait), no cross-lane op.
            let read_only = |p: &Param| {
                matches!(k.params[*p].kind, ParamKind::Buffer { access: Access::Read, .. })
            };
            let early_load = matches!(op, Op::Load { .. } | Op::AsyncCopy { .. })
                && op.param().is_some_and(|p| read_only(&p));
            let allowed = matches!(op, Op::Prefetch { .. } | Op::AsyncWait { .. })
                || early_load
                || (op.memory().is_none() && !op.has_side_effects() && !op.is_cross_lane());
            if !allowed {
                self.at(
                    i,
                    format!(
                        "`{}` before the grid_dependency_wait ({first}): only arithmetic, \
                         prefetches and loads (or async copies) of buffers the kernel only reads \
                         may run before it",
                        mnemonic(op)
                    ),
                );
            }
            for b in op.blocks() {
                stack.extend(k.blocks[b].insts.iter().copied());
            }
        }
    }
}
