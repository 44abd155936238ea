//! SidecarSet rows (`:sidecarset`) and the per-pod sidecar versions its Enter shows: each
//! sidecar container's recorded hash mapped to the set's revision (the ControllerRevisions in
//! kruise-system labelled with the set) or custom version, and for hot upgrade which twin works.

use std::{borrow::Cow, collections::BTreeMap, sync::Arc};

use k8s_openapi::api::{apps::v1::ControllerRevision, core::v1::Pod};

use super::super::{rows::PodRow, stores::Stores};
use crate::{
    api::{SidecarSet, keys, podstate::sidecarset_upgrade_specs, sidecarset::SidecarContainer},
    kruise::sidecarset::{
        SIDECARSET_CUSTOM_VERSION_LABEL, SIDECARSET_NAME_LABEL,
        control::pod_hot_upgrade_containers,
        matching::{NamespaceLabels, pod_matched_sidecar_set},
    },
};

/// One SidecarSet.
#[derive(Debug, Clone, PartialEq)]
pub struct SidecarRow {
    pub name: String,
    pub matched: i32,
    pub updated: i32,
    pub ready: i32,
    pub partition: String,
    pub paused: bool,
    /// How new pods are injected: `latest`, `revision NAME`, `custom version V`.
    pub injection: String,
    pub latest_revision: String,
    /// Containers upgraded by hot upgrade.
    pub hot: bool,
}

fn label<'a>(
    meta: &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    key: &str,
) -> Option<&'a str> {
    meta.labels
        .as_ref()
        .and_then(|l| l.get(key))
        .map(String::as_str)
}

pub fn sidecar_row(set: &SidecarSet) -> SidecarRow {
    let status = set.status.clone().unwrap_or_default();
    let strategy = &set.spec.update_strategy;
    let injection = match &set.spec.injection_strategy.revision {
        Some(r) => match (&r.revision_name, &r.custom_version) {
            (Some(name), _) => format!("revision {name}"),
            (None, Some(v)) => format!("custom version {v}"),
            (None, None) => "latest".to_owned(),
        },
        None if set.spec.injection_strategy.paused => "paused".to_owned(),
        None => "latest".to_owned(),
    };
    SidecarRow {
        name: set.metadata.name.clone().unwrap_or_default(),
        matched: status.matched_pods,
        updated: status.updated_pods,
        ready: status.ready_pods,
        partition: strategy
            .partition
            .as_ref()
            .map_or_else(|| "-".to_owned(), intstr),
        paused: strategy.paused,
        injection,
        latest_revision: status.latest_revision,
        hot: set
            .spec
            .containers
            .iter()
            .any(SidecarContainer::is_hot_upgrade),
    }
}

pub fn build_sidecarsets(stores: &Stores) -> Vec<SidecarRow> {
    let mut rows: Vec<SidecarRow> = stores
        .oncall
        .sidecarsets
        .state()
        .iter()
        .map(|s| sidecar_row(s))
        .collect();
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    rows
}

/// One sidecar container of one matched pod.
#[derive(Debug, Clone, PartialEq)]
pub struct SidecarPodRow {
    pub namespace: String,
    pub pod: String,
    pub container: String,
    pub image: String,
    /// The set hash the pod records.
    pub hash: String,
    /// The revision that hash is ("" when no revision records it).
    pub revision: String,
    /// The revision's custom version label, if any.
    pub version: String,
    /// The pod records the set's current hash.
    pub updated: bool,
    pub ready: bool,
    /// Hot upgrade: `working` or `empty` (standby twin); "" for a plain sidecar.
    pub hot: &'static str,
}

/// Whether the set matches the pod: injected already (the pod records the set's hash), or
/// selected as upstream's `PodMatchedSidecarSet` decides (namespace, namespaceSelector on the
/// Namespace's labels, selector).
fn matches(set: &SidecarSet, pod: &PodRow, name: &str, namespaces: &NamespaceLabels) -> bool {
    let injected = pod
        .pod
        .metadata
        .annotations
        .get(keys::SIDECARSET_HASH)
        .is_some_and(|raw| sidecarset_upgrade_specs(Some(raw)).contains_key(name));
    injected || {
        let labels = pod.pod.metadata.labels.to_btree();
        pod_matched_sidecar_set(set, &pod.namespace, &labels, namespaces).unwrap_or(false)
    }
}

/// Per matched pod, each sidecar container with its hash, revision and version.
///
/// `namespaces`: the Namespaces and their labels, for a set's namespaceSelector (a pod whose
/// Namespace is not among them is not matched, as upstream). None when they are not known: the
/// namespaceSelector is then not checked, and every pod the namespace and selector take shows.
pub fn sidecar_pods(
    set: &SidecarSet,
    revisions: &[Arc<ControllerRevision>],
    pods: &[Arc<PodRow>],
    namespaces: Option<&NamespaceLabels>,
) -> Vec<SidecarPodRow> {
    let name = set.metadata.name.clone().unwrap_or_default();
    let unknown = NamespaceLabels::new();
    let (set, namespaces) = match namespaces {
        Some(known) => (Cow::Borrowed(set), known),
        None if set.spec.namespace_selector.is_some() => {
            let mut unselected = set.clone();
            unselected.spec.namespace_selector = None;
            (Cow::Owned(unselected), &unknown)
        }
        None => (Cow::Borrowed(set), &unknown),
    };
    let set = set.as_ref();
    let set_hash = set
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(keys::SIDECARSET_HASH))
        .cloned()
        .unwrap_or_default();
    // The set's revisions by the hash they record.
    let mut by_hash: BTreeMap<String, (String, String)> = BTreeMap::new();
    for r in revisions
        .iter()
        .filter(|r| label(&r.metadata, SIDECARSET_NAME_LABEL) == Some(name.as_str()))
    {
        let hash = r
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(keys::SIDECARSET_HASH))
            .cloned()
            .unwrap_or_default();
        let version = label(&r.metadata, SIDECARSET_CUSTOM_VERSION_LABEL)
            .unwrap_or_default()
            .to_owned();
        by_hash.insert(hash, (r.metadata.name.clone().unwrap_or_default(), version));
    }
    let mut out = Vec::new();
    for pod in pods.iter().filter(|p| matches(set, p, &name, namespaces)) {
        let specs =
            sidecarset_upgrade_specs(pod.pod.metadata.annotations.get(keys::SIDECARSET_HASH));
        let spec = specs.get(&name).cloned().unwrap_or_default();
        let (revision, version) = match by_hash.get(&spec.hash) {
            Some((r, v)) => (r.clone(), v.clone()),
            None => (spec.controller_revision.clone(), String::new()),
        };
        let whole = Pod {
            metadata: pod.pod.metadata.to_object_meta(),
            ..Pod::default()
        };
        for c in &set.spec.containers {
            let cname = c.container.name.clone();
            let names: Vec<(String, &'static str)> = if c.is_hot_upgrade() {
                let (working, empty) = pod_hot_upgrade_containers(&cname, &whole);
                vec![(working, "working"), (empty, "empty")]
            } else {
                vec![(cname, "")]
            };
            for (container, hot) in names {
                let image = pod
                    .pod
                    .spec
                    .containers
                    .iter()
                    .find(|x| x.name == container)
                    .map(|x| x.image.to_string())
                    .unwrap_or_default();
                let ready = pod
                    .pod
                    .status
                    .container_statuses
                    .iter()
                    .any(|s| s.name == container && s.ready);
                out.push(SidecarPodRow {
                    namespace: pod.namespace.clone(),
                    pod: pod.name.clone(),
                    container,
                    image,
                    hash: spec.hash.clone(),
                    revision: revision.clone(),
                    version: version.clone(),
                    updated: !spec.hash.is_empty() && spec.hash == set_hash,
                    ready,
                    hot,
                });
            }
        }
    }
    out
}

fn intstr(v: &k8s_openapi::apimachinery::pkg::util::intstr::IntOrString) -> String {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    match v {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

impl super::Search for SidecarRow {
    fn search(&self) -> String {
        self.name.clone()
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

    use super::*;
    use crate::api::{SlimPod, sidecarset::SidecarSetSpec};

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn pod(namespace: &str, name: &str, app: &str, hash: Option<&str>) -> Arc<PodRow> {
        let annotations = hash.map(|h| labels(&[(keys::SIDECARSET_HASH, h)]));
        let pod = SlimPod {
            metadata: ObjectMeta {
                namespace: Some(namespace.to_owned()),
                name: Some(name.to_owned()),
                labels: Some(labels(&[("app", app)])),
                annotations,
                ..ObjectMeta::default()
            }
            .into(),
            ..SlimPod::default()
        };
        Arc::new(PodRow {
            pod: Arc::new(pod),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            ready: "0/0".to_owned(),
            all_ready: false,
            status: "Running".to_owned(),
            restarts: 0,
            node: String::new(),
            revision: String::new(),
            owner_uid: None,
            created: None,
            search: name.to_owned(),
        })
    }

    fn shown(rows: &[SidecarPodRow]) -> Vec<String> {
        rows.iter()
            .map(|r| format!("{}/{}", r.namespace, r.pod))
            .collect()
    }

    /// A set with a namespaceSelector shows, as upstream's PodMatchedSidecarSet matches, the
    /// selected pods whose Namespace has the labels (not those in other Namespaces or in one
    /// that does not exist), plus the pods it was injected into; with the labels unknown only
    /// the namespace and selector are checked.
    #[test]
    fn a_namespace_selector_matches_on_the_namespace_labels() {
        let set = SidecarSet {
            metadata: ObjectMeta {
                name: Some("agent".to_owned()),
                ..ObjectMeta::default()
            },
            spec: SidecarSetSpec {
                selector: Some(LabelSelector {
                    match_labels: Some(labels(&[("app", "web")])),
                    ..LabelSelector::default()
                }),
                namespace_selector: Some(LabelSelector {
                    match_labels: Some(labels(&[("team", "a")])),
                    ..LabelSelector::default()
                }),
                containers: vec![SidecarContainer {
                    container: k8s_openapi::api::core::v1::Container {
                        name: "agent".to_owned(),
                        ..Default::default()
                    },
                    ..SidecarContainer::default()
                }],
                ..SidecarSetSpec::default()
            },
            status: None,
        };
        let pods = vec![
            pod("team-a", "web-1", "web", None),
            pod("team-a", "api-1", "api", None),
            pod("team-b", "web-2", "web", None),
            pod("gone", "web-3", "web", None),
            pod("team-b", "old-1", "api", Some(r#"{"agent":{"hash":"h1"}}"#)),
        ];
        let namespaces: NamespaceLabels = [
            ("team-a".to_owned(), labels(&[("team", "a")])),
            ("team-b".to_owned(), labels(&[("team", "b")])),
        ]
        .into_iter()
        .collect();

        let known = sidecar_pods(&set, &[], &pods, Some(&namespaces));
        assert_eq!(shown(&known), ["team-a/web-1", "team-b/old-1"]);

        let unknown = sidecar_pods(&set, &[], &pods, None);
        assert_eq!(
            shown(&unknown),
            ["team-a/web-1", "team-b/web-2", "gone/web-3", "team-b/old-1"]
        );

        // Without a namespaceSelector the Namespaces' labels do not matter.
        let mut plain = set.clone();
        plain.spec.namespace_selector = None;
        assert_eq!(
            shown(&sidecar_pods(&plain, &[], &pods, Some(&namespaces))),
            shown(&unknown)
        );
    }
}
