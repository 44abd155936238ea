//! Admission hook points: a mutating and a validating chain of hooks registered on the server,
//! called for every create, update, patch (as update), delete and for subresource writes
//! (status, scale, eviction), like Kubernetes admission webhooks. Kruise's webhooks (deletion
//! protection, PodUnavailableBudget, SidecarSet injection, CRR defaulting) plug in here.

use std::sync::{Arc, RwLock};

use serde_json::Value;

/// The operation being admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
}

/// What a hook sees: like `admission.k8s.io/v1 AdmissionRequest`.
#[derive(Debug, Clone)]
pub struct AdmissionRequest {
    pub operation: Operation,
    pub group: String,
    pub version: String,
    pub kind: String,
    /// Plural resource name (`pods`, `clonesets`).
    pub resource: String,
    /// `""`, `status`, `scale`, `eviction`.
    pub subresource: String,
    pub namespace: String,
    pub name: String,
    pub dry_run: bool,
    /// The object after the change (None on delete). For eviction, the Eviction body.
    pub object: Option<Value>,
    /// The object before the change (None on create).
    pub old_object: Option<Value>,
}

/// A hook's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Allow,
    /// Refuse with an HTTP code (e.g. 403, 422, 429) and a message.
    Deny {
        code: u16,
        message: String,
    },
    /// Allow, replacing the object (mutating hooks only; ignored from validating hooks).
    Mutate(Value),
}

/// An admission hook (a webhook, in-process).
pub trait AdmissionHook: Send + Sync {
    /// Shown in denial messages: `admission webhook "NAME" denied the request: ...`.
    fn name(&self) -> &str;
    fn admit(&self, req: &AdmissionRequest) -> Verdict;
}

/// The registered hooks; clone it freely (shared).
#[derive(Clone, Default)]
pub struct Admission {
    mutating: Arc<RwLock<Vec<Arc<dyn AdmissionHook>>>>,
    validating: Arc<RwLock<Vec<Arc<dyn AdmissionHook>>>>,
}

/// A denial, as the request's error.
#[derive(Debug, Clone, PartialEq)]
pub struct Denied {
    pub code: u16,
    pub message: String,
}

impl Admission {
    pub fn add_mutating(&self, hook: Arc<dyn AdmissionHook>) {
        if let Ok(mut v) = self.mutating.write() {
            v.push(hook);
        }
    }

    pub fn add_validating(&self, hook: Arc<dyn AdmissionHook>) {
        if let Ok(mut v) = self.validating.write() {
            v.push(hook);
        }
    }

    fn hooks(list: &RwLock<Vec<Arc<dyn AdmissionHook>>>) -> Vec<Arc<dyn AdmissionHook>> {
        list.read().map(|v| v.clone()).unwrap_or_default()
    }

    fn denied(hook: &dyn AdmissionHook, code: u16, message: &str) -> Denied {
        Denied {
            code,
            message: format!(
                "admission webhook \"{}\" denied the request: {message}",
                hook.name()
            ),
        }
    }

    /// Run the mutating chain in order; each hook sees the previous hooks' result.
    pub fn mutate(&self, req: &mut AdmissionRequest) -> Result<(), Denied> {
        for hook in Self::hooks(&self.mutating) {
            match hook.admit(req) {
                Verdict::Allow => {}
                Verdict::Deny { code, message } => {
                    return Err(Self::denied(&*hook, code, &message));
                }
                Verdict::Mutate(v) => {
                    if req.operation != Operation::Delete {
                        req.object = Some(v);
                    }
                }
            }
        }
        Ok(())
    }

    /// Run the validating chain; the first denial wins.
    pub fn validate(&self, req: &AdmissionRequest) -> Result<(), Denied> {
        for hook in Self::hooks(&self.validating) {
            if let Verdict::Deny { code, message } = hook.admit(req) {
                return Err(Self::denied(&*hook, code, &message));
            }
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        Self::hooks(&self.mutating).is_empty() && Self::hooks(&self.validating).is_empty()
    }
}
