//! Server-side apply, as upstream's field manager runs it: the configuration must name the
//! resource's kind at the version written through and may not carry managedFields; it is
//! validated against the schema, merged into the live object, what its manager applied last time
//! and no longer applies (and nobody else owns) is pruned, and a field another manager set to
//! another value is a conflict unless forced. `kubectl`'s server-side apply may take over what
//! its client-side apply set (the last-applied annotation), and keeps that annotation current.

use serde_json::{Value, json};

use super::{
    APPLY, Entry, Managed, bare, decode, encode, fieldpath, meta, record_update, reset_fields,
    root_type, strip_set,
    types::Ty,
    walk::{self, Comparison},
    zero_object,
};
use crate::{
    kruise::sidecarset::gojson::encode_any,
    server::{resources::ResourceInfo, status::ApiError},
};

/// kubectl's client-side apply annotation.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The manager owning an object's fields before its first apply.
const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// `group/version, Kind=kind` of an object, as Go prints a GroupVersionKind (an apiVersion that
/// does not parse has no group or version).
fn gvk(obj: &Value) -> (String, String, String) {
    let av = obj["apiVersion"].as_str().unwrap_or("");
    let (g, v) = match av.split('/').collect::<Vec<_>>().as_slice() {
        [v] => (String::new(), (*v).to_string()),
        [g, v] => ((*g).to_string(), (*v).to_string()),
        _ => (String::new(), String::new()),
    };
    (g, v, obj["kind"].as_str().unwrap_or("").to_string())
}

fn internal(message: String) -> ApiError {
    ApiError::new(500, "", message)
}

/// `live` (None: the object does not exist yet) with `config` applied by `manager` through
/// `sub`, its managedFields updated.
pub fn apply(
    res: &ResourceInfo,
    sub: Option<&str>,
    live: Option<&Value>,
    config: &Value,
    manager: &str,
    force: bool,
) -> Result<Value, ApiError> {
    let sub = sub.unwrap_or("");
    let (g, v, k) = gvk(config);
    if (g.as_str(), v.as_str(), k.as_str()) != (&res.group, &res.version, &res.kind) {
        return Err(ApiError::bad_request(format!(
            "invalid object type: {g}/{v}, Kind={k}"
        )));
    }
    if config["metadata"]
        .get("managedFields")
        .is_some_and(|m| !m.is_null())
    {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    let ty = root_type(res);
    walk::validate(ty, config).map_err(|e| {
        internal(format!(
            "failed to create typed patch object ({}/{}; {g}/{v}, Kind={k}): {e}",
            config["metadata"]["namespace"].as_str().unwrap_or(""),
            config["metadata"]["name"].as_str().unwrap_or(""),
        ))
    })?;
    let live_bare = live.map(bare).unwrap_or_else(|| json!({}));
    let mut managed = live.and_then(decode).unwrap_or_default();
    if managed.is_empty() && live.is_some() {
        // Whatever the object holds belongs to one updater before its first apply.
        let _ = record_update(
            res,
            sub,
            &zero_object(res),
            &live_bare,
            &mut managed,
            BEFORE_FIRST_APPLY,
        );
    }
    let mut result = match run(res, sub, &live_bare, config, &managed, manager, force) {
        Err(Failure::Conflicts(conflicts)) if manager.starts_with("kubectl") => {
            match allowed_by_last_applied(ty, live, &live_bare) {
                Some(allowed) => {
                    let rest: Vec<Conflict> = conflicts
                        .into_iter()
                        .filter(|c| !allowed.has(&c.path))
                        .collect();
                    if rest.is_empty() {
                        run(res, sub, &live_bare, config, &managed, manager, true)
                    } else {
                        Err(Failure::Conflicts(rest))
                    }
                }
                None => Err(Failure::Conflicts(conflicts)),
            }
        }
        other => other,
    }
    .map_err(Failure::into_error)?;
    if manager == "kubectl" && !last_applied(&result).is_empty() {
        let mut own = config.clone();
        if let Some(a) = own["metadata"]
            .get_mut("annotations")
            .and_then(Value::as_object_mut)
        {
            a.remove(LAST_APPLIED);
        }
        let text = format!("{}\n", encode_any(&own));
        if let Some(a) = result["metadata"]
            .get_mut("annotations")
            .and_then(Value::as_object_mut)
        {
            a.insert(LAST_APPLIED.into(), json!(text));
        }
    }
    if let Some(l) = live {
        keep_times_of_a_noop(l, &mut result);
    }
    Ok(result)
}

fn last_applied(obj: &Value) -> &str {
    obj["metadata"]["annotations"][LAST_APPLIED]
        .as_str()
        .unwrap_or("")
}

/// An apply that changes nothing but the time of its entry keeps the live managedFields (and so
/// writes nothing), like upstream's IgnoreManagedFieldsTimestampsTransformer.
fn keep_times_of_a_noop(live: &Value, result: &mut Value) {
    if bare(live) != bare(result) {
        return;
    }
    let untimed = |v: &Value| {
        let mut m = decode(v).unwrap_or_default();
        for e in &mut m {
            e.time = None;
        }
        m
    };
    if untimed(live) == untimed(result)
        && let (Some(m), Some(fields)) = (
            result.get_mut("metadata").and_then(Value::as_object_mut),
            live["metadata"].get("managedFields"),
        )
    {
        m.insert("managedFields".into(), fields.clone());
    }
}

/// One field another manager owns and the apply would change.
#[derive(Debug, Clone)]
struct Conflict {
    owner: Entry,
    path: Vec<fieldpath::Pe>,
}

enum Failure {
    Conflicts(Vec<Conflict>),
    Internal(String),
}

impl Failure {
    fn into_error(self) -> ApiError {
        match self {
            Failure::Internal(m) => internal(m),
            Failure::Conflicts(c) => conflict_error(c),
        }
    }
}

fn conflict_error(mut conflicts: Vec<Conflict>) -> ApiError {
    conflicts.sort_by(|a, b| (a.owner.identifier(), &a.path).cmp(&(b.owner.identifier(), &b.path)));
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|c| {
            json!({"reason": "FieldManagerConflict",
                "message": format!("conflict with {}", c.owner.printed()),
                "field": fieldpath::display_path(&c.path)})
        })
        .collect();
    let message = match conflicts.as_slice() {
        [one] => format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            one.owner.printed(),
            fieldpath::display_path(&one.path)
        ),
        many => {
            let mut lines: Vec<String> = Vec::new();
            let mut last = String::new();
            for c in many {
                if c.owner.identifier() != last {
                    last = c.owner.identifier();
                    lines.push(format!("conflicts with {}:", c.owner.printed()));
                }
                lines.push(format!("- {}", fieldpath::display_path(&c.path)));
            }
            format!(
                "Apply failed with {} conflicts: {}",
                many.len(),
                lines.join("\n")
            )
        }
    };
    let mut e = ApiError::new(409, "Conflict", message);
    e.details = Some(Box::new(json!({"causes": causes})));
    e
}

/// The fields kubectl's client-side apply set that still hold what it set: the ones its
/// server-side apply may take over (None without the annotation).
fn allowed_by_last_applied(
    ty: Ty,
    live: Option<&Value>,
    live_bare: &Value,
) -> Option<fieldpath::Set> {
    let text = last_applied(live?);
    if text.is_empty() {
        return None;
    }
    let before: Value = serde_json::from_str(text).ok().filter(Value::is_object)?;
    let set = walk::to_set(ty, &before).ok()?;
    let cmp = walk::compare(ty, &before, live_bare).ok()?;
    Some(set.difference(&cmp.modified))
}

/// The merge, prune and ownership update of one apply.
fn run(
    res: &ResourceInfo,
    sub: &str,
    live: &Value,
    config: &Value,
    managed: &Managed,
    manager: &str,
    force: bool,
) -> Result<Value, Failure> {
    let ty = root_type(res);
    let reset = reset_fields(res, sub);
    let version = res.api_version();
    let mut managed = managed.clone();
    let merged = walk::merge(ty, live, config)
        .map_err(|e| Failure::Internal(format!("failed to merge config: {e}")))?;
    let set = walk::to_set(ty, config)
        .map_err(|e| Failure::Internal(format!("failed to get field set: {e}")))?
        .recursive_difference(&reset);
    let last = managed
        .iter()
        .find(|e| e.is(manager, APPLY, &version, sub))
        .map(|e| e.set.clone())
        .unwrap_or_default();
    managed.retain(|e| !e.is(manager, APPLY, &version, sub));
    managed.push(Entry {
        manager: manager.to_string(),
        operation: APPLY.into(),
        api_version: version.clone(),
        subresource: sub.to_string(),
        time: None,
        set,
    });
    let applier = managed.len() - 1;
    let new = prune(ty, &merged, &managed, &last)
        .map_err(|e| Failure::Internal(format!("failed to prune fields: {e}")))?;
    let c = walk::compare(ty, live, &new)
        .map_err(|e| Failure::Internal(format!("failed to compare objects: {e}")))?;
    let c = Comparison {
        removed: c.removed.recursive_difference(&reset),
        modified: c.modified.recursive_difference(&reset),
        added: c.added.recursive_difference(&reset),
    };
    let changed = c.modified.union(&c.added);
    let mut conflicts = Vec::new();
    for (i, e) in managed.iter().enumerate() {
        if i == applier {
            continue;
        }
        for path in e.set.intersection(&changed).paths() {
            conflicts.push(Conflict {
                owner: e.clone(),
                path,
            });
        }
    }
    if !force && !conflicts.is_empty() {
        return Err(Failure::Conflicts(conflicts));
    }
    for (i, e) in managed.iter_mut().enumerate() {
        if i != applier {
            e.set = e.set.difference(&changed).difference(&c.removed);
        }
    }
    let applied = &mut managed[applier];
    applied.set = applied.set.difference(&strip_set());
    applied.time = Some(meta::now());
    let mut out = new;
    encode(&mut out, managed);
    Ok(out)
}

/// Removes from `merged` what the applier owned before (`last`) and no longer applies, unless
/// another manager owns it (structured-merge-diff's prune, with its add-back of owned and
/// dangling items).
fn prune(
    ty: Ty,
    merged: &Value,
    managed: &Managed,
    last: &fieldpath::Set,
) -> Result<Value, String> {
    if last.is_empty() {
        return Ok(merged.clone());
    }
    let named = |s: &fieldpath::Set| walk::ensure_named(Some(ty), s);
    let remove =
        |s: &fieldpath::Set| walk::remove_items(ty, merged, s).unwrap_or_else(|| json!({}));
    let last = named(last);
    let pruned = remove(&last);
    let owned = managed
        .iter()
        .fold(fieldpath::Set::new(), |acc, e| acc.union(&named(&e.set)));
    let merged_set = named(&walk::to_set(ty, merged)?);
    let pruned_set = named(&walk::to_set(ty, &pruned)?);
    let pruned = remove(&merged_set.difference(&pruned_set.union(&owned)));
    let pruned_set = named(&walk::to_set(ty, &pruned)?);
    Ok(remove(
        &merged_set.difference(&pruned_set).intersection(&last),
    ))
}
