//! Snapshots (insta + TestBackend) of the image pre-download views at a fixed clock
//! (2026-01-10T12:00Z): `:imagepulljobs`, `:imagelistpulljobs` and `:nodeimages` lists, Enter on
//! each (the pull state per node, per image), and the rollout view's mark of pods whose next
//! image is not on their node yet, from the NodeImages it lists while it is on top.

use crate::harness;

use harness::Harness;
use kruise_tui::{
    api::{ImageListPullJob, ImagePullJob, NodeImage},
    app::{
        Effect, Msg,
        images::{ImageKind, Listing},
        msg::EffectResult,
    },
};
use serde_json::json;

fn owner(name: &str, uid: &str) -> serde_json::Value {
    json!([{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob",
            "namespace": "demo", "name": name, "uid": uid}])
}

/// Three nodes: `web-next` (nginx:1.27) pulled on node-2, pulling on node-1, failed on node-3;
/// `base-images-postgres` (postgres:16.3) pulled on every node.
fn node_images() -> Vec<NodeImage> {
    let tag = |tag: &str, job: &str, uid: &str| {
        json!({"tag": tag, "version": 1, "ownerReferences": owner(job, uid),
               "pullPolicy": {"backoffLimit": 3, "timeoutSeconds": 600}})
    };
    let status = |phase: &str, progress: i32, message: &str| {
        json!({"tag": "1.27", "phase": phase, "progress": progress, "version": 1,
               "message": message})
    };
    let node = |name: &str, nginx: serde_json::Value, counts: (i32, i32, i32)| {
        json!({
            "metadata": {"name": name, "creationTimestamp": "2026-01-08T12:00:00Z"},
            "spec": {"images": {
                "nginx": {"tags": [tag("1.27", "web-next", "uid-ipj-web")]},
                "postgres": {"tags": [tag("16.3", "base-images-postgres", "uid-ipj-pg")]}
            }},
            "status": {"desired": 2, "pulling": counts.0, "succeeded": counts.1,
                       "failed": counts.2, "imageStatuses": {
                "nginx": {"tags": [nginx]},
                "postgres": {"tags": [{"tag": "16.3", "phase": "Succeeded", "progress": 100,
                                       "version": 1}]}
            }}
        })
    };
    serde_json::from_value(json!([
        node("node-2", status("Succeeded", 100, ""), (0, 2, 0)),
        node("node-1", status("Pulling", 45, "pulling layers"), (1, 1, 0)),
        node(
            "node-3",
            status(
                "Failed",
                10,
                "Back-off pulling image \"nginx:1.27\": connection reset",
            ),
            (0, 1, 1)
        ),
    ]))
    .expect("node images")
}

fn pull_jobs() -> Vec<ImagePullJob> {
    serde_json::from_value(json!([
        {
            "metadata": {"name": "web-next", "namespace": "demo", "uid": "uid-ipj-web",
                         "creationTimestamp": "2026-01-10T11:40:00Z"},
            "spec": {"image": "nginx:1.27", "parallelism": 2,
                     "selector": {"matchLabels": {"pool": "web"}},
                     "completionPolicy": {"type": "Always", "activeDeadlineSeconds": 1800},
                     "pullPolicy": {"backoffLimit": 3, "timeoutSeconds": 600}},
            "status": {"desired": 3, "active": 1, "succeeded": 1, "failed": 1,
                       "failedNodes": ["node-3"], "startTime": "2026-01-10T11:40:01Z",
                       "message": "job is running, progress 66.7%"}
        },
        {
            "metadata": {"name": "base-images-postgres", "namespace": "demo",
                         "uid": "uid-ipj-pg", "creationTimestamp": "2026-01-10T10:00:00Z",
                         "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1",
                             "kind": "ImageListPullJob", "name": "base-images",
                             "uid": "uid-ilpj", "controller": true}]},
            "spec": {"image": "postgres:16.3", "completionPolicy": {"type": "Always"}},
            "status": {"desired": 3, "active": 0, "succeeded": 3, "failed": 0,
                       "startTime": "2026-01-10T10:00:01Z",
                       "completionTime": "2026-01-10T10:02:00Z",
                       "message": "job has completed"}
        }
    ]))
    .expect("pull jobs")
}

fn list_jobs() -> Vec<ImageListPullJob> {
    serde_json::from_value(json!([{
        "metadata": {"name": "base-images", "namespace": "demo", "uid": "uid-ilpj",
                     "creationTimestamp": "2026-01-10T10:00:00Z"},
        "spec": {"images": ["postgres:16.3", "redis:7.2"],
                 "completionPolicy": {"type": "Always"}},
        "status": {"desired": 2, "active": 0, "completed": 1, "succeeded": 1,
                   "startTime": "2026-01-10T10:00:01Z"}
    }]))
    .expect("list jobs")
}

fn listing(kind: ImageKind) -> Listing {
    match kind {
        ImageKind::NodeImages => Listing {
            node_images: Ok(node_images()),
            ..Listing::default()
        },
        ImageKind::PullJobs => Listing {
            pull_jobs: pull_jobs(),
            node_images: Ok(node_images()),
            ..Listing::default()
        },
        ImageKind::ListPullJobs => Listing {
            pull_jobs: pull_jobs(),
            list_jobs: list_jobs(),
            node_images: Ok(node_images()),
        },
    }
}

fn open(h: &mut Harness, command: &str, kind: ImageKind) {
    let effects = h.command(command);
    assert_eq!(
        effects,
        vec![Effect::List(kruise_tui::app::Listing::Images(kind))]
    );
    h.feed(Msg::EffectDone(EffectResult::Images {
        kind,
        result: Ok(listing(kind)),
    }));
}

#[test]
fn image_pull_jobs_list_and_pull_state_per_node() {
    let mut h = Harness::loaded(None, (140, 22));
    h.command("imagepulljobs");
    assert!(h.screen().contains("Listing ImagePullJobs"));
    h.feed(Msg::EffectDone(EffectResult::Images {
        kind: ImageKind::PullJobs,
        result: Ok(listing(ImageKind::PullJobs)),
    }));
    // Sorted by name: base-images-postgres, web-next.
    insta::assert_snapshot!("ipj_list", h.screen());
    h.press(&["j", "enter"]);
    let screen = h.screen();
    insta::assert_snapshot!("ipj_detail", screen);
    // Nodes in order, each with its phase from its NodeImage.
    let n1 = screen.find("│   node-1 ").expect("node-1");
    let n3 = screen.find("│   node-3 ").expect("node-3");
    assert!(n1 < n3);
    assert!(screen.contains("Pulling"), "{screen}");
    assert!(screen.contains("connection reset"), "{screen}");
    // Esc back: the list with the cursor kept.
    h.press(&["esc"]);
    assert!(h.screen().contains("ImagePullJobs [2]"));
}

#[test]
fn image_list_pull_jobs_show_each_image_per_node() {
    let mut h = Harness::loaded(None, (140, 26));
    open(&mut h, "imagelistpulljobs", ImageKind::ListPullJobs);
    insta::assert_snapshot!("ilpj_list", h.screen());
    h.press(&["enter"]);
    let screen = h.screen();
    insta::assert_snapshot!("ilpj_detail", screen);
    // The image with an ImagePullJob shows its nodes; the other says it has none yet.
    assert!(screen.contains("ImagePullJob base-images-postgres: 3/3 nodes succeeded"));
    assert!(screen.contains("no ImagePullJob for it yet"));
}

#[test]
fn node_images_list_and_images_on_a_node() {
    let mut h = Harness::loaded(None, (140, 20));
    open(&mut h, "nodeimages", ImageKind::NodeImages);
    insta::assert_snapshot!("ni_list", h.screen());
    // node-1, node-2, node-3: the third has a failed pull.
    h.press(&["j", "j", "enter"]);
    let screen = h.screen();
    insta::assert_snapshot!("ni_detail", screen);
    assert!(screen.contains("NodeImage node-3"));
    assert!(screen.contains("demo/web-next"));
}

#[test]
fn image_lists_failures_are_shown() {
    for (command, kind, error) in [
        (
            "imagepulljob",
            ImageKind::PullJobs,
            "imagepulljobs: forbidden",
        ),
        (
            "nodeimage",
            ImageKind::NodeImages,
            "the server could not find the requested resource (nodeimages)",
        ),
    ] {
        let mut h = Harness::loaded(None, (100, 10));
        h.command(command);
        h.feed(Msg::EffectDone(EffectResult::Images {
            kind,
            result: Err(error.into()),
        }));
        assert!(h.screen().contains(error), "{}", h.screen());
    }
    // The jobs list, but NodeImages cannot be: the detail says why it has no nodes.
    let mut h = Harness::loaded(None, (120, 20));
    h.command("imagepulljobs");
    h.feed(Msg::EffectDone(EffectResult::Images {
        kind: ImageKind::PullJobs,
        result: Ok(Listing {
            pull_jobs: pull_jobs(),
            node_images: Err("nodeimages: forbidden".into()),
            ..Listing::default()
        }),
    }));
    h.press(&["enter"]);
    assert!(h.screen().contains("nodeimages: forbidden"));
}

/// The web CloneSet of the console fixtures rolls to nginx:1.27: web-4xk2p and web-8m3qz are
/// updated; web-b7w9n and web-h6j8t (node-1, still pulling) and web-c2d5r (node-2, pulled) not.
#[test]
fn rollout_marks_pods_whose_next_image_is_not_on_their_node() {
    let mut h = Harness::loaded(None, (120, 30));
    // demo/api, demo/db, demo/node-agent, demo/web: web is the 4th row.
    let effects = h.press(&["j", "j", "j", "enter"]);
    assert!(
        effects.contains(&Effect::List(kruise_tui::app::Listing::Images(
            ImageKind::NodeImages
        ))),
        "{effects:?}"
    );
    // Before the NodeImages are listed (or when they cannot be) the grid shows nothing more.
    let before = h.screen();
    assert!(
        !before.contains('⇣') && !before.contains("next image"),
        "{before}"
    );
    h.feed(Msg::EffectDone(EffectResult::Images {
        kind: ImageKind::NodeImages,
        result: Ok(listing(ImageKind::NodeImages)),
    }));
    let screen = h.screen();
    insta::assert_snapshot!("rollout_next_image_mark", screen);
    assert!(screen.contains("⇣ next image not on the node: 2 pulling"));
    assert_eq!(screen.matches('⇣').count(), 3, "{screen}");

    // A NodeImage list that fails shows nothing extra.
    h.feed(Msg::EffectDone(EffectResult::Images {
        kind: ImageKind::NodeImages,
        result: Err("nodeimages: forbidden".into()),
    }));
    let screen = h.screen();
    assert!(
        !screen.contains('⇣') && !screen.contains("forbidden"),
        "{screen}"
    );

    // Back on the list nothing asks for NodeImages any more.
    h.press(&["esc"]);
    let effects = h.feed(Msg::Tick(
        harness::now() + jiff::SignedDuration::from_secs(10),
    ));
    assert!(
        !effects.contains(&Effect::List(kruise_tui::app::Listing::Images(
            ImageKind::NodeImages
        ))),
        "{effects:?}"
    );
}

#[test]
fn a_filtered_image_list_keeps_every_node_for_the_detail() {
    let mut h = Harness::loaded(None, (140, 22));
    open(&mut h, "imagepulljobs", ImageKind::PullJobs);
    h.press(&["/"]);
    h.type_text("web");
    h.press(&["enter"]);
    let screen = h.screen();
    assert!(screen.contains("ImagePullJobs [1] /web"), "{screen}");
    assert!(!screen.contains("base-images-postgres"), "{screen}");
    // Only the jobs are filtered: the detail still reads every node's NodeImage.
    h.press(&["enter"]);
    let screen = h.screen();
    assert!(screen.contains("│   node-1 "), "{screen}");
    assert!(screen.contains("│   node-3 "), "{screen}");
    assert!(screen.contains("connection reset"), "{screen}");
}
