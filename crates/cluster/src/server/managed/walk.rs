//! structured-merge-diff's walks over an object and its schema: the field set an applied
//! configuration owns, the comparison of two objects, the merge of an applied configuration into
//! the live object, removing a set of fields, and the validation of an applied configuration.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::{
    fieldpath::{self, Pe, Set, display, display_path},
    types::{Atom, ListRel, Ty},
};

/// The path element of a list item (a set value or the item's key fields).
fn item_pe(rel: &ListRel, elem: Ty, item: &Value) -> Result<Pe, String> {
    match rel {
        ListRel::Keys(keys) => {
            let m = match item {
                Value::Object(m) => m,
                Value::Null => {
                    return Err("associative list with keys may not have a null element".into());
                }
                _ => return Err("associative list with keys may not have non-map elements".into()),
            };
            let mut fields = Vec::new();
            for k in keys {
                if let Some(v) = m.get(*k) {
                    fields.push(((*k).to_string(), v.clone()));
                } else if let Some(d) = elem.key_default(k) {
                    fields.push(((*k).to_string(), d));
                }
            }
            if !keys.is_empty() && fields.is_empty() {
                return Err(format!(
                    "associative list with keys has an element that omits all key fields {keys:?} \
                     (and doesn't have default values for any key fields)"
                ));
            }
            Ok(fieldpath::key(&fields))
        }
        ListRel::Set => match item {
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".into())
            }
            Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
            Value::Null => {
                Err("associative list without keys has an element that's an explicit null".into())
            }
            v => Ok(fieldpath::value(v)),
        },
        ListRel::Atomic => Err("invalid indexing of non-associative list".into()),
    }
}

fn at(path: &[Pe], msg: impl std::fmt::Display) -> String {
    if path.is_empty() {
        msg.to_string()
    } else {
        format!("{}: {msg}", display_path(path))
    }
}

fn pes(rel: &ListRel, elem: Ty, items: &[Value], path: &[Pe]) -> Result<Vec<Pe>, String> {
    items
        .iter()
        .enumerate()
        .map(|(i, it)| item_pe(rel, elem, it).map_err(|e| at(path, format!("element {i}: {e}"))))
        .collect()
}

/// Value equality as structured-merge-diff sees it (an integer equals the same float).
pub fn equals(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equals(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| equals(v, w)))
        }
        _ => a == b,
    }
}

fn is_empty_map(v: Option<&Value>) -> bool {
    v.and_then(Value::as_object).is_none_or(Map::is_empty)
}

fn is_empty_list(v: Option<&Value>) -> bool {
    v.and_then(Value::as_array).is_none_or(Vec::is_empty)
}

/// The fields `v` sets (`ToFieldSet`).
pub fn to_set(ty: Ty, v: &Value) -> Result<Set, String> {
    let mut set = Set::new();
    to_set_at(ty, v, &mut Vec::new(), &mut set)?;
    Ok(set)
}

fn to_set_at(ty: Ty, v: &Value, path: &mut Vec<Pe>, set: &mut Set) -> Result<(), String> {
    match ty.atom(Some(v)) {
        Atom::Scalar => set.insert(path),
        Atom::List {
            rel: ListRel::Atomic,
            ..
        } => set.insert(path),
        Atom::List { elem, rel } => {
            let Some(items) = v.as_array() else {
                return Ok(());
            };
            let keys = pes(&rel, elem, items, path)?;
            let mut seen = HashSet::new();
            let mut dups = HashSet::new();
            for pe in &keys {
                if !seen.insert(pe) && dups.insert(pe) {
                    path.push(pe.clone());
                    set.insert(path);
                    path.pop();
                }
            }
            for (pe, item) in keys.iter().zip(items) {
                if dups.contains(pe) {
                    continue;
                }
                path.push(pe.clone());
                to_set_at(elem, item, path, set)?;
                set.insert(path);
                path.pop();
            }
        }
        Atom::Map { atomic: true, .. } => set.insert(path),
        Atom::Map { ty: mty, .. } => {
            let Some(m) = v.as_object() else {
                return Ok(());
            };
            for (k, val) in m {
                path.push(fieldpath::field(k));
                to_set_at(mty.field(k).unwrap_or(Ty::Deduced), val, path, set)?;
                if val.is_null()
                    || val.as_object().is_some_and(Map::is_empty)
                    || mty.declared(k).is_none()
                {
                    set.insert(path);
                }
                path.pop();
            }
        }
    }
    Ok(())
}

/// Which fields `rhs` removed, modified and added relative to `lhs`.
#[derive(Debug, Default)]
pub struct Comparison {
    pub removed: Set,
    pub modified: Set,
    pub added: Set,
}

pub fn compare(ty: Ty, lhs: &Value, rhs: &Value) -> Result<Comparison, String> {
    let mut c = Comparison::default();
    compare_at(ty, Some(lhs), Some(rhs), &mut Vec::new(), &mut c)?;
    Ok(c)
}

fn same_shape(a: &Atom, b: &Atom) -> bool {
    matches!(
        (a, b),
        (Atom::Scalar, Atom::Scalar)
            | (Atom::List { .. }, Atom::List { .. })
            | (Atom::Map { .. }, Atom::Map { .. })
    )
}

fn compare_at(
    ty: Ty,
    l: Option<&Value>,
    r: Option<&Value>,
    path: &mut Vec<Pe>,
    c: &mut Comparison,
) -> Result<(), String> {
    let la = l.map(|v| ty.atom(Some(v)));
    let ra = r.map(|v| ty.atom(Some(v)));
    let in_leaf = match (la, ra) {
        (Some(a), Some(b)) if !same_shape(&a, &b) => {
            compare_atom(a, l, r, path, c)?;
            compare_atom(b, l, r, path, c)?
        }
        (_, Some(b)) => compare_atom(b, l, r, path, c)?,
        (Some(a), None) => compare_atom(a, l, r, path, c)?,
        (None, None) => return Ok(()),
    };
    if !in_leaf {
        if l.is_none() {
            c.added.insert(path);
        } else if r.is_none() {
            c.removed.insert(path);
        }
    }
    Ok(())
}

fn compare_leaf(l: Option<&Value>, r: Option<&Value>, path: &[Pe], c: &mut Comparison) -> bool {
    match (l, r) {
        (None, _) => c.added.insert(path),
        (_, None) => c.removed.insert(path),
        (Some(a), Some(b)) if !equals(a, b) => c.modified.insert(path),
        _ => {}
    }
    true
}

/// Returns whether the node was a leaf.
fn compare_atom(
    atom: Atom,
    l: Option<&Value>,
    r: Option<&Value>,
    path: &mut Vec<Pe>,
    c: &mut Comparison,
) -> Result<bool, String> {
    match atom {
        Atom::Scalar => Ok(compare_leaf(l, r, path, c)),
        Atom::Map { ty, atomic } => {
            if atomic || (is_empty_map(l) && is_empty_map(r)) {
                return Ok(compare_leaf(l, r, path, c));
            }
            let lm = l.and_then(Value::as_object);
            let rm = r.and_then(Value::as_object);
            let mut keys: Vec<&String> = lm.map(|m| m.keys().collect()).unwrap_or_default();
            for k in rm.into_iter().flat_map(|m| m.keys()) {
                if !lm.is_some_and(|m| m.contains_key(k)) {
                    keys.push(k);
                }
            }
            for k in keys {
                path.push(fieldpath::field(k));
                let child = ty.field(k).unwrap_or(Ty::Deduced);
                compare_at(
                    child,
                    lm.and_then(|m| m.get(k)),
                    rm.and_then(|m| m.get(k)),
                    path,
                    c,
                )?;
                path.pop();
            }
            Ok(false)
        }
        Atom::List { elem, rel } => {
            if rel == ListRel::Atomic || (is_empty_list(l) && is_empty_list(r)) {
                return Ok(compare_leaf(l, r, path, c));
            }
            let ll: &[Value] = l.and_then(Value::as_array).map_or(&[], Vec::as_slice);
            let rl: &[Value] = r.and_then(Value::as_array).map_or(&[], Vec::as_slice);
            let lp = pes(&rel, elem, ll, path)?;
            let rp = pes(&rel, elem, rl, path)?;
            let mut order: Vec<&Pe> = Vec::new();
            let mut lv: HashMap<&Pe, Vec<&Value>> = HashMap::new();
            let mut rv: HashMap<&Pe, Vec<&Value>> = HashMap::new();
            for (pe, it) in lp.iter().zip(ll) {
                if !lv.contains_key(pe) {
                    order.push(pe);
                }
                lv.entry(pe).or_default().push(it);
            }
            for (pe, it) in rp.iter().zip(rl) {
                if !rv.contains_key(pe) && !lv.contains_key(pe) {
                    order.push(pe);
                }
                rv.entry(pe).or_default().push(it);
            }
            for pe in order {
                let ls = lv.get(pe).map_or(&[][..], Vec::as_slice);
                let rs = rv.get(pe).map_or(&[][..], Vec::as_slice);
                path.push(pe.clone());
                match (ls.len(), rs.len()) {
                    (0..=1, 0..=1) => {
                        compare_at(elem, ls.first().copied(), rs.first().copied(), path, c)?;
                    }
                    (a, b) if a >= 2 && b >= 2 => {
                        let same = a == b && ls.iter().zip(rs).all(|(x, y)| equals(x, y));
                        if !same {
                            c.modified.insert(path);
                        }
                    }
                    (a, _) if a >= 2 => {
                        if let Some(first) = rs.first() {
                            compare_at(elem, None, Some(first), path, c)?;
                        }
                        c.removed.insert(path);
                    }
                    _ => {
                        if let Some(first) = ls.first() {
                            compare_at(elem, Some(first), None, path, c)?;
                        }
                        c.added.insert(path);
                    }
                }
                path.pop();
            }
            Ok(false)
        }
    }
}

/// The live object with the applied configuration merged in (`TypedValue.Merge`: the
/// configuration's values win; list items merge by key in the configuration's order).
pub fn merge(ty: Ty, live: &Value, config: &Value) -> Result<Value, String> {
    Ok(merge_at(ty, Some(live), Some(config), &mut Vec::new())?.unwrap_or(Value::Null))
}

fn merge_at(
    ty: Ty,
    l: Option<&Value>,
    r: Option<&Value>,
    path: &mut Vec<Pe>,
) -> Result<Option<Value>, String> {
    let atom = match (l.map(|v| ty.atom(Some(v))), r.map(|v| ty.atom(Some(v)))) {
        (_, Some(b)) => b,
        (Some(a), None) => a,
        (None, None) => return Ok(None),
    };
    let leaf = || r.or(l).cloned();
    match atom {
        Atom::Scalar => Ok(leaf()),
        Atom::Map { ty: mty, atomic } => {
            if atomic || (is_empty_map(l) && is_empty_map(r)) {
                return Ok(leaf());
            }
            let lm = l.and_then(Value::as_object);
            let rm = r.and_then(Value::as_object);
            let mut out = Map::new();
            let mut keys: Vec<&String> = lm.map(|m| m.keys().collect()).unwrap_or_default();
            for k in rm.into_iter().flat_map(|m| m.keys()) {
                if !lm.is_some_and(|m| m.contains_key(k)) {
                    keys.push(k);
                }
            }
            for k in keys {
                path.push(fieldpath::field(k));
                let child = mty.field(k).unwrap_or(Ty::Deduced);
                if let Some(v) = merge_at(
                    child,
                    lm.and_then(|m| m.get(k)),
                    rm.and_then(|m| m.get(k)),
                    path,
                )? {
                    out.insert(k.clone(), v);
                }
                path.pop();
            }
            Ok((!out.is_empty()).then_some(Value::Object(out)))
        }
        Atom::List { elem, rel } => {
            if rel == ListRel::Atomic || (is_empty_list(l) && is_empty_list(r)) {
                return Ok(leaf());
            }
            let ll: &[Value] = l.and_then(Value::as_array).map_or(&[], Vec::as_slice);
            let rl: &[Value] = r.and_then(Value::as_array).map_or(&[], Vec::as_slice);
            let out = merge_items(elem, &rel, ll, rl, path)?;
            Ok((!out.is_empty()).then_some(Value::Array(out)))
        }
    }
}

const NULL: Value = Value::Null;

/// `visitListItems` of structured-merge-diff's merging walker: shared items keep the
/// configuration's order, live-only items stay where they were.
fn merge_items(
    elem: Ty,
    rel: &ListRel,
    ll: &[Value],
    rl: &[Value],
    path: &mut Vec<Pe>,
) -> Result<Vec<Value>, String> {
    let rp = pes(rel, elem, rl, path)?;
    let lp = pes(rel, elem, ll, path)?;
    let mut observed_r: HashMap<&Pe, &Value> = HashMap::new();
    for (pe, it) in rp.iter().zip(rl) {
        if observed_r.insert(pe, it).is_some() {
            return Err(at(
                path,
                format!("duplicate entries for key {}", display(pe)),
            ));
        }
    }
    let mut observed_l: HashMap<&Pe, &Value> = HashMap::new();
    for (pe, it) in lp.iter().zip(ll) {
        if observed_l.insert(pe, it).is_some() {
            // Duplicated live items are not merged with the configuration.
            observed_l.insert(pe, &NULL);
        }
    }
    let mut shared: std::collections::VecDeque<&Pe> =
        rp.iter().filter(|pe| observed_l.contains_key(pe)).collect();
    let mut next_shared = shared.pop_front();
    let mut merged_r: HashSet<&Pe> = HashSet::new();
    let mut out = Vec::new();
    let (mut li, mut ri) = (0, 0);
    let mut item = |pe: &Pe, lc: Option<&Value>, rc: Option<&Value>, out: &mut Vec<Value>| {
        path.push(pe.clone());
        let r = merge_at(elem, lc, rc, path);
        path.pop();
        if let Some(v) = r? {
            out.push(v);
        }
        Ok::<(), String>(())
    };
    while li < lp.len() || ri < rp.len() {
        if li < lp.len() && ri < rp.len() {
            let pe = &lp[li];
            if *pe == rp[ri] {
                merged_r.insert(pe);
                item(
                    pe,
                    observed_l.get(pe).copied(),
                    observed_r.get(pe).copied(),
                    &mut out,
                )?;
                li += 1;
                ri += 1;
                next_shared = shared.pop_front();
                continue;
            }
            if observed_r.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < lp.len() {
            let pe = &lp[li];
            if !observed_r.contains_key(pe) {
                item(pe, Some(&ll[li]), None, &mut out)?;
                li += 1;
                continue;
            } else if merged_r.contains(pe) {
                li += 1;
            }
        }
        if ri < rp.len() {
            let pe = &rp[ri];
            merged_r.insert(pe);
            item(
                pe,
                observed_l.get(pe).copied(),
                observed_r.get(pe).copied(),
                &mut out,
            )?;
            ri += 1;
            if next_shared.is_some_and(|n| n == pe) {
                next_shared = shared.pop_front();
            }
        }
    }
    Ok(out)
}

/// `v` without the fields of `set` (`RemoveItems`); None when nothing is left.
pub fn remove_items(ty: Ty, v: &Value, set: &Set) -> Option<Value> {
    match ty.atom(Some(v)) {
        Atom::Scalar => Some(v.clone()),
        Atom::List { elem, rel } => {
            let items = v.as_array()?;
            if items.is_empty() || rel == ListRel::Atomic {
                return None;
            }
            let mut out = Vec::new();
            for it in items {
                let Ok(pe) = item_pe(&rel, elem, it) else {
                    out.push(it.clone());
                    continue;
                };
                if set.has(std::slice::from_ref(&pe)) {
                    continue;
                }
                match set.with_prefix(&pe) {
                    Some(sub) => out.extend(remove_items(elem, it, sub)),
                    None => out.push(it.clone()),
                }
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
        Atom::Map { ty: mty, atomic } => {
            let m = v.as_object()?;
            if m.is_empty() || atomic {
                return None;
            }
            let mut out = Map::new();
            for (k, val) in m {
                let pe = fieldpath::field(k);
                if set.has(std::slice::from_ref(&pe)) {
                    continue;
                }
                match set.with_prefix(&pe) {
                    Some(sub) => {
                        let child = mty.field(k).unwrap_or(Ty::Deduced);
                        if let Some(x) = remove_items(child, val, sub) {
                            out.insert(k.clone(), x);
                        }
                    }
                    None => {
                        out.insert(k.clone(), val.clone());
                    }
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
    }
}

/// `set` with every named (declared) field on its paths made a member.
pub fn ensure_named(ty: Option<Ty>, set: &Set) -> Set {
    let atom = ty.map(|t| t.atom(None));
    let mut out = set.clone();
    for (pe, child) in set.child_elements() {
        let child_ty = match (&atom, pe.strip_prefix("f:"), pe.starts_with("k:")) {
            (Some(Atom::Map { ty: mty, .. }), Some(name), _) => {
                if mty.declared(name).is_some() {
                    out.add_member(pe.clone());
                }
                mty.field(name)
            }
            (Some(Atom::List { elem, .. }), None, true) => Some(*elem),
            _ => None,
        };
        out.set_child(pe.clone(), ensure_named(child_ty, child));
    }
    out
}

/// What structured-merge-diff refuses in an applied configuration: fields the schema does not
/// declare, list items without their keys, duplicated keys.
pub fn validate(ty: Ty, v: &Value) -> Result<(), String> {
    let mut errs = Vec::new();
    validate_at(ty, v, &mut Vec::new(), &mut errs);
    match errs.len() {
        0 => Ok(()),
        1 => Err(errs.remove(0)),
        _ => Err(format!("errors:\n  {}", errs.join("\n  "))),
    }
}

fn validate_at(ty: Ty, v: &Value, path: &mut Vec<Pe>, errs: &mut Vec<String>) {
    match ty.atom(Some(v)) {
        Atom::Scalar => {}
        Atom::List { elem, rel } => {
            let Some(items) = v.as_array() else { return };
            let mut seen = HashSet::new();
            for (i, it) in items.iter().enumerate() {
                let pe = if rel == ListRel::Atomic {
                    format!("i:{i}")
                } else {
                    match item_pe(&rel, elem, it) {
                        Ok(pe) => pe,
                        Err(e) => {
                            errs.push(at(path, format!("element {i}: {e}")));
                            return;
                        }
                    }
                };
                if rel != ListRel::Atomic && !seen.insert(pe.clone()) {
                    errs.push(at(
                        path,
                        format!("duplicate entries for key {}", display(&pe)),
                    ));
                }
                path.push(pe);
                validate_at(elem, it, path, errs);
                path.pop();
            }
        }
        Atom::Map { ty: mty, .. } => {
            let Some(m) = v.as_object() else { return };
            for (k, val) in m {
                path.push(fieldpath::field(k));
                match mty.field(k) {
                    Some(child) => validate_at(child, val, path, errs),
                    None => {
                        errs.push(at(path, "field not declared in schema"));
                        path.pop();
                        return;
                    }
                }
                path.pop();
            }
        }
    }
}

#[cfg(test)]
mod tests;
