//! Target: what the chosen target must have to run the kernel. Every requirement, of the kernel
//! as a whole or of one op, is a [`Requirement`]; one function says whether a target meets it,
//! so a refusal can name the archs that do.
//!
//! [`op_requirement`] is the one place an op states what it needs beyond what every target has.
//! It is exhaustive: a new op (an integer dot product, a matrix fragment) must decide there, and
//! the verifier then refuses it on a target that lacks it, naming the op, the target and the
//! archs that have it.

use super::*;
use crate::target::{Capability, DotKind, TARGETS};

/// Something a target must have to run a kernel or an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Requirement {
    /// Waves of this many lanes.
    WaveSize(u32),
    /// At least this many bytes of LDS a workgroup.
    LdsBytes(u32),
    /// A capability of the target table (a dot-product or matrix flavour, a cross-lane
    /// instruction).
    Capability(Capability),
    /// This matrix instruction shape (its lane maps differ between targets that share a
    /// [`Capability::Matrix`], as gfx11 and gfx12 WMMA do).
    MmaShape(crate::matrix::MmaShape),
}

impl Requirement {
    /// True when `t` has what is required.
    pub fn met_by(self, t: &Target) -> bool {
        match self {
            Requirement::WaveSize(w) => t.supports_wave(w),
            Requirement::LdsBytes(n) => n <= t.lds_per_workgroup,
            Requirement::Capability(c) => t.has(c),
            Requirement::MmaShape(s) => s.archs().contains(&t.name),
        }
    }

    /// The archs of the target table that meet it, by name.
    pub fn archs(self) -> Vec<&'static str> {
        TARGETS.iter().filter(|t| self.met_by(t)).map(|t| t.name).collect()
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Requirement::WaveSize(w) => write!(f, "wave size {w}"),
            Requirement::LdsBytes(n) => write!(f, "{n} bytes of LDS a workgroup"),
            Requirement::Capability(c) => write!(f, "`{}`", c.name()),
            Requirement::MmaShape(s) => write!(f, "`{s}`"),
        }
    }
}

/// What an op needs of the target beyond what every target has: the integer dot products and
/// the hardware f16 pair dot need their flavour in the target table.
pub fn op_requirement(op: &Op) -> Option<Requirement> {
    match op {
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
        | Op::Barrier(_)
        | Op::Shuffle { .. }
        | Op::ShuffleIdx { .. }
        | Op::Broadcast { .. }
        | Op::Ballot { .. }
        | Op::WaveReduce { .. }
        | Op::WaveArgmax { .. }
        | Op::Tsum { .. }
        | Op::If { .. }
        | Op::For { .. }
        | Op::Yield(_)
        | Op::Perm { .. }
        | Op::PackedConvert { .. }
        | Op::Prefetch { .. }
        | Op::AsyncCopy { .. }
        | Op::AsyncWait { .. }
        | Op::GridDependencyWait => None,
        Op::Dot { op, .. } => {
            let kind = match op {
                DotOp::I8 => DotKind::I8,
                DotOp::U8 => DotKind::U8,
                DotOp::I8U8 => DotKind::I8U8,
                DotOp::F16Approx => DotKind::F16,
                // Two f32 fma on every target.
                DotOp::F16 => return None,
            };
            Some(Requirement::Capability(Capability::Dot(kind)))
        }
        Op::Mma { kind, .. } => {
            Some(Requirement::Capability(Capability::Matrix(kind.matrix_kind())))
        }
        Op::LdMatrix { .. } => Some(Requirement::Capability(Capability::LdMatrix)),
    }
}

/// `gfx906, gfx908`, or `no arch` when none has it.
fn arch_list(r: Requirement) -> String {
    let archs = r.archs();
    if archs.is_empty() {
        "no arch".into()
    } else {
        archs.join(", ")
    }
}

impl Verifier<'_> {
    /// The kernel's wave size and LDS total, then each op's [`op_requirement`].
    pub(super) fn check_target(&mut self, t: &Target) {
        let k = self.k;
        let wave = Requirement::WaveSize(k.wave_size);
        if (k.wave_size == 32 || k.wave_size == 64) && !wave.met_by(t) {
            let waves: Vec<String> = t.wave_sizes.iter().map(|w| w.to_string()).collect();
            self.report(
                Location::Kernel,
                format!(
                    "wave size on {t}: expected {}, found {} (archs with {wave}: {})",
                    waves.join(" or "),
                    k.wave_size,
                    arch_list(wave)
                ),
            );
        }
        let lds = k.lds_bytes();
        let need = Requirement::LdsBytes(lds);
        if !need.met_by(t) {
            self.report(
                Location::Kernel,
                format!(
                    "LDS on {t}: expected at most {} bytes a workgroup, found {lds} ({} over; \
                     archs with {need}: {})",
                    t.lds_per_workgroup,
                    lds - t.lds_per_workgroup,
                    arch_list(need)
                ),
            );
        }
        if let Some(cap) = k.max_registers {
            if cap == 0 || cap > t.max_vgprs {
                self.report(
                    Location::Kernel,
                    format!(
                        "max_registers on {t}: expected 1..={} (the most a lane may use), found {cap}",
                        t.max_vgprs
                    ),
                );
            }
        }
        for (i, d) in &k.insts {
            if let Some(r) = op_requirement(&d.op).filter(|r| !r.met_by(t)) {
                self.refuse_op(i, t, r);
            } else if let Op::Mma { kind, .. } = &d.op {
                // The target has a matrix unit of this kind; the shape must be its own.
                let r = Requirement::MmaShape(kind.shape());
                if !r.met_by(t) {
                    self.refuse_op(i, t, r);
                }
            }
        }
    }

    /// An op that needs `r`, which `t` lacks.
    pub(super) fn refuse_op(&mut self, i: Inst, t: &Target, r: Requirement) {
        self.at(
            i,
            format!("not supported on {t}: needs {r} (archs that have it: {})", arch_list(r)),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KernelBuilder;

    /// A capability requirement asks the target table: signed x unsigned dot4 exists on
    /// gfx11, gfx12 and NVIDIA only, and the refusal lists exactly those archs.
    #[test]
    fn capability_requirements_ask_the_target_table() {
        use crate::target::DotKind;
        let r = Requirement::Capability(Capability::Dot(DotKind::I8U8));
        let gfx906 = Target::by_name("gfx906").unwrap();
        let gfx1100 = Target::by_name("gfx1100").unwrap();
        assert!(!r.met_by(gfx906) && r.met_by(gfx1100));
        let expected: Vec<&str> = TARGETS
            .iter()
            .filter(|t| t.has(Capability::Dot(DotKind::I8U8)))
            .map(|t| t.name)
            .collect();
        assert_eq!(r.archs(), expected);
        assert!(!expected.contains(&"gfx1030") && expected.contains(&"sm_90"));
    }

    /// The path a per-op refusal takes, with a requirement some targets lack: the error names
    /// the op, the target and the archs that have what it needs.
    #[test]
    fn a_refused_op_names_the_target_and_the_archs_that_have_it() {
        let mut b = KernelBuilder::new("needs_wave64", 32);
        let lane = b.lane();
        b.wave_reduce(ReduceOp::Add, lane);
        let k = b.finish();
        let (i, _) = k.insts.iter().find(|(_, d)| d.op.is_cross_lane()).unwrap();
        let sm90 = Target::by_name("sm_90").unwrap();
        let mut v = Verifier { k: &k, errors: Vec::new() };
        let r = Requirement::WaveSize(64);
        assert!(!r.met_by(sm90));
        v.refuse_op(i, sm90, r);
        let text = v.errors[0].to_string();
        let want = format!(
            "kernel needs_wave64: {i} (wave_reduce add): not supported on sm_90: needs wave size \
             64 (archs that have it: "
        );
        assert!(text.starts_with(&want), "{text}");
        let archs = &text[want.len()..];
        assert!(archs.contains("gfx942") && archs.contains("gfx1100"), "{text}");
        assert!(!archs.contains("sm_"), "{text}");
        assert!(Requirement::LdsBytes(u32::MAX).archs().is_empty());
    }

    /// No op needs anything beyond the baseline today: every library-style kernel passes on
    /// every target its wave size runs on.
    #[test]
    fn no_op_needs_a_capability_today() {
        let mut b = KernelBuilder::new("plain", 32);
        let lane = b.lane();
        let s = b.wave_reduce(ReduceOp::Add, lane);
        b.shuffle_xor(s, 1);
        let k = b.finish();
        for t in TARGETS.iter().filter(|t| t.supports_wave(32)) {
            assert_eq!(crate::verify(&k, Some(t)), Ok(()), "{t}");
        }
        for d in k.insts.values() {
            assert_eq!(op_requirement(&d.op), None);
        }
    }
}
