//! Deletes, as the real server's generic registry runs them (`Store.Delete` with
//! `rest.BeforeDelete`, `updateForGracefulDeletionAndFinalizers` and
//! `deletionFinalizersForGarbageCollection`):
//!
//! - the delete preconditions (uid, resourceVersion) are checked against the stored object;
//! - a kind with graceful deletion (pods) first gets `deletionTimestamp` (now + grace) and
//!   `deletionGracePeriodSeconds` (a MODIFIED event); with a grace of 0 and no finalizers it then
//!   goes at once, otherwise it stays until the kubelet deletes it again with grace 0; a second
//!   delete may only shorten the grace period;
//! - the propagation policy puts the `orphan` / `foregroundDeletion` finalizer on (or takes it off)
//!   whether or not the object has dependents; the garbage collector removes it again;
//! - an object with finalizers is marked as deleting (`deletionTimestamp` now,
//!   `deletionGracePeriodSeconds` 0, `generation` + 1 if it keeps one) and stays;
//! - a namespace is marked Terminating (the namespace controller empties and finalizes it).
//!
//! A dry run computes the same answer and stores nothing.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Inner, NS_KEY, Obj, Propagation, Store};
use crate::server::{
    meta::{self, meta_mut},
    resources::ResourceInfo,
    status::ApiError,
};

const ORPHAN: &str = "orphan";
const FOREGROUND: &str = "foregroundDeletion";

/// A delete's options, as `metav1.DeleteOptions` carries them.
#[derive(Debug, Clone, Default)]
pub struct DeleteRequest {
    pub precondition_uid: Option<String>,
    pub precondition_rv: Option<String>,
    /// `propagationPolicy`; None leaves the object's own `orphan`/`foregroundDeletion`
    /// finalizers (or the kind's default policy) in charge.
    pub propagation: Option<Propagation>,
    /// The deprecated `orphanDependents`.
    pub orphan_dependents: Option<bool>,
    /// `gracePeriodSeconds` as asked (a negative value means 1).
    pub grace: Option<i64>,
    pub dry_run: bool,
}

impl DeleteRequest {
    /// A delete with an explicit propagation policy and nothing else.
    pub fn with_propagation(p: Propagation) -> Self {
        DeleteRequest {
            propagation: Some(p),
            ..DeleteRequest::default()
        }
    }
}

/// What a delete did.
#[derive(Debug, Clone)]
pub enum Deleted {
    /// The object is gone; its last state.
    Gone(Arc<Obj>),
    /// The object stays (finalizers, a pending graceful deletion, a terminating namespace).
    Kept(Arc<Obj>),
}

impl Deleted {
    pub fn obj(&self) -> &Arc<Obj> {
        match self {
            Deleted::Gone(o) | Deleted::Kept(o) => o,
        }
    }
}

/// The grace period a pod's delete settles on (the pod strategy's `CheckGracefulDelete`): the
/// requested one, else `spec.terminationGracePeriodSeconds` (which the API defaults to 30; a pod
/// seeded in-process may lack it), 0 for a pod not bound to a node or already finished; a
/// negative period means 1.
fn pod_grace(pod: &Value, requested: Option<i64>) -> i64 {
    let mut period = requested
        .or_else(|| pod["spec"]["terminationGracePeriodSeconds"].as_i64())
        .unwrap_or(30);
    if pod["spec"]["nodeName"].as_str().is_none_or(str::is_empty)
        || matches!(
            pod["status"]["phase"].as_str(),
            Some("Succeeded" | "Failed")
        )
    {
        period = 0;
    }
    if period < 0 { 1 } else { period }
}

/// Whether the kind deletes gracefully (implements `RESTGracefulDeleteStrategy`).
fn graceful_kind(res: &ResourceInfo) -> bool {
    res.group.is_empty() && res.plural == "pods"
}

/// The finalizers a delete leaves on the object (`deletionFinalizersForGarbageCollection`), and
/// whether they changed.
fn gc_finalizers(res: &ResourceInfo, fins: &[String], req: &DeleteRequest) -> (bool, Vec<String>) {
    let has = |f: &str| fins.iter().any(|x| x == f);
    // An explicit policy decides; else the object's own finalizer; else the kind's default (a
    // v1 ReplicationController orphans, for backward compatibility).
    let (orphan, foreground) = if let Some(o) = req.orphan_dependents {
        (o, false)
    } else if let Some(p) = req.propagation {
        (p == Propagation::Orphan, p == Propagation::Foreground)
    } else if has(ORPHAN) {
        (true, false)
    } else if has(FOREGROUND) {
        (false, true)
    } else {
        (
            res.group.is_empty() && res.plural == "replicationcontrollers",
            false,
        )
    };
    let mut out: Vec<String> = fins
        .iter()
        .filter(|f| *f != ORPHAN && *f != FOREGROUND)
        .cloned()
        .collect();
    if orphan {
        out.push(ORPHAN.into());
    }
    if foreground {
        out.push(FOREGROUND.into());
    }
    let same = {
        let mut a: Vec<&String> = fins.iter().collect();
        let mut b: Vec<&String> = out.iter().collect();
        a.sort();
        a.dedup();
        b.sort();
        b.dedup();
        a == b
    };
    if same {
        (false, fins.to_vec())
    } else {
        (true, out)
    }
}

fn set_finalizers(v: &mut Value, fins: &[String]) {
    if let Some(m) = meta_mut(v) {
        if fins.is_empty() {
            m.remove("finalizers");
        } else {
            m.insert("finalizers".into(), json!(fins));
        }
    }
}

fn timestamp(secs: i64) -> String {
    jiff::Timestamp::from_second(secs)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| meta::now())
}

fn parse_ts(v: &Value) -> Option<i64> {
    v.as_str()
        .and_then(|s| s.parse::<jiff::Timestamp>().ok())
        .map(|t| t.as_second())
}

/// `markAsDeleting`: deletionTimestamp now (unless one is set and not later), grace 0, and the
/// generation bumped when the deletion starts.
fn mark_as_deleting(v: &mut Value) {
    let now = jiff::Timestamp::now().as_second();
    let Some(m) = meta_mut(v) else { return };
    let current = m.get("deletionTimestamp").and_then(parse_ts);
    if current.is_none()
        && let Some(g) = m
            .get("generation")
            .and_then(Value::as_i64)
            .filter(|g| *g > 0)
    {
        m.insert("generation".into(), json!(g + 1));
    }
    if current.is_none_or(|c| c > now) {
        m.insert("deletionTimestamp".into(), json!(timestamp(now)));
    }
    m.insert("deletionGracePeriodSeconds".into(), json!(0));
}

/// `rest.BeforeDelete` for a graceful kind: `(graceful, pending)`, and the object updated with
/// its new deletionTimestamp and grace period when graceful.
fn before_graceful_delete(v: &mut Value, req: &DeleteRequest) -> (bool, bool) {
    let requested = req.grace.map(|g| if g < 0 { 1 } else { g });
    let Some(m) = meta_mut(v) else {
        return (false, false);
    };
    if let Some(dt) = m.get("deletionTimestamp").and_then(parse_ts) {
        let current = m.get("deletionGracePeriodSeconds").and_then(Value::as_i64);
        let Some(current) = current.filter(|c| *c != 0) else {
            return (false, false);
        };
        return match requested {
            Some(p) if p < current => {
                m.insert(
                    "deletionTimestamp".into(),
                    json!(timestamp(dt - current + p)),
                );
                m.insert("deletionGracePeriodSeconds".into(), json!(p));
                (true, false)
            }
            _ => (false, true),
        };
    }
    (true, false)
}

impl Store {
    /// The object a delete is about, with its preconditions checked (`rest.BeforeDelete` checks
    /// them early, before admission sees the delete): 404 when absent, 409 when they fail.
    pub fn get_for_delete(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        req: &DeleteRequest,
    ) -> Result<Arc<Obj>, ApiError> {
        let g = self.lock();
        Self::existing(
            &g,
            res,
            &Self::nskey(res, ns),
            name,
            req.precondition_uid.as_deref(),
            req.precondition_rv.as_deref(),
        )
    }

    /// Delete `name` as the real server does (see the module docs).
    pub fn delete_with(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        req: &DeleteRequest,
    ) -> Result<Deleted, ApiError> {
        let nsk = Self::nskey(res, ns);
        let mut g = self.lock();
        let old = Self::existing(
            &g,
            res,
            &nsk,
            name,
            req.precondition_uid.as_deref(),
            req.precondition_rv.as_deref(),
        )?;
        if &*res.key == NS_KEY {
            return Ok(self.delete_namespace(&mut g, res, name, &old, req));
        }
        let mut v = old.value();
        let (graceful, pending) = if graceful_kind(res) {
            let already = v["metadata"]["deletionTimestamp"].is_string();
            let (graceful, pending) = before_graceful_delete(&mut v, req);
            if graceful && !already {
                let period = pod_grace(&v, req.grace.map(|g| if g < 0 { 1 } else { g }));
                let now = jiff::Timestamp::now().as_second();
                if let Some(m) = meta_mut(&mut v) {
                    m.insert(
                        "deletionTimestamp".into(),
                        json!(timestamp(now.saturating_add(period))),
                    );
                    m.insert("deletionGracePeriodSeconds".into(), json!(period));
                    if let Some(g) = m
                        .get("generation")
                        .and_then(Value::as_i64)
                        .filter(|g| *g > 0)
                    {
                        m.insert("generation".into(), json!(g + 1));
                    }
                }
            }
            (graceful, pending)
        } else {
            (false, false)
        };
        if pending {
            return Ok(Deleted::Kept(old));
        }
        let fins = meta::finalizers(&old.head);
        let (update_fins, new_fins) = gc_finalizers(res, &fins, req);
        if !graceful && fins.is_empty() && !update_fins {
            return Ok(Deleted::Gone(
                self.remove_now(&mut g, res, &nsk, name, &old, None, req),
            ));
        }
        if update_fins {
            set_finalizers(&mut v, &new_fins);
        }
        let pending_finalizers = !new_fins.is_empty();
        if !graceful {
            if !pending_finalizers {
                return Ok(Deleted::Gone(
                    self.remove_now(&mut g, res, &nsk, name, &old, None, req),
                ));
            }
            mark_as_deleting(&mut v);
            return Ok(Deleted::Kept(
                self.update_now(&mut g, res, nsk, name, old, v, req),
            ));
        }
        let grace = v["metadata"]["deletionGracePeriodSeconds"]
            .as_i64()
            .unwrap_or(0);
        let updated = self.update_now(&mut g, res, nsk.clone(), name, old.clone(), v, req);
        if pending_finalizers || grace > 0 {
            return Ok(Deleted::Kept(updated));
        }
        if req.dry_run {
            return Ok(Deleted::Gone(updated));
        }
        let last = updated.value();
        Ok(Deleted::Gone(self.remove_now(
            &mut g,
            res,
            &nsk,
            name,
            &updated,
            Some(last),
            req,
        )))
    }

    /// A namespace's delete (the namespace REST's own): Terminating with a deletionTimestamp,
    /// the orphan/foreground finalizers as the options say; it goes once the namespace
    /// controller has emptied and finalized it.
    fn delete_namespace(
        &self,
        g: &mut Inner,
        res: &ResourceInfo,
        name: &str,
        old: &Arc<Obj>,
        req: &DeleteRequest,
    ) -> Deleted {
        if old.head["metadata"]["deletionTimestamp"].is_string() {
            return Deleted::Kept(old.clone());
        }
        let mut v = old.value();
        let fins = meta::finalizers(&v);
        let has = |f: &str| fins.iter().any(|x| x == f);
        let (orphan, foreground) = match (req.orphan_dependents, req.propagation) {
            (Some(o), _) => (o, !o),
            (None, Some(p)) => (p == Propagation::Orphan, p == Propagation::Foreground),
            (None, None) => (has(ORPHAN), has(FOREGROUND)),
        };
        let mut new_fins: Vec<String> = fins
            .iter()
            .filter(|f| *f != ORPHAN && *f != FOREGROUND)
            .cloned()
            .collect();
        if orphan {
            new_fins.push(ORPHAN.into());
        }
        if foreground {
            new_fins.push(FOREGROUND.into());
        }
        if orphan != has(ORPHAN) || foreground != has(FOREGROUND) {
            set_finalizers(&mut v, &new_fins);
        }
        if let Some(m) = meta_mut(&mut v) {
            m.insert("deletionTimestamp".into(), json!(meta::now()));
        }
        meta::set_path(&mut v, ".status.phase", json!("Terminating"));
        Deleted::Kept(self.update_now(g, res, String::new(), name, old.clone(), v, req))
    }

    /// Store `v` as the next state of `old` (nothing when it did not change or on a dry run).
    #[allow(clippy::too_many_arguments)]
    fn update_now(
        &self,
        g: &mut Inner,
        res: &ResourceInfo,
        nsk: String,
        name: &str,
        old: Arc<Obj>,
        v: Value,
        req: &DeleteRequest,
    ) -> Arc<Obj> {
        if v == old.value() {
            return old;
        }
        if req.dry_run {
            return Obj::new(v, old.rv);
        }
        self.commit(g, res, nsk, name, Some(old), v)
    }

    /// Remove the object now (its last state `last`, else `old`); nothing on a dry run.
    #[allow(clippy::too_many_arguments)]
    fn remove_now(
        &self,
        g: &mut Inner,
        res: &ResourceInfo,
        nsk: &str,
        name: &str,
        old: &Arc<Obj>,
        last: Option<Value>,
        req: &DeleteRequest,
    ) -> Arc<Obj> {
        if req.dry_run {
            return old.clone();
        }
        self.remove_locked(g, res, nsk, name, old, last)
    }

    /// Delete with an explicit propagation policy and no preconditions (the garbage collector,
    /// the namespace controller, in-process callers). Returns the object and whether it is gone.
    pub fn delete(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        precondition_uid: Option<&str>,
        precondition_rv: Option<&str>,
        propagation: Propagation,
    ) -> Result<(Arc<Obj>, bool), ApiError> {
        let req = DeleteRequest {
            precondition_uid: precondition_uid.map(str::to_string),
            precondition_rv: precondition_rv.map(str::to_string),
            ..DeleteRequest::with_propagation(propagation)
        };
        Ok(match self.delete_with(res, ns, name, &req)? {
            Deleted::Gone(o) => (o, true),
            Deleted::Kept(o) => (o, false),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(plural: &str) -> ResourceInfo {
        crate::server::builtin::builtin_resources()
            .into_iter()
            .find(|r| r.group.is_empty() && r.plural == plural)
            .unwrap()
    }

    #[test]
    fn propagation_sets_the_gc_finalizers() {
        let cm = res("configmaps");
        let req = |p| DeleteRequest::with_propagation(p);
        assert_eq!(
            gc_finalizers(&cm, &[], &req(Propagation::Orphan)),
            (true, vec![ORPHAN.to_string()])
        );
        assert_eq!(
            gc_finalizers(
                &cm,
                &["x".into(), ORPHAN.into()],
                &req(Propagation::Foreground)
            ),
            (true, vec!["x".to_string(), FOREGROUND.to_string()])
        );
        assert_eq!(
            gc_finalizers(&cm, &[FOREGROUND.into()], &DeleteRequest::default()),
            (false, vec![FOREGROUND.to_string()])
        );
        assert_eq!(
            gc_finalizers(&cm, &[], &req(Propagation::Background)),
            (false, vec![])
        );
        let rc = res("replicationcontrollers");
        assert_eq!(
            gc_finalizers(&rc, &[], &DeleteRequest::default()),
            (true, vec![ORPHAN.to_string()])
        );
    }

    #[test]
    fn a_pod_grace_period() {
        let bound = json!({"spec": {"nodeName": "n1", "terminationGracePeriodSeconds": 30}});
        assert_eq!(pod_grace(&bound, None), 30);
        assert_eq!(pod_grace(&bound, Some(5)), 5);
        assert_eq!(
            pod_grace(
                &json!({"spec": {"terminationGracePeriodSeconds": 30}}),
                None
            ),
            0
        );
        let done = json!({"spec": {"nodeName": "n1"}, "status": {"phase": "Failed"}});
        assert_eq!(pod_grace(&done, Some(10)), 0);
    }
}
