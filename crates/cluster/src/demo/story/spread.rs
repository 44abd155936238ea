//! The spreading part of the demo: a WorkloadSpread over the CloneSet `api` (zone-a up to 3
//! pods, the rest in zone-b; the pod webhook places each pod as upstream's does) and a
//! UnitedDeployment `shop` whose two subset CloneSets (zone-a 3, zone-b 2) are made as
//! upstream's UnitedDeployment controller makes them and then run by our CloneSet controller.
//!
//! The embedded cluster runs no WorkloadSpread or UnitedDeployment controller, so [`statuses`]
//! writes their status as those controllers would, from the pods and the subset workloads, for
//! as long as the demo runs.

use std::time::Duration;

use anyhow::{Context as _, Result};
use kube::{
    Api, Client,
    api::{DynamicObject, Patch, PatchParams},
};
use serde_json::{Value, json};

use super::{Obj, create, resource};
use crate::api::keys::{SUBSET_NAME, SUBSET_PATCH, UNITED_DEPLOYMENT_REVISION_HASH};
use crate::kruise::revision::{hash_controller_revision, safe_encode_string};

/// Pods this part of the story adds (api 5, shop 3 + 2).
pub(crate) const PODS: usize = 10;

const API_REPLICAS: i64 = 5;
/// The UnitedDeployment's subsets and the replicas each gets.
const SHOP_SUBSETS: [(&str, i64); 2] = [("zone-a", 3), ("zone-b", 2)];
const ZONE: &str = "topology.kubernetes.io/zone";

fn kruise(kind: &str, plural: &str, ns: &str, body: Value) -> Obj {
    let ar = resource("apps.kruise.io", "v1alpha1", kind, plural);
    let mut body = body;
    body["apiVersion"] = json!(ar.api_version);
    body["kind"] = json!(kind);
    body["metadata"]["namespace"] = json!(ns);
    Obj {
        ar,
        namespace: Some(ns.to_owned()),
        body,
    }
}

fn zone_term(zone: &str) -> Value {
    json!({"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]})
}

fn pod_template(app: &str, image: &str) -> Value {
    json!({
        "metadata": {"labels": {"app": app}},
        "spec": {"containers": [{"name": app, "image": image}]},
    })
}

/// The WorkloadSpread, then the CloneSet it spreads (in that order: the webhook places pods
/// only for a spread that exists when they are created).
pub(crate) fn spread_objects(ns: &str) -> Vec<Obj> {
    let spread = kruise(
        "WorkloadSpread",
        "workloadspreads",
        ns,
        json!({
            "metadata": {"name": "api-spread"},
            "spec": {
                "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                              "name": "api"},
                "subsets": [
                    {"name": "zone-a", "requiredNodeSelectorTerm": zone_term("zone-a"),
                     "maxReplicas": 3,
                     "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "api",
                                      "effect": "NoSchedule"}]},
                    {"name": "zone-b", "requiredNodeSelectorTerm": zone_term("zone-b"),
                     "preferredNodeSelectorTerms": [{"weight": 50, "preference": {
                         "matchExpressions": [{"key": "kubernetes.io/os", "operator": "In",
                                               "values": ["linux"]}]}}]},
                ],
                "scheduleStrategy": {"type": "Fixed"},
            },
        }),
    );
    let api = kruise(
        "CloneSet",
        "clonesets",
        ns,
        json!({
            "metadata": {"name": "api", "labels": {"app": "api"}},
            "spec": {
                "replicas": API_REPLICAS,
                "selector": {"matchLabels": {"app": "api"}},
                "template": pod_template("api", "demo/api:2.3"),
            },
        }),
    );
    vec![spread, api]
}

/// The UnitedDeployment `shop` as the user writes it.
pub(crate) fn united_deployment(ns: &str) -> Obj {
    let replicas: i64 = SHOP_SUBSETS.iter().map(|(_, r)| r).sum();
    kruise(
        "UnitedDeployment",
        "uniteddeployments",
        ns,
        json!({
            "metadata": {"name": "shop"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "shop"}},
                "template": {"cloneSetTemplate": {
                    "metadata": {"labels": {"app": "shop"}},
                    "spec": {
                        "selector": {"matchLabels": {"app": "shop"}},
                        "template": pod_template("shop", "demo/shop:1.4"),
                        "updateStrategy": {"type": "InPlaceIfPossible", "maxUnavailable": 1},
                    },
                }},
                "topology": {"subsets": [
                    {"name": "zone-a", "nodeSelectorTerm": zone_term("zone-a"),
                     "replicas": SHOP_SUBSETS[0].1},
                    {"name": "zone-b", "nodeSelectorTerm": zone_term("zone-b")},
                ]},
                "revisionHistoryLimit": 10,
            },
        }),
    )
}

/// The revision name upstream's controller gives the UnitedDeployment's template: the hash of
/// its revision patch (`getUnitedDeploymentPatch`), `<name>-<hash>`.
fn revision(ud: &Value) -> (String, Value) {
    let patch = json!({"spec": {"template": ud["spec"]["template"], "$patch": "replace"}});
    let hash = hash_controller_revision(patch.to_string().as_bytes(), None);
    (
        format!(
            "{}-{hash}",
            ud["metadata"]["name"].as_str().unwrap_or_default()
        ),
        patch,
    )
}

/// A subset CloneSet as `CloneSetAdapter.ApplySubsetTemplate` makes it: template labels and the
/// selector's labels, the revision and subset-name labels, the subset's node term as required
/// node affinity, replicas and partition, and the UnitedDeployment as controller owner.
pub(crate) fn subset_cloneset(
    ud: &Value,
    uid: &str,
    subset: &str,
    replicas: i64,
    revision: &str,
) -> Obj {
    let name = ud["metadata"]["name"].as_str().unwrap_or_default();
    let ns = ud["metadata"]["namespace"].as_str().unwrap_or_default();
    let tpl = &ud["spec"]["template"]["cloneSetTemplate"];
    let mut labels = tpl["metadata"]["labels"].clone();
    for (k, v) in ud["spec"]["selector"]["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
    {
        labels[k] = v.clone();
    }
    labels[UNITED_DEPLOYMENT_REVISION_HASH] = json!(revision);
    labels[SUBSET_NAME] = json!(subset);
    let mut selector = ud["spec"]["selector"].clone();
    selector["matchLabels"][SUBSET_NAME] = json!(subset);
    let mut spec = tpl["spec"].clone();
    spec["selector"] = selector;
    spec["replicas"] = json!(replicas);
    spec["updateStrategy"]["partition"] = json!(0);
    spec["template"]["metadata"]["labels"][SUBSET_NAME] = json!(subset);
    spec["template"]["metadata"]["labels"][UNITED_DEPLOYMENT_REVISION_HASH] = json!(revision);
    let term = ud["spec"]["topology"]["subsets"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["name"] == subset)
        .map(|s| s["nodeSelectorTerm"].clone())
        .unwrap_or(Value::Null);
    if term.is_object() {
        spec["template"]["spec"]["affinity"] = json!({"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}});
    }
    // generateName `<ud>-<subset>-` plus five safe characters, fixed here so a second run of
    // the story finds the same objects.
    let hash = safe_encode_string(&hash_controller_revision(
        format!("{uid}/{subset}").as_bytes(),
        None,
    ));
    let suffix: String = hash.chars().rev().take(5).collect();
    kruise(
        "CloneSet",
        "clonesets",
        ns,
        json!({
            "metadata": {
                "name": format!("{name}-{subset}-{suffix}"),
                "generateName": format!("{name}-{subset}-"),
                "labels": labels,
                "annotations": {SUBSET_PATCH: ""},
                "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1",
                    "kind": "UnitedDeployment", "name": name, "uid": uid,
                    "controller": true, "blockOwnerDeletion": true}],
            },
            "spec": spec,
        }),
    )
}

/// Creates the spread, its CloneSet, the UnitedDeployment, its revision and subset CloneSets.
/// Returns how many objects it created.
pub(crate) async fn play(client: &Client, ns: &str) -> Result<usize> {
    let mut created = 0;
    for obj in spread_objects(ns) {
        created += usize::from(create(client, &obj).await?);
    }
    let ud = united_deployment(ns);
    created += usize::from(create(client, &ud).await?);
    let uds: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &ud.ar);
    let stored = uds
        .get("shop")
        .await
        .context("cannot read back the demo's UnitedDeployment")?;
    let uid = stored.metadata.uid.clone().unwrap_or_default();
    let (rev, patch) = revision(&ud.body);
    let cr = Obj {
        ar: resource("apps", "v1", "ControllerRevision", "controllerrevisions"),
        namespace: Some(ns.to_owned()),
        body: json!({
            "apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": rev, "namespace": ns,
                "labels": {"app": "shop"},
                "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1",
                    "kind": "UnitedDeployment", "name": "shop", "uid": uid,
                    "controller": true, "blockOwnerDeletion": true}]},
            "data": patch,
            "revision": 1,
        }),
    };
    created += usize::from(create(client, &cr).await?);
    for (subset, replicas) in SHOP_SUBSETS {
        let set = subset_cloneset(&ud.body, &uid, subset, replicas, &rev);
        created += usize::from(create(client, &set).await?);
    }
    Ok(created)
}

/// Writes the spread's and the UnitedDeployment's status every two seconds, as their
/// controllers would, until neither exists any more (or the cluster goes away).
pub(crate) async fn statuses(client: &Client, ns: &str) {
    let mut failures = 0;
    loop {
        match write_statuses(client, ns).await {
            Ok(true) => failures = 0,
            Ok(false) => return,
            Err(err) => {
                failures += 1;
                tracing::debug!("demo: spread statuses: {err:#}");
                if failures > 30 {
                    return;
                }
            }
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// One pass; `Ok(false)` when there is nothing left to keep.
async fn write_statuses(client: &Client, ns: &str) -> Result<bool> {
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client.clone(), ns);
    let pods = pods.list(&Default::default()).await?.items;
    let spread = spread_objects(ns).remove(0);
    let ud = united_deployment(ns);
    let spreads: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &spread.ar);
    let uds: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &ud.ar);
    let mut kept = false;
    if let Some(ws) = spreads.get_opt("api-spread").await? {
        kept = true;
        let status = status::spread(&ws, &pods, API_REPLICAS as i32)?;
        spreads
            .patch_status("api-spread", &PatchParams::default(), &Patch::Merge(status))
            .await?;
    }
    if let Some(u) = uds.get_opt("shop").await? {
        kept = true;
        let sets: Api<DynamicObject> = Api::namespaced_with(
            client.clone(),
            ns,
            &resource("apps.kruise.io", "v1alpha1", "CloneSet", "clonesets"),
        );
        let sets = sets.list(&Default::default()).await?.items;
        let (rev, _) = revision(&ud.body);
        let status = status::united(&u, &sets, &pods, &rev);
        uds.patch_status("shop", &PatchParams::default(), &Patch::Merge(status))
            .await?;
    }
    Ok(kept)
}

mod status;
