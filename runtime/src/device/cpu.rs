//! The cpu device: the reference interpreter behind the device API.
//!
//! It runs the package's IR file for an object, not the code object, emulating the object's arch
//! (its wave size is the IR's). Its "stream" is a lock: launches, copies and replays run one at
//! a time, in order, so a read after a launch sees the launch's writes as on a GPU stream.

use super::{Code, CpuOptions, DeviceError, KernelArg, Memory, PreparedLaunch};
use crate::package::{LoadError, PackageObject};
use kiln_ir::interp::{self, Arg, RunOptions};
use kiln_ir::{Kernel, Target};
use std::sync::{Arc, Mutex};

pub(crate) struct CpuDevice {
    pub opts: CpuOptions,
    stream: Mutex<()>,
}

impl CpuDevice {
    pub fn new(opts: CpuOptions) -> CpuDevice {
        CpuDevice { opts, stream: Mutex::new(()) }
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

    pub fn write(&self, m: &Mutex<Vec<u8>>, data: &[u8]) {
        let _s = self.lock();
        lock(m).copy_from_slice(data);
    }

    pub fn read(&self, m: &Mutex<Vec<u8>>) -> Vec<u8> {
        let _s = self.lock();
        lock(m).clone()
    }

    pub fn load(&self, obj: &PackageObject, arch: &str) -> Result<Code, LoadError> {
        let target = Target::by_name(arch)
            .map_err(|source| LoadError::UnknownArch { arch: arch.to_string(), source })?;
        if let Err(errs) = kiln_ir::verify(obj.ir(), Some(target)) {
            let (kernel, variant, arch) = obj.who();
            return Err(LoadError::Verify { kernel, variant, arch, message: errs.to_string() });
        }
        Ok(Code::Cpu(obj.ir().clone()))
    }

    pub fn launch(&self, k: &Arc<Kernel>, l: &PreparedLaunch) -> Result<(), DeviceError> {
        let _s = self.lock();
        // Each buffer's bytes move into the interpreter's argument list and back, so a buffer
        // passed twice would be two copies: refuse it rather than lose one side's writes.
        for (i, a) in l.args.iter().enumerate() {
            if let KernelArg::Buffer(m) = a {
                for (j, b) in l.args.iter().enumerate().skip(i + 1) {
                    if matches!(b, KernelArg::Buffer(n) if Arc::ptr_eq(m, n)) {
                        return Err(DeviceError::Aliased {
                            kernel: l.label.to_string(),
                            first: l.param_names[i].clone(),
                            second: l.param_names[j].clone(),
                        });
                    }
                }
            }
        }
        let mut args = Vec::with_capacity(l.args.len());
        for a in &l.args {
            args.push(match a {
                KernelArg::Buffer(m) => Arg::Buffer(std::mem::take(&mut *lock(host(m)?))),
                KernelArg::Scalar(s) => Arg::Scalar(s.bits()),
            });
        }
        let opts = RunOptions {
            grid: Some(l.grid),
            sanitize: self.opts.sanitize,
            verify: false,
            parallel: self.opts.parallel,
        };
        let result = interp::run(k, &mut args, &opts);
        // Put the bytes back whatever happened.
        for (a, arg) in l.args.iter().zip(args) {
            if let (KernelArg::Buffer(m), Arg::Buffer(bytes)) = (a, arg) {
                *lock(host(m)?) = bytes;
            }
        }
        result
            .map(|_| ())
            .map_err(|e| DeviceError::Interp { kernel: l.label.to_string(), source: Box::new(e) })
    }
}

fn host(m: &Memory) -> Result<&Mutex<Vec<u8>>, DeviceError> {
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
