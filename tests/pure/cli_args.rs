//! The command line as parsed: the kubeconfig flags before or after any subcommand (as kubectl
//! takes them), the console's own flags only without one, every KIND spelling, and usage errors
//! (exit code 2) for what means nothing where it is given or is malformed.

use clap::error::ErrorKind;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_tui::cli::{Cli, Command, RolloutCommand, SetCommand, args::RestartTarget};

fn parse(args: &str) -> Result<Cli, clap::Error> {
    Cli::try_parse_checked(std::iter::once("kruise-tui").chain(args.split_whitespace()))
}

fn ok(args: &str) -> Cli {
    parse(args).unwrap_or_else(|e| panic!("{args}: {e}"))
}

fn usage_error(args: &str) -> String {
    let err = parse(args).expect_err(args);
    assert_eq!(err.exit_code(), 2, "{args}: a usage error exits 2");
    err.to_string()
}

#[test]
fn kubeconfig_flags_go_before_or_after_the_subcommand() {
    for args in [
        "-n demo plan cs/web --partition 3",
        "plan cs/web --partition 3 -n demo",
        "plan -n demo cs/web --partition 3",
        "--namespace demo rollout status cs/web",
        "rollout -n demo status cs/web",
        "rollout status cs/web -n demo",
        "-n demo set image cs/web main=nginx:1.27",
        "set image cs/web main=nginx:1.27 --namespace demo",
        "-n demo scale cs/web --replicas 3",
    ] {
        let cli = ok(args);
        assert_eq!(
            cli.console.kube.namespace.as_deref(),
            Some("demo"),
            "{args}"
        );
    }
    let cli = ok("--kubeconfig /k --context c --readonly rollout partition cs/web 3");
    let k = &cli.console.kube;
    assert_eq!(
        (k.kubeconfig.as_deref(), k.context.as_deref(), k.readonly),
        (Some(std::path::Path::new("/k")), Some("c"), true)
    );
    let cli = ok("rollout partition cs/web 3 --kubeconfig /k --context c --readonly");
    assert!(cli.console.kube.readonly && cli.console.kube.context.as_deref() == Some("c"));
    // The headless subcommands that talk to a cluster take them either side too.
    for args in [
        "--kubeconfig /k controllers",
        "controllers --kubeconfig /k",
        "-n x sim-nodes --nodes 2",
    ] {
        let cli = ok(args);
        match &cli.command {
            Some(Command::Controllers(c)) => {
                assert_eq!(
                    c.kube.kubeconfig.as_deref(),
                    Some(std::path::Path::new("/k"))
                )
            }
            Some(Command::SimNodes(s)) => assert_eq!(s.kube.namespace.as_deref(), Some("x")),
            other => panic!("{args}: {other:?}"),
        }
    }
}

/// Every subcommand, with what it needs.
const EVERY_SUBCOMMAND: &[&str] = &[
    "demo-server",
    "sim-nodes",
    "controllers",
    "plan cs/web --partition 3",
    "rollout status cs/web",
    "rollout history cs/web",
    "rollout undo cs/web",
    "rollout pause cs/web",
    "rollout resume cs/web",
    "rollout partition cs/web 3",
    "set image cs/web main=nginx:1.27",
    "scale cs/web --replicas 3",
    "restart web-0",
    "protect cs/web always",
    "config paths",
];

#[test]
fn every_subcommand_takes_the_kubeconfig_flags_either_side() {
    const FLAGS: &str = "--kubeconfig /k --context c -n ns --readonly";
    for sub in EVERY_SUBCOMMAND {
        for args in [format!("{FLAGS} {sub}"), format!("{sub} {FLAGS}")] {
            let k = ok(&args).console.kube;
            assert_eq!(
                (
                    k.kubeconfig.as_deref(),
                    k.context.as_deref(),
                    k.namespace.as_deref(),
                    k.readonly
                ),
                (
                    Some(std::path::Path::new("/k")),
                    Some("c"),
                    Some("ns"),
                    true
                ),
                "{args}"
            );
        }
    }
    // -A too, where a subcommand is not about one object.
    for sub in ["demo-server", "sim-nodes", "controllers", "config paths"] {
        assert!(
            ok(&format!("-A {sub}")).console.kube.all_namespaces,
            "{sub}"
        );
        assert!(
            ok(&format!("{sub} -A")).console.kube.all_namespaces,
            "{sub}"
        );
    }
}

#[test]
fn the_console_keeps_its_flags() {
    let cli = ok("--demo --pods 50 --theme high-contrast --keymap default");
    assert!(cli.command.is_none());
    assert!(cli.console.demo);
    assert_eq!(cli.console.pods, Some(50));
    assert_eq!(cli.console.theme.as_deref(), Some("high-contrast"));
    let cli = ok("-n demo --readonly --controllers");
    assert!(cli.console.controllers && cli.console.kube.readonly);
    assert!(ok("-A").console.kube.all_namespaces);
    usage_error("--pods 5");
    usage_error("--demo --controllers");
    usage_error("-n demo -A");
    let cli = ok("demo-server --listen 127.0.0.1:0 --no-seed --pods 10");
    assert!(matches!(
        cli.command,
        Some(Command::DemoServer(ref a)) if !a.no_kruise_webhooks
    ));
    // The shape of a real cluster where only `kruise-tui controllers` runs.
    let cli = ok("demo-server --no-controllers --no-kruise-webhooks");
    assert!(matches!(
        cli.command,
        Some(Command::DemoServer(ref a)) if a.no_kruise_webhooks && a.no_controllers
    ));
    usage_error("demo-server --no-kruise-webhook");
    assert!(matches!(
        ok("config paths").command,
        Some(Command::Config(_))
    ));
}

#[test]
fn flags_that_mean_nothing_where_given_are_usage_errors() {
    let err = usage_error("--demo rollout status cs/web");
    assert!(
        err.contains("--demo is a flag of the console") && err.contains("rollout status"),
        "{err}"
    );
    let err = usage_error("rollout status cs/web --theme x");
    assert!(
        err.contains("unexpected argument") || err.contains("--theme"),
        "{err}"
    );
    let err = usage_error("--theme x plan cs/web --partition 3");
    assert!(err.contains("--theme is a flag of the console"), "{err}");
    let err = usage_error("rollout status cs/web -A");
    assert!(
        err.contains("--all-namespaces does not apply to rollout status"),
        "{err}"
    );
}

#[test]
fn kinds_take_every_spelling_and_an_unknown_one_is_a_usage_error() {
    for (args, kind) in [
        ("rollout status cs/web", "CloneSet"),
        ("rollout status clonesets/web", "CloneSet"),
        ("rollout undo clone/web --to-revision 2", "CloneSet"),
        ("rollout pause asts/db", "StatefulSet"),
        (
            "rollout resume statefulsets.apps.kruise.io/db",
            "StatefulSet",
        ),
        (
            "rollout history daemonset.apps.kruise.io/agent --revision 1",
            "DaemonSet",
        ),
        ("rollout partition ads/agent 1", "DaemonSet"),
        ("plan CloneSet/web --partition 40%", "CloneSet"),
    ] {
        let cli = ok(args);
        let target = match cli.command {
            Some(Command::Plan(a)) => a.target,
            Some(Command::Rollout(r)) => match r {
                RolloutCommand::Status(a) => a.target,
                RolloutCommand::History(a) => a.target,
                RolloutCommand::Undo(a) => a.target,
                RolloutCommand::Pause(a) | RolloutCommand::Resume(a) => a.target,
                RolloutCommand::Partition(a) => a.target,
                RolloutCommand::Approve(a) => a.target,
            },
            other => panic!("{args}: {other:?}"),
        };
        assert_eq!(target.kind.kind, kind, "{args}");
    }
    let err = usage_error("plan foo/web --partition 3");
    assert!(
        err.contains("unknown kind \"foo\"") && err.contains("cloneset|clone|cs"),
        "{err}"
    );
    let err = usage_error("rollout partition deployment/web 3");
    assert!(err.contains("has no rollout"), "{err}");
    let err = usage_error("scale ads/agent --replicas 3");
    assert!(err.contains("no replica count"), "{err}");
    let err = usage_error("rollout pause sts/db");
    assert!(err.contains("ambiguous"), "{err}");
    let err = usage_error("rollout status web");
    assert!(err.contains("is not KIND/NAME"), "{err}");
}

#[test]
fn values_are_checked_while_parsing() {
    let cli = ok("set image cs/web main=nginx:1.27 sidecar=envoy:1.30");
    let Some(Command::Set(SetCommand::Image(a))) = cli.command else {
        panic!("set image");
    };
    assert_eq!(a.images.len(), 2);
    assert_eq!(a.images[1].image, "envoy:1.30");
    assert_eq!(
        parse("set image cs/web").expect_err("no image").kind(),
        ErrorKind::MissingRequiredArgument
    );
    usage_error("set image cs/web main");
    let cli = ok("scale cs/web --replicas 3 --pods web-a,web-b");
    let Some(Command::Scale(a)) = cli.command else {
        panic!("scale");
    };
    assert_eq!(
        (a.replicas, a.pods),
        (3, vec!["web-a".into(), "web-b".into()])
    );
    usage_error("scale cs/web --replicas -1");
    usage_error("scale cs/web");
    let cli = ok("rollout status cs/web --watch --timeout 2m");
    let Some(Command::Rollout(RolloutCommand::Status(a))) = cli.command else {
        panic!("status");
    };
    assert!(a.watch);
    assert_eq!(a.timeout, Some(std::time::Duration::from_secs(120)));
    usage_error("rollout status cs/web --timeout soon");
    let cli = ok("rollout partition cs/web 40%");
    let Some(Command::Rollout(RolloutCommand::Partition(a))) = cli.command else {
        panic!("partition");
    };
    assert_eq!(a.value.value, IntOrString::String("40%".into()));
    usage_error("rollout partition cs/web");
    // An Advanced DaemonSet's partition may be a percent from Kruise v1.9.0 (the cluster's
    // schema decides; v1.8.4's refuses it).
    let cli = ok("rollout partition ads/agent 25%");
    let Some(Command::Rollout(RolloutCommand::Partition(a))) = cli.command else {
        panic!("partition");
    };
    assert_eq!(a.value.value, IntOrString::String("25%".into()));
    ok("plan ads/agent --partition 10%");
}

/// A value that is wrong whatever the cluster holds is a usage error (exit 2), with clap's
/// message and the reason; what the cluster decides (more than the replicas, a pod that does
/// not exist) is refused when the command runs (exit 1).
#[test]
fn malformed_values_are_usage_errors() {
    for (args, why) in [
        (
            "rollout partition cs/web abc",
            "partition \"abc\" is not a number of pods",
        ),
        (
            "rollout partition cs/web -1",
            "partition \"-1\" is negative",
        ),
        (
            "rollout partition cs/web 150%",
            "partition \"150%\" is over 100%",
        ),
        ("plan cs/web --partition abc", "is not a number of pods"),
        ("plan cs/web --partition -3", "is negative"),
        (
            "rollout partition asts/db 50%",
            "the partition of statefulset.apps.kruise.io/db is a number of pods, not a percent",
        ),
        ("rollout status cs/Web_1", "\"Web_1\" is not an object name"),
        ("protect cs/web. always", "is not an object name"),
        (
            "set image cs/web Main=nginx:1.27",
            "\"Main\" is not a container name",
        ),
        ("restart Web-0", "is not an object name"),
        (
            "restart web-0 -c bad_name",
            "\"bad_name\" is not a container name",
        ),
        (
            "restart web-0 --failure-policy sometimes",
            "give Fail or Ignore",
        ),
        (
            "restart web-0 --active-deadline-seconds 0",
            "0 is not in 1..",
        ),
        ("restart web-0 --min-started-seconds=-1", "-1 is not in 0.."),
        ("restart web-0 --timeout 2d", "is not a duration"),
        ("restart web-0 --timeout=-5s", "is negative"),
        (
            "scale cs/web --replicas 2 --pods web-a,Web-B",
            "\"Web-B\" is not an object name",
        ),
        ("rollout undo cs/web --to-revision=-1", "-1 is not in 0.."),
        ("rollout history cs/web --revision x", "invalid digit"),
        (
            "demo-server --listen 0.0.0.0:8080",
            "served on loopback only",
        ),
        ("demo-server --listen localhost", "is not an address"),
        (
            "-n Prod rollout status cs/web",
            "\"Prod\" is not a namespace name",
        ),
        ("rollout status cs/web -n demo_1", "is not a namespace name"),
        ("report --since soon", "is not a duration"),
        ("journal --since soon", "is not a duration"),
        ("journal -o yaml", "invalid value 'yaml'"),
        ("triage -o yaml", "invalid value 'yaml'"),
        ("triage --timeout forever", "is not a duration"),
    ] {
        let err = usage_error(args);
        assert!(err.contains(why), "{args}: {err}");
    }
    // The same values, well-formed.
    let cli = ok("restart web-0 -c app --failure-policy ignore --timeout 1m30s");
    let Some(Command::Restart(a)) = cli.command else {
        panic!("restart");
    };
    assert_eq!(
        (
            a.targets,
            a.containers,
            a.failure_policy.as_str(),
            a.timeout
        ),
        (
            vec![RestartTarget::Pod("web-0".to_owned())],
            vec!["app".to_owned()],
            "Ignore",
            std::time::Duration::from_secs(90)
        )
    );
    // Several pods, or one workload (its pods one after another).
    let Some(Command::Restart(a)) = ok("restart web-0 web-1").command else {
        panic!("restart");
    };
    assert_eq!(a.targets.len(), 2);
    let Some(Command::Restart(a)) = ok("restart cs/web").command else {
        panic!("restart");
    };
    assert!(
        matches!(&a.targets[..], [RestartTarget::Workload(w)] if w.name == "web"),
        "{:?}",
        a.targets
    );
    assert!(usage_error("restart deploy/web").contains("deploy"));
    let cli = ok("plan asts/db --partition 2");
    let Some(Command::Plan(a)) = cli.command else {
        panic!("plan");
    };
    assert_eq!(
        (a.partition.text.as_str(), a.partition.value),
        ("2", IntOrString::Int(2))
    );
    // A stray comma in --pods is no pod; 0 is kubectl's "the previous revision".
    ok("scale cs/web --replicas 2 --pods web-a,,web-b,");
    ok("rollout undo cs/web --to-revision 0");
    ok("demo-server --listen [::1]:0");
}

/// Which Kruise release the embedded cluster and the controllers follow: 1.9 unless told.
#[test]
fn the_kruise_release_is_a_checked_choice() {
    use kruise_tui::cli::KruiseRelease;
    assert_eq!(ok("--demo").console.kruise_version, KruiseRelease::V1_9);
    assert_eq!(
        ok("--demo --kruise-version 1.8").console.kruise_version,
        KruiseRelease::V1_8
    );
    usage_error("--kruise-version 1.8");
    let release = |args: &str| match ok(args).command {
        Some(Command::DemoServer(a)) => Some(a.kruise_version),
        Some(Command::Controllers(a)) => a.kruise_version,
        _ => None,
    };
    assert_eq!(release("demo-server"), Some(KruiseRelease::V1_9));
    assert_eq!(
        release("demo-server --kruise-version v1.8.4"),
        Some(KruiseRelease::V1_8)
    );
    assert_eq!(release("controllers"), None, "told by the cluster's CRDs");
    assert_eq!(
        release("controllers --kruise-version 1.9.0"),
        Some(KruiseRelease::V1_9)
    );
    let err = usage_error("demo-server --kruise-version 2.0");
    assert!(err.contains("invalid value '2.0'"), "{err}");
    usage_error("controllers --kruise-version");
}
