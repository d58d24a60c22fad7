//! Which launches may overlap the grids before them (programmatic stream serialization, NVIDIA
//! sm_90+), decided from what may still be running.
//!
//! A kiln object that waits for its grid dependency (`ObjectEntry::grid_dependency`) may be
//! launched to overlap the kernels before it on the stream: its workgroups start while those
//! still run, and stop at `griddepcontrol.wait` until they are done. Code before the wait may
//! load from buffers the kernel only reads (`kiln_ir::Kernel::reads_before_grid_wait`: a GEMV's
//! weights). Those loads see the right bytes only if no grid that may still be running writes
//! them. Every kernel launched to overlap waits before it ends, so when a launch is not
//! overlapped, everything before it has finished; the grids that may still be running when a
//! launch starts are those since the last launch that was not overlapped. [`InFlight`] keeps
//! their written ranges and overlaps a launch only when its early reads miss all of them.

/// A byte range of device memory: `(address, bytes)`.
pub(crate) type Range = (u64, u64);

/// Most ranges kept: past it, the next launch is not overlapped (which empties the list).
const MOST_RANGES: usize = 4096;

fn meet(a: Range, b: Range) -> bool {
    a.1 > 0 && b.1 > 0 && a.0 < b.0.saturating_add(b.1) && b.0 < a.0.saturating_add(a.1)
}

/// The ranges written by work on one stream that may still be running.
#[derive(Clone, Debug, Default)]
pub(crate) struct InFlight {
    written: Vec<Range>,
}

impl InFlight {
    /// Everything issued so far has finished (a stream synchronize).
    pub fn finished(&mut self) {
        self.written.clear();
    }

    /// Work that writes `r` was issued (a copy or a fill).
    pub fn wrote(&mut self, r: Range) {
        self.written.push(r);
    }

    /// Decides one launch: overlapped when the object allows it (`may`) and none of its early
    /// reads meets a range in flight; then records its writes. Returns the decision.
    pub fn launch(&mut self, may: bool, early: &[Range], writes: &[Range]) -> bool {
        let clash = early.iter().any(|&e| self.written.iter().any(|&w| meet(e, w)));
        let overlap = may && !clash && self.written.len() < MOST_RANGES;
        if !overlap {
            // Serialized after the kernel before it, which waited for everything before it.
            self.written.clear();
        }
        self.written.extend_from_slice(writes);
        overlap
    }

    /// The decisions [`InFlight::launch`] makes for `launches` (`(may, early, writes)`) from an
    /// empty list: what a captured graph's nodes get, since a graph starts after everything
    /// issued before it on the stream.
    pub fn decide_all<'a>(
        launches: impl IntoIterator<Item = (bool, &'a [Range], &'a [Range])>,
    ) -> Vec<bool> {
        let mut f = InFlight::default();
        launches.into_iter().map(|(may, e, w)| f.launch(may, e, w)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_early_read_of_a_range_in_flight_is_not_overlapped() {
        let mut f = InFlight::default();
        // A fill of the weights, then a GEMV that reads them early: serialized.
        f.wrote((0x1000, 256));
        assert!(!f.launch(true, &[(0x10ff, 1)], &[(0x9000, 64)]));
        // The list was emptied (everything before has finished) and holds the GEMV's output.
        // A second GEMV reading the same weights early, writing the same output: overlapped.
        assert!(f.launch(true, &[(0x1000, 256)], &[(0x9000, 64)]));
        // A kernel reading the output early: it may still be being written.
        assert!(!f.launch(true, &[(0x9000 + 63, 4)], &[]));
        // Touching ranges do not meet; empty ranges meet nothing.
        f.wrote((0x2000, 0x100));
        assert!(f.launch(true, &[(0x2100, 16), (0x1f00, 0x100), (0x2050, 0)], &[]));
        // An object without the wait is never overlapped, and empties the list.
        assert!(!f.launch(false, &[], &[(0x5000, 8)]));
        assert!(f.launch(true, &[(0x2000, 0x100)], &[]));
        assert!(!f.launch(true, &[(0x5004, 4)], &[]));
        // After a synchronize nothing is in flight.
        f.wrote((0x7000, 8));
        f.finished();
        assert!(f.launch(true, &[(0x7000, 8)], &[]));
    }

    #[test]
    fn the_list_is_bounded() {
        let mut f = InFlight::default();
        let mut serialized = 0;
        for i in 0..3 * MOST_RANGES as u64 {
            if !f.launch(true, &[], &[(i * 16, 16)]) {
                serialized += 1;
            }
        }
        assert!(serialized >= 2, "{serialized}");
        assert!(f.written.len() <= MOST_RANGES);
    }

    #[test]
    fn a_graph_decides_from_an_empty_list() {
        let e: &[Range] = &[(0x1000, 64)];
        let w: &[Range] = &[(0x1000, 64)];
        let none: &[Range] = &[];
        let got = InFlight::decide_all([(true, e, none), (true, none, w), (true, e, none)]);
        assert_eq!(got, vec![true, true, false]);
    }
}
