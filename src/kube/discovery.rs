//! Discovery of the Kruise kinds a cluster serves, at every served version.
//!
//! A group's *preferred* version can hide a kind (upstream HEAD prefers apps.kruise.io/v1beta1,
//! which has no DaemonSet, while older releases serve CloneSet only at v1alpha1), so this lists
//! the resources of each served group version and picks, per kind, the version the console reads.
//! Must not depend on `app` state beyond the `Discovery` message it fills.

use kube::{
    Client,
    api::{Api, ListParams},
    discovery::{self, ApiResource, verbs},
};

use crate::app::msg::Kind;

/// The Kruise API groups the console looks at.
pub const KRUISE_GROUPS: [&str; 2] = ["apps.kruise.io", "policy.kruise.io"];

/// Every served (kind, version) of the Kruise groups, with what is needed to watch them.
#[derive(Debug, Clone, Default)]
pub struct KruiseApis {
    /// (kind, version, resource) for each listable kind at each served version.
    pub served: Vec<(String, String, ApiResource)>,
}

impl KruiseApis {
    /// ("CloneSet", "v1alpha1") pairs, sorted, for `Discovery::kruise_kinds`.
    pub fn kinds(&self) -> Vec<(String, String)> {
        let mut kinds: Vec<_> = self
            .served
            .iter()
            .map(|(kind, version, _)| (kind.clone(), version.clone()))
            .collect();
        kinds.sort();
        kinds.dedup();
        kinds
    }

    /// True when no Kruise kind is served at all.
    pub fn missing(&self) -> bool {
        self.served.is_empty()
    }

    /// The resource to watch for a workload kind: its own version when served, otherwise the
    /// newest served one. None when the kind is not served (its watcher is skipped).
    pub fn resource_for(&self, kind: Kind) -> Option<WatchedVersion> {
        let (kind_name, own_version) = match kind {
            Kind::CloneSet => ("CloneSet", "v1alpha1"),
            Kind::StatefulSet => ("StatefulSet", "v1beta1"),
            Kind::DaemonSet => ("DaemonSet", "v1alpha1"),
            Kind::Pod => return None,
        };
        let candidates: Vec<&ApiResource> = self
            .served
            .iter()
            .filter(|(k, _, ar)| k == kind_name && ar.group == "apps.kruise.io")
            .map(|(_, _, ar)| ar)
            .collect();
        if let Some(own) = candidates.iter().find(|ar| ar.version == own_version) {
            return Some(WatchedVersion::Own((*own).clone()));
        }
        candidates
            .iter()
            .max_by_key(|ar| version_rank(&ar.version))
            .map(|ar| WatchedVersion::Other((*ar).clone()))
    }
}

/// How a workload kind is read.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchedVersion {
    /// Served at the internal model's own version: watched as the typed resource.
    Own(ApiResource),
    /// Served only at another version: watched as `DynamicObject` and mapped.
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
/// A missing group is not an error (Kruise may not be installed); failing to reach the server is.
pub async fn discover_kruise(client: &Client) -> Result<KruiseApis, kube::Error> {
    let groups = client.list_api_groups().await?;
    let mut apis = KruiseApis::default();
    for name in KRUISE_GROUPS {
        if !groups.groups.iter().any(|g| g.name == name) {
            continue;
        }
        let group = match discovery::group(client, name).await {
            Ok(group) => group,
            Err(kube::Error::Discovery(err)) => {
                tracing::warn!(group = name, %err, "skipping an unusable API group");
                continue;
            }
            Err(err) => return Err(err),
        };
        for version in group.versions() {
            for (ar, caps) in group.versioned_resources(version) {
                if caps.supports_operation(verbs::LIST) && caps.supports_operation(verbs::WATCH) {
                    apis.served.push((ar.kind.clone(), version.to_owned(), ar));
                }
            }
        }
    }
    Ok(apis)
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
    use super::*;

    fn ar(kind: &str, version: &str) -> ApiResource {
        ApiResource {
            group: "apps.kruise.io".into(),
            version: version.into(),
            api_version: format!("apps.kruise.io/{version}"),
            kind: kind.into(),
            plural: format!("{}s", kind.to_lowercase()),
        }
    }

    fn apis(entries: &[(&str, &str)]) -> KruiseApis {
        KruiseApis {
            served: entries
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned(), ar(k, v)))
                .collect(),
        }
    }

    #[test]
    fn own_version_wins_when_served() {
        let apis = apis(&[("CloneSet", "v1beta1"), ("CloneSet", "v1alpha1")]);
        assert_eq!(
            apis.resource_for(Kind::CloneSet),
            Some(WatchedVersion::Own(ar("CloneSet", "v1alpha1")))
        );
    }

    #[test]
    fn other_version_used_when_own_is_not_served() {
        let apis = apis(&[("CloneSet", "v1beta1"), ("StatefulSet", "v1alpha1")]);
        assert_eq!(
            apis.resource_for(Kind::CloneSet),
            Some(WatchedVersion::Other(ar("CloneSet", "v1beta1")))
        );
        assert_eq!(
            apis.resource_for(Kind::StatefulSet),
            Some(WatchedVersion::Other(ar("StatefulSet", "v1alpha1")))
        );
        assert_eq!(apis.resource_for(Kind::DaemonSet), None);
        assert!(!apis.missing());
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
        let apis = apis(&[("CloneSet", "v1beta1"), ("BroadcastJob", "v1alpha1")]);
        assert_eq!(
            apis.kinds(),
            vec![
                ("BroadcastJob".to_owned(), "v1alpha1".to_owned()),
                ("CloneSet".to_owned(), "v1beta1".to_owned())
            ]
        );
    }
}
