//! Which Kruise release a cluster runs, as far as the console can tell, and so which release's
//! rules its predictions follow.

use super::KruiseVersion;

/// How the release was told.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReleaseSource {
    /// The image tag of the cluster's kruise-manager (`kruise-system/kruise-controller-manager`).
    ManagerImage,
    /// `kruise-tui controllers` reconcile this cluster (their leader Lease names the release
    /// whose rules they follow).
    EmbeddedControllers,
    /// Not readable from a manager; the Kruise CRDs' served versions say which release's
    /// schemas are installed (v1.9 serves Advanced DaemonSet and SidecarSet at v1beta1).
    Crds,
    /// Nothing told: the current release is assumed.
    #[default]
    Assumed,
}

/// A cluster's Kruise release.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterRelease {
    /// The rules predictions follow.
    pub version: KruiseVersion,
    /// The manager's image tag (`v1.9.0`), when it could be read.
    pub tag: Option<String>,
    pub source: ReleaseSource,
}

impl ClusterRelease {
    /// A release told by the manager's image tag; None when the tag names no release (`latest`,
    /// a digest).
    pub fn from_image_tag(tag: &str) -> Option<Self> {
        Some(Self {
            version: version_of_tag(tag)?,
            tag: Some(tag.to_owned()),
            source: ReleaseSource::ManagerImage,
        })
    }

    /// What the header shows: the manager's tag, else `unknown` (with the CRDs' release when
    /// they tell one).
    pub fn label(&self) -> String {
        match (&self.tag, self.source) {
            (Some(tag), _) => tag.clone(),
            (None, ReleaseSource::EmbeddedControllers) => {
                format!("{} (kruise-tui controllers)", self.version.name())
            }
            (None, ReleaseSource::Crds) => format!("unknown ({} CRDs)", self.version.name()),
            (None, _) => "unknown".to_owned(),
        }
    }

    /// Which rules a prediction followed, for the prediction's text.
    pub fn assumed(&self) -> String {
        match self.source {
            ReleaseSource::ManagerImage | ReleaseSource::EmbeddedControllers => {
                format!("Kruise {} rules", self.version.name())
            }
            ReleaseSource::Crds => {
                format!("Kruise {} rules (told by the CRDs)", self.version.name())
            }
            ReleaseSource::Assumed => {
                format!("Kruise {} rules (assumed)", self.version.name())
            }
        }
    }
}

/// The release a `v1.9`-style name (the controllers' Lease annotation) means.
pub fn version_of_name(name: &str) -> Option<KruiseVersion> {
    match name.trim() {
        "v1.8" => Some(KruiseVersion::V1_8),
        "v1.9" => Some(KruiseVersion::V1_9),
        _ => None,
    }
}

/// The rules a manager image tag means: `v1.9.0`, `1.9.1`, `v1.10.0-rc1` follow v1.9 (the newest
/// the port knows), `v1.8.4` and older follow v1.8. None when the tag is not a version.
pub fn version_of_tag(tag: &str) -> Option<KruiseVersion> {
    let t = tag.trim().trim_start_matches('v');
    let mut parts = t.split(['.', '-', '+']);
    let major: u32 = parts.next()?.parse().ok()?;
    let minor: u32 = parts.next()?.parse().ok()?;
    Some(if (major, minor) >= (1, 9) {
        KruiseVersion::V1_9
    } else {
        KruiseVersion::V1_8
    })
}

/// The tag of an image reference (`openkruise/kruise-manager:v1.9.0` → `v1.9.0`); None for a
/// digest-only or untagged reference.
pub fn image_tag(image: &str) -> Option<&str> {
    let name = image.split('@').next()?;
    let last = name.rsplit('/').next()?;
    last.split_once(':')
        .map(|(_, tag)| tag)
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_tell_the_release() {
        assert_eq!(version_of_tag("v1.9.0"), Some(KruiseVersion::V1_9));
        assert_eq!(version_of_tag("1.10.2"), Some(KruiseVersion::V1_9));
        assert_eq!(version_of_tag("v1.8.4"), Some(KruiseVersion::V1_8));
        assert_eq!(version_of_tag("v1.5.0-beta"), Some(KruiseVersion::V1_8));
        assert_eq!(version_of_tag("latest"), None);
        assert_eq!(
            image_tag("registry:5000/openkruise/kruise-manager:v1.9.0"),
            Some("v1.9.0")
        );
        assert_eq!(image_tag("openkruise/kruise-manager@sha256:ab"), None);
        assert_eq!(image_tag("registry:5000/kruise-manager"), None);
    }

    #[test]
    fn labels_say_how_the_release_was_told() {
        let image = ClusterRelease::from_image_tag("v1.9.0").unwrap_or_default();
        assert_eq!(image.label(), "v1.9.0");
        let crds = ClusterRelease {
            version: KruiseVersion::V1_8,
            tag: None,
            source: ReleaseSource::Crds,
        };
        assert_eq!(crds.label(), "unknown (v1.8 CRDs)");
        assert_eq!(ClusterRelease::default().label(), "unknown");
        assert!(ClusterRelease::default().assumed().contains("assumed"));
    }
}
