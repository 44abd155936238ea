//! SidecarSet: a sans-IO port of Kruise's sidecar injection, in-place sidecar upgrade and
//! SidecarSet admission logic (`pkg/control/sidecarcontrol`, `pkg/controller/sidecarset`,
//! `pkg/webhook/pod/mutating/sidecarset*.go`, `pkg/webhook/sidecarset/*`, v1.8.4).
//!
//! Entry points by role:
//! - object hashing ([`hash`]) as the SidecarSet mutating webhook writes it;
//! - what a pod carries ([`pod_state`]), whether it matches ([`matching`]) and a per-pod
//!   summary for views ([`summary::pod_sidecar_summary`]);
//! - the controller: [`reconcile::reconcile`] (status + pods to write), built on
//!   [`upgrade::next_upgrade_pods`], with [`revision::plan_latest_revision`] and
//!   [`history::truncate_history`] for ControllerRevisions; [`sync`] is the pass the embedded
//!   controller runs (revisions, status, hot-upgrade resets, upgrades, events), and
//!   [`restore`] rebuilds a historic revision for injection;
//! - admission hooks ([`admission`]): pod CREATE injection (mutating), SidecarSet defaults and
//!   hashes (mutating) and SidecarSet validation.

pub mod admission;
pub mod calculator;
pub mod control;
pub mod defaults;
pub mod gojson;
pub mod hash;
pub mod history;
pub mod inject;
pub mod matching;
pub mod metadata;
mod order;
pub mod pod_state;
pub mod quantity;
pub mod reconcile;
pub mod resources;
pub mod restore;
pub mod revision;
pub mod summary;
pub mod sync;
pub mod upgrade;
pub mod validate;

pub use crate::api::sidecarset::{SidecarContainer, SidecarSet, SidecarSetSpec, SidecarSetStatus};

/// SidecarSet and pod annotation: the set's content hash (per-set JSON map on pods).
pub const SIDECARSET_HASH_ANNOTATION: &str = crate::api::keys::SIDECARSET_HASH;
/// SidecarSet and pod annotation: the hash computed with every image blanked.
pub const SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION: &str =
    crate::api::keys::SIDECARSET_HASH_WITHOUT_IMAGE;
/// Pod annotation: names of the sets injected into the pod, sorted and comma-joined.
pub const SIDECARSET_LIST_ANNOTATION: &str = "kruise.io/sidecarset-injected-list";
/// Pod annotation: per-set `InPlaceUpdateState` recorded before an in-place upgrade.
pub const SIDECARSET_INPLACE_UPDATE_STATE_KEY: &str =
    crate::api::keys::SIDECARSET_INPLACE_UPDATE_STATE;
/// Pod annotation: hot-upgrade container name -> working twin.
pub const SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER: &str =
    "kruise.io/sidecarset-working-hotupgrade-container";
/// Pod annotation prefix of a hot-upgrade twin's version counter.
pub const SIDECARSET_VERSION_PREFIX: &str = "version.sidecarset.kruise.io/";
/// Pod annotation prefix of a hot-upgrade twin's alternate version counter.
pub const SIDECARSET_VERSION_ALT_PREFIX: &str = "versionalt.sidecarset.kruise.io/";
/// Env var marking every injected container.
pub const SIDECAR_ENV_KEY: &str = "IS_INJECTED";
/// ControllerRevision label naming the owning set.
pub const SIDECARSET_NAME_LABEL: &str = "kruise.io/sidecarset-name";
/// Label carrying a user-chosen version tag.
pub const SIDECARSET_CUSTOM_VERSION_LABEL: &str = "apps.kruise.io/sidecarset-custom-version";
/// Pod condition maintained by the controller.
pub const SIDECARSET_UPGRADABLE_CONDITION: &str = "SidecarSetUpgradable";

#[cfg(test)]
mod tests;
