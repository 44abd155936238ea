//! Kruise feature gates (v1.8.4 defaults, `pkg/features/kruise_features.go`) and the Kruise
//! version whose behaviour the logic follows.

use std::collections::BTreeMap;

/// Which upstream behaviour to follow where v1.8.4 and v1.9.0 differ.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum KruiseVersion {
    /// Tag v1.8.4.
    V1_8,
    /// Tag v1.9.0, the current release (what is assumed when nothing tells).
    #[default]
    V1_9,
}

impl KruiseVersion {
    /// `v1.8` / `v1.9`.
    pub fn name(self) -> &'static str {
        match self {
            KruiseVersion::V1_8 => "v1.8",
            KruiseVersion::V1_9 => "v1.9",
        }
    }
}

/// Feature gates: upstream defaults, overridden per name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeatureGates {
    overrides: BTreeMap<String, bool>,
}

/// v1.8.4 defaults of the gates the ported logic reads.
const DEFAULTS: &[(&str, bool)] = &[
    ("KruiseDaemon", true),
    ("PodWebhook", true),
    ("ResourcesDeletionProtection", false),
    ("DeletionProtectionForCRDCascadingGate", false),
    ("PodUnavailableBudgetDeleteGate", true),
    ("PodUnavailableBudgetUpdateGate", false),
    ("PodProbeMarkerGate", true),
    ("EnablePodProbeMarkerOnServerless", false),
    ("SidecarSetPatchPodMetadataDefaultsAllowed", false),
    ("CloneSetPartitionRollback", false),
    ("PreparingUpdateAsUpdate", false),
    ("InPlaceUpdateEnvFromMetadata", true),
    ("RecreatePodWhenChangeVCTInCloneSetGate", false),
    ("PodIndexLabel", true),
    ("StatefulSetStartOrdinal", false),
];

impl FeatureGates {
    /// Upstream defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every gate on (what upstream's e2e suite runs with: AllAlpha=true,AllBeta=true).
    pub fn all_on() -> Self {
        let mut gates = Self::default();
        for (name, _) in DEFAULTS {
            gates.set(name, true);
        }
        gates
    }

    /// Sets one gate.
    pub fn set(&mut self, name: &str, enabled: bool) -> &mut Self {
        self.overrides.insert(name.to_owned(), enabled);
        self
    }

    /// Builder form of [`set`](Self::set).
    pub fn with(mut self, name: &str, enabled: bool) -> Self {
        self.set(name, enabled);
        self
    }

    /// Whether a gate is on: the override, else the upstream default, else off.
    pub fn enabled(&self, name: &str) -> bool {
        self.overrides.get(name).copied().unwrap_or_else(|| {
            DEFAULTS
                .iter()
                .find(|(n, _)| *n == name)
                .is_some_and(|(_, on)| *on)
        })
    }

    /// The overrides as the `--feature-gates` flag writes them (`A=true,B=false`, sorted); the
    /// inverse of [`parse`](Self::parse).
    pub fn to_spec(&self) -> String {
        self.overrides
            .iter()
            .map(|(name, on)| format!("{name}={on}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Every gate the port reads with its effective value, sorted by name (what the
    /// controllers decide with).
    pub fn effective(&self) -> Vec<(&'static str, bool)> {
        let mut gates: Vec<(&'static str, bool)> = DEFAULTS
            .iter()
            .map(|(name, _)| (*name, self.enabled(name)))
            .collect();
        gates.sort_unstable();
        gates
    }

    /// Whether upstream has a gate of this name that the port reads.
    pub fn is_known(name: &str) -> bool {
        DEFAULTS.iter().any(|(n, _)| *n == name)
    }

    /// Parses `A=true,B=false` (the `--feature-gates` flag form).
    pub fn parse(spec: &str) -> Result<Self, String> {
        let mut gates = Self::default();
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = part
                .split_once('=')
                .ok_or_else(|| format!("feature gate {part:?} is not NAME=true|false"))?;
            let on = match value.trim() {
                "true" => true,
                "false" => false,
                other => return Err(format!("feature gate {name}: {other:?} is not true|false")),
            };
            gates.set(name.trim(), on);
        }
        Ok(gates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let gates = FeatureGates::new();
        assert!(gates.enabled("PodWebhook"));
        assert!(!gates.enabled("ResourcesDeletionProtection"));
        assert!(!gates.enabled("NoSuchGate"));
        let gates = FeatureGates::parse("ResourcesDeletionProtection=true, PodWebhook=false")
            .unwrap_or_default();
        assert!(gates.enabled("ResourcesDeletionProtection"));
        assert!(!gates.enabled("PodWebhook"));
        assert!(FeatureGates::parse("A=yes").is_err());
        assert!(FeatureGates::all_on().enabled("PodUnavailableBudgetUpdateGate"));
    }

    #[test]
    fn effective_lists_every_known_gate_with_overrides_applied() {
        let gates = FeatureGates::new().with("ResourcesDeletionProtection", true);
        let effective = gates.effective();
        assert_eq!(effective.len(), DEFAULTS.len());
        assert!(effective.is_sorted());
        assert!(effective.contains(&("ResourcesDeletionProtection", true)));
        assert!(effective.contains(&("PodWebhook", true)));
        assert!(effective.contains(&("CloneSetPartitionRollback", false)));
    }
}
