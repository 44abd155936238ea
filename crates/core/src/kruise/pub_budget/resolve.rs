//! Which pods a PUB counts and over what total (`pubcontrol.GetPodsForPub` and
//! `ControllerFinder.GetExpectedScaleForPods`, v1.8.4), over facts the caller lists.

use std::collections::{BTreeMap, BTreeSet};

use super::PodUnavailableBudget;

/// Replicas reported for a kind without a scale subresource (`ReplicasUnknown`); summed as is.
pub const REPLICAS_UNKNOWN: i32 = -1;

/// A workload that owns pods (ReplicaSet, Deployment, StatefulSet, CloneSet, ...).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkloadFact {
    /// Object UID.
    pub uid: String,
    /// `spec.replicas` (or the scale subresource); [`REPLICAS_UNKNOWN`] when there is none.
    pub replicas: i32,
    /// Has a deletionTimestamp.
    pub deleting: bool,
    /// UID of its own controller when that is a workload too (a ReplicaSet's Deployment).
    pub controller_uid: Option<String>,
}

/// A pod matched by a selector PUB: its name and the UID of its controller (if any).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnedPod {
    /// Pod name.
    pub name: String,
    /// Controller ownerReference UID.
    pub controller_uid: Option<String>,
}

/// Port of pkg/util/controllerfinder/controller_finder.go::GetExpectedScaleForPods (v1.8.4).
///
/// Sums the replicas of the distinct top-level workloads controlling `pods` (a ReplicaSet
/// controlled by a Deployment counts as the Deployment), skipping workloads being deleted and
/// pods without a controller. As upstream's finders answer "not found" with nothing, a
/// controller missing from `workloads` is skipped; a ReplicaSet whose Deployment is missing is
/// only found by the last finder (`getRefUID`), which reports [`REPLICAS_UNKNOWN`] and no
/// deletion time. The `Result` is kept for the lister errors upstream can return.
pub fn expected_scale_for_pods(
    pods: &[OwnedPod],
    workloads: &[WorkloadFact],
) -> Result<i32, String> {
    let by_uid: BTreeMap<&str, &WorkloadFact> =
        workloads.iter().map(|w| (w.uid.as_str(), w)).collect();
    let mut seen_refs = BTreeSet::new();
    let mut tops: BTreeMap<&str, i32> = BTreeMap::new();
    for uid in pods.iter().filter_map(|p| p.controller_uid.as_deref()) {
        if !seen_refs.insert(uid) {
            continue;
        }
        let Some(workload) = by_uid.get(uid) else {
            continue;
        };
        match workload.controller_uid.as_deref() {
            Some(parent) => match by_uid.get(parent) {
                Some(top) if !top.deleting => {
                    tops.insert(top.uid.as_str(), top.replicas);
                }
                Some(_) => {}
                None => {
                    tops.insert(workload.uid.as_str(), REPLICAS_UNKNOWN);
                }
            },
            None if workload.deleting => {}
            None => {
                tops.insert(workload.uid.as_str(), workload.replicas);
            }
        }
    }
    Ok(tops.values().fold(0i32, |acc, r| acc.saturating_add(*r)))
}

/// The total and the counted pods of a `targetRef` PUB (Port of
/// pkg/control/pubcontrol/pub_control.go::GetPodsForPub over controllerfinder.GetPodsForRef,
/// v1.8.4): a workload being deleted counts 0 replicas and no pods, one at 0 replicas counts
/// no pods. The `protect-total-replicas` annotation then replaces the total, as upstream
/// applies it to whatever GetPodsForRef returned (a missing workload is `total_replicas(0)`).
pub fn resolve_target_ref<'a>(
    pub_: &PodUnavailableBudget,
    workload: &WorkloadFact,
    owned_pods: &'a [String],
) -> (i32, &'a [String]) {
    if workload.deleting {
        return (pub_.total_replicas(0), &[]);
    }
    let pods: &[String] = if workload.replicas == 0 {
        &[]
    } else {
        owned_pods
    };
    (pub_.total_replicas(workload.replicas), pods)
}

/// The total of a `selector` PUB: the annotation if set (upstream then does not look at the
/// workloads at all), else [`expected_scale_for_pods`].
pub fn resolve_selector_total(
    pub_: &PodUnavailableBudget,
    pods: &[OwnedPod],
    workloads: &[WorkloadFact],
) -> Result<i32, String> {
    if pub_
        .annotation(super::PROTECT_TOTAL_REPLICAS_ANNOTATION)
        .is_some_and(|v| !v.is_empty())
    {
        return Ok(pub_.total_replicas(0));
    }
    expected_scale_for_pods(pods, workloads)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(uid: &str, replicas: i32, deleting: bool, parent: Option<&str>) -> WorkloadFact {
        WorkloadFact {
            uid: uid.into(),
            replicas,
            deleting,
            controller_uid: parent.map(Into::into),
        }
    }

    fn p(name: &str, owner: Option<&str>) -> OwnedPod {
        OwnedPod {
            name: name.into(),
            controller_uid: owner.map(Into::into),
        }
    }

    #[test]
    fn replica_sets_collapse_to_their_deployment() {
        // pub_controller_test "select matched deployment(replicas=0)": two RS of 10 under a Deployment of 0.
        let workloads = [
            w("rs1", 10, false, Some("d")),
            w("rs2", 10, false, Some("d")),
            w("d", 0, false, None),
        ];
        let pods = [p("a", Some("rs1")), p("b", Some("rs2")), p("c", None)];
        assert_eq!(expected_scale_for_pods(&pods, &workloads), Ok(0));
        let workloads = [
            w("rs1", 10, false, Some("d")),
            w("d", 10, true, None),
            w("sts", 3, false, None),
        ];
        let pods = [p("a", Some("rs1")), p("b", Some("sts"))];
        assert_eq!(expected_scale_for_pods(&pods, &workloads), Ok(3));
        // A controller that is gone adds nothing; a ReplicaSet whose Deployment is gone is
        // found only as an unknown-scale controller.
        assert_eq!(
            expected_scale_for_pods(&[p("x", Some("ghost"))], &[]),
            Ok(0)
        );
        let workloads = [w("rs1", 4, false, Some("gone")), w("sts", 3, false, None)];
        let pods = [p("a", Some("rs1")), p("b", Some("sts"))];
        assert_eq!(expected_scale_for_pods(&pods, &workloads), Ok(2));
    }

    #[test]
    fn target_ref_counts_nothing_for_zero_or_deleting() {
        let mut pub_ = PodUnavailableBudget::default();
        let pods = vec!["a".to_owned()];
        assert_eq!(
            resolve_target_ref(&pub_, &w("d", 0, false, None), &pods),
            (0, &[][..])
        );
        assert_eq!(
            resolve_target_ref(&pub_, &w("d", 2, false, None), &pods)
                .1
                .len(),
            1
        );
        pub_.metadata.annotations = Some(
            [(
                "pub.kruise.io/protect-total-replicas".to_owned(),
                "15".to_owned(),
            )]
            .into(),
        );
        assert_eq!(
            resolve_target_ref(&pub_, &w("d", 1, false, None), &pods).0,
            15
        );
    }

    #[test]
    fn a_deleted_target_counts_zero_unless_the_annotation_says_otherwise() {
        let mut pub_ = PodUnavailableBudget::default();
        let pods = vec!["a".to_owned()];
        assert_eq!(
            resolve_target_ref(&pub_, &w("d", 10, true, None), &pods),
            (0, &[][..])
        );
        let with = |v: &str| {
            Some(
                [(
                    "pub.kruise.io/protect-total-replicas".to_owned(),
                    v.to_owned(),
                )]
                .into(),
            )
        };
        pub_.metadata.annotations = with("15");
        assert_eq!(
            resolve_target_ref(&pub_, &w("d", 10, true, None), &pods),
            (15, &[][..])
        );
        // strconv.ParseInt(v, 10, 32) with the error ignored.
        for (v, total) in [
            ("", 10),
            ("+7", 7),
            ("-3", -3),
            ("x", 0),
            ("12x", 0),
            ("3000000000", i32::MAX),
            ("-3000000000", i32::MIN),
            ("3000000000x", 0),
            ("99999999999x", i32::MAX),
            ("2147483647", i32::MAX),
            ("-2147483648", i32::MIN),
        ] {
            pub_.metadata.annotations = with(v);
            assert_eq!(pub_.total_replicas(10), total, "{v:?}");
        }
    }
}
