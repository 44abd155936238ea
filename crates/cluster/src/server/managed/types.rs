//! The schema structured-merge-diff walks an object with: for a built-in kind, its catalog
//! definition plus the merge markers of [`super::builtin_types`]; for a custom resource, the CRD's
//! structural schema (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
//! `x-kubernetes-map-type`, `x-kubernetes-preserve-unknown-fields`). A node without a schema is
//! "deduced" from its value: scalars are leaves, lists atomic, maps granular.

use std::{collections::HashMap, sync::OnceLock};

use serde_json::Value;

use super::builtin_types::{ATOMIC_MAPS, ATOMIC_STRUCTS, KEY_DEFAULTS, LISTS};
use crate::server::builtin::catalog::{Catalog, catalog};

/// The definition of `metadata` in every kind (a CRD's schema does not describe it).
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// A schema node.
#[derive(Debug, Clone, Copy)]
pub enum Ty<'a> {
    /// A built-in schema node, with the definition it is (when reached by name) and the
    /// (definition, property) it was reached through.
    Builtin {
        schema: &'a Value,
        name: Option<&'a str>,
        owner: Option<(&'a str, &'a str)>,
    },
    /// A CRD structural-schema node; `root` for the object itself (whose `metadata` is ObjectMeta).
    Crd { schema: &'a Value, root: bool },
    /// Untyped: decided by the value.
    Deduced,
}

/// How a list relates its items.
#[derive(Debug, Clone, PartialEq)]
pub enum ListRel<'a> {
    Atomic,
    /// A set of scalars.
    Set,
    /// A map keyed by these item fields.
    Keys(Vec<&'a str>),
}

/// What a node is, for one value.
#[derive(Debug, Clone)]
pub enum Atom<'a> {
    Scalar,
    List { elem: Ty<'a>, rel: ListRel<'a> },
    Map { ty: Ty<'a>, atomic: bool },
}

struct Tables {
    lists: HashMap<(&'static str, &'static str), &'static [&'static str]>,
    atomic_maps: HashMap<(&'static str, &'static str), ()>,
    atomic_structs: HashMap<&'static str, ()>,
}

fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| Tables {
        lists: LISTS.iter().map(|(d, f, k)| ((*d, *f), *k)).collect(),
        atomic_maps: ATOMIC_MAPS.iter().map(|(d, f)| ((*d, *f), ())).collect(),
        atomic_structs: ATOMIC_STRUCTS.iter().map(|d| (*d, ())).collect(),
    })
}

/// The type of a built-in kind's object.
pub fn builtin_root(definition: &str) -> Ty<'static> {
    let c = catalog();
    match c.definitions.get_key_value(definition) {
        Some((name, schema)) => Ty::Builtin {
            schema,
            name: Some(name.as_str()),
            owner: None,
        },
        None => Ty::Deduced,
    }
}

fn object_meta() -> Ty<'static> {
    builtin_root(OBJECT_META)
}

fn cat() -> &'static Catalog {
    catalog()
}

fn kind_of(v: &Value) -> u8 {
    match v {
        Value::Object(_) => 2,
        Value::Array(_) => 1,
        _ => 0,
    }
}

fn deduced(v: Option<&Value>) -> Atom<'static> {
    match v {
        Some(Value::Object(_)) => Atom::Map {
            ty: Ty::Deduced,
            atomic: false,
        },
        Some(Value::Array(_)) => Atom::List {
            elem: Ty::Deduced,
            rel: ListRel::Atomic,
        },
        _ => Atom::Scalar,
    }
}

impl<'a> Ty<'a> {
    /// The atom this node is for `v` (None: no value, from the schema alone). A value of another
    /// shape than the schema's is treated as a leaf.
    pub fn atom(&self, v: Option<&Value>) -> Atom<'a> {
        let atom = self.schema_atom(v);
        match (&atom, v) {
            (_, None | Some(Value::Null)) => atom,
            (Atom::Scalar, Some(x)) if kind_of(x) != 0 => Atom::Scalar,
            (Atom::List { .. }, Some(x)) if kind_of(x) != 1 => Atom::Scalar,
            (Atom::Map { .. }, Some(x)) if kind_of(x) != 2 => Atom::Scalar,
            _ => atom,
        }
    }

    fn schema_atom(&self, v: Option<&Value>) -> Atom<'a> {
        match *self {
            Ty::Deduced => deduced(v),
            Ty::Builtin {
                schema,
                name,
                owner,
            } => {
                let (s, resolved) = cat().resolve(schema);
                let name = resolved.or(name);
                if s.get("x-kubernetes-int-or-string").is_some() {
                    return Atom::Scalar;
                }
                match s.get("type").and_then(Value::as_str) {
                    Some("array") => {
                        let rel = match owner.and_then(|o| tables().lists.get(&o).copied()) {
                            Some([]) => ListRel::Set,
                            Some(keys) => ListRel::Keys(keys.to_vec()),
                            None => ListRel::Atomic,
                        };
                        let elem = match s.get("items") {
                            Some(items) => Ty::Builtin {
                                schema: items,
                                name: None,
                                owner: None,
                            },
                            None => Ty::Deduced,
                        };
                        Atom::List { elem, rel }
                    }
                    Some("object") | None
                        if s.get("properties").is_some()
                            || s.get("additionalProperties").is_some() =>
                    {
                        let atomic = if s.get("properties").is_some() {
                            name.is_some_and(|n| tables().atomic_structs.contains_key(n))
                        } else {
                            owner.is_some_and(|o| tables().atomic_maps.contains_key(&o))
                        };
                        Atom::Map {
                            ty: Ty::Builtin {
                                schema: s,
                                name,
                                owner,
                            },
                            atomic,
                        }
                    }
                    Some("object") | None => deduced(v),
                    Some(_) => Atom::Scalar,
                }
            }
            Ty::Crd { schema: s, root } => {
                if s.get("x-kubernetes-int-or-string").is_some() {
                    return Atom::Scalar;
                }
                match s.get("type").and_then(Value::as_str) {
                    Some("array") => {
                        let rel = match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
                            Some("set") => ListRel::Set,
                            Some("map") => ListRel::Keys(
                                s.get("x-kubernetes-list-map-keys")
                                    .and_then(Value::as_array)
                                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                                    .unwrap_or_default(),
                            ),
                            _ => ListRel::Atomic,
                        };
                        let elem = match s.get("items") {
                            Some(items) => Ty::Crd {
                                schema: items,
                                root: false,
                            },
                            None => Ty::Deduced,
                        };
                        Atom::List { elem, rel }
                    }
                    Some("object")
                        if root
                            || s.get("properties").is_some()
                            || s.get("additionalProperties").is_some_and(Value::is_object) =>
                    {
                        Atom::Map {
                            ty: Ty::Crd { schema: s, root },
                            atomic: s.get("x-kubernetes-map-type").and_then(Value::as_str)
                                == Some("atomic"),
                        }
                    }
                    Some("object") if preserves(s) => deduced(v),
                    Some("object") => Atom::Map {
                        ty: Ty::Crd { schema: s, root },
                        atomic: s.get("x-kubernetes-map-type").and_then(Value::as_str)
                            == Some("atomic"),
                    },
                    None => deduced(v),
                    Some(_) => Atom::Scalar,
                }
            }
        }
    }

    /// The type of the map field `key`: Some(declared), or the element type, or None (not
    /// declared in a map that takes no other fields).
    pub fn field(&self, key: &str) -> Option<Ty<'a>> {
        self.declared(key).or_else(|| self.elem())
    }

    /// The declared field `key` of a struct.
    pub fn declared(&self, key: &str) -> Option<Ty<'a>> {
        match *self {
            Ty::Deduced => None,
            Ty::Builtin { schema, name, .. } => {
                let (s, resolved) = cat().resolve(schema);
                let name = resolved.or(name)?;
                s.get("properties")
                    .and_then(Value::as_object)
                    .and_then(|p| p.get_key_value(key))
                    .map(|(k, f)| Ty::Builtin {
                        schema: f,
                        name: None,
                        owner: Some((name, k.as_str())),
                    })
            }
            Ty::Crd { schema, root } => {
                if root && key == "metadata" {
                    return Some(object_meta());
                }
                if schema.get("x-kubernetes-embedded-resource").is_some()
                    && matches!(key, "apiVersion" | "kind" | "metadata")
                {
                    return Some(if key == "metadata" {
                        object_meta()
                    } else {
                        Ty::Deduced
                    });
                }
                schema
                    .get("properties")
                    .and_then(|p| p.get(key))
                    .map(|f| Ty::Crd {
                        schema: f,
                        root: false,
                    })
            }
        }
    }

    /// The type of undeclared fields, when the map takes any.
    pub fn elem(&self) -> Option<Ty<'a>> {
        match *self {
            Ty::Deduced => Some(Ty::Deduced),
            Ty::Builtin { schema, .. } => {
                let (s, _) = cat().resolve(schema);
                match s.get("additionalProperties") {
                    Some(ap) if ap.is_object() => Some(Ty::Builtin {
                        schema: ap,
                        name: None,
                        owner: None,
                    }),
                    _ if s.get("properties").is_none() => Some(Ty::Deduced),
                    _ => None,
                }
            }
            Ty::Crd { schema, .. } => match schema.get("additionalProperties") {
                Some(ap) if ap.is_object() => Some(Ty::Crd {
                    schema: ap,
                    root: false,
                }),
                _ if preserves(schema) => Some(Ty::Deduced),
                _ => None,
            },
        }
    }

    /// The default of the list-map key field `key` of this item type, if any.
    pub fn key_default(&self, key: &str) -> Option<Value> {
        match *self {
            Ty::Deduced => None,
            Ty::Builtin { schema, name, .. } => {
                let (_, resolved) = cat().resolve(schema);
                let name = resolved.or(name)?;
                KEY_DEFAULTS
                    .iter()
                    .find(|(d, f, _)| *d == name && *f == key)
                    .map(|(_, _, v)| Value::String((*v).to_string()))
            }
            Ty::Crd { schema, .. } => schema
                .get("properties")
                .and_then(|p| p.get(key))
                .and_then(|f| f.get("default"))
                .cloned(),
        }
    }
}

fn preserves(s: &Value) -> bool {
    s.get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builtin_pod_lists_and_maps() {
        let pod = builtin_root("io.k8s.api.core.v1.Pod");
        let spec = pod.field("spec").unwrap();
        let Atom::List { rel, elem } = spec.field("containers").unwrap().atom(None) else {
            panic!("containers is a list")
        };
        assert_eq!(rel, ListRel::Keys(vec!["name"]));
        let Atom::List { rel, elem: port } = elem.field("ports").unwrap().atom(None) else {
            panic!("ports is a list")
        };
        assert_eq!(rel, ListRel::Keys(vec!["containerPort", "protocol"]));
        assert_eq!(port.key_default("protocol"), Some(json!("TCP")));
        assert!(matches!(
            spec.field("nodeSelector").unwrap().atom(None),
            Atom::Map { atomic: true, .. }
        ));
        assert!(matches!(
            spec.field("args").map(|t| t.atom(None)),
            None | Some(Atom::List { .. })
        ));
        let meta = pod.field("metadata").unwrap();
        assert!(meta.declared("labels").is_some() && meta.declared("nope").is_none());
        assert!(meta.field("labels").unwrap().field("anything").is_some());
        let Atom::List { rel, .. } = meta.field("finalizers").unwrap().atom(None) else {
            panic!("finalizers is a list")
        };
        assert_eq!(rel, ListRel::Set);
        let dep = builtin_root("io.k8s.api.apps.v1.Deployment");
        let sel = dep.field("spec").unwrap().field("selector").unwrap();
        assert!(matches!(sel.atom(None), Atom::Map { atomic: true, .. }));
    }

    #[test]
    fn crd_schema_nodes() {
        let s = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "template": {"x-kubernetes-preserve-unknown-fields": true},
            "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                "properties": {"matchLabels": {"type": "object",
                    "additionalProperties": {"type": "string"}}}},
            "items": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
        }}}});
        let root = Ty::Crd {
            schema: &s,
            root: true,
        };
        let spec = root.field("spec").unwrap();
        assert!(spec.field("bogus").is_none());
        let t = spec.field("template").unwrap();
        assert!(matches!(
            t.atom(Some(&json!({"a": 1}))),
            Atom::Map {
                ty: Ty::Deduced,
                ..
            }
        ));
        assert!(matches!(
            spec.field("selector").unwrap().atom(None),
            Atom::Map { atomic: true, .. }
        ));
        assert!(matches!(
            spec.field("items").unwrap().atom(None),
            Atom::List {
                rel: ListRel::Keys(_),
                ..
            }
        ));
        assert!(root.field("metadata").unwrap().declared("labels").is_some());
    }
}
