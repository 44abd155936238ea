//! A scripted key session of the image pre-download views against the test bed (the embedded
//! cluster, or an existing one under KRUISE_TUI_TEST_KUBECONFIG):
//! `:imagepulljobs` is opened on an empty list, an ImagePullJob created with kubectl appears in
//! it without a key press, Enter shows the node whose NodeImage carries its image (waiting),
//! and the pull kruise-daemon reports through the status subresource shows up in the detail
//! and in `:nodeimages` on their own. Likewise an ImageListPullJob in `:imagelistpulljobs`,
//! whose detail shows each image waiting for its ImagePullJob until one owned by it exists.

use crate::live;
use crate::testbed;

use kruise_tui::app::{
    App,
    route::{Fetch, Route},
};
use live::Live;

const JOB: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata: {name: warm-nginx}
spec:
  image: "nginx:1.26"
  completionPolicy: {type: Always}
"#;

fn node_image(ns: &str, uid: &str) -> String {
    format!(
        r#"
apiVersion: apps.kruise.io/v1alpha1
kind: NodeImage
metadata: {{name: node-a}}
spec:
  images:
    nginx:
      tags:
      - tag: "1.26"
        version: 0
        ownerReferences:
        - {{apiVersion: apps.kruise.io/v1alpha1, kind: ImagePullJob, namespace: {ns}, name: warm-nginx, uid: "{uid}"}}
"#
    )
}

fn loaded(app: &App) -> bool {
    matches!(app.current(), Route::Images(v) if matches!(v.listing, Fetch::Loaded(_)))
}

fn shows(app: &App, name: &str) -> bool {
    matches!(app.current(), Route::Images(v) if v.keys().iter().any(|(_, n)| n == name))
}

/// Whether the job's detail is on top and node-a's pull of its image (the job in `ns`) is in
/// `phase`.
fn node_a(app: &App, ns: &str, phase: &str) -> bool {
    use kruise_tui::app::images::pulls::{JobRef, job_pulls};
    let Route::Images(v) = app.current() else {
        return false;
    };
    let (Some(job), Fetch::Loaded(l)) = (v.pull_job(), &v.listing) else {
        return false;
    };
    let job_ref = JobRef {
        uid: job.metadata.uid.as_deref().unwrap_or_default(),
        namespace: ns,
        name: "warm-nginx",
    };
    v.detail.is_some()
        && job_pulls(job_ref, &job.spec.image, l.node_images())
            .iter()
            .any(|p| p.node == "node-a" && p.phase == phase)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_pull_job_created_with_kubectl_appears_with_its_nodes() {
    if testbed::skip_on_existing_cluster(
        "writes a cluster-scoped NodeImage and counts every NodeImage in the cluster",
    ) {
        return;
    }
    let mut live = Live::start(false).await;
    let kubectl = live.kubectl();
    live.press(&[":"]).await;
    live.type_text("imagepulljobs").await;
    live.press(&["enter"]).await;
    live.until("the empty list", 30, loaded).await;
    assert!(live.screen().contains("No ImagePullJob here"));

    kubectl.apply(&[], JOB).await;
    // No key is pressed: the periodic list brings it in.
    live.until("warm-nginx listed", 30, |app| shows(app, "warm-nginx"))
        .await;
    assert!(live.screen().contains("nginx:1.26"));

    // The job's image written into node-a's NodeImage, as the job controller would.
    let uid = kubectl
        .jsonpath(&["imagepulljobs", "warm-nginx"], "{.metadata.uid}")
        .await;
    let ns = live.ns().to_owned();
    kubectl.apply(&[], &node_image(&ns, uid.trim())).await;
    live.press(&["enter"]).await;
    live.until("node-a in the detail", 30, |app| {
        node_a(app, &ns, "Waiting")
    })
    .await;
    let screen = live.screen();
    assert!(
        screen.contains(&format!("ImagePullJob {ns}/warm-nginx")),
        "{screen}"
    );
    assert!(screen.contains("Pull state per node (1)"), "{screen}");
    assert!(screen.contains("Waiting"), "{screen}");

    // kruise-daemon reports the pull through the status subresource.
    let status = r#"{"status":{"desired":1,"pulling":1,"imageStatuses":{"nginx":{"tags":[{"tag":"1.26","phase":"Pulling","progress":40,"version":0}]}}}}"#;
    kubectl
        .ok(&[
            "patch",
            "nodeimage",
            "node-a",
            "--subresource=status",
            "--type=merge",
            "-p",
            status,
        ])
        .await;
    live.until("the pull shown", 30, |app| node_a(app, &ns, "Pulling"))
        .await;
    let screen = live.screen();
    assert!(
        screen.contains("Pulling") && screen.contains("40%"),
        "{screen}"
    );

    live.press(&["esc", "esc"]).await;
    live.press(&[":"]).await;
    live.type_text("nodeimages").await;
    live.press(&["enter"]).await;
    live.until("node-a listed", 30, |app| shows(app, "node-a"))
        .await;
    assert!(live.screen().contains("NodeImages [1]"));
    live.shutdown().await;
}

const LIST_JOB: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: ImageListPullJob
metadata: {name: warm-all}
spec:
  images: ["nginx:1.26", "redis:7.2"]
  completionPolicy: {type: Always}
"#;

/// The ImagePullJob upstream's ImageListPullJob controller creates for one of its images.
fn child_job(uid: &str) -> String {
    format!(
        r#"
apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: warm-all-redis
  ownerReferences:
  - {{apiVersion: apps.kruise.io/v1alpha1, kind: ImageListPullJob, name: warm-all, uid: "{uid}", controller: true}}
spec:
  image: "redis:7.2"
  completionPolicy: {{type: Always}}
"#
    )
}

fn list_detail(app: &App) -> bool {
    matches!(app.current(), Route::Images(v) if v.detail.is_some())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_list_pull_job_created_with_kubectl_appears_with_its_images() {
    let mut live = Live::start(false).await;
    let kubectl = live.kubectl();
    live.press(&[":"]).await;
    live.type_text("imagelistpulljobs").await;
    live.press(&["enter"]).await;
    live.until("the empty list", 30, loaded).await;
    assert!(live.screen().contains("No ImageListPullJob here"));

    kubectl.apply(&[], LIST_JOB).await;
    // No key is pressed: the periodic list brings it in.
    live.until("warm-all listed", 30, |app| shows(app, "warm-all"))
        .await;
    live.press(&["enter"]).await;
    live.until("the detail", 30, list_detail).await;
    let screen = live.screen();
    assert!(
        screen.contains(&format!("ImageListPullJob {}/warm-all", live.ns())),
        "{screen}"
    );
    assert_eq!(
        screen.matches("no ImagePullJob for it yet").count(),
        2,
        "{screen}"
    );

    // The ImagePullJob for redis, as the list job's controller would create it, shows under
    // its image while nginx still waits for one.
    let uid = kubectl
        .jsonpath(&["imagelistpulljobs", "warm-all"], "{.metadata.uid}")
        .await;
    kubectl.apply(&[], &child_job(uid.trim())).await;
    live.until("redis's job in the detail", 30, |app| {
        list_detail(app)
            && matches!(app.current(), Route::Images(v) if matches!(&v.listing,
                Fetch::Loaded(l) if l.pull_jobs.iter().any(|j| j.metadata.name.as_deref() == Some("warm-all-redis"))))
    })
    .await;
    let screen = live.screen();
    assert!(
        screen.contains("redis:7.2  ImagePullJob warm-all-redis: 0/0 nodes succeeded, 0 failed"),
        "{screen}"
    );
    assert_eq!(
        screen.matches("no ImagePullJob for it yet").count(),
        1,
        "{screen}"
    );
    live.shutdown().await;
}
