//! `:` command mode: parsing the command line, running it, and Tab completion.
//!
//! Commands: `:cs` `:asts` `:ads` (workloads of one kind), `:workloads` (all three), `:pods`
//! (from a rollout view: that workload's pods), `:journal`, `:protect`, `:acj` (AdvancedCronJobs), `:bcj` (BroadcastJobs),
//! `:ws` (WorkloadSpreads), `:ud` (UnitedDeployments),
//! `:imagepulljobs` `:imagelistpulljobs` `:nodeimages` (image pre-download),
//! `:pps` (PersistentPodStates), `:distributor` (ResourceDistributions),
//! `:ns NAME` (`:ns all` for every namespace), `:ctx NAME`, `:q`; the on-call views `:triage`
//! (`:triage all`: every kubeconfig context)
//! `:crr` `:pub` `:sidecarset` `:ppm`.

use super::{
    App, Effect, Level,
    images::ImageKind,
    journal::JournalView,
    msg::Kind,
    oncall::{self, Screen},
    route::{ListView, Route, Scope},
};

/// A parsed command line.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Workloads(Option<Kind>),
    Pods,
    Journal,
    Protect,
    Oncall(Screen),
    /// `:triage all`: triage of every kubeconfig context.
    TriageAll,
    CronJobs,
    BroadcastJobs,
    WorkloadSpreads,
    UnitedDeployments,
    Images(super::images::ImageKind),
    PersistentPodStates,
    Distributions,
    Namespace(Option<String>),
    Context(String),
    Quit,
}

/// Names accepted for each command (first is the canonical one, completed by Tab).
const NAMES: [(&str, &[&str]); 25] = [
    ("cs", &["cs", "clone", "cloneset", "clonesets"]),
    (
        "asts",
        &[
            "asts",
            "statefulset.apps.kruise.io",
            "statefulsets.apps.kruise.io",
        ],
    ),
    (
        "ads",
        &[
            "ads",
            "daemonset.apps.kruise.io",
            "daemonsets.apps.kruise.io",
        ],
    ),
    ("workloads", &["workloads", "wl"]),
    ("pods", &["pods", "pod", "po"]),
    ("journal", &["journal"]),
    ("protect", &["protect", "protection"]),
    ("triage", &["triage"]),
    (
        "crr",
        &[
            "crr",
            "containerrecreaterequest",
            "containerrecreaterequests",
            "restarts",
        ],
    ),
    (
        "pub",
        &[
            "pub",
            "podunavailablebudget",
            "podunavailablebudgets",
            "budgets",
        ],
    ),
    ("sidecarset", &["sidecarset", "sidecarsets", "sidecars"]),
    (
        "ppm",
        &["ppm", "podprobemarker", "podprobemarkers", "probes"],
    ),
    ("acj", &["acj", "advancedcronjob", "advancedcronjobs"]),
    ("bcj", &["bcj", "broadcastjob", "broadcastjobs"]),
    ("ws", &["ws", "workloadspread", "workloadspreads"]),
    ("ud", &["ud", "uniteddeployment", "uniteddeployments"]),
    // The image pre-download kinds' CRDs have no short names.
    ("imagepulljobs", &["imagepulljobs", "imagepulljob"]),
    (
        "imagelistpulljobs",
        &["imagelistpulljobs", "imagelistpulljob"],
    ),
    ("nodeimages", &["nodeimages", "nodeimage"]),
    // The CRD has no short name; `pps` is ours (the help's command column is 14 wide).
    ("pps", &["pps", "persistentpodstate", "persistentpodstates"]),
    (
        "distributor",
        &[
            "distributor",
            "resourcedistribution",
            "resourcedistributions",
        ],
    ),
    // Kruise Rollout; the CRD has no short name, `ro` is ours (also through `parse_kind`).
    ("rollouts", &["rollouts", "rollout", "ro"]),
    ("ns", &["ns", "namespace"]),
    ("ctx", &["ctx", "context"]),
    ("q", &["q", "q!", "quit"]),
];

/// How many views `Esc` can go back through.
const MAX_DEPTH: usize = 16;

/// What `:ns` takes to mean every namespace.
pub const ALL_NAMESPACES: &str = "all";

/// Parses a command line (without the `:`); the error is shown to the user.
pub fn parse(line: &str) -> Result<Command, String> {
    let mut words = line.split_whitespace();
    let Some(first) = words.next() else {
        return Err("empty command".to_owned());
    };
    let arg = words.next();
    if words.next().is_some() {
        return Err(format!("`:{}`: too many arguments", line.trim()));
    }
    let canonical = NAMES
        .iter()
        .find(|(_, aliases)| aliases.contains(&first))
        .map(|(c, _)| *c)
        .or_else(|| rollout_kind(first).then_some("rollouts"));
    let no_arg = |cmd: Command| match arg {
        None => Ok(cmd),
        Some(a) => Err(format!("`:{first}` takes no argument (got `{a}`)")),
    };
    match canonical {
        Some("cs") => no_arg(Command::Workloads(Some(Kind::CloneSet))),
        Some("asts") => no_arg(Command::Workloads(Some(Kind::StatefulSet))),
        Some("ads") => no_arg(Command::Workloads(Some(Kind::DaemonSet))),
        Some("workloads") => no_arg(Command::Workloads(None)),
        Some("pods") => no_arg(Command::Pods),
        Some("journal") => no_arg(Command::Journal),
        Some("protect") => no_arg(Command::Protect),
        Some("triage") => match arg {
            None => Ok(Command::Oncall(Screen::Triage)),
            Some("all") => Ok(Command::TriageAll),
            Some(_) => {
                Err("usage: :triage (this context) or :triage all (every context)".to_owned())
            }
        },
        Some("crr") => no_arg(Command::Oncall(Screen::Restarts)),
        Some("pub") => no_arg(Command::Oncall(Screen::Budgets)),
        Some("sidecarset") => no_arg(Command::Oncall(Screen::SidecarSets)),
        Some("ppm") => no_arg(Command::Oncall(Screen::ProbeMarkers)),
        Some("rollouts") => no_arg(Command::Oncall(Screen::Rollouts)),
        Some("acj") => no_arg(Command::CronJobs),
        Some("bcj") => no_arg(Command::BroadcastJobs),
        Some("ws") => no_arg(Command::WorkloadSpreads),
        Some("ud") => no_arg(Command::UnitedDeployments),
        Some("imagepulljobs") => no_arg(Command::Images(ImageKind::PullJobs)),
        Some("imagelistpulljobs") => no_arg(Command::Images(ImageKind::ListPullJobs)),
        Some("nodeimages") => no_arg(Command::Images(ImageKind::NodeImages)),
        Some("pps") => no_arg(Command::PersistentPodStates),
        Some("distributor") => no_arg(Command::Distributions),
        Some("q") => no_arg(Command::Quit),
        Some("ns") => match arg {
            Some(ALL_NAMESPACES) | Some("-A") => Ok(Command::Namespace(None)),
            Some(ns) => Ok(Command::Namespace(Some(ns.to_owned()))),
            None => Err("usage: :ns NAME (or :ns all)".to_owned()),
        },
        Some("ctx") => match arg {
            Some(ctx) => Ok(Command::Context(ctx.to_owned())),
            None => Err("usage: :ctx NAME".to_owned()),
        },
        _ => Err(format!(
            "unknown command `:{first}` (try :cs :asts :ads :pods :triage :crr :pub :sidecarset \
             :ppm :rollouts :protect :acj :bcj :ws :ud :imagepulljobs :imagelistpulljobs :nodeimages \
             :pps :distributor :journal :ns NAME :ctx NAME :q)"
        )),
    }
}

/// Whether `word` names Kruise Rollout's kinds the way `api::kinds::parse_kind` reads kinds
/// (`rollouts.rollouts.kruise.io`, `Rollout`, `br`, `batchreleases`…): `:rollouts` shows both.
fn rollout_kind(word: &str) -> bool {
    use crate::api::kinds::{BATCH_RELEASE, ROLLOUT, parse_kind};
    parse_kind(word).is_ok_and(|k| *k == ROLLOUT || *k == BATCH_RELEASE)
}

/// Runs a command line typed after `:`.
pub fn run(app: &mut App, line: &str) -> Vec<Effect> {
    let cmd = match parse(line) {
        Ok(cmd) => cmd,
        Err(err) => {
            app.set_status(Level::Error, err);
            return Vec::new();
        }
    };
    match cmd {
        Command::Workloads(kind) => {
            let scope = kind.map_or(Scope::Workloads, Scope::WorkloadKind);
            if app.kruise_missing {
                app.set_status(
                    Level::Error,
                    "OpenKruise is not installed in this cluster: no workloads to show",
                );
            }
            open_list(app, scope);
            Vec::new()
        }
        Command::Pods => {
            // From a rollout view, the flat list of that workload's pods.
            let scope = match app.top() {
                Route::Rollout(view) => Scope::PodsOf(view.owner.clone()),
                _ => Scope::Pods,
            };
            open_list(app, scope);
            Vec::new()
        }
        Command::Journal => {
            if !matches!(app.top(), Route::Journal(_)) {
                app.stack.push(Route::Journal(JournalView::new()));
                if app.stack.len() > MAX_DEPTH {
                    app.stack.remove(1);
                }
            }
            vec![Effect::ReadJournal]
        }
        Command::Protect => bounded(app, super::protect::open),
        Command::Oncall(screen) => bounded(app, |app| oncall::open_screen(app, screen)),
        Command::TriageAll => bounded(app, oncall::across::open),
        Command::CronJobs => bounded(app, super::cronjobs::open),
        Command::BroadcastJobs => bounded(app, super::broadcastjobs::open),
        Command::WorkloadSpreads => bounded(app, super::workloadspreads::open),
        Command::UnitedDeployments => bounded(app, super::uniteddeployments::open),
        Command::Images(kind) => bounded(app, |app| super::images::open(app, kind)),
        Command::PersistentPodStates => bounded(app, super::persistentpodstates::open),
        Command::Distributions => bounded(app, super::distributions::open),
        Command::Quit => {
            app.request_quit();
            vec![Effect::Quit]
        }
        Command::Namespace(namespace) => {
            let shown = namespace.as_deref().unwrap_or("all namespaces").to_owned();
            app.set_status(Level::Info, format!("switching to {shown}…"));
            switch(app, app.context.clone(), namespace)
        }
        Command::Context(context) => {
            if !app.contexts.is_empty() && !app.contexts.contains(&context) {
                app.set_status(
                    Level::Error,
                    format!(
                        "unknown context `{context}` (known: {})",
                        app.contexts.join(", ")
                    ),
                );
                return Vec::new();
            }
            app.set_status(Level::Info, format!("switching to context {context}…"));
            let namespace = app.namespace.clone();
            switch(app, Some(context), namespace)
        }
    }
}

/// Opens a view, keeping the history bounded (the root stays).
fn bounded(app: &mut App, open: impl FnOnce(&mut App) -> Vec<Effect>) -> Vec<Effect> {
    let effects = open(app);
    if app.stack.len() > MAX_DEPTH {
        app.stack.remove(1);
    }
    effects
}

/// Puts a list on top of the stack (replacing a list of the same scope already on top).
fn open_list(app: &mut App, scope: Scope) {
    if let Route::List(top) = app.top()
        && top.scope == scope
    {
        return;
    }
    app.stack.push(Route::List(ListView::new(scope)));
    // Commands only ever add lists: keep the history bounded (the root stays).
    if app.stack.len() > MAX_DEPTH {
        app.stack.remove(1);
    }
    app.refresh_lists();
}

/// Emits the switch and resets what belonged to the old watch set.
pub(crate) fn switch(
    app: &mut App,
    context: Option<String>,
    namespace: Option<String>,
) -> Vec<Effect> {
    app.context = context.clone();
    app.namespace = namespace.clone();
    app.ready.clear();
    app.failed.clear();
    app.forbidden.clear();
    app.stack.truncate(1);
    // The old context's problems do not "clear" because its watches stop.
    app.oncall.recorded = None;
    app.rebuild_workloads();
    app.rebuild_pods();
    vec![Effect::Switch { context, namespace }]
}

/// Tab completion: fills the unique completion, or the common prefix and a hint of candidates.
pub fn complete(input: &str, namespaces: &[String], contexts: &[String]) -> (String, String) {
    let (head, partial) = match input.split_once(' ') {
        Some((cmd, rest)) => (Some(cmd), rest.trim_start()),
        None => (None, input),
    };
    let candidates: Vec<String> = match head {
        None => NAMES
            .iter()
            .map(|(c, _)| (*c).to_owned())
            .filter(|c| c.starts_with(partial))
            .collect(),
        Some("ns" | "namespace") => std::iter::once(ALL_NAMESPACES.to_owned())
            .chain(namespaces.iter().cloned())
            .filter(|n| n.starts_with(partial))
            .collect(),
        Some("ctx" | "context") => contexts
            .iter()
            .filter(|c| c.starts_with(partial))
            .cloned()
            .collect(),
        Some(_) => Vec::new(),
    };
    let prefix = |rest: &str| match head {
        Some(cmd) => format!("{cmd} {rest}"),
        None => rest.to_owned(),
    };
    match candidates.as_slice() {
        [] => (input.to_owned(), "no completion".to_owned()),
        [one] => {
            let takes_arg = head.is_none() && (one == "ns" || one == "ctx");
            let filled = prefix(one);
            (if takes_arg { filled + " " } else { filled }, String::new())
        }
        many => {
            let common = common_prefix(many);
            (prefix(&common), many.join(" "))
        }
    }
}

fn common_prefix(words: &[String]) -> String {
    let Some(first) = words.first() else {
        return String::new();
    };
    let mut len = first.len();
    for w in &words[1..] {
        len = first
            .char_indices()
            .zip(w.chars())
            .take_while(|((_, a), b)| a == b)
            .last()
            .map_or(0, |((i, a), _)| i + a.len_utf8())
            .min(len);
    }
    first[..len].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_aliases_and_arguments() {
        assert_eq!(parse("cs"), Ok(Command::Workloads(Some(Kind::CloneSet))));
        assert_eq!(
            parse(" clone "),
            Ok(Command::Workloads(Some(Kind::CloneSet)))
        );
        assert_eq!(
            parse("asts"),
            Ok(Command::Workloads(Some(Kind::StatefulSet)))
        );
        assert_eq!(parse("po"), Ok(Command::Pods));
        assert_eq!(parse("ns foo"), Ok(Command::Namespace(Some("foo".into()))));
        assert_eq!(parse("ns all"), Ok(Command::Namespace(None)));
        assert_eq!(parse("ctx kind"), Ok(Command::Context("kind".into())));
        assert_eq!(parse("q!"), Ok(Command::Quit));
        assert_eq!(parse("triage"), Ok(Command::Oncall(Screen::Triage)));
        assert_eq!(parse("triage all"), Ok(Command::TriageAll));
        assert!(parse("triage prod").is_err());
        assert_eq!(parse("crr"), Ok(Command::Oncall(Screen::Restarts)));
        assert_eq!(parse("pub"), Ok(Command::Oncall(Screen::Budgets)));
        assert_eq!(
            parse("sidecarsets"),
            Ok(Command::Oncall(Screen::SidecarSets))
        );
        assert_eq!(parse("ppm"), Ok(Command::Oncall(Screen::ProbeMarkers)));
        for name in [
            "rollouts",
            "rollout",
            "ro",
            "Rollout",
            "rollouts.rollouts.kruise.io",
            "br",
        ] {
            assert_eq!(parse(name), Ok(Command::Oncall(Screen::Rollouts)), "{name}");
        }
        for name in ["pps", "persistentpodstate", "persistentpodstates"] {
            assert_eq!(parse(name), Ok(Command::PersistentPodStates));
        }
        for name in [
            "distributor",
            "resourcedistribution",
            "resourcedistributions",
        ] {
            assert_eq!(parse(name), Ok(Command::Distributions));
        }
        assert!(parse("ns").unwrap_err().contains("usage"));
        assert!(parse("pods x").unwrap_err().contains("takes no argument"));
        assert!(
            parse("deploy")
                .unwrap_err()
                .contains("unknown command `:deploy`")
        );
    }

    #[test]
    fn completes_commands_and_namespaces() {
        let ns = vec![
            "default".to_owned(),
            "demo".to_owned(),
            "kube-system".to_owned(),
        ];
        assert_eq!(complete("as", &ns, &[]), ("asts".into(), String::new()));
        assert_eq!(
            complete("si", &ns, &[]),
            ("sidecarset".into(), String::new())
        );
        assert_eq!(complete("ns", &ns, &[]), ("ns ".into(), String::new()));
        assert_eq!(
            complete("n", &ns, &[]),
            ("n".into(), "nodeimages ns".into())
        );
        assert_eq!(
            complete("image", &ns, &[]),
            ("image".into(), "imagepulljobs imagelistpulljobs".into())
        );
        assert_eq!(
            complete("imagel", &ns, &[]),
            ("imagelistpulljobs".into(), String::new())
        );
        assert_eq!(
            parse("nodeimage"),
            Ok(Command::Images(ImageKind::NodeImages))
        );
        assert_eq!(
            parse("imagepulljob"),
            Ok(Command::Images(ImageKind::PullJobs))
        );
        assert_eq!(complete("p", &ns, &[]).1, "pods protect pub ppm pps");
        assert_eq!(complete("bc", &ns, &[]), ("bcj".into(), String::new()));
        assert_eq!(complete("b", &ns, &[]), ("bcj".into(), String::new()));
        assert_eq!(
            complete("ns de", &ns, &[]),
            ("ns de".into(), "default demo".into())
        );
        assert_eq!(
            complete("ns k", &ns, &[]),
            ("ns kube-system".into(), String::new())
        );
        assert_eq!(complete("ctx x", &ns, &[]).1, "no completion");
    }
}
