//! Kruise Rollout's conversion webhook (`api/v1alpha1/conversion.go`; v1beta1 is the hub) as
//! JSON rewrites of a Rollout or BatchRelease between v1alpha1 and v1beta1.
