//! Sends the action layer's requests: read the object at the version the server serves (newest),
//! check RBAC with a SelfSubjectAccessReview (cached), send the pinned JSON patch, and on a
//! conflict re-read, re-check that the action still means the same thing, retry a bounded number
//! of times or stop and say what changed. Every attempt that reaches the server is journaled.
//! `--readonly` sends nothing at all.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use k8s_openapi::api::{
    apps::v1::ControllerRevision,
    authorization::v1::{ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec},
};
use kube::{
    Api, Client,
    api::{DynamicObject, ListParams, Patch, PatchParams, PostParams},
    core::{ApiResource, GroupVersionKind},
    discovery::Discovery,
};
use serde_json::Value;

use crate::{
    actions::{self, Action, ActionError, ObjectState, Prepared, Recheck, RevisionInfo, Target},
    api::kinds::KindInfo,
    journal::{Journal, Outcome},
};

mod journal;
mod merge;

pub use merge::{APPROVE_SETTLE, APPROVE_TRIES};

/// How often a conflicting request is re-read and re-sent before giving up.
pub const RETRIES: usize = 3;

/// Why an action was not carried out, as one line for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActError {
    #[error("read-only: {0} not sent")]
    ReadOnly(String),
    #[error(transparent)]
    Refused(#[from] ActionError),
    #[error("forbidden: {0}")]
    Forbidden(String),
    #[error("not found: {0}")]
    NotFound(String),
    /// Someone else changed what the action is about.
    #[error("{0}; not sent (look again and retry)")]
    Conflict(String),
    /// The server refused it (validation, admission webhook).
    #[error("refused by the server: {0}")]
    Rejected(String),
    #[error("{0}")]
    Failed(String),
}

use super::errors::text as describe;

fn classify(err: &kube::Error) -> ActError {
    let message = describe(err);
    match err {
        kube::Error::Api(s) if s.code == 403 => ActError::Forbidden(message),
        kube::Error::Api(s) if s.code == 404 => ActError::NotFound(message),
        kube::Error::Api(s) if s.code == 409 => ActError::Conflict(message),
        kube::Error::Api(s) if s.code == 422 || s.code == 400 => ActError::Rejected(message),
        _ => ActError::Failed(message),
    }
}

type SsarKey = (String, String, String, String);

/// Everything sending actions needs; shared by the console's executor and the subcommands.
pub struct Actor {
    client: Client,
    readonly: bool,
    context: Option<String>,
    cluster: String,
    journal: Option<Journal>,
    /// Who the server says we are, asked once (for the journal's "by whom").
    user: tokio::sync::OnceCell<Option<String>>,
    ssar: Mutex<HashMap<SsarKey, Result<(), String>>>,
    resources: Mutex<HashMap<&'static KindInfo, ApiResource>>,
}

/// What a performed action left.
#[derive(Debug, Clone, PartialEq)]
pub struct Done {
    pub prepared: Prepared,
    /// How many conflicts were retried.
    pub retries: usize,
    /// The name of the object a POST created (the server picks it from `generateName`).
    pub created: Option<String>,
}

impl Actor {
    pub fn new(
        client: Client,
        readonly: bool,
        context: Option<String>,
        cluster: String,
        journal: Option<Journal>,
    ) -> Arc<Self> {
        Arc::new(Self {
            client,
            readonly,
            context,
            cluster,
            journal,
            user: tokio::sync::OnceCell::new(),
            ssar: Mutex::new(HashMap::new()),
            resources: Mutex::new(HashMap::new()),
        })
    }

    pub fn readonly(&self) -> bool {
        self.readonly
    }

    /// The resource of `target`'s kind at the newest version the server serves.
    pub async fn resource(&self, target: &Target) -> Result<ApiResource, ActError> {
        let key = target.kind;
        if let Some(ar) = self
            .resources
            .lock()
            .ok()
            .and_then(|r| r.get(&key).cloned())
        {
            return Ok(ar);
        }
        let info = target.kind;
        let ar = if info.group.is_empty() {
            ApiResource::from_gvk_with_plural(
                &GroupVersionKind::gvk("", "v1", info.kind),
                info.plural,
            )
        } else {
            let discovery = Discovery::new(self.client.clone())
                .filter(&[info.group])
                .run()
                .await
                .map_err(|e| {
                    ActError::Failed(format!("cannot discover {}: {}", info.group, describe(&e)))
                })?;
            let mut served: Vec<ApiResource> = discovery
                .groups()
                .flat_map(|g| {
                    g.versions()
                        .flat_map(|v| g.versioned_resources(v))
                        .map(|(ar, _)| ar)
                        .collect::<Vec<_>>()
                })
                // Discovery's answer, read back to the kind (decoding).
                .filter(|ar| ar.kind == info.kind)
                .collect();
            served.sort_by(|a, b| {
                crate::kube::discovery::version_rank(&b.version)
                    .cmp(&crate::kube::discovery::version_rank(&a.version))
            });
            served.into_iter().next().ok_or_else(|| {
                ActError::NotFound(format!(
                    "this cluster does not serve {} ({})",
                    info.kind, info.group
                ))
            })?
        };
        if let Ok(mut r) = self.resources.lock() {
            r.insert(key, ar.clone());
        }
        Ok(ar)
    }

    fn api(&self, target: &Target, ar: &ApiResource) -> Api<DynamicObject> {
        match &target.namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, ar),
            None => Api::all_with(self.client.clone(), ar),
        }
    }

    /// Reads the object (and, for an undo, its revisions).
    pub async fn read(
        &self,
        target: &Target,
        with_revisions: bool,
    ) -> Result<ObjectState, ActError> {
        let ar = self.resource(target).await?;
        let obj =
            self.api(target, &ar)
                .get(&target.name)
                .await
                .map_err(|e| match classify(&e) {
                    ActError::NotFound(_) => {
                        ActError::NotFound(format!("{} does not exist", target.describe()))
                    }
                    other => other,
                })?;
        let object = serde_json::to_value(&obj).map_err(|e| ActError::Failed(e.to_string()))?;
        let revisions = if with_revisions {
            self.revisions(target, obj.metadata.uid.as_deref().unwrap_or_default())
                .await?
        } else {
            Vec::new()
        };
        Ok(ObjectState {
            version: ar.version.clone(),
            plural: ar.plural.clone(),
            object,
            revisions,
        })
    }

    /// The ControllerRevisions the workload owns, with the pod template each holds.
    pub async fn revisions(
        &self,
        target: &Target,
        uid: &str,
    ) -> Result<Vec<RevisionInfo>, ActError> {
        let ns = target.namespace.clone().unwrap_or_default();
        let api: Api<ControllerRevision> = Api::namespaced(self.client.clone(), &ns);
        let list = api
            .list(&ListParams::default())
            .await
            .map_err(|e| classify(&e))?;
        Ok(list
            .items
            .into_iter()
            .filter(|r| {
                r.metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|o| o.controller == Some(true) && o.uid == uid)
            })
            .filter_map(|r| {
                let mut template = r.data.as_ref()?.0.pointer("/spec/template")?.clone();
                if let Some(t) = template.as_object_mut() {
                    t.remove("$patch");
                }
                Some(RevisionInfo {
                    name: r.metadata.name.clone().unwrap_or_default(),
                    number: r.revision,
                    template,
                })
            })
            .collect())
    }

    /// Whether the user may `verb` the target's resource, asked once per verb, resource and
    /// namespace (SelfSubjectAccessReview). A server that cannot answer is not a refusal.
    pub async fn allowed(&self, verb: &str, target: &Target) -> Result<(), ActError> {
        let ar = self.resource(target).await?;
        let ns = target.namespace.clone().unwrap_or_default();
        let key = (
            verb.to_owned(),
            ar.group.clone(),
            ar.plural.clone(),
            ns.clone(),
        );
        if let Some(v) = self.ssar.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return v.map_err(ActError::Forbidden);
        }
        let review = SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    verb: Some(verb.to_owned()),
                    group: Some(ar.group.clone()),
                    resource: Some(ar.plural.clone()),
                    namespace: target.namespace.clone(),
                    name: Some(target.name.clone()),
                    ..ResourceAttributes::default()
                }),
                ..SelfSubjectAccessReviewSpec::default()
            },
            ..SelfSubjectAccessReview::default()
        };
        let api: Api<SelfSubjectAccessReview> = Api::all(self.client.clone());
        let verdict = match api.create(&PostParams::default(), &review).await {
            Ok(answer) => match answer.status {
                Some(s) if !s.allowed => Err(format!(
                    "you may not {verb} {}{}{}",
                    ar.plural,
                    target
                        .namespace
                        .as_deref()
                        .map(|n| format!(" in {n}"))
                        .unwrap_or_default(),
                    s.reason
                        .filter(|r| !r.is_empty())
                        .map(|r| format!(" ({r})"))
                        .unwrap_or_default()
                )),
                _ => Ok(()),
            },
            Err(err) => {
                tracing::debug!("SelfSubjectAccessReview unavailable: {}", describe(&err));
                return Ok(());
            }
        };
        if let Ok(mut c) = self.ssar.lock() {
            c.insert(key, verdict.clone());
        }
        verdict.map_err(ActError::Forbidden)
    }

    /// Reads the object and prepares `action` on it (nothing is sent).
    pub async fn prepare(
        &self,
        target: &Target,
        action: &Action,
    ) -> Result<(Prepared, ObjectState), ActError> {
        if *target.kind == crate::api::kinds::ROLLOUT
            && let Action::Undo { to_revision } = action
        {
            return self.prepare_rollout_undo(target, *to_revision).await;
        }
        let with_revisions = matches!(action, Action::Undo { .. });
        let state = self.read(target, with_revisions).await?;
        let prepared = actions::prepare(target, action, &state)?;
        Ok((prepared, state))
    }

    /// A Rollout's undo: the Rollout, then the workload it releases with its revisions; the
    /// prepared action is the workload's template write (its state is the one returned), with
    /// the Rollout's resume after it where the Rollout is paused.
    async fn prepare_rollout_undo(
        &self,
        rollout: &Target,
        to_revision: Option<i64>,
    ) -> Result<(Prepared, ObjectState), ActError> {
        let rollout_state = self.read(rollout, false).await?;
        let workload = actions::rollout::workload_of(rollout, &rollout_state.object)?;
        let state = self.read(&workload, true).await.map_err(|e| match e {
            ActError::NotFound(m) => {
                ActError::NotFound(format!("{m} (the workload {} names)", rollout.describe()))
            }
            other => other,
        })?;
        let prepared = actions::rollout::prepare_undo(
            rollout,
            &rollout_state,
            &workload,
            &state,
            to_revision,
        )?;
        Ok((prepared, state))
    }

    /// Sends `prepared` (made on `state`): retries conflicts after re-checking their meaning,
    /// journals every attempt. In read-only mode sends nothing.
    pub async fn perform(&self, prepared: Prepared, state: ObjectState) -> Result<Done, ActError> {
        if self.readonly {
            return Err(ActError::ReadOnly(prepared.action.describe()));
        }
        let mut prepared = prepared;
        let then = std::mem::take(&mut prepared.then);
        let mut done = self.perform_one(prepared, state).await?;
        for next in then {
            let what = format!("{} ({})", next.target.describe(), next.action.describe());
            match Box::pin(self.perform_merge(next)).await {
                Ok(d) => done.retries += d.retries,
                Err(err) => {
                    return Err(ActError::Failed(format!(
                        "sent: {}; but then {what} failed: {err}",
                        done.prepared.action.describe()
                    )));
                }
            }
        }
        Ok(done)
    }

    async fn perform_one(&self, prepared: Prepared, state: ObjectState) -> Result<Done, ActError> {
        if prepared.request.content_type == actions::rollout::MERGE_PATCH {
            return self.perform_merge(prepared).await;
        }
        match prepared.request.verb.as_str() {
            "POST" => return self.create(prepared).await,
            "DELETE" => return self.delete(prepared).await,
            _ => {}
        }
        self.allowed("patch", &prepared.target).await?;
        let ar = self.resource(&prepared.target).await?;
        let api = self.api(&prepared.target, &ar);
        let mut prepared = prepared;
        let mut state = state;
        let mut retries = 0;
        loop {
            let patch: json_patch::Patch = serde_json::from_value(prepared.request.body.clone())
                .map_err(|e| ActError::Failed(format!("bad patch: {e}")))?;
            let result = api
                .patch(
                    &prepared.target.name,
                    &PatchParams::default(),
                    &Patch::<()>::Json(patch),
                )
                .await;
            let outcome = match &result {
                Ok(_) => Outcome {
                    ok: true,
                    code: Some(200),
                    message: String::new(),
                },
                Err(err) => Outcome {
                    ok: false,
                    code: match err {
                        kube::Error::Api(s) => Some(s.code),
                        _ => None,
                    },
                    message: describe(err),
                },
            };
            self.journal(&prepared, outcome).await;
            let err = match result {
                Ok(_) => {
                    return Ok(Done {
                        prepared,
                        retries,
                        created: None,
                    });
                }
                Err(err) => err,
            };
            // A 409, or a 422 that may be a failed `test` pin: re-read and see what moved.
            let code = match &err {
                kube::Error::Api(s) => s.code,
                _ => 0,
            };
            if code != 409 && code != 422 {
                return Err(classify(&err));
            }
            let fresh = self
                .read(
                    &prepared.target,
                    matches!(prepared.action, Action::Undo { .. }),
                )
                .await?;
            // A field added where none was is pinned by the resourceVersion: its `test` fails
            // (422) whenever anything else moved, which is a conflict to retry, not a refusal.
            let rv = "/metadata/resourceVersion";
            let rv_pinned = prepared
                .request
                .body
                .as_array()
                .is_some_and(|ops| ops.iter().any(|op| op["op"] == "test" && op["path"] == rv));
            let rv_moved = rv_pinned && state.object.pointer(rv) != fresh.object.pointer(rv);
            match actions::recheck(&prepared, &state.object, &fresh.object) {
                Recheck::Changed(what) => return Err(ActError::Conflict(what)),
                // Nothing the pins hold moved: the 422 was the server refusing the change.
                Recheck::Same if code == 422 && !rv_moved => return Err(classify(&err)),
                Recheck::Same => {}
            }
            if retries >= RETRIES {
                return Err(ActError::Conflict(format!(
                    "{} kept changing ({} attempts)",
                    prepared.target.describe(),
                    retries + 1
                )));
            }
            retries += 1;
            prepared = actions::prepare(&prepared.target, &prepared.action, &fresh)?;
            state = fresh;
        }
    }

    /// Prepares and performs in one go (the subcommands).
    pub async fn run(&self, target: &Target, action: &Action) -> Result<Done, ActError> {
        if self.readonly {
            return Err(ActError::ReadOnly(action.describe()));
        }
        let (prepared, state) = self.prepare(target, action).await?;
        self.perform(prepared, state).await
    }

    /// The target of a create: the object in the request's body (a ContainerRecreateRequest
    /// for a restart).
    fn created_target(prepared: &Prepared) -> Result<Target, ActError> {
        let body = &prepared.request.body;
        let (group, _) = body["apiVersion"]
            .as_str()
            .and_then(|v| v.rsplit_once('/'))
            .unwrap_or(("", ""));
        let kind = body["kind"].as_str().unwrap_or_default();
        let info = crate::api::kinds::KINDS
            .iter()
            .find(|k| k.kind == kind && k.group == group)
            .ok_or_else(|| ActError::Failed(format!("cannot create a {kind} ({group})")))?;
        Ok(Target::new(
            info,
            prepared.target.namespace.as_deref(),
            body["metadata"]["generateName"]
                .as_str()
                .or(body["metadata"]["name"].as_str())
                .unwrap_or_default(),
        ))
    }

    fn outcome<T>(result: &Result<T, kube::Error>, ok: u16) -> Outcome {
        match result {
            Ok(_) => Outcome {
                ok: true,
                code: Some(ok),
                message: String::new(),
            },
            Err(err) => Outcome {
                ok: false,
                code: match err {
                    kube::Error::Api(s) => Some(s.code),
                    _ => None,
                },
                message: describe(err),
            },
        }
    }

    /// POSTs the request's object (SSAR `create` on its resource first); journaled.
    async fn create(&self, prepared: Prepared) -> Result<Done, ActError> {
        let target = Self::created_target(&prepared)?;
        self.allowed("create", &target).await?;
        let ar = self.resource(&target).await?;
        let api: Api<DynamicObject> = match &target.namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &ar),
            None => Api::all_with(self.client.clone(), &ar),
        };
        let object: DynamicObject = serde_json::from_value(prepared.request.body.clone())
            .map_err(|e| ActError::Failed(format!("bad object: {e}")))?;
        let result = api.create(&PostParams::default(), &object).await;
        self.journal(&prepared, Self::outcome(&result, 201)).await;
        match result {
            Ok(made) => Ok(Done {
                prepared,
                retries: 0,
                created: made.metadata.name,
            }),
            Err(err) => Err(classify(&err)),
        }
    }

    /// DELETEs the target with the request's DeleteOptions (uid precondition; SSAR `delete`
    /// first); journaled. A denial by the admission chain (deletion protection, a
    /// PodUnavailableBudget) comes back as its one line.
    async fn delete(&self, prepared: Prepared) -> Result<Done, ActError> {
        self.allowed("delete", &prepared.target).await?;
        let ar = self.resource(&prepared.target).await?;
        let api = self.api(&prepared.target, &ar);
        let uid = prepared.request.body["preconditions"]["uid"]
            .as_str()
            .map(str::to_owned);
        let params = kube::api::DeleteParams {
            preconditions: uid.map(|uid| kube::api::Preconditions {
                uid: Some(uid),
                resource_version: None,
            }),
            ..kube::api::DeleteParams::default()
        };
        let result = api.delete(&prepared.target.name, &params).await;
        self.journal(&prepared, Self::outcome(&result, 200)).await;
        match result {
            Ok(_) => Ok(Done {
                prepared,
                retries: 0,
                created: None,
            }),
            Err(err) => Err(match classify(&err) {
                ActError::Conflict(m) => ActError::Conflict(format!(
                    "{} was replaced meanwhile (another object of that name): {m}",
                    prepared.target.describe()
                )),
                ActError::Forbidden(m) if !m.contains("you may not") => ActError::Rejected(m),
                other => other,
            }),
        }
    }
}

/// The JSON at `pointer` of an object, for callers that show values.
pub fn field<'a>(object: &'a Value, pointer: &str) -> Option<&'a Value> {
    object.pointer(pointer).filter(|v| !v.is_null())
}
