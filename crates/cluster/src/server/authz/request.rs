//! What a request asks to do, read from its method, path and query the way the real server's
//! `RequestInfoFactory` reads them (upstream `apiserver/pkg/endpoints/request/requestinfo.go`),
//! independent of whether the resource exists: authorization comes before routing, so a user
//! without rights gets 403 even for a resource the server does not serve.
//! And the 403 the real server answers (`responsewriters.Forbidden`).

use http::Method;

use super::rules::Attributes;
use crate::server::{auth::UserInfo, status::ApiError};

/// Subresources of a namespace (`/api/v1/namespaces/NAME/status`).
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

/// The attributes of a request to `path` with `method` and the decoded `query`.
pub fn attributes(
    method: &Method,
    path: &str,
    query: &dyn Fn(&str) -> Option<String>,
) -> Attributes {
    let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let non_resource = || Attributes::non_resource(&method.as_str().to_ascii_lowercase(), path);
    let (group, rest) = match parts.as_slice() {
        ["api", rest @ ..] if rest.len() >= 2 => ("", rest),
        ["apis", group, rest @ ..] if rest.len() >= 2 => (*group, rest),
        _ => return non_resource(),
    };
    let mut attrs = Attributes {
        resource_request: true,
        api_group: group.to_owned(),
        api_version: rest[0].to_owned(),
        ..Attributes::default()
    };
    let mut rest = &rest[1..];
    let by_method = match rest.first() {
        Some(&"watch") if rest.len() >= 2 => {
            attrs.verb = "watch".into();
            rest = &rest[1..];
            false
        }
        Some(&"proxy") if rest.len() >= 2 => {
            attrs.verb = "proxy".into();
            rest = &rest[1..];
            false
        }
        _ => {
            attrs.verb = match *method {
                Method::POST => "create",
                Method::GET | Method::HEAD => "get",
                Method::PUT => "update",
                Method::PATCH => "patch",
                Method::DELETE => "delete",
                _ => "",
            }
            .into();
            true
        }
    };
    if rest.first() == Some(&"namespaces")
        && let Some(ns) = rest.get(1)
    {
        attrs.namespace = (*ns).to_owned();
        if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2]) {
            rest = &rest[2..];
        }
    }
    if let Some(resource) = rest.first() {
        attrs.resource = (*resource).to_owned();
    }
    if let Some(name) = rest.get(1) {
        attrs.name = (*name).to_owned();
    }
    if rest.len() >= 3 && attrs.verb != "proxy" {
        attrs.subresource = rest[2].to_owned();
    }
    if by_method && attrs.name.is_empty() {
        match attrs.verb.as_str() {
            "delete" => attrs.verb = "deletecollection".into(),
            "get" => {
                let watch = matches!(query("watch").as_deref(), Some("true" | "1"));
                attrs.verb = if watch { "watch" } else { "list" }.into();
            }
            _ => {}
        }
    }
    // A list or watch of one name (`fieldSelector=metadata.name=NAME`) is authorized for that
    // name, so resourceNames rules apply to it.
    if matches!(attrs.verb.as_str(), "list" | "watch")
        && attrs.name.is_empty()
        && let Some(name) = query("fieldSelector").as_deref().and_then(exact_name)
    {
        attrs.name = name;
    }
    attrs
}

/// The name a field selector pins (`metadata.name=x` or `metadata.name==x`, alone or among
/// other terms), if any.
fn exact_name(selector: &str) -> Option<String> {
    selector.split(',').find_map(|term| {
        let (key, value) = term
            .split_once("==")
            .or_else(|| term.split_once('='))
            .filter(|(k, _)| !k.ends_with('!'))?;
        (key.trim() == "metadata.name" && !value.is_empty() && !value.contains('/'))
            .then(|| value.trim().to_owned())
    })
}

/// The 403 the real server sends when `user` may not do `attrs`; `reason` is the authorizers'
/// reason (appended after a colon when not empty).
pub fn forbidden(user: &UserInfo, attrs: &Attributes, reason: &str) -> ApiError {
    let user_name = &user.name;
    let what = if !attrs.resource_request {
        format!(
            "User \"{user_name}\" cannot {} path \"{}\"",
            attrs.verb, attrs.path
        )
    } else {
        let mut resource = attrs.resource.clone();
        if !attrs.subresource.is_empty() {
            resource = format!("{resource}/{}", attrs.subresource);
        }
        let scope = if attrs.namespace.is_empty() {
            "at the cluster scope".to_owned()
        } else {
            format!("in the namespace \"{}\"", attrs.namespace)
        };
        format!(
            "User \"{user_name}\" cannot {} resource \"{resource}\" in API group \"{}\" {scope}",
            attrs.verb, attrs.api_group
        )
    };
    let what = if reason.is_empty() {
        what
    } else {
        format!("{what}: {reason}")
    };
    let qualified = if attrs.api_group.is_empty() {
        attrs.resource.clone()
    } else {
        format!("{}.{}", attrs.resource, attrs.api_group)
    };
    let message = if qualified.is_empty() {
        format!("forbidden: {what}")
    } else if attrs.name.is_empty() {
        format!("{qualified} is forbidden: {what}")
    } else {
        format!("{qualified} \"{}\" is forbidden: {what}", attrs.name)
    };
    ApiError {
        details: Some(Box::new(serde_json::json!({
            "name": attrs.name, "group": attrs.api_group, "kind": attrs.resource
        }))),
        ..ApiError::forbidden(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(method: Method, url: &str) -> Attributes {
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        let q = crate::server::http::parse_query(query);
        attributes(&method, path, &|k| q.get(k).cloned())
    }

    #[test]
    fn resource_paths() {
        let a = parse(Method::GET, "/api/v1/namespaces/demo/pods");
        assert_eq!(
            (a.verb.as_str(), a.resource.as_str(), a.namespace.as_str()),
            ("list", "pods", "demo")
        );
        let a = parse(Method::GET, "/api/v1/namespaces/demo/pods?watch=true");
        assert_eq!(a.verb, "watch");
        let a = parse(Method::GET, "/api/v1/namespaces/demo/pods/web-0/log");
        assert_eq!(
            (a.verb.as_str(), a.name.as_str(), a.subresource.as_str()),
            ("get", "web-0", "log")
        );
        let a = parse(
            Method::DELETE,
            "/apis/apps.kruise.io/v1beta1/namespaces/demo/clonesets",
        );
        assert_eq!(
            (a.verb.as_str(), a.api_group.as_str()),
            ("deletecollection", "apps.kruise.io")
        );
        let a = parse(
            Method::GET,
            "/apis/apps.kruise.io/v1alpha1/watch/namespaces/demo/clonesets/web",
        );
        assert_eq!((a.verb.as_str(), a.name.as_str()), ("watch", "web"));
        let a = parse(Method::GET, "/api/v1/nodes");
        assert_eq!((a.verb.as_str(), a.namespace.as_str()), ("list", ""));
        let a = parse(
            Method::POST,
            "/api/v1/namespaces/demo/serviceaccounts/viewer/token",
        );
        assert_eq!(
            (a.verb.as_str(), a.resource.as_str(), a.subresource.as_str()),
            ("create", "serviceaccounts", "token")
        );
    }

    #[test]
    fn a_namespace_is_its_own_namespace() {
        let a = parse(Method::GET, "/api/v1/namespaces/demo");
        assert_eq!(
            (a.resource.as_str(), a.name.as_str(), a.namespace.as_str()),
            ("namespaces", "demo", "demo")
        );
        let a = parse(Method::PUT, "/api/v1/namespaces/demo/finalize");
        assert_eq!(
            (a.resource.as_str(), a.subresource.as_str()),
            ("namespaces", "finalize")
        );
    }

    #[test]
    fn field_selected_names_and_non_resource_paths() {
        let a = parse(
            Method::GET,
            "/api/v1/namespaces/demo/configmaps?fieldSelector=metadata.name%3Dsettings",
        );
        assert_eq!((a.verb.as_str(), a.name.as_str()), ("list", "settings"));
        for path in [
            "/healthz",
            "/api",
            "/apis",
            "/apis/apps",
            "/api/v1",
            "/openapi/v3",
            "/version",
        ] {
            let a = parse(Method::GET, path);
            assert!(!a.resource_request, "{path}");
            assert_eq!((a.verb.as_str(), a.path.as_str()), ("get", path));
        }
        assert!(!parse(Method::GET, "/apis/apps/v1").resource_request);
    }

    #[test]
    fn forbidden_messages_match_the_real_server() {
        let user = UserInfo::service_account("perf-0", "viewer", "u");
        let a = parse(
            Method::GET,
            "/apis/apps.kruise.io/v1alpha1/namespaces/perf-0/clonesets",
        );
        assert_eq!(
            forbidden(&user, &a, "").message,
            "clonesets.apps.kruise.io is forbidden: User \"system:serviceaccount:perf-0:viewer\" \
             cannot list resource \"clonesets\" in API group \"apps.kruise.io\" in the namespace \"perf-0\""
        );
        let a = parse(Method::GET, "/api/v1/namespaces/perf-0/pods/web-0/log");
        assert_eq!(
            forbidden(&user, &a, "").message,
            "pods \"web-0\" is forbidden: User \"system:serviceaccount:perf-0:viewer\" cannot get \
             resource \"pods/log\" in API group \"\" in the namespace \"perf-0\""
        );
        let a = parse(Method::GET, "/api/v1/nodes");
        assert!(
            forbidden(&user, &a, "")
                .message
                .ends_with("at the cluster scope")
        );
        let a = parse(Method::GET, "/logs");
        assert_eq!(
            forbidden(&user, &a, "").message,
            "forbidden: User \"system:serviceaccount:perf-0:viewer\" cannot get path \"/logs\""
        );
    }
}
