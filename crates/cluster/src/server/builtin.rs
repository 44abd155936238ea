//! The built-in kinds (every kind k8s-openapi's `v1_33` types define that a default v1.33 server
//! serves, see [`catalog`]) with what discovery says about them, and the upstream Kruise CRDs
//! compiled into the binary.

pub mod catalog;

use serde_json::Value;

use crate::kruise::KruiseVersion;

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

/// The upstream Kruise v1.9.0 CRD manifests (crds/v1.9.0/*.yaml): what a cluster running the
/// current release serves (seven kinds stored as v1beta1).
pub const KRUISE_CRDS_V1_9: [&str; 18] = [
    include_str!("../../../../crds/v1.9.0/apps.kruise.io_advancedcronjobs.yaml"),
    include_str!("../../../../crds/v1.9.0/apps.kruise.io_broadcastjobs.yaml"),
    include_str!("../../../../crds/v1.9.0/apps.kruise.io_clonesets.yaml"),
    include_str!("../../../../crds/v1.9.0/apps.kruise.io_containerrecreaterequests.yaml"),
    include_str!("../../../../crds/v1.9.0/apps.kruise.io_daemonsets.yaml"),
    include_str!("../../../../crds/v1.9.0/apps.kruise.io_ephemeraljobs.yaml"),
    include_str!("../../../../crds/v1.9.0/apps.kruise.io_imagelistpulljobs.yaml"),
    include_str!("../../../../crds/v1.9.0/apps.kruise.io_imagepulljobs.yaml"),
    include_str!("../../../../crds/v1.9.0/apps.kruise.io_nodeimages.yaml"),
    include_str!("../../../../crds/v1.9.0/apps.kruise.io_nodepodprobes.yaml"),
    include_str!("../../../../crds/v1.9.0/apps.kruise.io_persistentpodstates.yaml"),
    include_str!("../../../../crds/v1.9.0/apps.kruise.io_podprobemarkers.yaml"),
    include_str!("../../../../crds/v1.9.0/apps.kruise.io_resourcedistributions.yaml"),
    include_str!("../../../../crds/v1.9.0/apps.kruise.io_sidecarsets.yaml"),
    include_str!("../../../../crds/v1.9.0/apps.kruise.io_statefulsets.yaml"),
    include_str!("../../../../crds/v1.9.0/apps.kruise.io_uniteddeployments.yaml"),
    include_str!("../../../../crds/v1.9.0/apps.kruise.io_workloadspreads.yaml"),
    include_str!("../../../../crds/v1.9.0/policy.kruise.io_podunavailablebudgets.yaml"),
];

/// The upstream Kruise v1.8.4 CRD manifests (crds/v1.8.4/*.yaml), for `--kruise-version 1.8`.
pub const KRUISE_CRDS_V1_8: [&str; 17] = [
    include_str!("../../../../crds/v1.8.4/apps.kruise.io_advancedcronjobs.yaml"),
    include_str!("../../../../crds/v1.8.4/apps.kruise.io_broadcastjobs.yaml"),
    include_str!("../../../../crds/v1.8.4/apps.kruise.io_clonesets.yaml"),
    include_str!("../../../../crds/v1.8.4/apps.kruise.io_containerrecreaterequests.yaml"),
    include_str!("../../../../crds/v1.8.4/apps.kruise.io_daemonsets.yaml"),
    include_str!("../../../../crds/v1.8.4/apps.kruise.io_imagelistpulljobs.yaml"),
    include_str!("../../../../crds/v1.8.4/apps.kruise.io_imagepulljobs.yaml"),
    include_str!("../../../../crds/v1.8.4/apps.kruise.io_nodeimages.yaml"),
    include_str!("../../../../crds/v1.8.4/apps.kruise.io_nodepodprobes.yaml"),
    include_str!("../../../../crds/v1.8.4/apps.kruise.io_persistentpodstates.yaml"),
    include_str!("../../../../crds/v1.8.4/apps.kruise.io_podprobemarkers.yaml"),
    include_str!("../../../../crds/v1.8.4/apps.kruise.io_resourcedistributions.yaml"),
    include_str!("../../../../crds/v1.8.4/apps.kruise.io_sidecarsets.yaml"),
    include_str!("../../../../crds/v1.8.4/apps.kruise.io_statefulsets.yaml"),
    include_str!("../../../../crds/v1.8.4/apps.kruise.io_uniteddeployments.yaml"),
    include_str!("../../../../crds/v1.8.4/apps.kruise.io_workloadspreads.yaml"),
    include_str!("../../../../crds/v1.8.4/policy.kruise.io_podunavailablebudgets.yaml"),
];

/// The upstream Kruise Rollout v0.6.2 CRD manifests (crds/rollouts-v0.6.2/*.yaml): Rollout and
/// BatchRelease (v1alpha1 and v1beta1, v1beta1 stored), RolloutHistory and TrafficRouting.
pub const KRUISE_ROLLOUT_CRDS: [&str; 4] = [
    include_str!("../../../../crds/rollouts-v0.6.2/rollouts.kruise.io_batchreleases.yaml"),
    include_str!("../../../../crds/rollouts-v0.6.2/rollouts.kruise.io_rollouthistories.yaml"),
    include_str!("../../../../crds/rollouts-v0.6.2/rollouts.kruise.io_rollouts.yaml"),
    include_str!("../../../../crds/rollouts-v0.6.2/rollouts.kruise.io_trafficroutings.yaml"),
];

/// Parse the built-in Kruise Rollout CRD manifests.
pub fn kruise_rollout_crds() -> anyhow::Result<Vec<Value>> {
    parse_manifests(&KRUISE_ROLLOUT_CRDS)
}

/// The CRD manifests of a Kruise release.
pub fn kruise_crd_manifests(version: KruiseVersion) -> &'static [&'static str] {
    match version {
        KruiseVersion::V1_8 => &KRUISE_CRDS_V1_8,
        KruiseVersion::V1_9 => &KRUISE_CRDS_V1_9,
    }
}

/// Parse the built-in CRD manifests of a Kruise release.
pub fn kruise_crds(version: KruiseVersion) -> anyhow::Result<Vec<Value>> {
    parse_manifests(kruise_crd_manifests(version))
}

fn parse_manifests(manifests: &[&str]) -> anyhow::Result<Vec<Value>> {
    manifests
        .iter()
        .map(|y| {
            serde_saphyr::from_str::<Value>(y)
                .map_err(|e| anyhow::anyhow!("built-in CRD does not parse: {e}"))
        })
        .collect()
}

/// What a real server serves for a built-in kind beyond what its Rust type says: short names,
/// categories, the scale subresource, other subresources and restricted verbs.
struct Extra {
    group: &'static str,
    plural: &'static str,
    short: &'static [&'static str],
    categories: &'static [&'static str],
    scale: bool,
    subresources: &'static [(&'static str, &'static str, &'static str)],
    verbs: &'static [&'static str],
}

const fn extra(group: &'static str, plural: &'static str, short: &'static [&'static str]) -> Extra {
    Extra {
        group,
        plural,
        short,
        categories: &[],
        scale: false,
        subresources: &[],
        verbs: &ALL_VERBS,
    }
}

const ALL: &[&str] = &["all"];
const API_EXTENSIONS: &[&str] = &["api-extensions"];

/// As a v1.33 kube-apiserver's discovery lists them.
const EXTRAS: &[Extra] = &[
    Extra {
        subresources: &[("finalize", "Namespace", "")],
        // Namespaces are deleted one at a time (no deletecollection).
        verbs: &[
            "create", "delete", "get", "list", "patch", "update", "watch",
        ],
        ..extra("", "namespaces", &["ns"])
    },
    extra("", "nodes", &["no"]),
    Extra {
        categories: ALL,
        subresources: &[
            ("eviction", "Eviction", "policy/v1"),
            ("binding", "Binding", ""),
            ("attach", "PodAttachOptions", ""),
            ("exec", "PodExecOptions", ""),
            ("log", "Pod", ""),
        ],
        ..extra("", "pods", &["po"])
    },
    extra("", "events", &["ev"]),
    Extra {
        categories: ALL,
        ..extra("", "services", &["svc"])
    },
    extra("", "configmaps", &["cm"]),
    Extra {
        subresources: &[("token", "TokenRequest", "authentication.k8s.io/v1")],
        ..extra("", "serviceaccounts", &["sa"])
    },
    extra("", "persistentvolumeclaims", &["pvc"]),
    extra("", "persistentvolumes", &["pv"]),
    extra("", "endpoints", &["ep"]),
    extra("", "limitranges", &["limits"]),
    Extra {
        categories: ALL,
        scale: true,
        ..extra("", "replicationcontrollers", &["rc"])
    },
    extra("", "resourcequotas", &["quota"]),
    Extra {
        verbs: &["get", "list"],
        ..extra("", "componentstatuses", &["cs"])
    },
    Extra {
        categories: ALL,
        scale: true,
        ..extra("apps", "deployments", &["deploy"])
    },
    Extra {
        categories: ALL,
        scale: true,
        ..extra("apps", "replicasets", &["rs"])
    },
    Extra {
        categories: ALL,
        scale: true,
        ..extra("apps", "statefulsets", &["sts"])
    },
    Extra {
        categories: ALL,
        ..extra("apps", "daemonsets", &["ds"])
    },
    Extra {
        categories: ALL,
        ..extra("batch", "jobs", &[])
    },
    Extra {
        categories: ALL,
        ..extra("batch", "cronjobs", &["cj"])
    },
    Extra {
        categories: ALL,
        ..extra("autoscaling", "horizontalpodautoscalers", &["hpa"])
    },
    extra("policy", "poddisruptionbudgets", &["pdb"]),
    extra("networking.k8s.io", "ingresses", &["ing"]),
    extra("networking.k8s.io", "networkpolicies", &["netpol"]),
    extra("networking.k8s.io", "ipaddresses", &["ip"]),
    extra("events.k8s.io", "events", &["ev"]),
    extra("scheduling.k8s.io", "priorityclasses", &["pc"]),
    extra("storage.k8s.io", "storageclasses", &["sc"]),
    extra(
        "certificates.k8s.io",
        "certificatesigningrequests",
        &["csr"],
    ),
    Extra {
        categories: API_EXTENSIONS,
        ..extra(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            &["crd", "crds"],
        )
    },
    Extra {
        categories: API_EXTENSIONS,
        ..extra("apiregistration.k8s.io", "apiservices", &[])
    },
    Extra {
        categories: API_EXTENSIONS,
        ..extra(
            "admissionregistration.k8s.io",
            "mutatingwebhookconfigurations",
            &[],
        )
    },
    Extra {
        categories: API_EXTENSIONS,
        ..extra(
            "admissionregistration.k8s.io",
            "validatingwebhookconfigurations",
            &[],
        )
    },
    Extra {
        categories: API_EXTENSIONS,
        ..extra(
            "admissionregistration.k8s.io",
            "validatingadmissionpolicies",
            &[],
        )
    },
    Extra {
        categories: API_EXTENSIONS,
        ..extra(
            "admissionregistration.k8s.io",
            "validatingadmissionpolicybindings",
            &[],
        )
    },
];

const NONE: Extra = extra("", "", &[]);

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The review kinds a v1.33 server answers: created, never stored. The Self* ones are about the
/// caller, the others about the user their spec names; (Local)SubjectAccessReview is namespaced.
const REVIEWS: [(&str, &str, &str); 6] = [
    ("", "Binding", "bindings"),
    (
        "authorization.k8s.io",
        "LocalSubjectAccessReview",
        "localsubjectaccessreviews",
    ),
    (
        "authorization.k8s.io",
        "SubjectAccessReview",
        "subjectaccessreviews",
    ),
    (
        "authorization.k8s.io",
        "SelfSubjectAccessReview",
        "selfsubjectaccessreviews",
    ),
    (
        "authorization.k8s.io",
        "SelfSubjectRulesReview",
        "selfsubjectrulesreviews",
    ),
    (
        "authentication.k8s.io",
        "SelfSubjectReview",
        "selfsubjectreviews",
    ),
];

/// The built-in resource table: every kind in [`catalog`], then the review kinds, which are
/// answered but not stored.
pub fn builtin_resources() -> Vec<ResourceInfo> {
    let mut out: Vec<ResourceInfo> = catalog::catalog()
        .kinds
        .iter()
        .map(|k| {
            let x = EXTRAS
                .iter()
                .find(|x| x.group == k.group && x.plural == k.plural)
                .unwrap_or(&NONE);
            ResourceInfo {
                group: k.group.to_string(),
                version: k.version.to_string(),
                kind: k.kind.to_string(),
                plural: k.plural.to_string(),
                singular: k.kind.to_lowercase(),
                namespaced: k.namespaced,
                short_names: strings(x.short),
                categories: strings(x.categories),
                verbs: x.verbs.to_vec(),
                status: k.status,
                scale: x.scale.then(|| ScalePaths {
                    spec_replicas: ".spec.replicas".into(),
                    status_replicas: ".status.replicas".into(),
                    label_selector: Some(".spec.selector".into()),
                }),
                extra_subresources: x.subresources.to_vec(),
                schema: None,
                definition: Some(k.definition.clone()),
                printer_columns: Vec::new(),
                crd: false,
                webhook_conversion: false,
                // events.k8s.io Events live in the core Events table (see convert.rs).
                key: if k.group == "events.k8s.io" {
                    storage_key("", k.plural)
                } else {
                    storage_key(k.group, k.plural)
                },
            }
        })
        .collect();
    // Answered by the authenticator and authorizer, never stored (see auth.rs, authz/reviews.rs).
    for (group, kind, plural) in REVIEWS {
        out.push(ResourceInfo {
            group: group.into(),
            version: "v1".into(),
            kind: kind.into(),
            plural: plural.into(),
            singular: kind.to_lowercase(),
            namespaced: matches!(kind, "LocalSubjectAccessReview" | "Binding"),
            short_names: Vec::new(),
            categories: Vec::new(),
            verbs: vec!["create"],
            status: false,
            scale: None,
            extra_subresources: Vec::new(),
            schema: None,
            definition: None,
            printer_columns: Vec::new(),
            crd: false,
            webhook_conversion: false,
            key: storage_key(group, plural),
        });
    }
    out
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
