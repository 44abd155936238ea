//! Ordinals, reserved ordinals and the replica slot array of an Advanced StatefulSet.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{AstsPod, AstsSpec};
use crate::kruise::FeatureGates;

/// Port of pkg/controller/statefulset/stateful_set_utils.go::getParentNameAndOrdinal (v1.8.4):
/// the trailing `-<digits>` of a pod name as an int32, or -1.
pub fn parse_ordinal(name: &str) -> i32 {
    let Some((_parent, digits)) = name.rsplit_once('-') else {
        return -1;
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return -1;
    }
    digits.parse::<i32>().unwrap_or(-1)
}

/// Port of pkg/util/api/asts.go::ParseRange (v1.8.4): `"a-b"` with a ≤ b.
fn parse_range(s: &str) -> Option<(i64, i64)> {
    let mut parts = s.split('-');
    let (start, end) = (parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let start: i64 = start.parse().ok()?;
    let end: i64 = end.parse().ok()?;
    (start <= end).then_some((start, end))
}

/// Port of pkg/util/api/asts.go::GetReserveOrdinalIntSet (v1.8.4).
///
/// Ints are taken as is; strings must be `"a-b"` ranges (inclusive). A single invalid range makes
/// the **whole** set empty, as upstream returns nil.
pub fn reserve_ordinal_set(reserve: &[IntOrString]) -> BTreeSet<i64> {
    let mut out = BTreeSet::new();
    for elem in reserve {
        match elem {
            IntOrString::Int(v) => {
                out.insert(i64::from(*v));
            }
            IntOrString::String(s) => {
                let Some((start, end)) = parse_range(s) else {
                    return BTreeSet::new();
                };
                // Upstream inserts every value; cap absurd ranges so bad input cannot exhaust memory.
                if end - start > 1_000_000 {
                    return BTreeSet::new();
                }
                out.extend(start..=end);
            }
        }
    }
    out
}

/// Port of pkg/controller/statefulset/stateful_set_utils.go::getStartOrdinal (v1.8.4).
pub fn start_ordinal(spec: &AstsSpec, gates: &FeatureGates) -> i32 {
    match spec.ordinals_start {
        Some(start) if gates.enabled("StatefulSetStartOrdinal") => start,
        _ => 0,
    }
}

/// The half-open ordinal range `[start, end)` holding `replicas` non-reserved ordinals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicasRange {
    /// First ordinal (inclusive).
    pub start: i32,
    /// End ordinal (exclusive).
    pub end: i32,
    /// The parsed reserved ordinals.
    pub reserved: BTreeSet<i64>,
}

impl ReplicasRange {
    /// Number of slots (`end - start`).
    pub fn slot_count(&self) -> usize {
        usize::try_from(self.end - self.start).unwrap_or(0)
    }

    /// Whether `ordinal` is a live replica ordinal (in range and not reserved).
    pub fn contains(&self, ordinal: i32) -> bool {
        ordinal >= self.start && ordinal < self.end && !self.reserved.contains(&i64::from(ordinal))
    }
}

/// Port of pkg/controller/statefulset/stateful_set_utils.go::getStatefulSetReplicasRange (v1.8.4).
pub fn replicas_range(spec: &AstsSpec, gates: &FeatureGates) -> ReplicasRange {
    let reserved = reserve_ordinal_set(&spec.reserve_ordinals);
    let start = start_ordinal(spec, gates);
    let mut end = start;
    let mut counted = 0;
    while counted < spec.replicas {
        if !reserved.contains(&i64::from(end)) {
            counted += 1;
        }
        end = end.saturating_add(1);
        if end == i32::MAX {
            break;
        }
    }
    ReplicasRange {
        start,
        end,
        reserved,
    }
}

/// The slot array (`replicas` in upstream, indexed by `ordinal - start`; `None` = hole or missing
/// pod) and the condemned pods (outside the range or on a reserved ordinal), in descending
/// ordinal order as they are deleted.
pub fn replica_slots(
    spec: &AstsSpec,
    gates: &FeatureGates,
    pods: &[AstsPod],
) -> (Vec<Option<AstsPod>>, Vec<AstsPod>) {
    let range = replicas_range(spec, gates);
    let mut slots: Vec<Option<AstsPod>> = vec![None; range.slot_count()];
    let mut condemned = Vec::new();
    for pod in pods {
        let ordinal = pod.ordinal();
        if range.contains(ordinal) {
            let idx = usize::try_from(ordinal - range.start).unwrap_or(usize::MAX);
            if let Some(slot) = slots.get_mut(idx) {
                *slot = Some(pod.clone());
            }
        } else if ordinal >= 0 {
            condemned.push(pod.clone());
        }
    }
    condemned.sort_by_key(|p| std::cmp::Reverse(p.ordinal()));
    (slots, condemned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinal_parsing() {
        assert_eq!(parse_ordinal("web-12"), 12);
        assert_eq!(parse_ordinal("web-a-3"), 3);
        assert_eq!(parse_ordinal("web"), -1);
        assert_eq!(parse_ordinal("web-"), -1);
        assert_eq!(parse_ordinal("web-x1"), -1);
        assert_eq!(parse_ordinal("web-99999999999"), -1);
    }

    #[test]
    fn reserve_ranges_and_invalid_ranges() {
        let set = reserve_ordinal_set(&[IntOrString::Int(1), IntOrString::String("3-5".into())]);
        assert_eq!(set.into_iter().collect::<Vec<_>>(), vec![1, 3, 4, 5]);
        let bad = reserve_ordinal_set(&[IntOrString::Int(1), IntOrString::String("5-3".into())]);
        assert!(bad.is_empty());
        assert!(reserve_ordinal_set(&[IntOrString::String("x".into())]).is_empty());
    }

    #[test]
    fn range_skips_reserved() {
        let spec = AstsSpec {
            replicas: 4,
            reserve_ordinals: vec![IntOrString::Int(1), IntOrString::Int(3)],
            ..Default::default()
        };
        let r = replicas_range(&spec, &FeatureGates::new());
        assert_eq!((r.start, r.end), (0, 6));
        assert!(r.contains(4) && !r.contains(3) && !r.contains(6));
    }
}
