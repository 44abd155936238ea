//! Authentication: who a request comes from. The server's own token is an all-powerful admin
//! (in `system:masters`, as a kubeadm admin.conf user); ServiceAccount tokens the server issued
//! through TokenRequest (`kubectl create token SA`, POST `serviceaccounts/NAME/token`) name
//! `system:serviceaccount:NS:NAME` in the groups `system:serviceaccounts`,
//! `system:serviceaccounts:NS` and `system:authenticated`, and are refused (401) once expired or
//! once their ServiceAccount is gone. Any other token is 401. SelfSubjectReview
//! (`kubectl auth whoami`) answers with the user.

pub mod jwt;

use std::sync::Arc;

use ring::{hmac, rand::SecureRandom};
use serde_json::{Value, json};

use super::{
    http::{Req, Resp, Shared, json_response},
    meta, patch,
    routes::Target,
    status::{ApiError, FieldError},
    store::Store,
};

/// Who a request comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    pub uid: String,
    pub groups: Vec<String>,
}

impl UserInfo {
    /// The user of the server's own token.
    pub fn admin() -> UserInfo {
        UserInfo {
            name: "kubernetes-admin".into(),
            uid: String::new(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
        }
    }

    /// A request without credentials (only the public health paths take one).
    pub fn anonymous() -> UserInfo {
        UserInfo {
            name: "system:anonymous".into(),
            uid: String::new(),
            groups: vec!["system:unauthenticated".into()],
        }
    }

    pub fn service_account(namespace: &str, name: &str, uid: &str) -> UserInfo {
        UserInfo {
            name: format!("system:serviceaccount:{namespace}:{name}"),
            uid: uid.to_owned(),
            groups: vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".into(),
            ],
        }
    }

    /// The user as a `UserInfo` JSON object (SelfSubjectReview status).
    pub fn to_json(&self) -> Value {
        let mut v = json!({"username": self.name, "groups": self.groups});
        if !self.uid.is_empty() {
            v["uid"] = json!(self.uid);
        }
        v
    }
}

/// The audience tokens must carry to be accepted by this server (the real default).
pub const API_AUDIENCE: &str = jwt::ISSUER;
/// TokenRequest's default and minimum lifetimes (seconds), as upstream's.
const DEFAULT_EXPIRATION: i64 = 3600;
const MIN_EXPIRATION: i64 = 600;

/// Checks bearer tokens and signs ServiceAccount tokens.
pub struct Authenticator {
    admin_token: String,
    key: hmac::Key,
}

impl Authenticator {
    /// An authenticator for the admin `token`, with a fresh signing key.
    pub fn new(admin_token: String) -> anyhow::Result<Authenticator> {
        let mut secret = [0u8; 32];
        ring::rand::SystemRandom::new()
            .fill(&mut secret)
            .map_err(|_| anyhow::anyhow!("no randomness for the token signing key"))?;
        Ok(Authenticator {
            admin_token,
            key: hmac::Key::new(hmac::HMAC_SHA256, &secret),
        })
    }

    /// A signed ServiceAccount token for `claims`.
    pub fn issue(&self, claims: &jwt::Claims) -> String {
        jwt::sign(&self.key, claims, &meta::new_uid())
    }

    /// The user an `Authorization` header names; None means 401.
    pub fn authenticate(&self, store: &Store, header: Option<&str>) -> Option<Arc<UserInfo>> {
        let token = header?.strip_prefix("Bearer ")?.trim();
        if token == self.admin_token {
            return Some(Arc::new(UserInfo::admin()));
        }
        let claims = jwt::verify(&self.key, token, jiff::Timestamp::now().as_second())?;
        if !claims.audiences.iter().any(|a| a == API_AUDIENCE) {
            return None;
        }
        // A token outlives nothing: its ServiceAccount must still exist, with the same uid.
        let sa = store.get_value("v1", "ServiceAccount", &claims.namespace, &claims.name)?;
        (sa["metadata"]["uid"].as_str() == Some(claims.uid.as_str())).then(|| {
            Arc::new(UserInfo::service_account(
                &claims.namespace,
                &claims.name,
                &claims.uid,
            ))
        })
    }
}

/// The JSON of a request body, also when kubectl sends it as protobuf.
pub fn body(req: &Req) -> Result<Value, ApiError> {
    let ct = req.header(http::header::CONTENT_TYPE);
    if ct.starts_with("application/vnd.kubernetes.protobuf") {
        return super::protobuf::decode(&req.body).map_err(super::write::protobuf_error);
    }
    patch::parse_body(&req.body)
}

/// `POST /api/v1/namespaces/NS/serviceaccounts/NAME/token`: a TokenRequest.
pub fn token_request(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    let name = t.name.clone().unwrap_or_default();
    let ns = t.ns().to_owned();
    let sa = shared.store.get(&t.res, &ns, &name)?.value();
    let body = body(req)?;
    let spec = &body["spec"];
    let expiration = spec["expirationSeconds"]
        .as_i64()
        .unwrap_or(DEFAULT_EXPIRATION);
    if expiration < MIN_EXPIRATION {
        return Err(ApiError::invalid(
            "TokenRequest",
            "authentication.k8s.io",
            &name,
            &[FieldError::invalid(
                "spec.expirationSeconds",
                &json!(expiration),
                "may not specify a duration less than 10 minutes",
            )],
        ));
    }
    let mut audiences: Vec<String> = spec["audiences"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a.as_str().map(str::to_owned))
        .collect();
    if audiences.is_empty() {
        audiences.push(API_AUDIENCE.to_owned());
    }
    let now = jiff::Timestamp::now().as_second();
    let claims = jwt::Claims {
        namespace: ns.clone(),
        name: name.clone(),
        uid: sa["metadata"]["uid"].as_str().unwrap_or("").to_owned(),
        audiences: audiences.clone(),
        issued: now,
        expires: now + expiration,
    };
    let token = shared.auth.issue(&claims);
    let expires = jiff::Timestamp::from_second(claims.expires)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default();
    let out_spec = json!({"audiences": audiences, "expirationSeconds": expiration,
        "boundObjectRef": spec.get("boundObjectRef").cloned().unwrap_or(Value::Null)});
    Ok(json_response(
        201,
        &json!({
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": name, "namespace": ns, "creationTimestamp": null},
            "spec": out_spec,
            "status": {"token": token, "expirationTimestamp": expires},
        }),
    ))
}

/// `POST /apis/authentication.k8s.io/v1/selfsubjectreviews` (`kubectl auth whoami`).
pub fn self_subject_review(req: &Req) -> Resp {
    json_response(
        201,
        &json!({
            "kind": "SelfSubjectReview",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": null},
            "status": {"userInfo": req.user.to_json()},
        }),
    )
}
