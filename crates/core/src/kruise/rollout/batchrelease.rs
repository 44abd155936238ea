//! The BatchRelease side of Kruise Rollout: batch arithmetic and per-kind partition control
//! (`pkg/controller/batchrelease/control/partitionstyle/*`), batch readiness, the pod batch-label
//! patcher, the executor's phase and batch-state machine, and the workload mutating webhook that
//! intercepts a template change (`pkg/webhook/workload/mutating`).
