//! Uniform control: the ops that need every lane of a group to run them together. A barrier that
//! some lanes of the workgroup skip hangs it; a cross-lane op that some lanes of the wave skip
//! reads lanes that are not there (NVPTX lowers shuffles and reductions with the full mask
//! `0xffffffff`, so a partial wave is undefined behaviour there, not just a wrong value).

use super::*;

/// The control uniformity an op needs: every enclosing `if` condition and `for` bound must be at
/// least this uniform. Exhaustive, so that a new op has to decide.
pub(super) fn required_control(op: &Op) -> Option<Uniformity> {
    match op {
        Op::Barrier(_) => Some(Uniformity::WorkgroupUniform),
        Op::Shuffle { .. }
        | Op::ShuffleIdx { .. }
        | Op::Broadcast { .. }
        | Op::Ballot { .. }
        | Op::WaveReduce { .. }
        | Op::WaveArgmax { .. }
        | Op::Tsum { .. }
        | Op::Mma { .. }
        | Op::LdMatrix { .. } => Some(Uniformity::WaveUniform),
        Op::Const { .. }
        | Op::Arg(_)
        | Op::BufferAddr(_)
        | Op::Id(_)
        | Op::Unary { .. }
        | Op::Binary { .. }
        | Op::Fma { .. }
        | Op::Cmp { .. }
        | Op::Select { .. }
        | Op::Convert { .. }
        | Op::Bitcast { .. }
        | Op::Extract { .. }
        | Op::MakeVector { .. }
        | Op::Load { .. }
        | Op::Store { .. }
        | Op::Atomic { .. }
        | Op::Fence(_)
        | Op::If { .. }
        | Op::For { .. }
        | Op::Yield(_)
        | Op::Perm { .. }
        | Op::Dot { .. }
        | Op::PackedConvert { .. }
        | Op::Prefetch { .. }
        | Op::AsyncCopy { .. }
        | Op::AsyncWait { .. }
        | Op::GridDependencyWait => None,
    }
}

impl Verifier<'_> {
    /// Barriers under workgroup-uniform control, cross-lane ops under wave-uniform control.
    pub(super) fn check_uniform_control(&mut self, layout: &Layout) {
        let k = self.k;
        let info = uniformity::analyze(k);
        for (i, d) in &k.insts {
            let Some(need) = required_control(&d.op) else {
                continue;
            };
            let Some(b) = layout.inst_block[i] else {
                continue;
            };
            if info.block(b) >= need {
                continue;
            }
            // The enclosing ops, outermost first; report the first that makes control non-uniform.
            let mut ops = Vec::new();
            let mut cur = b;
            while let Some(op) = layout.block_parent[cur] {
                ops.push(op);
                match layout.inst_block[op] {
                    Some(up) => cur = up,
                    None => break,
                }
            }
            let culprit = ops.iter().rev().find_map(|&op| {
                k.insts[op]
                    .op
                    .control_operands()
                    .into_iter()
                    .find(|&(_, v)| info.value(v) < need)
                    .map(|(role, v)| (op, role, v))
            });
            let found = match culprit {
                Some((op, role, v)) => {
                    format!("{v} ({}) as {role} of {}", info.value(v), self.inst_desc(op))
                }
                None => format!("{} control", info.block(b)),
            };
            let what = match need {
                Uniformity::WorkgroupUniform => "barrier",
                Uniformity::WaveUniform | Uniformity::Divergent => {
                    "cross-lane op (every lane of the wave must run it)"
                }
            };
            self.at(
                i,
                format!(
                    "{what} under non-uniform control flow: expected {need} conditions, found {found}"
                ),
            );
        }
    }
}
