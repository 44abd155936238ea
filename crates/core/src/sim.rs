//! The pure decisions of the simulated cluster: what a kubelet writes for a pod ([`kubelet`]),
//! where the scheduler binds it ([`schedule`]), what a simulated Node looks like ([`nodes`]),
//! the made-up identities a runtime hands out ([`ids`]), and what its containers use ([`usage`]). The embedded cluster's simulated
//! nodes run them against a server; the console's what-if runs them against an in-memory
//! world, so both predict and play the same story.

pub mod ids;
pub mod kubelet;
pub mod nodes;
pub mod schedule;
pub mod usage;
