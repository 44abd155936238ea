//! revision (being ported).
