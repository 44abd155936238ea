//! The environment a container's processes see, as a kubelet builds it: the image's variables,
//! `HOSTNAME`, the container's `env` and `envFrom` (values, field references, ConfigMap and
//! Secret keys read from the store), and the `kubernetes` Service's variables.

use std::collections::BTreeMap;

use base64::Engine as _;
use k8s_openapi::api::core::v1::{Container, EnvVar, Pod};

use crate::{
    server::store::Store,
    sim::logs::{Style, image_release},
};

/// The cluster IP of the `kubernetes` Service, as the demo's Service CIDR would give it.
const KUBERNETES_SERVICE_IP: &str = "10.96.0.1";

fn field(pod: &Pod, path: &str) -> String {
    let m = &pod.metadata;
    let spec = pod.spec.as_ref();
    let status = pod.status.as_ref();
    let from_map = |map: Option<&BTreeMap<String, String>>, key: &str| {
        map.and_then(|m| m.get(key)).cloned().unwrap_or_default()
    };
    let key_of = |prefix: &str| {
        path.strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix("']"))
            .map(str::to_owned)
    };
    match path {
        "metadata.name" => m.name.clone().unwrap_or_default(),
        "metadata.namespace" => m.namespace.clone().unwrap_or_default(),
        "metadata.uid" => m.uid.clone().unwrap_or_default(),
        "spec.nodeName" => spec.and_then(|s| s.node_name.clone()).unwrap_or_default(),
        "spec.serviceAccountName" => spec
            .and_then(|s| s.service_account_name.clone())
            .unwrap_or_else(|| "default".to_owned()),
        "status.podIP" => status.and_then(|s| s.pod_ip.clone()).unwrap_or_default(),
        "status.hostIP" => status.and_then(|s| s.host_ip.clone()).unwrap_or_default(),
        _ => {
            if let Some(k) = key_of("metadata.labels['") {
                from_map(m.labels.as_ref(), &k)
            } else if let Some(k) = key_of("metadata.annotations['") {
                from_map(m.annotations.as_ref(), &k)
            } else {
                String::new()
            }
        }
    }
}

/// The data of a ConfigMap or Secret (Secret values decoded), empty when it does not exist.
fn data(store: &Store, kind: &str, ns: &str, name: &str) -> Vec<(String, String)> {
    let Some(obj) = store.get_value("v1", kind, ns, name) else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = Vec::new();
    if let Some(m) = obj["data"].as_object() {
        for (k, v) in m {
            let Some(s) = v.as_str() else { continue };
            let value = if kind == "Secret" {
                base64::engine::general_purpose::STANDARD
                    .decode(s)
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default()
            } else {
                s.to_owned()
            };
            out.push((k.clone(), value));
        }
    }
    if let Some(m) = obj["stringData"].as_object() {
        for (k, v) in m {
            out.push((k.clone(), v.as_str().unwrap_or_default().to_owned()));
        }
    }
    out
}

fn value_of(store: &Store, pod: &Pod, ns: &str, var: &EnvVar) -> String {
    if let Some(v) = &var.value {
        return v.clone();
    }
    let Some(from) = &var.value_from else {
        return String::new();
    };
    let key_in = |kind: &str, name: &str, key: &str| {
        data(store, kind, ns, name)
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
            .unwrap_or_default()
    };
    if let Some(f) = &from.field_ref {
        field(pod, &f.field_path)
    } else if let Some(c) = &from.config_map_key_ref {
        key_in("ConfigMap", &c.name, &c.key)
    } else if let Some(s) = &from.secret_key_ref {
        key_in("Secret", &s.name, &s.key)
    } else {
        String::new()
    }
}

/// `$(VAR)` references to variables defined before, as the kubelet expands them.
fn expand(value: &str, env: &[(String, String)]) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(i) = rest.find("$(") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        match after.find(')') {
            Some(j) => {
                let name = &after[..j];
                match env.iter().rev().find(|(k, _)| k == name) {
                    Some((_, v)) => out.push_str(v),
                    None => out.push_str(&rest[i..i + 3 + j]),
                }
                rest = &after[j + 1..];
            }
            None => {
                out.push_str(&rest[i..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

fn set(env: &mut Vec<(String, String)>, k: &str, v: String) {
    match env.iter_mut().find(|(name, _)| name == k) {
        Some(e) => e.1 = v,
        None => env.push((k.to_owned(), v)),
    }
}

/// The environment of `container` in `pod`, in the order `env` prints it.
pub(super) fn environment(
    store: &Store,
    pod: &Pod,
    container: &Container,
    tty: bool,
) -> Vec<(String, String)> {
    let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
    let image = container.image.as_deref().unwrap_or_default();
    let hostname = super::hostname(pod);
    let mut env: Vec<(String, String)> = vec![
        (
            "PATH".into(),
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into(),
        ),
        ("HOSTNAME".into(), hostname),
    ];
    if tty {
        env.push(("TERM".into(), "xterm".into()));
    }
    for from in container.env_from.iter().flatten() {
        let prefix = from.prefix.clone().unwrap_or_default();
        let pairs = if let Some(c) = &from.config_map_ref {
            data(store, "ConfigMap", ns, &c.name)
        } else if let Some(s) = &from.secret_ref {
            data(store, "Secret", ns, &s.name)
        } else {
            Vec::new()
        };
        for (k, v) in pairs {
            set(&mut env, &format!("{prefix}{k}"), v);
        }
    }
    for var in container.env.iter().flatten() {
        let v = expand(&value_of(store, pod, ns, var), &env);
        set(&mut env, &var.name, v);
    }
    let service_links = pod
        .spec
        .as_ref()
        .and_then(|s| s.enable_service_links)
        .unwrap_or(true);
    let api = KUBERNETES_SERVICE_IP;
    let mut kube = vec![
        ("KUBERNETES_SERVICE_HOST", api.to_owned()),
        ("KUBERNETES_SERVICE_PORT", "443".to_owned()),
        ("KUBERNETES_SERVICE_PORT_HTTPS", "443".to_owned()),
    ];
    if service_links {
        kube.extend([
            ("KUBERNETES_PORT", format!("tcp://{api}:443")),
            ("KUBERNETES_PORT_443_TCP", format!("tcp://{api}:443")),
            ("KUBERNETES_PORT_443_TCP_PROTO", "tcp".to_owned()),
            ("KUBERNETES_PORT_443_TCP_PORT", "443".to_owned()),
            ("KUBERNETES_PORT_443_TCP_ADDR", api.to_owned()),
        ]);
    }
    for (k, v) in kube {
        if !env.iter().any(|(name, _)| name == k) {
            env.push((k.to_owned(), v));
        }
    }
    let rel = image_release(image);
    let image_env: Vec<(&str, String)> = match Style::of(image) {
        Style::Nginx => vec![("NGINX_VERSION", rel)],
        Style::Postgres => vec![
            ("PG_MAJOR", rel.split('.').next().unwrap_or(&rel).to_owned()),
            ("PG_VERSION", rel.clone()),
            ("PGDATA", "/var/lib/postgresql/data".to_owned()),
        ],
        _ => Vec::new(),
    };
    for (k, v) in image_env {
        if !env.iter().any(|(name, _)| name == k) {
            env.push((k.to_owned(), v));
        }
    }
    if !env.iter().any(|(k, _)| k == "HOME") {
        env.push(("HOME".into(), "/root".into()));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kubelet_style_expansion_of_earlier_variables() {
        let env = vec![("A".to_owned(), "x".to_owned())];
        assert_eq!(expand("$(A)-$(B)-$(A", &env), "x-$(B)-$(A");
        assert_eq!(expand("plain", &env), "plain");
    }

    #[test]
    fn field_references_read_the_pod() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "web-x", "namespace": "demo", "labels": {"app": "web"}},
            "spec": {"nodeName": "sim-node-1", "containers": []},
            "status": {"podIP": "10.1.2.3"},
        }))
        .unwrap();
        assert_eq!(field(&pod, "metadata.name"), "web-x");
        assert_eq!(field(&pod, "metadata.labels['app']"), "web");
        assert_eq!(field(&pod, "spec.nodeName"), "sim-node-1");
        assert_eq!(field(&pod, "status.podIP"), "10.1.2.3");
        assert_eq!(field(&pod, "spec.serviceAccountName"), "default");
    }
}
