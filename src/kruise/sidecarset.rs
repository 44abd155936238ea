//! sidecarset (being ported).
