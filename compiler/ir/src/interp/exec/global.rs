//! The workgroup's side of the check across workgroups ([`crate::interp::races`]): each global
//! access, device fence, barrier and device atomic as the launch's model records it; and the
//! check between the waves of the workgroup: two waves touching the same global byte with no
//! `barrier all` between, one of them writing, race as they would in LDS (a barrier of LDS
//! orders no global memory on AMDGPU).

use super::memory::{touch_run, Interval, Issue, Place, Shadow, Touch as WaveTouch, FRESH};
use super::*;
use crate::interp::races::{Access, FastMap, Found, Model, Touch};
use crate::Scope;

/// Bytes a page of [`GlobalShadow`].
const PAGE: usize = 64;

/// With the sanitizer, the shadow of the global bytes the workgroup touches in tracked spans
/// (the check between its waves), as [`Exec::shadow`] is LDS's: pages of [`PAGE`] bytes found
/// by (span, page), one lookup an access rather than a byte. The next workgroup takes the pages
/// again for its own bytes: its `gen` makes their shadows fresh.
#[derive(Default)]
pub(super) struct GlobalShadow {
    pages: FastMap<(usize, usize), usize>,
    pool: Vec<[Shadow; PAGE]>,
    used: usize,
}

impl GlobalShadow {
    /// For the next workgroup (a new `gen`).
    pub(super) fn clear(&mut self) {
        self.pages.clear();
        self.used = 0;
    }

    /// Drops the pages (when `gen` wraps around: a page's old shadows could look current).
    pub(super) fn forget(&mut self) {
        self.clear();
        self.pool.clear();
    }

    /// The shadows of page `page` of span `span`.
    fn page(&mut self, span: usize, page: usize) -> &mut [Shadow; PAGE] {
        let (pool, used) = (&mut self.pool, &mut self.used);
        let i = *self.pages.entry((span, page)).or_insert_with(|| {
            if *used == pool.len() {
                pool.push([FRESH; PAGE]);
            }
            *used += 1;
            *used - 1
        });
        &mut self.pool[i]
    }
}

/// How an instruction touches global memory, for the check across workgroups.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum GlobalTouch {
    Read,
    Write,
    Atomic(Scope),
}

impl Exec<'_> {
    /// The workgroup's linear index (x fastest).
    fn linear_wg(&self) -> u64 {
        let [gx, gy, _] = self.launch.grid.map(u64::from);
        let [x, y, z] = self.wg.map(u64::from);
        x + gx * (y + gy * z)
    }

    /// Records the resolved accesses of `self.locs` (`bytes` each) in global memory; in the
    /// in-order model, an error at the first that another workgroup's access is not ordered
    /// with.
    pub(super) fn check_global(
        &mut self,
        inst: Inst,
        bytes: usize,
        touch: GlobalTouch,
    ) -> Result<(), InterpError> {
        let launch = self.launch;
        let Some(races) = &launch.races else { return Ok(()) };
        let tracked = |l: &Loc| matches!(l.place, Place::Global(s) if races.tracks(s));
        if !self.locs.iter().any(tracked) {
            return Ok(());
        }
        self.check_waves(inst, bytes, touch, races)?;
        self.sync.clock += 1;
        let wg = self.linear_wg();
        match &races.model {
            Model::Parallel(r) => {
                let write = touch != GlobalTouch::Read;
                for loc in &self.locs {
                    if let Place::Global(s) = loc.place {
                        r.touch((s, loc.off), bytes, wg, inst.index() as u32, write);
                    }
                }
                Ok(())
            }
            Model::InOrder(r) => {
                let mut r = r.lock().unwrap_or_else(|p| p.into_inner());
                let t = match touch {
                    GlobalTouch::Read => Touch::Read,
                    GlobalTouch::Write | GlobalTouch::Atomic(Scope::Workgroup) => Touch::Write,
                    GlobalTouch::Atomic(Scope::Device) => Touch::Atomic,
                };
                let mut first: Option<(Found, usize, usize)> = None;
                let mut lanes = Vec::new();
                for i in 0..self.locs.len() {
                    let loc = self.locs[i];
                    let Place::Global(s) = loc.place else { continue };
                    let me = Access {
                        wg: wg as u32 + 1,
                        lane: loc.lane as u32,
                        clock: self.sync.clock,
                        inst: inst.index() as u32,
                    };
                    if let Some(f) = r.touch((s, loc.off), bytes, me, t, &self.sync) {
                        first.get_or_insert((f, s, loc.off));
                        lanes.push(loc.lane);
                    }
                    if t == Touch::Atomic {
                        r.atomic((s, loc.off), me.wg, me.lane, &mut self.sync);
                    }
                }
                drop(r);
                match first {
                    None => Ok(()),
                    Some((found, s, off)) => Err(self.race_error(inst, found, (s, off), lanes)),
                }
            }
        }
    }

    /// The check between the workgroup's waves of the resolved accesses in tracked spans.
    fn check_waves(
        &mut self,
        inst: Inst,
        bytes: usize,
        touch: GlobalTouch,
        races: &crate::interp::races::Races,
    ) -> Result<(), InterpError> {
        let t = match touch {
            GlobalTouch::Read => WaveTouch::Read,
            GlobalTouch::Write => WaveTouch::Write,
            GlobalTouch::Atomic(_) => WaveTouch::Atomic,
        };
        let at = Interval { gen: self.gen, epoch: self.global_epoch };
        let mut found = None;
        let mut lanes = Vec::new();
        for i in 0..self.locs.len() {
            let loc = self.locs[i];
            let Place::Global(s) = loc.place else { continue };
            if !races.tracks(s) {
                continue;
            }
            let wave = (loc.lane / self.w) as u32;
            let (mut byte, end) = (loc.off, loc.off + bytes);
            while byte < end {
                let (page, from) = (byte / PAGE, byte % PAGE);
                let n = (PAGE - from).min(end - byte);
                let shadows = &mut self.global_shadow.page(s, page)[from..from + n];
                if let Some(Issue::Race { byte, other_wave, other }) =
                    touch_run(shadows, byte, at, wave, t, false)
                {
                    found.get_or_insert((s, byte, wave, other_wave, other));
                    lanes.push(loc.lane);
                }
                byte += n;
            }
        }
        let Some((s, byte, wave, other_wave, other)) = found else { return Ok(()) };
        Err(InterpError::WaveRace {
            site: self.site(inst),
            lanes: self.lanes(lanes),
            detail: format!(
                "byte {byte} of {} {} by wave {wave} and {} by wave {other_wave} with no \
                 `barrier all` between",
                self.launch.name_span(self.p.k, s),
                t.verb(),
                other.verb()
            ),
        })
    }

    /// A device fence by the lanes of `m`, or a barrier (`Some(all)`), in the in-order model.
    pub(super) fn sync_point(&mut self, m: &Mask, barrier: Option<bool>) {
        if !matches!(&self.launch.races, Some(r) if matches!(r.model, Model::InOrder(_))) {
            return;
        }
        self.sync.clock += 1;
        match barrier {
            Some(all) => self.sync.barrier(all),
            None => m.iter().for_each(|l| self.sync.acquire(l)),
        }
    }

    fn race_error(
        &self,
        inst: Inst,
        found: Found,
        (s, off): (usize, usize),
        lanes: Vec<usize>,
    ) -> InterpError {
        let span = self.launch.name_span(self.p.k, s);
        let at = |wg: u32| {
            let [x, y, z] = crate::interp::workgroup_at(self.launch.grid, wg as u64 - 1);
            format!("({x}, {y}, {z})")
        };
        let op = |i: u32| crate::print::mnemonic(&self.p.k.insts[Inst::new(i as usize)].op);
        let detail = match found {
            Found::Unordered { other, writes } => format!(
                "byte {off} of {} was {} by workgroup {} ({} {}, lane {}) and no device atomic \
                 orders that before this access, {}",
                span,
                if writes { "written" } else { "read" },
                at(other.wg),
                Inst::new(other.inst as usize),
                op(other.inst),
                other.lane,
                self.lanes(lanes),
            ),
            Found::Atomic { wg } => format!(
                "byte {off} of {} was updated atomically by workgroup {} and is accessed here \
                 without an atomic of this workgroup on it, {}",
                span,
                at(wg),
                self.lanes(lanes),
            ),
        };
        InterpError::WorkgroupRace { site: self.site(inst), detail }
    }
}
