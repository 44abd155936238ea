use jiff::tz::{Offset, TimeZone};

use super::*;
use crate::{
    actions::{Action, ApiRequest, Target},
    journal::{Outcome, triage_log::TriageNote},
};

fn at(min: i64, sec: i64) -> Timestamp {
    // 2026-11-27 10:00:00 UTC + min:sec
    Timestamp::from_second(1_795_773_600 + min * 60 + sec).expect("time")
}

fn entry(time: Timestamp, action: Action, name: &str, ok: bool) -> Entry {
    Entry {
        time,
        context: Some("prod".into()),
        user: Some("alice@example.com".into()),
        cluster: "https://10.0.0.1:6443".into(),
        target: Target {
            kind: &crate::api::kinds::CLONESET,
            namespace: Some("shop".into()),
            name: name.into(),
        },
        action,
        request: ApiRequest {
            verb: "PATCH".into(),
            path: format!("/apis/apps.kruise.io/v1alpha1/namespaces/shop/clonesets/{name}"),
            content_type: "application/json-patch+json".into(),
            body: serde_json::json!([{"op": "test", "path": "/metadata/resourceVersion", "value": "7"}]),
        },
        result: Outcome {
            ok,
            code: Some(if ok { 200 } else { 409 }),
            message: if ok {
                String::new()
            } else {
                "the object changed | retry".into()
            },
        },
        inverse: ok.then_some(Action::Resume),
    }
}

fn note(time: Timestamp, change: Change, problem: &str, subject: &str) -> TriageNote {
    TriageNote {
        time,
        context: Some("prod".into()),
        cluster: "https://10.0.0.1:6443".into(),
        namespace: Some("shop".into()),
        change,
        problem: problem.into(),
        subject: subject.into(),
        why: if change == Change::Appeared {
            "1 pod crash-looping".into()
        } else {
            String::new()
        },
    }
}

#[test]
fn the_report_is_one_timeline_in_time_order_with_utc_and_local_times() {
    let entries = vec![
        entry(at(2, 0), Action::Pause, "checkout", true),
        entry(at(3, 0), Action::Resume, "cart", false),
        // Outside the window: left out.
        entry(at(30, 0), Action::Pause, "late", true),
    ];
    let triage = vec![
        // Open before the window and never cleared: listed as open at its start.
        note(
            at(-20, 0),
            Change::Appeared,
            "no budget",
            "PodUnavailableBudget shop/pub",
        ),
        // Appeared and cleared before the window: not listed.
        note(
            at(-30, 0),
            Change::Appeared,
            "crash loop",
            "CloneSet shop/old",
        ),
        note(
            at(-25, 0),
            Change::Cleared,
            "crash loop",
            "CloneSet shop/old",
        ),
        note(
            at(1, 0),
            Change::Appeared,
            "stuck rollout",
            "CloneSet shop/checkout",
        ),
        note(
            at(5, 0),
            Change::Cleared,
            "stuck rollout",
            "CloneSet shop/checkout",
        ),
    ];
    let events = vec![ReportEvent {
        context: Some("prod".into()),
        time: at(2, 30),
        object: "CloneSet/checkout".into(),
        namespace: "shop".into(),
        type_: "Normal".into(),
        reason: "SuccessfulUpdatePodInPlace".into(),
        message: "successfully update pod checkout-x7k2p in-place".into(),
        count: 2,
    }];
    let gaps = vec!["context edge: cannot read events: forbidden".to_owned()];
    let tz = TimeZone::fixed(Offset::constant(1));
    let text = markdown(&ReportInput {
        since: at(0, 0),
        until: at(10, 0),
        entries: &entries,
        triage: &triage,
        events: &events,
        gaps: &gaps,
        tz,
    });
    assert!(
        text.contains(
            "- Window: 2026-11-27 10:00:00 → 2026-11-27 10:10:00 UTC (11:00:00 +01 → 11:10:00 +01)"
        ),
        "{text}"
    );
    assert!(
        text.contains("- 2 actions sent (1 refused or failed), 1 problem appeared, 1 open when the window began, 1 event"),
        "{text}"
    );
    assert!(
        text.contains(
            "- no budget: PodUnavailableBudget shop/pub (prod), since 2026-11-27 09:40:00 UTC"
        ),
        "{text}"
    );
    assert!(!text.contains("CloneSet shop/old"), "{text}");
    assert!(!text.contains("shop/late"), "{text}");
    let timeline: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("| UTC"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert_eq!(
        timeline,
        [
            "| 2026-11-27 10:01:00 | 11:01:00 +01 | prod | triage: stuck rollout appeared | CloneSet shop/checkout — 1 pod crash-looping |",
            "| 2026-11-27 10:02:00 | 11:02:00 +01 | prod | **action** pause | CloneSet shop/checkout — `PATCH /apis/apps.kruise.io/v1alpha1/namespaces/shop/clonesets/checkout` → 200 OK |",
            "| 2026-11-27 10:02:30 | 11:02:30 +01 | prod | event Normal SuccessfulUpdatePodInPlace | shop/CloneSet/checkout: successfully update pod checkout-x7k2p in-place (×2) |",
            "| 2026-11-27 10:03:00 | 11:03:00 +01 | prod | **action** resume | CloneSet shop/cart — `PATCH /apis/apps.kruise.io/v1alpha1/namespaces/shop/clonesets/cart` → 409 refused: the object changed \\| retry |",
            "| 2026-11-27 10:05:00 | 11:05:00 +01 | prod | triage: stuck rollout cleared | CloneSet shop/checkout |",
        ]
    );
    assert!(text.contains("- reverts with: resume"), "{text}");
    // By whom: the user the server authenticated.
    assert!(
        text.contains("- by: alice@example.com\n- context: prod (https://10.0.0.1:6443)"),
        "{text}"
    );
    assert!(
        text.contains("## Not read\n\n- context edge: cannot read events: forbidden"),
        "{text}"
    );
}

#[test]
fn an_empty_window_says_nothing_was_recorded() {
    let text = markdown(&ReportInput {
        since: at(0, 0),
        until: at(10, 0),
        entries: &[],
        triage: &[],
        events: &[],
        gaps: &[],
        tz: TimeZone::UTC,
    });
    assert!(text.contains("Nothing recorded in this window."), "{text}");
}
