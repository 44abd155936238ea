//! Console state, messages and the pure `update(&mut App, Msg) -> Vec<Effect>`. No IO, no awaits.
//!
//! Background tasks (terminal events, watchers, the effect executor) send [`Msg`]s; only `update`
//! changes state. Views read state.

pub mod effect;
pub mod msg;
pub mod stores;

pub use effect::Effect;
pub use msg::{Kind, Msg};
pub use stores::Stores;

use anyhow::Result;

use crate::cli::ConsoleArgs;

/// Runs the console (or, with `--demo`, the embedded cluster plus the console).
pub fn run_console(_args: ConsoleArgs) -> Result<()> {
    anyhow::bail!("console: not built yet")
}
