//! statefulset (being ported).
