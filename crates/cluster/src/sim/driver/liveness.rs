//! The nodes' liveness, kept as a kubelet keeps it, in a task of its own so that pod work never
//! delays it: each node's Lease in kube-node-lease is renewed every `lease_every` (what the node
//! lifecycle controller watches), and the Node's status, with the Ready heartbeat, is posted when
//! [`nodes::status_due`] says so: a condition someone else changed (Ready set to Unknown), or
//! a heartbeat `status_every` old. The pod loop hands over every simulated Node it sees, so a
//! changed condition is answered at once, without a watch or a poll of its own.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::{coordination::v1::Lease, core::v1::Node};
use kube::Client;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::sim::{io, nodes};

/// How often the liveness task renews Leases and posts statuses.
#[derive(Debug, Clone, Copy)]
pub(super) struct Every {
    pub lease: Duration,
    pub status: Duration,
}

/// Keeps nodes `0..registered.len()` alive until `shutdown`; `seen` brings the simulated Nodes
/// the pod loop's watch sees.
pub(super) async fn run(
    client: Client,
    registered: Vec<Node>,
    every: Every,
    mut seen: mpsc::UnboundedReceiver<Node>,
    shutdown: CancellationToken,
) {
    let mut nodes: Vec<Node> = registered;
    let mut leases: Vec<Option<Lease>> = vec![None; nodes.len()];
    let mut tick = tokio::time::interval(every.lease);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            Some(node) = seen.recv() => {
                let Some(index) = node
                    .metadata
                    .name
                    .as_deref()
                    .and_then(nodes::node_index)
                    .filter(|i| *i < nodes.len())
                else {
                    continue;
                };
                nodes[index] = node;
                post_status_if_due(&client, index, &mut nodes[index], every.status).await;
            }
            _ = tick.tick() => {
                for index in 0..nodes.len() {
                    post_status_if_due(&client, index, &mut nodes[index], every.status).await;
                    match io::renew_lease(&client, &nodes[index], leases[index].take()).await {
                        Ok(lease) => leases[index] = Some(lease),
                        Err(err) => tracing::warn!("sim-nodes: {err:#}"),
                    }
                }
            }
        }
    }
}

/// Posts node `index`'s status if it is due, re-registering the node if someone deleted it.
async fn post_status_if_due(client: &Client, index: usize, node: &mut Node, every: Duration) {
    if !nodes::status_due(node.status.as_ref(), index, Timestamp::now(), every) {
        return;
    }
    let result = match io::heartbeat(client, index, Some(node)).await {
        Ok(Some(fresh)) => Ok(fresh),
        Ok(None) => io::register_node(client, index).await,
        Err(err) => Err(err),
    };
    match result {
        Ok(fresh) => *node = fresh,
        Err(err) => tracing::warn!("sim-nodes: {err:#}"),
    }
}
