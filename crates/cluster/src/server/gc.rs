//! Garbage collection and namespace cleanup, driven by the store's change stream: dependents of a
//! deleted owner go (Background), `foregroundDeletion` owners wait for their dependents,
//! `orphan` owners release theirs, and a terminating namespace is emptied then removed.

use std::sync::Arc;

use serde_json::Value;
use tokio::task::JoinHandle;

use super::{
    meta,
    resources::ResourceInfo,
    store::{EventType, Propagation, Store, StoreEvent, WatchFrom},
};

/// Start the collector; it runs until aborted.
pub fn spawn(store: Arc<Store>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let Ok(mut sub) = store.watch(None, None, WatchFrom::Version(store.current_rv())) else {
            return;
        };
        while let Some(ev) = sub.rx.recv().await {
            handle(&store, &ev);
        }
    })
}

fn res_of(store: &Store, v: &Value) -> Option<Arc<ResourceInfo>> {
    store
        .registry()
        .by_kind(v["apiVersion"].as_str()?, v["kind"].as_str()?)
}

fn ns_name(v: &Value) -> (String, String) {
    (
        v["metadata"]["namespace"]
            .as_str()
            .unwrap_or("")
            .to_string(),
        v["metadata"]["name"].as_str().unwrap_or("").to_string(),
    )
}

/// Delete a dependent as the collector does: not again once it is being deleted (a one-way
/// trip), and in the background unless its own orphan/foregroundDeletion finalizer asks for
/// another policy (which the delete then keeps).
fn delete(store: &Store, v: &Value, propagation: Propagation) {
    if v["metadata"]["deletionTimestamp"].is_string() {
        return;
    }
    let fins = meta::finalizers(v);
    let propagation = match propagation {
        Propagation::Background if fins.iter().any(|f| f == "foregroundDeletion") => {
            Propagation::Foreground
        }
        Propagation::Background if fins.iter().any(|f| f == "orphan") => Propagation::Orphan,
        p => p,
    };
    if let Some(res) = res_of(store, v) {
        let (ns, name) = ns_name(v);
        let _ = store.delete(&res, &ns, &name, None, None, propagation);
    }
}

/// Re-read an object and rewrite it with `f` (unconditionally: the collector owns these edits).
fn edit(store: &Store, v: &Value, f: impl Fn(&mut Value)) {
    let Some(res) = res_of(store, v) else { return };
    let (ns, name) = ns_name(v);
    let Ok(cur) = store.get(&res, &ns, &name) else {
        return;
    };
    let mut new = cur.value();
    f(&mut new);
    if let Some(m) = new["metadata"].as_object_mut() {
        m.remove("resourceVersion");
    }
    let _ = store.replace(&res, &ns, &name, new);
}

fn remove_finalizer(store: &Store, v: &Value, fin: &str) {
    edit(store, v, |x| {
        if let Some(a) = x["metadata"]["finalizers"].as_array_mut() {
            a.retain(|f| f != fin);
        }
    });
}

fn check_foreground(store: &Store, owner_uid: &str) {
    let Some((_, owner)) = store.get_by_uid(owner_uid) else {
        return;
    };
    if !owner.head["metadata"]["deletionTimestamp"].is_string()
        || !meta::finalizers(&owner.head)
            .iter()
            .any(|f| f == "foregroundDeletion")
    {
        return;
    }
    let deps = store.dependents_of(owner_uid);
    if deps.is_empty() {
        remove_finalizer(store, &owner.head, "foregroundDeletion");
        return;
    }
    for (_, d) in deps {
        if !d.head["metadata"]["deletionTimestamp"].is_string() {
            delete(store, &d.head, Propagation::Foreground);
        }
    }
}

fn check_namespace(store: &Store, ns: &str) {
    let Some(nsv) = store.get_value("v1", "Namespace", "", ns) else {
        return;
    };
    if !nsv["metadata"]["deletionTimestamp"].is_string() {
        return;
    }
    let contents = store.in_namespace(ns);
    if contents.is_empty() {
        store.finalize_namespace(ns);
        return;
    }
    for (_, o) in contents {
        if !o.head["metadata"]["deletionTimestamp"].is_string() {
            delete(store, &o.head, Propagation::Background);
        }
    }
}

fn handle(store: &Store, ev: &StoreEvent) {
    let v = &ev.obj.head;
    let uid = v["metadata"]["uid"].as_str().unwrap_or("").to_string();
    match ev.etype {
        EventType::Deleted => {
            for (_, dep) in store.dependents_of(&uid) {
                let orphaned = meta::owner_uids(&dep.head)
                    .iter()
                    .all(|o| store.get_by_uid(o).is_none());
                if orphaned {
                    delete(store, &dep.head, Propagation::Background);
                }
            }
            for owner in meta::owner_uids(v) {
                check_foreground(store, &owner);
            }
            if !ev.namespace.is_empty() {
                check_namespace(store, &ev.namespace);
            }
            let crd = (&*ev.key == "apiextensions.k8s.io/customresourcedefinitions")
                .then(|| ev.obj.value());
            if let Some(crd) = crd
                && let (Some(g), Some(p)) = (
                    crd["spec"]["group"].as_str(),
                    crd["spec"]["names"]["plural"].as_str(),
                )
            {
                store.purge(&format!("{g}/{p}"));
            }
        }
        EventType::Added | EventType::Modified => {
            if let Some(old) = &ev.old {
                for owner in meta::owner_uids(&old.head) {
                    check_foreground(store, &owner);
                }
            }
            if !v["metadata"]["deletionTimestamp"].is_string() {
                return;
            }
            let fins = meta::finalizers(v);
            if fins.iter().any(|f| f == "orphan") {
                for (_, dep) in store.dependents_of(&uid) {
                    let u = uid.clone();
                    edit(store, &dep.head, move |x| {
                        if let Some(a) = x["metadata"]["ownerReferences"].as_array_mut() {
                            a.retain(|o| o["uid"].as_str() != Some(u.as_str()));
                        }
                    });
                }
                remove_finalizer(store, v, "orphan");
            }
            if fins.iter().any(|f| f == "foregroundDeletion") {
                check_foreground(store, &uid);
            }
            if &*ev.key == "/namespaces" {
                check_namespace(store, v["metadata"]["name"].as_str().unwrap_or(""));
            }
        }
    }
}
