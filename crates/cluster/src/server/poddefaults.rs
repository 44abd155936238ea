//! The v1 Pod defaults a kube-apiserver applies on every write (`SetDefaults_Pod`, `_PodSpec`,
//! `_Container`, probes, ports, env, volumes): pure, so the store can default a pod seeded
//! in-process and the update rule can compare defaulted pods.

use serde_json::{Map, Value, json};

/// Set `k` unless it holds a value.
pub fn or_insert(m: &mut Map<String, Value>, k: &str, v: Value) {
    if m.get(k).is_none_or(Value::is_null) {
        m.insert(k.into(), v);
    }
}

/// `SetDefaults_Container` (and the probe, port and env defaults under it).
fn container(c: &mut Value) {
    let Some(m) = c.as_object_mut() else { return };
    or_insert(m, "terminationMessagePath", json!("/dev/termination-log"));
    or_insert(m, "terminationMessagePolicy", json!("File"));
    or_insert(m, "resources", json!({}));
    let image = m.get("image").and_then(Value::as_str).unwrap_or("");
    // The tag is after the last '/', and a digest pins the image.
    let last = image.rsplit('/').next().unwrap_or(image);
    let policy = if !image.contains('@') && (!last.contains(':') || last.ends_with(":latest")) {
        "Always"
    } else {
        "IfNotPresent"
    };
    or_insert(m, "imagePullPolicy", json!(policy));
    for p in m
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(p) = p.as_object_mut() {
            or_insert(p, "protocol", json!("TCP"));
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = m.get_mut(probe).and_then(Value::as_object_mut) {
            or_insert(p, "timeoutSeconds", json!(1));
            or_insert(p, "periodSeconds", json!(10));
            or_insert(p, "successThreshold", json!(1));
            or_insert(p, "failureThreshold", json!(3));
            if let Some(h) = p.get_mut("httpGet").and_then(Value::as_object_mut) {
                or_insert(h, "path", json!("/"));
                or_insert(h, "scheme", json!("HTTP"));
            }
        }
    }
    for e in m
        .get_mut("env")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(f) = e
            .pointer_mut("/valueFrom/fieldRef")
            .and_then(Value::as_object_mut)
        {
            or_insert(f, "apiVersion", json!("v1"));
        }
    }
}

/// `SetDefaults_Volume`'s sources: secret, configMap, projected and downwardAPI default modes.
fn volume(v: &mut Value) {
    let Some(m) = v.as_object_mut() else { return };
    for src in ["secret", "configMap", "projected", "downwardAPI"] {
        if let Some(s) = m.get_mut(src).and_then(Value::as_object_mut) {
            or_insert(s, "defaultMode", json!(420));
        }
    }
    if let Some(h) = m.get_mut("hostPath").and_then(Value::as_object_mut) {
        or_insert(h, "type", json!(""));
    }
}

/// The defaults every Pod write gets (`SetDefaults_Pod` and `SetDefaults_PodSpec`).
pub fn defaults(pod: &mut Value) {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    or_insert(spec, "restartPolicy", json!("Always"));
    or_insert(spec, "terminationGracePeriodSeconds", json!(30));
    or_insert(spec, "dnsPolicy", json!("ClusterFirst"));
    or_insert(spec, "securityContext", json!({}));
    or_insert(spec, "schedulerName", json!("default-scheduler"));
    or_insert(spec, "enableServiceLinks", json!(true));
    // The v1 conversion keeps the deprecated `serviceAccount` equal to `serviceAccountName`.
    if let Some(sa) = spec
        .get("serviceAccountName")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
    {
        spec.insert("serviceAccount".into(), json!(sa));
    }
    for list in ["containers", "initContainers", "ephemeralContainers"] {
        for c in spec
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            container(c);
        }
    }
    for v in spec
        .get_mut("volumes")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        volume(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_defaults_follow_the_image_tag() {
        let mut pod = json!({"spec": {"containers": [
            {"name": "a", "image": "nginx:1.27"},
            {"name": "b", "image": "nginx"},
            {"name": "c", "image": "registry:5000/nginx:latest"},
        ]}});
        defaults(&mut pod);
        let policy = |i: usize| pod["spec"]["containers"][i]["imagePullPolicy"].clone();
        assert_eq!(policy(0), "IfNotPresent");
        assert_eq!(policy(1), "Always");
        assert_eq!(policy(2), "Always");
        assert_eq!(pod["spec"]["restartPolicy"], "Always");
        assert_eq!(pod["spec"]["containers"][0]["resources"], json!({}));
    }
}
