//! cloneset-scale: one Scale() pass, the pods it creates, the PVCs a deletion takes with it
//! and instance-id reuse.

use kruise_tui::kruise::cloneset::{lifecycle::Lifecycle, scale};
use serde_json::{Value, json};

use super::{NOW, diff_input, diffs_json, field, gates, str_field, without_note};
use crate::eval::common::{expect_eq, expect_subset, expected, input, parse};

pub fn scale(op: Option<&str>, case: &Value) -> Result<(), String> {
    let inp = input(case)?;
    match op {
        Some("scaleReconcile") => {
            let d = diff_input(inp)?;
            let lc: Option<Lifecycle> = match field(inp, "lifecycle") {
                Value::Null => None,
                v => Some(parse("lifecycle", v)?),
            };
            let outcome = scale::scale(&scale::ScaleInput {
                cs: &d.cs,
                pods: &d.pods,
                current_revision: &d.current,
                update_revision: &d.update,
                gates: &d.gates,
                lifecycle: lc.as_ref(),
                spread_constraints: &[],
                nodes: &[],
                now: NOW,
            });
            let deleted = outcome.deleted().len();
            let pod_names = |pick: fn(&scale::ScaleAction) -> Option<usize>| -> Vec<String> {
                outcome
                    .actions
                    .iter()
                    .filter_map(pick)
                    .map(|i| d.pods[i].name.clone())
                    .collect()
            };
            let actual = json!({
                "revertedToPreparingNormal": pod_names(|a| match a {
                    scale::ScaleAction::RevertPreparingDelete(i) => Some(*i),
                    _ => None,
                }),
                "movedToPreparingDelete": pod_names(|a| match a {
                    scale::ScaleAction::PrepareDelete(i) => Some(*i),
                    _ => None,
                }),
                "modified": outcome.modified(),
                "activePodsAfter": d.pods.len() - deleted,
                "deletedCount": deleted,
                "diffs": diffs_json(&outcome.diffs),
            });
            expect_subset(expected(case)?, &actual)
        }
        Some("createPods") => {
            let names: Vec<String> = parse("availableIDs", field(inp, "availableIDs"))?;
            let vcts: Vec<String> =
                parse("volumeClaimTemplates", field(inp, "volumeClaimTemplates"))?;
            let existing: Vec<String> = parse("existingPVCNames", field(inp, "existingPVCNames"))?;
            let template_gates: Vec<String> = match field(inp, "templateReadinessGates") {
                Value::Null => Vec::new(),
                v => parse("templateReadinessGates", v)?,
            };
            let count = |k: &str| {
                field(inp, k)
                    .as_u64()
                    .map(|v| v as usize)
                    .ok_or(format!("no {k}"))
            };
            let plan = scale::plan_pod_creations(&scale::CreationInput {
                cloneset_name: &str_field(inp, "cloneSetName"),
                expected_creations: count("expectedCreations")?,
                expected_current_creations: count("expectedCurrentCreations")?,
                current_revision: &str_field(inp, "currentRevision"),
                update_revision: &str_field(inp, "updateRevision"),
                available_ids: &names,
                volume_claim_templates: &vcts,
                existing_pvcs: &existing,
                template_readiness_gates: &template_gates,
                gates: &gates(inp),
            });
            let pods: Vec<Value> = plan
                .pods
                .iter()
                .map(|p| {
                    json!({
                        "name": p.name,
                        "labels": p.labels,
                        "readinessGates": p.readiness_gates,
                        "claimNames": p.claim_names,
                        "templateFrom": if p.from_current { "currentRevision" } else { "updateRevision" },
                    })
                })
                .collect();
            expect_subset(
                &without_note(expected(case)?),
                &json!({"pods": pods, "pvcsCreated": plan.pvcs_to_create}),
            )
        }
        Some("deletePodsPvcs") => {
            let pvcs: Vec<(String, String)> = field(inp, "pvcs")
                .as_array()
                .ok_or("input has no pvcs")?
                .iter()
                .map(|p| (str_field(p, "name"), str_field(p, "instanceID")))
                .collect();
            let mut deleted = Vec::new();
            for pod in field(inp, "podsToDelete")
                .as_array()
                .ok_or("input has no podsToDelete")?
            {
                deleted.extend(scale::pvcs_deleted_with_pod(
                    &str_field(pod, "instanceID"),
                    &pvcs,
                ));
            }
            let left: Vec<&str> = pvcs
                .iter()
                .map(|(n, _)| n.as_str())
                .filter(|n| !deleted.iter().any(|d| d == n))
                .collect();
            expect_eq(expected(case)?, &json!({ "pvcsLeft": left }))
        }
        Some("availableIDs") => {
            let num = field(inp, "num").as_u64().ok_or("no num")? as usize;
            let pod_ids: Vec<String> = parse("podInstanceIDs", field(inp, "podInstanceIDs"))?;
            let pvc_ids: Vec<String> = parse("pvcInstanceIDs", field(inp, "pvcInstanceIDs"))?;
            let mut seed = 7u64;
            let mut rng = move || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            };
            let ids = scale::available_ids(num, &pod_ids, &pvc_ids, &mut rng);
            let exp = expected(case)?;
            let must: Vec<String> = parse("mustContain", field(exp, "mustContain"))?;
            let len = field(exp, "otherIDsAreRandomOfLength")
                .as_u64()
                .ok_or("no length")? as usize;
            let count = field(exp, "count").as_u64().ok_or("no count")? as usize;
            if ids.len() != count {
                return Err(format!("expected {count} ids, got {ids:?}"));
            }
            for m in &must {
                if !ids.contains(m) {
                    return Err(format!("{m:?} missing from {ids:?}"));
                }
            }
            for id in ids.iter().filter(|id| !must.contains(id)) {
                if id.len() != len || pod_ids.contains(id) || pvc_ids.contains(id) {
                    return Err(format!("{id:?} is not a fresh random id of length {len}"));
                }
            }
            Ok(())
        }
        other => Err(format!("unknown op {other:?}")),
    }
}
