//! updatesort (being ported).
