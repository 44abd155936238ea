//! The store's writes: insert, replace, removal (see `delete.rs` for deletes), and the events
//! and indexes each write maintains.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{CRD_KEY, EventType, Inner, NS_KEY, Obj, ObjKey, Store, StoreEvent};
use crate::server::{
    meta::{self, meta_mut},
    resources::ResourceInfo,
    status::ApiError,
};

impl Store {
    pub(super) fn publish(g: &mut Inner, ev: StoreEvent) {
        let ev = Arc::new(ev);
        let (max_events, max_bytes) = (g.window_cap, g.window_max_bytes);
        g.subscribers.retain(|s| {
            let wanted = s.key.as_ref().is_none_or(|k| *k == ev.key)
                && s.namespace.as_ref().is_none_or(|n| *n == ev.namespace);
            if !wanted {
                return true;
            }
            // A client's watch that lags by more than the window holds is closed, not queued
            // for without bound.
            let keep = s
                .lag
                .as_ref()
                .is_none_or(|l| l.queued(&ev, max_events, max_bytes));
            keep && s.tx.send(ev.clone()).is_ok()
        });
        g.window_bytes += ev.obj.weight();
        g.window.push_back(ev);
        g.trim_window();
    }

    pub(super) fn index(
        g: &mut Inner,
        key: &Arc<str>,
        ns: &str,
        name: &str,
        old: Option<&Value>,
        new: Option<&Value>,
    ) {
        let ok: ObjKey = (key.clone(), ns.to_string(), name.to_string());
        if let Some(o) = old {
            for u in meta::owner_uids(o) {
                if let Some(set) = g.dependents.get_mut(&u) {
                    set.remove(&ok);
                    if set.is_empty() {
                        g.dependents.remove(&u);
                    }
                }
            }
            if new.is_none()
                && let Some(uid) = o["metadata"]["uid"].as_str()
            {
                g.uids.remove(uid);
            }
        }
        if let Some(n) = new {
            for u in meta::owner_uids(n) {
                g.dependents.entry(u).or_default().insert(ok.clone());
            }
            if let Some(uid) = n["metadata"]["uid"].as_str() {
                g.uids.insert(uid.to_string(), ok);
            }
        }
    }

    fn after_write(&self, g: &mut Inner, key: &Arc<str>) {
        if &**key == CRD_KEY {
            let crds: Vec<Value> = g
                .tables
                .get(key)
                .map(|t| t.values().map(|o| o.value()).collect())
                .unwrap_or_default();
            let mut reg = (*g.registry).clone();
            reg.rebuild(self.builtin.clone(), &crds);
            g.registry = Arc::new(reg);
        }
    }

    /// A new object as the store would keep it, without storing it (what a dry-run create
    /// answers, and what `insert` stores): its name resolved (generateName), namespace, uid,
    /// creationTimestamp, generation where the kind keeps one, and type meta.
    pub fn stamp_new(
        res: &ResourceInfo,
        ns: &str,
        mut v: Value,
    ) -> Result<(String, Value), ApiError> {
        let meta = meta_mut(&mut v)
            .ok_or_else(|| ApiError::bad_request("the object is not a JSON object"))?;
        let name = meta::resolve_name_for(&res.group, meta).map_err(|e| {
            let given = meta.get("name").and_then(Value::as_str).unwrap_or("");
            ApiError::invalid(&res.kind, &res.group, given, &e)
        })?;
        let nsk = Self::nskey(res, ns);
        meta.insert("name".into(), json!(name));
        if res.namespaced {
            meta.insert("namespace".into(), json!(nsk));
        } else {
            meta.remove("namespace");
        }
        meta.insert("uid".into(), json!(meta::new_uid()));
        meta.insert("creationTimestamp".into(), json!(meta::now()));
        if res.tracks_generation() {
            meta.insert("generation".into(), json!(1));
        } else {
            meta.remove("generation");
        }
        meta.remove("deletionTimestamp");
        meta.remove("deletionGracePeriodSeconds");
        keep_managed_fields(meta, None);
        meta.remove("selfLink");
        meta.remove("resourceVersion");
        if let Some(o) = v.as_object_mut() {
            o.insert("apiVersion".into(), json!(res.api_version()));
            o.insert("kind".into(), json!(res.kind));
        }
        if &*res.key == CRD_KEY {
            crd_status(&mut v);
        }
        if &*res.key == NS_KEY {
            meta::set_path(&mut v, ".status.phase", json!("Active"));
        }
        Ok((name, v))
    }

    /// Store a new object: assigns name (generateName), uid, creationTimestamp, generation and rv.
    pub fn insert(&self, res: &ResourceInfo, ns: &str, v: Value) -> Result<Arc<Obj>, ApiError> {
        let (name, v) = Self::stamp_new(res, ns, v)?;
        let nsk = Self::nskey(res, ns);
        let mut g = self.lock();
        if res.namespaced
            && !g
                .tables
                .get(NS_KEY)
                .is_some_and(|t| t.contains_key(&(String::new(), nsk.clone())))
        {
            return Err(ApiError::not_found("namespaces", "", &nsk));
        }
        if res.namespaced
            && g.tables
                .get(NS_KEY)
                .and_then(|t| t.get(&(String::new(), nsk.clone())))
                .is_some_and(|n| n.head["metadata"]["deletionTimestamp"].is_string())
        {
            return Err(ApiError::forbidden(format!(
                "{} \"{name}\" is forbidden: unable to create new content in namespace {nsk} because it is being terminated",
                res.plural
            )));
        }
        let table = g.tables.entry(res.key.clone()).or_default();
        if table.contains_key(&(nsk.clone(), name.clone())) {
            return Err(ApiError::already_exists(&res.plural, &res.group, &name));
        }
        Ok(self.commit(&mut g, res, nsk, &name, None, v))
    }

    /// Replace an object. A resourceVersion in `v` must match (409 Conflict otherwise). Identity
    /// fields are kept; generation bumps on spec changes; an object being deleted whose
    /// finalizers are now empty is removed.
    pub fn replace(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        mut v: Value,
    ) -> Result<Arc<Obj>, ApiError> {
        let nsk = Self::nskey(res, ns);
        let mut g = self.lock();
        let old = g
            .tables
            .get(&res.key)
            .and_then(|t| t.get(&(nsk.clone(), name.to_string())))
            .cloned()
            .ok_or_else(|| ApiError::not_found(&res.plural, &res.group, name))?;
        if let Some(want) = v["metadata"]["resourceVersion"].as_str()
            && !want.is_empty()
            && want != old.rv.to_string()
        {
            return Err(ApiError::conflict(&res.plural, &res.group, name));
        }
        let old_full = old.value();
        let om = &old_full["metadata"];
        let meta = meta_mut(&mut v)
            .ok_or_else(|| ApiError::bad_request("the object is not a JSON object"))?;
        if meta
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| n != name)
        {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                meta.get("name").and_then(Value::as_str).unwrap_or("")
            )));
        }
        meta.insert("name".into(), json!(name));
        for k in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "namespace",
            "generation",
        ] {
            match om.get(k) {
                Some(x) => meta.insert(k.into(), x.clone()),
                None => meta.remove(k),
            };
        }
        keep_managed_fields(meta, om.get("managedFields"));
        meta.remove("resourceVersion");
        if let Some(o) = v.as_object_mut() {
            // Stored at the version written through (the HTTP layer passes the storage version).
            o.insert("apiVersion".into(), json!(res.api_version()));
            o.insert("kind".into(), json!(res.kind));
        }
        if res.tracks_generation() && meta::spec_changed(&old_full, &v) {
            let next_gen = om["generation"].as_i64().unwrap_or(1) + 1;
            meta::set_path(&mut v, ".metadata.generation", json!(next_gen));
        }
        if &*res.key == CRD_KEY {
            crd_status(&mut v);
        }
        let deleting = v["metadata"]["deletionTimestamp"].is_string();
        if deleting && meta::finalizers(&v).is_empty() {
            return Ok(Self::remove_locked(
                self,
                &mut g,
                res,
                &nsk,
                name,
                &old,
                Some(v),
            ));
        }
        // A no-op update keeps the resourceVersion and sends no event.
        let mut cmp = old_full;
        if let Some(m) = cmp["metadata"].as_object_mut() {
            m.remove("resourceVersion");
        }
        if cmp == v {
            return Ok(old);
        }
        Ok(self.commit(&mut g, res, nsk, name, Some(old), v))
    }

    /// The stored object `name`, checked against the delete preconditions (uid, resourceVersion):
    /// 404 when it is absent, 409 when a precondition does not match.
    pub(super) fn existing(
        g: &Inner,
        res: &ResourceInfo,
        nsk: &str,
        name: &str,
        precondition_uid: Option<&str>,
        precondition_rv: Option<&str>,
    ) -> Result<Arc<Obj>, ApiError> {
        let old = g
            .tables
            .get(&res.key)
            .and_then(|t| t.get(&(nsk.to_string(), name.to_string())))
            .cloned()
            .ok_or_else(|| ApiError::not_found(&res.plural, &res.group, name))?;
        let uid = old.head["metadata"]["uid"].as_str().unwrap_or("");
        let rv = old.rv.to_string();
        // The namespace REST checks its own preconditions (and words them its own way);
        // every other kind's are checked by `rest.BeforeDelete`, which names the kind.
        let namespace = &*res.key == NS_KEY;
        let conflict = |cause: String| {
            if namespace {
                ApiError::conflict_because(&res.plural, &res.group, &res.plural, name, &cause)
            } else {
                ApiError::conflict_because(&res.kind, &res.group, &res.kind, name, &cause)
            }
        };
        if let Some(u) = precondition_uid.filter(|u| *u != uid) {
            return Err(conflict(if namespace {
                format!("Precondition failed: UID in precondition: {u}, UID in object meta: {uid}")
            } else {
                format!(
                    "the UID in the precondition ({u}) does not match the UID in record ({uid}). \
                     The object might have been deleted and then recreated"
                )
            }));
        }
        if let Some(r) = precondition_rv.filter(|r| *r != rv) {
            return Err(conflict(if namespace {
                format!(
                    "Precondition failed: ResourceVersion in precondition: {r}, ResourceVersion in object meta: {rv}"
                )
            } else {
                format!(
                    "the ResourceVersion in the precondition ({r}) does not match the ResourceVersion \
                     in record ({rv}). The object might have been modified"
                )
            }));
        }
        Ok(old)
    }

    /// Store `v` as the object `name`, new (`old` is `None`: an ADDED event) or the next state of
    /// `old` (a MODIFIED event): a fresh resourceVersion, the owner/uid indexes, the event, and
    /// the registry rebuild a CRD write needs.
    pub(super) fn commit(
        &self,
        g: &mut Inner,
        res: &ResourceInfo,
        nsk: String,
        name: &str,
        old: Option<Arc<Obj>>,
        mut v: Value,
    ) -> Arc<Obj> {
        g.rv += 1;
        let rv = g.rv;
        meta::set_path(&mut v, ".metadata.resourceVersion", json!(rv.to_string()));
        let obj = Obj::new(v, rv);
        g.tables
            .entry(res.key.clone())
            .or_default()
            .insert((nsk.clone(), name.to_string()), obj.clone());
        let old_head = old.as_ref().map(|o| &o.head);
        Self::index(g, &res.key, &nsk, name, old_head, Some(&obj.head));
        let etype = if old.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        Self::publish(
            g,
            StoreEvent {
                rv,
                etype,
                key: res.key.clone(),
                namespace: nsk,
                obj: obj.clone(),
                old,
            },
        );
        self.after_write(g, &res.key);
        obj
    }

    pub(super) fn remove_locked(
        &self,
        g: &mut Inner,
        res: &ResourceInfo,
        nsk: &str,
        name: &str,
        old: &Arc<Obj>,
        last: Option<Value>,
    ) -> Arc<Obj> {
        g.rv += 1;
        let rv = g.rv;
        let mut v = last.unwrap_or_else(|| old.value());
        meta::set_path(&mut v, ".metadata.resourceVersion", json!(rv.to_string()));
        let obj = Obj::new(v, rv);
        if let Some(t) = g.tables.get_mut(&res.key) {
            t.remove(&(nsk.to_string(), name.to_string()));
        }
        Self::index(g, &res.key, nsk, name, Some(&old.head), None);
        Self::publish(
            g,
            StoreEvent {
                rv,
                etype: EventType::Deleted,
                key: res.key.clone(),
                namespace: nsk.to_string(),
                obj: obj.clone(),
                old: Some(old.clone()),
            },
        );
        self.after_write(g, &res.key);
        obj
    }

    /// Remove every object stored under `key` (a deleted CRD's custom resources).
    pub fn purge(&self, key: &str) {
        let mut g = self.lock();
        let Some(table) = g.tables.remove(key) else {
            return;
        };
        let key: Arc<str> = Arc::from(key);
        for ((nsk, name), old) in table {
            g.rv += 1;
            let rv = g.rv;
            let mut v = old.value();
            meta::set_path(&mut v, ".metadata.resourceVersion", json!(rv.to_string()));
            let obj = Obj::new(v, rv);
            Self::index(&mut g, &key, &nsk, &name, Some(&old.head), None);
            Self::publish(
                &mut g,
                StoreEvent {
                    rv,
                    etype: EventType::Deleted,
                    key: key.clone(),
                    namespace: nsk,
                    obj,
                    old: Some(old),
                },
            );
        }
    }

    /// Remove a terminating namespace for good (the namespace controller's last step).
    pub fn finalize_namespace(&self, name: &str) {
        let Some(res) = self.registry().lookup("", "v1", "namespaces") else {
            return;
        };
        let mut g = self.lock();
        let Some(old) = g
            .tables
            .get(NS_KEY)
            .and_then(|t| t.get(&(String::new(), name.to_string())))
            .cloned()
        else {
            return;
        };
        if meta::finalizers(&old.head).is_empty() {
            self.remove_locked(&mut g, &res, "", name, &old, None);
        }
    }
}

/// What the real server reports for an accepted CRD.
fn crd_status(v: &mut Value) {
    let names = v["spec"]["names"].clone();
    let versions: Vec<Value> = v["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|x| x["storage"].as_bool() == Some(true))
        .map(|x| x["name"].clone())
        .collect();
    let now = meta::now();
    let cond = |t: &str, reason: &str, msg: &str| json!({"type": t, "status": "True", "lastTransitionTime": now, "reason": reason, "message": msg});
    meta::set_path(
        v,
        ".status",
        json!({
            "acceptedNames": names,
            "storedVersions": versions,
            "conditions": [
                cond("NamesAccepted", "NoConflicts", "no conflicts found"),
                cond("Established", "InitialNamesAccepted", "the initial names have been accepted"),
            ],
        }),
    );
}

/// The managedFields a write stores: the ones it carries (the API layer computes them: an empty
/// list means none), else the stored object's (an in-process write that leaves them out keeps
/// them, as a client that does not know managedFields does on a real server).
fn keep_managed_fields(meta: &mut serde_json::Map<String, Value>, old: Option<&Value>) {
    match meta.get("managedFields") {
        Some(Value::Array(a)) if !a.is_empty() => {}
        Some(_) => {
            meta.remove("managedFields");
        }
        None => {
            if let Some(o) = old.filter(|o| o.as_array().is_some_and(|a| !a.is_empty())) {
                meta.insert("managedFields".into(), o.clone());
            }
        }
    }
}
