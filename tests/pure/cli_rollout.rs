//! The Kruise Rollout verbs on the command line: `rollout status|approve|pause|resume|undo`
//! take `rollout/NAME` in every spelling of the CRD (`ro`, `rollouts.rollouts.kruise.io`),
//! `approve` only a Rollout, `--step` from 1; the workload verbs a Rollout's guard refuses take
//! `--force`, and `partition` and `history` stay workload-only.

use kruise_tui::cli::{Cli, Command, RolloutCommand};

fn parse(args: &str) -> Result<Cli, clap::Error> {
    Cli::try_parse_checked(std::iter::once("kruise-tui").chain(args.split_whitespace()))
}

fn rollout(args: &str) -> RolloutCommand {
    match parse(args)
        .unwrap_or_else(|e| panic!("{args}: {e}"))
        .command
    {
        Some(Command::Rollout(r)) => r,
        other => panic!("{args}: {other:?}"),
    }
}

fn usage_error(args: &str) -> String {
    let err = parse(args).expect_err(args);
    assert_eq!(err.exit_code(), 2, "{args}: a usage error exits 2");
    err.to_string()
}

#[test]
fn every_spelling_of_a_rollout_names_the_kruise_rollout() {
    for spelling in [
        "rollout/web-rollout",
        "ro/web-rollout",
        "rollouts/web-rollout",
        "rollouts.rollouts.kruise.io/web-rollout",
        "rollout.rollouts.kruise.io/web-rollout",
        "Rollout/web-rollout",
    ] {
        for verb in ["status", "approve", "pause", "resume", "undo"] {
            let (target, name) = match rollout(&format!("rollout {verb} {spelling}")) {
                RolloutCommand::Status(a) => (a.target.kind.kind, a.target.name),
                RolloutCommand::Approve(a) => (a.target.kind.kind, a.target.name),
                RolloutCommand::Pause(a) | RolloutCommand::Resume(a) => {
                    (a.target.kind.kind, a.target.name)
                }
                RolloutCommand::Undo(a) => (a.target.kind.kind, a.target.name),
                other => panic!("{other:?}"),
            };
            assert_eq!(
                (target, name.as_str()),
                ("Rollout", "web-rollout"),
                "{verb} {spelling}"
            );
        }
    }
    let RolloutCommand::Status(s) = rollout("rollout status ro/web-rollout --watch --timeout 2m")
    else {
        panic!()
    };
    assert!(s.watch && s.target.is_kruise_rollout());
    assert_eq!(s.timeout, Some(std::time::Duration::from_secs(120)));
}

#[test]
fn approve_takes_only_a_rollout_and_a_step_from_one() {
    let RolloutCommand::Approve(a) = rollout("rollout approve ro/web-rollout") else {
        panic!()
    };
    assert_eq!(a.step, None, "no --step: the current one");
    let RolloutCommand::Approve(a) = rollout("rollout approve ro/web-rollout --step 2") else {
        panic!()
    };
    assert_eq!(a.step, Some(2));
    let e = usage_error("rollout approve cs/web");
    assert!(e.contains("only a Kruise Rollout is approved"), "{e}");
    let e = usage_error("rollout approve ro/web-rollout --step 0");
    assert!(e.contains("--step"), "{e}");
    usage_error("rollout approve ro/");
    usage_error("rollout approve");
}

#[test]
fn the_workload_verbs_take_force_and_partition_stays_a_workloads() {
    match rollout("rollout partition cs/web 0 --force") {
        RolloutCommand::Partition(p) => assert!(p.force),
        other => panic!("{other:?}"),
    }
    match rollout("rollout partition cs/web 0") {
        RolloutCommand::Partition(p) => assert!(!p.force),
        other => panic!("{other:?}"),
    }
    for verb in ["pause", "resume"] {
        match rollout(&format!("rollout {verb} cs/web --force")) {
            RolloutCommand::Pause(a) | RolloutCommand::Resume(a) => {
                assert!(a.force && !a.target.is_kruise_rollout())
            }
            other => panic!("{other:?}"),
        }
    }
    match rollout("rollout undo cs/web --force --to-revision 2") {
        RolloutCommand::Undo(u) => assert!(u.force && u.to_revision == Some(2)),
        other => panic!("{other:?}"),
    }
    let e = usage_error("rollout partition ro/web-rollout 0");
    assert!(e.contains("cloneset|clone|cs"), "{e}");
    usage_error("rollout history ro/web-rollout");
    usage_error("rollout status deploy/web");
    assert_eq!(
        parse("rollout approve ro/web")
            .map(|c| c.command.map(|c| c.name()))
            .ok()
            .flatten(),
        Some("rollout approve")
    );
}
