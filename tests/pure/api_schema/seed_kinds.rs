//! The seed kinds and the slim pod against their upstream schemas.

use super::*;

#[test]
fn persistentpodstate_matches_upstream() {
    assert_matches::<api::PersistentPodState>(
        "apps.kruise.io_persistentpodstates.yaml",
        &[
            ".spec.targetRef.kind",
            ".spec.requiredPersistentTopology.nodeTopologyKeys[]",
            ".spec.preferredPersistentTopology[].preference.nodeTopologyKeys[]",
            ".spec.persistentPodAnnotations[].key",
            ".spec.persistentPodStateRetentionPolicy",
            ".status.podStates{}.nodeTopologyLabels{}",
        ],
    );
}

#[test]
fn workloadspread_matches_upstream() {
    assert_matches::<api::WorkloadSpread>(
        "apps.kruise.io_workloadspreads.yaml",
        &[
            ".spec.targetFilter.replicasPathList[]",
            ".spec.subsets[].maxReplicas",
            ".spec.subsets[].requiredNodeSelectorTerm.matchExpressions[].values[]",
            ".spec.subsets[].tolerations[].effect",
            ".spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds",
            ".status.subsetStatuses[].missingReplicas",
            ".status.subsetStatuses[].creatingPods{}",
            ".status.versionedSubsetStatuses{}[].replicas",
        ],
    );
}

#[test]
fn uniteddeployment_matches_upstream() {
    assert_matches::<api::UnitedDeployment>(
        "apps.kruise.io_uniteddeployments.yaml",
        &[
            ".spec.template.cloneSetTemplate.spec.updateStrategy.partition",
            ".spec.template.advancedStatefulSetTemplate.spec.updateStrategy.rollingUpdate.partition",
            ".spec.topology.subsets[].replicas",
            ".spec.topology.subsets[].nodeSelectorTerm.matchExpressions[].key",
            ".spec.topology.scheduleStrategy.adaptive.unschedulableDuration",
            ".spec.updateStrategy.manualUpdate.partitions{}",
            ".status.subsetStatuses[].partition",
            ".status.updateStatus.currentPartitions{}",
        ],
    );
}

#[test]
fn jobs_match_upstream() {
    assert_matches::<api::BroadcastJob>(
        "apps.kruise.io_broadcastjobs.yaml",
        &[
            ".spec.parallelism",
            ".spec.completionPolicy.ttlSecondsAfterFinished",
            ".spec.failurePolicy.restartLimit",
            ".status.conditions[].lastProbeTime",
            ".status.phase",
        ],
    );
    assert_matches::<api::AdvancedCronJob>(
        "apps.kruise.io_advancedcronjobs.yaml",
        &[
            ".spec.schedule",
            ".spec.startingDeadlineSeconds",
            ".spec.template.broadcastJobTemplate.spec.completionPolicy.activeDeadlineSeconds",
            ".spec.template.jobTemplate",
            ".status.active[].uid",
            ".status.lastScheduleTime",
        ],
    );
    assert_matches::<api::ImagePullJob>(
        "apps.kruise.io_imagepulljobs.yaml",
        &[
            ".spec.selector.names[]",
            ".spec.selector.matchLabels{}",
            ".spec.podSelector.matchLabels{}",
            ".spec.pullPolicy.backoffLimit",
            ".spec.sandboxConfig.labels{}",
            ".status.failedNodes[]",
        ],
    );
    assert_matches::<api::ImageListPullJob>(
        "apps.kruise.io_imagelistpulljobs.yaml",
        &[
            ".spec.images[]",
            ".spec.parallelism",
            ".spec.selector.names[]",
            ".spec.completionPolicy.type",
            ".status.completed",
            ".status.failedImageStatuses[].imagePullJob",
        ],
    );
}

#[test]
fn nodeimage_matches_upstream() {
    assert_matches::<api::NodeImage>(
        "apps.kruise.io_nodeimages.yaml",
        &[
            ".spec.images{}.tags[].tag",
            ".spec.images{}.tags[].ownerReferences[].uid",
            ".spec.images{}.tags[].pullPolicy.activeDeadlineSeconds",
            ".spec.images{}.pullSecrets[].namespace",
            ".status.firstSyncStatus.syncAt",
            ".status.imageStatuses{}.tags[].imageID",
            ".status.imageStatuses{}.tags[].progress",
        ],
    );
}

#[test]
fn resourcedistribution_matches_upstream() {
    assert_matches::<api::ResourceDistribution>(
        "apps.kruise.io_resourcedistributions.yaml",
        &[
            ".spec.resource",
            ".spec.targets.allNamespaces",
            ".spec.targets.includedNamespaces.list[].name",
            ".spec.targets.namespaceLabelSelector.matchLabels{}",
            ".status.conditions[].failedNamespace[]",
            ".status.observedGeneration",
        ],
    );
}

#[test]
fn slim_pod_matches_the_core_pod_schema() {
    // The built-in Pod has no CRD: check SlimPod against k8s-openapi's own Pod schema.
    let pod = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<k8s_openapi::api::core::v1::Pod>();
    let pod = serde_json::to_value(pod).unwrap();
    let ours = our_schema::<api::SlimPod>();
    let mut walker = Walker::new(&ours);
    walker.walk("", &ours, &pod);
    // SlimStateDetail is one struct for running/waiting/terminated (the union of their fields,
    // all of which `terminated` has); the extra fields are simply absent on the other two.
    let union_extra = |e: &String| {
        let in_union_state = [
            ".state.running.",
            ".state.waiting.",
            ".lastState.running.",
            ".lastState.waiting.",
        ]
        .iter()
        .any(|s| e.contains(s));
        let field = e.rsplit('.').next().unwrap_or("");
        in_union_state
            && ["reason", "message", "startedAt", "finishedAt", "exitCode"]
                .iter()
                .any(|f| field == format!("{f}: not in upstream schema"))
    };
    let errors: Vec<_> = walker.errors.iter().filter(|e| !union_extra(e)).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    for path in [
        ".status.podIP",
        ".status.containerStatuses[].containerID",
        ".status.containerStatuses[].lastState.terminated.exitCode",
        ".status.conditions[].lastProbeTime",
        ".spec.readinessGates[].conditionType",
    ] {
        assert!(
            walker.visited.iter().any(|v| v == path),
            "{path} not checked"
        );
    }
}
