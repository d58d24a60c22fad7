//! Launch-cost measurements.
