//! The reference interpreter (stub: being written).
