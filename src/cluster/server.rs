//! The embedded API server (being built).
