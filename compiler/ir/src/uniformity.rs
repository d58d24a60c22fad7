//! Uniformity analysis: which values are the same in every lane of a workgroup, of a wave, or
//! neither, and which blocks run with all lanes of a workgroup or wave taking the same path.
//!
//! The verifier uses it to refuse barriers under control flow that is not workgroup-uniform (a
//! barrier that some lanes skip hangs the workgroup) and cross-lane ops under control flow that is
//! not wave-uniform (a shuffle that some lanes of the wave skip is undefined on NVIDIA); back ends
//! may use it to keep uniform values in scalar registers (`readfirstlane`).
//!
//! # Lattice
//!
//! `WorkgroupUniform > WaveUniform > Divergent`; combining facts takes the meet (the lower one).
//!
//! # Rules
//!
//! - `const`, `arg`, `buffer_addr` and the ids `workgroup_id`, `workgroup_size`, `num_workgroups`,
//!   `wave_size`, `num_waves` are workgroup-uniform; `id wave` is wave-uniform; `lane`,
//!   `local_linear` and `local_id` are divergent, except `local_id.d` when the workgroup is 1 wide
//!   along `d` (always 0: workgroup-uniform), and `local_id.y` / `local_id.z` when the lower
//!   dimensions span whole waves (wave-uniform).
//! - `wave_reduce`, `wave_argmax`, `ballot` are wave-uniform at best; `broadcast` is wave-uniform or,
//!   when its operand is workgroup-uniform, workgroup-uniform. `tsum<1>` is a wave reduction
//!   (wave-uniform); any other `tsum` leaves different sums in different lanes (divergent).
//! - `shuffle` and `shuffle_idx` read another lane of the same wave, so they are as uniform as the
//!   value they read.
//! - `load` from a buffer, LDS or a raw address is as uniform as its index (and address); from
//!   private memory it is divergent. `atomic` results are divergent.
//! - Every other op: the meet of its operands.
//! - Control: the entry block runs workgroup-uniform. An `if` block runs with the meet of the
//!   enclosing control and the condition; a `for` body with the meet of the enclosing control and
//!   `start`, `end`, `step`. Every value defined in a block is at most as uniform as the block's
//!   control (a value computed under a divergent `if` differs between lanes that ran it and lanes
//!   that did not).
//! - `if` results: the meet of the control, the condition, and the values both blocks yield.
//! - `for`: the index is as uniform as the body's control; carried values are the meet of their
//!   initial and yielded values, iterated to a fixpoint (the lattice has height 3, so a loop is
//!   revisited at most three times); the results are the final carried values.

use crate::entities::{Block, Inst, Value};
use crate::kernel::Kernel;
use crate::ops::{IdKind, MemRef, Op};
use cranelift_entity::SecondaryMap;
use std::fmt;

/// How uniform a value (or a block's control) is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Uniformity {
    /// May differ between lanes of a wave. The default: what nothing is known about.
    #[default]
    Divergent,
    /// The same in every lane of a wave (may differ between waves).
    WaveUniform,
    /// The same in every lane of the workgroup.
    WorkgroupUniform,
}

impl Uniformity {
    /// The lower of the two (what is known about a value computed from both).
    pub fn meet(self, other: Uniformity) -> Uniformity {
        self.min(other)
    }

    /// The higher of the two.
    pub fn join(self, other: Uniformity) -> Uniformity {
        self.max(other)
    }

    /// `workgroup-uniform`, `wave-uniform` or `divergent`.
    pub fn name(self) -> &'static str {
        match self {
            Uniformity::Divergent => "divergent",
            Uniformity::WaveUniform => "wave-uniform",
            Uniformity::WorkgroupUniform => "workgroup-uniform",
        }
    }
}

impl fmt::Display for Uniformity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The result of [`analyze`].
#[derive(Clone, Debug)]
pub struct UniformityInfo {
    /// The uniformity of each value.
    pub values: SecondaryMap<Value, Uniformity>,
    /// The uniformity of each block's control: whether all lanes of a workgroup (or wave) that
    /// reach the enclosing op run the block together.
    pub blocks: SecondaryMap<Block, Uniformity>,
}

impl UniformityInfo {
    /// The uniformity of a value.
    pub fn value(&self, v: Value) -> Uniformity {
        self.values[v]
    }

    /// The uniformity of a block's control.
    pub fn block(&self, b: Block) -> Uniformity {
        self.blocks[b]
    }
}

/// Analyzes a kernel. Meant for kernels that pass the verifier's handle and layout checks; on any
/// other kernel it still terminates without panicking, but its answer means nothing.
pub fn analyze(k: &Kernel) -> UniformityInfo {
    let mut a = Analysis {
        k,
        info: UniformityInfo { values: SecondaryMap::new(), blocks: SecondaryMap::new() },
    };
    a.block(k.entry, Uniformity::WorkgroupUniform, 0);
    a.info
}

struct Analysis<'a> {
    k: &'a Kernel,
    info: UniformityInfo,
}

impl Analysis<'_> {
    fn u(&self, v: Value) -> Uniformity {
        self.info.values[v]
    }

    /// `depth` bounds the recursion, so a block nested inside itself cannot loop forever.
    fn block(&mut self, b: Block, ctl: Uniformity, depth: usize) {
        let Some(data) = self.k.blocks.get(b) else {
            return;
        };
        if depth > self.k.blocks.len() {
            return;
        }
        self.info.blocks[b] = ctl;
        for &i in &data.insts {
            self.inst(i, ctl, depth);
        }
    }

    /// The values a block yields (its last instruction, if a `yield`).
    fn yielded(&self, b: Block) -> &[Value] {
        let last = self.k.blocks.get(b).and_then(|d| d.insts.last());
        if let Some(Op::Yield(vals)) = last.and_then(|&i| self.k.insts.get(i)).map(|d| &d.op) {
            vals
        } else {
            &[]
        }
    }

    fn set_results(&mut self, i: Inst, u: impl Fn(usize) -> Uniformity) {
        for (n, &r) in self.k.insts[i].results.iter().enumerate() {
            self.info.values[r] = u(n);
        }
    }

    fn inst(&mut self, i: Inst, ctl: Uniformity, depth: usize) {
        use Uniformity::*;
        let Some(d) = self.k.insts.get(i) else { return };
        match &d.op {
            Op::If { cond, then_block, else_block } => {
                let c = ctl.meet(self.u(*cond));
                self.block(*then_block, c, depth + 1);
                self.block(*else_block, c, depth + 1);
                let (t, e) = (self.yielded(*then_block), self.yielded(*else_block));
                let res: Vec<Uniformity> = (0..d.results.len())
                    .map(|n| {
                        let yt = t.get(n).map_or(Divergent, |&v| self.u(v));
                        let ye = e.get(n).map_or(Divergent, |&v| self.u(v));
                        c.meet(yt).meet(ye)
                    })
                    .collect();
                self.set_results(i, |n| res[n]);
            }
            Op::For { start, end, step, init, body, .. } => {
                let c = ctl.meet(self.u(*start)).meet(self.u(*end)).meet(self.u(*step));
                let params =
                    self.k.blocks.get(*body).map(|b| b.params.to_vec()).unwrap_or_default();
                let mut carried: Vec<Uniformity> =
                    init.iter().map(|&v| c.meet(self.u(v))).collect();
                loop {
                    if let Some(&index) = params.first() {
                        self.info.values[index] = c;
                    }
                    for (&p, &u) in params.iter().skip(1).zip(&carried) {
                        self.info.values[p] = u;
                    }
                    self.block(*body, c, depth + 1);
                    let y = self.yielded(*body);
                    let next: Vec<Uniformity> = carried
                        .iter()
                        .enumerate()
                        .map(|(n, &u)| u.meet(y.get(n).map_or(Divergent, |&v| self.u(v))))
                        .collect();
                    if next == carried {
                        break;
                    }
                    carried = next;
                }
                self.set_results(i, |n| carried.get(n).copied().unwrap_or(Divergent));
            }
            op => {
                let u = self.rule(op).meet(ctl);
                self.set_results(i, |_| u);
            }
        }
    }

    /// The uniformity of an op's results, before the block's control. Exhaustive: a new op must
    /// decide how uniform its results are (the barrier and cross-lane checks trust this).
    fn rule(&self, op: &Op) -> Uniformity {
        use Uniformity::*;
        let meet_args = || op.args().iter().fold(WorkgroupUniform, |u, &v| u.meet(self.u(v)));
        match op {
            Op::Const { .. } | Op::Arg(_) | Op::BufferAddr(_) => WorkgroupUniform,
            Op::Id(kind) => self.id(*kind),
            Op::WaveReduce { .. } | Op::WaveArgmax { .. } | Op::Ballot { .. } => WaveUniform,
            Op::Broadcast { value, .. } => self.u(*value).join(WaveUniform),
            Op::Tsum { p: 1, .. } => WaveUniform,
            Op::Tsum { .. } => Divergent,
            // Each lane gets its own elements of D (of the matrices).
            Op::Mma { .. } | Op::LdMatrix { .. } => Divergent,
            Op::Shuffle { value, .. } | Op::ShuffleIdx { value, .. } => self.u(*value),
            Op::Load { mem: MemRef::Private(_), .. } => Divergent,
            Op::Load { mem: MemRef::Buffer(_) | MemRef::Lds(_) | MemRef::Global(_), .. } => {
                meet_args()
            }
            Op::Atomic { .. } => Divergent,
            Op::Unary { .. }
            | Op::Binary { .. }
            | Op::Fma { .. }
            | Op::Cmp { .. }
            | Op::Select { .. }
            | Op::Convert { .. }
            | Op::Bitcast { .. }
            | Op::Extract { .. }
            | Op::MakeVector { .. } => meet_args(),
            // No results.
            Op::Store { .. }
            | Op::Fence(_)
            | Op::Barrier(_)
            | Op::Yield(_)
            | Op::Prefetch { .. }
            | Op::AsyncCopy { .. }
            | Op::AsyncWait { .. }
            | Op::GridDependencyWait => meet_args(),
            // Handled in `inst` with their blocks; reached only for a malformed kernel.
            Op::If { .. } | Op::For { .. } => Divergent,
            Op::Perm { .. } | Op::Dot { .. } | Op::PackedConvert { .. } => meet_args(),
        }
    }

    fn id(&self, kind: IdKind) -> Uniformity {
        use Uniformity::*;
        let [sx, sy, sz] = self.k.workgroup_size;
        let w = self.k.wave_size.max(1);
        match kind {
            IdKind::WorkgroupId(_)
            | IdKind::WorkgroupSize(_)
            | IdKind::NumWorkgroups(_)
            | IdKind::WaveSize
            | IdKind::NumWaves => WorkgroupUniform,
            IdKind::Wave => WaveUniform,
            IdKind::Lane | IdKind::LocalLinear => Divergent,
            IdKind::LocalId(d) => {
                let (size, below) = match d {
                    crate::ops::Dim::X => (sx, 1),
                    crate::ops::Dim::Y => (sy, sx),
                    crate::ops::Dim::Z => (sz, sx.saturating_mul(sy)),
                };
                if size == 1 {
                    WorkgroupUniform
                } else if below % w == 0 {
                    WaveUniform
                } else {
                    Divergent
                }
            }
        }
    }
}
