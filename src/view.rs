//! Rendering only: `impl Widget for &ViewModel`. Views read state; they never change it.
