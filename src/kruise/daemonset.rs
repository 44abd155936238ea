//! daemonset (being ported).
