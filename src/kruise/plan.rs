//! plan (being ported).
