//! The kinds the product handles: every Kruise CRD (names, scope, served versions, as in
//! `crds/`) plus the built-in kinds the console names, and [`parse_kind`] for the `KIND` the
//! command line and the `:` command accept (`cloneset|clone|cs`, `asts|statefulset.apps.kruise.io`,
//! plural names, `kind.group`, ...).

use std::fmt;

/// Whether objects of a kind live in a namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    Namespaced,
    Cluster,
}

/// One kind: its REST names and where it is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KindInfo {
    pub kind: &'static str,
    /// API group; `""` is the core group.
    pub group: &'static str,
    pub plural: &'static str,
    pub singular: &'static str,
    /// Short names declared by the CRD (or by Kubernetes for built-ins).
    pub short_names: &'static [&'static str],
    /// Extra spellings the product accepts: `cs` and `ppm` (PRODUCT §2), `npp` and `pps` by analogy.
    pub aliases: &'static [&'static str],
    pub scope: Scope,
    /// Served versions, the preferred (storage) version first.
    pub versions: &'static [&'static str],
}

impl KindInfo {
    /// The preferred version (the storage version for CRDs).
    pub fn preferred_version(&self) -> &'static str {
        self.versions.first().copied().unwrap_or("v1")
    }

    /// `group/version` (or `version` for the core group) of the preferred version.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.preferred_version().to_string()
        } else {
            format!("{}/{}", self.group, self.preferred_version())
        }
    }

    /// True for the Kruise CRDs (groups `apps.kruise.io` and `policy.kruise.io`).
    pub fn is_kruise(&self) -> bool {
        self.group.ends_with(".kruise.io")
    }

    /// The spelling the product shows: the singular name when unambiguous and short, else the
    /// shortest unambiguous short name or alias (`asts`, `ppm`, `crr`), else the singular name
    /// if unambiguous, else `singular.group`.
    pub fn display_name(&self) -> String {
        let unambiguous = |name: &str| matches(name).count() == 1;
        if self.singular.len() <= 10 && unambiguous(self.singular) {
            return self.singular.to_string();
        }
        let short = self
            .short_names
            .iter()
            .chain(self.aliases.iter())
            .filter(|n| unambiguous(n))
            .min_by_key(|n| n.len());
        match short {
            Some(name) => name.to_string(),
            None if unambiguous(self.singular) => self.singular.to_string(),
            None => format!("{}.{}", self.singular, self.group),
        }
    }

    fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        [self.kind, self.plural, self.singular]
            .into_iter()
            .chain(self.short_names.iter().copied())
            .chain(self.aliases.iter().copied())
    }
}

const APPS_KRUISE: &str = "apps.kruise.io";

macro_rules! kind {
    ($kind:literal, $group:expr, $plural:literal, $singular:literal, [$($short:literal),*],
     [$($alias:literal),*], $scope:ident, [$($version:literal),+]) => {
        KindInfo {
            kind: $kind,
            group: $group,
            plural: $plural,
            singular: $singular,
            short_names: &[$($short),*],
            aliases: &[$($alias),*],
            scope: Scope::$scope,
            versions: &[$($version),+],
        }
    };
}

/// Every Kruise CRD (v1.8.4) and the built-in kinds the product names.
#[rustfmt::skip]
pub const KINDS: &[KindInfo] = &[
    kind!("CloneSet", APPS_KRUISE, "clonesets", "cloneset", ["clone"], ["cs"], Namespaced, ["v1alpha1"]),
    kind!("StatefulSet", APPS_KRUISE, "statefulsets", "statefulset", ["sts", "asts"], [], Namespaced, ["v1beta1", "v1alpha1"]),
    kind!("DaemonSet", APPS_KRUISE, "daemonsets", "daemonset", ["daemon", "ads"], [], Namespaced, ["v1alpha1"]),
    kind!("SidecarSet", APPS_KRUISE, "sidecarsets", "sidecarset", [], [], Cluster, ["v1alpha1"]),
    kind!("PodProbeMarker", APPS_KRUISE, "podprobemarkers", "podprobemarker", [], ["ppm"], Namespaced, ["v1alpha1"]),
    kind!("NodePodProbe", APPS_KRUISE, "nodepodprobes", "nodepodprobe", [], ["npp"], Cluster, ["v1alpha1"]),
    kind!("ContainerRecreateRequest", APPS_KRUISE, "containerrecreaterequests", "containerrecreaterequest", ["crr"], [], Namespaced, ["v1alpha1"]),
    kind!("PodUnavailableBudget", "policy.kruise.io", "podunavailablebudgets", "podunavailablebudget", ["pub"], [], Namespaced, ["v1alpha1"]),
    kind!("PersistentPodState", APPS_KRUISE, "persistentpodstates", "persistentpodstate", [], ["pps"], Namespaced, ["v1alpha1"]),
    kind!("WorkloadSpread", APPS_KRUISE, "workloadspreads", "workloadspread", ["ws"], [], Namespaced, ["v1alpha1"]),
    kind!("UnitedDeployment", APPS_KRUISE, "uniteddeployments", "uniteddeployment", ["ud"], [], Namespaced, ["v1alpha1"]),
    kind!("BroadcastJob", APPS_KRUISE, "broadcastjobs", "broadcastjob", ["bcj"], [], Namespaced, ["v1alpha1"]),
    kind!("AdvancedCronJob", APPS_KRUISE, "advancedcronjobs", "advancedcronjob", ["acj"], [], Namespaced, ["v1alpha1"]),
    kind!("ImagePullJob", APPS_KRUISE, "imagepulljobs", "imagepulljob", [], [], Namespaced, ["v1alpha1"]),
    kind!("ImageListPullJob", APPS_KRUISE, "imagelistpulljobs", "imagelistpulljob", [], [], Namespaced, ["v1alpha1"]),
    kind!("NodeImage", APPS_KRUISE, "nodeimages", "nodeimage", [], [], Cluster, ["v1alpha1"]),
    kind!("ResourceDistribution", APPS_KRUISE, "resourcedistributions", "resourcedistribution", ["distributor"], [], Cluster, ["v1alpha1"]),
    kind!("Pod", "", "pods", "pod", ["po"], [], Namespaced, ["v1"]),
    kind!("Namespace", "", "namespaces", "namespace", ["ns"], [], Cluster, ["v1"]),
    kind!("Node", "", "nodes", "node", ["no"], [], Cluster, ["v1"]),
    kind!("Event", "", "events", "event", ["ev"], [], Namespaced, ["v1"]),
    kind!("PersistentVolumeClaim", "", "persistentvolumeclaims", "persistentvolumeclaim", ["pvc"], [], Namespaced, ["v1"]),
    kind!("Service", "", "services", "service", ["svc"], [], Namespaced, ["v1"]),
    kind!("ControllerRevision", "apps", "controllerrevisions", "controllerrevision", [], [], Namespaced, ["v1"]),
    kind!("Deployment", "apps", "deployments", "deployment", ["deploy"], [], Namespaced, ["v1"]),
    kind!("ReplicaSet", "apps", "replicasets", "replicaset", ["rs"], [], Namespaced, ["v1"]),
    kind!("StatefulSet", "apps", "statefulsets", "statefulset", ["sts"], [], Namespaced, ["v1"]),
    kind!("DaemonSet", "apps", "daemonsets", "daemonset", ["ds"], [], Namespaced, ["v1"]),
    kind!("Ingress", "networking.k8s.io", "ingresses", "ingress", ["ing"], [], Namespaced, ["v1"]),
    kind!("CustomResourceDefinition", "apiextensions.k8s.io", "customresourcedefinitions", "customresourcedefinition", ["crd", "crds"], [], Cluster, ["v1"]),
];

/// Why a `KIND` spelling was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KindError {
    #[error("unknown kind {input:?}; known kinds: {known}")]
    Unknown { input: String, known: String },
    #[error("kind {input:?} is ambiguous: use {}", .candidates.join(" or "))]
    Ambiguous {
        input: String,
        candidates: Vec<String>,
    },
    #[error("empty kind")]
    Empty,
}

fn matches(name: &str) -> impl Iterator<Item = &'static KindInfo> + '_ {
    KINDS
        .iter()
        .filter(move |k| k.names().any(|n| n.eq_ignore_ascii_case(name)))
}

/// Resolves a kind as typed by a user: a kind name, plural, singular, short name or product
/// alias (case-insensitive), optionally qualified as `name.group` or `name.version.group`.
/// Names shared by a Kruise and a built-in kind (`sts`, `statefulset`, `daemonset`) must be
/// qualified (`asts`, `statefulset.apps.kruise.io`, `statefulset.apps`).
pub fn parse_kind(input: &str) -> Result<&'static KindInfo, KindError> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return Err(KindError::Empty);
    }
    let found: Vec<&'static KindInfo> = match trimmed.split_once('.') {
        None => matches(trimmed).collect(),
        Some((name, qualifier)) => matches(name)
            .filter(|k| {
                qualifier.eq_ignore_ascii_case(k.group)
                    || k.versions
                        .iter()
                        .any(|v| qualifier.eq_ignore_ascii_case(&format!("{v}.{}", k.group)))
            })
            .collect(),
    };
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err(KindError::Unknown {
            input: trimmed.to_string(),
            known: KINDS
                .iter()
                .map(KindInfo::display_name)
                .collect::<Vec<_>>()
                .join(", "),
        }),
        many => Err(KindError::Ambiguous {
            input: trimmed.to_string(),
            candidates: many.iter().map(|k| k.display_name()).collect(),
        }),
    }
}

impl fmt::Display for KindInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            write!(f, "{}", self.kind)
        } else {
            write!(f, "{}.{}", self.kind, self.group)
        }
    }
}

/// The kinds the console watches (one reflector each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    CloneSet,
    StatefulSet,
    DaemonSet,
    Pod,
    // The kinds behind the on-call views (`:pub`, `:sidecarset`, `:ppm`, `:crr`, triage).
    PodUnavailableBudget,
    SidecarSet,
    PodProbeMarker,
    NodePodProbe,
    ContainerRecreateRequest,
    /// The ControllerRevisions of SidecarSets (in `kruise-system`, label-selected).
    SidecarSetRevision,
}

impl Kind {
    /// True for the kinds only the on-call views read: a refusal to list them is said in those
    /// views, not in a banner over every view.
    pub fn is_oncall(self) -> bool {
        matches!(
            self,
            Kind::PodUnavailableBudget
                | Kind::SidecarSet
                | Kind::PodProbeMarker
                | Kind::NodePodProbe
                | Kind::ContainerRecreateRequest
                | Kind::SidecarSetRevision
        )
    }

    /// The variant's name, as `{:?}` prints it.
    pub fn debug_name(self) -> &'static str {
        match self {
            Kind::CloneSet => "CloneSet",
            Kind::StatefulSet => "StatefulSet",
            Kind::DaemonSet => "DaemonSet",
            Kind::Pod => "Pod",
            Kind::PodUnavailableBudget => "PodUnavailableBudget",
            Kind::SidecarSet => "SidecarSet",
            Kind::PodProbeMarker => "PodProbeMarker",
            Kind::NodePodProbe => "NodePodProbe",
            Kind::ContainerRecreateRequest => "ContainerRecreateRequest",
            Kind::SidecarSetRevision => "SidecarSetRevision",
        }
    }

    /// The kind's plural name as the console shows it.
    pub fn plural(self) -> &'static str {
        match self {
            Kind::CloneSet => "CloneSets",
            Kind::StatefulSet => "Advanced StatefulSets",
            Kind::DaemonSet => "Advanced DaemonSets",
            Kind::Pod => "Pods",
            Kind::PodUnavailableBudget => "PodUnavailableBudgets",
            Kind::SidecarSet => "SidecarSets",
            Kind::PodProbeMarker => "PodProbeMarkers",
            Kind::NodePodProbe => "NodePodProbes",
            Kind::ContainerRecreateRequest => "ContainerRecreateRequests",
            Kind::SidecarSetRevision => "SidecarSet revisions",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind_of(input: &str) -> (&'static str, &'static str) {
        let k = parse_kind(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        (k.kind, k.group)
    }

    #[test]
    fn product_spellings_resolve() {
        for s in [
            "cloneset",
            "clone",
            "cs",
            "clonesets",
            "CloneSet",
            "CS",
            "clonesets.apps.kruise.io",
        ] {
            assert_eq!(kind_of(s), ("CloneSet", APPS_KRUISE), "{s}");
        }
        for s in [
            "asts",
            "statefulset.apps.kruise.io",
            "statefulsets.v1alpha1.apps.kruise.io",
        ] {
            assert_eq!(kind_of(s), ("StatefulSet", APPS_KRUISE), "{s}");
        }
        for s in ["ads", "daemon", "daemonset.apps.kruise.io"] {
            assert_eq!(kind_of(s), ("DaemonSet", APPS_KRUISE), "{s}");
        }
        assert_eq!(kind_of("sidecarset").0, "SidecarSet");
        assert_eq!(kind_of("sidecarsets").0, "SidecarSet");
        assert_eq!(kind_of("ppm").0, "PodProbeMarker");
        assert_eq!(kind_of("crr").0, "ContainerRecreateRequest");
        assert_eq!(kind_of("pub"), ("PodUnavailableBudget", "policy.kruise.io"));
        for s in ["pods", "pod", "po", "Pod"] {
            assert_eq!(kind_of(s), ("Pod", ""), "{s}");
        }
        assert_eq!(kind_of("statefulset.apps"), ("StatefulSet", "apps"));
        assert_eq!(kind_of("ns").0, "Namespace");
    }

    #[test]
    fn shared_names_are_ambiguous_with_a_clear_error() {
        let err = parse_kind("sts").unwrap_err();
        let KindError::Ambiguous { candidates, .. } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(
            candidates,
            &vec!["asts".to_string(), "statefulset.apps".to_string()]
        );
        assert!(
            err.to_string().contains("asts or statefulset.apps"),
            "{err}"
        );
        assert!(matches!(
            parse_kind("daemonset"),
            Err(KindError::Ambiguous { .. })
        ));
    }

    #[test]
    fn unknown_kinds_are_rejected() {
        let err = parse_kind("clonest").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("unknown kind \"clonest\""), "{msg}");
        assert!(
            msg.contains("cloneset") && msg.contains("asts") && msg.contains("pub"),
            "{msg}"
        );
        assert!(parse_kind("cloneset.apps").is_err());
        assert!(parse_kind("cloneset.v1beta1.apps.kruise.io").is_err());
        assert_eq!(parse_kind("  "), Err(KindError::Empty));
    }

    #[test]
    fn table_helpers() {
        let asts = parse_kind("asts").unwrap();
        assert_eq!(asts.api_version(), "apps.kruise.io/v1beta1");
        assert!(asts.is_kruise());
        assert_eq!(parse_kind("pod").unwrap().api_version(), "v1");
        assert_eq!(parse_kind("ads").unwrap().display_name(), "ads");
        assert_eq!(parse_kind("cs").unwrap().display_name(), "cloneset");
        assert_eq!(parse_kind("sidecarset").unwrap().scope, Scope::Cluster);
        assert_eq!(asts.to_string(), "StatefulSet.apps.kruise.io");
    }
}
