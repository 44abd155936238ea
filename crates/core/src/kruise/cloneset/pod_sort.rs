//! Pod orderings: k8s `ActivePods` (update order) and Kruise `ActivePodsWithRanks` (scale-down
//! order) with the same-node and spread-constraints rankers.

use std::{
    cmp::Ordering,
    collections::{BTreeMap, BTreeSet, HashMap},
};

use super::PodInfo;

fn phase_ordinal(phase: &str) -> u8 {
    match phase {
        "Unknown" => 1,
        "Running" => 2,
        _ => 0,
    }
}

/// Go's `afterOrZero`: t1 after t2, a zero time being after any non-zero time.
fn after_or_zero(t1: Option<i64>, t2: Option<i64>) -> bool {
    match (t1, t2) {
        (None, _) | (_, None) => t1.is_none(),
        (Some(a), Some(b)) => a > b,
    }
}

/// Turns a Go `Less` into an `Ordering` for Rust's stable sort.
pub fn ordering(less: impl Fn(&PodInfo, &PodInfo) -> bool, a: &PodInfo, b: &PodInfo) -> Ordering {
    if less(a, b) {
        Ordering::Less
    } else if less(b, a) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

/// Port of k8s pkg/controller::ActivePods.Less (k8s v1.30): unscheduled, Pending < Unknown <
/// Running, not-ready, ready more recently, more restarts, newer. "Less" updates first.
pub fn active_pods_less(a: &PodInfo, b: &PodInfo) -> bool {
    if let Some(r) = scheduled_phase_less(a, b) {
        return r;
    }
    if a.ready != b.ready {
        return !a.ready;
    }
    tail_less(a, b)
}

fn scheduled_phase_less(a: &PodInfo, b: &PodInfo) -> Option<bool> {
    if a.node_name != b.node_name && (a.node_name.is_empty() || b.node_name.is_empty()) {
        return Some(a.node_name.is_empty());
    }
    let (pa, pb) = (phase_ordinal(&a.phase), phase_ordinal(&b.phase));
    (pa != pb).then_some(pa < pb)
}

fn tail_less(a: &PodInfo, b: &PodInfo) -> bool {
    if a.ready && b.ready && a.ready_since != b.ready_since {
        return after_or_zero(a.ready_since, b.ready_since);
    }
    if a.restarts != b.restarts {
        return a.restarts > b.restarts;
    }
    if a.created != b.created {
        return after_or_zero(a.created, b.created);
    }
    false
}

/// Port of pod_sorter.go::getDeletionCostFromPodAnnotations (v1.8.4): a canonical int32 decimal
/// (no `+`, no leading zeros), else 0.
pub fn deletion_cost(raw: Option<&str>) -> i32 {
    let Some(value) = raw else { return 0 };
    let first_ok = match value.as_bytes() {
        [] => false,
        [b'-', ..] => true,
        [b'0'] => true,
        [b'1'..=b'9', ..] => true,
        _ => false,
    };
    if !first_ok {
        return 0;
    }
    value.parse::<i32>().unwrap_or(0)
}

/// Inputs of the deletion comparator beyond the pods themselves.
pub struct DeletionOrder<'a> {
    /// Rank per pod uid (missing = 0).
    pub ranks: Option<&'a HashMap<String, f64>>,
    /// `isAvailable` per pod, when availability takes part.
    pub available: Option<&'a dyn Fn(&PodInfo) -> bool>,
}

impl DeletionOrder<'_> {
    fn rank(&self, pod: &PodInfo) -> f64 {
        self.ranks
            .and_then(|r| r.get(&pod.uid))
            .copied()
            .unwrap_or(0.0)
    }

    /// Port of pod_sorter.go::ActivePodsWithRanks.Less (v1.8.4). "Less" is deleted first.
    pub fn less(&self, a: &PodInfo, b: &PodInfo) -> bool {
        if let Some(r) = scheduled_phase_less(a, b) {
            return r;
        }
        if let Some(available) = self.available {
            let (aa, ab) = (available(a), available(b));
            if aa != ab {
                return !aa;
            }
        }
        if a.ready != b.ready {
            return !a.ready;
        }
        let (ca, cb) = (
            deletion_cost(a.deletion_cost.as_deref()),
            deletion_cost(b.deletion_cost.as_deref()),
        );
        if ca != cb {
            return ca < cb;
        }
        let (ra, rb) = (self.rank(a), self.rank(b));
        if ra != rb {
            return ra > rb;
        }
        tail_less(a, b)
    }

    /// Sorts `pods` in deletion order (stable).
    pub fn sort(&self, pods: &mut [&PodInfo]) {
        pods.sort_by(|a, b| ordering(|x, y| self.less(x, y), a, b));
    }
}

/// Port of pod_sorter.go::NewSameNodeRanker (v1.8.4): on a node with n ≥ 2 pods, all but the
/// pod most worth keeping get ranks n−1 … 1 (most deletable highest).
pub fn same_node_ranks(pods: &[&PodInfo]) -> HashMap<String, f64> {
    let mut on_node: BTreeMap<&str, Vec<&PodInfo>> = BTreeMap::new();
    for pod in pods {
        if !pod.node_name.is_empty() {
            on_node.entry(&pod.node_name).or_default().push(pod);
        }
    }
    let plain = DeletionOrder {
        ranks: None,
        available: None,
    };
    let mut ranks = HashMap::new();
    for (_, mut group) in on_node {
        if group.len() <= 1 {
            continue;
        }
        plain.sort(&mut group);
        group.pop();
        let n = group.len();
        for (i, pod) in group.iter().enumerate() {
            ranks.insert(pod.uid.clone(), (n - i) as f64);
        }
    }
    ranks
}

/// One `topologySpreadConstraints` entry as the ranker uses it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpreadConstraint {
    pub topology_key: String,
    /// Only these topology values count (empty = all).
    pub limited_values: Vec<String>,
}

/// The hostname topology key (no same-node tiebreak under it).
pub const LABEL_HOSTNAME: &str = "kubernetes.io/hostname";

/// Port of pod_sorter.go::NewSpreadConstraintsRanker (v1.8.4). `nodes` are the known nodes in
/// the order they are first met; pods on unknown nodes are ignored.
pub fn spread_ranks(
    pods: &[&PodInfo],
    constraints: &[SpreadConstraint],
    nodes: &[(String, BTreeMap<String, String>)],
) -> HashMap<String, f64> {
    let known: HashMap<&str, &BTreeMap<String, String>> =
        nodes.iter().map(|(n, l)| (n.as_str(), l)).collect();
    let mut node_order: Vec<&str> = Vec::new();
    let mut on_node: HashMap<&str, Vec<&PodInfo>> = HashMap::new();
    for pod in pods {
        let node = pod.node_name.as_str();
        if node.is_empty() || !known.contains_key(node) {
            continue;
        }
        if !on_node.contains_key(node) {
            node_order.push(node);
        }
        on_node.entry(node).or_default().push(pod);
    }
    let same_node = same_node_ranks(pods);
    let mut ranks: HashMap<String, f64> = HashMap::new();
    for constraint in constraints {
        let limited: BTreeSet<&str> = constraint
            .limited_values
            .iter()
            .map(String::as_str)
            .collect();
        let mut topologies: BTreeMap<&str, Vec<&PodInfo>> = BTreeMap::new();
        for node in &node_order {
            let Some(value) = known
                .get(node)
                .and_then(|l| l.get(&constraint.topology_key))
            else {
                continue;
            };
            if !limited.is_empty() && !limited.contains(value.as_str()) {
                continue;
            }
            topologies
                .entry(value)
                .or_default()
                .extend(on_node.get(node).into_iter().flatten());
        }
        let order = DeletionOrder {
            ranks: (constraint.topology_key != LABEL_HOSTNAME).then_some(&same_node),
            available: None,
        };
        let weight = ((topologies.len() + 2) as f64).ln();
        for (_, mut group) in topologies {
            order.sort(&mut group);
            let n = group.len();
            for (i, pod) in group.iter().enumerate() {
                *ranks.entry(pod.uid.clone()).or_insert(0.0) += (n - i) as f64 * weight;
            }
        }
    }
    ranks
}
