//! Go `encoding/json` output for the structs the SidecarSet hash covers: keys in Go struct-field
//! order, `omitempty` as Go applies it (empty scalars, slices, maps and nil pointers are dropped,
//! struct-valued fields never are), sorted map keys and Go's HTML escaping.
//!
//! The input is the object as Kubernetes JSON (`serde_json::Value`); fields the Go struct does not
//! know are dropped, as Go's decoder would. Quantities are written in canonical form.

use serde_json::Value;

/// How one Go field is encoded.
#[derive(Clone, Copy)]
enum K {
    /// `string`.
    Str,
    /// `int32` / `int64`.
    Int,
    /// `bool`.
    Bool,
    /// `*string`, `*int64`, `*bool`: written whenever set.
    Ptr,
    /// `intstr.IntOrString` (a struct in Go: never omitted; zero is `0`).
    IntOrStr,
    /// `resource.Quantity` (a struct in Go: never omitted; zero is `"0"`).
    Quantity,
    /// `[]string`.
    StrList,
    /// A non-pointer struct: always written.
    Obj(&'static [F]),
    /// A pointer to a struct: written when set.
    PObj(&'static [F]),
    /// A slice of structs.
    List(&'static [F]),
    /// `map[ResourceName]Quantity`: sorted keys, canonical quantities.
    QtyMap,
}

/// A Go struct field: JSON key, kind, and whether the tag has `omitempty`.
type F = (&'static str, K, bool);

const OBJECT_FIELD_SELECTOR: &[F] = &[("apiVersion", K::Str, true), ("fieldPath", K::Str, false)];
const RESOURCE_FIELD_SELECTOR: &[F] = &[
    ("containerName", K::Str, true),
    ("resource", K::Str, false),
    ("divisor", K::Quantity, true),
];
const KEY_SELECTOR: &[F] = &[
    ("name", K::Str, true),
    ("key", K::Str, false),
    ("optional", K::Ptr, true),
];
const ENV_VAR_SOURCE: &[F] = &[
    ("fieldRef", K::PObj(OBJECT_FIELD_SELECTOR), true),
    ("resourceFieldRef", K::PObj(RESOURCE_FIELD_SELECTOR), true),
    ("configMapKeyRef", K::PObj(KEY_SELECTOR), true),
    ("secretKeyRef", K::PObj(KEY_SELECTOR), true),
];
const ENV_VAR: &[F] = &[
    ("name", K::Str, false),
    ("value", K::Str, true),
    ("valueFrom", K::PObj(ENV_VAR_SOURCE), true),
];
const ENV_SOURCE_REF: &[F] = &[("name", K::Str, true), ("optional", K::Ptr, true)];
const ENV_FROM_SOURCE: &[F] = &[
    ("prefix", K::Str, true),
    ("configMapRef", K::PObj(ENV_SOURCE_REF), true),
    ("secretRef", K::PObj(ENV_SOURCE_REF), true),
];
const CONTAINER_PORT: &[F] = &[
    ("name", K::Str, true),
    ("hostPort", K::Int, true),
    ("containerPort", K::Int, false),
    ("protocol", K::Str, true),
    ("hostIP", K::Str, true),
];
const RESOURCE_CLAIM: &[F] = &[("name", K::Str, false), ("request", K::Str, true)];
const RESOURCES: &[F] = &[
    ("limits", K::QtyMap, true),
    ("requests", K::QtyMap, true),
    ("claims", K::List(RESOURCE_CLAIM), true),
];
const RESIZE_POLICY: &[F] = &[
    ("resourceName", K::Str, false),
    ("restartPolicy", K::Str, false),
];
const VOLUME_MOUNT: &[F] = &[
    ("name", K::Str, false),
    ("readOnly", K::Bool, true),
    ("recursiveReadOnly", K::Ptr, true),
    ("mountPath", K::Str, false),
    ("subPath", K::Str, true),
    ("mountPropagation", K::Ptr, true),
    ("subPathExpr", K::Str, true),
];
const VOLUME_DEVICE: &[F] = &[("name", K::Str, false), ("devicePath", K::Str, false)];
const EXEC: &[F] = &[("command", K::StrList, true)];
const HTTP_HEADER: &[F] = &[("name", K::Str, false), ("value", K::Str, false)];
const HTTP_GET: &[F] = &[
    ("path", K::Str, true),
    ("port", K::IntOrStr, false),
    ("host", K::Str, true),
    ("scheme", K::Str, true),
    ("httpHeaders", K::List(HTTP_HEADER), true),
];
const TCP_SOCKET: &[F] = &[("port", K::IntOrStr, false), ("host", K::Str, true)];
const GRPC: &[F] = &[("port", K::Int, false), ("service", K::Ptr, true)];
const SLEEP: &[F] = &[("seconds", K::Int, false)];
const PROBE: &[F] = &[
    ("exec", K::PObj(EXEC), true),
    ("httpGet", K::PObj(HTTP_GET), true),
    ("tcpSocket", K::PObj(TCP_SOCKET), true),
    ("grpc", K::PObj(GRPC), true),
    ("initialDelaySeconds", K::Int, true),
    ("timeoutSeconds", K::Int, true),
    ("periodSeconds", K::Int, true),
    ("successThreshold", K::Int, true),
    ("failureThreshold", K::Int, true),
    ("terminationGracePeriodSeconds", K::Ptr, true),
];
const LIFECYCLE_HANDLER: &[F] = &[
    ("exec", K::PObj(EXEC), true),
    ("httpGet", K::PObj(HTTP_GET), true),
    ("tcpSocket", K::PObj(TCP_SOCKET), true),
    ("sleep", K::PObj(SLEEP), true),
];
const LIFECYCLE: &[F] = &[
    ("postStart", K::PObj(LIFECYCLE_HANDLER), true),
    ("preStop", K::PObj(LIFECYCLE_HANDLER), true),
];
const CAPABILITIES: &[F] = &[("add", K::StrList, true), ("drop", K::StrList, true)];
const SE_LINUX: &[F] = &[
    ("user", K::Str, true),
    ("role", K::Str, true),
    ("type", K::Str, true),
    ("level", K::Str, true),
];
const WINDOWS: &[F] = &[
    ("gmsaCredentialSpecName", K::Ptr, true),
    ("gmsaCredentialSpec", K::Ptr, true),
    ("runAsUserName", K::Ptr, true),
    ("hostProcess", K::Ptr, true),
];
const PROFILE: &[F] = &[("type", K::Str, false), ("localhostProfile", K::Ptr, true)];
const SECURITY_CONTEXT: &[F] = &[
    ("capabilities", K::PObj(CAPABILITIES), true),
    ("privileged", K::Ptr, true),
    ("seLinuxOptions", K::PObj(SE_LINUX), true),
    ("windowsOptions", K::PObj(WINDOWS), true),
    ("runAsUser", K::Ptr, true),
    ("runAsGroup", K::Ptr, true),
    ("runAsNonRoot", K::Ptr, true),
    ("readOnlyRootFilesystem", K::Ptr, true),
    ("allowPrivilegeEscalation", K::Ptr, true),
    ("procMount", K::Ptr, true),
    ("seccompProfile", K::PObj(PROFILE), true),
    ("appArmorProfile", K::PObj(PROFILE), true),
];
const UPGRADE_STRATEGY: &[F] = &[
    ("upgradeType", K::Str, true),
    ("hotUpgradeEmptyImage", K::Str, true),
];
const SHARE_VOLUME_POLICY: &[F] = &[("type", K::Str, true)];
const RESOURCE_EXPRS: &[F] = &[("cpu", K::Str, true), ("memory", K::Str, true)];
const RESOURCES_EXPR: &[F] = &[
    ("limits", K::PObj(RESOURCE_EXPRS), true),
    ("requests", K::PObj(RESOURCE_EXPRS), true),
];
const RESOURCES_POLICY: &[F] = &[
    ("targetContainersMode", K::Str, false),
    ("targetContainersNameRegex", K::Str, true),
    ("resourcesExpr", K::Obj(RESOURCES_EXPR), false),
];
const SOURCE_CONTAINER_NAME_FROM: &[F] = &[("fieldRef", K::PObj(OBJECT_FIELD_SELECTOR), true)];
const TRANSFER_ENV: &[F] = &[
    ("sourceContainerName", K::Str, true),
    (
        "sourceContainerNameFrom",
        K::PObj(SOURCE_CONTAINER_NAME_FROM),
        true,
    ),
    ("envName", K::Str, true),
    ("envNames", K::StrList, true),
];

/// `SidecarContainer` (core `Container` inlined, then the Kruise fields), v1.8.4 / k8s 1.30.
const SIDECAR_CONTAINER: &[F] = &[
    ("name", K::Str, false),
    ("image", K::Str, true),
    ("command", K::StrList, true),
    ("args", K::StrList, true),
    ("workingDir", K::Str, true),
    ("ports", K::List(CONTAINER_PORT), true),
    ("envFrom", K::List(ENV_FROM_SOURCE), true),
    ("env", K::List(ENV_VAR), true),
    ("resources", K::Obj(RESOURCES), true),
    ("resizePolicy", K::List(RESIZE_POLICY), true),
    ("restartPolicy", K::Ptr, true),
    ("volumeMounts", K::List(VOLUME_MOUNT), true),
    ("volumeDevices", K::List(VOLUME_DEVICE), true),
    ("livenessProbe", K::PObj(PROBE), true),
    ("readinessProbe", K::PObj(PROBE), true),
    ("startupProbe", K::PObj(PROBE), true),
    ("lifecycle", K::PObj(LIFECYCLE), true),
    ("terminationMessagePath", K::Str, true),
    ("terminationMessagePolicy", K::Str, true),
    ("imagePullPolicy", K::Str, true),
    ("securityContext", K::PObj(SECURITY_CONTEXT), true),
    ("stdin", K::Bool, true),
    ("stdinOnce", K::Bool, true),
    ("tty", K::Bool, true),
    ("podInjectPolicy", K::Str, true),
    ("upgradeStrategy", K::Obj(UPGRADE_STRATEGY), true),
    ("shareVolumePolicy", K::Obj(SHARE_VOLUME_POLICY), true),
    // v1.9.0: pointers, so absent from the hash input while unset
    (
        "shareVolumeDevicePolicy",
        K::PObj(SHARE_VOLUME_POLICY),
        true,
    ),
    ("transferEnv", K::List(TRANSFER_ENV), true),
    ("resourcesPolicy", K::PObj(RESOURCES_POLICY), true),
];

/// Encodes a list of `SidecarContainer`s (given as Kubernetes JSON) exactly as Go's
/// `json.Marshal([]appsv1alpha1.SidecarContainer)` would.
pub fn encode_sidecar_containers(containers: &[Value]) -> String {
    let mut out = String::new();
    out.push('[');
    for (i, c) in containers.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_obj(&mut out, Some(c), SIDECAR_CONTAINER);
    }
    out.push(']');
    out
}

/// Encodes a core `Probe` (given as Kubernetes JSON; None is the zero struct) exactly as Go
/// would.
pub fn encode_probe(probe: Option<&Value>) -> String {
    let mut out = String::new();
    write_obj(&mut out, probe, PROBE);
    out
}

/// Encodes an arbitrary JSON value as Go does for `interface{}` data: object keys sorted, HTML
/// characters escaped, no whitespace.
pub fn encode_any(v: &Value) -> String {
    let mut out = String::new();
    write_any(&mut out, v);
    out
}

fn write_any(out: &mut String, v: &Value) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(out, k);
                out.push(':');
                write_any(out, &map[k]);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_any(out, item);
            }
            out.push(']');
        }
        Value::String(s) => write_str(out, s),
        other => out.push_str(&other.to_string()),
    }
}

fn write_obj(out: &mut String, v: Option<&Value>, fields: &[F]) {
    out.push('{');
    let mut first = true;
    for &(key, kind, omitempty) in fields {
        let fv = v.and_then(|o| o.get(key)).filter(|x| !x.is_null());
        let mut field = String::new();
        if write_field(&mut field, fv, kind, omitempty) {
            if !first {
                out.push(',');
            }
            first = false;
            write_str(out, key);
            out.push(':');
            out.push_str(&field);
        }
    }
    out.push('}');
}

/// Writes one field value; false when Go would omit it.
fn write_field(out: &mut String, v: Option<&Value>, kind: K, omitempty: bool) -> bool {
    match kind {
        K::Str => {
            let s = v.and_then(Value::as_str).unwrap_or_default();
            if omitempty && s.is_empty() {
                return false;
            }
            write_str(out, s);
        }
        K::Int => {
            let n = v.and_then(Value::as_i64).unwrap_or_default();
            if omitempty && n == 0 {
                return false;
            }
            out.push_str(&n.to_string());
        }
        K::Bool => {
            let b = v.and_then(Value::as_bool).unwrap_or_default();
            if omitempty && !b {
                return false;
            }
            out.push_str(if b { "true" } else { "false" });
        }
        K::Ptr => match v {
            None => return false,
            Some(x) => write_any(out, x),
        },
        K::IntOrStr => match v {
            Some(Value::String(s)) => write_str(out, s),
            Some(Value::Number(n)) => out.push_str(&n.to_string()),
            _ => out.push('0'),
        },
        K::Quantity => write_quantity(out, v),
        K::QtyMap => {
            let Some(Value::Object(map)) =
                v.filter(|m| m.as_object().is_some_and(|o| !o.is_empty()))
            else {
                if omitempty {
                    return false;
                }
                out.push_str("null");
                return true;
            };
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(out, k);
                out.push(':');
                write_quantity(out, map.get(k));
            }
            out.push('}');
        }
        K::StrList | K::List(_) => {
            let empty = match v {
                None => true,
                Some(Value::Array(a)) => a.is_empty(),
                Some(Value::Object(o)) => o.is_empty(),
                Some(_) => false,
            };
            if empty && omitempty {
                return false;
            }
            match (kind, v) {
                (_, None) => out.push_str("null"),
                (K::List(fields), Some(Value::Array(items))) => {
                    out.push('[');
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        write_obj(out, Some(item), fields);
                    }
                    out.push(']');
                }
                (_, Some(x)) => write_any(out, x),
            }
        }
        K::Obj(fields) => write_obj(out, v, fields),
        K::PObj(fields) => match v {
            None => return false,
            Some(x) => write_obj(out, Some(x), fields),
        },
    }
    true
}

/// Writes a quantity in canonical form (as given when it cannot be parsed; `"0"` when unset).
fn write_quantity(out: &mut String, v: Option<&Value>) {
    let raw = match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "0".to_owned(),
    };
    let canonical = super::quantity::canonical(&raw).unwrap_or(raw);
    write_str(out, &canonical);
}

/// Writes a JSON string with Go's escaping (`<`, `>`, `&`, U+2028 and U+2029 as `\u` escapes).
pub fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", ch as u32));
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn container_field_order_and_omitempty() {
        let c = json!({
            "tty": false,
            "env": [{"value": "", "name": "A"}],
            "image": "img",
            "name": "c",
            "ports": [{"containerPort": 80, "protocol": "TCP"}],
            "unknownField": 1,
            "livenessProbe": {"periodSeconds": 0, "tcpSocket": {"port": "http"}, "terminationGracePeriodSeconds": 0}
        });
        assert_eq!(
            encode_sidecar_containers(&[c]),
            r#"[{"name":"c","image":"img","ports":[{"containerPort":80,"protocol":"TCP"}],"env":[{"name":"A"}],"resources":{},"livenessProbe":{"tcpSocket":{"port":"http"},"terminationGracePeriodSeconds":0},"upgradeStrategy":{},"shareVolumePolicy":{}}]"#
        );
    }

    #[test]
    fn resources_are_sorted_and_canonical() {
        let c = json!({"name": "c", "resources": {"requests": {"memory": "1024Mi", "cpu": "0.5"}}});
        assert_eq!(
            encode_sidecar_containers(&[c]),
            r#"[{"name":"c","resources":{"requests":{"cpu":"500m","memory":"1Gi"}},"upgradeStrategy":{},"shareVolumePolicy":{}}]"#
        );
    }

    #[test]
    fn go_escaping_and_sorted_maps() {
        assert_eq!(
            encode_any(&json!({"b": "x<y", "a": [1, "&"]})),
            r#"{"a":[1,"\u0026"],"b":"x\u003cy"}"#
        );
    }
}
