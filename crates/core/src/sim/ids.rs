//! Stable, made-up identities a real runtime would hand out: image digests, container IDs, pod
//! IPs. They are pure functions of their inputs, so a status computed twice is byte-equal and the
//! seeder can write what the simulated kubelet would have written.

/// FNV-1a over `bytes`, continuing from `seed`.
pub(super) fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(seed, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// splitmix64's finalizer: every input bit flips about half the output bits.
pub(super) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// 64 hex characters derived from `parts` (a stand-in for a sha256 digest).
pub fn digest_hex(parts: &[&str]) -> String {
    let mut out = String::with_capacity(64);
    for round in 0u64..4 {
        let mut hash = fnv1a(0xcbf2_9ce4_8422_2325 ^ round.wrapping_mul(0x9e37_79b9), b"");
        for part in parts {
            hash = fnv1a(hash, part.as_bytes());
            hash = fnv1a(hash, b"\0");
        }
        out.push_str(&format!("{:016x}", mix(hash)));
    }
    out
}

/// The repository part of an image reference: no tag, no digest.
pub fn image_repo(image: &str) -> &str {
    let without_digest = image.split('@').next().unwrap_or(image);
    // A ':' after the last '/' starts the tag (a ':' before it belongs to a registry port).
    let last_slash = without_digest.rfind('/').map_or(0, |i| i + 1);
    match without_digest[last_slash..].find(':') {
        Some(colon) => &without_digest[..last_slash + colon],
        None => without_digest,
    }
}

/// The `imageID` a container status reports for `image`: `<repo>@sha256:<digest>`.
pub fn image_id(image: &str) -> String {
    if let Some((repo, digest)) = image.split_once('@') {
        return format!("{}@{digest}", image_repo(repo));
    }
    format!("{}@sha256:{}", image_repo(image), digest_hex(&[image]))
}

/// The `containerID` of the `restart_count`-th run of a container.
pub fn container_id(pod_uid: &str, container: &str, restart_count: i32) -> String {
    format!(
        "containerd://{}",
        digest_hex(&[pod_uid, container, &restart_count.to_string()])
    )
}

/// A pod IP in 10.0.0.0/8 derived from the pod's UID (collisions are possible but rare).
pub fn pod_ip(pod_uid: &str) -> String {
    let hash = mix(fnv1a(0xcbf2_9ce4_8422_2325, pod_uid.as_bytes()));
    let [a, b, c] = [(hash >> 16) as u8, (hash >> 8) as u8, hash as u8];
    // Avoid the network and broadcast-looking addresses.
    format!("10.{a}.{b}.{}", c.clamp(2, 254))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_repo_strips_tag_and_digest_but_keeps_registry_port() {
        assert_eq!(image_repo("nginx:1.25"), "nginx");
        assert_eq!(image_repo("nginx"), "nginx");
        assert_eq!(image_repo("reg:5000/team/app:v2"), "reg:5000/team/app");
        assert_eq!(image_repo("reg:5000/team/app"), "reg:5000/team/app");
        assert_eq!(image_repo("app@sha256:abc"), "app");
    }

    #[test]
    fn image_ids_differ_per_tag_and_are_stable() {
        let a = image_id("nginx:1.25");
        assert_eq!(a, image_id("nginx:1.25"));
        assert_ne!(a, image_id("nginx:1.26"));
        assert!(a.starts_with("nginx@sha256:"));
        assert_eq!(a.len(), "nginx@sha256:".len() + 64);
        assert_eq!(image_id("app:1@sha256:abc"), "app@sha256:abc");
    }

    #[test]
    fn container_ids_change_with_each_restart() {
        assert_ne!(container_id("u", "c", 0), container_id("u", "c", 1));
        assert_ne!(container_id("u", "c", 0), container_id("u", "d", 0));
        assert!(container_id("u", "c", 0).starts_with("containerd://"));
    }

    #[test]
    fn pod_ips_are_in_ten_slash_eight() {
        let ip = pod_ip("0b7a4c52-0000-4000-8000-000000000001");
        assert!(ip.starts_with("10."));
        assert_eq!(ip.split('.').count(), 4);
        assert_eq!(ip, pod_ip("0b7a4c52-0000-4000-8000-000000000001"));
    }
}
