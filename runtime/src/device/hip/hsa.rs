//! The arch of a HIP device from the HSA runtime (libhsa-runtime64, loaded at run time like
//! libamdhip64): `hsa_agent_get_info(agent, HSA_AGENT_INFO_NAME)` gives the agent's ISA name
//! (`gfx1100`) through a stable enum value, where `hipDeviceProp_t::gcnArchName` sits at an
//! offset that changes between ROCm versions. The HIP ordinal is matched to its HSA agent by PCI
//! location: `hipDeviceGetPCIBusId` (a string, no struct) against the agent's
//! `HSA_AMD_AGENT_INFO_BDFID`, so visibility masks (`HIP_VISIBLE_DEVICES`) cannot pair a device
//! with another GPU's name. Values are from `hsa.h` / `hsa_ext_amd.h` (stable since ROCm 1.x).
#![allow(non_camel_case_types)]

use super::HipError;
use std::ffi::{c_char, c_void, CStr};
use std::sync::OnceLock;

type hsa_status_t = u32;
const HSA_STATUS_SUCCESS: hsa_status_t = 0;
/// `hsa_agent_t`: one 64-bit handle, passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
struct hsa_agent_t {
    handle: u64,
}
const HSA_AGENT_INFO_NAME: u32 = 0;
const HSA_AGENT_INFO_DEVICE: u32 = 17;
const HSA_DEVICE_TYPE_GPU: u32 = 1;
const HSA_AMD_AGENT_INFO_BDFID: u32 = 0xA006;

type AgentCallback = unsafe extern "C" fn(hsa_agent_t, *mut c_void) -> hsa_status_t;

struct Api {
    _lib: libloading::Library,
    hsa_init: unsafe extern "C" fn() -> hsa_status_t,
    hsa_iterate_agents: unsafe extern "C" fn(AgentCallback, *mut c_void) -> hsa_status_t,
    hsa_agent_get_info: unsafe extern "C" fn(hsa_agent_t, u32, *mut c_void) -> hsa_status_t,
}

fn api() -> Result<&'static Api, String> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(|| {
        let mut why = vec![];
        for name in ["libhsa-runtime64.so", "libhsa-runtime64.so.1"] {
            // SAFETY: loading the HSA runtime runs its initializers, as libamdhip64 does.
            let lib = match unsafe { libloading::Library::new(name) } {
                Ok(lib) => lib,
                Err(e) => {
                    why.push(e.to_string());
                    continue;
                }
            };
            // SAFETY: these symbols have these C signatures in every libhsa-runtime64.
            let api = unsafe {
                let f = |s: &str| format!("{s}: not in {name}");
                Api {
                    hsa_init: *lib.get(b"hsa_init\0").map_err(|_| f("hsa_init"))?,
                    hsa_iterate_agents: *lib
                        .get(b"hsa_iterate_agents\0")
                        .map_err(|_| f("hsa_iterate_agents"))?,
                    hsa_agent_get_info: *lib
                        .get(b"hsa_agent_get_info\0")
                        .map_err(|_| f("hsa_agent_get_info"))?,
                    _lib: lib,
                }
            };
            // SAFETY: reference-counted; initializing more than once is allowed.
            let r = unsafe { (api.hsa_init)() };
            if r != HSA_STATUS_SUCCESS {
                return Err(format!("hsa_init failed with {r:#x}"));
            }
            return Ok(api);
        }
        Err(format!("the HSA runtime (libhsa-runtime64) is not installed ({})", why.join("; ")))
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// One GPU agent: its PCI `BDFID` (`bus << 8 | device << 3 | function`) and its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GpuAgent {
    pub bdfid: u32,
    pub name: String,
}

fn gpu_agents() -> Result<Vec<GpuAgent>, HipError> {
    let err = |message: String| HipError { call: "hsa_iterate_agents", code: None, message };
    let a = api().map_err(err)?;
    struct Walk {
        api: &'static Api,
        agents: Vec<GpuAgent>,
    }
    unsafe extern "C" fn visit(agent: hsa_agent_t, data: *mut c_void) -> hsa_status_t {
        // SAFETY: `data` is the `Walk` passed to hsa_iterate_agents below, alive for the call.
        let walk = unsafe { &mut *(data as *mut Walk) };
        let (mut kind, mut bdfid, mut name) = (0u32, 0u32, [0 as c_char; 64]);
        // SAFETY: each attribute writes the size given in hsa.h: a u32 enum, a u32, char[64].
        unsafe {
            let get = walk.api.hsa_agent_get_info;
            if get(agent, HSA_AGENT_INFO_DEVICE, &mut kind as *mut u32 as *mut c_void) != 0
                || kind != HSA_DEVICE_TYPE_GPU
                || get(agent, HSA_AMD_AGENT_INFO_BDFID, &mut bdfid as *mut u32 as *mut c_void) != 0
                || get(agent, HSA_AGENT_INFO_NAME, name.as_mut_ptr() as *mut c_void) != 0
            {
                return HSA_STATUS_SUCCESS;
            }
        }
        name[63] = 0;
        // SAFETY: NUL-terminated within the array (last byte forced to 0).
        let name = unsafe { CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned();
        walk.agents.push(GpuAgent { bdfid, name });
        HSA_STATUS_SUCCESS
    }
    let mut walk = Walk { api: a, agents: vec![] };
    // SAFETY: `visit` matches the callback type; `walk` outlives the call.
    let r = unsafe { (a.hsa_iterate_agents)(visit, &mut walk as *mut Walk as *mut c_void) };
    if r != HSA_STATUS_SUCCESS {
        return Err(err(format!("failed with {r:#x}")));
    }
    Ok(walk.agents)
}

/// The `BDFID` of a PCI bus id as `hipDeviceGetPCIBusId` writes it (`0000:03:00.0`).
pub(crate) fn bdfid_of(bus_id: &str) -> Option<u32> {
    let mut parts = bus_id.trim().split(':');
    let (_domain, bus, rest) = (parts.next()?, parts.next()?, parts.next()?);
    let (device, function) = rest.split_once('.')?;
    let hex = |s: &str| u32::from_str_radix(s, 16).ok();
    let (bus, device, function) = (hex(bus)?, hex(device)?, hex(function)?);
    (bus < 256 && device < 32 && function < 8).then_some(bus << 8 | device << 3 | function)
}

/// The arch (`gfx1100`, features such as `:xnack-` dropped) of the agent at `bus_id`.
pub(crate) fn arch_at(bus_id: &str, agents: &[GpuAgent]) -> Result<String, String> {
    let bdfid =
        bdfid_of(bus_id).ok_or_else(|| format!("PCI bus id `{bus_id}` is not dddd:bb:dd.f"))?;
    let found: Vec<&GpuAgent> = agents.iter().filter(|a| a.bdfid == bdfid).collect();
    let listed = || {
        agents
            .iter()
            .map(|a| format!("{} at {:#06x}", a.name, a.bdfid))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match found[..] {
        [a] => match a.name.split(':').next() {
            Some(n) if n.starts_with("gfx") => Ok(n.to_string()),
            _ => Err(format!("the HSA agent at {bus_id} is named `{}`, not gfx...", a.name)),
        },
        [] => {
            Err(format!("no HSA GPU agent at {bus_id} (BDFID {bdfid:#06x}); agents: {}", listed()))
        }
        _ => Err(format!("several HSA GPU agents at {bus_id} (BDFID {bdfid:#06x}): {}", listed())),
    }
}

/// The arch of the HIP device at PCI `bus_id`, from its HSA agent.
pub(crate) fn arch(bus_id: &str) -> Result<String, HipError> {
    arch_at(bus_id, &gpu_agents()?).map_err(|message| HipError {
        call: "hsa_agent_get_info(HSA_AGENT_INFO_NAME)",
        code: None,
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn bus_ids_map_to_bdfids() {
        let mut r = rand::thread_rng();
        for _ in 0..1000 {
            let (b, d, f): (u32, u32, u32) =
                (r.gen_range(0..256), r.gen_range(0..32), r.gen_range(0..8));
            let id = format!("{:04x}:{b:02x}:{d:02x}.{f:x}", r.gen_range(0..0x10000u32));
            assert_eq!(bdfid_of(&id), Some(b << 8 | d << 3 | f), "{id}");
        }
        for bad in ["", "0000:03:00", "0000:zz:00.0", "0000:03:20.0", "0000:03:00.8", "03:00.0"] {
            assert_eq!(bdfid_of(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_arch_is_the_agent_at_the_devices_bus_id() {
        let agents = [
            GpuAgent { bdfid: 0x0300, name: "gfx1100".into() },
            GpuAgent { bdfid: 0x8308, name: "gfx90a:sramecc+:xnack-".into() },
            GpuAgent { bdfid: 0x4100, name: "gfx942".into() },
            GpuAgent { bdfid: 0x4100, name: "gfx942".into() },
        ];
        assert_eq!(arch_at("0000:03:00.0", &agents), Ok("gfx1100".into()));
        assert_eq!(arch_at("0000:83:01.0", &agents), Ok("gfx90a".into()));
        let e = arch_at("0000:04:00.0", &agents).unwrap_err();
        assert!(e.contains("no HSA GPU agent at 0000:04:00.0 (BDFID 0x0400)"), "{e}");
        assert!(e.contains("gfx1100 at 0x0300"), "{e}");
        let e = arch_at("0000:41:00.0", &agents).unwrap_err();
        assert!(e.starts_with("several HSA GPU agents"), "{e}");
    }
}
