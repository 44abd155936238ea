//! The scenario's workloads: CloneSets (mid-rollout, stuck on a crash, bulk), an Advanced
//! StatefulSet and an Advanced DaemonSet, each with its ControllerRevisions, pods and status.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{
    ApiResource, Ctx, SeedObject, SeedStatus,
    ops::{self, Crr, SidecarRevision},
    owned,
    pods::{PodChange, PodPlan, condition, seeded_ready},
    resource, rfc3339, safe_hash,
};
use crate::cluster::sim::{ids, nodes};

pub(crate) fn clonesets() -> ApiResource {
    resource("apps.kruise.io", "v1alpha1", "CloneSet", "clonesets")
}

fn revisions() -> ApiResource {
    resource("apps", "v1", "ControllerRevision", "controllerrevisions")
}

/// One revision of a workload's template: its containers `(name, image)`.
pub(super) struct Revision {
    pub name: String,
    pub hash: String,
    pub template: Value,
}

pub(super) fn template(app: &str, containers: &[(&str, &str)]) -> Value {
    let containers: Vec<Value> = containers
        .iter()
        .map(|(name, image)| {
            json!({"name": name, "image": image, "imagePullPolicy": "IfNotPresent", "resources": {}})
        })
        .collect();
    json!({"metadata": {"labels": {"app": app}}, "spec": {"containers": containers}})
}

pub(super) fn revision(ns: &str, workload: &str, template: Value) -> Revision {
    let hash = safe_hash(&[ns, workload, &template.to_string()], 10);
    Revision {
        name: format!("{workload}-{hash}"),
        hash,
        template,
    }
}

/// The ControllerRevision object of `rev` (number `number`), owned by the workload.
pub(super) fn revision_seed(
    ns: &str,
    owner: &ApiResource,
    workload: &str,
    rev: &Revision,
    number: i64,
    hash_label: &str,
) -> SeedObject {
    let mut template = rev.template.clone();
    template["$patch"] = json!("replace");
    let mut labels = rev.template["metadata"]["labels"].clone();
    labels[hash_label] = json!(rev.hash);
    owned(
        revisions(),
        json!({
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {"name": rev.name, "namespace": ns, "labels": labels},
            "data": {"spec": {"template": template}},
            "revision": number,
        }),
        Some((owner, ns, workload)),
        SeedStatus::None,
    )
}

pub(super) fn containers_of(rev: &Revision) -> Vec<(String, String)> {
    rev.template["spec"]["containers"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
                    (s("name"), s("image"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// How a CloneSet of the scenario looks.
struct CloneSetPlan<'a> {
    ns: &'a str,
    name: &'a str,
    replicas: usize,
    /// Pods kept on the current revision (the partition).
    partition: usize,
    old: Vec<(&'a str, &'a str)>,
    new: Vec<(&'a str, &'a str)>,
    update_type: &'a str,
    max_unavailable: Value,
    labels: Value,
    /// Seconds since the pods were created / since the update started.
    age: i64,
    update_age: i64,
    /// Per-pod decoration: (pod index, updated, plan).
    decorate: &'a dyn Fn(usize, bool, &mut PodPlan),
}

/// Pushes the CloneSet, its revisions and pods; returns the pods' seeds (for the caller's
/// status bookkeeping).
fn cloneset(ctx: &Ctx, plan: CloneSetPlan, out: &mut Vec<SeedObject>) -> Vec<SeedObject> {
    let res = clonesets();
    let current = revision(plan.ns, plan.name, template(plan.name, &plan.old));
    let update = revision(plan.ns, plan.name, template(plan.name, &plan.new));
    let rolling = current.name != update.name;
    let created = ctx.ago(plan.age);
    let updated_at = ctx.ago(plan.update_age);
    let in_place = plan.update_type != "ReCreate";
    let mut pods = Vec::with_capacity(plan.replicas);
    for i in 0..plan.replicas {
        let updated = !rolling || i >= plan.partition;
        let rev = if updated { &update } else { &current };
        let id = safe_hash(&[plan.ns, plan.name, &i.to_string()], 5);
        let recreated = rolling && updated && !in_place;
        let mut p = PodPlan {
            namespace: plan.ns.to_owned(),
            name: format!("{}-{id}", plan.name),
            labels: vec![
                ("app".into(), plan.name.into()),
                ("controller-revision-hash".into(), rev.name.clone()),
                ("pod-template-hash".into(), rev.hash.clone()),
                ("apps.kruise.io/cloneset-instance-id".into(), id.clone()),
            ],
            annotations: Vec::new(),
            containers: containers_of(rev)
                .into_iter()
                .map(|(n, i)| (n, i, false))
                .collect(),
            readiness_gates: vec!["InPlaceUpdateReady"],
            node: ctx.node_for(i),
            owner: (&res, plan.name),
            started: if recreated { updated_at } else { created },
            initial_images: BTreeMap::new(),
            changes: Vec::new(),
            conditions: vec![condition("InPlaceUpdateReady", true, None, created)],
            spec_extra: json!({}),
        };
        if rolling && updated && in_place {
            let old = containers_of(&current);
            let mut last = serde_json::Map::new();
            for ((name, old_image), (_, new_image)) in old.iter().zip(containers_of(rev)) {
                if *old_image != new_image {
                    p.initial_images.insert(name.clone(), old_image.clone());
                    p.changes.push((
                        updated_at,
                        PodChange::Image {
                            container: name.clone(),
                            image: new_image,
                        },
                    ));
                    last.insert(name.clone(), json!({"imageID": ids::image_id(old_image)}));
                }
            }
            let names: Vec<&String> = last.keys().collect();
            let state = json!({
                "revision": rev.name,
                "updateTimestamp": rfc3339(updated_at),
                "lastContainerStatuses": last,
                "updateImages": true,
                "containerBatchesRecord": [{"timestamp": rfc3339(updated_at), "containers": names}],
            });
            p.annotations.push((
                "apps.kruise.io/inplace-update-state".into(),
                state.to_string(),
            ));
        }
        (plan.decorate)(i, updated, &mut p);
        pods.push(p.build());
    }
    let ready = pods.iter().filter(|p| seeded_ready(p, ctx.now)).count();
    let updated_pods: Vec<&SeedObject> = pods
        .iter()
        .filter(|p| {
            p.object["metadata"]["labels"]["controller-revision-hash"] == json!(update.name)
        })
        .collect();
    let updated_ready = updated_pods
        .iter()
        .filter(|p| seeded_ready(p, ctx.now))
        .count();
    let partition = if rolling { plan.partition } else { 0 };
    let status = json!({
        "observedGeneration": 1,
        "replicas": plan.replicas,
        "readyReplicas": ready,
        "availableReplicas": ready,
        "updatedReplicas": updated_pods.len(),
        "updatedReadyReplicas": updated_ready,
        "updatedAvailableReplicas": updated_ready,
        "expectedUpdatedReplicas": plan.replicas.saturating_sub(partition),
        "currentRevision": if updated_pods.len() == plan.replicas { &update.name } else { &current.name },
        "updateRevision": update.name,
        "collisionCount": 0,
        "labelSelector": format!("app={}", plan.name),
    });
    out.push(owned(
        res.clone(),
        json!({
            "apiVersion": res.api_version,
            "kind": "CloneSet",
            "metadata": {"name": plan.name, "namespace": plan.ns, "labels": plan.labels},
            "spec": {
                "replicas": plan.replicas,
                "selector": {"matchLabels": {"app": plan.name}},
                "template": update.template,
                "updateStrategy": {
                    "type": plan.update_type,
                    "partition": partition,
                    "maxUnavailable": plan.max_unavailable,
                    "maxSurge": 0,
                },
                "revisionHistoryLimit": 10,
            },
        }),
        None,
        SeedStatus::Fixed(status),
    ));
    if rolling {
        out.push(revision_seed(
            plan.ns,
            &res,
            plan.name,
            &current,
            1,
            "controller.kubernetes.io/hash",
        ));
    }
    out.push(revision_seed(
        plan.ns,
        &res,
        plan.name,
        &update,
        if rolling { 2 } else { 1 },
        "controller.kubernetes.io/hash",
    ));
    pods
}

/// `web`: a CloneSet mid-rollout (partition 6 of 10, 4 pods updated in place), with the
/// `logtail` SidecarSet on two revisions, the `web-health` PodProbeMarker, the `web-pub`
/// budget, Cascading delete protection and a finished restart.
pub(crate) fn web(ctx: &Ctx, out: &mut Vec<SeedObject>) {
    let sidecar = ops::logtail_revisions();
    let upgraded = |i: usize| i.is_multiple_of(3);
    let probe_failing = |i: usize| i == 2;
    let restarted = 1usize;
    let crr_at = ctx.ago(30 * 60);
    let decorate = |i: usize, _updated: bool, p: &mut PodPlan| {
        let rev: &SidecarRevision = if upgraded(i) {
            &sidecar[1]
        } else {
            &sidecar[0]
        };
        let image = if upgraded(i) {
            &sidecar[1].image
        } else {
            &sidecar[0].image
        };
        p.containers.push(("logtail".into(), image.clone(), true));
        let injected_at = p.started;
        if upgraded(i) {
            let at = ctx.ago(20 * 60);
            p.initial_images
                .insert("logtail".into(), sidecar[0].image.clone());
            p.changes.push((
                at,
                PodChange::Image {
                    container: "logtail".into(),
                    image: image.clone(),
                },
            ));
            p.annotations.push((
                "kruise.io/sidecarset-inplace-update-state".into(),
                ops::sidecar_inplace_state(&sidecar[1], &sidecar[0].image, at),
            ));
        }
        p.annotations
            .extend(ops::sidecar_pod_annotations(rev, injected_at));
        let ok = !probe_failing(i);
        p.conditions.push(condition(
            ops::PROBE_CONDITION,
            ok,
            Some(if ok {
                ""
            } else {
                "curl: (7) Failed to connect to localhost port 80: Connection refused"
            }),
            ctx.ago(if ok { 3600 } else { 90 }),
        ));
        p.labels.extend(ops::probe_labels(ok));
        p.annotations
            .push(("kruise.io/related-pub".into(), "web-pub".into()));
        if i == restarted {
            p.changes.push((
                crr_at,
                PodChange::Restart {
                    container: "nginx".into(),
                },
            ));
            p.changes.sort_by_key(|(at, _)| *at);
        }
    };
    let pods = cloneset(
        ctx,
        CloneSetPlan {
            ns: &ctx.ns,
            name: "web",
            replicas: 10,
            partition: 6,
            old: vec![("nginx", "nginx:1.25.4")],
            new: vec![("nginx", "nginx:1.26.0")],
            update_type: "InPlaceIfPossible",
            max_unavailable: json!(2),
            labels: json!({"app": "web", "policy.kruise.io/delete-protection": "Cascading"}),
            age: 2 * 86_400,
            update_age: 5 * 60,
            decorate: &decorate,
        },
        out,
    );
    let ready = pods.iter().filter(|p| seeded_ready(p, ctx.now)).count();
    let updated_sidecar = (0..pods.len()).filter(|i| upgraded(*i)).count();
    let updated_ready = pods
        .iter()
        .enumerate()
        .filter(|(i, p)| upgraded(*i) && seeded_ready(p, ctx.now))
        .count();
    let restarted_pod = pods[restarted].name().to_owned();
    let restarted_node = nodes::node_name(ctx.node_for(restarted));
    let total = pods.len();
    out.extend(pods);
    ops::sidecar_set(
        ctx,
        &sidecar,
        total,
        updated_sidecar,
        ready,
        updated_ready,
        out,
    );
    ops::probe_marker(ctx, total, out);
    ops::budget(
        ctx,
        "web-pub",
        "web",
        json!({"maxUnavailable": "20%"}),
        total,
        ready,
        out,
    );
    out.push(ops::crr(
        ctx,
        Crr {
            name: format!("{restarted_pod}-restart-nginx"),
            pod: restarted_pod,
            node: restarted_node,
            container: "nginx",
            restart_count_before: 0,
            at: crr_at,
            completed: true,
        },
    ));
}

/// `checkout`: a CloneSet stuck on a crashing image (ReCreate, maxUnavailable 1: the one new
/// pod crash-loops and blocks the rest), with a budget that has nothing left to give.
pub(crate) fn checkout(ctx: &Ctx, out: &mut Vec<SeedObject>) {
    let decorate = |_: usize, _: bool, p: &mut PodPlan| {
        p.annotations
            .push(("kruise.io/related-pub".into(), "checkout-pub".into()));
    };
    let pods = cloneset(
        ctx,
        CloneSetPlan {
            ns: &ctx.ns,
            name: "checkout",
            replicas: 6,
            partition: 5,
            old: vec![("checkout", "registry.example.com/shop/checkout:1.4.2")],
            new: vec![("checkout", "registry.example.com/shop/checkout:1.5.0-crash")],
            update_type: "ReCreate",
            max_unavailable: json!(1),
            labels: json!({"app": "checkout"}),
            age: 86_400,
            update_age: 4 * 60,
            decorate: &decorate,
        },
        out,
    );
    // The rollout asked for every pod (partition 0); only one could go before it got stuck.
    if let Some(cs) = out.iter_mut().rev().find(|o| o.resource.kind == "CloneSet") {
        cs.object["spec"]["updateStrategy"]["partition"] = json!(0);
        if let SeedStatus::Fixed(status) = &mut cs.status {
            status["expectedUpdatedReplicas"] = json!(6);
        }
    }
    let ready = pods.iter().filter(|p| seeded_ready(p, ctx.now)).count();
    let total = pods.len();
    out.extend(pods);
    ops::budget(
        ctx,
        "checkout-pub",
        "checkout",
        json!({"minAvailable": 5}),
        total,
        ready,
        out,
    );
}

/// A bulk namespace for `--pods N`: ten CloneSets per namespace.
pub(crate) fn bulk_namespace(ns: &str, index: usize) -> String {
    format!("{ns}-scale-{}", index / 10)
}

/// Bulk CloneSets holding `pods` pods in all, about 100 each, fully rolled out and ready.
pub(crate) fn bulk(ctx: &Ctx, pods: usize, out: &mut Vec<SeedObject>) {
    if pods == 0 {
        return;
    }
    let sets = pods.div_ceil(100);
    for k in 0..sets {
        let replicas = pods / sets + usize::from(k < pods % sets);
        let ns = bulk_namespace(&ctx.ns, k);
        if k.is_multiple_of(10) {
            out.push(super::namespace_seed(
                &ns,
                &[("kruise-tui.io/demo", "scale")],
            ));
        }
        let name = format!("bulk-{k:03}");
        let pods = cloneset(
            ctx,
            CloneSetPlan {
                ns: &ns,
                name: &name,
                replicas,
                partition: 0,
                old: vec![("app", "nginx:1.25.4")],
                new: vec![("app", "nginx:1.25.4")],
                update_type: "InPlaceIfPossible",
                max_unavailable: json!("20%"),
                labels: json!({"app": name}),
                age: 3600,
                update_age: 3600,
                decorate: &|_, _, _| {},
            },
            out,
        );
        out.extend(pods);
    }
}
