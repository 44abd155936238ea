//! The built-in kinds (core v1, apps/v1, apiextensions, authorization, authentication, rbac,
//! coordination, events) and the upstream Kruise CRDs compiled into the binary.

use serde_json::Value;

use super::resources::{ResourceInfo, ScalePaths, storage_key};

pub const ALL_VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The upstream Kruise CRD manifests (crds/*.yaml), served from the start.
pub const KRUISE_CRDS: [&str; 17] = [
    include_str!("../../../crds/apps.kruise.io_advancedcronjobs.yaml"),
    include_str!("../../../crds/apps.kruise.io_broadcastjobs.yaml"),
    include_str!("../../../crds/apps.kruise.io_clonesets.yaml"),
    include_str!("../../../crds/apps.kruise.io_containerrecreaterequests.yaml"),
    include_str!("../../../crds/apps.kruise.io_daemonsets.yaml"),
    include_str!("../../../crds/apps.kruise.io_imagelistpulljobs.yaml"),
    include_str!("../../../crds/apps.kruise.io_imagepulljobs.yaml"),
    include_str!("../../../crds/apps.kruise.io_nodeimages.yaml"),
    include_str!("../../../crds/apps.kruise.io_nodepodprobes.yaml"),
    include_str!("../../../crds/apps.kruise.io_persistentpodstates.yaml"),
    include_str!("../../../crds/apps.kruise.io_podprobemarkers.yaml"),
    include_str!("../../../crds/apps.kruise.io_resourcedistributions.yaml"),
    include_str!("../../../crds/apps.kruise.io_sidecarsets.yaml"),
    include_str!("../../../crds/apps.kruise.io_statefulsets.yaml"),
    include_str!("../../../crds/apps.kruise.io_uniteddeployments.yaml"),
    include_str!("../../../crds/apps.kruise.io_workloadspreads.yaml"),
    include_str!("../../../crds/policy.kruise.io_podunavailablebudgets.yaml"),
];

/// Parse the built-in CRD manifests.
pub fn kruise_crds() -> anyhow::Result<Vec<Value>> {
    KRUISE_CRDS
        .iter()
        .map(|y| {
            serde_saphyr::from_str::<Value>(y)
                .map_err(|e| anyhow::anyhow!("built-in CRD does not parse: {e}"))
        })
        .collect()
}

struct Def {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    short: &'static [&'static str],
    all: bool,
    status: bool,
    scale: bool,
    verbs: &'static [&'static str],
    extra: &'static [(&'static str, &'static str, &'static str)],
}

const fn def(
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    short: &'static [&'static str],
) -> Def {
    Def {
        group,
        version,
        kind,
        plural,
        namespaced,
        short,
        all: false,
        status: false,
        scale: false,
        verbs: &ALL_VERBS,
        extra: &[],
    }
}

const CREATE_ONLY: &[&str] = &["create"];
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

fn defs() -> Vec<Def> {
    vec![
        Def {
            status: true,
            extra: &[("finalize", "Namespace", "")],
            ..def("", "v1", "Namespace", "namespaces", false, &["ns"])
        },
        Def {
            status: true,
            ..def("", "v1", "Node", "nodes", false, &["no"])
        },
        Def {
            status: true,
            all: true,
            extra: &[
                ("eviction", "Eviction", "policy/v1"),
                ("binding", "Binding", ""),
                ("attach", "PodAttachOptions", ""),
                ("exec", "PodExecOptions", ""),
                ("log", "Pod", ""),
            ],
            ..def("", "v1", "Pod", "pods", true, &["po"])
        },
        def("", "v1", "Event", "events", true, &["ev"]),
        Def {
            status: true,
            all: true,
            ..def("", "v1", "Service", "services", true, &["svc"])
        },
        def("", "v1", "ConfigMap", "configmaps", true, &["cm"]),
        def("", "v1", "Secret", "secrets", true, &[]),
        Def {
            extra: &[("token", "TokenRequest", "authentication.k8s.io/v1")],
            ..def("", "v1", "ServiceAccount", "serviceaccounts", true, &["sa"])
        },
        Def {
            status: true,
            ..def(
                "",
                "v1",
                "PersistentVolumeClaim",
                "persistentvolumeclaims",
                true,
                &["pvc"],
            )
        },
        Def {
            status: true,
            scale: true,
            all: true,
            ..def("apps", "v1", "Deployment", "deployments", true, &["deploy"])
        },
        Def {
            status: true,
            scale: true,
            all: true,
            ..def("apps", "v1", "ReplicaSet", "replicasets", true, &["rs"])
        },
        Def {
            status: true,
            scale: true,
            all: true,
            ..def("apps", "v1", "StatefulSet", "statefulsets", true, &["sts"])
        },
        Def {
            status: true,
            all: true,
            ..def("apps", "v1", "DaemonSet", "daemonsets", true, &["ds"])
        },
        def(
            "apps",
            "v1",
            "ControllerRevision",
            "controllerrevisions",
            true,
            &[],
        ),
        Def {
            status: true,
            ..def(
                "apiextensions.k8s.io",
                "v1",
                "CustomResourceDefinition",
                "customresourcedefinitions",
                false,
                &["crd", "crds"],
            )
        },
        Def {
            verbs: CREATE_ONLY,
            ..def(
                "authorization.k8s.io",
                "v1",
                "SelfSubjectAccessReview",
                "selfsubjectaccessreviews",
                false,
                &[],
            )
        },
        Def {
            verbs: CREATE_ONLY,
            ..def(
                "authorization.k8s.io",
                "v1",
                "SelfSubjectRulesReview",
                "selfsubjectrulesreviews",
                false,
                &[],
            )
        },
        Def {
            verbs: CREATE_ONLY,
            ..def(
                "authentication.k8s.io",
                "v1",
                "SelfSubjectReview",
                "selfsubjectreviews",
                false,
                &[],
            )
        },
        def(RBAC_GROUP, "v1", "ClusterRole", "clusterroles", false, &[]),
        def(
            RBAC_GROUP,
            "v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
            false,
            &[],
        ),
        def(RBAC_GROUP, "v1", "Role", "roles", true, &[]),
        def(RBAC_GROUP, "v1", "RoleBinding", "rolebindings", true, &[]),
        def("coordination.k8s.io", "v1", "Lease", "leases", true, &[]),
        def("events.k8s.io", "v1", "Event", "events", true, &["ev"]),
    ]
}

/// The built-in resource table.
pub fn builtin_resources() -> Vec<ResourceInfo> {
    defs()
        .into_iter()
        .map(|d| ResourceInfo {
            group: d.group.to_string(),
            version: d.version.to_string(),
            kind: d.kind.to_string(),
            plural: d.plural.to_string(),
            singular: d.kind.to_lowercase(),
            namespaced: d.namespaced,
            short_names: d.short.iter().map(|s| s.to_string()).collect(),
            categories: if d.all {
                vec!["all".to_string()]
            } else {
                Vec::new()
            },
            verbs: d.verbs.to_vec(),
            status: d.status,
            scale: d.scale.then(|| ScalePaths {
                spec_replicas: ".spec.replicas".into(),
                status_replicas: ".status.replicas".into(),
                label_selector: Some(".spec.selector".into()),
            }),
            extra_subresources: d.extra.to_vec(),
            schema: None,
            printer_columns: Vec::new(),
            crd: false,
            // events.k8s.io Events live in the core Events table (see convert.rs).
            key: if d.group == "events.k8s.io" {
                storage_key("", d.plural)
            } else {
                storage_key(d.group, d.plural)
            },
        })
        .collect()
}

/// The fields metadata may hold (checked under fieldValidation=Strict for every kind).
pub const METADATA_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// The top-level fields a built-in kind may hold (checked under fieldValidation=Strict).
pub fn top_level_fields(group: &str, kind: &str) -> &'static [&'static str] {
    match (group, kind) {
        ("", "ConfigMap") => &[
            "apiVersion",
            "kind",
            "metadata",
            "data",
            "binaryData",
            "immutable",
        ],
        ("", "Secret") => &[
            "apiVersion",
            "kind",
            "metadata",
            "data",
            "stringData",
            "type",
            "immutable",
        ],
        ("", "ServiceAccount") => &[
            "apiVersion",
            "kind",
            "metadata",
            "secrets",
            "imagePullSecrets",
            "automountServiceAccountToken",
        ],
        ("", "Event") => &[
            "apiVersion",
            "kind",
            "metadata",
            "involvedObject",
            "reason",
            "message",
            "source",
            "firstTimestamp",
            "lastTimestamp",
            "count",
            "type",
            "eventTime",
            "series",
            "action",
            "related",
            "reportingComponent",
            "reportingInstance",
        ],
        ("events.k8s.io", "Event") => &[
            "apiVersion",
            "kind",
            "metadata",
            "eventTime",
            "series",
            "reportingController",
            "reportingInstance",
            "action",
            "reason",
            "regarding",
            "related",
            "note",
            "type",
            "deprecatedSource",
            "deprecatedFirstTimestamp",
            "deprecatedLastTimestamp",
            "deprecatedCount",
        ],
        ("apps", "ControllerRevision") => &["apiVersion", "kind", "metadata", "data", "revision"],
        (RBAC_GROUP, "Role") => &["apiVersion", "kind", "metadata", "rules"],
        (RBAC_GROUP, "ClusterRole") => {
            &["apiVersion", "kind", "metadata", "rules", "aggregationRule"]
        }
        (RBAC_GROUP, "RoleBinding" | "ClusterRoleBinding") => {
            &["apiVersion", "kind", "metadata", "subjects", "roleRef"]
        }
        _ => &["apiVersion", "kind", "metadata", "spec", "status"],
    }
}
