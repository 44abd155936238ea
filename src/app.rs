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
