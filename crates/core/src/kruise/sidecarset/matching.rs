//! Which pods a SidecarSet selects, and whether two sets (or two selectors) can select the
//! same pod.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::kruise::selector::{self, SelectorError};

use crate::api::sidecarset::SidecarSet;

/// Namespace name -> its labels: the Namespace objects that exist.
pub type NamespaceLabels = BTreeMap<String, BTreeMap<String, String>>;

/// Whether a pod (namespace, labels) is selected by the set: namespace scope,
/// namespaceSelector on the Namespace's labels (a missing Namespace does not match) and a
/// non-empty selector.
///
/// Port of pkg/control/sidecarcontrol/util.go::PodMatchedSidecarSet (v1.8.4).
pub fn pod_matched_sidecar_set(
    set: &SidecarSet,
    pod_namespace: &str,
    pod_labels: &BTreeMap<String, String>,
    namespaces: &NamespaceLabels,
) -> Result<bool, SelectorError> {
    let pod_namespace = if pod_namespace.is_empty() {
        "default"
    } else {
        pod_namespace
    };
    if let Some(ns) = set.spec.namespace.as_deref().filter(|n| !n.is_empty())
        && ns != pod_namespace
    {
        return Ok(false);
    }
    if let Some(ns_selector) = &set.spec.namespace_selector {
        let Some(ns_labels) = namespaces.get(pod_namespace) else {
            return Ok(false);
        };
        if !selector::matches(ns_selector, ns_labels)? {
            return Ok(false);
        }
    }
    let Some(sel) = &set.spec.selector else {
        return Ok(false);
    };
    Ok(!selector::is_empty(sel) && selector::matches(sel, pod_labels)?)
}

/// Whether two selectors can select a common label set: neither is disjoint from the other.
///
/// Port of pkg/util/selector.go::IsSelectorOverlapping (v1.8.4).
pub fn is_selector_overlapping(a: &LabelSelector, b: &LabelSelector) -> bool {
    !(is_disjoint(a, b) || is_disjoint(b, a))
}

/// Upstream's marker for "any value" (`k Exists`); a literal label value `ALL` reads the same.
const ALL: &str = "ALL";

/// Port of pkg/util/selector.go::isDisjoint (v1.8.4), literally: `a`'s labels and `In` values
/// (or `ALL` for `Exists`) per key, then `b`'s requirements against them. As upstream, a key that
/// `b` requires to exist and `a` does not mention makes the two disjoint.
fn is_disjoint(a: &LabelSelector, b: &LabelSelector) -> bool {
    let mut pinned: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (k, v) in a.match_labels.iter().flatten() {
        pinned.insert(k, vec![v]);
    }
    for req in a.match_expressions.iter().flatten() {
        match req.operator.as_str() {
            "In" => pinned
                .entry(&req.key)
                .or_default()
                .extend(req.values.iter().flatten().map(String::as_str)),
            "Exists" => {
                pinned.insert(&req.key, vec![ALL]);
            }
            _ => {}
        }
    }
    for (k, v) in b.match_labels.iter().flatten() {
        if let Some(values) = pinned.get(k.as_str())
            && !values.contains(&ALL)
            && !values.contains(&v.as_str())
        {
            return true;
        }
    }
    for req in b.match_expressions.iter().flatten() {
        let values = pinned.get(req.key.as_str());
        let theirs: Vec<&str> = req.values.iter().flatten().map(String::as_str).collect();
        match req.operator.as_str() {
            "In" => {
                if let Some(values) = values
                    && !values.contains(&ALL)
                    && !values.iter().any(|v| theirs.contains(v))
                {
                    return true;
                }
            }
            "NotIn" => {
                if let Some(values) = values
                    && values.iter().all(|v| theirs.contains(v))
                {
                    return true;
                }
            }
            "Exists" if values.is_none() => return true,
            "DoesNotExist" if values.is_some() => return true,
            _ => {}
        }
    }
    false
}

/// Whether the namespace scopes of two sets can share a pod.
///
/// Port of pkg/webhook/sidecarset/validating/utils.go::isSidecarSetNamespaceOverlapping
/// (v1.8.4). A namespace that does not exist is selected by no namespaceSelector
/// (`IsSelectorNamespace`). As upstream, the last check tests `b`'s namespace against `b`'s own
/// namespaceSelector (upstream passes `otherSelector` there), and only when `a` has a
/// namespaceSelector.
pub fn is_namespace_overlapping(
    a: &SidecarSet,
    b: &SidecarSet,
    namespaces: &NamespaceLabels,
) -> bool {
    let ns_a = a.spec.namespace.as_deref().unwrap_or_default();
    let ns_b = b.spec.namespace.as_deref().unwrap_or_default();
    if !ns_a.is_empty() && !ns_b.is_empty() && ns_a != ns_b {
        return false;
    }
    let sel_a = a.spec.namespace_selector.as_ref();
    let sel_b = b.spec.namespace_selector.as_ref();
    if let (Some(x), Some(y)) = (sel_a, sel_b)
        && !is_selector_overlapping(x, y)
    {
        return false;
    }
    if !ns_a.is_empty()
        && let Some(y) = sel_b
        && !is_selector_namespace(ns_a, y, namespaces)
    {
        return false;
    }
    if !ns_b.is_empty()
        && sel_a.is_some()
        && !sel_b.is_some_and(|y| is_selector_namespace(ns_b, y, namespaces))
    {
        return false;
    }
    true
}

/// Port of pkg/control/sidecarcontrol/util.go::IsSelectorNamespace (v1.8.4): the Namespace
/// exists and its labels match; a nil selector (upstream's `labels.Nothing()`) and a malformed
/// one match nothing.
pub fn is_selector_namespace(ns: &str, sel: &LabelSelector, namespaces: &NamespaceLabels) -> bool {
    namespaces
        .get(ns)
        .is_some_and(|labels| selector::matches(sel, labels).unwrap_or(false))
}
