//! Service defaults and ClusterIP allocation, as the real server applies them: defaults when the
//! body is decoded (type ClusterIP, sessionAffinity None, port protocol TCP, targetPort = port),
//! a cluster IP from 10.96.0.0/16 when the Service is created without one; a Secret's type.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::store::Store;

/// `SetDefaults_Secret`: a Secret without a type is `Opaque` (`kubectl create secret generic`
/// leaves it out).
pub fn secret(obj: &mut Value) {
    let Some(m) = obj.as_object_mut() else {
        return;
    };
    if m.get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
    {
        m.insert("type".into(), json!("Opaque"));
    }
}

/// `SetDefaults_Namespace`: the immutable `kubernetes.io/metadata.name` label, on every write.
pub fn namespace(obj: &mut Value) {
    let Some(name) = obj["metadata"]["name"].as_str().map(str::to_string) else {
        return;
    };
    if let Some(m) = obj["metadata"].as_object_mut() {
        let labels = m.entry("labels").or_insert(json!({}));
        if !labels.is_object() {
            *labels = json!({});
        }
        labels["kubernetes.io/metadata.name"] = json!(name);
    }
}

/// A core/v1 Event as the real server writes it back: its non-pointer timestamps are null and
/// its reporting fields empty strings when a client leaves them out (Go encodes struct-typed
/// and non-omitempty fields always).
pub fn event(obj: &mut Value) {
    let Some(m) = obj.as_object_mut() else {
        return;
    };
    for k in ["firstTimestamp", "lastTimestamp", "eventTime"] {
        m.entry(k).or_insert(Value::Null);
    }
    for k in ["reportingComponent", "reportingInstance"] {
        m.entry(k).or_insert(json!(""));
    }
}

/// A pod condition's non-pointer timestamps, null when left out (Go writes zero `Time`s).
pub fn pod_conditions(obj: &mut Value) {
    for c in obj
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(c) = c.as_object_mut() {
            for k in ["lastProbeTime", "lastTransitionTime"] {
                c.entry(k).or_insert(Value::Null);
            }
        }
    }
}

/// `SetDefaults_Service` for the fields clients leave out.
pub fn service(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let type_ = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
        .to_string();
    spec.insert("type".into(), json!(type_));
    spec.entry("sessionAffinity").or_insert(json!("None"));
    if type_ != "ExternalName" {
        spec.entry("internalTrafficPolicy")
            .or_insert(json!("Cluster"));
    }
    for p in spec
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        let Some(p) = p.as_object_mut() else { continue };
        p.entry("protocol").or_insert(json!("TCP"));
        let port = p.get("port").cloned().unwrap_or(Value::Null);
        let unset = match p.get("targetPort") {
            None | Some(Value::Null) => true,
            Some(Value::Number(n)) => n.as_i64() == Some(0),
            Some(Value::String(s)) => s.is_empty(),
            _ => false,
        };
        if unset && !port.is_null() {
            p.insert("targetPort".into(), port);
        }
    }
}

fn ip(n: u32) -> String {
    format!("10.96.{}.{}", n >> 8, n & 0xff)
}

/// Give a new Service a cluster IP (unless it is headless, ExternalName, or names its own).
pub fn allocate_cluster_ip(store: &Store, obj: &mut Value) {
    let spec = &obj["spec"];
    if spec["type"] == "ExternalName" {
        return;
    }
    let chosen = spec["clusterIP"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let addr = match chosen {
        Some(a) => a,
        None => {
            let used: HashSet<String> = store
                .list_values("v1", "Service", None)
                .iter()
                .filter_map(|s| s["spec"]["clusterIP"].as_str().map(str::to_string))
                .collect();
            // Start where the name hashes to, then probe: stable addresses for a demo.
            let key = format!(
                "{}/{}",
                obj["metadata"]["namespace"].as_str().unwrap_or(""),
                obj["metadata"]["name"].as_str().unwrap_or("")
            );
            let start = key.bytes().fold(2166136261u32, |h, b| {
                (h ^ u32::from(b)).wrapping_mul(16777619)
            });
            let Some(free) = (0..65_000u32)
                .map(|i| 10 + (start.wrapping_add(i) % 65_000))
                .map(ip)
                .find(|a| !used.contains(a))
            else {
                return;
            };
            free
        }
    };
    obj["spec"]["clusterIP"] = json!(addr);
    obj["spec"]["clusterIPs"] = json!([addr]);
    if addr != "None" {
        obj["spec"]["ipFamilies"] = json!(["IPv4"]);
        obj["spec"]["ipFamilyPolicy"] = json!("SingleStack");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_without_a_type_is_opaque() {
        let mut s = json!({"metadata": {"name": "pw"}, "type": ""});
        secret(&mut s);
        assert_eq!(s["type"], "Opaque");
        let mut tls = json!({"type": "kubernetes.io/tls"});
        secret(&mut tls);
        assert_eq!(tls["type"], "kubernetes.io/tls");
    }

    #[test]
    fn defaults_and_allocation() {
        let store = Store::new(crate::kruise::KruiseVersion::V1_9).unwrap();
        let mut svc = json!({"metadata": {"name": "web", "namespace": "default"},
            "spec": {"ports": [{"port": 80}, {"port": 443, "targetPort": "https", "protocol": "TCP"}]}});
        service(&mut svc);
        assert_eq!(svc["spec"]["type"], "ClusterIP");
        assert_eq!(svc["spec"]["ports"][0]["targetPort"], 80);
        assert_eq!(svc["spec"]["ports"][0]["protocol"], "TCP");
        assert_eq!(svc["spec"]["ports"][1]["targetPort"], "https");
        allocate_cluster_ip(&store, &mut svc);
        let a = svc["spec"]["clusterIP"].as_str().unwrap().to_string();
        assert!(a.starts_with("10.96."), "{a}");
        assert_eq!(svc["spec"]["clusterIPs"], json!([a]));
        let mut headless = json!({"metadata": {"name": "h"}, "spec": {"clusterIP": "None"}});
        allocate_cluster_ip(&store, &mut headless);
        assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
        assert!(headless["spec"].get("ipFamilies").is_none());
        let mut ext = json!({"metadata": {"name": "e"}, "spec": {"type": "ExternalName"}});
        allocate_cluster_ip(&store, &mut ext);
        assert!(ext["spec"].get("clusterIP").is_none());
    }
}
