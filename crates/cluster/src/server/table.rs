//! `as=Table` responses for `kubectl get`: CRD additionalPrinterColumns, pods' usual columns,
//! namespaces' status, and NAME/AGE for the rest.

mod builtin;

use std::sync::Arc;

use serde_json::{Value, json};

use super::{
    http::Req,
    jsonpath,
    resources::{PrinterColumn, ResourceInfo},
    store::Obj,
};

pub fn wants_table(req: &Req) -> bool {
    req.header(http::header::ACCEPT).contains("as=Table")
}

/// `kubectl`-style age: 45s, 3m10s, 12m, 5h3m, 20h, 3d4h, 12d.
pub fn age(ts: &str) -> String {
    let Ok(t) = ts.parse::<jiff::Timestamp>() else {
        return "<unknown>".into();
    };
    human((jiff::Timestamp::now().as_second() - t.as_second()).max(0))
}

pub use crate::gotime::human;

/// A printer column's cell, as the real server's CRD table convertor computes it.
fn cell(obj: &Value, c: &PrinterColumn) -> Value {
    let Some(q) = &c.query else {
        return Value::Null;
    };
    let results = jsonpath::eval(q, obj);
    jsonpath::cell(&c.type_, &results, |ts| {
        ts.parse::<jiff::Timestamp>().ok().map(|_| age(ts))
    })
}

fn col(name: &str, type_: &str, priority: i64) -> Value {
    let format = if name == "Name" { "name" } else { "" };
    json!({"name": name, "type": type_, "format": format, "description": "", "priority": priority})
}

/// Computes a row's cells.
type CellsFn = Box<dyn Fn(&Value) -> Vec<Value>>;

fn name_of(o: &Value) -> Value {
    o["metadata"]["name"].clone()
}

fn age_of(o: &Value) -> Value {
    json!(age(o["metadata"]["creationTimestamp"]
        .as_str()
        .unwrap_or("")))
}

fn num(v: &Value) -> Value {
    json!(v.as_i64().unwrap_or(0))
}

/// A Table of these objects.
pub fn table(
    res: &ResourceInfo,
    items: &[Arc<Obj>],
    continue_token: Option<String>,
    rv: u64,
) -> Value {
    let (cols, cells): (Vec<Value>, CellsFn) = if !res.printer_columns.is_empty() {
        let pcs = res.printer_columns.clone();
        let mut cols = vec![col("Name", "string", 0)];
        // The CRD's column types as declared (`integer`, `date`, `string`, ...), as the real
        // server's CRD table convertor lists them.
        cols.extend(pcs.iter().map(|c| col(&c.name, &c.type_, c.priority)));
        let f = move |o: &Value| {
            let mut c = vec![name_of(o)];
            c.extend(pcs.iter().map(|p| cell(o, p)));
            c
        };
        (cols, Box::new(f))
    } else if let Some(b) = builtin::columns(res) {
        b
    } else {
        (
            vec![col("Name", "string", 0), col("Age", "string", 0)],
            Box::new(|o: &Value| vec![name_of(o), age_of(o)]),
        )
    };
    let rows: Vec<Value> = items
        .iter()
        .map(|o| {
            json!({
                "cells": cells(&o.value()),
                "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o.metadata()},
            })
        })
        .collect();
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if let Some(t) = continue_token {
        meta["continue"] = json!(t);
    }
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "columnDefinitions": cols, "rows": rows})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printer_columns_and_ages() {
        let v = json!({"metadata": {"labels": {"crr.apps.kruise.io/node-name": "n1"}},
            "spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}});
        let column = |path: &str, type_: &str| PrinterColumn {
            name: "C".into(),
            type_: type_.into(),
            json_path: path.into(),
            priority: 0,
            query: jsonpath::compile(path).ok().map(Arc::new),
        };
        assert_eq!(
            cell(&v, &column(".spec.containers[*].name", "string")),
            json!("a")
        );
        assert_eq!(
            cell(&v, &column(".spec.containers[1].image", "string")),
            json!("y")
        );
        assert_eq!(
            cell(
                &v,
                &column(
                    r".metadata.labels.crr\.apps\.kruise\.io/node-name",
                    "string"
                )
            ),
            json!("n1")
        );
        assert_eq!(cell(&v, &column(".spec.missing", "string")), Value::Null);
        assert_eq!(age("bogus"), "<unknown>");
        assert!(age(&super::super::meta::now()).ends_with('s'));
    }
}
