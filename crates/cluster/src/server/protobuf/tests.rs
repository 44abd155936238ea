use prost::Message;
use serde_json::json;

use super::*;

/// A `k8s\0` body for `text` (protobuf text format) of `kind` in `api_version`.
fn body(api_version: &str, kind: &str, text: &str) -> Vec<u8> {
    let pool = pool().unwrap();
    let desc = lookup(pool, api_version, kind).unwrap();
    let msg = DynamicMessage::parse_text_format(desc, text).unwrap();
    let mut unknown =
        DynamicMessage::new(message(pool, "apimachinery.pkg.runtime.Unknown").unwrap());
    let mut tm = DynamicMessage::new(message(pool, "apimachinery.pkg.runtime.TypeMeta").unwrap());
    tm.set_field_by_name("apiVersion", PValue::String(api_version.into()));
    tm.set_field_by_name("kind", PValue::String(kind.into()));
    unknown.set_field_by_name("typeMeta", PValue::Message(tm));
    unknown.set_field_by_name("raw", PValue::Bytes(msg.encode_to_vec().into()));
    [MAGIC, &unknown.encode_to_vec()].concat()
}

fn ld(field: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = vec![(field << 3) | 2, payload.len() as u8];
    v.extend_from_slice(payload);
    v
}

#[test]
fn decodes_a_configmap_like_kubectl_sends() {
    let entry = [ld(1, b"a"), ld(2, b"b")].concat();
    let meta = [
        ld(1, b"cm"),
        ld(11, &[ld(1, b"app"), ld(2, b"web")].concat()),
    ]
    .concat();
    let obj = [ld(1, &meta), ld(2, &entry)].concat();
    let type_meta = [ld(1, b"v1"), ld(2, b"ConfigMap")].concat();
    let mut body = MAGIC.to_vec();
    body.extend([ld(1, &type_meta), ld(2, &obj)].concat());
    assert_eq!(
        decode(&body).unwrap(),
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cm", "labels": {"app": "web"}}, "data": {"a": "b"}})
    );
    assert!(matches!(decode(b"k8s\0\xff"), Err(Error::Malformed(_))));
    assert!(matches!(decode(b"{}"), Err(Error::Malformed(_))));
}

/// The bytes `kubectl auth can-i list pods -n demo` sends (captured from kubectl v1.32).
const CAN_I: &[u8] =
    b"k8s\x00\x0a\x32\x0a\x17authorization.k8s.io/v1\x12\x17SelfSubjectAccessReview\
\x12\x3a\x0a\x10\x0a\x00\x12\x00\x1a\x00\x22\x00\x2a\x00\x32\x00\x38\x00\x42\x00\
\x12\x1c\x0a\x1a\x0a\x04demo\x12\x04list\x1a\x00\x22\x00\x2a\x04pods\x32\x00\x3a\x00\
\x1a\x08\x08\x00\x12\x00\x1a\x00\x20\x00\x1a\x00\x22\x00";

#[test]
fn decodes_what_kubectl_auth_can_i_sends() {
    let v = decode(CAN_I).unwrap();
    assert_eq!(v["kind"], "SelfSubjectAccessReview");
    let attrs = &v["spec"]["resourceAttributes"];
    assert_eq!(attrs["namespace"], "demo");
    assert_eq!(attrs["verb"], "list");
    assert_eq!(attrs["resource"], "pods");
    assert_eq!(attrs["group"], "");
}

#[test]
fn decodes_a_token_request() {
    let b = body(
        "authentication.k8s.io/v1",
        "TokenRequest",
        r#"metadata { name: "viewer" } spec { audiences: "api" expirationSeconds: 3600 }"#,
    );
    let v = decode(&b).unwrap();
    assert_eq!(v["spec"]["audiences"], json!(["api"]));
    assert_eq!(v["spec"]["expirationSeconds"], 3600);
}

/// What `kubectl create deployment web --image=nginx --replicas=0` sends, field for field: Go
/// writes its non-pointer fields even when zero.
const DEPLOYMENT: &str = r#"
metadata { name: "web" namespace: "" generation: 0 creationTimestamp {}
  labels { key: "app" value: "web" } }
spec {
  replicas: 0
  selector { matchLabels { key: "app" value: "web" } }
  template {
    metadata { creationTimestamp {} labels { key: "app" value: "web" } }
    spec {
      containers { name: "nginx" image: "nginx" workingDir: ""
        terminationMessagePath: "" imagePullPolicy: "" stdin: false tty: false
        ports { containerPort: 80 protocol: "" hostPort: 0 }
        readinessProbe { handler { tcpSocket { port { type: 0 intVal: 80 } } } timeoutSeconds: 0 }
        resources { limits { key: "cpu" value { string: "500m" } } } }
      volumes { name: "data" volumeSource { emptyDir { sizeLimit { string: "1Gi" } } } }
      restartPolicy: "" dnsPolicy: "" hostNetwork: false schedulerName: ""
      enableServiceLinks: false
    }
  }
  strategy { rollingUpdate { maxUnavailable { type: 1 strVal: "25%" } } }
  minReadySeconds: 0 paused: false progressDeadlineSeconds: 600
}
status {}
"#;

#[test]
fn a_deployment_is_the_json_go_would_marshal() {
    let v = decode(&body("apps/v1", "Deployment", DEPLOYMENT)).unwrap();
    assert_eq!(
        v,
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "creationTimestamp": null, "labels": {"app": "web"}},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
                    "spec": {
                        "containers": [{"name": "nginx", "image": "nginx",
                            "resources": {"limits": {"cpu": "500m"}},
                            "ports": [{"containerPort": 80}],
                            "readinessProbe": {"tcpSocket": {"port": 80}}}],
                        "volumes": [{"name": "data", "emptyDir": {"sizeLimit": "1Gi"}}],
                        "enableServiceLinks": false
                    }
                },
                "strategy": {"rollingUpdate": {"maxUnavailable": "25%"}},
                "progressDeadlineSeconds": 600
            },
            "status": {}
        })
    );
}

#[test]
fn secrets_times_durations_and_raw_json() {
    let v = decode(&body(
        "v1",
        "Secret",
        r#"metadata { name: "pw" creationTimestamp { seconds: 1700000000 } }
           data { key: "k" value: "\x00\xff" } type: """#,
    ))
    .unwrap();
    assert_eq!(v["data"], json!({"k": "AP8="}));
    assert_eq!(v["metadata"]["creationTimestamp"], "2023-11-14T22:13:20Z");
    assert!(v.get("type").is_none());
    let v = decode(&body(
        "coordination.k8s.io/v1",
        "Lease",
        r#"metadata { name: "l" } spec { renewTime { seconds: 1700000000 nanos: 123456789 } }"#,
    ))
    .unwrap();
    assert_eq!(v["spec"]["renewTime"], "2023-11-14T22:13:20.123456Z");
    let v = decode(&body(
        "coordination.k8s.io/v1",
        "Lease",
        r#"metadata { name: "l" } spec { acquireTime { seconds: 1700000000 } renewTime {} }"#,
    ))
    .unwrap();
    assert_eq!(v["spec"]["acquireTime"], "2023-11-14T22:13:20.000000Z");
    assert_eq!(v["spec"]["renewTime"], Value::Null);
    let v = decode(&body(
        "apps/v1",
        "ControllerRevision",
        r#"metadata { name: "r" } data { raw: "{\"spec\":{\"a\":1}}" } revision: 2"#,
    ))
    .unwrap();
    assert_eq!(v["data"], json!({"spec": {"a": 1}}));
    assert_eq!(v["revision"], 2);
    assert_eq!(json::go_duration(0), "0s");
    assert_eq!(json::go_duration(1_500_000_000), "1.5s");
    assert_eq!(json::go_duration(3_600_000_000_000), "1h0m0s");
    assert_eq!(json::go_duration(62_000_000_000), "1m2s");
    assert_eq!(json::go_duration(150_000_000), "150ms");
    assert_eq!(json::go_duration(1_500), "1.5µs");
    assert_eq!(json::go_duration(-42), "-42ns");
}

#[test]
fn crd_schemas_take_their_json_spellings() {
    let v = decode(&body(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        r#"metadata { name: "ws.example.com" }
           spec { group: "example.com" scope: "Namespaced" names { plural: "ws" kind: "W" }
             versions { name: "v1" served: true storage: true schema { openAPIV3Schema {
               type: "object" xKubernetesPreserveUnknownFields: true
               properties { key: "on" value { type: "boolean" default { raw: "false" } } }
               properties { key: "l" value { type: "array" items { schema { type: "string" } }
                 xKubernetesListType: "set" } }
               additionalProperties { allows: true } } } } }"#,
    ))
    .unwrap();
    let s = &v["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    assert_eq!(s["x-kubernetes-preserve-unknown-fields"], true);
    assert_eq!(s["properties"]["on"]["default"], false);
    assert_eq!(s["properties"]["l"]["items"], json!({"type": "string"}));
    assert_eq!(s["properties"]["l"]["x-kubernetes-list-type"], "set");
    assert_eq!(s["additionalProperties"], true);
}

#[test]
fn unknown_kinds_are_unsupported_not_malformed() {
    let mut b = MAGIC.to_vec();
    let tm = [ld(1, b"apps.kruise.io/v1alpha1"), ld(2, b"CloneSet")].concat();
    b.extend([ld(1, &tm), ld(2, b"")].concat());
    assert_eq!(
        decode(&b),
        Err(Error::Unsupported {
            api_version: "apps.kruise.io/v1alpha1".into(),
            kind: "CloneSet".into()
        })
    );
    let msg = decode(&b).unwrap_err().to_string();
    assert!(msg.contains("kubectl create -f FILE"), "{msg}");
}

/// Every message of every built-in kind maps onto its k8s-openapi schema: each field is a
/// property (under its JSON spelling) or an embedded struct whose fields are.
#[test]
fn every_built_in_kind_maps_onto_its_schema() {
    let c = catalog();
    let pool = pool().unwrap();
    let mut problems = Vec::new();
    for k in &c.kinds {
        let av = if k.group.is_empty() {
            k.version.to_string()
        } else {
            format!("{}/{}", k.group, k.version)
        };
        match lookup(pool, &av, k.kind) {
            Some(desc) => {
                assert_eq!(definition_name(desc.full_name()), &*k.definition);
                problems.extend(json::unmapped_fields(c, &desc));
            }
            None => problems.push(format!("no message for {av} {}", k.kind)),
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// Which zero ints and bools are kept, read from upstream's own field documentation.
#[test]
fn zeros_are_kept_where_go_fields_are_pointers() {
    let c = catalog();
    let choice = |def: &str, prop: &str| {
        let d = c.definition(&format!("io.k8s.api.{def}")).unwrap();
        json::zero_is_a_choice(d["properties"][prop]["description"].as_str().unwrap())
    };
    for (def, prop) in [
        ("apps.v1.DeploymentSpec", "replicas"),
        ("batch.v1.JobSpec", "backoffLimit"),
        ("batch.v1.JobSpec", "ttlSecondsAfterFinished"),
        ("core.v1.PodSpec", "terminationGracePeriodSeconds"),
        ("core.v1.PodSpec", "enableServiceLinks"),
        ("core.v1.SecurityContext", "runAsUser"),
        ("core.v1.Toleration", "tolerationSeconds"),
    ] {
        assert!(choice(def, prop), "{def}.{prop} keeps a zero");
    }
    for (def, prop) in [
        ("core.v1.Container", "stdin"),
        ("core.v1.PodSpec", "hostNetwork"),
        ("core.v1.ServicePort", "nodePort"),
        ("core.v1.Probe", "timeoutSeconds"),
        ("core.v1.VolumeMount", "readOnly"),
        ("apps.v1.DeploymentSpec", "minReadySeconds"),
        ("apps.v1.DeploymentSpec", "paused"),
    ] {
        assert!(!choice(def, prop), "{def}.{prop} drops a zero");
    }
}

/// `kubectl drain`'s Eviction: a kind the catalog does not store, written with every field the
/// body sets (zeros included: a grace period of 0 means "now").
#[test]
fn an_eviction_keeps_its_delete_options() {
    let v = decode(&body(
        "policy/v1",
        "Eviction",
        r#"metadata { name: "web-0" namespace: "demo" }
           deleteOptions { gracePeriodSeconds: 0 dryRun: "All" }"#,
    ))
    .unwrap();
    assert_eq!(v["metadata"]["name"], "web-0");
    assert_eq!(
        v["deleteOptions"],
        json!({"gracePeriodSeconds": 0, "dryRun": ["All"]})
    );
}
