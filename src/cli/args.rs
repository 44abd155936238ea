//! What the subcommands' arguments mean, checked while parsing so a bad one is a usage error
//! (exit 2): `KIND/NAME` (every spelling of PRODUCT §2, restricted to the kinds a verb
//! takes), object and container names, partitions (`3`, `40%`), `CONTAINER=IMAGE`, durations
//! (`30s`, `2m`, `1h30m`) and the like. What depends on the cluster (a name that does not exist,
//! a partition over the replicas) is refused when the command runs (exit 1).

use std::{net::SocketAddr, time::Duration};

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::{
    api::kinds::{self, KindError, KindInfo},
    kruise::{intstr::parse_partition_input, validation},
};

/// An object's name as the API server takes it (a DNS-1123 subdomain: `web`, `web-0`), so a
/// name no object can have is a usage error rather than a "not found".
pub fn object_name(text: &str) -> Result<String, String> {
    let name = text.trim();
    if name.is_empty() {
        return Err("the name is empty".to_owned());
    }
    if !validation::dns1123_subdomain_errors(name).is_empty() {
        return Err(format!(
            "{name:?} is not an object name: lowercase letters, digits, '-' and '.', \
             starting and ending with a letter or digit"
        ));
    }
    Ok(name.to_owned())
}

/// A namespace's name (a DNS-1123 label: `demo`, `kube-system`).
pub fn namespace_name(text: &str) -> Result<String, String> {
    let name = text.trim();
    if !validation::is_dns1123_label(name) {
        return Err(format!(
            "{name:?} is not a namespace name: up to 63 lowercase letters, digits and '-', \
             starting and ending with a letter or digit"
        ));
    }
    Ok(name.to_owned())
}

/// One entry of a comma-separated list of pods (`--pods a,b`): a pod name, or nothing (a
/// stray comma).
pub fn pod_in_list(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Ok(String::new());
    }
    object_name(text)
}

/// A container's name (a DNS-1123 label: `nginx`, `log-agent`).
pub fn container_name(text: &str) -> Result<String, String> {
    let name = text.trim();
    if !validation::is_dns1123_label(name) {
        return Err(format!(
            "{name:?} is not a container name: up to 63 lowercase letters, digits and '-', \
             starting and ending with a letter or digit"
        ));
    }
    Ok(name.to_owned())
}

/// `KIND/NAME` as given: the kind resolved by [`kinds::parse_kind`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadArg {
    pub kind: &'static KindInfo,
    pub name: String,
}

/// What `restart` takes: a pod by name, or a workload as KIND/NAME.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestartTarget {
    Pod(String),
    Workload(WorkloadArg),
}

impl RestartTarget {
    pub fn parse(text: &str) -> Result<RestartTarget, String> {
        if text.contains('/') {
            WorkloadArg::rollout(text).map(RestartTarget::Workload)
        } else {
            object_name(text).map(RestartTarget::Pod)
        }
    }
}

/// The kinds with a rollout: CloneSet, Advanced StatefulSet, Advanced DaemonSet.
const ROLLOUT_KINDS: &[(&KindInfo, &str)] = &[
    (&kinds::CLONESET, "cloneset|clone|cs"),
    (
        &kinds::ADVANCED_STATEFULSET,
        "asts|statefulset.apps.kruise.io",
    ),
    (&kinds::ADVANCED_DAEMONSET, "ads|daemonset.apps.kruise.io"),
];

/// A Kruise Rollout (`rollouts.rollouts.kruise.io`).
const KRUISE_ROLLOUT: (&KindInfo, &str) =
    (&kinds::ROLLOUT, "rollout|ro|rollouts.rollouts.kruise.io");

/// A workload with a rollout, or a Kruise Rollout.
const ROLLOUT_OR_WORKLOAD_KINDS: &[(&KindInfo, &str)] = &[
    KRUISE_ROLLOUT,
    ROLLOUT_KINDS[0],
    ROLLOUT_KINDS[1],
    ROLLOUT_KINDS[2],
];

impl WorkloadArg {
    /// A workload with a rollout (`plan`, `rollout`, `set image`).
    pub fn rollout(text: &str) -> Result<WorkloadArg, String> {
        Self::parse(text, ROLLOUT_KINDS)
    }

    /// A workload with a rollout or a Kruise Rollout (`rollout status|pause|resume|undo`).
    pub fn rollout_or_workload(text: &str) -> Result<WorkloadArg, String> {
        Self::parse(text, ROLLOUT_OR_WORKLOAD_KINDS)
    }

    /// A Kruise Rollout (`rollout approve`).
    pub fn kruise_rollout(text: &str) -> Result<WorkloadArg, String> {
        Self::parse(text, &[KRUISE_ROLLOUT])
    }

    /// Whether this names a Kruise Rollout rather than a workload.
    pub fn is_kruise_rollout(&self) -> bool {
        *self.kind == kinds::ROLLOUT
    }

    /// A workload with a replica count (`scale`): not an Advanced DaemonSet (one pod per node).
    pub fn scalable(text: &str) -> Result<WorkloadArg, String> {
        Self::parse(text, &ROLLOUT_KINDS[..2])
    }

    fn parse(text: &str, accepted: &[(&KindInfo, &str)]) -> Result<WorkloadArg, String> {
        let takes = || {
            accepted
                .iter()
                .map(|(_, spellings)| *spellings)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (kind, name) = text
            .split_once('/')
            .filter(|(k, n)| !k.trim().is_empty() && !n.trim().is_empty() && !n.contains('/'))
            .ok_or_else(|| {
                format!(
                    "{text:?} is not KIND/NAME (e.g. cs/web); KIND is one of {}",
                    takes()
                )
            })?;
        let info = kinds::parse_kind(kind).map_err(|err| match err {
            KindError::Unknown { input, .. } => {
                format!("unknown kind {input:?}; this command takes {}", takes())
            }
            other => format!("{other}; this command takes {}", takes()),
        })?;
        if !accepted.iter().any(|(k, _)| *k == info) {
            return Err(format!(
                "{} ({}) has no {}; this command takes {}",
                info.display_name(),
                info,
                match accepted.len() {
                    1 => "approval (only a Kruise Rollout is approved)",
                    2 => "replica count to scale",
                    _ => "rollout",
                },
                takes()
            ));
        }
        Ok(WorkloadArg {
            kind: info,
            name: object_name(name)?,
        })
    }

    /// `cloneset.apps.kruise.io/web`, as kubectl names an object in its messages.
    pub fn resource_name(&self) -> String {
        format!("{}.{}/{}", self.kind.singular, self.kind.group, self.name)
    }
}

/// `KIND/NAME` of a kind Kruise's deletion protection guards (`protect`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedArg {
    pub kind: &'static KindInfo,
    pub name: String,
}

impl ProtectedArg {
    pub fn parse(text: &str) -> Result<ProtectedArg, String> {
        const TAKES: &str = "ns, crd, cs, asts, ud, deploy, rs, sts, svc, ing";
        let (kind, name) = text
            .split_once('/')
            .filter(|(k, n)| !k.trim().is_empty() && !n.trim().is_empty() && !n.contains('/'))
            .ok_or_else(|| {
                format!("{text:?} is not KIND/NAME (e.g. cs/web); KIND is one of {TAKES}")
            })?;
        let info = kinds::parse_kind(kind.trim())
            .map_err(|e| format!("{e}; this command takes {TAKES}"))?;
        let api_version = info.api_version();
        if crate::kruise::protection::protected_kind(&api_version, info.kind).is_none() {
            return Err(format!(
                "{} ({info}) is not guarded by Kruise's deletion protection; this command takes {TAKES}",
                info.display_name()
            ));
        }
        Ok(ProtectedArg {
            kind: info,
            name: object_name(name)?,
        })
    }
}

/// `always|cascading|off`: the label's value (`None`: remove it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectionValue(pub Option<String>);

impl ProtectionValue {
    pub fn parse(text: &str) -> Result<ProtectionValue, String> {
        match text.to_ascii_lowercase().as_str() {
            "always" => Ok(ProtectionValue(Some("Always".to_owned()))),
            "cascading" => Ok(ProtectionValue(Some("Cascading".to_owned()))),
            "off" | "none" => Ok(ProtectionValue(None)),
            _ => Err(format!("{text:?}: give always, cascading or off")),
        }
    }
}

/// `CONTAINER=IMAGE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageArg {
    pub container: String,
    pub image: String,
}

impl ImageArg {
    pub fn parse(text: &str) -> Result<ImageArg, String> {
        let (container, image) = text
            .split_once('=')
            .map(|(c, i)| (c.trim(), i.trim()))
            .filter(|(c, i)| !c.is_empty() && !i.is_empty())
            .ok_or_else(|| format!("{text:?} is not CONTAINER=IMAGE (e.g. nginx=nginx:1.27)"))?;
        if image.contains(char::is_whitespace) {
            return Err(format!("{text:?}: the image {image:?} has a space in it"));
        }
        Ok(ImageArg {
            container: container_name(container)?,
            image: image.to_owned(),
        })
    }
}

/// A partition as typed: a number of pods (`3`) or a percent (`40%`), checked while parsing
/// ("abc", "-1", "150%" are usage errors); what depends on the workload (a percent on a kind
/// that counts pods: [`PartitionArg::is_percent`], more than its replicas) is checked later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionArg {
    /// As typed, trimmed (the planner reads it so).
    pub text: String,
    pub value: IntOrString,
}

impl PartitionArg {
    pub fn parse(text: &str) -> Result<PartitionArg, String> {
        let value = parse_partition_input(text, None).map_err(|e| e.to_string())?;
        Ok(PartitionArg {
            text: text.trim().to_owned(),
            value,
        })
    }

    pub fn is_percent(&self) -> bool {
        matches!(self.value, IntOrString::String(_))
    }
}

/// A ContainerRecreateRequest's `failurePolicy`: `Fail` or `Ignore` (any case).
pub fn failure_policy(text: &str) -> Result<String, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "fail" => Ok("Fail".to_owned()),
        "ignore" => Ok("Ignore".to_owned()),
        _ => Err(format!("{text:?}: give Fail or Ignore")),
    }
}

/// A loopback address to serve on (`127.0.0.1:PORT`, `[::1]:PORT`): the embedded cluster
/// refuses any other (see `EmbeddedCluster::start`), so another is a usage error.
pub fn loopback(text: &str) -> Result<SocketAddr, String> {
    let addr: SocketAddr = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not an address like 127.0.0.1:8080"))?;
    if !addr.ip().is_loopback() {
        return Err(format!(
            "{addr}: the embedded cluster is served on loopback only (127.0.0.1, ::1)"
        ));
    }
    Ok(addr)
}

/// A duration as kubectl takes it: `30s`, `2m`, `1h30m`, `500ms`, a bare number of seconds;
/// `0` is no limit. jiff's parser reads it, so its friendly spellings (`1h 30m`, `90 seconds`)
/// and ISO 8601 (`PT90S`) are taken too; days are not (say `24h`).
pub fn duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if let Ok(secs) = text.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let parsed = text.parse::<jiff::SignedDuration>().map_err(|_| {
        format!("{text:?} is not a duration (e.g. 30s, 2m, 1h30m; the units: ms, s, m, h)")
    })?;
    Duration::try_from(parsed).map_err(|_| format!("{text:?} is negative: give 0 or more"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_take_every_spelling_of_their_kinds() {
        for text in [
            "cs/web",
            "clone/web",
            "cloneset/web",
            "clonesets/web",
            "CloneSet/web",
            "clonesets.apps.kruise.io/web",
        ] {
            let arg = WorkloadArg::rollout(text).expect(text);
            assert_eq!((arg.kind.kind, arg.name.as_str()), ("CloneSet", "web"));
        }
        for text in [
            "asts/db",
            "statefulset.apps.kruise.io/db",
            "statefulsets.apps.kruise.io/db",
        ] {
            assert_eq!(
                WorkloadArg::rollout(text).expect(text).kind.kind,
                "StatefulSet"
            );
        }
        for text in [
            "ads/agent",
            "daemon/agent",
            "daemonsets.apps.kruise.io/agent",
        ] {
            assert_eq!(
                WorkloadArg::rollout(text).expect(text).kind.kind,
                "DaemonSet"
            );
        }
        assert_eq!(
            WorkloadArg::rollout("cs/web").expect("cs").resource_name(),
            "cloneset.apps.kruise.io/web"
        );
    }

    #[test]
    fn unknown_unsupported_and_malformed_targets_say_what_is_taken() {
        let err = WorkloadArg::rollout("deployment/web").expect_err("built-in kind");
        assert!(
            err.contains("deployment") && err.contains("has no rollout"),
            "{err}"
        );
        assert!(err.contains("cloneset|clone|cs"), "{err}");
        let err = WorkloadArg::rollout("clonest/web").expect_err("typo");
        assert_eq!(
            err,
            "unknown kind \"clonest\"; this command takes cloneset|clone|cs, \
             asts|statefulset.apps.kruise.io, ads|daemonset.apps.kruise.io"
        );
        let err = WorkloadArg::rollout("sts/db").expect_err("ambiguous");
        assert!(err.contains("ambiguous") && err.contains("asts"), "{err}");
        let err = WorkloadArg::scalable("ads/agent").expect_err("no replicas");
        assert!(err.contains("replica count"), "{err}");
        assert!(
            !err.contains("ads|daemonset"),
            "scale does not offer ads: {err}"
        );
        for bad in ["web", "cs/", "/web", "cs/a/b"] {
            let err = WorkloadArg::rollout(bad).expect_err(bad);
            assert!(err.contains("is not KIND/NAME"), "{bad}: {err}");
        }
    }

    #[test]
    fn names_partitions_and_policies() {
        assert_eq!(object_name(" web-0 "), Ok("web-0".to_owned()));
        assert_eq!(
            object_name("clonesets.apps.kruise.io"),
            Ok("clonesets.apps.kruise.io".to_owned())
        );
        for bad in ["", "Web", "web_0", "-web", "web.", &"a".repeat(254)] {
            assert!(object_name(bad).is_err(), "{bad}");
        }
        assert_eq!(pod_in_list(" "), Ok(String::new()));
        assert_eq!(namespace_name("kube-system"), Ok("kube-system".to_owned()));
        assert!(namespace_name("Prod").is_err() && namespace_name("a.b").is_err());
        assert!(container_name(&"a".repeat(64)).is_err());
        assert!(container_name("a.b").is_err(), "a label, not a subdomain");
        let p = PartitionArg::parse(" 40% ").expect("a percent");
        assert_eq!((p.text.as_str(), p.is_percent()), ("40%", true));
        assert_eq!(
            PartitionArg::parse("3").map(|p| p.value),
            Ok(IntOrString::Int(3))
        );
        for (bad, why) in [
            ("abc", "not a number"),
            ("-1", "negative"),
            ("101%", "over 100%"),
        ] {
            let err = PartitionArg::parse(bad).expect_err(bad);
            assert!(err.contains(why), "{bad}: {err}");
        }
        assert_eq!(failure_policy("ignore"), Ok("Ignore".to_owned()));
        assert_eq!(failure_policy("Fail"), Ok("Fail".to_owned()));
        assert!(failure_policy("retry").is_err());
        assert!(loopback("127.0.0.1:0").is_ok() && loopback("[::1]:8080").is_ok());
        assert!(loopback("10.0.0.1:80").is_err() && loopback("127.0.0.1").is_err());
    }

    #[test]
    fn images_and_durations() {
        assert_eq!(
            ImageArg::parse("nginx=nginx:1.27"),
            Ok(ImageArg {
                container: "nginx".into(),
                image: "nginx:1.27".into()
            })
        );
        assert_eq!(
            ImageArg::parse("app=registry:5000/app@sha256:ab=")
                .expect("first = splits")
                .image,
            "registry:5000/app@sha256:ab="
        );
        for bad in ["nginx", "=nginx:1", "nginx="] {
            assert!(ImageArg::parse(bad).is_err(), "{bad}");
        }
        let err = ImageArg::parse("app=nginx 1.27").expect_err("a space");
        assert!(err.contains("has a space in it"), "{err}");
        let err = ImageArg::parse("App=nginx").expect_err("not a container name");
        assert!(err.contains("\"App\" is not a container name"), "{err}");
        assert_eq!(duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("45"), Ok(Duration::from_secs(45)));
        assert_eq!(duration("0"), Ok(Duration::ZERO));
        assert_eq!(duration(" 1h 30m "), Ok(Duration::from_secs(5400)));
        assert_eq!(duration("90 seconds"), Ok(Duration::from_secs(90)));
        assert_eq!(duration("1.5s"), Ok(Duration::from_millis(1500)));
        for bad in ["", "abc", "10x", "s", "1.2.3s", "2d", "-1"] {
            let err = duration(bad).expect_err(bad);
            assert!(err.contains("is not a duration (e.g. 30s"), "{bad}: {err}");
        }
        let err = duration("-5s").expect_err("negative");
        assert!(err.contains("is negative"), "{err}");
    }
}
