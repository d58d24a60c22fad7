//! Memory: resolving each lane's access, loads, stores, atomics, and the sanitizer's LDS shadow
//! (races, reads of bytes never written) and read-only check.

use super::*;

pub(super) const NEVER: u32 = u32::MAX;

/// Sanitizer state of one LDS byte: who wrote, read and atomically updated it in which barrier
/// interval (epoch), in which workgroup run by its `Exec` (`gen`: a byte of an earlier one's is
/// [`FRESH`], so a workgroup starts without resetting its shadow, forty bytes an LDS byte).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Shadow {
    r_mask: u64,
    a_mask: u64,
    gen: u32,
    w_epoch: u32,
    w_wave: u32,
    r_epoch: u32,
    a_epoch: u32,
    init: bool,
}

pub(super) const FRESH: Shadow = Shadow {
    r_mask: 0,
    a_mask: 0,
    gen: 0,
    w_epoch: NEVER,
    w_wave: 0,
    r_epoch: NEVER,
    a_epoch: NEVER,
    init: false,
};

impl Shadow {
    /// Records an access of wave `wave` in barrier interval `e`; the other wave's access it
    /// races with, if any: two different waves in one interval, one of them writing (atomics of
    /// different waves do not race with each other).
    pub(super) fn touch(&mut self, e: u32, wave: u32, touch: Touch) -> Option<(u32, Touch)> {
        let bit = 1u64 << (wave % 64);
        let others = |mask: u64| (mask & !bit).trailing_zeros();
        let race = if self.w_epoch == e && self.w_wave != wave {
            Some((self.w_wave, Touch::Write))
        } else if touch != Touch::Read && self.r_epoch == e && self.r_mask & !bit != 0 {
            Some((others(self.r_mask), Touch::Read))
        } else if touch != Touch::Atomic && self.a_epoch == e && self.a_mask & !bit != 0 {
            Some((others(self.a_mask), Touch::Atomic))
        } else {
            None
        };
        match touch {
            Touch::Read => {
                if self.r_epoch != e {
                    self.r_epoch = e;
                    self.r_mask = 0;
                }
                self.r_mask |= bit;
            }
            Touch::Write => {
                self.init = true;
                self.w_epoch = e;
                self.w_wave = wave;
            }
            Touch::Atomic => {
                self.init = true;
                if self.a_epoch != e {
                    self.a_epoch = e;
                    self.a_mask = 0;
                }
                self.a_mask |= bit;
            }
        }
        race
    }

    /// This byte's state in workgroup `gen`: fresh if it was last touched by an earlier one.
    pub(super) fn of(&mut self, gen: u32) -> &mut Shadow {
        if self.gen != gen {
            *self = Shadow { gen, ..FRESH };
        }
        self
    }

    /// Whether this is [`FRESH`] in workgroup `gen` (the interpreter's tests).
    #[cfg(test)]
    pub(super) fn is_fresh(&self, gen: u32) -> bool {
        if self.gen != gen {
            return true;
        }
        let f = FRESH;
        (self.init, self.w_epoch, self.w_wave, self.r_epoch, self.r_mask, self.a_epoch, self.a_mask)
            == (f.init, f.w_epoch, f.w_wave, f.r_epoch, f.r_mask, f.a_epoch, f.a_mask)
    }
}

/// A barrier interval: workgroup `gen` (of those an `Exec` ran), interval `epoch` in it.
#[derive(Clone, Copy)]
pub(super) struct Interval {
    pub(super) gen: u32,
    pub(super) epoch: u32,
}

/// Records an access of wave `wave` to the bytes whose shadows are `bytes` (the first is byte
/// `first`); the first problem found: a race, or (`check_init`) a read of a byte never written.
pub(super) fn touch_run(
    bytes: &mut [Shadow],
    first: usize,
    at: Interval,
    wave: u32,
    touch: Touch,
    check_init: bool,
) -> Option<Issue> {
    let one = |s: &mut Shadow, byte: usize| {
        let s = s.of(at.gen);
        let uninit = check_init && touch != Touch::Write && !s.init;
        let race = s.touch(at.epoch, wave, touch);
        match race {
            _ if uninit => Some(Issue::Uninit { byte }),
            Some((other_wave, other)) => Some(Issue::Race { byte, other_wave, other }),
            None => None,
        }
    };
    // The bytes of one access almost always share one state (they were written, read and reset
    // together): a byte in the first byte's state before the access takes its state after it
    // (and its problem, the first byte's, is the one reported); a byte in another state takes
    // the long way. A repeated read changes no state: then nothing is written.
    let (head, rest) = bytes.split_first_mut()?;
    let old = *head;
    let mut issue = one(head, first);
    let new = *head;
    for (byte, s) in (first + 1..).zip(rest) {
        if *s == old {
            if new != old {
                *s = new;
            }
        } else {
            let found = one(s, byte);
            issue = issue.or(found);
        }
    }
    issue
}

/// One lane's [`crate::Op::AsyncCopy`]s not yet landed: the group being filled, then the closed
/// groups, oldest first.
#[derive(Default)]
pub(crate) struct LaneCopies {
    open: Vec<Copy>,
    closed: std::collections::VecDeque<Vec<Copy>>,
}

/// A copy in flight: the bytes read at issue, for LDS bytes `off..off + n`.
#[derive(Clone, Copy)]
struct Copy {
    inst: Inst,
    off: usize,
    n: usize,
    data: u128,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Touch {
    Read,
    Write,
    Atomic,
}

impl Touch {
    pub(super) fn verb(self) -> &'static str {
        match self {
            Touch::Read => "read",
            Touch::Write => "written",
            Touch::Atomic => "updated atomically",
        }
    }
}

/// What the LDS sanitizer found on one access.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Issue {
    Uninit { byte: usize },
    Race { byte: usize, other_wave: u32, other: Touch },
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    /// A span of global memory (an index into the launch's spans).
    Global(usize),
    Lds,
    Private,
}

/// How an access addresses memory: what its index counts and the alignment it assumes.
#[derive(Clone, Copy)]
pub(super) struct How {
    pub unit: IndexUnit,
    /// In bytes, a power of two.
    pub align: u32,
}

/// One lane's resolved access.
#[derive(Clone, Copy)]
pub(super) struct Loc {
    pub(super) lane: usize,
    pub(super) place: Place,
    pub(super) off: usize,
}

impl Exec<'_> {
    /// Resolves every active lane's access of `bytes` bytes into `self.locs`; an error if any is
    /// out of bounds or misaligned (all lanes are checked before anything is read or written).
    /// `elem_bytes` is what one step of the index moves; the address checked against `align` is
    /// the real one: a buffer's base plus the offset, the offset in LDS (allocated 16-byte
    /// aligned), the offset in a private array (each allocated 16-byte aligned).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn resolve(
        &mut self,
        inst: Inst,
        m: &Mask,
        mem: MemRef,
        index: Value,
        elem_bytes: usize,
        bytes: usize,
        align: u32,
        verb: &str,
    ) -> Result<(), InterpError> {
        self.resolve_bounds(inst, m, mem, index, elem_bytes, bytes, verb)?;
        self.check_aligned(inst, mem, index, elem_bytes, bytes, align, verb)
    }

    /// The alignment half of [`Exec::resolve`], on the lanes of `self.locs`.
    #[allow(clippy::too_many_arguments)]
    fn check_aligned(
        &self,
        inst: Inst,
        mem: MemRef,
        index: Value,
        elem_bytes: usize,
        bytes: usize,
        align: u32,
        verb: &str,
    ) -> Result<(), InterpError> {
        let p = self.p;
        let index_of = arith::int_reader(p.k.ty(index).scalar);
        let irow = p.slot(index) * self.lp;
        let (mut bad, mut detail) = (Vec::new(), String::new());
        for loc in &self.locs {
            // The address, and (only for the first misaligned lane: this runs for every access)
            // how the message names it.
            let (addr, what): (u64, &dyn Fn() -> String) = match (mem, loc.place) {
                (MemRef::Private(s), _) => {
                    let rel = index_of(self.regs[irow + loc.lane]) * elem_bytes as i128;
                    (rel as u64, &move || {
                        format!("byte {rel} of private `{}`", p.k.private[s].name)
                    })
                }
                (_, Place::Global(s)) => {
                    let a = self.launch.spans[s].base.wrapping_add(loc.off as u64);
                    (a, &move || format!("address {a:#x}"))
                }
                (_, Place::Lds) => (loc.off as u64, &|| format!("LDS byte {}", loc.off)),
                (_, Place::Private) => (loc.off as u64, &|| format!("private byte {}", loc.off)),
            };
            if addr % align as u64 != 0 {
                if bad.is_empty() {
                    detail = format!(
                        "{verb} of {bytes} bytes at {}, expected a multiple of {align} (the alignment it assumes)",
                        what()
                    );
                }
                bad.push(loc.lane);
            }
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(InterpError::Misaligned { site: self.site(inst), lanes: self.lanes(bad), detail })
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn resolve_bounds(
        &mut self,
        inst: Inst,
        m: &Mask,
        mem: MemRef,
        index: Value,
        elem_bytes: usize,
        bytes: usize,
        verb: &str,
    ) -> Result<(), InterpError> {
        let (p, lp) = (self.p, self.lp);
        let k = p.k;
        let index_of = arith::int_reader(k.ty(index).scalar);
        let irow = p.slot(index) * lp;
        let mut bad = Vec::new();
        let mut detail = String::new();
        self.locs.clear();
        // Per instruction: the place, its start and length (private: per lane, below).
        let spans = &self.launch.spans;
        let (place, base, len) = match mem {
            MemRef::Buffer(q) => match self.launch.params[q.index()] {
                Some(s) => (Place::Global(s), 0, spans[s].bytes.len()),
                None => (Place::Lds, 0, 0),
            },
            MemRef::Lds(s) => (Place::Lds, p.lds_offsets[s.index()], k.lds[s].bytes() as usize),
            MemRef::Private(s) => {
                let d = &k.private[s];
                (Place::Private, p.private_offsets[s.index()], (d.elem.bytes() * d.len) as usize)
            }
            MemRef::Global(_) => (Place::Lds, 0, 0),
        };
        let what = || match mem {
            MemRef::Buffer(q) => format!("buffer `{}`", k.params[q].name),
            MemRef::Lds(s) => format!("LDS `{}`", k.lds[s].name),
            MemRef::Private(s) => format!("private `{}`", k.private[s].name),
            MemRef::Global(_) => String::new(),
        };
        let lane_base = |l: usize| if place == Place::Private { l * p.private_bytes } else { 0 };
        for l in m.iter() {
            let rel = index_of(self.regs[irow + l]) * elem_bytes as i128;
            if let MemRef::Global(a) = mem {
                let addr = self.regs[p.slot(a) * lp + l] as i128 + rel;
                let below = u64::try_from(addr).ok().and_then(|a| self.launch.span_below(a));
                let past = |s: usize| addr - spans[s].base as i128 - spans[s].bytes.len() as i128;
                let Some(s) = below.filter(|&s| past(s) < 0) else {
                    if bad.is_empty() {
                        // An overrun a little past an end: name what it overran.
                        let near = match below {
                            Some(s) if past(s) < 1 << 20 => format!(
                                ": byte {} of {} ({} bytes) is past its end",
                                addr - spans[s].base as i128,
                                spans[s].what(),
                                spans[s].bytes.len()
                            ),
                            Some(_) | None => String::new(),
                        };
                        detail = format!(
                            "{verb} of {bytes} bytes at address {addr:#x}, in no buffer or region{near}"
                        );
                    }
                    bad.push(l);
                    continue;
                };
                let off = (addr - spans[s].base as i128) as usize;
                let len = spans[s].bytes.len();
                if off + bytes > len {
                    if bad.is_empty() {
                        detail = format!(
                            "{verb} of {bytes} bytes at address {addr:#x}, byte {off} of {} ({len} bytes)",
                            spans[s].what()
                        );
                    }
                    bad.push(l);
                } else {
                    self.locs.push(Loc { lane: l, place: Place::Global(s), off });
                }
            } else if rel >= 0 && rel + bytes as i128 <= len as i128 {
                self.locs.push(Loc { lane: l, place, off: lane_base(l) + base + rel as usize });
            } else {
                if bad.is_empty() {
                    detail = format!(
                        "{verb} of {bytes} bytes at byte {rel} of {} ({len} bytes)",
                        what()
                    );
                }
                bad.push(l);
            }
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(InterpError::OutOfBounds { site: self.site(inst), lanes: self.lanes(bad), detail })
        }
    }

    pub(super) fn read_bytes(&self, place: Place, off: usize, n: usize) -> u128 {
        let mut buf = [0u8; 16];
        let buf_n = &mut buf[..n];
        match place {
            Place::Global(s) => {
                for (d, b) in buf_n.iter_mut().zip(&self.launch.spans[s].bytes[off..off + n]) {
                    *d = b.load(Relaxed);
                }
            }
            Place::Lds => buf_n.copy_from_slice(&self.lds[off..off + n]),
            Place::Private => buf_n.copy_from_slice(&self.private[off..off + n]),
        }
        u128::from_le_bytes(buf)
    }

    pub(super) fn write_bytes(&mut self, place: Place, off: usize, n: usize, v: u128) {
        if place == Place::Lds {
            self.lds_used(off, n);
        }
        for i in 0..n {
            let b = (v >> (8 * i)) as u8;
            match place {
                Place::Global(s) => self.launch.spans[s].bytes[off + i].store(b, Relaxed),
                Place::Lds => self.lds[off + i] = b,
                Place::Private => self.private[off + i] = b,
            }
        }
    }

    /// Records an LDS access of wave `wave` in the sanitizer's shadow; the first problem found.
    pub(super) fn lds_touch(
        &mut self,
        wave: u32,
        off: usize,
        n: usize,
        touch: Touch,
    ) -> Option<Issue> {
        self.lds_used(off, n);
        let at = Interval { gen: self.gen, epoch: self.epoch };
        touch_run(&mut self.shadow[off..off + n], off, at, wave, touch, true)
    }

    /// Sanitizer bookkeeping for the resolved LDS accesses in `self.locs`.
    pub(super) fn check_lds(
        &mut self,
        inst: Inst,
        touch: Touch,
        bytes: usize,
    ) -> Result<(), InterpError> {
        if !self.launch.sanitize {
            return Ok(());
        }
        let mut found: Option<(Issue, u32)> = None;
        let mut lanes = Vec::new();
        for n in 0..self.locs.len() {
            let loc = self.locs[n];
            if loc.place != Place::Lds {
                continue;
            }
            let wave = (loc.lane / self.w) as u32;
            if let Some(issue) = self.lds_touch(wave, loc.off, bytes, touch) {
                let same_kind = matches!(
                    (found, issue),
                    (None, _)
                        | (Some((Issue::Uninit { .. }, _)), Issue::Uninit { .. })
                        | (Some((Issue::Race { .. }, _)), Issue::Race { .. })
                );
                if same_kind {
                    found.get_or_insert((issue, wave));
                    lanes.push(loc.lane);
                }
            }
        }
        let Some((issue, wave)) = found else { return Ok(()) };
        let site = self.site(inst);
        let lanes = self.lanes(lanes);
        let name_at = |byte: usize| self.lds_name(byte);
        Err(match issue {
            Issue::Uninit { byte } => InterpError::LdsUninit { site, lanes, detail: name_at(byte) },
            Issue::Race { byte, other_wave, other } => InterpError::LdsRace {
                site,
                lanes,
                detail: format!(
                    "{} {} by wave {wave} and {} by wave {other_wave} with no barrier between",
                    name_at(byte),
                    touch.verb(),
                    other.verb()
                ),
            },
        })
    }

    /// With the sanitizer: no lane of `self.locs` writes a read-only buffer, through its
    /// parameter or through a raw address into its span.
    pub(super) fn check_writable(&self, inst: Inst, mem: MemRef) -> Result<(), InterpError> {
        if !self.launch.sanitize {
            return Ok(());
        }
        let k = self.p.k;
        let read_only = |q: Param| match &k.params[q].kind {
            ParamKind::Buffer { access, .. } => !access.writes(),
            ParamKind::Scalar(_) => false,
        };
        let (mut lanes, mut buffer) = (Vec::new(), None);
        for loc in &self.locs {
            let Place::Global(s) = loc.place else { continue };
            let param = match mem {
                MemRef::Buffer(q) => Some(q).filter(|&q| read_only(q)),
                MemRef::Lds(_) | MemRef::Private(_) | MemRef::Global(_) => {
                    if self.launch.spans[s].access.writes() {
                        None
                    } else {
                        self.launch.params.iter().position(|&x| x == Some(s)).map(Param::new)
                    }
                }
            };
            if let Some(q) = param {
                buffer.get_or_insert_with(|| k.params[q].name.clone());
                lanes.push(loc.lane);
            }
        }
        match buffer {
            None => Ok(()),
            Some(buffer) => Err(InterpError::ReadOnly {
                site: self.site(inst),
                lanes: self.lanes(lanes),
                buffer,
            }),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn load(
        &mut self,
        inst: Inst,
        m: &Mask,
        mem: MemRef,
        index: Value,
        ty: Type,
        how: How,
        res: Value,
    ) -> Result<(), InterpError> {
        let eb = ty.scalar.bytes() as usize;
        let n = eb * lanes_of(ty);
        let step = how.unit.stride(ty) as usize;
        self.resolve(inst, m, mem, index, step, n, how.align, "load")?;
        self.check_in_flight(inst, n, "read")?;
        self.check_global(inst, n, GlobalTouch::Read)?;
        let (d, lp, mask) = (self.p.slot(res), self.lp, width_mask(ty.scalar));
        for i in 0..self.locs.len() {
            let loc = self.locs[i];
            let v = self.read_bytes(loc.place, loc.off, n);
            for e in 0..lanes_of(ty) {
                self.regs[(d + e) * lp + loc.lane] = (v >> (e * eb * 8)) as u64 & mask;
            }
        }
        self.check_lds(inst, Touch::Read, n)
    }

    pub(super) fn store(
        &mut self,
        inst: Inst,
        m: &Mask,
        mem: MemRef,
        index: Value,
        value: Value,
        how: How,
    ) -> Result<(), InterpError> {
        let ty = self.p.k.ty(value);
        let eb = ty.scalar.bytes() as usize;
        let n = eb * lanes_of(ty);
        let step = how.unit.stride(ty) as usize;
        self.resolve(inst, m, mem, index, step, n, how.align, "store")?;
        self.check_in_flight(inst, n, "written")?;
        self.check_writable(inst, mem)?;
        self.check_global(inst, n, GlobalTouch::Write)?;
        let (s, lp, mask) = (self.p.slot(value), self.lp, width_mask(ty.scalar));
        for i in 0..self.locs.len() {
            let loc = self.locs[i];
            let mut v = 0u128;
            for e in 0..lanes_of(ty) {
                v |= ((self.regs[(s + e) * lp + loc.lane] & mask) as u128) << (e * eb * 8);
            }
            self.write_bytes(loc.place, loc.off, n, v);
        }
        self.check_lds(inst, Touch::Write, n)
    }

    pub(super) fn atomic(
        &mut self,
        inst: Inst,
        m: &Mask,
        op: AtomicOp,
        (mem, scope): (MemRef, crate::Scope),
        index: Value,
        value: Value,
        res: Value,
    ) -> Result<(), InterpError> {
        let t = self.p.k.ty(value).scalar;
        if !matches!(t.bits(), 32 | 64) || t.class() == TypeClass::Float {
            return Err(self.unsupported(inst, m, format!("not defined on {t}")));
        }
        let n = t.bytes() as usize;
        self.resolve(inst, m, mem, index, n, n, n as u32, "atomic")?;
        self.check_in_flight(inst, n, "updated atomically")?;
        self.check_writable(inst, mem)?;
        self.check_global(inst, n, GlobalTouch::Atomic(scope))?;
        let (sv, d, lp, mask) = (self.p.slot(value), self.p.slot(res), self.lp, width_mask(t));
        // Lanes apply their updates one after another in lane order.
        for i in 0..self.locs.len() {
            let loc = self.locs[i];
            let old = self.read_bytes(loc.place, loc.off, n) as u64;
            let v = self.regs[sv * lp + loc.lane];
            let (a, b) = (as_i128(t, old), as_i128(t, v));
            let new = match op {
                AtomicOp::Add => old.wrapping_add(v),
                AtomicOp::Min => (a.min(b)) as u64,
                AtomicOp::Max => (a.max(b)) as u64,
                AtomicOp::Exchange => v,
                AtomicOp::And => old & v,
                AtomicOp::Or => old | v,
            } & mask;
            self.write_bytes(loc.place, loc.off, n, new as u128);
            self.regs[d * lp + loc.lane] = old;
        }
        self.check_lds(inst, Touch::Atomic, n)
    }

    /// No lane of `self.locs` touches LDS bytes an async copy has not landed yet.
    fn check_in_flight(&self, inst: Inst, n: usize, verb: &str) -> Result<(), InterpError> {
        if self.pending_copies == 0 {
            return Ok(());
        }
        let mut lanes = Vec::new();
        let mut first = None;
        for loc in &self.locs {
            if loc.place != Place::Lds {
                continue;
            }
            if let Some(b) = (loc.off..loc.off + n).find(|&b| self.in_flight[b] > 0) {
                first.get_or_insert(b);
                lanes.push(loc.lane);
            }
        }
        let Some(byte) = first else { return Ok(()) };
        let copy = self.copy_to(byte).map_or(String::new(), |(c, lane)| {
            format!(" (copied there by {} of lane {lane})", c.inst)
        });
        Err(InterpError::AsyncCopy {
            site: self.site(inst),
            lanes: self.lanes(lanes),
            detail: format!(
                "{} {verb} while an async copy to it is in flight{copy}: after the copying \
                 lane's async_wait (and a barrier, for another wave)",
                self.lds_name(byte)
            ),
        })
    }

    /// The copy in flight to LDS byte `byte`, and its lane.
    fn copy_to(&self, byte: usize) -> Option<(Copy, usize)> {
        self.copies.iter().enumerate().find_map(|(lane, c)| {
            c.open
                .iter()
                .chain(c.closed.iter().flatten())
                .find(|c| (c.off..c.off + c.n).contains(&byte))
                .map(|&c| (c, lane))
        })
    }

    /// `LDS \`name\` byte i` of a workgroup LDS offset.
    fn lds_name(&self, byte: usize) -> String {
        let k = self.p.k;
        let s = (0..k.lds.len()).rev().find(|&s| self.p.lds_offsets[s] <= byte).unwrap_or(0);
        let name = k.lds.values().nth(s).map_or("?", |d| d.name.as_str());
        format!("LDS `{name}` byte {}", byte - self.p.lds_offsets.get(s).copied().unwrap_or(0))
    }

    /// [`crate::Op::LdMatrix`]: every lane that names a row (lane `l % W < 8 matrices`) reads
    /// its 16 bytes (in the slot and 16-byte aligned, checked as a load's, and raced as a read),
    /// then each lane takes its pairs from the rows named in its wave.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn ld_matrix(
        &mut self,
        inst: Inst,
        m: &Mask,
        mem: MemRef,
        index: Value,
        matrices: u32,
        trans: bool,
        res: Value,
    ) -> Result<(), InterpError> {
        self.whole_waves(inst, m)?;
        let w = self.w;
        if w != 32 {
            return Err(self.unsupported(inst, m, format!("ld_matrix at wave {w} (32 only)")));
        }
        let named_rows = 8 * matrices as usize;
        let named = m.subset(|l| l % w < named_rows);
        self.resolve(inst, &named, mem, index, 2, 16, 16, "ld_matrix row read")?;
        self.check_in_flight(inst, 16, "read")?;
        self.check_global(inst, 16, GlobalTouch::Read)?;
        let mut rows = vec![0u128; self.lp];
        for i in 0..self.locs.len() {
            let loc = self.locs[i];
            rows[loc.lane] = self.read_bytes(loc.place, loc.off, 16);
        }
        self.check_lds(inst, Touch::Read, 16)?;
        let (d, lp) = (self.p.slot(res), self.lp);
        for l in m.iter() {
            let (base, i) = (l - l % w, l % w);
            let (g, t) = (i / 4, i % 4);
            for j in 0..matrices as usize {
                let half = |row: usize, col: usize| {
                    ((rows[base + 8 * j + row] >> (16 * col)) & 0xffff) as u64
                };
                let pair = if trans {
                    [half(2 * t, g), half(2 * t + 1, g)]
                } else {
                    [half(g, 2 * t), half(g, 2 * t + 1)]
                };
                for (e, x) in pair.into_iter().enumerate() {
                    self.regs[(d + 2 * j + e) * lp + l] = x;
                }
            }
        }
        Ok(())
    }

    /// [`crate::Op::AsyncCopy`]: reads the source now, keeps the bytes in the lane's open group
    /// and marks the destination in flight; with the sanitizer the destination counts as
    /// written now (a race with another wave's access in this barrier interval is one).
    pub(super) fn async_copy(
        &mut self,
        inst: Inst,
        m: &Mask,
        (dst, dst_index): (crate::LdsSlot, Value),
        (src, src_index): (Param, Value),
        bytes: u32,
    ) -> Result<(), InterpError> {
        let n = bytes as usize;
        self.resolve(inst, m, MemRef::Buffer(src), src_index, 1, n, bytes, "async copy read")?;
        self.check_global(inst, n, GlobalTouch::Read)?;
        let data: Vec<(usize, u128)> =
            self.locs.iter().map(|l| (l.lane, self.read_bytes(l.place, l.off, n))).collect();
        self.resolve(inst, m, MemRef::Lds(dst), dst_index, 1, n, bytes, "async copy write")?;
        self.check_in_flight(inst, n, "copied to again")?;
        self.check_lds(inst, Touch::Write, n)?;
        for (i, &(lane, data)) in data.iter().enumerate() {
            let off = self.locs[i].off;
            debug_assert_eq!(self.locs[i].lane, lane);
            self.lds_used(off, n);
            self.in_flight[off..off + n].iter_mut().for_each(|c| *c += 1);
            self.copies[lane].open.push(Copy { inst, off, n, data });
            self.pending_copies += 1;
        }
        Ok(())
    }

    /// [`crate::Op::AsyncWait`]: each active lane closes its open group, then lands its oldest
    /// groups until `pending` are left (with the sanitizer, each landing a write by its wave).
    pub(super) fn async_wait(
        &mut self,
        inst: Inst,
        m: &Mask,
        pending: u32,
    ) -> Result<(), InterpError> {
        let mut race = None;
        for lane in m.iter() {
            let c = &mut self.copies[lane];
            let open = std::mem::take(&mut c.open);
            c.closed.push_back(open);
            while self.copies[lane].closed.len() > pending as usize {
                let group = self.copies[lane].closed.pop_front().unwrap_or_default();
                for cp in group {
                    self.write_bytes(Place::Lds, cp.off, cp.n, cp.data);
                    self.in_flight[cp.off..cp.off + cp.n].iter_mut().for_each(|c| *c -= 1);
                    self.pending_copies -= 1;
                    if self.launch.sanitize {
                        let wave = (lane / self.w) as u32;
                        if let Some(issue) = self.lds_touch(wave, cp.off, cp.n, Touch::Write) {
                            race.get_or_insert((issue, lane));
                        }
                    }
                }
            }
        }
        match race {
            None => Ok(()),
            Some((Issue::Race { byte, other_wave, other }, lane)) => Err(InterpError::LdsRace {
                site: self.site(inst),
                lanes: self.lanes([lane]),
                detail: format!(
                    "{} landed by an async copy of wave {} and {} by wave {other_wave} with no \
                     barrier between",
                    self.lds_name(byte),
                    lane / self.w,
                    other.verb()
                ),
            }),
            // A write never finds bytes uninitialized.
            Some((Issue::Uninit { .. }, _)) => Ok(()),
        }
    }

    /// At the end of a workgroup: every async copy has landed.
    pub(super) fn copies_all_landed(&self) -> Result<(), InterpError> {
        if self.pending_copies == 0 {
            return Ok(());
        }
        let lanes: Vec<usize> = (0..self.copies.len())
            .filter(|&l| {
                let c = &self.copies[l];
                !c.open.is_empty() || c.closed.iter().any(|g| !g.is_empty())
            })
            .collect();
        let first = lanes
            .first()
            .and_then(|&l| {
                let c = &self.copies[l];
                c.closed.iter().flatten().chain(c.open.iter()).next().copied()
            })
            .map(|c| c.inst);
        let inst = first.unwrap_or(self.p.k.insts.keys().next().unwrap_or(Inst::new(0)));
        Err(InterpError::AsyncCopy {
            site: self.site(inst),
            lanes: self.lanes(lanes),
            detail: format!(
                "{} async copies never waited for (an async_wait with no more pending groups \
                 than the copies' must come before the kernel ends)",
                self.pending_copies
            ),
        })
    }
}
