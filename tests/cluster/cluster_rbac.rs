//! RBAC on the embedded server, driven by kubectl as a user with limited rights would: a
//! ServiceAccount token from `kubectl create token`, Roles and ClusterRoles (one aggregated),
//! RoleBindings and ClusterRoleBindings, then `kubectl auth can-i` (and `--list`) and plain
//! requests answered as a real kube-apiserver answers them. kubectl must be on PATH.

use crate::common;
use crate::kubectl;

use std::time::Duration;

use kubectl::{Kubectl, Out};

const SA: &str = "system:serviceaccount:default:viewer";

/// The ServiceAccount `viewer`, a Role that reads pods and one configmap by name, a Role on
/// `pods/log`, their bindings, and a ClusterRole on nodes bound cluster-wide.
const POLICY: &str = r#"
apiVersion: v1
kind: ServiceAccount
metadata: {name: viewer}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader}
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [configmaps]
  resourceNames: [settings]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: read-pods}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects:
- {kind: ServiceAccount, name: viewer}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: node-lister}
rules:
- apiGroups: [""]
  resources: [nodes]
  verbs: [list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: viewer-lists-nodes}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: node-lister}
subjects:
- {kind: ServiceAccount, name: viewer, namespace: default}
"#;

/// kubectl as the ServiceAccount (the admin kubeconfig with the token overriding its user).
struct AsViewer<'a> {
    k: &'a Kubectl,
    token: String,
}

impl AsViewer<'_> {
    async fn run(&self, args: &[&str]) -> Out {
        let mut all = vec!["--token", &self.token];
        all.extend_from_slice(args);
        self.k.run(&all).await
    }

    /// `kubectl auth can-i ARGS`: "yes", or "no" with what follows it.
    async fn can_i(&self, args: &[&str]) -> String {
        let mut all = vec!["auth", "can-i"];
        all.extend_from_slice(args);
        let out = self.run(&all).await;
        let answer = out.stdout.trim().to_owned();
        match answer.as_str() {
            "yes" => assert_eq!(out.code, 0, "{args:?}"),
            _ => assert_eq!(out.code, 1, "{args:?}: {answer} {}", out.stderr),
        }
        answer
    }
}

async fn viewer(k: &Kubectl) -> AsViewer<'_> {
    k.apply(&[], POLICY).await;
    let token = k.ok(&["create", "token", "viewer"]).await.trim().to_owned();
    assert_eq!(token.split('.').count(), 3, "a JWT: {token}");
    AsViewer { k, token }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn can_i_answers_as_the_real_authorizer() {
    let c = common::start().await;
    let k = Kubectl::new(&c);
    let v = viewer(&k).await;
    let cases: &[(&[&str], &str)] = &[
        (&["list", "pods"], "yes"),
        (&["watch", "pods"], "yes"),
        (&["get", "pods/web-0"], "yes"),
        (&["delete", "pods"], "no"),
        (&["list", "pods", "-n", "kube-system"], "no"),
        // Subresources need their own rule.
        (&["get", "pods", "--subresource=log"], "no"),
        (&["create", "pods", "--subresource=eviction"], "no"),
        // resourceNames: the named object only, never a list.
        (&["get", "configmaps/settings"], "yes"),
        (&["get", "configmaps/other"], "no"),
        (&["list", "configmaps"], "no"),
        // Cluster-scoped, through the ClusterRoleBinding.
        (&["list", "nodes"], "yes"),
        (&["delete", "nodes"], "no"),
        (&["list", "clonesets.apps.kruise.io"], "no"),
        // Non-resource URLs from the default policy.
        (&["get", "/healthz"], "yes"),
        (&["get", "/apis/apps.kruise.io"], "yes"),
        (&["get", "/logs"], "no"),
        // The self reviews every authenticated user may create.
        (
            &["create", "selfsubjectaccessreviews.authorization.k8s.io"],
            "yes",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(v.can_i(args).await, *want, "kubectl auth can-i {args:?}");
    }
    // The admin token may do anything.
    let admin = k
        .run(&["auth", "can-i", "*", "*", "--all-namespaces"])
        .await;
    assert_eq!(admin.stdout.trim(), "yes");
    let admin = k.run(&["auth", "can-i", "delete", "nodes"]).await;
    assert_eq!(admin.stdout.trim(), "yes");

    // A subresource rule, granted later, is picked up at once.
    k.apply(
        &[],
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: log-reader}\n\
         rules:\n- apiGroups: [\"\"]\n  resources: [pods/log]\n  verbs: [get]\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: read-logs}\n\
         roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: log-reader}\n\
         subjects:\n- {kind: ServiceAccount, name: viewer, namespace: default}\n",
    )
    .await;
    assert_eq!(v.can_i(&["get", "pods", "--subresource=log"]).await, "yes");
    assert_eq!(
        v.can_i(&["get", "pods", "--subresource=status"]).await,
        "no"
    );

    // A binding to a role that does not exist: the denial says why.
    k.apply(
        &[],
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: dangling}\n\
         roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: missing}\n\
         subjects:\n- {kind: ServiceAccount, name: viewer}\n",
    )
    .await;
    assert_eq!(
        v.can_i(&["delete", "pods"]).await,
        "no - RBAC: role.rbac.authorization.k8s.io \"missing\" not found"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregated_cluster_roles_grant_what_they_select() {
    let c = common::start().await;
    let k = Kubectl::new(&c);
    let v = viewer(&k).await;
    k.apply(
        &[],
        r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: kruise-viewer}
aggregationRule:
  clusterRoleSelectors:
  - matchLabels: {example.com/aggregate-to-kruise-viewer: "true"}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kruise-viewer-clonesets
  labels: {example.com/aggregate-to-kruise-viewer: "true"}
rules:
- apiGroups: [apps.kruise.io]
  resources: [clonesets, clonesets/status]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: viewer-kruise}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kruise-viewer}
subjects:
- {kind: ServiceAccount, name: viewer}
"#,
    )
    .await;
    // The aggregation runs as a controller does (right after the write).
    let mut answer = String::new();
    for _ in 0..50 {
        answer = v.can_i(&["list", "clonesets.apps.kruise.io"]).await;
        if answer == "yes" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(answer, "yes");
    let rules = k
        .jsonpath(&["clusterrole", "kruise-viewer"], "{.rules[0].resources}")
        .await;
    assert_eq!(rules, r#"["clonesets","clonesets/status"]"#);
    assert_eq!(
        v.can_i(&["get", "clonesets", "--subresource=status"]).await,
        "yes"
    );
    assert_eq!(v.can_i(&["patch", "clonesets"]).await, "no");
    // Bound in `default` only.
    assert_eq!(
        v.can_i(&["list", "clonesets", "-n", "kube-system"]).await,
        "no"
    );

    // The default `view` role aggregates the built-in read rules.
    k.ok(&["create", "namespace", "team"]).await;
    k.apply(
        &[],
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\n\
         metadata: {name: viewer-view, namespace: team}\n\
         roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}\n\
         subjects:\n- {kind: ServiceAccount, name: viewer, namespace: default}\n",
    )
    .await;
    assert_eq!(
        v.can_i(&["list", "deployments.apps", "-n", "team"]).await,
        "yes"
    );
    assert_eq!(
        v.can_i(&["get", "pods", "--subresource=log", "-n", "team"])
            .await,
        "yes"
    );
    assert_eq!(v.can_i(&["get", "secrets", "-n", "team"]).await, "no");
    assert_eq!(
        v.can_i(&["create", "deployments.apps", "-n", "team"]).await,
        "no"
    );

    // Removing the label withdraws the rules.
    k.ok(&[
        "label",
        "clusterrole",
        "kruise-viewer-clonesets",
        "example.com/aggregate-to-kruise-viewer-",
    ])
    .await;
    for _ in 0..50 {
        answer = v.can_i(&["list", "clonesets.apps.kruise.io"]).await;
        if answer == "no" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(answer, "no");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_are_authorized_with_the_real_servers_messages() {
    let c = common::start().await;
    let k = Kubectl::new(&c);
    let v = viewer(&k).await;
    let pods = v.run(&["get", "pods"]).await;
    assert_eq!(pods.code, 0, "{}", pods.stderr);
    let cs = v.run(&["get", "clonesets"]).await;
    assert_eq!(cs.code, 1);
    assert_eq!(
        cs.stderr.trim(),
        format!(
            "Error from server (Forbidden): clonesets.apps.kruise.io is forbidden: User \"{SA}\" \
             cannot list resource \"clonesets\" in API group \"apps.kruise.io\" in the namespace \"default\""
        )
    );
    let one = v.run(&["delete", "pod", "web-0"]).await;
    assert!(
        one.stderr.contains(&format!(
            "pods \"web-0\" is forbidden: User \"{SA}\" cannot delete resource \"pods\" in API group \"\" in the namespace \"default\""
        )),
        "{}",
        one.stderr
    );
    let nodes = v.run(&["get", "node", "n1"]).await;
    assert!(
        nodes
            .stderr
            .contains("cannot get resource \"nodes\" in API group \"\" at the cluster scope"),
        "{}",
        nodes.stderr
    );
    // Who am I, and what may I do here.
    let me = v
        .run(&[
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username}",
        ])
        .await;
    assert_eq!(me.stdout, SA);
    let list = v.run(&["auth", "can-i", "--list"]).await;
    assert_eq!(list.code, 0, "{}", list.stderr);
    let line = |start: &str| {
        list.stdout
            .lines()
            .find(|l| l.starts_with(start))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
    };
    assert_eq!(
        line("pods ").as_deref(),
        Some("pods [] [] [get list watch]")
    );
    assert_eq!(
        line("configmaps ").as_deref(),
        Some("configmaps [] [settings] [get]")
    );
    assert_eq!(
        line("selfsubjectaccessreviews.authorization.k8s.io").as_deref(),
        Some("selfsubjectaccessreviews.authorization.k8s.io [] [] [create]")
    );
    assert!(list.stdout.contains("[/healthz]"), "{}", list.stdout);
    // ClusterRoleBindings apply in every namespace.
    assert_eq!(line("nodes ").as_deref(), Some("nodes [] [] [list]"));
    // Token lifetimes under ten minutes are refused, as upstream.
    let short = k
        .run(&["create", "token", "viewer", "--duration", "1m"])
        .await;
    assert_ne!(short.code, 0);
    assert!(
        short.stderr.contains("less than 10 minutes"),
        "{}",
        short.stderr
    );

    // Tokens: a bad one, and one whose ServiceAccount is gone, are 401.
    let bad = k.run(&["--token", "nope", "get", "pods"]).await;
    assert!(bad.stderr.contains("Unauthorized"), "{}", bad.stderr);
    k.ok(&["delete", "serviceaccount", "viewer"]).await;
    let gone = v.run(&["get", "pods"]).await;
    assert!(gone.stderr.contains("Unauthorized"), "{}", gone.stderr);
}

/// The action layer asks with kube-rs (a JSON body) before every mutating action: the admin is
/// allowed everything, a ServiceAccount what its bindings give, each with the real reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn access_reviews_over_json_answer_for_the_admin_and_a_service_account() {
    use k8s_openapi::api::authorization::v1::{
        ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
    };
    use kube::{Api, api::PostParams};

    let c = common::start().await;
    let k = Kubectl::new(&c);
    let v = viewer(&k).await;
    let review = |verb: &str, resource: &str, group: &str| SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                namespace: Some("default".into()),
                verb: Some(verb.into()),
                group: Some(group.into()),
                resource: Some(resource.into()),
                ..ResourceAttributes::default()
            }),
            ..SelfSubjectAccessReviewSpec::default()
        },
        ..SelfSubjectAccessReview::default()
    };
    let ask = |client: kube::Client, r: SelfSubjectAccessReview| async move {
        let api: Api<SelfSubjectAccessReview> = Api::all(client);
        let answer = api
            .create(&PostParams::default(), &r)
            .await
            .expect("answered");
        answer.status.expect("a status")
    };
    let admin = c.client().await.unwrap();
    let status = ask(
        admin.clone(),
        review("patch", "clonesets", "apps.kruise.io"),
    )
    .await;
    assert!(status.allowed);
    let status = ask(admin, review("delete", "nodes", "")).await;
    assert!(status.allowed);

    let mut config = kube::Config::new(c.url().parse().unwrap());
    config.auth_info.token = Some(v.token.clone().into());
    let sa = kube::Client::try_from(config).unwrap();
    let status = ask(sa.clone(), review("list", "pods", "")).await;
    assert!(status.allowed);
    assert_eq!(
        status.reason.as_deref(),
        Some(
            "RBAC: allowed by RoleBinding \"read-pods/default\" of Role \"pod-reader\" to \
             ServiceAccount \"viewer/default\""
        )
    );
    let status = ask(sa, review("patch", "clonesets", "apps.kruise.io")).await;
    assert!(!status.allowed);
    assert_eq!(status.reason, None);
}
