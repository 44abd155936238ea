//! From an action and the object as read to the JSON patch that performs it.
//!
//! Every changed field is pinned with a `test` of the value read (or, where the field is absent,
//! a `test` of the object's resourceVersion), so the patch applies only to the object the user
//! decided on. After a conflict, [`recheck`] tells whether the fields the action is about still
//! hold what they held (retry with the fresh object) or were changed by someone else (stop, and
//! say what changed).

use serde_json::{Value, json};

use super::{
    Action, ActionError, ApiRequest, ObjectState, Paths, Prepared, RevisionInfo, Target, intstr,
};
use crate::{api::kinds, kruise::intstr::calculate_partition_replicas};

const RV: &str = "/metadata/resourceVersion";

/// Builds JSON-patch ops against one object, pinning what it reads.
pub(super) struct Patcher<'a> {
    object: &'a Value,
    pub(super) ops: Vec<Value>,
    tested: Vec<String>,
}

pub(super) fn present<'v>(object: &'v Value, path: &str) -> Option<&'v Value> {
    object.pointer(path).filter(|v| !v.is_null())
}

impl<'a> Patcher<'a> {
    pub(super) fn new(object: &'a Value) -> Self {
        Self {
            object,
            ops: Vec::new(),
            tested: Vec::new(),
        }
    }

    pub(super) fn test(&mut self, path: &str, value: &Value) {
        if self.tested.iter().any(|p| p == path) {
            return;
        }
        self.tested.push(path.to_owned());
        self.ops
            .push(json!({"op": "test", "path": path, "value": value}));
    }

    fn test_rv(&mut self) {
        let rv = self.object.pointer(RV).cloned().unwrap_or(Value::Null);
        self.test(RV, &rv);
    }

    /// Sets `path` to `value`: `test` + `replace` when present, else `add` (creating missing
    /// parents) pinned by the resourceVersion.
    pub(super) fn set(&mut self, path: &str, value: Value) {
        if let Some(old) = present(self.object, path) {
            let old = old.clone();
            self.test(path, &old);
            self.ops
                .push(json!({"op": "replace", "path": path, "value": value}));
            return;
        }
        self.test_rv();
        // The deepest existing ancestor; everything below it is added as one nested value.
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let mut depth = parts.len() - 1;
        while depth > 0 {
            let parent = format!("/{}", parts[..depth].join("/"));
            if present(self.object, &parent).is_some_and(Value::is_object) {
                break;
            }
            depth -= 1;
        }
        let mut nested = value;
        for part in parts[depth + 1..].iter().rev() {
            let mut map = serde_json::Map::new();
            // A pointer token names a key escaped (`~1` is `/`, `~0` is `~`).
            map.insert(part.replace("~1", "/").replace("~0", "~"), nested);
            nested = Value::Object(map);
        }
        let at = format!("/{}", parts[..=depth].join("/"));
        self.ops
            .push(json!({"op": "add", "path": at, "value": nested}));
    }
}

fn is_cron_job(target: &Target) -> bool {
    *target.kind == kinds::ADVANCED_CRONJOB
}

pub(super) fn api_path(target: &Target, state: &ObjectState) -> String {
    let base = if target.group().is_empty() {
        format!("/api/{}", state.version)
    } else {
        format!("/apis/{}/{}", target.group(), state.version)
    };
    match &target.namespace {
        Some(ns) => format!("{base}/namespaces/{ns}/{}/{}", state.plural, target.name),
        None => format!("{base}/{}/{}", state.plural, target.name),
    }
}

fn paths_of(target: &Target, state: &ObjectState) -> Result<Paths, ActionError> {
    Paths::of(target.kind, &state.version).ok_or_else(|| ActionError::NotApplicable {
        kind: target.describe(),
        what: "rollout (only CloneSets, Advanced StatefulSets and DaemonSets have one)".to_owned(),
    })
}

fn shown(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "unset".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn replicas(object: &Value) -> i32 {
    object
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .and_then(|r| i32::try_from(r).ok())
        .unwrap_or(1)
}

/// Prepares `action` on `target` as `state` shows it.
pub fn prepare(
    target: &Target,
    action: &Action,
    state: &ObjectState,
) -> Result<Prepared, ActionError> {
    if *target.kind == kinds::ROLLOUT {
        return super::rollout::prepare(target, action, state);
    }
    let object = &state.object;
    let mut p = Patcher::new(object);
    let mut changes = Vec::new();
    let mut notes = Vec::new();
    let paths = paths_of(target, state);
    let inverse = match action {
        Action::Restart { .. }
        | Action::Protect { .. }
        | Action::Delete
        | Action::Approve { .. } => {
            return super::objects::prepare(target, action, state);
        }
        Action::Partition { value } => {
            let paths = paths?;
            let new = validate_partition(value, &paths, object)?;
            let old = present(object, paths.partition).cloned();
            if old.as_ref() == Some(&new) {
                return Err(ActionError::NoChange(format!(
                    "the partition is already {}",
                    intstr(value)
                )));
            }
            changes.push(format!(
                "partition {} → {}",
                shown(old.as_ref()),
                intstr(value)
            ));
            let n = replicas(object);
            let resolve = |v: Option<&Value>| {
                let v = v.and_then(|v| serde_json::from_value(v.clone()).ok());
                calculate_partition_replicas(v.as_ref(), Some(n)).unwrap_or(0)
            };
            if resolve(Some(&new)) > resolve(old.as_ref()) {
                notes.push(
                    "raising the partition rolls pods back only where the \
                     CloneSetPartitionRollback feature gate is on (and only mid-rollout)"
                        .to_owned(),
                );
            }
            p.set(paths.partition, new);
            Some(Action::Partition {
                value: old
                    .and_then(|v| serde_json::from_value(v).ok())
                    .unwrap_or(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(0)),
            })
        }
        Action::Pause | Action::Resume => {
            // An AdvancedCronJob pauses its schedule (`spec.paused`): no new jobs are created.
            let (paused, what) = if is_cron_job(target) {
                ("/spec/paused", "schedule")
            } else {
                (paths?.paused, "rollout")
            };
            let pause = matches!(action, Action::Pause);
            let now = present(object, paused)
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if now == pause {
                return Err(ActionError::NoChange(format!(
                    "the {what} is already {}",
                    if pause { "paused" } else { "running" }
                )));
            }
            changes.push(format!("paused {now} → {pause}"));
            p.set(paused, json!(pause));
            Some(if pause { Action::Resume } else { Action::Pause })
        }
        Action::SetImage { images } => {
            let paths = paths?;
            let containers = present(object, &format!("{}/spec/containers", paths.template))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let mut new_template = present(object, paths.template)
                .cloned()
                .unwrap_or(Value::Null);
            let mut old_images = Vec::new();
            for (container, image) in images {
                if image.trim().is_empty() {
                    return Err(ActionError::Invalid(format!(
                        "image for container {container} is empty"
                    )));
                }
                let Some(i) = containers.iter().position(|c| c["name"] == *container) else {
                    let names: Vec<&str> = containers
                        .iter()
                        .filter_map(|c| c["name"].as_str())
                        .collect();
                    return Err(ActionError::Invalid(format!(
                        "{} has no container {container:?} (containers: {})",
                        target.describe(),
                        names.join(", ")
                    )));
                };
                let old = containers[i]["image"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                if old == *image {
                    continue;
                }
                changes.push(format!("{container}: {old} → {image}"));
                if let Some(slot) = new_template.pointer_mut(&format!("/spec/containers/{i}/image"))
                {
                    *slot = json!(image);
                }
                p.set(
                    &format!("{}/spec/containers/{i}/image", paths.template),
                    json!(image),
                );
                old_images.push((container.clone(), old));
            }
            if old_images.is_empty() {
                return Err(ActionError::NoChange(
                    "the images are already set".to_owned(),
                ));
            }
            bump_rollout_id(&mut p, object, &new_template, &mut changes, &mut notes);
            Some(Action::SetImage { images: old_images })
        }
        Action::Undo { to_revision } => {
            let paths = paths?;
            let current = present(object, paths.template)
                .cloned()
                .unwrap_or(Value::Null);
            let rev = undo_target(target, &state.revisions, &current, *to_revision)?;
            changes.push(format!(
                "template → the template of {} (revision {})",
                rev.name, rev.number
            ));
            changes.extend(template_diff(&current, &rev.template));
            let partition = present(object, paths.partition)
                .and_then(|v| serde_json::from_value(v.clone()).ok());
            let held = calculate_partition_replicas(partition.as_ref(), Some(replicas(object)))
                .unwrap_or(0);
            if held > 0 {
                notes.push(format!(
                    "the partition ({held}) still applies after the undo: up to {held} pod(s) keep \
                     the revision they are on until the partition is lowered"
                ));
            }
            p.set(paths.template, rev.template.clone());
            bump_rollout_id(&mut p, object, &rev.template, &mut changes, &mut notes);
            Some(Action::SetTemplate {
                template: current,
                revision: None,
            })
        }
        Action::SetTemplate { template, revision } => {
            let paths = paths?;
            let current = present(object, paths.template)
                .cloned()
                .unwrap_or(Value::Null);
            if current == *template {
                return Err(ActionError::NoChange(
                    "the template is already that".to_owned(),
                ));
            }
            changes.push(match revision {
                Some(r) => format!("template → the template of {r}"),
                None => "template → the template it had before".to_owned(),
            });
            changes.extend(template_diff(&current, template));
            p.set(paths.template, template.clone());
            bump_rollout_id(&mut p, object, template, &mut changes, &mut notes);
            Some(Action::SetTemplate {
                template: current,
                revision: None,
            })
        }
        Action::Scale { replicas: n, pods } => {
            let paths = paths?;
            let Some(path) = paths.replicas else {
                return Err(ActionError::NotApplicable {
                    kind: target.describe(),
                    what: "replica count (it runs one pod per node)".to_owned(),
                });
            };
            if *n < 0 {
                return Err(ActionError::Invalid(format!(
                    "replicas {n} is negative: it must be 0 or more"
                )));
            }
            let old = replicas(object);
            if !pods.is_empty() {
                let Some(to_delete) = paths.pods_to_delete else {
                    return Err(ActionError::NotApplicable {
                        kind: target.describe(),
                        what: "podsToDelete (only CloneSets delete named pods)".to_owned(),
                    });
                };
                let mut list: Vec<String> = present(object, to_delete)
                    .and_then(|v| serde_json::from_value(v.clone()).ok())
                    .unwrap_or_default();
                for pod in pods {
                    if !list.contains(pod) {
                        list.push(pod.clone());
                    }
                }
                changes.push(format!("podsToDelete += {}", pods.join(", ")));
                p.set(to_delete, json!(list));
            } else if old == *n {
                return Err(ActionError::NoChange(format!("replicas are already {n}")));
            }
            if old != *n {
                changes.push(format!("replicas {old} → {n}"));
                p.set(path, json!(n));
            }
            Some(Action::Scale {
                replicas: old,
                pods: Vec::new(),
            })
        }
    };
    Ok(Prepared {
        target: target.clone(),
        action: action.clone(),
        request: ApiRequest {
            verb: "PATCH".to_owned(),
            path: api_path(target, state),
            content_type: "application/json-patch+json".to_owned(),
            body: Value::Array(p.ops),
        },
        inverse,
        changes,
        notes,
        then: Vec::new(),
    })
}

/// The JSON pointer of the workload's `rollouts.kruise.io/rollout-id` annotation.
pub const ROLLOUT_ID_PATH: &str = "/metadata/annotations/rollouts.kruise.io~1rollout-id";

/// A template change on a workload with a non-empty `rollouts.kruise.io/rollout-id` annotation
/// changes it in the same write: with it unchanged, a Kruise Rollout's webhook lets the change
/// through without a release (research §3.2, §7.3).
fn bump_rollout_id(
    p: &mut Patcher<'_>,
    object: &Value,
    template: &Value,
    changes: &mut Vec<String>,
    notes: &mut Vec<String>,
) {
    let Some(old) = present(object, ROLLOUT_ID_PATH)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    else {
        return;
    };
    let new = super::rollout::next_rollout_id(old, template);
    changes.push(format!("rollout-id {old} → {new}"));
    notes.push(
        "the rollouts.kruise.io/rollout-id annotation changes in the same write: a Kruise \
         Rollout takes a template change as a release only with a new rollout-id"
            .to_owned(),
    );
    p.set(ROLLOUT_ID_PATH, json!(new));
}

fn validate_partition(
    value: &k8s_openapi::apimachinery::pkg::util::intstr::IntOrString,
    paths: &Paths,
    object: &Value,
) -> Result<Value, ActionError> {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    let replicas = paths.replicas.map(|_| replicas(object));
    let text = intstr(value);
    let parsed = crate::kruise::intstr::parse_partition_input(&text, replicas)
        .map_err(|e| ActionError::Invalid(e.to_string()))?;
    match parsed {
        IntOrString::String(s) if !paths.partition_percent => Err(ActionError::Invalid(format!(
            "partition {s:?}: this kind's partition is a number of pods, not a percent"
        ))),
        IntOrString::String(s) => Ok(json!(s)),
        IntOrString::Int(i) => Ok(json!(i)),
    }
}

/// The revision an undo goes to: `to` by number, or the newest whose template differs from the
/// current one.
pub(super) fn undo_target<'r>(
    target: &Target,
    revisions: &'r [RevisionInfo],
    current: &Value,
    to: Option<i64>,
) -> Result<&'r RevisionInfo, ActionError> {
    let mut sorted: Vec<&RevisionInfo> = revisions.iter().collect();
    sorted.sort_by_key(|r| std::cmp::Reverse(r.number));
    match to {
        Some(n) => {
            let rev = sorted.iter().find(|r| r.number == n).ok_or_else(|| {
                let known: Vec<String> =
                    sorted.iter().rev().map(|r| r.number.to_string()).collect();
                ActionError::Invalid(format!(
                    "{} has no revision {n} (revisions: {})",
                    target.describe(),
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ))
            })?;
            if rev.template == *current {
                return Err(ActionError::NoChange(format!(
                    "revision {n} ({}) is the current template",
                    rev.name
                )));
            }
            Ok(rev)
        }
        None => sorted
            .into_iter()
            .find(|r| r.template != *current)
            .ok_or_else(|| {
                ActionError::NoChange(format!(
                    "{} has no previous revision to roll back to",
                    target.describe()
                ))
            }),
    }
}

/// The template fields that differ, one line each (`containers[nginx].image: a → b`).
pub fn template_diff(old: &Value, new: &Value) -> Vec<String> {
    let mut out = Vec::new();
    diff_into("", old, new, &mut out);
    out
}

fn diff_into(at: &str, old: &Value, new: &Value, out: &mut Vec<String>) {
    if old == new {
        return;
    }
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let path = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                diff_into(
                    &path,
                    a.get(k).unwrap_or(&Value::Null),
                    b.get(k).unwrap_or(&Value::Null),
                    out,
                );
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                // Containers are named: show the name rather than the index.
                let label = x["name"]
                    .as_str()
                    .filter(|n| y["name"].as_str() == Some(*n))
                    .map_or_else(|| i.to_string(), str::to_owned);
                diff_into(&format!("{at}[{label}]"), x, y, out);
            }
        }
        _ => out.push(format!("{at}: {} → {}", shown(Some(old)), shown(Some(new)))),
    }
}

/// What a conflict means for a prepared action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recheck {
    /// The fields it is about still hold what they held: prepare again on the fresh object.
    Same,
    /// Someone changed them: stop, and say what changed.
    Changed(String),
}

/// Compares the fields `prepared` pinned between `before` (what it was prepared on) and `fresh`
/// (the object now). The resourceVersion alone moving is not a change of meaning.
pub fn recheck(prepared: &Prepared, before: &Value, fresh: &Value) -> Recheck {
    let mut changed = Vec::new();
    for op in prepared.request.body.as_array().into_iter().flatten() {
        if op["op"] != "test" {
            continue;
        }
        let Some(path) = op["path"].as_str() else {
            continue;
        };
        if path == RV {
            continue;
        }
        let (a, b) = (before.pointer(path), fresh.pointer(path));
        if a != b {
            let field = path.trim_start_matches("/spec/").replace('/', ".");
            changed.push(format!("{field} changed from {} to {}", shown(a), shown(b)));
        }
    }
    // Fields added under a resourceVersion pin: they must still be absent.
    for op in prepared.request.body.as_array().into_iter().flatten() {
        if op["op"] != "add" {
            continue;
        }
        let Some(path) = op["path"].as_str() else {
            continue;
        };
        if present(before, path).is_none() && present(fresh, path).is_some() {
            let field = path.trim_start_matches("/spec/").replace('/', ".");
            changed.push(format!("{field} was set to {}", shown(fresh.pointer(path))));
        }
    }
    if changed.is_empty() {
        Recheck::Same
    } else {
        Recheck::Changed(format!(
            "{} changed meanwhile: {}",
            prepared.target.describe(),
            changed.join("; ")
        ))
    }
}
