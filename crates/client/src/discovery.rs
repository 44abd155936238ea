//! Discovery of the Kruise kinds a cluster serves, at every served version, and which version
//! to read.
//!
//! A group's *preferred* version can hide a kind (upstream HEAD prefers apps.kruise.io/v1beta1,
//! which older releases do not serve), so this lists the resources of each served group version.
//! Which version to read matters: upstream HEAD's bare CloneSet CRD serves v1alpha1 *and* v1beta1,
//! stores v1beta1 and has no conversion webhook, so a real server serves the v1alpha1 view with
//! every field v1alpha1 does not know pruned (`updateStrategy.rollingUpdate.partition`,
//! `paused`). [`preferred_version`] picks the version the CRD stores — known from discovery's
//! `storageVersionHash` — or else the newest served, among those the console can read.
//! Must not depend on `app` state beyond the `Discovery` message it fills.

use base64::{Engine, engine::general_purpose::STANDARD};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList;
use kube::{
    Client,
    api::{Api, ListParams},
    discovery::ApiResource,
};

use kruise_core::api::kinds::Kind;

/// The group version Kruise Rollout's kinds are read at (the stored one).
pub const KRUISE_ROLLOUT_GROUP_VERSION: &str = "rollouts.kruise.io/v1beta1";

/// Which of Kruise Rollout's kinds a resource list says are listable and watchable: `(rollouts,
/// batchreleases)`. Pure, for tests.
pub fn kruise_rollout_served_in(list: &APIResourceList) -> (bool, bool) {
    let ok = |plural: &str| {
        list.resources.iter().any(|r| {
            r.name == plural
                && ["list", "watch"]
                    .iter()
                    .all(|v| r.verbs.iter().any(|x| x == v))
        })
    };
    (ok("rollouts"), ok("batchreleases"))
}

/// Whether the cluster serves Kruise Rollout's kinds at [`KRUISE_ROLLOUT_GROUP_VERSION`]:
/// `(rollouts, batchreleases)`. Any error (the group is missing: 404) means not served.
pub async fn kruise_rollout_served(client: &Client) -> (bool, bool) {
    match client
        .list_api_group_resources(KRUISE_ROLLOUT_GROUP_VERSION)
        .await
    {
        Ok(list) => kruise_rollout_served_in(&list),
        Err(err) => {
            tracing::debug!(%err, "{KRUISE_ROLLOUT_GROUP_VERSION} not served");
            (false, false)
        }
    }
}

/// The Kruise API groups the console looks at.
pub const KRUISE_GROUPS: [&str; 2] = ["apps.kruise.io", "policy.kruise.io"];

/// One listable and watchable kind at one served version.
#[derive(Debug, Clone, PartialEq)]
pub struct Served {
    pub kind: String,
    pub version: String,
    pub resource: ApiResource,
    /// Discovery's `storageVersionHash` (the same for every version of a resource).
    pub storage_hash: Option<String>,
}

/// Every served (kind, version) of the Kruise groups, with what is needed to watch them.
#[derive(Debug, Clone, Default)]
pub struct KruiseApis {
    pub served: Vec<Served>,
}

/// The storage version hash a real API server publishes in discovery for `group/version/kind`
/// (upstream `discovery.StorageVersionHash`: base64 of the first 8 bytes of its SHA-256).
pub fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    let digest = ring::digest::digest(
        &ring::digest::SHA256,
        format!("{group}/{version}/{kind}").as_bytes(),
    );
    STANDARD.encode(&digest.as_ref()[..8])
}

/// Which served version of `kind` in `group` to read, among the `readable` ones: the version the
/// resource is stored at (when discovery's hash names a readable one), else the newest readable
/// served version. None when no readable version is served.
pub fn preferred_version<'a>(
    served: &'a [Served],
    group: &str,
    kind: &str,
    readable: &[&str],
) -> Option<&'a Served> {
    let candidates: Vec<&Served> = served
        .iter()
        .filter(|s| s.kind == kind && s.resource.group == group)
        .filter(|s| readable.contains(&s.version.as_str()))
        .collect();
    let stored = candidates.iter().find(|s| {
        s.storage_hash
            .as_deref()
            .is_some_and(|h| h == storage_version_hash(group, &s.version, kind))
    });
    stored
        .or_else(|| candidates.iter().max_by_key(|s| version_rank(&s.version)))
        .copied()
}

/// The CloneSet version to read or write, from discovery: the stored version (or the newest
/// served) among those the internal model maps, v1alpha1 and v1beta1. For every component that
/// reads or writes CloneSets (console, plan, controllers).
pub fn preferred_cloneset_version(apis: &KruiseApis) -> Option<&ApiResource> {
    preferred_version(
        &apis.served,
        "apps.kruise.io",
        "CloneSet",
        readable_versions(Kind::CloneSet),
    )
    .map(|s| &s.resource)
}

/// The version of `kind` to read and write when it is not the internal model's v1alpha1: the
/// stored version (or the newest served) among those the model maps. None when v1alpha1 is the
/// one, or the kind is not served.
pub fn mapped_version(apis: &KruiseApis, kind: Kind) -> Option<&ApiResource> {
    let info = kind.info();
    preferred_version(&apis.served, info.group, info.kind, readable_versions(kind))
        .filter(|s| s.version != "v1alpha1")
        .map(|s| &s.resource)
}

/// The versions the internal model of a workload kind can be read from (see `api::cloneset`
/// for CloneSet's v1beta1 mapping; Advanced StatefulSet's two versions share one shape).
pub fn readable_versions(kind: Kind) -> &'static [&'static str] {
    match kind {
        // Advanced DaemonSet and SidecarSet: v1beta1 (stored since Kruise v1.9) maps through
        // `api::conversion`.
        Kind::CloneSet | Kind::StatefulSet | Kind::DaemonSet | Kind::SidecarSet => {
            &["v1alpha1", "v1beta1"]
        }
        _ => &[],
    }
}

impl KruiseApis {
    /// Reads the APIResourceLists of the Kruise group versions (`GET /apis/GROUP/VERSION`).
    /// Pure: for callers that did the discovery requests themselves.
    pub fn from_resource_lists(lists: &[APIResourceList]) -> KruiseApis {
        let mut served = Vec::new();
        for list in lists {
            let Some((group, version)) = list.group_version.split_once('/') else {
                continue;
            };
            for r in &list.resources {
                let verbs = |v: &str| r.verbs.iter().any(|x| x == v);
                if r.name.contains('/') || !verbs("list") || !verbs("watch") {
                    continue;
                }
                served.push(Served {
                    kind: r.kind.clone(),
                    version: version.to_owned(),
                    resource: ApiResource {
                        group: group.to_owned(),
                        version: version.to_owned(),
                        api_version: list.group_version.clone(),
                        kind: r.kind.clone(),
                        plural: r.name.clone(),
                    },
                    storage_hash: r.storage_version_hash.clone(),
                });
            }
        }
        KruiseApis { served }
    }

    /// ("CloneSet", "v1alpha1") pairs, sorted, for `Discovery::kruise_kinds`.
    pub fn kinds(&self) -> Vec<(String, String)> {
        let mut kinds: Vec<_> = self
            .served
            .iter()
            .map(|s| (s.kind.clone(), s.version.clone()))
            .collect();
        kinds.sort();
        kinds.dedup();
        kinds
    }

    /// True when no Kruise kind is served at all.
    pub fn missing(&self) -> bool {
        self.served.is_empty()
    }

    /// The resource to watch for a workload kind or a SidecarSet ([`preferred_version`] among the versions the
    /// console reads, else the newest served one, mapped). None when the kind is not served.
    pub fn resource_for(&self, kind: Kind) -> Option<WatchedVersion> {
        let info = kind.info();
        if readable_versions(kind).is_empty() {
            return None;
        }
        // The version the console's own types model (the first the table lists).
        let (kind_name, own_version, group) = (info.kind, info.preferred_version(), info.group);
        let chosen = preferred_version(&self.served, group, kind_name, readable_versions(kind))
            .or_else(|| {
                self.served
                    .iter()
                    .filter(|s| s.kind == kind_name && s.resource.group == group)
                    .max_by_key(|s| version_rank(&s.version))
            })?;
        let ar = chosen.resource.clone();
        Some(if chosen.version == own_version {
            WatchedVersion::Own(ar)
        } else {
            WatchedVersion::Other(ar)
        })
    }
}

/// How a workload kind is read.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchedVersion {
    /// Served at the internal model's own version: watched as the typed resource.
    Own(ApiResource),
    /// Read at another version: watched as `DynamicObject` and mapped.
    Other(ApiResource),
}

/// Orders Kubernetes versions: v1 > v1beta2 > v1beta1 > v1alpha1.
pub fn version_rank(version: &str) -> (u32, u32, u32) {
    let rest = version.trim_start_matches('v');
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let major = digits.parse().unwrap_or(0);
    let tail = &rest[digits.len()..];
    let (stability, minor_str) = if let Some(m) = tail.strip_prefix("beta") {
        (1, m)
    } else if let Some(m) = tail.strip_prefix("alpha") {
        (0, m)
    } else {
        (2, "")
    };
    (stability, major, minor_str.parse().unwrap_or(0))
}

/// Lists the served versions and resources of the Kruise groups.
///
/// A missing group is not an error (Kruise may not be installed), nor is a group version whose
/// list the server refuses (it is skipped); failing to reach the server is.
pub async fn discover_kruise(client: &Client) -> Result<KruiseApis, kube::Error> {
    let groups = client.list_api_groups().await?;
    let mut lists = Vec::new();
    for group in groups
        .groups
        .iter()
        .filter(|g| KRUISE_GROUPS.contains(&g.name.as_str()))
    {
        for version in &group.versions {
            match client
                .list_api_group_resources(&version.group_version)
                .await
            {
                Ok(list) => lists.push(list),
                Err(kube::Error::Api(status)) => {
                    let error = super::errors::status_text(&status);
                    tracing::warn!(gv = %version.group_version, %error, "skipping an unusable API group version");
                }
                Err(err) => return Err(err),
            }
        }
    }
    Ok(KruiseApis::from_resource_lists(&lists))
}

/// Namespace names for `:ns` completion; empty when listing them is forbidden.
pub async fn list_namespaces(client: &Client) -> Vec<String> {
    let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    match api.list_metadata(&ListParams::default()).await {
        Ok(list) => {
            let mut names: Vec<String> = list
                .items
                .into_iter()
                .filter_map(|ns| ns.metadata.name)
                .collect();
            names.sort();
            names
        }
        Err(err) => {
            tracing::info!(%err, "cannot list namespaces; :ns completion is empty");
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResource;

    use super::*;

    fn resource(name: &str, verbs: &[&str]) -> APIResource {
        APIResource {
            name: name.into(),
            verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
            ..APIResource::default()
        }
    }

    #[test]
    fn only_listable_and_watchable_kruise_rollout_kinds_are_served() {
        let list = APIResourceList {
            group_version: KRUISE_ROLLOUT_GROUP_VERSION.into(),
            resources: vec![
                resource("rollouts", &["get", "list", "watch", "patch"]),
                resource("rollouts/status", &["get", "patch"]),
                resource("batchreleases", &["get"]),
            ],
        };
        assert_eq!(kruise_rollout_served_in(&list), (true, false));
        assert_eq!(
            kruise_rollout_served_in(&APIResourceList::default()),
            (false, false)
        );
    }

    fn ar(kind: &str, version: &str) -> ApiResource {
        ApiResource {
            group: "apps.kruise.io".into(),
            version: version.into(),
            api_version: format!("apps.kruise.io/{version}"),
            kind: kind.into(),
            plural: format!("{}s", kind.to_lowercase()),
        }
    }

    /// Served entries; `stored` names the storage version of each kind (its hash is published).
    fn apis(entries: &[(&str, &str)], stored: &[(&str, &str)]) -> KruiseApis {
        KruiseApis {
            served: entries
                .iter()
                .map(|(k, v)| Served {
                    kind: (*k).to_owned(),
                    version: (*v).to_owned(),
                    resource: ar(k, v),
                    storage_hash: stored
                        .iter()
                        .find(|(sk, _)| sk == k)
                        .map(|(_, sv)| storage_version_hash("apps.kruise.io", sv, k)),
                })
                .collect(),
        }
    }

    #[test]
    fn the_hash_is_upstreams() {
        // What a kube-apiserver publishes for apps/v1 Deployment and v1 Pod.
        assert_eq!(
            storage_version_hash("apps", "v1", "Deployment"),
            "8aSe+NMegvE="
        );
        assert_eq!(storage_version_hash("", "v1", "Pod"), "xPOwRZ+Yhw8=");
    }

    #[test]
    fn the_stored_version_wins() {
        // Upstream HEAD: both served, v1beta1 stored.
        let head = apis(
            &[("CloneSet", "v1alpha1"), ("CloneSet", "v1beta1")],
            &[("CloneSet", "v1beta1")],
        );
        assert_eq!(
            preferred_cloneset_version(&head),
            Some(&ar("CloneSet", "v1beta1"))
        );
        assert_eq!(
            head.resource_for(Kind::CloneSet),
            Some(WatchedVersion::Other(ar("CloneSet", "v1beta1")))
        );
        // Stored at v1alpha1 (a cluster upgraded in place keeps the old storage version).
        let old = apis(
            &[("CloneSet", "v1alpha1"), ("CloneSet", "v1beta1")],
            &[("CloneSet", "v1alpha1")],
        );
        assert_eq!(
            old.resource_for(Kind::CloneSet),
            Some(WatchedVersion::Own(ar("CloneSet", "v1alpha1")))
        );
    }

    #[test]
    fn without_a_hash_the_newest_readable_version_wins() {
        let both = apis(&[("CloneSet", "v1beta1"), ("CloneSet", "v1alpha1")], &[]);
        assert_eq!(
            preferred_cloneset_version(&both),
            Some(&ar("CloneSet", "v1beta1"))
        );
        let only_alpha = apis(&[("CloneSet", "v1alpha1")], &[]);
        assert_eq!(
            only_alpha.resource_for(Kind::CloneSet),
            Some(WatchedVersion::Own(ar("CloneSet", "v1alpha1")))
        );
        // Kruise v1.9 stores DaemonSets and SidecarSets at v1beta1: read there (mapped).
        let v19 = apis(
            &[
                ("DaemonSet", "v1alpha1"),
                ("DaemonSet", "v1beta1"),
                ("SidecarSet", "v1alpha1"),
                ("SidecarSet", "v1beta1"),
            ],
            &[("DaemonSet", "v1beta1"), ("SidecarSet", "v1beta1")],
        );
        assert_eq!(
            v19.resource_for(Kind::DaemonSet),
            Some(WatchedVersion::Other(ar("DaemonSet", "v1beta1")))
        );
        assert_eq!(
            v19.resource_for(Kind::SidecarSet),
            Some(WatchedVersion::Other(ar("SidecarSet", "v1beta1")))
        );
        assert_eq!(
            mapped_version(&v19, Kind::DaemonSet),
            Some(&ar("DaemonSet", "v1beta1"))
        );
        // Kruise v1.8 serves v1alpha1 only.
        let v18 = apis(&[("DaemonSet", "v1alpha1")], &[("DaemonSet", "v1alpha1")]);
        assert_eq!(
            v18.resource_for(Kind::DaemonSet),
            Some(WatchedVersion::Own(ar("DaemonSet", "v1alpha1")))
        );
        assert_eq!(mapped_version(&v18, Kind::DaemonSet), None);
        // A version the console cannot read is still watched (mapped) when it is all there is.
        let future = apis(&[("DaemonSet", "v2")], &[]);
        assert_eq!(
            future.resource_for(Kind::DaemonSet),
            Some(WatchedVersion::Other(ar("DaemonSet", "v2")))
        );
        assert_eq!(future.resource_for(Kind::StatefulSet), None);
        assert!(!future.missing());
    }

    #[test]
    fn resource_lists_are_read_without_subresources() {
        let list = APIResourceList {
            group_version: "apps.kruise.io/v1beta1".into(),
            resources: vec![
                APIResource {
                    name: "clonesets".into(),
                    kind: "CloneSet".into(),
                    verbs: vec!["get".into(), "list".into(), "watch".into()],
                    storage_version_hash: Some("h".into()),
                    ..APIResource::default()
                },
                APIResource {
                    name: "clonesets/status".into(),
                    kind: "CloneSet".into(),
                    verbs: vec!["get".into(), "list".into(), "watch".into()],
                    ..APIResource::default()
                },
                APIResource {
                    name: "tokens".into(),
                    kind: "Token".into(),
                    verbs: vec!["create".into()],
                    ..APIResource::default()
                },
            ],
        };
        let apis = KruiseApis::from_resource_lists(&[list]);
        assert_eq!(apis.served.len(), 1);
        assert_eq!(apis.served[0].resource, ar("CloneSet", "v1beta1"));
        assert_eq!(apis.served[0].storage_hash.as_deref(), Some("h"));
    }

    #[test]
    fn versions_rank_like_kubernetes() {
        assert!(version_rank("v1") > version_rank("v1beta2"));
        assert!(version_rank("v1beta2") > version_rank("v1beta1"));
        assert!(version_rank("v1beta1") > version_rank("v1alpha1"));
        assert!(version_rank("v2alpha1") < version_rank("v1beta1"));
    }

    #[test]
    fn kinds_are_sorted_pairs() {
        let apis = apis(
            &[("CloneSet", "v1beta1"), ("BroadcastJob", "v1alpha1")],
            &[],
        );
        assert_eq!(
            apis.kinds(),
            vec![
                ("BroadcastJob".to_owned(), "v1alpha1".to_owned()),
                ("CloneSet".to_owned(), "v1beta1".to_owned())
            ]
        );
    }
}
