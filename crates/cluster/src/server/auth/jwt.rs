//! ServiceAccount tokens as JSON Web Tokens: the claims a real API server puts in a TokenRequest
//! token (`iss`, `sub`, `aud`, `exp`, `iat`, `nbf`, `jti`, `kubernetes.io`), signed HS256 with
//! a key the server draws at start (no client verifies the signature but the server itself;
//! the real server signs RS256 with its service-account key).

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use ring::hmac;
use serde_json::{Value, json};

/// Who a token names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub audiences: Vec<String>,
    pub issued: i64,
    pub expires: i64,
}

/// The issuer the real server uses by default.
pub const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

fn header() -> String {
    URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#)
}

/// A signed token for `claims`.
pub fn sign(key: &hmac::Key, claims: &Claims, jti: &str) -> String {
    let body = json!({
        "aud": claims.audiences,
        "exp": claims.expires,
        "iat": claims.issued,
        "iss": ISSUER,
        "jti": jti,
        "kubernetes.io": {
            "namespace": claims.namespace,
            "serviceaccount": {"name": claims.name, "uid": claims.uid},
        },
        "nbf": claims.issued,
        "sub": format!("system:serviceaccount:{}:{}", claims.namespace, claims.name),
    });
    let payload = URL_SAFE_NO_PAD.encode(body.to_string());
    let signed = format!("{}.{payload}", header());
    let tag = hmac::sign(key, signed.as_bytes());
    format!("{signed}.{}", URL_SAFE_NO_PAD.encode(tag.as_ref()))
}

/// The claims of a token this key signed, if it is well-formed, correctly signed and valid at
/// `now` (Unix seconds). Anything else is None (answered 401).
pub fn verify(key: &hmac::Key, token: &str, now: i64) -> Option<Claims> {
    let (signed, tag) = token.rsplit_once('.')?;
    let (_, payload) = signed.split_once('.')?;
    let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
    hmac::verify(key, signed.as_bytes(), &tag).ok()?;
    let body: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
    let k8s = &body["kubernetes.io"];
    let claims = Claims {
        namespace: k8s["namespace"].as_str()?.to_owned(),
        name: k8s["serviceaccount"]["name"].as_str()?.to_owned(),
        uid: k8s["serviceaccount"]["uid"].as_str()?.to_owned(),
        audiences: body["aud"]
            .as_array()?
            .iter()
            .filter_map(|a| a.as_str().map(str::to_owned))
            .collect(),
        issued: body["iat"].as_i64()?,
        expires: body["exp"].as_i64()?,
    };
    (body["nbf"].as_i64()? <= now && now < claims.expires).then_some(claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(seed: u8) -> hmac::Key {
        hmac::Key::new(hmac::HMAC_SHA256, &[seed; 32])
    }

    fn claims() -> Claims {
        Claims {
            namespace: "demo".into(),
            name: "viewer".into(),
            uid: "u-1".into(),
            audiences: vec![ISSUER.into()],
            issued: 1000,
            expires: 4600,
        }
    }

    #[test]
    fn a_signed_token_verifies_until_it_expires() {
        let token = sign(&key(1), &claims(), "j");
        assert_eq!(token.split('.').count(), 3);
        assert_eq!(verify(&key(1), &token, 2000), Some(claims()));
        assert_eq!(verify(&key(1), &token, 4600), None, "expired");
        assert_eq!(verify(&key(1), &token, 999), None, "not yet valid");
        assert_eq!(verify(&key(2), &token, 2000), None, "another server's key");
        let (head, _) = token.rsplit_once('.').unwrap();
        let forged = format!("{head}.{}", URL_SAFE_NO_PAD.encode([0u8; 32]));
        assert_eq!(verify(&key(1), &forged, 2000), None);
        assert_eq!(verify(&key(1), "not-a-token", 2000), None);
    }

    #[test]
    fn the_payload_names_the_service_account() {
        let token = sign(&key(1), &claims(), "j");
        let payload = token.split('.').nth(1).unwrap();
        let body: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        assert_eq!(body["sub"], "system:serviceaccount:demo:viewer");
        assert_eq!(body["iss"], ISSUER);
    }
}
