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
//!
//! [`ReadBack::in_place`] reads host-mapped memory ([`super::Device::alloc_host_mapped`]) that
//! the device's kernels write themselves: `queue` records an event after the work issued so
//! far and `wait` waits for it and reads the host memory where it is. Nothing is copied, so
//! nothing is queued on the stream between the caller's launches (a copy between two replays of
//! SmolLM2's step cost the H200 about 9 us a token). The buffer is not snapshotted: the caller
//! must not let later work write a range it has queued before that range is waited for (the
//! example engine's graph writes each step's tokens at the step's own positions).
//!
//! | device | in place |
//! |--------|----------|
//! | cuda   | `cuEventRecord`; `cuEventSynchronize`, then the host pointer of the mapped memory |
//! | cpu, hip | as above (an ordinary read when queued) |

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
    /// Reads `src` where it is ([`ReadBack::in_place`]): no copies, no pinned slots.
    in_place: bool,
}

/// The promise of one queued read, redeemed by [`ReadBack::wait`].
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a queued read holds its slot until it is waited for"]
pub struct Ticket {
    reader: u64,
    n: u64,
}

struct Slot {
    /// cuda: the pinned landing place (not in place).
    pinned: Option<cuda::Pinned>,
    /// The ticket number of the read in flight or landed, the elements it reads (offset,
    /// count), and how to get them.
    pending: Option<(u64, (usize, usize), Landing)>,
}

enum Landing {
    /// Already read (cpu, hip): the whole buffer.
    Ready(Vec<u8>),
    /// Copying the whole buffer into the slot's pinned memory until the event.
    Cuda(cuda::Event),
    /// In place: the device's writes before the event, read from the mapped memory.
    CudaInPlace(cuda::Event),
}

/// A new reader's id (tickets name their reader).
fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl ReadBack {
    /// Up to `depth` (at least 1) reads of `src` in flight at once.
    pub fn new(src: &Buffer, depth: usize) -> Result<ReadBack, DeviceError> {
        let mut slots = vec![];
        for _ in 0..depth.max(1) {
            let pinned = match src.device.backend() {
                Backend::Cuda(c) => Some(c.alloc_pinned(src.bytes())?),
                _ => None,
            };
            slots.push(Slot { pinned, pending: None });
        }
        Ok(ReadBack { src: src.clone(), id: next_id(), slots, queued: 0, in_place: false })
    }

    /// Up to `depth` (at least 1) reads of `src` in flight at once, each read where it is when
    /// its work is done, with no copy (see the module's documentation). `src` must be
    /// host-mapped memory ([`super::Device::alloc_host_mapped`]) on cuda; elsewhere any buffer.
    pub fn in_place(src: &Buffer, depth: usize) -> Result<ReadBack, DeviceError> {
        if let (Backend::Cuda(_), Memory::Cuda(m)) = (src.device.backend(), &*src.mem) {
            if !m.is_host_mapped() {
                return Err(DeviceError::Mismatch {
                    what: "in-place read",
                    expected: "host-mapped memory (Device::alloc_host_mapped)".into(),
                    found: "device memory".into(),
                });
            }
        }
        Ok(ReadBack {
            src: src.clone(),
            id: next_id(),
            slots: (0..depth.max(1)).map(|_| Slot { pinned: None, pending: None }).collect(),
            queued: 0,
            in_place: true,
        })
    }

    /// Made by [`Self::in_place`]: reads the buffer where it is, no copies.
    pub fn reads_in_place(&self) -> bool {
        self.in_place
    }

    /// Reads queued and not yet waited for.
    pub fn pending(&self) -> usize {
        self.slots.iter().filter(|s| s.pending.is_some()).count()
    }

    /// Queues a copy of the buffer as the work issued so far leaves it; returns at once (cuda).
    /// Refused when every slot holds a read not yet waited for.
    pub fn queue(&mut self) -> Result<Ticket, DeviceError> {
        self.queue_range(0, self.src.len)
    }

    /// [`Self::queue`] for the `count` elements from `offset` (what [`Self::wait`] returns);
    /// refused past the buffer's end.
    pub fn queue_range(&mut self, offset: usize, count: usize) -> Result<Ticket, DeviceError> {
        if offset.checked_add(count).is_none_or(|end| end > self.src.len) {
            return Err(DeviceError::Mismatch {
                what: "queued read",
                expected: format!("elements within the buffer's {}", self.src.len),
                found: format!("{count} from {offset}"),
            });
        }
        let depth = self.slots.len();
        let Some(slot) = self.slots.iter_mut().find(|s| s.pending.is_none()) else {
            return Err(DeviceError::Mismatch {
                what: "queued read",
                expected: format!("at most {depth} reads in flight"),
                found: format!("{depth} not yet waited for"),
            });
        };
        let landing = match (self.src.device.backend(), &*self.src.mem, &slot.pinned) {
            (Backend::Cuda(c), Memory::Cuda(_), None) if self.in_place => {
                Landing::CudaInPlace(c.record_event()?)
            }
            (Backend::Cuda(c), Memory::Cuda(m), Some(p)) => Landing::Cuda(c.copy_to_pinned(m, p)?),
            _ => Landing::Ready(self.src.read_bytes()?),
        };
        let n = self.queued;
        self.queued += 1;
        slot.pending = Some((n, (offset, count), landing));
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
                    .find(|s| s.pending.as_ref().is_some_and(|(n, ..)| *n == ticket.n))
            })
            .flatten()
            .ok_or_else(|| DeviceError::Mismatch {
                what: "queued read",
                expected: "a ticket of this reader, not yet waited for".into(),
                found: format!("ticket {} of reader {}", ticket.n, ticket.reader),
            })?;
        let (_, (offset, count), landing) = slot.pending.take().expect("found pending above");
        let size = self.src.dtype.bytes() as usize;
        let range = offset * size..(offset + count) * size;
        let bytes = match (landing, &self.src.device.backend(), &slot.pinned, &*self.src.mem) {
            (Landing::Ready(b), ..) => b[range].to_vec(),
            (Landing::Cuda(e), Backend::Cuda(c), Some(p), _) => {
                c.read_pinned(p, &e)?[range].to_vec()
            }
            (Landing::CudaInPlace(e), Backend::Cuda(c), _, Memory::Cuda(m)) => {
                c.read_mapped(m, range, &e)?
            }
            _ => unreachable!("a cuda read is queued only on cuda"),
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

    /// An in-place reader returns the range of the buffer that was there when it was queued,
    /// for any range inside the buffer and the whole of it; ranges past the end are refused,
    /// and on cuda so is device memory (only host-mapped memory is read in place).
    fn in_place_reads_the_range_queued(dev: &Device) {
        let mut r = rand::thread_rng();
        let b = dev.alloc_host_mapped(ScalarType::I32, 50).unwrap();
        let mut rb = ReadBack::in_place(&b, 2).unwrap();
        let v: Vec<i32> = (0..50).map(|_| r.gen()).collect();
        b.write(&v).unwrap();
        let off = r.gen_range(0..=43);
        let t = rb.queue_range(off, 7).unwrap();
        let whole = rb.queue().unwrap();
        assert!(rb.queue_range(0, 1).unwrap_err().to_string().contains("at most 2 reads"));
        assert_eq!(rb.wait::<i32>(t).unwrap(), v[off..off + 7]);
        assert_eq!(rb.wait::<i32>(whole).unwrap(), v);
        let past = rb.queue_range(45, 6).unwrap_err().to_string();
        assert!(past.contains("6 from 45"), "{past}");
        assert!(rb.queue_range(usize::MAX, 2).is_err(), "an overflowing range");
        assert_eq!(rb.pending(), 0);
        let device_memory = ReadBack::in_place(&dev.alloc(ScalarType::I32, 4).unwrap(), 1);
        assert_eq!(device_memory.is_err(), dev.kind() == crate::DeviceKind::Cuda);
    }

    testgen!(reads_keep_the_value_of_their_turn, in_place_reads_the_range_queued);
}
