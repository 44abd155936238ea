//! One stored object ([`Obj`]): its JSON bytes and its parsed head.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

/// A stored object: its compact JSON bytes (what lists and watches send, shared by the table,
/// the event window and every watcher) and a parsed head (`apiVersion`, `kind`, `metadata`
/// without `managedFields`: what selectors, indexes and GC read). The full value, and the
/// managedFields, are parsed on demand: a pod's managedFields as a `Value` tree cost several
/// times their 1.5 KiB of JSON, for every pod, and nothing but a write reads them.
#[derive(Debug)]
pub struct Obj {
    pub head: Value,
    pub json: Bytes,
    pub rv: u64,
}

impl Obj {
    pub(super) fn new(value: Value, rv: u64) -> Arc<Obj> {
        let json = Bytes::from(serde_json::to_vec(&value).unwrap_or_default());
        let mut head = serde_json::Map::new();
        if let Value::Object(mut m) = value {
            for k in ["apiVersion", "kind", "metadata"] {
                if let Some(mut v) = m.remove(k) {
                    if let Some(meta) = v.as_object_mut() {
                        meta.remove("managedFields");
                    }
                    head.insert(k.to_string(), v);
                }
            }
        }
        Arc::new(Obj {
            head: Value::Object(head),
            json,
            rv,
        })
    }

    /// The whole object (parsed from its JSON).
    pub fn value(&self) -> Value {
        serde_json::from_slice(&self.json).unwrap_or(Value::Null)
    }

    /// The whole `metadata`, managedFields included (parsed from the JSON; the rest of the
    /// object is skipped, not built).
    pub fn metadata(&self) -> Value {
        #[derive(serde::Deserialize)]
        struct Meta {
            #[serde(default)]
            metadata: Value,
        }
        serde_json::from_slice::<Meta>(&self.json)
            .map(|m| m.metadata)
            .unwrap_or(Value::Null)
    }

    /// The JSON bytes this object holds (what the event window is bounded by).
    pub(super) fn weight(&self) -> usize {
        self.json.len()
    }
}
