//! How the L2 cache treats the memory a launch touches: one address window with a policy for
//! its lines (CUDA's access policy window), set on the device and given to every launch issued
//! after it, captured graphs included.
//!
//! A decode step streams its weights through an L2 smaller than them, so in plain LRU the weights
//! evict everything else every step: the KV cache, the activations, the workspaces, which the
//! next step reads again from memory, one dependent round trip at a time. Marking the weights'
//! window [`L2Access::Streaming`] (evict first) leaves the rest of the cache to those; marking a
//! window [`L2Access::Persisting`] keeps its lines in a set-aside part of the L2.
//!
//! Only the cuda device applies a window (sm_80 and later; `cuLaunchKernelEx` with
//! `CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW`, and `CU_LIMIT_PERSISTING_L2_CACHE_SIZE` for the
//! persisting part). The cpu device has no cache to steer and the hip device does not apply one
//! (HIP declares the same attribute; it is not wired here and untested on AMD hardware): both
//! accept a window and report that it does nothing ([`L2Applied::Ignored`]). Results never
//! depend on it, only times.

use super::DeviceError;

/// What the L2 does with a line of the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum L2Access {
    /// The default policy.
    Normal,
    /// Read once: the line is evicted before normal ones.
    Streaming,
    /// Kept in the set-aside part of the L2 (up to its size) across launches.
    Persisting,
}

impl L2Access {
    /// `normal`, `streaming` or `persisting`.
    pub fn name(self) -> &'static str {
        match self {
            L2Access::Normal => "normal",
            L2Access::Streaming => "streaming",
            L2Access::Persisting => "persisting",
        }
    }
}

/// One window of device addresses and the policy of its lines: a `hit_ratio` share of the
/// window's lines (chosen by the hardware, the same lines every time) get `hit`, the others
/// `miss`. Lines outside the window keep the normal policy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct L2Window {
    /// The first byte (a device address, [`super::Buffer::device_address`]).
    pub base: u64,
    /// Its length in bytes.
    pub bytes: u64,
    /// The share of lines that get `hit`, in `[0, 1]`.
    pub hit_ratio: f32,
    /// The policy of that share.
    pub hit: L2Access,
    /// The policy of the rest of the window.
    pub miss: L2Access,
}

impl L2Window {
    /// Every line of `[base, base + bytes)` streaming (evicted first).
    pub fn streaming(base: u64, bytes: u64) -> L2Window {
        L2Window {
            base,
            bytes,
            hit_ratio: 1.0,
            hit: L2Access::Streaming,
            miss: L2Access::Streaming,
        }
    }

    /// `[base, base + bytes)` kept in the set-aside L2: `hit_ratio` of its lines persisting,
    /// the others streaming (so they do not evict what the set-aside part cannot hold).
    pub fn persisting(base: u64, bytes: u64, hit_ratio: f32) -> L2Window {
        L2Window { base, bytes, hit_ratio, hit: L2Access::Persisting, miss: L2Access::Streaming }
    }

    /// Refuses a window the hardware cannot take whatever its size: an empty window, one past
    /// the end of the address space, or a ratio outside `[0, 1]` (NaN included).
    pub(crate) fn check(&self) -> Result<(), DeviceError> {
        let bad =
            |why: &str| DeviceError::BadL2Window { window: format!("{self:?}"), why: why.into() };
        if self.bytes == 0 {
            return Err(bad("the window is empty"));
        }
        if self.base.checked_add(self.bytes).is_none() {
            return Err(bad("the window runs past the end of the address space"));
        }
        if !(0.0..=1.0).contains(&self.hit_ratio) {
            return Err(bad("the hit ratio is not in [0, 1]"));
        }
        Ok(())
    }
}

/// What setting a window did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum L2Applied {
    /// Launches from now on carry this window: the one asked for, cut to the device's largest
    /// window (its first bytes), with the persisting part set aside (`set_aside` bytes).
    Applied {
        /// The window the launches carry.
        window: L2Window,
        /// The device's largest window, in bytes.
        max_window: u64,
        /// The L2 set aside for persisting lines, in bytes (0 when nothing persists).
        set_aside: u64,
    },
    /// Launches carry no window: none was asked for.
    Cleared,
    /// The device has no window to set (cpu, hip, or a GPU without one): nothing changes.
    Ignored,
}
