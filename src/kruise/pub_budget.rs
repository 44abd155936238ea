//! pub_budget (being ported).
