//! Every upstream CRD in `crds/` (and so in ../shared/kruise-crds) is served by the embedded
//! server with schema validation; the kinds added for the seeds (ImageListPullJob, NodeImage,
//! ResourceDistribution) are created, read back and rejected when malformed, through kubectl.

use crate::common;
use crate::kubectl;

use kubectl::Kubectl;
use serde_json::Value;

const LIST_JOB: &str = "apiVersion: apps.kruise.io/v1alpha1\nkind: ImageListPullJob\n\
metadata:\n  name: warm\nspec:\n  images:\n  - nginx:1.26\n  - redis:7\n  parallelism: 2\n  \
completionPolicy:\n    type: Always\n    activeDeadlineSeconds: 600\n";

const NODE_IMAGE: &str = "apiVersion: apps.kruise.io/v1alpha1\nkind: NodeImage\n\
metadata:\n  name: node-a\nspec:\n  images:\n    nginx:\n      tags:\n      - tag: \"1.26\"\n        \
version: 1\n        pullPolicy:\n          backoffLimit: 3\n";

const DISTRIBUTION: &str = "apiVersion: apps.kruise.io/v1alpha1\nkind: ResourceDistribution\n\
metadata:\n  name: registry-creds\nspec:\n  resource:\n    apiVersion: v1\n    kind: Secret\n    \
metadata:\n      name: registry-creds\n    type: Opaque\n    data:\n      token: aGVsbG8=\n  \
targets:\n    includedNamespaces:\n      list:\n      - name: default\n      - name: team-a\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_upstream_crd_is_served() {
    let c = common::start().await;
    let k = Kubectl::new(&c);
    // The embedded cluster is Kruise v1.9.0 unless told otherwise.
    let dir = format!("{}/crds/v1.9.0", env!("CARGO_MANIFEST_DIR"));
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        let crd: Value = serde_saphyr::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let name = crd["metadata"]["name"].as_str().unwrap();
        // The CRD object is installed, and its resource answers a list.
        k.ok(&["get", "crd", name]).await;
        let out = k.ok(&["get", name, "-A", "-o", "name"]).await;
        assert!(out.trim().is_empty(), "{name}: {out}");
        seen += 1;
    }
    assert_eq!(seen, 18);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_kinds_round_trip_and_are_validated() {
    let c = common::start().await;
    let k = Kubectl::new(&c);

    let out = k.apply(&[], LIST_JOB).await;
    assert_eq!(out.trim(), "imagelistpulljob.apps.kruise.io/warm created");
    k.assert_jsonpath(
        &["imagelistpulljobs", "warm"],
        "{.spec.images[1]}",
        "redis:7",
    )
    .await;
    k.assert_jsonpath(&["imagelistpulljobs", "warm"], "{.spec.parallelism}", "2")
        .await;

    let out = k.apply(&[], NODE_IMAGE).await;
    assert_eq!(out.trim(), "nodeimage.apps.kruise.io/node-a created");
    k.assert_jsonpath(
        &["nodeimages", "node-a"],
        "{.spec.images.nginx.tags[0].pullPolicy.backoffLimit}",
        "3",
    )
    .await;

    let out = k.apply(&[], DISTRIBUTION).await;
    assert_eq!(
        out.trim(),
        "resourcedistribution.apps.kruise.io/registry-creds created"
    );
    // The copied resource is kept whole (preserve-unknown-fields), by the short name too.
    k.assert_jsonpath(
        &["distributor", "registry-creds"],
        "{.spec.resource.data.token}",
        "aGVsbG8=",
    )
    .await;
    k.assert_jsonpath(
        &["distributor", "registry-creds"],
        "{.spec.targets.includedNamespaces.list[1].name}",
        "team-a",
    )
    .await;

    // Printer columns come from the CRDs.
    let out = k.ok(&["get", "nodeimages"]).await;
    assert!(out.contains("DESIRED") && out.contains("PULLING"), "{out}");
    let out = k.ok(&["get", "resourcedistributions"]).await;
    assert!(out.contains("TOTAL") && out.contains("SUCCEED"), "{out}");

    // Schema validation: wrong types and unknown fields are refused.
    let bad = LIST_JOB.replace("  parallelism: 2\n", "  images: nginx\n");
    let bad = bad.replacen("  images:\n  - nginx:1.26\n  - redis:7\n", "", 1);
    let o = k.run_stdin(&["create", "-f", "-"], &bad).await;
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.stderr.contains("spec.images"), "{}", o.stderr);

    let bad = NODE_IMAGE.replace("version: 1", "version: one");
    let o = k.run_stdin(&["create", "-f", "-"], &bad).await;
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.stderr.contains("version"), "{}", o.stderr);

    let bad = DISTRIBUTION
        .replace("registry-creds\nspec", "other\nspec")
        .replace("  targets:\n", "  targets:\n    everywhere: true\n");
    let o = k.run_stdin(&["create", "-f", "-"], &bad).await;
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(
        o.stderr
            .contains("unknown field \"spec.targets.everywhere\""),
        "{}",
        o.stderr
    );
}
