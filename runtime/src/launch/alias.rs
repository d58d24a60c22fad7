//! Aliasing: the lowering marks every buffer parameter `noalias`, so a kernel may assume that
//! no two of its buffer parameters overlap when one of them is written. A launch that breaks
//! this is undefined on a GPU (stale loads, reordered stores), while the cpu device would run
//! it in order; so every launch on every device, every decode-graph node when it is added, and
//! every captured graph (its launches are bound here too) are checked by [`check_aliasing`]
//! before anything is issued. Read-only sharing (one buffer as two read-only parameters) stays
//! allowed: `noalias` on pointers that are only read changes nothing.

use super::LaunchError;

/// One buffer parameter of a call: its name, whether the kernel may write it, and the device
/// address range of the buffer bound to it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BufferUse<'a> {
    /// The parameter's name.
    pub param: &'a str,
    /// The ABI lets the kernel write it.
    pub writes: bool,
    /// The buffer's first device address.
    pub address: u64,
    /// The buffer's size in bytes.
    pub bytes: u64,
}

impl BufferUse<'_> {
    fn overlaps(&self, other: &BufferUse<'_>) -> bool {
        let end = |u: &BufferUse<'_>| u.address as u128 + u.bytes as u128;
        self.bytes > 0
            && other.bytes > 0
            && (self.address as u128) < end(other)
            && (other.address as u128) < end(self)
    }
}

/// Refuses two buffer parameters of one call whose buffers overlap when at least one of the two
/// is written; `kernel` names the call in the error.
pub(crate) fn check_aliasing(kernel: &str, uses: &[BufferUse<'_>]) -> Result<(), LaunchError> {
    for (i, a) in uses.iter().enumerate() {
        for b in &uses[i + 1..] {
            if (a.writes || b.writes) && a.overlaps(b) {
                let written = if a.writes { a.param } else { b.param };
                return Err(LaunchError::Aliased {
                    kernel: kernel.to_string(),
                    first: a.param.to_string(),
                    second: b.param.to_string(),
                    written: written.to_string(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    /// Random ranges against the definition: refused exactly when two ranges share a byte and
    /// one of the two is written; the error names both parameters in call order.
    #[test]
    fn refuses_exactly_overlapping_ranges_with_a_writer() {
        let mut r = rand::thread_rng();
        let names = ["a", "b", "c", "d"];
        for _ in 0..2000 {
            let uses: Vec<BufferUse<'_>> = names
                .iter()
                .map(|p| BufferUse {
                    param: p,
                    writes: r.gen_bool(0.4),
                    address: r.gen_range(0..64),
                    bytes: r.gen_range(0..16),
                })
                .collect();
            let shares_byte = |x: &BufferUse<'_>, y: &BufferUse<'_>| {
                (x.address..x.address + x.bytes)
                    .any(|b| (y.address..y.address + y.bytes).contains(&b))
            };
            let mut want = None;
            'outer: for i in 0..uses.len() {
                for j in i + 1..uses.len() {
                    if (uses[i].writes || uses[j].writes) && shares_byte(&uses[i], &uses[j]) {
                        want = Some((uses[i].param, uses[j].param));
                        break 'outer;
                    }
                }
            }
            match (check_aliasing("k/v", &uses), want) {
                (Ok(()), None) => {}
                (Err(LaunchError::Aliased { kernel, first, second, .. }), Some((f, s))) => {
                    assert_eq!((kernel.as_str(), first.as_str(), second.as_str()), ("k/v", f, s));
                }
                (got, want) => panic!("{uses:?}: got {got:?}, want {want:?}"),
            }
        }
        // At the top of the address space the end does not wrap.
        let top = |param, writes| BufferUse { param, writes, address: u64::MAX - 3, bytes: 4 };
        let low = BufferUse { param: "low", writes: true, address: 0, bytes: 4 };
        assert!(check_aliasing("k", &[top("x", true), low]).is_ok());
        assert!(check_aliasing("k", &[top("x", false), top("y", true)]).is_err());
        assert!(check_aliasing("k", &[top("x", false), top("y", false)]).is_ok());
    }
}
