//! Themes, keymaps and paths: built-in defaults plus user overrides.

pub mod paths;

pub use paths::{Paths, print_paths};
