//! Well-known Kruise (and Kubernetes) labels, annotations, condition types and finalizers
//! (Kruise v1.8.4: `apis/apps/v1alpha1/well_known_labels.go`, `well_know_annotations.go`,
//! `apis/apps/pub/*.go`). (L) label, (A) annotation.

// --- Workload revisions and instances -------------------------------------------------------

/// (L, pod) Revision a pod was built from (full ControllerRevision name, or bare hash for ADS
/// and for CloneSet with the `CloneSetShortHash` gate).
pub const CONTROLLER_REVISION_HASH: &str = "controller-revision-hash";
/// (L, CloneSet pod) Always the short hash.
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";
/// (L, ControllerRevision) The revision hash.
pub const CONTROLLER_HASH: &str = "controller.kubernetes.io/hash";
/// (A, ControllerRevision) Hash of a CloneSet's `volumeClaimTemplates`.
pub const CLONESET_VOLUME_CLAIM_TEMPLATE_HASH: &str = "kruise.io/cloneset-volumeclaimtemplate-hash";
/// (A, ControllerRevision / workload) Shown by `rollout history`.
pub const CHANGE_CAUSE: &str = "kubernetes.io/change-cause";
/// (L, CloneSet pod and PVC) Instance id shared by a pod and its PVCs.
pub const CLONESET_INSTANCE_ID: &str = "apps.kruise.io/cloneset-instance-id";
/// (L, CloneSet) `"true"`: pods in PreparingDelete do not count toward replicas when scaling.
pub const CLONESET_SCALING_EXCLUDE_PREPARING_DELETE: &str =
    "apps.kruise.io/cloneset-scaling-exclude-preparing-delete";
/// (A, pod) int32 decimal; lower is deleted first.
pub const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";
/// (L, pod/PVC) Asks the owning workload to delete the pod; only the key's presence matters.
pub const SPECIFIED_DELETE: &str = "apps.kruise.io/specified-delete";
/// (L prefix, pod) Marks the pod unavailable for PUB and Kruise workloads even when Ready.
pub const UNAVAILABLE_POD_PREFIX: &str = "unavailable-pod.kruise.io/";

// --- Lifecycle and in-place update ----------------------------------------------------------

/// (L, pod) Lifecycle state: see [`LIFECYCLE_STATES`].
pub const LIFECYCLE_STATE: &str = "lifecycle.apps.kruise.io/state";
/// (A, pod) RFC3339 time of the last lifecycle state change.
pub const LIFECYCLE_TIMESTAMP: &str = "lifecycle.apps.kruise.io/timestamp";
/// The values of [`LIFECYCLE_STATE`].
pub const LIFECYCLE_STATES: [&str; 6] = [
    "PreparingNormal",
    "Normal",
    "PreparingUpdate",
    "Updating",
    "Updated",
    "PreparingDelete",
];
/// (A, pod) JSON `InPlaceUpdateState`.
pub const INPLACE_UPDATE_STATE: &str = "apps.kruise.io/inplace-update-state";
/// (A, pod) Legacy key of [`INPLACE_UPDATE_STATE`], still read.
pub const INPLACE_UPDATE_STATE_LEGACY: &str = "inplace-update-state";
/// (A, pod) JSON of the in-place update waiting for its grace period.
pub const INPLACE_UPDATE_GRACE: &str = "apps.kruise.io/inplace-update-grace";
/// (A, pod) Legacy key of [`INPLACE_UPDATE_GRACE`], still read.
pub const INPLACE_UPDATE_GRACE_LEGACY: &str = "inplace-update-grace";
/// Pod condition / readiness gate set around in-place updates.
pub const CONDITION_INPLACE_UPDATE_READY: &str = "InPlaceUpdateReady";
/// Pod condition / readiness gate used by `markPodNotReady` and CRR.
pub const CONDITION_KRUISE_POD_READY: &str = "KruisePodReady";
/// (A, pod) Runtime container IDs and hashes, written by kruise-daemon.
pub const RUNTIME_CONTAINERS_META: &str = "apps.kruise.io/runtime-containers-meta";
/// (A, pod) `Ordered`: containers start in priority order.
pub const CONTAINER_LAUNCH_PRIORITY: &str = "apps.kruise.io/container-launch-priority";
/// (A, pod) Set once every container has started in priority order.
pub const CONTAINER_LAUNCH_PRIORITY_COMPLETED: &str =
    "apps.kruise.io/container-launch-priority-completed";
/// Container env: launch priority of this container (higher starts first).
pub const ENV_CONTAINER_PRIORITY: &str = "KRUISE_CONTAINER_PRIORITY";
/// Container env: the barrier the launch-priority webhook injects.
pub const ENV_CONTAINER_BARRIER: &str = "KRUISE_CONTAINER_BARRIER";
/// (A, pod) Turns on the enhanced liveness probe (gate EnhancedLivenessProbe).
pub const USING_ENHANCED_LIVENESS: &str = "apps.kruise.io/using-enhanced-liveness";
/// (A, pod) Backup of the native liveness probes, as JSON.
pub const CONTAINER_PROBE_CONTEXT: &str = "apps.kruise.io/container-probe-context";

// --- UnitedDeployment, WorkloadSpread, image pre-download ------------------------------------

/// (L) Revision of the UnitedDeployment that produced a subset.
pub const UNITED_DEPLOYMENT_REVISION_HASH: &str = "apps.kruise.io/controller-revision-hash";
/// (L) UnitedDeployment subset name.
pub const SUBSET_NAME: &str = "apps.kruise.io/subset-name";
/// (A) Last applied UnitedDeployment subset patch.
pub const SUBSET_PATCH: &str = "apps.kruise.io/subset-patch";
/// (A, pod) Matched WorkloadSpread and subset.
pub const MATCHED_WORKLOADSPREAD: &str = "apps.kruise.io/matched-workloadspread";
/// (A, workload) Image pre-download job created for a revision.
pub const PRE_PREDOWNLOAD_CREATED: &str = "apps.kruise.io/pre-predownload-created";
/// (A, workload) Image pre-download skipped.
pub const IMAGE_PREDOWNLOAD_IGNORED: &str = "apps.kruise.io/image-predownload-ignored";
/// (A, workload) Nodes pulling at once in a pre-download job (default 1).
pub const IMAGE_PREDOWNLOAD_PARALLELISM: &str = "apps.kruise.io/image-predownload-parallelism";
/// (A, workload) Pull timeout of a pre-download job.
pub const IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS: &str =
    "apps.kruise.io/image-predownload-timeout-seconds";
/// (A, workload) Updated-ready pods required before pre-download starts.
pub const IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS: &str =
    "apps.kruise.io/image-predownload-min-updated-ready-pods";

// --- SidecarSet -----------------------------------------------------------------------------

/// (A, SidecarSet / ControllerRevision / pod) Content hash (on pods: per-set JSON map).
pub const SIDECARSET_HASH: &str = "kruise.io/sidecarset-hash";
/// (A) Content hash without images.
pub const SIDECARSET_HASH_WITHOUT_IMAGE: &str = "kruise.io/sidecarset-hash-without-image";
/// (A, pod) Comma-separated names of the matched SidecarSets.
pub const SIDECARSET_INJECTED_LIST: &str = "kruise.io/sidecarset-injected-list";
/// (A, pod) Per-set in-place update state.
pub const SIDECARSET_INPLACE_UPDATE_STATE: &str = "kruise.io/sidecarset-inplace-update-state";
/// (A, pod) Map from hot-upgrade container to its working twin.
pub const SIDECARSET_WORKING_HOTUPGRADE_CONTAINER: &str =
    "kruise.io/sidecarset-working-hotupgrade-container";
/// (A prefix, pod) `version.sidecarset.kruise.io/<container>` hot-upgrade version counter.
pub const SIDECARSET_VERSION_PREFIX: &str = "version.sidecarset.kruise.io/";
/// (A prefix, pod) `versionalt.sidecarset.kruise.io/<container>` alternate counter.
pub const SIDECARSET_VERSION_ALT_PREFIX: &str = "versionalt.sidecarset.kruise.io/";
/// (L, ControllerRevision) Owning SidecarSet.
pub const SIDECARSET_NAME: &str = "kruise.io/sidecarset-name";
/// (L, SidecarSet / ControllerRevision) Custom version tag.
pub const SIDECARSET_CUSTOM_VERSION: &str = "apps.kruise.io/sidecarset-custom-version";
/// (A, Advanced DaemonSet) With `"true"`, an Advanced DaemonSet creates pods for new nodes only up to its partition
/// (v1alpha1; v1.9.0's v1beta1 spells it `spec.scaleStrategy.partitionedScaling: true`).
pub const PROGRESSIVE_CREATE_POD: &str = "daemonset.kruise.io/progressive-create-pod";
/// Pod condition set by the SidecarSet controller.
pub const CONDITION_SIDECARSET_UPGRADABLE: &str = "SidecarSetUpgradable";

// --- PodProbeMarker --------------------------------------------------------------------------

/// (A, pod) Serverless pod probe.
pub const POD_PROBE: &str = "kruise.io/podprobe";
/// (A, pod) PodProbeMarkers applied to a serverless pod.
pub const POD_PROBE_MARKER_LIST: &str = "kruise.io/podprobemarker-list";
/// Finalizer on PodProbeMarker ensuring NodePodProbes are cleaned up.
pub const NODE_POD_PROBE_CLEANUP_FINALIZER: &str = "kruise.io/node-pod-probe-cleanup";

// --- ContainerRecreateRequest ----------------------------------------------------------------

/// (L, CRR, immutable) Target pod UID.
pub const CRR_POD_UID: &str = "crr.apps.kruise.io/pod-uid";
/// (L, CRR, immutable) Target node name.
pub const CRR_NODE_NAME: &str = "crr.apps.kruise.io/node-name";
/// (L, CRR) `true` while the request is active.
pub const CRR_ACTIVE: &str = "crr.apps.kruise.io/active";
/// (A, CRR) Container statuses observed during Recreating.
pub const CRR_SYNC_CONTAINER_STATUSES: &str = "crr.apps.kruise.io/sync-container-statuses";
/// (A and finalizer, CRR) Time the pod was forced not-ready.
pub const CRR_UNREADY_ACQUIRED: &str = "crr.apps.kruise.io/unready-acquired";
/// (L `type=virtual-kubelet`, node → CRR) Marks a serverless node; copied onto the CRR.
pub const VIRTUAL_KUBELET_TYPE: &str = "type";
/// Value of [`VIRTUAL_KUBELET_TYPE`] on serverless nodes.
pub const VIRTUAL_KUBELET: &str = "virtual-kubelet";

// --- Deletion protection and PodUnavailableBudget --------------------------------------------

/// (L) Deletion protection: [`DELETE_PROTECTION_ALWAYS`] or [`DELETE_PROTECTION_CASCADING`].
pub const DELETE_PROTECTION: &str = "policy.kruise.io/delete-protection";
/// Value of [`DELETE_PROTECTION`]: deny any delete.
pub const DELETE_PROTECTION_ALWAYS: &str = "Always";
/// Value of [`DELETE_PROTECTION`]: deny a delete while it still owns active objects.
pub const DELETE_PROTECTION_CASCADING: &str = "Cascading";
/// (A, pod) The PUB that protects this pod.
pub const RELATED_PUB: &str = "kruise.io/related-pub";
/// (A, PUB) Subset of DELETE, UPDATE and EVICT that the PUB guards.
pub const PUB_PROTECT_OPERATIONS: &str = "kruise.io/pub-protect-operations";
/// (A, PUB) Total replicas override.
pub const PUB_PROTECT_TOTAL_REPLICAS: &str = "pub.kruise.io/protect-total-replicas";
/// (A, pod) `"true"`: skip PUB checks for this pod.
pub const PUB_NO_PROTECT: &str = "pub.kruise.io/no-protect";

// --- PersistentPodState ----------------------------------------------------------------------

/// (A, StatefulSet) `"true"`: generate a PersistentPodState automatically.
pub const AUTO_GENERATE_PERSISTENT_POD_STATE: &str = "kruise.io/auto-generate-persistent-pod-state";
/// (A, StatefulSet) Comma-separated node topology keys, required.
pub const REQUIRED_PERSISTENT_TOPOLOGY: &str = "kruise.io/required-persistent-topology";
/// (A, StatefulSet) Comma-separated node topology keys, preferred.
pub const PREFERRED_PERSISTENT_TOPOLOGY: &str = "kruise.io/preferred-persistent-topology";
/// (A, StatefulSet) Comma-separated pod annotation keys to persist.
pub const PERSISTENT_POD_ANNOTATIONS: &str = "kruise.io/persistent-pod-annotations";
/// (A, pod) Which PersistentPodState affected the pod's scheduling.
pub const INJECTED_PERSISTENT_POD_STATE: &str = "kruise.io/injected-persistent-pod-state";

// --- ImagePullJob ------------------------------------------------------------------------------

/// Finalizer on ImagePullJob (cleans up secrets; unrelated to [`DELETE_PROTECTION`]).
pub const IMAGE_PULL_JOB_DELETION_PROTECTION_FINALIZER: &str = "apps.kruise.io/deletion-protection";

// --- SidecarTerminator -------------------------------------------------------------------------

/// Container env `"true"`: kill this sidecar when the job's main containers exit.
pub const ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT: &str = "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT";
/// Container env: replace this sidecar's image to terminate it when the job exits.
pub const ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE: &str =
    "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE";
/// Container env: ignore this sidecar's exit code when judging the job.
pub const ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE: &str =
    "KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE";

// --- Kruise Rollout (rollouts.kruise.io v0.6.2) ----------------------------------------------

/// (L, workload) `cloneset`, `deployment`, `statefulset` (also ASTS) or `daemonset`: the workload
/// webhook's objectSelector requires it. Patched by the Rollout controller, never removed, so it
/// only says "a Rollout once referenced this".
pub const ROLLOUT_WORKLOAD_TYPE: &str = "rollouts.kruise.io/workload-type";
/// (A, workload) `{"rolloutName":"<rollout>"}`: a Rollout has taken over this release.
pub const ROLLOUT_IN_PROGRESSING: &str = "rollouts.kruise.io/in-progressing";
/// (A, workload) JSON ownerReference of the BatchRelease that owns the partition and paused
/// fields.
pub const BATCH_RELEASE_CONTROL_INFO: &str = "batchrelease.rollouts.kruise.io/control-info";
/// (A, Rollout) Plan hash (steps without pause, without failureThreshold).
pub const ROLLOUT_HASH: &str = "rollouts.kruise.io/hash";
/// (L and A, workload; L, pod) A user-chosen release id: the controller reads the workload
/// label, the webhook the workload annotation; pods carry the release plan's id.
pub const ROLLOUT_ID: &str = "rollouts.kruise.io/rollout-id";
/// (L, pod) 1-based batch in which the pod was updated.
pub const ROLLOUT_BATCH_ID: &str = "rollouts.kruise.io/rollout-batch-id";
/// (L, pod) Already on the target revision when a rollback in batches starts.
pub const ROLLOUT_NO_NEED_UPDATE: &str = "rollouts.kruise.io/no-need-update";
/// (A, Rollout, copied to the BatchRelease) `"true"`: roll back in batches.
pub const ROLLBACK_IN_BATCH: &str = "rollouts.kruise.io/rollback-in-batch";
/// (A, v1alpha1 Rollout and BatchRelease) `partition` or `canary`.
pub const ROLLING_STYLE: &str = "rollouts.kruise.io/rolling-style";
/// (A, Rollout) Name of a TrafficRouting CR that follows this Rollout.
pub const ROLLOUT_TRAFFIC_ROUTING: &str = "rollouts.kruise.io/trafficrouting";
/// Finalizer on a Rollout, held until Terminating completes.
pub const ROLLOUT_FINALIZER: &str = "rollouts.kruise.io/rollout";
/// Finalizer on a BatchRelease, removed once it is deleted and Completed.
pub const BATCH_RELEASE_FINALIZER: &str = "rollouts.kruise.io/batch-release-finalizer";
