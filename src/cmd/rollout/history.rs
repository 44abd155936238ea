//! `rollout history KIND/NAME [--revision N]`: the ControllerRevisions the workload controls,
//! oldest first: number, name, how many pods run it, the `kubernetes.io/change-cause`
//! annotation, and which is the current and which the update revision (as kubectl-kruise lists
//! them, plus the pods and the markers). `--revision N` prints that revision's pod template.

use std::fmt::Write as _;

use anyhow::{Context as _, Result, anyhow};
use k8s_openapi::api::{apps::v1::ControllerRevision, core::v1::Pod};
use serde_json::Value;

use crate::{
    actions::{Paths, preview::is_active_and_owned},
    api::conversion::version_of,
    cli::{KubeArgs, RolloutHistoryArgs},
    cmd::{Session, workload_kind},
    kruise::{
        plan::WorkloadKind,
        revision::{CONTROLLER_REVISION_HASH_LABEL, equal_to_revision_hash},
    },
    kube::workload,
};

/// The annotation kubectl's `--record` (and people) write on a workload; revisions copy it.
pub const CHANGE_CAUSE: &str = "kubernetes.io/change-cause";

/// One revision as the history lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    pub number: i64,
    pub name: String,
    /// Active pods of the workload on this revision.
    pub pods: usize,
    pub change_cause: Option<String>,
    pub current: bool,
    pub update: bool,
}

/// The workload's revisions, oldest first, with their pods and markers. `object` is the
/// workload as served; `pods` its pods (others are not counted).
pub fn revisions(
    kind: WorkloadKind,
    object: &Value,
    revisions: &[ControllerRevision],
    pods: &[Pod],
) -> Vec<Revision> {
    let status = |key: &str| {
        object
            .pointer(&format!("/status/{key}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let uid = object
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let hashes: Vec<&str> = pods
        .iter()
        .filter(|p| is_active_and_owned(p, uid))
        .filter_map(|p| {
            p.metadata
                .labels
                .as_ref()?
                .get(CONTROLLER_REVISION_HASH_LABEL)
        })
        .map(String::as_str)
        .collect();
    let mut out: Vec<Revision> = revisions
        .iter()
        .map(|r| {
            let name = r.metadata.name.clone().unwrap_or_default();
            let (current, update) = if kind == WorkloadKind::AdvancedDaemonSet {
                // No current revision: the daemon's hash is the one pods update to.
                // `daemonSetHash` at v1alpha1, `updateRevision` at v1beta1 (as served).
                let hash = Paths::of(kind.info(), version_of(object))
                    .and_then(|p| object.pointer(p.update_revision))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                (
                    false,
                    !hash.is_empty() && equal_to_revision_hash(hash, &name),
                )
            } else {
                (
                    name == status("currentRevision"),
                    name == status("updateRevision"),
                )
            };
            Revision {
                number: r.revision,
                pods: hashes
                    .iter()
                    .filter(|h| equal_to_revision_hash(h, &name))
                    .count(),
                change_cause: r
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(CHANGE_CAUSE))
                    .filter(|c| !c.is_empty())
                    .cloned(),
                current,
                update,
                name,
            }
        })
        .collect();
    out.sort_by(|a, b| a.number.cmp(&b.number).then_with(|| a.name.cmp(&b.name)));
    out
}

/// The history table.
pub fn render_history(name: &str, revisions: &[Revision]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{name}");
    if revisions.is_empty() {
        let _ = writeln!(out, "No revisions yet (its controller has not seen it).");
        return out;
    }
    let width = revisions
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let causes: Vec<String> = revisions
        .iter()
        .map(|r| {
            r.change_cause
                .clone()
                .unwrap_or_else(|| "<none>".to_owned())
        })
        .collect();
    let cause_width = causes
        .iter()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(12)
        .max(12);
    let header = format!(
        "{:<8}  {:<width$}  {:>4}  CHANGE-CAUSE",
        "REVISION", "NAME", "PODS"
    );
    let _ = writeln!(out, "{header}");
    for (r, cause) in revisions.iter().zip(&causes) {
        let marker = match (r.current, r.update) {
            (true, true) => "current, update",
            (true, false) => "current",
            (false, true) => "update",
            (false, false) => "",
        };
        let line = format!(
            "{:<8}  {:<width$}  {:>4}  {cause:<cause_width$}  {marker}",
            r.number, r.name, r.pods
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}

pub(super) async fn run(kube: &KubeArgs, args: RolloutHistoryArgs) -> Result<()> {
    let session = Session::open(kube).await?;
    let kind = workload_kind(&args.target);
    let shown = args.target.resource_name();
    let client = session.client();
    let resource = workload::resource_for(client, kind).await?;
    let object = workload::get(
        client,
        &resource,
        &session.namespace,
        &args.target.name,
        kind.display(),
    )
    .await?;
    let uid = object
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let owned = workload::revisions_of(client, &session.namespace, uid).await?;
    // 0 is kubectl's "list them all": the default.
    if let Some(number) = args.revision.filter(|n| *n != 0) {
        let rev = owned.iter().find(|r| r.revision == number).ok_or_else(|| {
            let mut known: Vec<i64> = owned.iter().map(|r| r.revision).collect();
            known.sort_unstable();
            anyhow!(
                "{shown} has no revision {number} (revisions: {})",
                known
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        let template = rev
            .data
            .as_ref()
            .and_then(|d| d.0.pointer("/spec/template"))
            .map(|t| {
                let mut t = t.clone();
                if let Some(o) = t.as_object_mut() {
                    o.remove("$patch");
                }
                t
            })
            .ok_or_else(|| anyhow!("revision {number} holds no pod template"))?;
        println!(
            "{shown} revision {number} ({})",
            rev.metadata.name.as_deref().unwrap_or_default()
        );
        print!(
            "{}",
            serde_saphyr::to_string(&template).context("cannot print the template")?
        );
        return Ok(());
    }
    let pods = workload::pods_of(client, &session.namespace, &object).await?;
    print!(
        "{}",
        render_history(&shown, &revisions(kind, &object, &owned, &pods))
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
    use serde_json::json;

    use super::*;

    fn rev(name: &str, number: i64, cause: Option<&str>) -> ControllerRevision {
        ControllerRevision {
            metadata: ObjectMeta {
                name: Some(name.into()),
                annotations: cause
                    .map(|c| BTreeMap::from([(CHANGE_CAUSE.to_owned(), c.to_owned())])),
                ..ObjectMeta::default()
            },
            revision: number,
            data: None,
        }
    }

    fn pod(name: &str, hash: &str, owner: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some(BTreeMap::from([(
                    CONTROLLER_REVISION_HASH_LABEL.to_owned(),
                    hash.to_owned(),
                )])),
                owner_references: Some(vec![OwnerReference {
                    controller: Some(true),
                    uid: owner.into(),
                    ..OwnerReference::default()
                }]),
                ..ObjectMeta::default()
            },
            ..Pod::default()
        }
    }

    #[test]
    fn revisions_are_listed_oldest_first_with_pods_causes_and_markers() {
        let object = json!({
            "metadata": {"uid": "u1"},
            "status": {"currentRevision": "web-aaa", "updateRevision": "web-bbb"},
        });
        let pods = [
            pod("web-1", "web-aaa", "u1"),
            pod("web-2", "web-bbb", "u1"),
            pod("web-3", "web-bbb", "u1"),
            pod("other", "web-bbb", "u2"),
        ];
        let list = revisions(
            WorkloadKind::CloneSet,
            &object,
            &[
                rev("web-bbb", 3, Some("image nginx:1.26")),
                rev("web-aaa", 1, None),
                rev("web-ccc", 2, None),
            ],
            &pods,
        );
        let text = render_history("cloneset.apps.kruise.io/web", &list);
        assert_eq!(
            text,
            "cloneset.apps.kruise.io/web\n\
             REVISION  NAME     PODS  CHANGE-CAUSE\n\
             1         web-aaa     1  <none>            current\n\
             2         web-ccc     0  <none>\n\
             3         web-bbb     2  image nginx:1.26  update\n"
        );
    }

    #[test]
    fn a_daemonset_marks_the_revision_of_its_hash() {
        let object = json!({"metadata": {"uid": "u"}, "status": {"daemonSetHash": "5f7d"}});
        let list = revisions(
            WorkloadKind::AdvancedDaemonSet,
            &object,
            &[rev("agent-5f7d", 2, None), rev("agent-4c1a", 1, None)],
            &[pod("agent-x", "5f7d", "u")],
        );
        assert_eq!(
            list.iter()
                .map(|r| (r.number, r.update, r.pods))
                .collect::<Vec<_>>(),
            vec![(1, false, 0), (2, true, 1)]
        );
        assert!(render_history("x", &[]).contains("No revisions yet"));
    }
}
