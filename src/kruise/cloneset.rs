//! cloneset (being ported).
