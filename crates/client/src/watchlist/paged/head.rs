//! Reading a list's `metadata` (its continue token and resourceVersion) from the head of a body
//! still arriving.
//!
//! kube-apiserver serialises `ListMeta` before `items` (`{"kind":…,"apiVersion":…,
//! "metadata":{…},"items":[…]}`), so the token that asks for the next page is in the first
//! bytes of a page. Nothing guarantees that order: a body whose `items` come first (a proxy that
//! re-serialises, another server) is [`Scan::Absent`] and the caller waits for the whole body.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use serde::de::{DeserializeOwned, IgnoredAny};

/// How far into a body the head may be looked for: past this, it is read with the rest.
pub const MAX_HEAD: usize = 64 << 10;

/// What the bytes received so far say about the list's metadata.
#[derive(Debug, Clone, PartialEq)]
pub enum Scan {
    /// The metadata, complete.
    Found(ListMeta),
    /// Not yet known: more bytes are needed.
    NeedMore,
    /// Not in the head (after `items`, missing, or not JSON as expected): read the whole body.
    Absent,
}

/// Looks for the top-level `metadata` of the list whose first bytes are `buf`.
pub fn scan(buf: &[u8]) -> Scan {
    match walk(buf) {
        Ok(Some(meta)) => Scan::Found(meta),
        Ok(None) => Scan::Absent,
        Err(More) if buf.len() < MAX_HEAD => Scan::NeedMore,
        Err(More) => Scan::Absent,
    }
}

/// The body ended (or the head is incomplete) where more bytes were needed.
struct More;

/// `Ok(None)`: the head holds no metadata before `items` (or is not an object).
fn walk(buf: &[u8]) -> Result<Option<ListMeta>, More> {
    let mut at = skip_ws(buf, 0);
    match buf.get(at) {
        None => return Err(More),
        Some(b'{') => at += 1,
        Some(_) => return Ok(None),
    }
    loop {
        at = skip_ws(buf, at);
        match buf.get(at) {
            None => return Err(More),
            Some(b'"') => {}
            Some(_) => return Ok(None),
        }
        let key: String = match value(buf, &mut at)? {
            Some(key) => key,
            None => return Ok(None),
        };
        at = skip_ws(buf, at);
        match buf.get(at) {
            None => return Err(More),
            Some(b':') => at += 1,
            Some(_) => return Ok(None),
        }
        match key.as_str() {
            "metadata" => {
                let meta: Option<ListMeta> = value(buf, &mut at)?;
                return Ok(meta);
            }
            // The items come first: the metadata, if any, is at the end of the body.
            "items" => return Ok(None),
            _ => {
                if value::<IgnoredAny>(buf, &mut at)?.is_none() {
                    return Ok(None);
                }
            }
        }
        // A value is complete only once what follows it is seen (a number may go on).
        at = skip_ws(buf, at);
        match buf.get(at) {
            None => return Err(More),
            Some(b',') => at += 1,
            Some(_) => return Ok(None),
        }
    }
}

/// The JSON value at `*at`, moving `*at` past it; `Ok(None)` when it is not valid JSON of `T`.
fn value<T: DeserializeOwned>(buf: &[u8], at: &mut usize) -> Result<Option<T>, More> {
    let rest = buf.get(*at..).unwrap_or_default();
    let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<T>();
    match values.next() {
        None => Err(More),
        Some(Ok(v)) => {
            *at += values.byte_offset();
            Ok(Some(v))
        }
        Some(Err(e)) if e.is_eof() => Err(More),
        Some(Err(_)) => Ok(None),
    }
}

fn skip_ws(buf: &[u8], mut at: usize) -> usize {
    while buf.get(at).is_some_and(|b| b.is_ascii_whitespace()) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str = r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"42","continue":"abc","remainingItemCount":7},"items":[{"metadata":{"name":"a"}}]}"#;

    fn meta(rv: &str, tok: Option<&str>) -> ListMeta {
        ListMeta {
            resource_version: Some(rv.into()),
            continue_: tok.map(Into::into),
            remaining_item_count: Some(7),
            ..Default::default()
        }
    }

    #[test]
    fn the_metadata_is_read_as_soon_as_it_is_complete() {
        let end = BODY.find(r#","items""#).unwrap();
        for cut in 0..=BODY.len() {
            let got = scan(&BODY.as_bytes()[..cut]);
            if cut < end {
                assert_eq!(got, Scan::NeedMore, "{cut}");
            } else {
                assert_eq!(got, Scan::Found(meta("42", Some("abc"))), "{cut}");
            }
        }
    }

    #[test]
    fn metadata_after_the_items_is_absent_from_the_head() {
        let body = r#"{"kind":"PodList","items":[{"metadata":{"name":"a"}}],"metadata":{"resourceVersion":"1"}}"#;
        assert_eq!(scan(&body.as_bytes()[..20]), Scan::NeedMore);
        assert_eq!(scan(&body.as_bytes()[..30]), Scan::Absent);
        assert_eq!(scan(body.as_bytes()), Scan::Absent);
    }

    #[test]
    fn whitespace_numbers_and_odd_bodies() {
        let spaced = "{ \"n\" : 12 ,\n \"metadata\" : {\"resourceVersion\":\"5\"} }";
        assert_eq!(
            scan(spaced.as_bytes()),
            Scan::Found(ListMeta {
                resource_version: Some("5".into()),
                ..Default::default()
            })
        );
        // "12" may be the start of "123": not decided before what follows the number.
        assert_eq!(scan(&spaced.as_bytes()[..9]), Scan::NeedMore);
        assert_eq!(scan(b"[1,2]"), Scan::Absent);
        assert_eq!(scan(b"{\"metadata\":[]}"), Scan::Absent);
        assert_eq!(scan(b"{}"), Scan::Absent);
        assert_eq!(scan(b""), Scan::NeedMore);
        let long = format!("{{\"pad\":\"{}\"", "x".repeat(MAX_HEAD));
        assert_eq!(scan(long.as_bytes()), Scan::Absent, "no endless scanning");
    }
}
