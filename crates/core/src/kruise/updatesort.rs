//! Update-order sorters shared by CloneSet and Advanced StatefulSet (`pkg/util/updatesort`):
//! `priorityStrategy` (weight / order) and `scatterStrategy`.
//!
//! Pods are given as a slice of optional label maps indexed like upstream's pod slice (`None` is
//! an empty slot, e.g. an Advanced StatefulSet reserved ordinal); the sorters reorder `indexes`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::{Deserialize, Serialize};

pub mod priority;
pub mod scatter;

pub use priority::priority_sort;
pub use scatter::scatter_sort;

/// Pod labels.
pub type Labels = BTreeMap<String, String>;

/// `updateStrategy.priorityStrategy` (`apis/apps/pub/update_priority.go`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PriorityStrategy {
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub weight_priority: Vec<WeightTerm>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub order_priority: Vec<OrderTerm>,
}

/// One `weightPriority` term.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WeightTerm {
    // Go decodes a missing `weight` as 0.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub weight: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub match_selector: LabelSelector,
}

/// One `orderPriority` term.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderTerm {
    pub ordered_key: String,
}

/// One `scatterStrategy` term.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ScatterTerm {
    pub key: String,
    pub value: String,
}
