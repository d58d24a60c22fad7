//! Events: points in a device's stream, for timing.

#[cfg(feature = "hip")]
use super::hip;
use super::{cuda, DeviceError};

/// A point in a device's stream, for timing.
pub struct Event {
    pub(super) inner: EventInner,
}

pub(super) enum EventInner {
    Cpu(std::time::Instant),
    Cuda(cuda::Event),
    #[cfg(feature = "hip")]
    Hip(hip::Event),
}

impl Event {
    /// Milliseconds from this event to `end` (waits for `end`).
    pub fn elapsed_ms(&self, end: &Event) -> Result<f64, DeviceError> {
        match (&self.inner, &end.inner) {
            (EventInner::Cpu(a), EventInner::Cpu(b)) => {
                Ok(b.saturating_duration_since(*a).as_secs_f64() * 1e3)
            }
            (EventInner::Cuda(a), EventInner::Cuda(b)) => Ok(a.elapsed_ms(b)? as f64),
            #[cfg(feature = "hip")]
            (EventInner::Hip(a), EventInner::Hip(b)) => Ok(a.elapsed_ms(b)? as f64),
            _ => Err(DeviceError::Mismatch {
                what: "event timing",
                expected: "two events of one device".into(),
                found: "events of different devices".into(),
            }),
        }
    }
}
