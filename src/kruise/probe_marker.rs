//! probe_marker (being ported).
