//! The default RBAC policy (`bootstrap.yaml`) installed when the server starts, labelled and
//! annotated as the real server labels its defaults.

use serde_json::{Value, json};

use super::resolver::RBAC;
use crate::server::store::Store;

const POLICY: &str = include_str!("bootstrap.yaml");

/// The default ClusterRoles and ClusterRoleBindings as full objects.
pub fn objects() -> anyhow::Result<Vec<Value>> {
    let items: Vec<Value> = serde_saphyr::from_str(POLICY)
        .map_err(|e| anyhow::anyhow!("the built-in RBAC policy does not parse: {e}"))?;
    Ok(items
        .into_iter()
        .map(|mut item| {
            item["apiVersion"] = json!(RBAC);
            let meta = &mut item["metadata"];
            meta["labels"]["kubernetes.io/bootstrapping"] = json!("rbac-defaults");
            meta["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] = json!("true");
            item
        })
        .collect())
}

/// Stores the default policy (objects already there are left as they are).
pub fn install(store: &Store) -> anyhow::Result<()> {
    for obj in objects()? {
        match store.create(obj) {
            Ok(_) => {}
            Err(e) if e.code == 409 => {}
            Err(e) => anyhow::bail!("cannot store the default RBAC policy: {e}"),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_parses_and_every_binding_names_a_role_it_defines() {
        let objects = objects().unwrap();
        let roles: Vec<&str> = objects
            .iter()
            .filter(|o| o["kind"] == "ClusterRole")
            .filter_map(|o| o["metadata"]["name"].as_str())
            .collect();
        for binding in objects.iter().filter(|o| o["kind"] == "ClusterRoleBinding") {
            let role = binding["roleRef"]["name"].as_str().unwrap();
            assert!(roles.contains(&role), "{role}");
        }
        assert!(roles.contains(&"view") && roles.contains(&"cluster-admin"));
    }
}
