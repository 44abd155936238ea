//! `metadata.managedFields`, kept as the real server's field manager keeps them: every write
//! records which fields its manager set (operation `Update`, the manager being the
//! `fieldManager` parameter or the User-Agent's program name, `unknown` without either), and
//! server-side apply ([`apply`]) merges a configuration, prunes what its manager stopped applying
//! and refuses to take fields another manager set to another value unless forced.
//!
//! The sets are structured-merge-diff's, in upstream's FieldsV1 spelling ([`fieldpath`]), over
//! the kind's schema ([`types`]); the walks are in [`walk`].

mod apply;
mod builtin_types;
pub mod fieldpath;
pub mod types;
pub mod walk;

use std::{collections::HashMap, sync::OnceLock};

use serde_json::{Map, Value, json};

pub use apply::apply;
use fieldpath::Set;
use types::Ty;

use super::{http::Req, meta, resources::ResourceInfo};

pub const APPLY: &str = "Apply";
pub const UPDATE: &str = "Update";

/// The manager of a non-apply write (upstream's `managerOrUserAgent`): the `fieldManager`
/// parameter, else what precedes the first `/` of the User-Agent (printable characters only, at
/// most 128 bytes). An empty name is recorded as `unknown`.
pub fn manager_of(req: &Req) -> String {
    if let Some(m) = req.q("fieldManager") {
        return m.to_string();
    }
    let ua = req.header(http::header::USER_AGENT);
    let mut out = String::new();
    for c in ua.split('/').next().unwrap_or("").chars() {
        if c.is_control() {
            continue;
        }
        if out.len() + c.len_utf8() > 128 {
            break;
        }
        out.push(c);
    }
    out
}

/// One managedFields entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub manager: String,
    pub operation: String,
    pub api_version: String,
    pub subresource: String,
    pub time: Option<String>,
    pub set: Set,
}

impl Entry {
    /// Whether this entry is the one (manager, operation, subresource[, apiVersion for updates])
    /// names; an applier is one entry whatever version it applied through.
    fn is(&self, manager: &str, operation: &str, api_version: &str, sub: &str) -> bool {
        self.manager == manager
            && self.operation == operation
            && self.subresource == sub
            && (operation == APPLY || self.api_version == api_version)
    }

    /// The manager as upstream names it in conflicts: `"m"`, `"m" with subresource "status"`,
    /// `"m" using v1` (an updater).
    pub fn printed(&self) -> String {
        let mut s = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            s.push_str(&format!(" with subresource {:?}", self.subresource));
        }
        if self.operation == UPDATE {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }

    /// The identifier upstream sorts managers by (`BuildManagerIdentifier`).
    pub fn identifier(&self) -> String {
        let mut m = Map::new();
        m.insert("manager".into(), json!(self.manager));
        m.insert("operation".into(), json!(self.operation));
        if self.operation == UPDATE && !self.api_version.is_empty() {
            m.insert("apiVersion".into(), json!(self.api_version));
        }
        if !self.subresource.is_empty() {
            m.insert("subresource".into(), json!(self.subresource));
        }
        Value::Object(m).to_string()
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("manager".into(), json!(self.manager));
        m.insert("operation".into(), json!(self.operation));
        m.insert("apiVersion".into(), json!(self.api_version));
        if let Some(t) = &self.time {
            m.insert("time".into(), json!(t));
        }
        m.insert("fieldsType".into(), json!("FieldsV1"));
        m.insert("fieldsV1".into(), self.set.to_fields_v1());
        if !self.subresource.is_empty() {
            m.insert("subresource".into(), json!(self.subresource));
        }
        Value::Object(m)
    }

    fn from_json(v: &Value) -> Option<Entry> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let operation = s("operation");
        if !matches!(operation.as_str(), APPLY | UPDATE)
            || s("apiVersion").is_empty()
            || s("fieldsType") != "FieldsV1"
        {
            return None;
        }
        let set = match v.get("fieldsV1") {
            Some(f) => Set::from_fields_v1(f)?,
            None => Set::new(),
        };
        Some(Entry {
            manager: s("manager"),
            operation,
            api_version: s("apiVersion"),
            subresource: s("subresource"),
            time: v.get("time").and_then(Value::as_str).map(str::to_string),
            set,
        })
    }
}

/// The decoded managedFields of an object.
pub type Managed = Vec<Entry>;

/// Decodes `metadata.managedFields` (None when it is malformed); a later duplicate of an entry
/// replaces the earlier one.
pub fn decode(obj: &Value) -> Option<Managed> {
    let mut out: Managed = Vec::new();
    let Some(list) = obj["metadata"]
        .get("managedFields")
        .filter(|v| !v.is_null())
    else {
        return Some(out);
    };
    for v in list.as_array()? {
        let e = Entry::from_json(v)?;
        out.retain(|x| !x.is(&e.manager, &e.operation, &e.api_version, &e.subresource));
        out.push(e);
    }
    Some(out)
}

/// Writes `managed` into `obj` (an empty list when there is nothing: the store drops it), in
/// upstream's order: Apply before Update, then by time, manager, apiVersion, subresource.
pub fn encode(obj: &mut Value, mut managed: Managed) {
    managed.retain(|e| !e.set.is_empty());
    managed.sort_by(|a, b| {
        (
            &a.operation,
            &a.time,
            &a.manager,
            &a.api_version,
            &a.subresource,
        )
            .cmp(&(
                &b.operation,
                &b.time,
                &b.manager,
                &b.api_version,
                &b.subresource,
            ))
    });
    let list: Vec<Value> = managed.iter().map(Entry::to_json).collect();
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.insert("managedFields".into(), Value::Array(list));
    }
}

/// The type an object of `res` is walked with.
pub fn root_type(res: &ResourceInfo) -> Ty<'_> {
    match (&res.schema, &res.definition) {
        (Some(s), _) => Ty::Crd {
            schema: s,
            root: true,
        },
        (None, Some(d)) => types::builtin_root(d),
        (None, None) => Ty::Deduced,
    }
}

/// The object a create is compared with: a built-in kind's zero Go struct (its value structs
/// present, so a create owns `spec.replicas` but not `spec`), an empty object for a custom
/// resource.
pub fn zero_object(res: &ResourceInfo) -> Value {
    static ZEROS: OnceLock<HashMap<&'static str, Value>> = OnceLock::new();
    let zeros = ZEROS.get_or_init(|| {
        builtin_types::ZERO_OBJECTS
            .iter()
            .filter_map(|(d, z)| Some((*d, serde_json::from_str(z).ok()?)))
            .collect()
    });
    res.definition
        .as_deref()
        .filter(|_| res.schema.is_none())
        .and_then(|d| zeros.get(d).cloned())
        .unwrap_or_else(|| json!({}))
}

/// The fields a write through `sub` does not own (upstream's reset fields): the status through
/// the main resource of a kind with a status subresource, the spec through `/status`.
fn reset_fields(res: &ResourceInfo, sub: &str) -> Set {
    let mut s = Set::new();
    match sub {
        "" if res.status => s.insert(&[fieldpath::field("status")]),
        "status" => s.insert(&[fieldpath::field("spec")]),
        _ => {}
    }
    s
}

/// The fields no manager owns (upstream's stripMeta): apiVersion, kind and the metadata the
/// server sets.
fn strip_set() -> Set {
    let mut s = Set::new();
    s.insert(&[fieldpath::field("apiVersion")]);
    s.insert(&[fieldpath::field("kind")]);
    s.insert(&[fieldpath::field("metadata")]);
    for f in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        s.insert(&[fieldpath::field("metadata"), fieldpath::field(f)]);
    }
    s
}

/// `obj` without managedFields (they are not compared or merged).
fn bare(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    v
}

fn has_uid(obj: &Value) -> bool {
    obj["metadata"]["uid"]
        .as_str()
        .is_some_and(|u| !u.is_empty())
}

/// The most update managers an object keeps; older ones merge into `ancient-changes`.
const MAX_UPDATE_MANAGERS: usize = 10;

fn cap_update_managers(managed: &mut Managed) {
    let mut order: Vec<usize> = (0..managed.len())
        .filter(|i| managed[*i].operation == UPDATE)
        .collect();
    if order.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    order.sort_by(|a, b| {
        (&managed[*a].time, managed[*a].identifier())
            .cmp(&(&managed[*b].time, managed[*b].identifier()))
    });
    let mut slots: Vec<Option<Entry>> = managed.drain(..).map(Some).collect();
    let mut first_of: Vec<(String, usize)> = Vec::new();
    let mut length = order.len();
    for i in order {
        if length <= MAX_UPDATE_MANAGERS {
            break;
        }
        let Some(e) = slots[i].clone() else { continue };
        let Some(&(_, first)) = first_of.iter().find(|(v, _)| *v == e.api_version) else {
            first_of.push((e.api_version.clone(), i));
            continue;
        };
        let bucket = slots.iter().position(|s| {
            s.as_ref()
                .is_some_and(|b| b.is(ANCIENT, UPDATE, &e.api_version, ""))
        });
        let bucket = match bucket {
            Some(b) => b,
            None => {
                if let Some(f) = slots[first].as_mut() {
                    f.manager = ANCIENT.into();
                    f.subresource.clear();
                }
                first
            }
        };
        if let Some(b) = slots[bucket].as_mut() {
            b.set = e.set.union(&b.set);
            b.time = e.time.clone();
        }
        slots[i] = None;
        length -= 1;
    }
    *managed = slots.into_iter().flatten().collect();
}

/// The entry older update managers are merged into.
const ANCIENT: &str = "ancient-changes";

/// The Update half of the field manager over decoded entries: who set what between `live` and
/// `new` (both without managedFields). Err: the objects do not fit the schema (the caller keeps
/// the live managedFields).
fn record_update(
    res: &ResourceInfo,
    sub: &str,
    live: &Value,
    new: &Value,
    managed: &mut Managed,
    manager: &str,
) -> Result<(), String> {
    let ty = root_type(res);
    let reset = reset_fields(res, sub);
    let c = walk::compare(ty, live, new)?;
    let modified = c.modified.recursive_difference(&reset);
    let added = c.added.recursive_difference(&reset);
    let removed = c.removed.recursive_difference(&reset);
    let changed = modified.union(&added);
    for e in managed.iter_mut() {
        e.set = e.set.difference(&changed).difference(&removed);
    }
    managed.retain(|e| !e.set.is_empty());
    let mine = changed.difference(&strip_set());
    if mine.is_empty() {
        return Ok(());
    }
    let version = res.api_version();
    let name = if manager.is_empty() {
        "unknown"
    } else {
        manager
    };
    let now = Some(meta::now());
    match managed
        .iter_mut()
        .find(|e| e.is(name, UPDATE, &version, sub))
    {
        Some(e) => {
            e.set = mine.union(&e.set);
            e.time = now;
        }
        None => managed.push(Entry {
            manager: name.to_string(),
            operation: UPDATE.into(),
            api_version: version,
            subresource: sub.to_string(),
            time: now,
            set: mine,
        }),
    }
    cap_update_managers(managed);
    Ok(())
}

/// Records a create (`live` None), update or non-apply patch by `manager` through `sub`
/// (`status`, `scale`; None for the object itself) in `new`'s managedFields. An object that has
/// no managedFields is not tracked by updates (only creates and applies start tracking); a
/// client may replace the entries (sending its own) or clear them (sending `[]`) through the
/// object itself, never through a subresource.
pub fn update(
    res: &ResourceInfo,
    sub: Option<&str>,
    live: Option<&Value>,
    new: &mut Value,
    manager: &str,
) {
    let sub = sub.unwrap_or("");
    let live_managed = live.and_then(decode).unwrap_or_default();
    let sent = new["metadata"].get("managedFields").cloned();
    let reset = match &sent {
        Some(Value::Array(a)) => a.is_empty() || (a.len() == 1 && a[0] == json!({})),
        _ => false,
    };
    let mut managed = if !sub.is_empty() || sent.is_none() || sent == Some(Value::Null) {
        live_managed.clone()
    } else if reset {
        Vec::new()
    } else {
        match decode(new) {
            Some(m) if !m.is_empty() => m,
            _ => live_managed.clone(),
        }
    };
    if managed.is_empty() && live.is_some_and(has_uid) {
        encode(new, Vec::new());
        return;
    }
    let live_bare = live.map(bare).unwrap_or_else(|| zero_object(res));
    match record_update(res, sub, &live_bare, &bare(new), &mut managed, manager) {
        Ok(()) => encode(new, managed),
        Err(_) => encode(new, live_managed),
    }
}

#[cfg(test)]
mod tests;
