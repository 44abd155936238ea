//! Authorization: RBAC as the real authorizer evaluates it (Role, ClusterRole with aggregation,
//! RoleBinding, ClusterRoleBinding; verbs, API groups, resources and subresources, resource
//! names, non-resource URLs; subjects by user, group and ServiceAccount), in front of every
//! request. The admin token's user is in `system:masters` and may do anything; a denied request
//! gets the real server's 403. SelfSubjectAccessReview and SelfSubjectRulesReview answer from
//! the same rules. The default policy (discovery, self reviews, view/edit/admin, cluster-admin)
//! is installed at start and aggregated ClusterRoles are kept up to date.

pub mod aggregation;
pub mod bootstrap;
pub mod request;
pub mod resolver;
pub mod reviews;
pub mod rules;

use super::{
    http::{Req, Shared},
    status::ApiError,
};

/// Whether the request's user may make it; the real server's 403 if not.
pub fn authorize_request(shared: &Shared, req: &Req) -> Result<(), ApiError> {
    if req.user.groups.iter().any(|g| g == resolver::MASTERS) {
        return Ok(());
    }
    let attrs = request::attributes(&req.method, &req.path, &|k| req.query.get(k).cloned());
    let decision = resolver::authorize(&shared.store, &req.user, &attrs);
    if decision.allowed {
        Ok(())
    } else {
        Err(request::forbidden(&req.user, &attrs, &decision.reason))
    }
}
