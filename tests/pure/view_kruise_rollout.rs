//! Kruise Rollout in the console, on objects built by hand (`rollout_fixture`): snapshots of
//! `:rollouts`, of the rollout view of a Rollout-controlled CloneSet at a timed pause (time left)
//! and at a manual pause (waiting for approval), and of the batch health panel with a crashing
//! pod; the triage row of a Rollout stuck on crashing pods appears after `[rollout] stall` and
//! not before.

use crate::rollout_fixture::{self as fx, At};
use kruise_tui::app::{Msg, oncall::ProblemKind};

#[test]
fn rollouts_list() {
    let mut h = fx::harness(At::step(2, "StepPaused", 18), (140, 16));
    h.command("rollouts");
    let screen = h.screen();
    for cell in [
        "shop-rollout",
        "CloneSet/shop",
        "Progressing · InRolling",
        "2/3",
        "StepPaused",
        "3/3/3",
        "18s",
        "42s",
    ] {
        assert!(screen.contains(cell), "{cell} missing:\n{screen}");
    }
    insta::assert_snapshot!("kruise_rollouts_list_timed_pause", screen);
    // At a manual pause the time left says what it waits for.
    fx::put(&mut h, At::step(1, "StepPaused", 75));
    let screen = h.screen();
    assert!(screen.contains("approval"), "{screen}");
    assert!(screen.contains("1/1/1"), "{screen}");
}

#[test]
fn rollouts_list_time_left_counts_down_with_the_clock_and_stops_at_zero() {
    let mut h = fx::harness(At::step(2, "StepPaused", 18), (140, 16));
    h.command("ro");
    let base = crate::harness::now();
    h.feed(Msg::Tick(base + jiff::SignedDuration::from_secs(30)));
    assert!(h.screen().contains("12s"), "{}", h.screen());
    h.feed(Msg::Tick(base + jiff::SignedDuration::from_secs(90)));
    let row = &h.app.rollouts()[0];
    assert_eq!(
        row.left(base + jiff::SignedDuration::from_secs(90)),
        Some(kruise_tui::app::rollouts::Left::Seconds(0))
    );
}

#[test]
fn rollout_view_at_a_timed_pause_shows_the_time_left() {
    let mut h = fx::harness(At::step(2, "StepPaused", 18), (140, 44));
    fx::open_shop(&mut h);
    fx::answer_events(&mut h);
    let screen = h.screen();
    for text in [
        "Rollout shop-rollout · step 2/3 · StepPaused · 42s left",
        "StepPaused · 42s left (of 60s)",
        "50% (3 pods)",
        "40%",
        "batch 1: shop-a",
        "batch 2: shop-b shop-c",
        "not updated: shop-d shop-e",
        "BatchRelease shop-rollout",
    ] {
        assert!(screen.contains(text), "{text} missing:\n{screen}");
    }
    insta::assert_snapshot!("kruise_rollout_view_timed_pause", screen);
}

#[test]
fn rollout_view_at_a_manual_pause_waits_for_approval() {
    let mut h = fx::harness(At::step(1, "StepPaused", 75), (140, 44));
    fx::open_shop(&mut h);
    fx::answer_events(&mut h);
    let screen = h.screen();
    assert!(
        screen.contains("step 1/3 · StepPaused · waiting for approval"),
        "{screen}"
    );
    assert!(screen.contains("] approve"), "footer hints: {screen}");
    insta::assert_snapshot!("kruise_rollout_view_manual_pause", screen);
}

#[test]
fn batch_health_panel_lists_the_new_batch_with_its_crashing_pod() {
    let at = At {
        crashing: true,
        ..At::step(2, "StepUpgrade", 200)
    };
    let mut h = fx::harness(at, (140, 44));
    fx::open_shop(&mut h);
    fx::answer_events(&mut h);
    let screen = h.screen();
    let panel: Vec<&str> = screen
        .lines()
        .filter(|l| l.contains("shop-b ") || l.contains("shop-c "))
        .collect();
    assert!(
        panel.iter().any(|l| l.contains("shop-c")
            && l.contains("CrashLoopBackOff")
            && l.contains("BackOff: Back-off restarting")),
        "{screen}"
    );
    // Only the current batch: shop-a (batch 1) is not in the panel.
    assert!(screen.contains("step 2/3 new pods (2)"), "{screen}");
    insta::assert_snapshot!("kruise_batch_health_crashing_pod", screen);
}

#[test]
fn help_says_what_the_keys_mean_on_a_rollout() {
    let mut h = fx::harness(At::step(1, "StepPaused", 75), (140, 44));
    fx::open_shop(&mut h);
    h.press(&["?"]);
    let screen = h.screen();
    assert!(screen.contains("Kruise Rollout (shop-rollout)"), "{screen}");
    assert!(
        screen.contains("approve the current step (Rollout)"),
        "{screen}"
    );
}

#[test]
fn a_rollout_stuck_on_crashing_pods_is_a_triage_row_after_the_stall_and_not_before() {
    // The default stall is 10 minutes.
    let at = |since| At {
        crashing: true,
        ..At::step(2, "StepUpgrade", since)
    };
    let h = fx::harness(at(590), (140, 30));
    let rows = |h: &crate::harness::Harness| -> Vec<String> {
        h.app
            .oncall()
            .triage
            .iter()
            .filter(|p| p.subject.starts_with("Rollout "))
            .map(|p| format!("{} | {} | {}", p.subject, p.why, p.remedy))
            .collect()
    };
    assert_eq!(rows(&h), Vec::<String>::new());
    let mut h = fx::harness(at(610), (140, 30));
    assert_eq!(
        rows(&h),
        vec![
            "Rollout demo/shop-rollout | stuck at step 2/3 (StepUpgrade): 1 of 3 new pods not \
             ready for 10m, shop-c CrashLoopBackOff | u rollback · P pause (the Rollout)"
                .to_owned()
        ]
    );
    // The workload has no stuck row of its own beside the Rollout's.
    let stuck: Vec<_> = h
        .app
        .oncall()
        .triage
        .iter()
        .filter(|p| p.kind == ProblemKind::StuckRollout)
        .map(|p| p.subject.clone())
        .collect();
    assert!(
        !stuck.contains(&"CloneSet demo/shop".to_owned()),
        "{stuck:?}"
    );
    h.command("triage");
    assert!(
        h.screen().contains("Rollout demo/shop-rollout"),
        "{}",
        h.screen()
    );
}
