//! URL routing: discovery, OpenAPI, version and health paths, and resource paths
//! (`/api/v1/...`, `/apis/{group}/{version}/...`, namespaced or not, with subresources).

use std::sync::Arc;

use http::Method;
use tokio_util::sync::CancellationToken;

use super::{
    discovery,
    http::{Req, Resp, Shared, error_response, json_response},
    openapi, read,
    resources::ResourceInfo,
    status::ApiError,
    write,
};

/// A resource request target.
pub struct Target {
    pub res: Arc<ResourceInfo>,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub sub: Option<String>,
}

impl Target {
    pub fn ns(&self) -> &str {
        self.namespace.as_deref().unwrap_or("")
    }
}

fn not_found() -> ApiError {
    ApiError::new(
        404,
        "NotFound",
        "the server could not find the requested resource",
    )
}

pub async fn dispatch(shared: &Arc<Shared>, stop: &CancellationToken, req: Req) -> Resp {
    // Authorization comes first, as on a real server: no rights, no hint whether it exists.
    if let Err(e) = super::authz::authorize_request(shared, &req) {
        return error_response(&e);
    }
    let segs: Vec<String> = req
        .path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    match s.as_slice() {
        ["healthz" | "livez" | "readyz"] => return crate_ok(),
        ["version"] => return json_response(200, &discovery::version()),
        ["api" | "apis"]
            if let Some(v) = discovery::aggregated_version(req.header(http::header::ACCEPT)) =>
        {
            let mut doc = discovery::aggregated(&shared.store.registry(), s[0] == "api", v);
            if s[0] == "apis" {
                super::metrics::add_aggregated(shared, &mut doc);
            }
            let mut r = json_response(200, &doc);
            let ct =
                format!("application/json;g=apidiscovery.k8s.io;v={v};as=APIGroupDiscoveryList");
            if let Ok(h) = http::HeaderValue::from_str(&ct) {
                r.headers_mut().insert(http::header::CONTENT_TYPE, h);
            }
            return r;
        }
        ["api"] => return json_response(200, &discovery::api_versions(shared.addr)),
        ["apis"] => {
            let mut doc = discovery::api_groups(&shared.store.registry());
            super::metrics::add_group(shared, &mut doc);
            return json_response(200, &doc);
        }
        ["openapi", "v3"] => return json_response(200, &openapi::root(&shared.store.registry())),
        ["openapi", "v3", rest @ ..] => {
            return match openapi::group_doc(&shared.store.registry(), &rest.join("/")) {
                Some(v) => json_response(200, &v),
                None => error_response(&not_found()),
            };
        }
        _ => {}
    }
    if let Some(r) = super::metrics::route(shared, &req, &s) {
        return r;
    }
    let (group, version, rest): (&str, &str, &[&str]) = match s.as_slice() {
        ["api", v, rest @ ..] => ("", v, rest),
        ["apis", g] => {
            return match discovery::api_group(&shared.store.registry(), g) {
                Some(v) => json_response(200, &v),
                None => error_response(&not_found()),
            };
        }
        ["apis", g, v, rest @ ..] => (g, v, rest),
        _ => return error_response(&not_found()),
    };
    let reg = shared.store.registry();
    if rest.is_empty() {
        return match discovery::resource_list(&reg, group, version) {
            Some(v) => json_response(200, &v),
            // No such group/version: the Go mux's plain-text 404, as on a real server.
            None if !group.is_empty() => page_not_found(),
            None => error_response(&not_found()),
        };
    }
    let (watch_prefix, rest) = match rest {
        ["watch", r @ ..] => (true, r),
        r => (false, r),
    };
    let (namespace, plural, name, sub) = match rest {
        ["namespaces", ns, plural, tail @ ..]
            if !matches!(*plural, "status" | "finalize") || !tail.is_empty() =>
        {
            (
                Some(ns.to_string()),
                *plural,
                tail.first().copied(),
                tail.get(1).copied(),
            )
        }
        [plural, tail @ ..] => (None, *plural, tail.first().copied(), tail.get(1).copied()),
        [] => return error_response(&not_found()),
    };
    let Some(res) = reg.lookup(group, version, plural) else {
        // A resource a served custom group/version does not have falls through to the mux.
        if reg.in_group_version(group, version).iter().any(|r| r.crd) {
            return page_not_found();
        }
        return error_response(&not_found());
    };
    if namespace.is_some() && !res.namespaced {
        return error_response(&not_found());
    }
    let target = Target {
        res,
        namespace,
        name: name.map(str::to_string),
        sub: sub.map(str::to_string),
    };
    // A pod's log, exec and attach: streams from the simulated containers.
    if target.res.group.is_empty() && target.res.plural == "pods" {
        match target.sub.as_deref() {
            Some("log") => return super::podlog::route(shared, stop, &req, &target).await,
            Some("exec" | "attach") => return super::exec::route(shared, stop, req, &target),
            _ => {}
        }
    }
    if let Some(sub) = &target.sub {
        let known = (sub == "status" && target.res.status)
            || (sub == "scale" && target.res.scale.is_some())
            || target
                .res
                .extra_subresources
                .iter()
                .any(|(n, _, _)| n == sub);
        if !known {
            // The custom resource handler answers an unknown subresource as a missing object.
            if target.res.crd
                && let Some(name) = &target.name
            {
                return error_response(&ApiError::not_found(
                    &target.res.plural,
                    &target.res.group,
                    name,
                ));
            }
            return error_response(&not_found());
        }
    }
    let verb = match (&req.method, &target.name) {
        (&Method::GET, None) if watch_prefix || req.flag("watch") => "watch",
        (&Method::GET, None) => "list",
        (&Method::GET, Some(_)) if watch_prefix => "watch",
        (&Method::GET, Some(_)) => "get",
        (&Method::POST, None) => "create",
        (&Method::POST, Some(_)) if target.sub.is_some() => "create",
        (&Method::PUT, Some(_)) => "update",
        (&Method::PATCH, Some(_)) => "patch",
        (&Method::DELETE, Some(_)) => "delete",
        (&Method::DELETE, None) => "deletecollection",
        _ => "",
    };
    if verb.is_empty() || (target.sub.is_none() && !target.res.verbs.contains(&verb)) {
        return error_response(&ApiError::method_not_allowed(format!(
            "the server does not allow this method on the requested resource ({} {})",
            req.method, req.path
        )));
    }
    let result = match verb {
        "watch" => read::watch(shared, stop, &req, &target).await,
        "list" => read::list(shared, &req, &target),
        "get" => read::get(shared, &req, &target),
        "create" => write::create(shared, &req, &target),
        "update" => write::update(shared, &req, &target),
        "patch" => super::patch::verb::patch(shared, &req, &target),
        "delete" => write::delete(shared, &req, &target),
        _ => write::delete_collection(shared, &req, &target),
    };
    result.unwrap_or_else(|e| error_response(&e))
}

/// The Go mux's answer to a path no handler serves: `404 page not found`, in plain text.
fn page_not_found() -> Resp {
    let mut r = Resp::new(super::http::full("404 page not found\n"));
    *r.status_mut() = http::StatusCode::NOT_FOUND;
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

fn crate_ok() -> Resp {
    let mut r = Resp::new(super::http::full("ok"));
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain"),
    );
    r
}
