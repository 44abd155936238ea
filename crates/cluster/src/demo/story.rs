//! The demo scenario as a user would have made it (PRODUCT §5): only what a person creates —
//! workloads, a SidecarSet, a PodProbeMarker, budgets, protection labels, restarts — plus the
//! history they would have made (an image change that crashes, a partition walked half way),
//! written through the API. The embedded controllers and the simulated nodes produce the pods,
//! revisions and status.
//!
//! [`play`] creates the objects and walks the history (each change waits until the controllers
//! have seen the one before, so each leaves its own revision); [`epilogue`] then restarts
//! containers of pods once they run. Without controllers there is no history to wait for: the
//! final specs are written directly.

mod images;
mod objects;
pub mod rollout;
mod seed_kinds;
mod spread;

use std::time::Duration;

use anyhow::{Context as _, Result};
use kube::{
    Api, Client,
    api::{DynamicObject, Patch, PatchParams, PostParams},
    core::{ApiResource, GroupVersionKind},
};
use serde_json::{Value, json};

use kruise_client::errors::Plain as _;

use crate::api::kinds;

pub use objects::PROBE_CONDITION;

/// How many simulated nodes a scenario of about `pods` pods spreads over.
pub fn node_count(pods: Option<usize>) -> usize {
    3 + pods.unwrap_or(0) / 2000
}

/// The namespaces whose pods a churn changes: the bulk ones (`{ns}-scale-N`) when the
/// scenario of about `pods` pods has any, else `ns` itself.
pub fn churn_namespace_prefix(ns: &str, pods: Option<usize>) -> String {
    if pods.is_some_and(|p| p > objects::base_pods()) {
        format!("{ns}-scale-")
    } else {
        ns.to_owned()
    }
}

/// How the story is told.
#[derive(Debug, Clone)]
pub struct StoryOptions {
    pub namespace: String,
    /// About how many pods in all (`None`: the base scenario, about 25).
    pub pods: Option<usize>,
    /// Whether controllers run (the history waits for them).
    pub controllers: bool,
    /// Whether Kruise Rollout is served (its chapter is told).
    pub kruise_rollout: bool,
}

/// The Namespace `name`, as the story creates it.
pub(crate) fn namespace_obj(name: &str) -> Obj {
    objects::namespace(name, json!({}))
}

/// How long one history step waits for the controllers to see the previous one.
const STEP_TIMEOUT: Duration = Duration::from_secs(20);

pub(crate) fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

fn api(client: &Client, ar: &ApiResource, ns: Option<&str>) -> Api<DynamicObject> {
    match ns {
        Some(ns) => Api::namespaced_with(client.clone(), ns, ar),
        None => Api::all_with(client.clone(), ar),
    }
}

/// One object of the story and where it goes.
pub(crate) struct Obj {
    pub ar: ApiResource,
    pub namespace: Option<String>,
    pub body: Value,
}

impl Obj {
    fn name(&self) -> &str {
        self.body["metadata"]["name"].as_str().unwrap_or_default()
    }
}

/// Creates `obj` (an existing one is left as it is); returns whether it was created.
pub(crate) async fn create(client: &Client, obj: &Obj) -> Result<bool> {
    let api = api(client, &obj.ar, obj.namespace.as_deref());
    let body: DynamicObject = serde_json::from_value(obj.body.clone())
        .with_context(|| format!("the demo's {} {} does not parse", obj.ar.kind, obj.name()))?;
    match api.create(&PostParams::default(), &body).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
        Err(err) => Err(err)
            .plain()
            .with_context(|| format!("cannot create the demo's {} {}", obj.ar.kind, obj.name())),
    }
}

/// Merge-patches `patch` onto `obj`.
async fn patch(client: &Client, obj: &Obj, patch: &Value) -> Result<()> {
    api(client, &obj.ar, obj.namespace.as_deref())
        .patch(obj.name(), &PatchParams::default(), &Patch::Merge(patch))
        .await
        .plain()
        .with_context(|| format!("cannot change the demo's {} {}", obj.ar.kind, obj.name()))?;
    Ok(())
}

/// Waits until the controller of `obj` has observed its current generation and recorded an
/// update revision (or a SidecarSet its latest revision). Gives up quietly after a while: the
/// story goes on, only less of its history shows.
async fn observed(client: &Client, obj: &Obj) {
    let api = api(client, &obj.ar, obj.namespace.as_deref());
    let deadline = tokio::time::Instant::now() + STEP_TIMEOUT;
    while tokio::time::Instant::now() < deadline {
        if let Ok(o) = api.get(obj.name()).await {
            let generation = o.metadata.generation.unwrap_or(0);
            let status = &o.data["status"];
            let seen = status["observedGeneration"].as_i64().unwrap_or(0) >= generation;
            let revision = ["updateRevision", "daemonSetHash", "latestRevision"]
                .iter()
                .any(|k| status[*k].as_str().is_some_and(|s| !s.is_empty()));
            if seen && revision {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tracing::warn!(
        "demo: the controllers did not pick up {} {} in {STEP_TIMEOUT:?}; going on",
        obj.ar.kind,
        obj.name()
    );
}

/// The status upstream's AdvancedCronJob controller writes for a job it has just seen: the kind
/// of job it creates, nothing active and no schedule passed yet (runs missed before the job
/// existed are not made up). The embedded cluster runs no AdvancedCronJob controller.
async fn cron_job_status(client: &Client, obj: &Obj) -> Result<()> {
    let kind = if obj.body["spec"]["template"]["broadcastJobTemplate"].is_object() {
        "BroadcastJob"
    } else {
        "Job"
    };
    api(client, &obj.ar, obj.namespace.as_deref())
        .patch_status(
            obj.name(),
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"type": kind}})),
        )
        .await
        .plain()
        .with_context(|| format!("cannot write the status of the demo's {}", obj.name()))?;
    Ok(())
}

/// Creates the scenario's objects and walks its history. Returns how many objects it created.
pub async fn play(client: &Client, opts: &StoryOptions) -> Result<usize> {
    let story = objects::story(&opts.namespace, opts.pods);
    let mut created = 0;
    for obj in &story.namespaces {
        created += usize::from(create(client, obj).await?);
    }
    // First versions of everything, then the history on top.
    let firsts =
        futures::future::try_join_all(story.objects.iter().map(|o| create(client, o))).await?;
    created += firsts.into_iter().filter(|c| *c).count();
    created += seed_kinds::play(client, opts).await?;
    for obj in story
        .objects
        .iter()
        .filter(|o| kinds::find(&o.ar.group, &o.ar.kind) == Some(&kinds::ADVANCED_CRONJOB))
    {
        cron_job_status(client, obj).await?;
    }
    // Each object's changes in order; different objects' histories side by side.
    let chains = (0..story.objects.len()).map(|index| {
        let obj = &story.objects[index];
        let changes: Vec<&Value> = story
            .history
            .iter()
            .filter(|(i, _)| *i == index)
            .map(|(_, c)| c)
            .collect();
        async move {
            for change in changes {
                if opts.controllers {
                    observed(client, obj).await;
                }
                patch(client, obj, change).await?;
            }
            Ok::<(), anyhow::Error>(())
        }
    });
    futures::future::try_join_all(chains).await?;
    created += spread::play(client, &opts.namespace).await?;
    created += rollout::play(client, opts).await?;
    Ok(created)
}

/// Restarts, once the pods they restart run (one finished, one still running; waits bounded
/// for the pods), beside the spread kinds' statuses kept up to date, the image pre-download once
/// the rollouts settled, and what the controllers the embedded cluster lacks would write once the
/// nodes and pods are there (the BroadcastJob's pods, db's kept pod states); run it in the
/// background.
pub async fn epilogue(client: &Client, opts: &StoryOptions) {
    futures::join!(
        restarts(client, opts),
        spread::statuses(client, &opts.namespace),
        images::tell(client, &opts.namespace),
        seed_kinds::epilogue(client, opts)
    );
}

async fn restarts(client: &Client, opts: &StoryOptions) {
    for crr in objects::restarts(&opts.namespace) {
        let pod = crr.body["spec"]["podName"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let pods: Api<k8s_openapi::api::core::v1::Pod> =
            Api::namespaced(client.clone(), &opts.namespace);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        let mut running = false;
        while tokio::time::Instant::now() < deadline {
            if let Ok(p) = pods.get(&pod).await
                && p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
            {
                running = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        if !running {
            tracing::warn!("demo: pod {pod} is not running; its restart is left out");
            continue;
        }
        if let Err(err) = create(client, &crr).await {
            tracing::warn!("demo: {err:#}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_story_holds_every_kind_the_product_shows() {
        let story = objects::story("demo", None);
        let kinds: std::collections::BTreeSet<&str> =
            story.objects.iter().map(|o| o.ar.kind.as_str()).collect();
        for kind in [
            "CloneSet",
            "StatefulSet",
            "DaemonSet",
            "SidecarSet",
            "PodProbeMarker",
            "PodUnavailableBudget",
            "AdvancedCronJob",
        ] {
            assert!(kinds.contains(kind), "{kind} missing: {kinds:?}");
        }
        assert_eq!(objects::restarts("demo").len(), 2);
        // Protected objects: web (Cascading) and db (Always).
        let protected: Vec<(&str, &str)> = story
            .objects
            .iter()
            .filter_map(|o| {
                let v =
                    o.body["metadata"]["labels"]["policy.kruise.io/delete-protection"].as_str()?;
                Some((o.name(), v))
            })
            .collect();
        assert_eq!(protected, [("web", "Cascading"), ("db", "Always")]);
        // Every change in the history applies to an object of the story.
        assert!(story.history.iter().all(|(i, _)| *i < story.objects.len()));
    }

    #[test]
    fn the_main_containers_have_requests_and_limits_in_every_revision_and_db_runs_hot() {
        let story = objects::story("demo", None);
        let find = |name: &str| story.objects.iter().position(|o| o.name() == name).unwrap();
        let db = &story.objects[find("db")].body["spec"]["template"];
        assert_eq!(
            db["metadata"]["annotations"][kruise_core::sim::usage::HOT_ANNOTATION],
            "hot"
        );
        for (name, container) in [
            ("web", "nginx"),
            ("checkout", "checkout"),
            ("db", "postgres"),
        ] {
            let index = find(name);
            let first = &story.objects[index].body["spec"]["template"]["spec"]["containers"][0];
            assert_eq!(first["name"], container);
            assert!(first["resources"]["limits"]["cpu"].is_string(), "{name}");
            // A merge patch replaces the list: each change carries them again.
            for (_, change) in story.history.iter().filter(|(i, _)| *i == index) {
                let changed = &change["spec"]["template"]["spec"]["containers"][0];
                assert_eq!(changed["resources"], first["resources"], "{name}");
            }
        }
    }

    #[test]
    fn bulk_pods_are_spread_over_cloneset_of_about_a_hundred() {
        let story = objects::story("demo", Some(10_000));
        let bulk: Vec<&Obj> = story
            .objects
            .iter()
            .filter(|o| o.name().starts_with("bulk-"))
            .collect();
        let total: i64 = bulk
            .iter()
            .map(|o| o.body["spec"]["replicas"].as_i64().unwrap_or(0))
            .sum();
        let base = objects::base_pods();
        assert_eq!(total as usize, 10_000 - base);
        assert_eq!(bulk.len(), (10_000 - base).div_ceil(100));
        assert_eq!(node_count(Some(10_000)), 8);
    }
}
