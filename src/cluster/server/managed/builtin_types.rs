//! How the built-in kinds' lists, maps and structs merge, from the `+listType`, `+listMapKey`,
//! `+mapType=atomic`, `+structType=atomic` markers (and `patchStrategy`/`patchMergeKey` where no
//! list type is given) of k8s.io/api and k8s.io/apimachinery's types.go, which the real server's
//! OpenAPI carries as `x-kubernetes-*` extensions. Lists not named here are atomic; maps and
//! structs not named here are granular.

/// (definition, field) → list-map keys (empty: a set of scalars).
pub const LISTS: &[(&str, &str, &[&str])] = &[
    (
        "io.k8s.api.admissionregistration.v1.MutatingAdmissionPolicySpec",
        "matchConditions",
        &["name"],
    ),
    (
        "io.k8s.api.admissionregistration.v1.MutatingWebhook",
        "matchConditions",
        &["name"],
    ),
    (
        "io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration",
        "webhooks",
        &["name"],
    ),
    (
        "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec",
        "validationActions",
        &[],
    ),
    (
        "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec",
        "matchConditions",
        &["name"],
    ),
    (
        "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec",
        "variables",
        &["name"],
    ),
    (
        "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyStatus",
        "conditions",
        &["type"],
    ),
    (
        "io.k8s.api.admissionregistration.v1.ValidatingWebhook",
        "matchConditions",
        &["name"],
    ),
    (
        "io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration",
        "webhooks",
        &["name"],
    ),
    (
        "io.k8s.api.apps.v1.DaemonSetStatus",
        "conditions",
        &["type"],
    ),
    (
        "io.k8s.api.apps.v1.DeploymentStatus",
        "conditions",
        &["type"],
    ),
    (
        "io.k8s.api.apps.v1.ReplicaSetStatus",
        "conditions",
        &["type"],
    ),
    (
        "io.k8s.api.apps.v1.StatefulSetStatus",
        "conditions",
        &["type"],
    ),
    (
        "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus",
        "conditions",
        &["type"],
    ),
    (
        "io.k8s.api.batch.v1.JobSchedulingConfiguration",
        "resourceClaims",
        &["name"],
    ),
    (
        "io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement",
        "values",
        &[],
    ),
    ("io.k8s.api.batch.v1.UncountedTerminatedPods", "failed", &[]),
    (
        "io.k8s.api.batch.v1.UncountedTerminatedPods",
        "succeeded",
        &[],
    ),
    (
        "io.k8s.api.certificates.v1.CertificateSigningRequestStatus",
        "conditions",
        &["type"],
    ),
    (
        "io.k8s.api.certificates.v1.PodCertificateRequestStatus",
        "conditions",
        &["type"],
    ),
    (
        "io.k8s.api.core.v1.ComponentStatus",
        "conditions",
        &["type"],
    ),
    ("io.k8s.api.core.v1.Container", "env", &["name"]),
    (
        "io.k8s.api.core.v1.Container",
        "ports",
        &["containerPort", "protocol"],
    ),
    (
        "io.k8s.api.core.v1.Container",
        "volumeDevices",
        &["devicePath"],
    ),
    (
        "io.k8s.api.core.v1.Container",
        "volumeMounts",
        &["mountPath"],
    ),
    (
        "io.k8s.api.core.v1.ContainerRestartRuleOnExitCodes",
        "values",
        &[],
    ),
    (
        "io.k8s.api.core.v1.ContainerStatus",
        "allocatedResourcesStatus",
        &["name"],
    ),
    (
        "io.k8s.api.core.v1.ContainerStatus",
        "volumeMounts",
        &["mountPath"],
    ),
    ("io.k8s.api.core.v1.EphemeralContainer", "env", &["name"]),
    (
        "io.k8s.api.core.v1.EphemeralContainer",
        "ports",
        &["containerPort", "protocol"],
    ),
    (
        "io.k8s.api.core.v1.EphemeralContainer",
        "volumeDevices",
        &["devicePath"],
    ),
    (
        "io.k8s.api.core.v1.EphemeralContainer",
        "volumeMounts",
        &["mountPath"],
    ),
    (
        "io.k8s.api.core.v1.NamespaceStatus",
        "conditions",
        &["type"],
    ),
    (
        "io.k8s.api.core.v1.NodeAllocatableResourceClaimStatus",
        "containers",
        &[],
    ),
    (
        "io.k8s.api.core.v1.NodeAllocatableResourceClaimStatus",
        "mapping",
        &["name"],
    ),
    (
        "io.k8s.api.core.v1.NodeAllocatableResourceClaimStatus",
        "overhead",
        &["name"],
    ),
    (
        "io.k8s.api.core.v1.NodePodPreemptionPolicy",
        "disableResizePreemption",
        &[],
    ),
    ("io.k8s.api.core.v1.NodeSpec", "podCIDRs", &[]),
    ("io.k8s.api.core.v1.NodeStatus", "addresses", &["type"]),
    ("io.k8s.api.core.v1.NodeStatus", "conditions", &["type"]),
    (
        "io.k8s.api.core.v1.PersistentVolumeClaimStatus",
        "conditions",
        &["type"],
    ),
    ("io.k8s.api.core.v1.PodSpec", "containers", &["name"]),
    (
        "io.k8s.api.core.v1.PodSpec",
        "ephemeralContainers",
        &["name"],
    ),
    (
        "io.k8s.api.core.v1.PodSpec",
        "evictionResponders",
        &["name"],
    ),
    ("io.k8s.api.core.v1.PodSpec", "hostAliases", &["ip"]),
    ("io.k8s.api.core.v1.PodSpec", "imagePullSecrets", &["name"]),
    ("io.k8s.api.core.v1.PodSpec", "initContainers", &["name"]),
    ("io.k8s.api.core.v1.PodSpec", "resourceClaims", &["name"]),
    ("io.k8s.api.core.v1.PodSpec", "schedulingGates", &["name"]),
    (
        "io.k8s.api.core.v1.PodSpec",
        "topologySpreadConstraints",
        &["topologyKey", "whenUnsatisfiable"],
    ),
    ("io.k8s.api.core.v1.PodSpec", "volumes", &["name"]),
    ("io.k8s.api.core.v1.PodStatus", "conditions", &["type"]),
    (
        "io.k8s.api.core.v1.PodStatus",
        "nodeAllocatableResourceClaimStatuses",
        &["resourceClaimName"],
    ),
    ("io.k8s.api.core.v1.PodStatus", "podIPs", &["ip"]),
    (
        "io.k8s.api.core.v1.PodStatus",
        "resourceClaimStatuses",
        &["name"],
    ),
    ("io.k8s.api.core.v1.PodStatus", "volumeHealth", &["name"]),
    (
        "io.k8s.api.core.v1.PodVolumeHealth",
        "healthConditions",
        &["status", "reason"],
    ),
    (
        "io.k8s.api.core.v1.ReplicationControllerStatus",
        "conditions",
        &["type"],
    ),
    (
        "io.k8s.api.core.v1.ResourceRequirements",
        "claims",
        &["name"],
    ),
    (
        "io.k8s.api.core.v1.ResourceStatus",
        "resources",
        &["resourceID"],
    ),
    ("io.k8s.api.core.v1.ServiceAccount", "secrets", &["name"]),
    (
        "io.k8s.api.core.v1.ServiceSpec",
        "ports",
        &["port", "protocol"],
    ),
    ("io.k8s.api.core.v1.ServiceStatus", "conditions", &["type"]),
    (
        "io.k8s.api.core.v1.VolumeHealthStatus",
        "healthConditions",
        &["status", "reason"],
    ),
    ("io.k8s.api.core.v1.VolumeMount", "bindMountOptions", &[]),
    ("io.k8s.api.discovery.v1.Endpoint", "addresses", &[]),
    (
        "io.k8s.api.flowcontrol.v1.FlowSchemaStatus",
        "conditions",
        &["type"],
    ),
    (
        "io.k8s.api.flowcontrol.v1.NonResourcePolicyRule",
        "nonResourceURLs",
        &[],
    ),
    (
        "io.k8s.api.flowcontrol.v1.NonResourcePolicyRule",
        "verbs",
        &[],
    ),
    (
        "io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationStatus",
        "conditions",
        &["type"],
    ),
    (
        "io.k8s.api.flowcontrol.v1.ResourcePolicyRule",
        "apiGroups",
        &[],
    ),
    (
        "io.k8s.api.flowcontrol.v1.ResourcePolicyRule",
        "namespaces",
        &[],
    ),
    (
        "io.k8s.api.flowcontrol.v1.ResourcePolicyRule",
        "resources",
        &[],
    ),
    ("io.k8s.api.flowcontrol.v1.ResourcePolicyRule", "verbs", &[]),
    (
        "io.k8s.api.networking.v1.ServiceCIDRStatus",
        "conditions",
        &["type"],
    ),
    (
        "io.k8s.api.policy.v1.PodDisruptionBudgetStatus",
        "conditions",
        &["type"],
    ),
    (
        "io.k8s.api.storage.v1.CSIDriverSpec",
        "volumeLifecycleModes",
        &[],
    ),
    ("io.k8s.api.storage.v1.CSINodeSpec", "drivers", &["name"]),
    (
        "io.k8s.api.storage.v1.CSINodeStatus",
        "storageHealth",
        &["name"],
    ),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "finalizers",
        &[],
    ),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "ownerReferences",
        &["uid"],
    ),
];

/// (definition, field) of maps that are atomic.
pub const ATOMIC_MAPS: &[(&str, &str)] = &[
    ("io.k8s.api.core.v1.PodSpec", "nodeSelector"),
    ("io.k8s.api.core.v1.ReplicationControllerSpec", "selector"),
    ("io.k8s.api.core.v1.ServiceSpec", "selector"),
    ("io.k8s.api.node.v1.Scheduling", "nodeSelector"),
];

/// Definitions of structs that are atomic.
pub const ATOMIC_STRUCTS: &[&str] = &[
    "io.k8s.api.admissionregistration.v1.MatchResources",
    "io.k8s.api.admissionregistration.v1.NamedRuleWithOperations",
    "io.k8s.api.admissionregistration.v1.ParamKind",
    "io.k8s.api.admissionregistration.v1.ParamRef",
    "io.k8s.api.admissionregistration.v1.Variable",
    "io.k8s.api.autoscaling.v1.CrossVersionObjectReference",
    "io.k8s.api.core.v1.ConfigMapKeySelector",
    "io.k8s.api.core.v1.EndpointAddress",
    "io.k8s.api.core.v1.EndpointPort",
    "io.k8s.api.core.v1.EvictionResponder",
    "io.k8s.api.core.v1.FileKeySelector",
    "io.k8s.api.core.v1.LocalObjectReference",
    "io.k8s.api.core.v1.NodeSelector",
    "io.k8s.api.core.v1.NodeSelectorTerm",
    "io.k8s.api.core.v1.ObjectFieldSelector",
    "io.k8s.api.core.v1.ObjectReference",
    "io.k8s.api.core.v1.ResourceFieldSelector",
    "io.k8s.api.core.v1.ScopeSelector",
    "io.k8s.api.core.v1.SecretKeySelector",
    "io.k8s.api.core.v1.SecretReference",
    "io.k8s.api.core.v1.TopologySelectorTerm",
    "io.k8s.api.core.v1.TypedLocalObjectReference",
    "io.k8s.api.discovery.v1.EndpointPort",
    "io.k8s.api.networking.v1.ServiceBackendPort",
    "io.k8s.api.rbac.v1.RoleRef",
    "io.k8s.api.rbac.v1.Subject",
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
    "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
];

/// (definition, field, default) of list-map key fields with a default.
pub const KEY_DEFAULTS: &[(&str, &str, &str)] = &[
    ("io.k8s.api.core.v1.ContainerPort", "protocol", "TCP"),
    ("io.k8s.api.core.v1.ServicePort", "protocol", "TCP"),
];
