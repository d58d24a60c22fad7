//! Reads of a device buffer that do not wait for the work queued after them.
//!
//! [`Buffer::read`] synchronizes the stream: an engine that reads each step's token that way
//! leaves the device idle from the end of one step until the host has read the token and
//! launched the next. A [`ReadBack`] queues the copy instead, in stream order after the work
//! issued so far, into one of a few pinned host slots, and returns a [`Ticket`]; the engine
//! launches the next step at once and later [`ReadBack::wait`]s for the ticket, which waits for
//! that copy alone. The next step may overwrite the buffer: the slot keeps the value it had.
//!
//! | device | how |
//! |--------|-----|
//! | cuda   | `cuMemcpyDtoHAsync` into `cuMemHostAlloc` memory, an event after it, `cuEventSynchronize` |
//! | cpu    | the interpreter has finished the work when `queue` is called: an ordinary read |
//! | hip    | an ordinary (synchronizing) read: not yet asynchronous there |
//!
//! A slot holds one pending copy: `queue` refuses when every slot is pending (wait for one
//! first), so a queued copy never lands on a value the caller has not read yet.

use super::buffer::Memory;
use super::{cuda, Backend, Buffer, DeviceError};
use crate::value::{self, Element};
use std::sync::atomic::{AtomicU64, Ordering};

/// Queued reads of one buffer (see the module's documentation).
pub struct ReadBack {
    src: Buffer,
    /// This reader's id, in its tickets.
    id: u64,
    slots: Vec<Slot>,
    /// Copies queued so far (the next ticket's number).
    queued: u64,
}

/// The promise of one queued read, redeemed by [`ReadBack::wait`].
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a queued read holds its slot until it is waited for"]
pub struct Ticket {
    reader: u64,
    n: u64,
}

struct Slot {
    /// cuda: the pinned landing place.
    pinned: Option<cuda::Pinned>,
    /// The ticket number of the copy in flight or landed, and how to get it.
    pending: Option<(u64, Landing)>,
}

enum Landing {
    /// Already read (cpu, hip).
    Ready(Vec<u8>),
    /// Copying into the slot's pinned memory until the event.
    Cuda(cuda::Event),
}

impl ReadBack {
    /// Up to `depth` (at least 1) reads of `src` in flight at once.
    pub fn new(src: &Buffer, depth: usize) -> Result<ReadBack, DeviceError> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let mut slots = vec![];
        for _ in 0..depth.max(1) {
            let pinned = match src.device.backend() {
                Backend::Cuda(c) => Some(c.alloc_pinned(src.bytes())?),
                _ => None,
            };
            slots.push(Slot { pinned, pending: None });
        }
        Ok(ReadBack {
            src: src.clone(),
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            slots,
            queued: 0,
        })
    }

    /// Reads queued and not yet waited for.
    pub fn pending(&self) -> usize {
        self.slots.iter().filter(|s| s.pending.is_some()).count()
    }

    /// Queues a copy of the buffer as the work issued so far leaves it; returns at once (cuda).
    /// Refused when every slot holds a read not yet waited for.
    pub fn queue(&mut self) -> Result<Ticket, DeviceError> {
        let depth = self.slots.len();
        let Some(slot) = self.slots.iter_mut().find(|s| s.pending.is_none()) else {
            return Err(DeviceError::Mismatch {
                what: "queued read",
                expected: format!("at most {depth} reads in flight"),
                found: format!("{depth} not yet waited for"),
            });
        };
        let landing = match (self.src.device.backend(), &*self.src.mem, &slot.pinned) {
            (Backend::Cuda(c), Memory::Cuda(m), Some(p)) => Landing::Cuda(c.copy_to_pinned(m, p)?),
            _ => Landing::Ready(self.src.read_bytes()?),
        };
        let n = self.queued;
        self.queued += 1;
        slot.pending = Some((n, landing));
        Ok(Ticket { reader: self.id, n })
    }

    /// Waits for the read of `ticket` (not for work issued after it) and returns the buffer's
    /// elements as they were when it was queued.
    pub fn wait<T: Element>(&mut self, ticket: Ticket) -> Result<Vec<T>, DeviceError> {
        if T::DTYPE != self.src.dtype {
            return Err(DeviceError::Mismatch {
                what: "queued read",
                expected: format!("{} elements", self.src.dtype),
                found: format!("{} elements asked for", T::DTYPE),
            });
        }
        let slot = (ticket.reader == self.id)
            .then(|| {
                self.slots
                    .iter_mut()
                    .find(|s| s.pending.as_ref().is_some_and(|(n, _)| *n == ticket.n))
            })
            .flatten()
            .ok_or_else(|| DeviceError::Mismatch {
                what: "queued read",
                expected: "a ticket of this reader, not yet waited for".into(),
                found: format!("ticket {} of reader {}", ticket.n, ticket.reader),
            })?;
        let (_, landing) = slot.pending.take().expect("found pending above");
        let bytes = match (landing, &self.src.device.backend(), &slot.pinned) {
            (Landing::Ready(b), _, _) => b,
            (Landing::Cuda(e), Backend::Cuda(c), Some(p)) => c.read_pinned(p, &e)?,
            (Landing::Cuda(_), _, _) => unreachable!("a cuda copy is queued only on cuda"),
        };
        Ok(value::from_bytes(&bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::testgen;
    use crate::Device;
    use kiln_ir::ScalarType;
    use rand::Rng;

    /// Each ticket gives the value the buffer had when it was queued, though later writes
    /// (queued behind it) changed the buffer; more reads than slots are refused, and a ticket
    /// redeems once.
    fn reads_keep_the_value_of_their_turn(dev: &Device) {
        let mut r = rand::thread_rng();
        let b = dev.alloc(ScalarType::U32, 37).unwrap();
        let mut rb = ReadBack::new(&b, 2).unwrap();
        let mut expect = vec![];
        let mut tickets = vec![];
        for _ in 0..2 {
            let v: Vec<u32> = (0..37).map(|_| r.gen()).collect();
            b.write(&v).unwrap();
            tickets.push(rb.queue().unwrap());
            expect.push(v);
        }
        assert_eq!(rb.pending(), 2);
        assert!(rb.queue().unwrap_err().to_string().contains("at most 2 reads in flight"));
        let t0 = tickets.remove(0);
        let stale = Ticket { reader: t0.reader, n: t0.n };
        assert_eq!(rb.wait::<u32>(t0).unwrap(), expect[0]);
        assert!(rb.wait::<u32>(stale).is_err(), "a ticket redeems once");
        let v: Vec<u32> = (0..37).map(|_| r.gen()).collect();
        b.write(&v).unwrap();
        let t2 = rb.queue().unwrap();
        assert_eq!(rb.wait::<u32>(tickets.remove(0)).unwrap(), expect[1]);
        assert!(rb.wait::<f32>(Ticket { reader: t2.reader, n: t2.n }).is_err(), "wrong type");
        assert_eq!(rb.wait::<u32>(t2).unwrap(), v);
        let other = ReadBack::new(&b, 1).unwrap().queue().unwrap();
        assert!(rb.wait::<u32>(other).is_err(), "another reader's ticket");
        assert_eq!(rb.pending(), 0);
    }

    testgen!(reads_keep_the_value_of_their_turn);
}
