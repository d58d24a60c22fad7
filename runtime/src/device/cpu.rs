//! The cpu device: the reference interpreter behind the device API.
//!
//! It runs the package's IR file for an object, not the code object, emulating the object's arch
//! (its wave size is the IR's). Its "stream" is a lock: launches, copies and replays run one at
//! a time, in order, so a read after a launch sees the launch's writes as on a GPU stream.
//!
//! Every buffer has a fake device address ([`HostMemory::address`]), and every launch hands the
//! interpreter all live buffers of the device as regions at those addresses, the parameters
//! naming theirs: a table of addresses (as `copy_from_mapped_multi` takes) works as on a GPU,
//! and an address into no live buffer is the interpreter's out-of-bounds error. Host-mapped
//! buffers are ordinary buffers here (all of its memory is host memory).

use super::{Code, CpuOptions, DeviceError, KernelArg, Memory, PreparedLaunch};
use crate::package::{LoadError, PackageObject};
use kiln_ir::interp::{self, Arg, Region, RunOptions};
use kiln_ir::{Kernel, Target};
use std::sync::{Arc, Mutex, Weak};

/// Fake device addresses are `slot << SLOT_BITS`: 1 TiB apart, so a buffer never reaches the
/// next one.
const SLOT_BITS: u32 = 40;
/// The first slot: addresses start at 2^48, above the interpreter's default buffer-argument
/// addresses (`(param + 1) << 40`), so the two are never confused in a message.
const FIRST_SLOT: u64 = 1 << 8;
/// One past the last slot (the address space ends at 2^64).
const END_SLOT: u64 = 1 << (64 - SLOT_BITS);

/// Address slots: `next` and above were never used; `free` were, and their buffers are gone.
struct Slots {
    next: u64,
    free: Vec<u64>,
}

impl Slots {
    const fn new() -> Slots {
        Slots { next: FIRST_SLOT, free: Vec::new() }
    }

    fn take(&mut self) -> Option<u64> {
        self.free.pop().or_else(|| {
            (self.next < END_SLOT).then(|| {
                self.next += 1;
                self.next - 1
            })
        })
    }

    /// `n` consecutive slots never used before (none of them reused): a group's addresses
    /// with no other buffer between them.
    fn take_run(&mut self, n: u64) -> Option<u64> {
        let first = self.next;
        (first.checked_add(n)? <= END_SLOT).then(|| {
            self.next += n;
            first
        })
    }

    fn give_back(&mut self, slot: u64) {
        self.free.push(slot);
    }
}

/// The slots of every cpu device of the process: no two live buffers of any two cpu devices
/// share an address.
static SLOTS: Mutex<Slots> = Mutex::new(Slots::new());

fn slots() -> std::sync::MutexGuard<'static, Slots> {
    SLOTS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A cpu buffer's bytes and its fake device address; the address is freed in `Drop`.
pub(crate) struct HostMemory {
    pub bytes: Mutex<Vec<u8>>,
    /// Where kernels see its first byte: unique among live buffers, stable while it lives.
    pub address: u64,
}

impl HostMemory {
    fn new(bytes: usize) -> Result<HostMemory, DeviceError> {
        Self::check(bytes)?;
        let slot = slots().take().ok_or_else(Self::full)?;
        Ok(HostMemory { bytes: Mutex::new(vec![0; bytes]), address: slot << SLOT_BITS })
    }

    /// Buffers of `sizes` bytes at consecutive fresh addresses: no other buffer lies between
    /// them, as in a cuda group ([`CpuDevice::alloc_group`]).
    fn group(sizes: &[usize]) -> Result<Vec<HostMemory>, DeviceError> {
        for &b in sizes {
            Self::check(b)?;
        }
        let first = slots().take_run(sizes.len() as u64).ok_or_else(Self::full)?;
        Ok(sizes
            .iter()
            .zip(first..)
            .map(|(&b, slot)| HostMemory {
                bytes: Mutex::new(vec![0; b]),
                address: slot << SLOT_BITS,
            })
            .collect())
    }

    fn check(bytes: usize) -> Result<(), DeviceError> {
        if bytes as u64 > 1 << SLOT_BITS {
            return Err(DeviceError::CpuAddressSpace(format!(
                "a buffer of {bytes} bytes is larger than the 1 TiB a cpu buffer can span"
            )));
        }
        Ok(())
    }

    fn full() -> DeviceError {
        DeviceError::CpuAddressSpace(format!(
            "all {} fake device addresses are taken by live buffers",
            END_SLOT - FIRST_SLOT
        ))
    }
}

impl Drop for HostMemory {
    fn drop(&mut self) {
        slots().give_back(self.address >> SLOT_BITS);
    }
}

pub(crate) struct CpuDevice {
    pub opts: CpuOptions,
    stream: Mutex<()>,
    /// Every buffer allocated on this device; dead entries are pruned as it grows and at launch.
    buffers: Mutex<Vec<Weak<Memory>>>,
}

impl CpuDevice {
    pub fn new(opts: CpuOptions) -> CpuDevice {
        CpuDevice { opts, stream: Mutex::new(()), buffers: Mutex::new(Vec::new()) }
    }

    pub fn name(&self) -> String {
        match &self.opts.arch {
            Some(a) => format!("cpu (interpreter, emulating {a})"),
            None => "cpu (interpreter)".to_string(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ()> {
        // A panic inside a launch poisons nothing we rely on: buffers are restored first.
        self.stream.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Allocates `bytes` zeroed bytes at a fresh fake address and registers them for launches.
    pub fn alloc(&self, bytes: usize) -> Result<Arc<Memory>, DeviceError> {
        let mem = Arc::new(Memory::Host(HostMemory::new(bytes)?));
        let mut buffers = self.buffers.lock().unwrap_or_else(|p| p.into_inner());
        if buffers.len() == buffers.capacity() {
            buffers.retain(|b| b.strong_count() > 0);
        }
        buffers.push(Arc::downgrade(&mem));
        Ok(mem)
    }

    /// Buffers of `sizes` bytes at consecutive fresh fake addresses (see
    /// [`super::Device::alloc_group`]), registered for launches.
    pub fn alloc_group(&self, sizes: &[usize]) -> Result<Vec<Arc<Memory>>, DeviceError> {
        let mems: Vec<Arc<Memory>> =
            HostMemory::group(sizes)?.into_iter().map(|h| Arc::new(Memory::Host(h))).collect();
        let mut buffers = self.buffers.lock().unwrap_or_else(|p| p.into_inner());
        buffers.retain(|b| b.strong_count() > 0);
        buffers.extend(mems.iter().map(Arc::downgrade));
        Ok(mems)
    }

    /// The device's buffers that are alive now.
    fn live(&self) -> Vec<Arc<Memory>> {
        let mut buffers = self.buffers.lock().unwrap_or_else(|p| p.into_inner());
        buffers.retain(|b| b.strong_count() > 0);
        buffers.iter().filter_map(Weak::upgrade).collect()
    }

    pub fn write(&self, m: &HostMemory, data: &[u8]) {
        let _s = self.lock();
        lock(&m.bytes).copy_from_slice(data);
    }

    pub fn read(&self, m: &HostMemory) -> Vec<u8> {
        let _s = self.lock();
        lock(&m.bytes).clone()
    }

    pub fn load(&self, obj: &PackageObject, arch: &str) -> Result<Code, LoadError> {
        let target = Target::by_name(arch)
            .map_err(|source| LoadError::UnknownArch { arch: arch.to_string(), source })?;
        if let Err(errs) = kiln_ir::verify(obj.ir(), Some(target)) {
            return Err(LoadError::Verify { object: obj.who(), message: errs.to_string() });
        }
        Ok(Code::Cpu(obj.ir().clone()))
    }

    pub fn launch(&self, k: &Arc<Kernel>, l: &PreparedLaunch) -> Result<(), DeviceError> {
        let _s = self.lock();
        // Buffer parameters were checked for aliasing when the launch was bound
        // (`launch::check_aliasing`); read-only parameters sharing a buffer name one region.
        // Every live buffer becomes a region at its address; each buffer parameter names its own.
        let mut live = self.live();
        let mut args = Vec::with_capacity(l.args.len());
        for a in &l.args {
            args.push(match a {
                KernelArg::Buffer(m) => {
                    let i = live.iter().position(|b| Arc::ptr_eq(b, m)).unwrap_or_else(|| {
                        live.push(m.clone());
                        live.len() - 1
                    });
                    Arg::Region(i)
                }
                KernelArg::Scalar(s) => Arg::Scalar(s.bits()),
            });
        }
        let mut lent = Lent { owners: &live, regions: Vec::with_capacity(live.len()) };
        for m in &live {
            let h = host(m)?;
            let bytes = std::mem::take(&mut *lock(&h.bytes));
            lent.regions.push(Region { base: h.address, bytes });
        }
        let opts = RunOptions {
            grid: Some(l.grid),
            sanitize: self.opts.sanitize,
            verify: false,
            parallel: self.opts.parallel,
        };
        interp::run_with_memory(k, &mut args, &mut lent.regions, &opts)
            .map(|_| ())
            .map_err(|e| DeviceError::Interp { kernel: l.label.to_string(), error: Box::new(e) })
    }
}

/// Buffers' bytes lent to the interpreter as regions; given back in `Drop`, whatever happened.
struct Lent<'a> {
    owners: &'a [Arc<Memory>],
    regions: Vec<Region>,
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        for (m, r) in self.owners.iter().zip(self.regions.drain(..)) {
            if let Ok(h) = host(m) {
                *lock(&h.bytes) = r.bytes;
            }
        }
    }
}

fn host(m: &Memory) -> Result<&HostMemory, DeviceError> {
    match m {
        Memory::Host(h) => Ok(h),
        #[allow(unreachable_patterns)]
        _ => Err(DeviceError::ForeignBuffer {
            expected: "the cpu device".into(),
            found: "another kind of device".into(),
        }),
    }
}

fn lock(m: &Mutex<Vec<u8>>) -> std::sync::MutexGuard<'_, Vec<u8>> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_and_run_out() {
        let mut s = Slots::new();
        assert_eq!((s.take(), s.take()), (Some(FIRST_SLOT), Some(FIRST_SLOT + 1)));
        s.give_back(FIRST_SLOT);
        assert_eq!(s.take(), Some(FIRST_SLOT));
        s.next = END_SLOT - 1;
        assert_eq!((s.take(), s.take()), (Some(END_SLOT - 1), None));
        assert_eq!((END_SLOT - 1) << SLOT_BITS, 0xffff_ff00_0000_0000);
    }
}
