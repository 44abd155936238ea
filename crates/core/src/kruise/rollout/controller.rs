//! The Rollout side of Kruise Rollout (`pkg/controller/rollout`): phase, the Progressing
//! condition, the step machine, approve/jump/plan change, rollback and continuous release,
//! finalising, and the Rollout validating webhook.
