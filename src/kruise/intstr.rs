//! intstr (being ported).
