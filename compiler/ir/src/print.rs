//! The text printer (stub: being written).
