//! The interpreter's errors. Every error found while running names the kernel, the instruction
//! and its op, the workgroup and the lanes involved, so a failing test points at the bug.

use crate::{Inst, VerifyErrors};
use std::fmt;

/// Where a run-time error happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    /// The kernel's name.
    pub kernel: String,
    /// The instruction.
    pub inst: Inst,
    /// The op as the text form names it (`load`, `binary div`, `barrier lds`, ...).
    pub op: String,
    /// The workgroup id.
    pub workgroup: [u32; 3],
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.workgroup;
        write!(
            f,
            "kernel `{}`, {} ({}), workgroup ({x}, {y}, {z})",
            self.kernel, self.inst, self.op
        )
    }
}

/// Lanes of one workgroup, by linear local id. Displayed compactly with their waves:
/// `lanes 0..=31 (wave 0)`, `lanes 3, 17 (wave 0)`, `lane 40 (wave 1)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lanes {
    /// Linear local ids, ascending.
    pub ids: Vec<u32>,
    /// The wave size, to name the waves.
    pub wave_size: u32,
}

impl Lanes {
    /// The lanes `ids` (sorted and deduplicated here).
    pub fn new(mut ids: Vec<u32>, wave_size: u32) -> Lanes {
        ids.sort_unstable();
        ids.dedup();
        Lanes { ids, wave_size }
    }
}

/// Writes ascending numbers as runs: `0..=31, 40, 42`; at most `limit` runs, then a count.
fn write_runs(f: &mut fmt::Formatter<'_>, ids: &[u32], limit: usize) -> fmt::Result {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &i in ids {
        match runs.last_mut() {
            Some((_, hi)) if *hi + 1 == i => *hi = i,
            _ => runs.push((i, i)),
        }
    }
    for (n, &(lo, hi)) in runs.iter().enumerate() {
        if n == limit {
            return write!(f, ", ... ({} in all)", ids.len());
        }
        if n > 0 {
            f.write_str(", ")?;
        }
        match hi - lo {
            0 => write!(f, "{lo}")?,
            1 => write!(f, "{lo}, {hi}")?,
            _ => write!(f, "{lo}..={hi}")?,
        }
    }
    Ok(())
}

impl fmt::Display for Lanes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.ids.len() == 1 { "lane " } else { "lanes " })?;
        write_runs(f, &self.ids, 12)?;
        let mut waves: Vec<u32> = self.ids.iter().map(|l| l / self.wave_size.max(1)).collect();
        waves.dedup();
        f.write_str(if waves.len() == 1 { " (wave " } else { " (waves " })?;
        write_runs(f, &waves, 12)?;
        f.write_str(")")
    }
}

/// An interpreter error. The run-time variants carry a [`Site`] and the [`Lanes`] involved;
/// `Verify`, `Launch` and `Malformed` are found before any lane runs and name the kernel.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InterpError {
    /// The verifier rejected the kernel (run with `verify: false` to skip it).
    #[error("kernel `{kernel}` fails verification:\n{errors}")]
    Verify {
        /// The kernel's name.
        kernel: String,
        /// What the verifier found.
        errors: VerifyErrors,
    },
    /// The arguments or the grid do not fit the kernel.
    #[error("kernel `{kernel}`: bad launch: {message}")]
    Launch {
        /// The kernel's name.
        kernel: String,
        /// What is wrong.
        message: String,
    },
    /// A scalar argument breaks a rule of its parameter ([`crate::ScalarRule`]).
    #[error(transparent)]
    ScalarRule(crate::ScalarRuleError),
    /// The kernel is not well formed (a handle out of range, a memory op on a scalar parameter...),
    /// which the verifier would have reported.
    #[error("kernel `{kernel}`: {inst} ({op}): malformed: {message}")]
    Malformed {
        /// The kernel's name.
        kernel: String,
        /// The instruction.
        inst: crate::Inst,
        /// Its op as the text form names it.
        op: String,
        /// What is wrong.
        message: String,
    },
    /// An op on a type it is not defined for (e.g. `sqrt` on `i32`).
    #[error("{site}: {message}, {lanes}")]
    Unsupported {
        /// Where.
        site: Box<Site>,
        /// The active lanes.
        lanes: Lanes,
        /// What is not defined.
        message: String,
    },
    /// An access outside its buffer, LDS allocation or private array, or a raw global address
    /// inside no buffer.
    #[error("{site}: out-of-bounds access: {detail}, {lanes}")]
    OutOfBounds {
        /// Where.
        site: Box<Site>,
        /// The lanes whose access is out of bounds.
        lanes: Lanes,
        /// The first such access: what, where, and the bounds.
        detail: String,
    },
    /// A store or atomic to a buffer declared read-only.
    #[error("{site}: write to read-only buffer `{buffer}`, {lanes}")]
    ReadOnly {
        /// Where.
        site: Box<Site>,
        /// The writing lanes.
        lanes: Lanes,
        /// The buffer's name.
        buffer: String,
    },
    /// Two different waves touched the same LDS bytes between two barriers, one of them writing.
    #[error("{site}: LDS race: {detail}, {lanes}")]
    LdsRace {
        /// Where (the second access).
        site: Box<Site>,
        /// The lanes of the second access that race.
        lanes: Lanes,
        /// The allocation, byte, and the other wave.
        detail: String,
    },
    /// A read of LDS bytes no lane of the workgroup has written.
    #[error("{site}: read of LDS never written: {detail}, {lanes}")]
    LdsUninit {
        /// Where.
        site: Box<Site>,
        /// The reading lanes.
        lanes: Lanes,
        /// The allocation and byte.
        detail: String,
    },
    /// A barrier executed while some lanes of the workgroup are inactive.
    #[error("{site}: barrier not reached by every wave: {lanes} inactive")]
    DivergentBarrier {
        /// Where.
        site: Box<Site>,
        /// The lanes that do not reach the barrier.
        lanes: Lanes,
    },
    /// A cross-lane op run by part of a wave (some lanes of the wave inactive), where hardware
    /// gives undefined values or, with a full-mask lowering, undefined behaviour.
    #[error("{site}: cross-lane op run by part of a wave: {lanes} active, {inactive} inactive")]
    PartialWave {
        /// Where.
        site: Box<Site>,
        /// The active lanes of the partial waves.
        lanes: Lanes,
        /// Their inactive lanes.
        inactive: Lanes,
    },
    /// Integer division or remainder by zero.
    #[error("{site}: integer division by zero, {lanes}")]
    DivByZero {
        /// Where.
        site: Box<Site>,
        /// The dividing lanes.
        lanes: Lanes,
    },
    /// A `for` loop whose step is not positive (it would never end).
    #[error("{site}: loop step is not positive, {lanes}")]
    BadStep {
        /// Where.
        site: Box<Site>,
        /// The lanes that would loop forever.
        lanes: Lanes,
    },
    /// An access to LDS bytes an [`crate::Op::AsyncCopy`] has not landed yet (before the
    /// copying lane's [`crate::Op::AsyncWait`]), a second copy to such bytes, or a copy never
    /// waited for: on hardware the bytes land at any time until the wait.
    #[error("{site}: async copy: {detail}, {lanes}")]
    AsyncCopy {
        /// Where.
        site: Box<Site>,
        /// The lanes involved.
        lanes: Lanes,
        /// The allocation, byte, and the copy's instruction.
        detail: String,
    },
    /// Two different waves of a workgroup touched the same global bytes with no `barrier all`
    /// between, one of them writing.
    #[error("{site}: global memory race between waves: {detail}, {lanes}")]
    WaveRace {
        /// Where (the second access).
        site: Box<Site>,
        /// The lanes of the second access that race.
        lanes: Lanes,
        /// The buffer, byte, and the other wave.
        detail: String,
    },
    /// A kernel with global atomics gave other bytes with its workgroups run in reverse order
    /// (the sanitizer runs it both ways): a GPU runs them in any order, so it would not match.
    #[error("kernel `{kernel}`: the result depends on the order of the workgroups: {detail}")]
    OrderDependent {
        /// The kernel's name.
        kernel: String,
        /// The buffer, the byte and its two values.
        detail: String,
    },
    /// Global memory one workgroup wrote, read or wrote again by another in the same launch with
    /// no device-scope atomic ordering the two (the sanitizer's check across workgroups,
    /// [`crate::interp`]'s module docs): on a GPU the workgroups run at once, in any order.
    #[error("{site}: race between workgroups: {detail}")]
    WorkgroupRace {
        /// Where (the second access).
        site: Box<Site>,
        /// The buffer, byte, the other access and the lanes.
        detail: String,
    },
    /// A load, store or atomic whose address is not a multiple of the alignment it assumes
    /// (stated, or natural): hardware faults or reads other bytes.
    #[error("{site}: misaligned access: {detail}, {lanes}")]
    Misaligned {
        /// Where.
        site: Box<Site>,
        /// The lanes whose address is misaligned.
        lanes: Lanes,
        /// The first such access: its size, address and the alignment assumed.
        detail: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_display_compactly() {
        assert_eq!(Lanes::new(vec![3, 17], 32).to_string(), "lanes 3, 17 (wave 0)");
        assert_eq!(Lanes::new((0..32).collect(), 32).to_string(), "lanes 0..=31 (wave 0)");
        assert_eq!(Lanes::new(vec![40], 32).to_string(), "lane 40 (wave 1)");
        assert_eq!(
            Lanes::new(vec![63, 64, 65, 200], 64).to_string(),
            "lanes 63..=65, 200 (waves 0, 1, 3)"
        );
    }
}
