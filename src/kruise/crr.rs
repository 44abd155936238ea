//! crr (being ported).
