//! `validation_test.go` `TestValidate` (v1.9.0) and the §17 admission vectors.

use k8s_openapi::{
    api::core::v1::{Container, PodSpec, PodTemplateSpec},
    apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta},
};

use super::*;
use crate::api::cloneset::CloneSetSpec;

fn cs() -> CloneSet {
    let labels: std::collections::BTreeMap<String, String> =
        [("a".to_owned(), "b".to_owned())].into();
    CloneSet {
        metadata: ObjectMeta {
            name: Some("test-cs".into()),
            namespace: Some("default".into()),
            uid: Some("uid".into()),
            ..ObjectMeta::default()
        },
        spec: CloneSetSpec {
            replicas: Some(5),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "abc".into(),
                        image: Some("busybox".into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..CloneSetSpec::default()
        },
        status: None,
    }
}

fn no_pods(_: &str) -> Option<Pod> {
    None
}

fn check(cs: &CloneSet, old: Option<&CloneSet>, version: KruiseVersion) -> Option<String> {
    let cs = defaulted(cs);
    let old = old.map(defaulted);
    let req = Request {
        cs: &cs,
        old: old.as_ref(),
        selector_set: true,
        version,
        pods: &no_pods,
    };
    let (verdict, _) = admit(&req);
    assert_eq!(verdict.allowed, verdict.message.is_none());
    verdict.message
}

fn both(cs: &CloneSet) -> (Option<String>, Option<String>) {
    (
        check(cs, None, KruiseVersion::V1_9),
        check(cs, None, KruiseVersion::V1_8),
    )
}

fn s(v: &str) -> Option<IntOrString> {
    Some(IntOrString::String(v.into()))
}

#[test]
fn valid_objects_pass_at_both_versions() {
    let mut a = cs();
    a.spec.update_strategy.type_ = Some("InPlaceIfPossible".into());
    a.spec.update_strategy.partition = Some(IntOrString::Int(2));
    a.spec.update_strategy.max_unavailable = Some(IntOrString::Int(1));
    assert_eq!(both(&a), (None, None));
    let mut b = cs();
    b.spec.update_strategy.max_unavailable = s("50%");
    b.spec.update_strategy.max_surge = s("30%");
    assert_eq!(both(&b), (None, None));
    let mut c = cs();
    c.spec.progress_deadline_seconds = Some(i32::MAX);
    c.spec.min_ready_seconds = Some(i32::MAX);
    assert_eq!(both(&c), (None, None));
}

#[test]
fn a_bare_number_string_is_rejected_only_at_v1_9() {
    let mut a = cs();
    a.spec.update_strategy.max_unavailable = s("5");
    let (head, old) = both(&a);
    // maxUnavailable reads as 0 after the error and maxSurge defaults to 0: upstream reports
    // both.
    assert_eq!(
        head.as_deref(),
        Some(
            "[spec.updateStrategy.maxUnavailable: Invalid value: \"5\": failed \
             GetScaledValueFromIntOrPercent for maxUnavailable: invalid type: string is not a \
             percentage, spec.updateStrategy.maxUnavailable: Invalid value: \
             intstr.IntOrString{Type:1, IntVal:0, StrVal:\"5\"}: maxUnavailable and maxSurge \
             should not both be less than 1]"
        )
    );
    assert_eq!(old, None);
    let mut b = cs();
    b.spec.update_strategy.max_surge = s("5");
    b.spec.update_strategy.max_unavailable = Some(IntOrString::Int(2));
    let (head, _) = both(&b);
    assert!(
        head.is_some_and(|m| m.starts_with("spec.updateStrategy.maxSurge: Invalid value: \"5\""))
    );
}

#[test]
fn a_fractional_percent_is_accepted_only_at_v1_9() {
    let mut a = cs();
    a.spec.replicas = Some(10);
    a.spec.update_strategy.max_unavailable = s("12.5%");
    let (head, old) = both(&a);
    assert_eq!(head, None);
    assert_eq!(
        old.as_deref(),
        Some(
            "[spec.updateStrategy.maxUnavailable: Invalid value: \"12.5%\": failed \
             getValueFromIntOrPercent for maxUnavailable: invalid value for IntOrString: invalid \
             value \"12.5%\": strconv.Atoi: parsing \"12.5\": invalid syntax, \
             spec.updateStrategy.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, \
             IntVal:0, StrVal:\"12.5%\"}: maxUnavailable and maxSurge should not both be less \
             than 1]"
        )
    );
}

#[test]
fn on_delete_is_rejected_at_both_versions() {
    let mut a = cs();
    a.spec.update_strategy.type_ = Some("OnDelete".into());
    let msg = "spec.updateStrategy.type: Invalid value: \"OnDelete\": must be 'ReCreate', \
               InPlaceIfPossible or 'InPlaceOnly'";
    assert_eq!(both(&a), (Some(msg.into()), Some(msg.into())));
}

#[test]
fn progress_deadline_rules_at_v1_9() {
    let mut a = cs();
    a.spec.progress_deadline_seconds = Some(10);
    a.spec.min_ready_seconds = Some(10);
    let (head, old) = both(&a);
    assert_eq!(
        head.as_deref(),
        Some(
            "spec.progressDeadlineSeconds: Invalid value: 10: must be greater than minReadySeconds"
        )
    );
    assert_eq!(old, None, "v1.8.4 has no such field");
    a.spec.progress_deadline_seconds = Some(-1);
    a.spec.min_ready_seconds = None;
    assert_eq!(
        check(&a, None, KruiseVersion::V1_9).as_deref(),
        Some(
            "[spec.progressDeadlineSeconds: Invalid value: -1: must be greater than or equal to \
             0, spec.progressDeadlineSeconds: Invalid value: -1: must be greater than \
             minReadySeconds]"
        )
    );
}

#[test]
fn the_forbidden_update_message_names_progress_deadline_only_at_v1_9() {
    let old = cs();
    let mut new = cs();
    new.spec.selector.match_labels = Some([("x".to_owned(), "y".to_owned())].into());
    new.spec.template.metadata = Some(ObjectMeta {
        labels: Some([("x".to_owned(), "y".to_owned())].into()),
        ..ObjectMeta::default()
    });
    let head = check(&new, Some(&old), KruiseVersion::V1_9).unwrap_or_default();
    assert!(head.contains("'minReadySeconds', 'progressDeadlineSeconds', 'volumeClaimTemplates'"));
    let v18 = check(&new, Some(&old), KruiseVersion::V1_8).unwrap_or_default();
    assert!(v18.starts_with("spec: Forbidden: updates to cloneset spec"));
    assert!(v18.contains("'minReadySeconds', 'volumeClaimTemplates'"));
    // Changing the deadline is allowed.
    let mut pds = cs();
    pds.spec.progress_deadline_seconds = Some(30);
    assert_eq!(check(&pds, Some(&old), KruiseVersion::V1_9), None);
}

#[test]
fn basic_spec_checks() {
    let mut a = cs();
    a.spec.replicas = Some(-1);
    assert_eq!(
        check(&a, None, KruiseVersion::V1_9).as_deref(),
        Some("spec.replicas: Invalid value: -1: must be greater than or equal to 0")
    );
    let mut b = cs();
    b.spec.template.metadata = None;
    assert_eq!(
        check(&b, None, KruiseVersion::V1_9).as_deref(),
        Some(
            "spec.template.metadata.labels: Invalid value: map[string]string(nil): `selector` \
             does not match template `labels`"
        )
    );
    let mut c = cs();
    c.spec.update_strategy.max_unavailable = Some(IntOrString::Int(0));
    assert_eq!(
        check(&c, None, KruiseVersion::V1_9).as_deref(),
        Some(
            "spec.updateStrategy.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, \
             IntVal:0, StrVal:\"\"}: maxUnavailable and maxSurge should not both be less than 1"
        )
    );
    let mut d = cs();
    d.spec.update_strategy.partition = s("abc");
    assert_eq!(
        check(&d, None, KruiseVersion::V1_9).as_deref(),
        Some(
            "spec.updateStrategy.partition: Invalid value: \"abc\": failed \
             GetScaledValueFromIntOrPercent for partition: invalid type: string is not a \
             percentage"
        )
    );
    let mut e = cs();
    e.spec.scale_strategy = Some(crate::api::cloneset::CloneSetScaleStrategy {
        pods_to_delete: vec!["p".into()],
        ..Default::default()
    });
    assert_eq!(
        check(&e, None, KruiseVersion::V1_9).as_deref(),
        Some(
            "spec.scaleStrategy.podsToDelete: Invalid value: \"p\": find pod p failed: pods \
             \"p\" not found"
        )
    );
}

#[test]
fn parsers() {
    let v = IntOrString::String("12.5%".into());
    assert_eq!(
        parse_int_or_percent(&v, 10, true, IntStrParse::Kruise),
        Ok(2)
    );
    let five = IntOrString::String("5".into());
    assert_eq!(
        parse_int_or_percent(&five, 100, true, IntStrParse::Apimachinery),
        Ok(5)
    );
    assert!(parse_int_or_percent(&five, 100, true, IntStrParse::Kruise).is_err());
}
