//! TLS for kubectl: client-go never sends a bearer token to an `http://` server, so the listener
//! also speaks TLS (told apart by the first byte of the connection). A fresh ECDSA P-256 key and a
//! self-signed certificate for 127.0.0.1/::1/localhost are made at start (DER built here, signed
//! with ring); the kubeconfig carries the certificate as its CA.

use std::sync::Arc;

use anyhow::Context;
use ring::{
    rand::SystemRandom,
    signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair},
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// The server's certificate and rustls configuration.
pub struct Tls {
    pub cert_der: Vec<u8>,
    pub config: Arc<rustls::ServerConfig>,
}

fn der(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let n = content.len();
    if n < 0x80 {
        out.push(n as u8);
    } else if n < 0x100 {
        out.extend_from_slice(&[0x81, n as u8]);
    } else {
        out.extend_from_slice(&[0x82, (n >> 8) as u8, n as u8]);
    }
    out.extend_from_slice(content);
    out
}

fn seq(parts: &[Vec<u8>]) -> Vec<u8> {
    der(0x30, &parts.concat())
}

const OID_ECDSA_SHA256: &[u8] = &[0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04, 0x03, 0x02];
const OID_EC_PUBLIC_KEY: &[u8] = &[0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01];
const OID_P256: &[u8] = &[0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07];
const OID_CN: &[u8] = &[0x55, 0x04, 0x03];
const OID_SAN: &[u8] = &[0x55, 0x1D, 0x11];
const OID_BASIC_CONSTRAINTS: &[u8] = &[0x55, 0x1D, 0x13];
const OID_KEY_USAGE: &[u8] = &[0x55, 0x1D, 0x0F];

fn utc_time(ts: jiff::Timestamp) -> Vec<u8> {
    let s = ts.strftime("%y%m%d%H%M%SZ").to_string();
    der(0x17, s.as_bytes())
}

fn name() -> Vec<u8> {
    let cn = seq(&[der(0x06, OID_CN), der(0x0C, b"kruise-tui embedded cluster")]);
    seq(&[der(0x31, &cn)])
}

fn extension(oid: &[u8], critical: bool, value: Vec<u8>) -> Vec<u8> {
    let mut parts = vec![der(0x06, oid)];
    if critical {
        parts.push(der(0x01, &[0xFF]));
    }
    parts.push(der(0x04, &value));
    seq(&parts)
}

/// Build the self-signed certificate (DER) for the key pair.
fn certificate(key: &EcdsaKeyPair, rng: &SystemRandom) -> anyhow::Result<Vec<u8>> {
    let mut serial = [0u8; 16];
    ring::rand::SecureRandom::fill(rng, &mut serial)
        .map_err(|_| anyhow::anyhow!("no randomness"))?;
    serial[0] &= 0x7F;
    serial[0] |= 0x01;
    let now = jiff::Timestamp::now();
    let not_before = now - jiff::SignedDuration::from_hours(24);
    let not_after = now + jiff::SignedDuration::from_hours(24 * 365 * 5);
    let alg = seq(&[der(0x06, OID_ECDSA_SHA256)]);
    let mut spk = vec![0u8];
    spk.extend_from_slice(key.public_key().as_ref());
    let spki = seq(&[
        seq(&[der(0x06, OID_EC_PUBLIC_KEY), der(0x06, OID_P256)]),
        der(0x03, &spk),
    ]);
    let san = seq(&[
        der(0x87, &[127, 0, 0, 1]),
        der(0x87, &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
        der(0x82, b"localhost"),
    ]);
    // An end-entity certificate (webpki refuses a CA as the server's own certificate); Go and
    // rustls both accept it as its own trust anchor. keyUsage: digitalSignature only.
    let basic = seq(&[]);
    let usage = der(0x03, &[0x07, 0x80]);
    let exts = seq(&[
        extension(OID_BASIC_CONSTRAINTS, true, basic),
        extension(OID_KEY_USAGE, true, usage),
        extension(OID_SAN, false, san),
    ]);
    let tbs = seq(&[
        der(0xA0, &der(0x02, &[2])),
        der(0x02, &serial),
        alg.clone(),
        name(),
        seq(&[utc_time(not_before), utc_time(not_after)]),
        name(),
        spki,
        der(0xA3, &exts),
    ]);
    let sig = key
        .sign(rng, &tbs)
        .map_err(|_| anyhow::anyhow!("signing the certificate failed"))?;
    let mut bits = vec![0u8];
    bits.extend_from_slice(sig.as_ref());
    Ok(seq(&[tbs, alg, der(0x03, &bits)]))
}

impl Tls {
    /// A new key and certificate, and a rustls server config for HTTP/1.1.
    pub fn generate() -> anyhow::Result<Tls> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng)
            .map_err(|_| anyhow::anyhow!("generating the TLS key failed"))?;
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &rng)
            .map_err(|_| anyhow::anyhow!("loading the TLS key failed"))?;
        let cert_der = certificate(&key, &rng)?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .context("TLS protocol versions")?
            .with_no_client_auth()
            .with_single_cert(
                vec![CertificateDer::from(cert_der.clone())],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pkcs8.as_ref().to_vec())),
            )
            .context("TLS certificate")?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Tls {
            cert_der,
            config: Arc::new(config),
        })
    }

    /// The certificate as PEM.
    pub fn cert_pem(&self) -> String {
        let b64 = base64(&self.cert_der);
        let mut out = String::from("-----BEGIN CERTIFICATE-----\n");
        for chunk in b64.as_bytes().chunks(64) {
            out.push_str(&String::from_utf8_lossy(chunk));
            out.push('\n');
        }
        out.push_str("-----END CERTIFICATE-----\n");
        out
    }
}

/// Standard base64 with padding.
pub fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = ((b[0] as u32) << 16) | ((b[1] as u32) << 8) | b[2] as u32;
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if c.len() > 1 {
            T[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if c.len() > 2 {
            T[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_padding() {
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
    }

    #[test]
    fn certificate_parses_as_pem() {
        let t = Tls::generate().unwrap();
        assert!(t.cert_pem().starts_with("-----BEGIN CERTIFICATE-----\n"));
        assert_eq!(t.cert_der[0], 0x30);
    }
}
