//! `StrMap`: a pod's labels or annotations as one sorted boxed slice of shared strings.
//!
//! A `BTreeMap<String, String>` costs a 544-byte node even for one entry plus two allocations
//! per entry; a pod's four labels here are one 128-byte slice whose keys (and short values) are
//! interned. Lookups binary-search the keys; iteration is in key order, as a `BTreeMap`'s.

use std::{collections::BTreeMap, fmt};

use serde::{
    Deserialize, Deserializer, Serialize, Serializer,
    de::{MapAccess, Visitor},
    ser::SerializeMap,
};

use super::intern::Str;

/// Sorted, unique keys → values. JSON `null` and `{}` read as empty; a key given twice keeps
/// its last value (as a `BTreeMap` does).
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct StrMap(Box<[(Str, Str)]>);

impl StrMap {
    /// From pairs in any order; a repeated key keeps the last value.
    pub fn from_pairs(mut pairs: Vec<(Str, Str)>) -> Self {
        // Stable: equal keys keep their input order, so the last one is the last of its run.
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Str, Str)> = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            match out.last_mut() {
                Some(last) if last.0 == k => last.1 = v,
                _ => out.push((k, v)),
            }
        }
        StrMap(out.into_boxed_slice())
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
            .ok()
            .map(|i| self.0[i].1.as_str())
    }

    /// The shared value of `key` (cloning it is a reference-count increment).
    pub fn get_str(&self, key: &str) -> Option<&Str> {
        self.0
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
            .ok()
            .map(|i| &self.0[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// In key order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.0.iter().map(|(k, _)| k.as_str())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A `BTreeMap` copy, for code written against k8s-openapi's types.
    pub fn to_btree(&self) -> BTreeMap<String, String> {
        self.iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    /// `None` when empty, else a `BTreeMap` copy (the shape of `ObjectMeta.labels`).
    pub fn to_btree_opt(&self) -> Option<BTreeMap<String, String>> {
        (!self.is_empty()).then(|| self.to_btree())
    }
}

impl<K: AsRef<str>, V: AsRef<str>> FromIterator<(K, V)> for StrMap {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        StrMap::from_pairs(
            iter.into_iter()
                .map(|(k, v)| (Str::from(k.as_ref()), Str::from(v.as_ref())))
                .collect(),
        )
    }
}

impl From<BTreeMap<String, String>> for StrMap {
    fn from(map: BTreeMap<String, String>) -> Self {
        map.iter().collect()
    }
}

impl From<Option<BTreeMap<String, String>>> for StrMap {
    fn from(map: Option<BTreeMap<String, String>>) -> Self {
        map.map(StrMap::from).unwrap_or_default()
    }
}

impl fmt::Debug for StrMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for StrMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.iter() {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

struct MapVisitor;

impl<'de> Visitor<'de> for MapVisitor {
    type Value = StrMap;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of strings")
    }
    fn visit_unit<E>(self) -> Result<StrMap, E> {
        Ok(StrMap::default())
    }
    fn visit_none<E>(self) -> Result<StrMap, E> {
        Ok(StrMap::default())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<StrMap, D::Error> {
        d.deserialize_map(MapVisitor)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<StrMap, A::Error> {
        let mut pairs = Vec::with_capacity(access.size_hint().unwrap_or(4).min(64));
        while let Some((k, v)) = access.next_entry::<Str, Str>()? {
            pairs.push((k, v));
        }
        Ok(StrMap::from_pairs(pairs))
    }
}

impl<'de> Deserialize<'de> for StrMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_option(MapVisitor)
    }
}

impl schemars::JsonSchema for StrMap {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        BTreeMap::<String, String>::schema_name()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        BTreeMap::<String, String>::json_schema(generator)
    }
    fn inline_schema() -> bool {
        true
    }
}
