//! protection (being ported).
