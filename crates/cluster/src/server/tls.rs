//! TLS for kubectl: client-go never sends a bearer token to an `http://` server, so the listener
//! also speaks TLS (told apart by the first byte of the connection). A fresh ECDSA P-256 key and a
//! self-signed certificate for 127.0.0.1/::1/localhost are made at start with rcgen (ring
//! backend); the kubeconfig carries the certificate (rcgen's PEM) as its CA.

use std::sync::Arc;

use anyhow::Context;
use rcgen::{
    CertificateParams, DistinguishedName, DnType, IsCa, KeyPair, KeyUsagePurpose, date_time_ymd,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// The server's certificate and rustls configuration.
pub struct Tls {
    pub cert_der: Vec<u8>,
    /// The certificate as PEM.
    cert_pem: String,
    pub config: Arc<rustls::ServerConfig>,
}

/// The UTC calendar date `days` from today plus `years` (year, month, day; the day of month is
/// clamped to 28 so that a date some years on is always valid).
fn day(days: i64, years: i16) -> anyhow::Result<(i32, u8, u8)> {
    let d = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(24 * days))
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date();
    let month = u8::try_from(d.month()).context("month")?;
    let day = u8::try_from(d.day().min(28)).context("day")?;
    Ok((i32::from(d.year() + years), month, day))
}

impl Tls {
    /// A new key and certificate, and a rustls server config for HTTP/1.1.
    pub fn generate() -> anyhow::Result<Tls> {
        let key = KeyPair::generate().context("generating the TLS key")?;
        let mut params = CertificateParams::new(vec![
            "127.0.0.1".to_string(),
            "::1".to_string(),
            "localhost".to_string(),
        ])
        .context("certificate names")?;
        let mut name = DistinguishedName::new();
        name.push(DnType::CommonName, "kruise-tui embedded cluster");
        params.distinguished_name = name;
        // An end-entity certificate (webpki refuses a CA as the server's own certificate); Go and
        // rustls both accept it as its own trust anchor.
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        let (y, m, d) = day(-1, 0)?;
        params.not_before = date_time_ymd(y, m, d);
        let (y, m, d) = day(0, 5)?;
        params.not_after = date_time_ymd(y, m, d);
        let cert = params
            .self_signed(&key)
            .context("signing the TLS certificate")?;
        let cert_der = cert.der().to_vec();
        let cert_pem = cert.pem();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .context("TLS protocol versions")?
            .with_no_client_auth()
            .with_single_cert(
                vec![CertificateDer::from(cert_der.clone())],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            )
            .context("TLS certificate")?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Tls {
            cert_der,
            cert_pem,
            config: Arc::new(config),
        })
    }

    /// The certificate as PEM.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use base64::{Engine, engine::general_purpose::STANDARD};

    /// Secret data, protobuf bytes and the kubeconfig's CA are standard base64 with padding.
    #[test]
    fn base64_padding() {
        assert_eq!(STANDARD.encode(b"f"), "Zg==");
        assert_eq!(STANDARD.encode(b"fo"), "Zm8=");
        assert_eq!(STANDARD.encode(b"foo"), "Zm9v");
    }

    #[test]
    fn certificate_parses_as_pem() {
        let t = Tls::generate().unwrap();
        assert!(t.cert_pem().starts_with("-----BEGIN CERTIFICATE-----\n"));
        assert_eq!(t.cert_der[0], 0x30);
        // 64-column base64 lines of the DER, as kubectl and client-go read it.
        let body: Vec<&str> = t.cert_pem().lines().collect();
        assert_eq!(body.last(), Some(&"-----END CERTIFICATE-----"));
        let inner = &body[1..body.len() - 1];
        assert!(inner.iter().all(|l| l.len() <= 64));
        assert!(inner[..inner.len() - 1].iter().all(|l| l.len() == 64));
        assert_eq!(STANDARD.decode(inner.concat()).unwrap(), t.cert_der);
    }
}
