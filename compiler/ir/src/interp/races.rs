//! The sanitizer's check across workgroups: in one launch, global memory bytes that one
//! workgroup writes must not be read or written by another unless a device-scope atomic orders
//! the two. A GPU runs workgroups at once and in any order; this interpreter runs them one after
//! another (or in parallel on the host), so a kernel whose workgroup reads what another wrote
//! without that order would pass here and give other bits, or stale ones, on a device.
//!
//! Only bytes the kernel may write are tracked: spans bound to a parameter that writes, and, in a
//! kernel with stores or atomics through raw addresses, the regions no parameter names. Two
//! models, by how the launch runs its workgroups:
//!
//! - **In parallel** (a kernel with no atomic on global memory): nothing orders two workgroups,
//!   so a byte touched by two of them, one writing, is a race. Each tracked byte keeps the least
//!   and the greatest (workgroup, instruction) that wrote it and that read it, which do not depend
//!   on the order the host ran the workgroups in; after the run the first such byte (span, then
//!   offset) is reported, with both accesses.
//! - **In order** (a kernel with global atomics, as the last-workgroup handshake of the split
//!   kernels): happens-before through device-scope atomics, which are acquire-release. A device
//!   atomic on address `X` by lane `L` publishes the writes `L` has ordered before it: its own
//!   earlier writes and every lane's writes before the workgroup's last `barrier all`. A device
//!   atomic on `X` by lane `K` of a later workgroup acquires everything the earlier atomics on `X`
//!   published (they form one read-modify-write chain); lane `K` sees it at once, another lane `J`
//!   of its wave at `J`'s next device fence or atomic, any other lane of the workgroup at its
//!   first device fence or atomic after a barrier that follows `K`'s atomic. (A fence is a
//!   wave's instruction on both back ends: AMDGPU's cache invalidation and NVIDIA's `MEMBAR`
//!   act for the wave, so a lane that learnt the count from `K` by a broadcast, as
//!   `last_workgroup` in the library does, reads after the wave's fence what `K` acquired.) A
//!   lane's access to a byte another workgroup last wrote (or, for a write, last read)
//!   is a race unless the lane sees that access so. A byte another workgroup updated atomically
//!   may be accessed plainly only by a workgroup that itself updated it atomically before. Each
//!   byte keeps its last writer and last reader, and a byte read by several workgroups since
//!   its last write also the last read of each of the others (a side table), so a write is
//!   checked against every workgroup that read the byte, not only the last.
//!
//! A workgroup-scope atomic on global memory orders nothing across workgroups: here it counts as
//! a write.

use super::error::{InterpError, Site};
use super::{workgroup_at, Launch, Span};
use crate::{Inst, Kernel, MemRef, ParamData, ParamKind};
use cranelift_entity::EntityRef;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// Bytes a shadow page covers.
const PAGE: usize = 4096;

/// Where a byte is: the launch's span and the offset in it.
pub(crate) type Addr = (usize, usize);

/// How a launch checks its workgroups against each other.
pub(crate) struct Races {
    /// Per span: whether it is tracked.
    tracked: Vec<bool>,
    pub model: Model,
}

/// The model of [`Races`].
pub(crate) enum Model {
    /// Workgroups in parallel (no global atomics).
    Parallel(Parallel),
    /// Workgroups in order (global atomics).
    InOrder(Mutex<InOrder>),
}

impl Races {
    /// The check for spans `tracked` (per span: its length where tracked), with the model
    /// `in_order`.
    pub fn new(tracked: Vec<Option<usize>>, in_order: bool) -> Races {
        let model = if in_order {
            let spans = tracked.iter().map(|t| t.map(|n| vec![None; n.div_ceil(PAGE)])).collect();
            Model::InOrder(Mutex::new(InOrder::new(spans)))
        } else {
            let spans = tracked
                .iter()
                .map(|t| t.map(|n| (0..n.div_ceil(PAGE)).map(|_| OnceLock::new()).collect()))
                .collect();
            Model::Parallel(Parallel { spans })
        };
        Races { tracked: tracked.iter().map(Option::is_some).collect(), model }
    }

    /// Whether span `s` is tracked.
    pub fn tracks(&self, s: usize) -> bool {
        self.tracked.get(s).copied().unwrap_or(false)
    }
}

/// Per span, its length where the check across workgroups tracks it: bound to a parameter that
/// writes, or a region no parameter names where the kernel writes through raw addresses.
pub(crate) fn tracked_spans(
    kernel: &Kernel,
    spans: &[Span],
    params: &[Option<usize>],
) -> Vec<Option<usize>> {
    // A store or atomic through a raw address (of the memory ops, the ones with side effects).
    let raw_writes = kernel
        .insts
        .values()
        .any(|d| d.op.has_side_effects() && matches!(d.op.memory(), Some(MemRef::Global(_))));
    let writes = |d: &ParamData| match &d.kind {
        ParamKind::Buffer { access, .. } => access.writes(),
        ParamKind::Scalar(_) => false,
    };
    (0..spans.len())
        .map(|s| {
            let mut bound = kernel
                .params
                .iter()
                .filter(|(p, _)| params[p.index()] == Some(s))
                .map(|(_, d)| d)
                .peekable();
            let writes = match bound.peek() {
                Some(_) => bound.any(writes),
                None => raw_writes,
            };
            writes.then_some(spans[s].bytes.len())
        })
        .collect()
}

/// The error for a conflict the parallel model found after the run.
pub(crate) fn parallel_race(kernel: &Kernel, launch: &Launch, c: Conflict) -> InterpError {
    let place = |wg: u64| workgroup_at(launch.grid, wg);
    let inst = |i: u32| Inst::new(i as usize);
    let op = |i: u32| crate::print::mnemonic(&kernel.insts[inst(i)].op);
    let (wg1, i1) = whose(c.first.0);
    let (wg2, i2) = whose(c.second.0);
    let verb = |w: bool| if w { "written" } else { "read" };
    let [x, y, z] = place(wg1);
    InterpError::WorkgroupRace {
        site: Box::new(Site {
            kernel: kernel.name.clone(),
            inst: inst(i2),
            op: op(i2),
            workgroup: place(wg2),
        }),
        detail: format!(
            "byte {} of {} is {} here and {} by workgroup ({x}, {y}, {z}) ({} {}) in the same \
             launch; no atomic orders them (a kernel without global atomics cannot order its \
             workgroups)",
            c.addr.1,
            launch.name_span(kernel, c.addr.0),
            verb(c.second.1),
            verb(c.first.1),
            inst(i1),
            op(i1),
        ),
    }
}

/// The bytes of the tracked spans (per span: `None` where untracked).
pub(crate) fn snapshot(spans: &[Span], tracked: &[Option<usize>]) -> Vec<Option<Vec<u8>>> {
    spans
        .iter()
        .zip(tracked)
        .map(|(s, t)| t.map(|_| s.bytes.iter().map(|b| b.load(Ordering::Relaxed)).collect()))
        .collect()
}

/// Puts the bytes of a [`snapshot`] back.
pub(crate) fn restore(spans: &[Span], saved: &[Option<Vec<u8>>]) {
    for (s, saved) in spans.iter().zip(saved) {
        for (b, &v) in s.bytes.iter().zip(saved.iter().flatten()) {
            b.store(v, Ordering::Relaxed);
        }
    }
}

/// After the run in reverse order: the first tracked byte that differs from the run in order
/// (`forward`, a [`snapshot`]), as an error.
pub(crate) fn order_dependence(
    kernel: &Kernel,
    launch: &Launch,
    forward: &[Option<Vec<u8>>],
) -> Option<InterpError> {
    for (s, (span, fwd)) in launch.spans.iter().zip(forward).enumerate() {
        let Some(fwd) = fwd else { continue };
        let at = span.bytes.iter().zip(fwd).position(|(b, &f)| b.load(Ordering::Relaxed) != f);
        if let Some(i) = at {
            return Some(InterpError::OrderDependent {
                kernel: kernel.name.clone(),
                detail: format!(
                    "byte {i} of {} is {:#04x} with the workgroups run in order and {:#04x} \
                     in reverse order",
                    launch.name_span(kernel, s),
                    fwd[i],
                    span.bytes[i].load(Ordering::Relaxed)
                ),
            });
        }
    }
    None
}

/// A (workgroup, instruction) pair as one ordered number: the workgroup's linear index plus one
/// in the high half (0: nobody).
fn who(wg: u64, inst: u32) -> u64 {
    ((wg + 1) << 32) | inst as u64
}

/// The workgroup and instruction of [`who`]'s number.
pub(crate) fn whose(x: u64) -> (u64, u32) {
    ((x >> 32) - 1, x as u32)
}

/// Per tracked byte, the least and greatest [`who`] that wrote it and that read it.
pub(crate) struct Parallel {
    spans: Vec<Option<Vec<OnceLock<Box<[AtomicU64]>>>>>,
}

/// Two accesses of one byte by different workgroups, at least one a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Conflict {
    pub addr: Addr,
    /// [`who`] of the first access, and whether it writes.
    pub first: (u64, bool),
    /// [`who`] of the second access, and whether it writes.
    pub second: (u64, bool),
}

impl Parallel {
    fn page(&self, span: usize, page: usize) -> Option<&[AtomicU64]> {
        let pages = self.spans.get(span)?.as_ref()?;
        let p = pages.get(page)?.get_or_init(|| {
            (0..4 * PAGE).map(|i| AtomicU64::new(if i % 2 == 0 { u64::MAX } else { 0 })).collect()
        });
        Some(p)
    }

    /// Records an access of bytes `off..off + n` of span `span` by workgroup `wg`.
    pub fn touch(&self, (span, off): Addr, n: usize, wg: u64, inst: u32, write: bool) {
        let x = who(wg, inst);
        for byte in off..off + n {
            let Some(p) = self.page(span, byte / PAGE) else { return };
            let at = 4 * (byte % PAGE) + if write { 0 } else { 2 };
            p[at].fetch_min(x, Ordering::Relaxed);
            p[at + 1].fetch_max(x, Ordering::Relaxed);
        }
    }

    /// After the run: the first byte two workgroups touched, one of them writing.
    pub fn first_conflict(&self) -> Option<Conflict> {
        for (span, pages) in self.spans.iter().enumerate() {
            let Some(pages) = pages else { continue };
            for (pi, page) in pages.iter().enumerate() {
                let Some(p) = page.get() else { continue };
                for b in 0..PAGE {
                    let v = |i: usize| p[4 * b + i].load(Ordering::Relaxed);
                    let (min_w, max_w, min_r, max_r) = (v(0), v(1), v(2), v(3));
                    if max_w == 0 {
                        continue;
                    }
                    let wg = |x: u64| x >> 32;
                    let addr = (span, pi * PAGE + b);
                    let c = |second: u64, writes: bool| Conflict {
                        addr,
                        first: (min_w, true),
                        second: (second, writes),
                    };
                    if wg(min_w) != wg(max_w) {
                        return Some(c(max_w, true));
                    }
                    if max_r != 0 && wg(min_r) != wg(min_w) {
                        return Some(c(min_r, false));
                    }
                    if max_r != 0 && wg(max_r) != wg(min_w) {
                        return Some(c(max_r, false));
                    }
                }
            }
        }
        None
    }
}

/// One access in the in-order model.
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct Access {
    /// The workgroup's linear index plus one (0: none).
    pub wg: u32,
    pub lane: u32,
    /// The workgroup's clock at the access ([`WgSync::clock`]).
    pub clock: u32,
    pub inst: u32,
}

/// A tracked byte in the in-order model.
#[derive(Clone, Copy, Default)]
struct Byte {
    write: Access,
    read: Access,
    /// The last workgroup (plus one) to update the byte atomically.
    atomic: u32,
    /// Whether [`InOrder::readers`] holds earlier readers of the byte.
    shared: bool,
}

/// What a device atomic published: lane `lane`'s writes before clock `own` and every lane's
/// before clock `all` (the last `barrier all`), in workgroup `wg` (plus one).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pub {
    wg: u32,
    lane: u32,
    own: u32,
    all: u32,
}

impl Pub {
    /// Whether this publication covers access `a`.
    fn covers(&self, a: Access) -> bool {
        self.wg == a.wg && ((self.lane == a.lane && a.clock < self.own) || a.clock < self.all)
    }
}

/// A map keyed by addresses, hashed fast and the same every run (no secret seed: the keys are
/// the interpreter's own, not an attacker's).
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;

/// The launch's state in the in-order model.
pub(crate) struct InOrder {
    spans: Vec<Option<Vec<Option<Box<[Byte]>>>>>,
    /// Per atomically updated address, what its atomics published, in order.
    pubs: FastMap<Addr, Vec<Pub>>,
    /// Per byte read by several workgroups since its last write: the last read of each
    /// workgroup but the latest reader's ([`Byte::read`]).
    readers: FastMap<Addr, Vec<Access>>,
}

/// What an access found.
#[derive(Debug)]
pub(crate) enum Found {
    /// The access races with `other` of another workgroup (`writes`: a write).
    Unordered { other: Access, writes: bool },
    /// A plain access to a byte another workgroup (plus one) updated atomically.
    Atomic { wg: u32 },
}

/// How a lane touches a tracked byte in the in-order model.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Touch {
    Read,
    Write,
    /// A device-scope atomic.
    Atomic,
}

impl InOrder {
    /// Fresh state for `spans` (per span: its length if tracked).
    fn new(spans: Vec<Option<Vec<Option<Box<[Byte]>>>>>) -> InOrder {
        InOrder { spans, pubs: FastMap::default(), readers: FastMap::default() }
    }

    /// Checks and records lane `me.lane`'s access of bytes `off..off + n` of `span`.
    pub fn touch(
        &mut self,
        (span, off): Addr,
        n: usize,
        me: Access,
        touch: Touch,
        sync: &WgSync,
    ) -> Option<Found> {
        let InOrder { spans, readers, .. } = self;
        let pages = spans.get_mut(span)?.as_mut()?;
        let mut found = None;
        // A page at a time: the bytes of an access are almost always in one.
        let (mut byte, end) = (off, off + n);
        while byte < end {
            let (page, from) = (byte / PAGE, byte % PAGE);
            let len = (PAGE - from).min(end - byte);
            let p = pages.get_mut(page)?;
            let p = p.get_or_insert_with(|| vec![Byte::default(); PAGE].into_boxed_slice());
            for (addr, b) in (byte..).map(|i| (span, i)).zip(&mut p[from..from + len]) {
                let f = Self::touch_byte(readers, addr, b, me, touch, sync, off);
                found = found.or(f);
            }
            byte += len;
        }
        found
    }

    /// [`InOrder::touch`] of one byte, `b` at `addr`; `off` is where the access starts.
    fn touch_byte(
        readers: &mut FastMap<Addr, Vec<Access>>,
        addr: Addr,
        b: &mut Byte,
        me: Access,
        touch: Touch,
        sync: &WgSync,
        off: usize,
    ) -> Option<Found> {
        let other = |a: Access| a.wg != 0 && a.wg != me.wg;
        let unseen = |a: &&Access| other(**a) && !sync.sees(**a, me.lane);
        let earlier = match (touch, b.shared) {
            (Touch::Read, _) | (_, false) => None,
            _ => readers.get(&addr).and_then(|r| r.iter().find(unseen)).copied(),
        };
        let found = if other(b.write) && !sync.sees(b.write, me.lane) {
            Some(Found::Unordered { other: b.write, writes: true })
        } else if touch != Touch::Read && other(b.read) && !sync.sees(b.read, me.lane) {
            Some(Found::Unordered { other: b.read, writes: false })
        } else if let Some(a) = earlier {
            Some(Found::Unordered { other: a, writes: false })
        } else if touch != Touch::Atomic
            && b.atomic != 0
            && b.atomic != me.wg
            && !sync.updated.contains(&(addr.0, off))
        {
            Some(Found::Atomic { wg: b.atomic })
        } else {
            None
        };
        match touch {
            Touch::Read => {
                if other(b.read) {
                    // Another workgroup read it last: keep its read beside the new one.
                    let r = readers.entry(addr).or_default();
                    match r.iter_mut().find(|a| a.wg == b.read.wg) {
                        Some(a) => *a = b.read,
                        None => r.push(b.read),
                    }
                    b.shared = true;
                }
                b.read = me;
            }
            Touch::Write => {
                b.write = me;
                if std::mem::take(&mut b.shared) {
                    readers.remove(&addr);
                }
            }
            Touch::Atomic => b.atomic = me.wg,
        }
        found
    }

    /// A device atomic of lane `lane` at address `addr`: it acquires what the earlier atomics
    /// there published, then publishes this workgroup's ordered writes.
    pub fn atomic(&mut self, addr: Addr, wg: u32, lane: u32, sync: &mut WgSync) {
        let pubs = self.pubs.entry(addr).or_default();
        let clock = sync.clock;
        for p in pubs.iter().filter(|p| p.wg != wg) {
            sync.seen.push((*p, lane, clock));
        }
        sync.acquire(lane as usize);
        sync.updated.push(addr);
        pubs.push(Pub { wg, lane, own: clock, all: sync.last_all });
    }
}

/// A workgroup's own state in the in-order model.
#[derive(Default)]
pub(crate) struct WgSync {
    /// Counts the workgroup's memory and synchronizing instructions (from 1).
    pub clock: u32,
    /// Clocks of its barriers.
    barriers: Vec<u32>,
    /// Clock of its last `barrier all` (0: none).
    last_all: u32,
    /// Per lane, the clock of its last device fence or device atomic (0: none).
    acq: Vec<u32>,
    /// What its atomics acquired: the publication, the acquiring lane and clock.
    seen: Vec<(Pub, u32, u32)>,
    /// Addresses it updated atomically.
    updated: Vec<Addr>,
    /// The wave size.
    wave: u32,
}

impl WgSync {
    /// Fresh state for a workgroup of `lanes` lanes in waves of `wave`.
    pub fn reset(&mut self, lanes: usize, wave: usize) {
        self.wave = wave as u32;
        self.clock = 0;
        self.barriers.clear();
        self.last_all = 0;
        self.acq.clear();
        self.acq.resize(lanes, 0);
        self.seen.clear();
        self.updated.clear();
    }

    /// Lane `lane` runs a device fence (or atomic) now.
    pub fn acquire(&mut self, lane: usize) {
        if let Some(a) = self.acq.get_mut(lane) {
            *a = self.clock;
        }
    }

    /// A barrier now (`all`: it orders global memory too).
    pub fn barrier(&mut self, all: bool) {
        self.barriers.push(self.clock);
        if all {
            self.last_all = self.clock;
        }
    }

    /// Whether lane `lane` sees access `a` of another workgroup now.
    fn sees(&self, a: Access, lane: u32) -> bool {
        let ta = self.acq.get(lane as usize).copied().unwrap_or(0);
        self.seen.iter().any(|&(p, k, t)| {
            p.covers(a)
                && ta >= t
                && (k / self.wave == lane / self.wave
                    || self.barriers.iter().any(|&b| b > t && b < ta))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_conflicts_do_not_depend_on_the_order() {
        // Workgroups 3 and 5 write byte 7, in either order; workgroup 2 reads byte 9 that 4
        // wrote.
        for flip in [false, true] {
            let r = Parallel { spans: vec![None, Some((0..2).map(|_| OnceLock::new()).collect())] };
            let (a, b) = if flip { (5, 3) } else { (3, 5) };
            r.touch((1, 7), 1, a, 10 + a as u32, true);
            r.touch((1, 7), 1, b, 10 + b as u32, true);
            r.touch((1, 9), 1, 2, 1, false);
            r.touch((1, 9), 1, 4, 2, true);
            r.touch((0, 9), 1, 4, 2, true);
            let c = r.first_conflict().expect("a conflict");
            assert_eq!(c.addr, (1, 7));
            assert_eq!((whose(c.first.0), whose(c.second.0)), ((3, 13), (5, 15)));
        }
    }

    #[test]
    fn a_workgroup_may_reread_its_own_bytes() {
        let r = Parallel { spans: vec![Some(vec![OnceLock::new()])] };
        r.touch((0, 0), 4, 1, 0, true);
        r.touch((0, 0), 4, 1, 1, false);
        r.touch((0, 8), 4, 2, 0, false);
        r.touch((0, 8), 4, 3, 0, false);
        assert_eq!(r.first_conflict(), None);
        r.touch((0, 2), 1, 0, 5, false);
        let c = r.first_conflict().expect("a conflict");
        assert_eq!((c.addr, c.first, c.second), ((0, 2), (who(1, 0), true), (who(0, 5), false)));
    }
}
