//! Buffers: typed device memory that knows its length, its device and the address kernels see.

#[cfg(feature = "hip")]
use super::hip;
use super::{cpu, cuda, Backend, Device, DeviceError};
use crate::value::{self, Element};
use kiln_ir::ScalarType;
use std::fmt;
use std::sync::Arc;

/// Device memory of one buffer.
pub(crate) enum Memory {
    Host(cpu::HostMemory),
    Cuda(cuda::DeviceMemory),
    #[cfg(feature = "hip")]
    Hip(hip::DeviceMemory),
}

/// A typed buffer in a device's memory.
#[derive(Clone)]
pub struct Buffer {
    pub(super) dtype: ScalarType,
    pub(super) len: usize,
    pub(super) mem: Arc<Memory>,
    pub(super) device: Device,
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Buffer({} x {} on {:?})", self.len, self.dtype, self.device)
    }
}

impl Buffer {
    /// Element type.
    pub fn dtype(&self) -> ScalarType {
        self.dtype
    }

    /// Length in elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.len * self.dtype.bytes() as usize
    }

    /// The device it lives on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    pub(crate) fn memory(&self) -> &Arc<Memory> {
        &self.mem
    }

    /// The address kernels see for its first byte: what goes into a table of addresses that a
    /// kernel follows (`copy_from_mapped_multi`'s `(src, dst, bytes)` triples). cuda: the
    /// `CUdeviceptr` (for host-mapped memory, its device pointer); hip: the device pointer; cpu:
    /// a fake address, unique among live buffers and stable while this one lives, which the cpu
    /// device's launches resolve to this buffer.
    pub fn device_address(&self) -> u64 {
        match &*self.mem {
            Memory::Host(h) => h.address,
            Memory::Cuda(m) => m.device_address(),
            #[cfg(feature = "hip")]
            Memory::Hip(m) => m.device_address(),
        }
    }

    /// True when both handles are the same allocation.
    pub fn same_memory(&self, other: &Buffer) -> bool {
        Arc::ptr_eq(&self.mem, &other.mem)
    }

    /// Copies `data` in (after the work already issued on the device).
    pub fn write<T: Element>(&self, data: &[T]) -> Result<(), DeviceError> {
        self.check_type::<T>("write")?;
        self.write_bytes(&value::to_bytes(data))
    }

    /// Copies the whole buffer out (after the work already issued on the device).
    pub fn read<T: Element>(&self) -> Result<Vec<T>, DeviceError> {
        self.check_type::<T>("read")?;
        Ok(value::from_bytes(&self.read_bytes()?))
    }

    /// Copies raw bytes in; their count must be the buffer's size.
    pub fn write_bytes(&self, data: &[u8]) -> Result<(), DeviceError> {
        if data.len() != self.bytes() {
            return Err(DeviceError::Mismatch {
                what: "buffer write",
                expected: format!("{} bytes", self.bytes()),
                found: format!("{} bytes", data.len()),
            });
        }
        match (self.device.backend(), &*self.mem) {
            (Backend::Cpu(c), Memory::Host(m)) => {
                c.write(m, data);
                Ok(())
            }
            (Backend::Cuda(c), Memory::Cuda(m)) => c.write(m, data),
            #[cfg(feature = "hip")]
            (Backend::Hip(h), Memory::Hip(m)) => h.write(m, data),
            _ => Err(self.device.foreign("buffer")),
        }
    }

    /// Copies the raw bytes out.
    pub fn read_bytes(&self) -> Result<Vec<u8>, DeviceError> {
        match (self.device.backend(), &*self.mem) {
            (Backend::Cpu(c), Memory::Host(m)) => Ok(c.read(m)),
            (Backend::Cuda(c), Memory::Cuda(m)) => c.read(m),
            #[cfg(feature = "hip")]
            (Backend::Hip(h), Memory::Hip(m)) => h.read(m),
            _ => Err(self.device.foreign("buffer")),
        }
    }

    fn check_type<T: Element>(&self, what: &'static str) -> Result<(), DeviceError> {
        if T::DTYPE == self.dtype {
            Ok(())
        } else {
            Err(DeviceError::Mismatch {
                what,
                expected: format!("a {} buffer", T::DTYPE),
                found: format!("a {} buffer", self.dtype),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, testgen};
    use crate::{Args, CpuOptions, Overrides, Runtime, RuntimeError};
    use rand::Rng;

    fn host_mapped_buffers_read_and_write(dev: &Device) {
        let mut r = rand::thread_rng();
        let m = dev.alloc_host_mapped(ScalarType::U8, 1000).unwrap();
        assert_eq!(m.read_bytes().unwrap(), vec![0; 1000], "not zeroed");
        let data: Vec<u8> = (0..1000).map(|_| r.gen()).collect();
        m.write_bytes(&data).unwrap();
        assert_eq!(m.read_bytes().unwrap(), data);
        let f = dev.alloc_host_mapped(ScalarType::F32, 7).unwrap();
        f.write(&[1.5f32; 7]).unwrap();
        assert_eq!(f.read::<f32>().unwrap(), vec![1.5; 7]);
        let empty = dev.alloc_host_mapped(ScalarType::U32, 0).unwrap();
        assert!(empty.read_bytes().unwrap().is_empty());
        let d = dev.alloc(ScalarType::U8, 1000).unwrap();
        let mut addrs: Vec<u64> = [&m, &f, &empty, &d].iter().map(|b| b.device_address()).collect();
        assert!(addrs.iter().all(|&a| a != 0), "{addrs:x?}");
        addrs.sort_unstable();
        addrs.dedup();
        assert_eq!(addrs.len(), 4, "two live buffers share an address");
        assert_eq!(m.clone().device_address(), m.device_address(), "a handle moved the buffer");
    }

    /// One launch of `copy_from_mapped_multi`: 16 copies, every alignment class and ragged sizes,
    /// from host-mapped sources into device buffers, each at an offset into its buffer with
    /// random bytes around it, through a table of device addresses. Every destination buffer
    /// must equal a host memcpy into it (so the bytes around each copy are untouched), and
    /// every source must be unchanged.
    fn copies_from_host_mapped_memory(dev: &Device) {
        let Some((_dir, pkg)) = testing::package_for(dev, &[testing::copy_from_mapped_multi()])
        else {
            return;
        };
        let rt = Runtime::load_with(dev, &pkg, Overrides::none()).unwrap();
        let mut r = rand::thread_rng();
        // (source offset, destination offset, bytes); buffers start at least 256-byte aligned.
        let copies: [(usize, usize, usize); 16] = [
            (0, 0, 4096),
            (16, 32, 4096 + 5),
            (8, 8, 1000),
            (8, 0, 64),
            (4, 12, 4 * 77),
            (4, 4, 4 * 77 + 3),
            (1, 3, 999),
            (2, 2, 4097),
            (0, 0, 0),
            (0, 0, 1),
            (2, 2, 15),
            (0, 0, 16 * 9000 + 15),
            (5, 5, 4097),
            (12, 4, 777),
            (3, 0, 16),
            (64, 128, 1 << 16),
        ];
        const GUARD: usize = 64;
        let (mut srcs, mut dsts, mut table) = (vec![], vec![], vec![]);
        for &(so, dof, n) in &copies {
            let src: Vec<u8> = (0..so + n + GUARD).map(|_| r.gen()).collect();
            let before: Vec<u8> = (0..GUARD + dof + n + GUARD).map(|_| r.gen()).collect();
            let s = dev.alloc_host_mapped(ScalarType::U8, src.len()).unwrap();
            s.write_bytes(&src).unwrap();
            let d = dev.upload(&before).unwrap();
            table.extend([
                s.device_address() + so as u64,
                d.device_address() + (GUARD + dof) as u64,
                n as u64,
            ]);
            let mut want = before;
            want[GUARD + dof..][..n].copy_from_slice(&src[so..so + n]);
            srcs.push((s, src));
            dsts.push((d, want));
        }
        let t = dev.upload(&table).unwrap();
        let args = Args::new().buffer("table", &t).scalar("count", copies.len() as u32);
        rt.launch("copy_from_mapped_multi", &args).unwrap();
        rt.synchronize().unwrap();
        for (i, ((d, want), &(so, dof, n))) in dsts.iter().zip(&copies).enumerate() {
            let got = d.read_bytes().unwrap();
            if let Some(b) = (0..want.len()).find(|&b| got[b] != want[b]) {
                let copy = GUARD + dof..GUARD + dof + n;
                let place = if copy.contains(&b) { "inside the copy" } else { "outside the copy" };
                panic!(
                    "{}: copy {i} (src +{so}, dst +{dof}, {n} bytes): byte {b} ({place}, copy at \
                     {copy:?}) is {:#04x}, expected {:#04x}",
                    dev.kind(),
                    got[b],
                    want[b]
                );
            }
        }
        for (i, (s, src)) in srcs.iter().enumerate() {
            assert_eq!(&s.read_bytes().unwrap(), src, "{}: source {i} changed", dev.kind());
        }
    }

    /// A length whose size overflows, or is beyond any device, is refused before the device is
    /// asked, with the size in the message (it used to overflow `len * element size`).
    fn absurd_allocations_are_refused_with_their_size(dev: &Device) {
        let cases = [
            (
                usize::MAX,
                ScalarType::F32,
                "18446744073709551615 elements of f32: 73786976294838206460 bytes",
            ),
            (
                (1 << 46) + 1,
                ScalarType::U32,
                "70368744177665 elements of u32: 281474976710660 bytes",
            ),
            (
                usize::MAX / 2 + 1,
                ScalarType::U16,
                "9223372036854775808 elements of u16: 18446744073709551616 bytes",
            ),
        ];
        for (len, dtype, want) in cases {
            for e in
                [dev.alloc(dtype, len).unwrap_err(), dev.alloc_host_mapped(dtype, len).unwrap_err()]
            {
                assert!(matches!(e, DeviceError::TooLarge { .. }), "{e}");
                assert!(e.to_string().contains(want), "{e}");
            }
        }
        // The largest allowed size is not refused by this check (the cpu device's own 1 TiB
        // limit or the driver may still refuse it, with their own errors).
        if let Err(e) = dev.alloc(ScalarType::U8, 1 << 48) {
            assert!(!matches!(e, DeviceError::TooLarge { .. }), "{e}");
        }
    }

    /// A group's buffers are zeroed, disjoint, keep what is written to each (random bytes,
    /// odd sizes, an empty one), outlive the drop of the others, and are refused at absurd
    /// sizes like one allocation. On cuda they lie side by side in one range, each at a multiple
    /// of 256 bytes from the first; on the cpu device at consecutive fake addresses: nothing
    /// else inside, though buffers are freed and allocated meanwhile (on other threads too).
    fn groups_are_disjoint_buffers_side_by_side(dev: &Device) {
        let mut r = rand::thread_rng();
        let specs: Vec<(ScalarType, usize)> = (0..9)
            .map(|i| match i {
                4 => (ScalarType::U8, 0),
                _ => (
                    [ScalarType::U8, ScalarType::U16, ScalarType::F32][i % 3],
                    r.gen_range(1..5000),
                ),
            })
            .collect();
        let mut bufs = dev.alloc_group(&specs).unwrap();
        let mut data = vec![];
        for (b, &(dtype, len)) in bufs.iter().zip(&specs) {
            assert_eq!((b.dtype(), b.len()), (dtype, len));
            assert!(b.read_bytes().unwrap().iter().all(|&x| x == 0), "not zeroed");
            let v: Vec<u8> = (0..b.bytes()).map(|_| r.gen()).collect();
            b.write_bytes(&v).unwrap();
            data.push(v);
        }
        let spans: Vec<(u64, u64)> = bufs
            .iter()
            .map(|b| (b.device_address(), b.device_address() + b.bytes() as u64))
            .collect();
        for (i, a) in spans.iter().enumerate() {
            for b in &spans[i + 1..] {
                assert!(a.1 <= b.0 || b.1 <= a.0, "{a:x?} and {b:x?} overlap");
            }
        }
        if dev.kind() == crate::DeviceKind::Cpu {
            for (i, w) in spans.windows(2).enumerate() {
                assert_eq!(
                    w[1].0,
                    w[0].0 + (1 << 40),
                    "buffer {} is not right after buffer {i}",
                    i + 1
                );
            }
        }
        if dev.kind() == crate::DeviceKind::Cuda {
            for (i, w) in spans.windows(2).enumerate() {
                let next = w[0].0
                    + (specs[i].1 * specs[i].0.bytes() as usize).max(1).next_multiple_of(256)
                        as u64;
                assert_eq!(w[1].0, next, "buffer {} is not right after buffer {i}", i + 1);
            }
        }
        let kept = bufs.split_off(5);
        drop(bufs);
        let other = dev.upload(&[1u8; 300]).unwrap();
        for (b, v) in kept.iter().zip(&data[5..]) {
            assert_eq!(&b.read_bytes().unwrap(), v);
        }
        assert_eq!(other.read_bytes().unwrap(), [1u8; 300]);
        let e = dev.alloc_group(&[(ScalarType::U8, 4), (ScalarType::F32, usize::MAX)]).unwrap_err();
        assert!(matches!(e, DeviceError::TooLarge { .. }), "{e}");
    }

    testgen!(
        host_mapped_buffers_read_and_write,
        copies_from_host_mapped_memory,
        absurd_allocations_are_refused_with_their_size,
        groups_are_disjoint_buffers_side_by_side
    );

    #[test]
    fn cpu_addresses_are_unique_among_live_buffers() {
        let (a, b) = (Device::cpu(CpuOptions::default()), Device::cpu(CpuOptions::default()));
        let bufs: Vec<Buffer> =
            (0..100).map(|i| [&a, &b][i % 2].alloc(ScalarType::U8, i).unwrap()).collect();
        let mut addrs: Vec<u64> = bufs.iter().map(Buffer::device_address).collect();
        assert!(addrs.iter().all(|&x| x >= 1 << 48 && x % (1 << 40) == 0), "{addrs:x?}");
        addrs.sort_unstable();
        addrs.dedup();
        assert_eq!(addrs.len(), 100, "two live buffers of two cpu devices share an address");
    }

    /// On the cpu device a table may point into any live buffer, a parameter included, and an
    /// address into a freed buffer is the interpreter's out-of-bounds error.
    #[test]
    fn cpu_launches_see_every_live_buffer() {
        let dev = Device::cpu(CpuOptions::default());
        let (_dir, pkg) = testing::package_for(&dev, &[testing::copy_from_mapped_multi()]).unwrap();
        let rt = Runtime::load_with(&dev, &pkg, Overrides::none()).unwrap();
        // A table with one spare entry at the end, past the 2 triples the kernel reads.
        let t = dev.alloc(ScalarType::U64, 7).unwrap();
        let src = dev.upload(&(0..64u8).collect::<Vec<_>>()).unwrap();
        let dst = dev.alloc(ScalarType::U8, 64).unwrap();
        // Copy 0: 16 bytes of `src` into `dst`; copy 1: 8 bytes of `src` into `t`'s spare entry.
        let s = src.device_address();
        let table = [s + 3, dst.device_address() + 1, 16, s + 8, t.device_address() + 48, 8, 0];
        t.write(&table).unwrap();
        let args = Args::new().buffer("table", &t).scalar("count", 2u32);
        rt.launch("copy_from_mapped_multi", &args).unwrap();
        let mut want = vec![0u8; 64];
        want[1..17].copy_from_slice(&(3..19).collect::<Vec<u8>>());
        assert_eq!(dst.read::<u8>().unwrap(), want);
        let spare = u64::from_le_bytes(std::array::from_fn(|i| 8 + i as u8));
        assert_eq!(t.read::<u64>().unwrap()[..], [&table[..6], &[spare]].concat());

        let gone = dev.alloc(ScalarType::U8, 64).unwrap();
        let at = gone.device_address();
        drop(gone);
        t.write(&[s, at, 16, s, dst.device_address(), 0, 0]).unwrap();
        let e = rt.launch("copy_from_mapped_multi", &args).unwrap_err();
        assert!(matches!(e, RuntimeError::Device(DeviceError::Interp { .. })), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains(&format!("store of 16 bytes at address {at:#x}, in no buffer or region")),
            "{msg}"
        );
    }
}
