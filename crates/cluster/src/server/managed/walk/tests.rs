use serde_json::json;

use super::*;
use crate::server::managed::types::builtin_root;

fn spec_ty() -> Ty<'static> {
    builtin_root("io.k8s.api.core.v1.PodSpec")
}

#[test]
fn merge_keeps_the_configurations_order_for_shared_items() {
    let live = json!({"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"},
        {"name": "c", "image": "1"}]});
    let config = json!({"containers": [{"name": "c", "image": "2"}, {"name": "a", "image": "2"}]});
    let out = merge(spec_ty(), &live, &config).unwrap();
    let names: Vec<&str> = out["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["b", "c", "a"]);
    assert_eq!(out["containers"][1]["image"], "2");
}

#[test]
fn compare_reports_added_nodes_and_modified_leaves() {
    let a = json!({"containers": [{"name": "a", "image": "1"}]});
    let b = json!({"containers": [{"name": "a", "image": "2"}, {"name": "b", "image": "1"}],
        "nodeSelector": {"x": "y"}});
    let c = compare(spec_ty(), &a, &b).unwrap();
    assert!(c.modified.has(&[
        "f:containers".into(),
        r#"k:{"name":"a"}"#.into(),
        "f:image".into()
    ]));
    assert!(
        c.added
            .has(&["f:containers".into(), r#"k:{"name":"b"}"#.into()])
    );
    assert!(c.added.has(&["f:nodeSelector".into()]));
    assert!(c.removed.is_empty());
}

#[test]
fn duplicates_and_missing_keys() {
    let dup = json!({"containers": [{"name": "a"}, {"name": "a"}]});
    let s = to_set(spec_ty(), &dup).unwrap();
    assert!(s.has(&["f:containers".into(), r#"k:{"name":"a"}"#.into()]));
    assert_eq!(
        validate(spec_ty(), &dup).unwrap_err(),
        r#".containers: duplicate entries for key [name="a"]"#
    );
    let unnamed = json!({"containers": [{"image": "x"}]});
    assert_eq!(
        validate(spec_ty(), &unnamed).unwrap_err(),
        ".containers: element 0: associative list with keys has an element that omits all key \
         fields [\"name\"] (and doesn't have default values for any key fields)"
    );
}

#[test]
fn remove_items_drops_emptied_maps() {
    let v = json!({"nodeSelector": {"a": "1"}, "hostname": "h"});
    let mut set = Set::new();
    set.insert(&["f:hostname".into()]);
    assert_eq!(
        remove_items(spec_ty(), &v, &set),
        Some(json!({"nodeSelector": {"a": "1"}}))
    );
}
