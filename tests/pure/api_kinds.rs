//! Checks the kinds table (`api::kinds::KINDS`) against every upstream CRD in `crds/`: names,
//! short names, scope, served and storage versions.

use kruise_tui::api::kinds::{KINDS, Scope, parse_kind};
use serde_json::Value;

fn load_crd(file: &str) -> Value {
    let path = format!("{}/crds/v1.9.0/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn kinds_table_matches_every_crd() {
    let dir = format!("{}/crds/v1.9.0", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".yaml"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 18, "{files:?}");
    for file in &files {
        let crd = load_crd(file);
        let spec = &crd["spec"];
        let group = spec["group"].as_str().unwrap();
        let plural = spec["names"]["plural"].as_str().unwrap();
        let info = KINDS
            .iter()
            .find(|k| k.group == group && k.plural == plural)
            .unwrap_or_else(|| panic!("{file}: no entry in KINDS"));
        assert_eq!(spec["names"]["kind"], info.kind, "{file}");
        assert_eq!(spec["names"]["singular"], info.singular, "{file}");
        let shorts: Vec<&str> = spec["names"]["shortNames"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        assert_eq!(shorts, info.short_names, "{file}");
        let scope = if spec["scope"] == "Cluster" {
            Scope::Cluster
        } else {
            Scope::Namespaced
        };
        assert_eq!(scope, info.scope, "{file}");
        let versions = spec["versions"].as_array().unwrap();
        let storage = versions.iter().find(|v| v["storage"] == true).unwrap();
        // Our types follow the first version listed; the stored one is served too (v1.9.0
        // stores seven kinds at v1beta1, mapped by `api::conversion`).
        assert!(
            storage["name"]
                .as_str()
                .is_some_and(|v| info.versions.contains(&v)),
            "{file}"
        );
        let mut served: Vec<&str> = versions
            .iter()
            .filter(|v| v["served"] == true)
            .filter_map(|v| v["name"].as_str())
            .collect();
        let mut ours = info.versions.to_vec();
        served.sort();
        ours.sort();
        assert_eq!(served, ours, "{file}");
        // The fully qualified plural always resolves to this kind.
        assert_eq!(parse_kind(&format!("{plural}.{group}")).unwrap(), info);
    }
}
