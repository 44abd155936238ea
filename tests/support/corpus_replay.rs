//! Replaying one apiserver-corpus case against a server: placeholders, requests, watches,
//! captures, and the comparison of each answer with the recorded one.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Request};
use http_body_util::BodyExt as _;
use kruise_tui::cluster::server::{EmbeddedCluster, meta::random_suffix};
use serde_json::{Map, Value, json};

use crate::corpus::{self, Masks, ObjectRules, Vars};

/// A server under test: its URL and admin token.
pub struct Server {
    url: String,
    token: String,
}

/// One answer, as read.
struct Answer {
    code: u16,
    headers: HeaderMap,
    body: Bytes,
    /// A watch's events (a 200 watch only).
    events: Option<Vec<Value>>,
}

/// `application/x-www-form-urlencoded`, as Python's `urlencode`.
fn form_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn str_list(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

impl Server {
    pub fn embedded(c: &EmbeddedCluster) -> Server {
        Server {
            url: c.url(),
            token: c.token().to_string(),
        }
    }

    async fn client(&self, auth: Option<&str>) -> kube::Client {
        let mut config = kube::Config::new(self.url.parse().expect("a URL"));
        config.auth_info.token = auth.map(|t| t.to_string().into());
        config.read_timeout = Some(Duration::from_secs(60));
        kube::Client::try_from(config).expect("a client")
    }

    /// Sends one step; a watch reads events until its `until` or its timeout.
    async fn send(&self, step: &Value, vars: &Vars) -> Result<Answer, String> {
        let method = step["method"].as_str().unwrap_or("GET");
        let mut uri = vars.fill(step["path"].as_str().unwrap_or("/"));
        if let Some(q) = step["query"].as_object() {
            let parts: Vec<String> = q
                .iter()
                .map(|(k, v)| {
                    let v = v
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string());
                    format!(
                        "{}={}",
                        form_encode(&vars.fill(k)),
                        form_encode(&vars.fill(&v))
                    )
                })
                .collect();
            if !parts.is_empty() {
                uri = format!("{uri}?{}", parts.join("&"));
            }
        }
        let token = match step["auth"].as_str().unwrap_or("admin") {
            "admin" => Some(self.token.clone()),
            "none" => None,
            "bad" => Some("not-a-valid-token-0123456789".to_string()),
            other => Some(vars.fill(other)),
        };
        let body: Vec<u8> = if let Some(raw) = step["rawBody"].as_str() {
            vars.fill(raw).into_bytes()
        } else if !step["body"].is_null() {
            serde_json::to_vec(&vars.fill_value(&step["body"])).map_err(|e| e.to_string())?
        } else {
            Vec::new()
        };
        let mut req = Request::builder().method(method).uri(uri.as_str()).header(
            "Accept",
            step["accept"].as_str().unwrap_or("application/json"),
        );
        if !body.is_empty() {
            req = req.header(
                "Content-Type",
                step["contentType"].as_str().unwrap_or("application/json"),
            );
        }
        let req = req
            .body(kube::client::Body::from(body))
            .map_err(|e| e.to_string())?;
        let client = self.client(token.as_deref()).await;
        let secs = step["timeout"].as_f64().unwrap_or(30.0);
        let resp = tokio::time::timeout(Duration::from_secs_f64(secs), client.send(req))
            .await
            .map_err(|_| format!("{method} {uri}: no answer in {secs} s"))?
            .map_err(|e| format!("{method} {uri}: {e}"))?;
        let code = resp.status().as_u16();
        let headers = resp.headers().clone();
        let mut body = resp.into_body();
        if step["watch"].is_object() && code == 200 {
            let w = &step["watch"];
            let until = w["until"].as_u64().map(|n| n as usize);
            let until_end = w["untilInitialEventsEnd"].as_bool().unwrap_or(false);
            let deadline = Duration::from_secs_f64(w["timeout"].as_f64().unwrap_or(10.0));
            let mut events = Vec::new();
            let mut buf: Vec<u8> = Vec::new();
            let read = async {
                while let Some(frame) = body.frame().await {
                    let Ok(frame) = frame else { break };
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    buf.extend_from_slice(&data);
                    while let Some(nl) = buf.iter().position(|b| *b == b'\n') {
                        let line: Vec<u8> = buf.drain(..=nl).collect();
                        let Ok(ev) = serde_json::from_slice::<Value>(&line) else {
                            continue;
                        };
                        let end = is_initial_end(&ev);
                        let counted = ev["type"] != "BOOKMARK" || end;
                        if counted {
                            events.push(ev);
                        }
                        if (until_end && end) || until.is_some_and(|n| events.len() >= n) {
                            return;
                        }
                    }
                }
            };
            let _ = tokio::time::timeout(deadline, read).await;
            return Ok(Answer {
                code,
                headers,
                body: Bytes::new(),
                events: Some(events),
            });
        }
        let bytes = tokio::time::timeout(Duration::from_secs_f64(secs), body.collect())
            .await
            .map_err(|_| format!("{method} {uri}: the body did not end in {secs} s"))?
            .map_err(|e| format!("{method} {uri}: {e}"))?
            .to_bytes();
        Ok(Answer {
            code,
            headers,
            body: bytes,
            events: None,
        })
    }

    /// Runs a case in a fresh namespace; Err says which step answered otherwise, with both answers.
    pub async fn run_case(&self, case: &Value) -> Result<(), String> {
        let suffix = random_suffix(8);
        let mut vars = Vars::default();
        vars.0.insert("NS".into(), format!("corpus-{suffix}"));
        vars.0
            .insert("NAME".into(), format!("n{}", random_suffix(8)));
        vars.0
            .insert("NAME2".into(), format!("m{}", random_suffix(8)));
        vars.0
            .insert("NAME3".into(), format!("p{}", random_suffix(8)));
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "$NS"}});
        let create_ns = json!({"method": "POST", "path": "/api/v1/namespaces", "body": ns});
        let a = self.send(&create_ns, &vars).await?;
        if a.code != 201 {
            return Err(format!("creating the namespace answered {}", a.code));
        }
        if case["needsSA"] == true {
            let get =
                json!({"method": "GET", "path": "/api/v1/namespaces/$NS/serviceaccounts/default"});
            for _ in 0..50 {
                if self.send(&get, &vars).await.is_ok_and(|a| a.code == 200) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        let mut outcome = Ok(());
        for (i, step) in case["steps"].as_array().into_iter().flatten().enumerate() {
            if let Err(e) = self.run_step(case, step, &mut vars).await {
                outcome = Err(format!(
                    "  step {i}: {} {}\n{e}",
                    step["method"].as_str().unwrap_or(""),
                    step["path"].as_str().unwrap_or("")
                ));
                break;
            }
        }
        for step in case["cleanup"].as_array().into_iter().flatten() {
            let _ = self.send(step, &vars).await;
        }
        let delete_ns = json!({"method": "DELETE", "path": "/api/v1/namespaces/$NS"});
        let _ = self.send(&delete_ns, &vars).await;
        outcome
    }

    async fn run_step(&self, case: &Value, step: &Value, vars: &mut Vars) -> Result<(), String> {
        let answer = self.send(step, vars).await?;
        let parsed: Option<Value> = serde_json::from_slice(&answer.body).ok();
        if let (Some(cap), Some(body)) = (step["capture"].as_object(), &parsed) {
            for (var, path) in cap {
                let got = path.as_str().and_then(|p| corpus::at(body, p));
                let value = match got {
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(Value::Null) | None => None,
                    Some(v) => Some(v.to_string()),
                };
                if let Some(v) = value {
                    vars.0.insert(var.clone(), v);
                }
            }
        }
        if let Some(secs) = step["sleepAfter"].as_f64() {
            tokio::time::sleep(Duration::from_secs_f64(secs)).await;
        }
        let Some(expect) = step.get("expect") else {
            return Ok(());
        };
        let actual = if step["check"] == "code" {
            json!({"code": answer.code})
        } else {
            normalize(case, step, vars, &answer, parsed.as_ref())
        };
        let expect_cmp = if step["check"] == "code" {
            json!({"code": expect["code"]})
        } else {
            expect.clone()
        };
        if actual == expect_cmp {
            Ok(())
        } else {
            Err(format!("  expected {expect_cmp}\n  answered {actual}"))
        }
    }
}

fn is_initial_end(ev: &Value) -> bool {
    ev["type"] == "BOOKMARK"
        && ev["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true"
}

fn warnings(h: &HeaderMap, masks: &Masks, vars: &Vars) -> Vec<String> {
    let mut out: Vec<String> = h
        .get_all("warning")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(|v| {
            // `299 - "text"`, with `\"` and `\\` escaped inside the quotes.
            let text = v.split_once('"').map(|(_, t)| t).unwrap_or(v);
            let text = text.strip_suffix('"').unwrap_or(text);
            masks.apply(&vars.unfill(&text.replace("\\\"", "\"").replace("\\\\", "\\")))
        })
        .collect();
    out.sort();
    out
}

/// The answer in the recorded form.
fn normalize(case: &Value, step: &Value, vars: &Vars, a: &Answer, parsed: Option<&Value>) -> Value {
    let extra: Vec<(String, String)> = step["maskMessage"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p[0].as_str()?.to_string(), p[1].as_str()?.to_string())))
        .collect();
    let masks = Masks::new(&extra);
    let mut out = Map::new();
    out.insert("code".into(), json!(a.code));
    let w = warnings(&a.headers, &masks, vars);
    if !w.is_empty() {
        out.insert("warnings".into(), json!(w));
    }
    if let Some(events) = &a.events {
        let evs: Vec<Value> = events
            .iter()
            .map(|e| event(e, step, vars, &masks))
            .collect();
        out.insert("events".into(), Value::Array(evs));
        return Value::Object(out);
    }
    let Some(body) = parsed else {
        out.insert("nonJSON".into(), json!(true));
        return Value::Object(out);
    };
    let kind = body["kind"].as_str().unwrap_or("");
    if kind == "Status" {
        out.insert(
            "status".into(),
            corpus::status(&vars.unfill_value(body), &masks),
        );
    } else if let Some(x) = step["extract"].as_str() {
        out.insert("body".into(), vars.unfill_value(&digest(x, step, body)));
    } else if kind == "Table" {
        out.insert("table".into(), vars.unfill_value(&corpus::table(body)));
    } else if kind.ends_with("List") && body.get("items").is_some() {
        out.insert("list".into(), vars.unfill_value(&corpus::list(body)));
    } else {
        let rules = ObjectRules {
            managed_fields: case["managedFields"] == true,
            keep_status: case["keepStatus"] == true,
            mask: str_list(&step["mask"]),
            drop: str_list(&step["drop"]),
            select: str_list(&step["select"]),
        };
        out.insert(
            "object".into(),
            vars.unfill_value(&corpus::object(body, &rules)),
        );
    }
    Value::Object(out)
}

fn event(e: &Value, step: &Value, vars: &Vars, masks: &Masks) -> Value {
    let t = e["type"].as_str().unwrap_or("");
    let o = &e["object"];
    if t == "ERROR" {
        return json!({"type": "ERROR", "status": corpus::status(&vars.unfill_value(o), masks)});
    }
    if t == "BOOKMARK" {
        return json!({"type": "BOOKMARK", "kind": o["kind"], "initialEventsEnd": true});
    }
    let mut out = json!({
        "type": t,
        "kind": o["kind"],
        "name": vars.unfill(o["metadata"]["name"].as_str().unwrap_or("")),
    });
    for p in str_list(&step["eventSelect"]) {
        out[p] = corpus::at(o, p)
            .cloned()
            .unwrap_or_else(|| json!("<absent>"));
    }
    out
}

/// The discovery digests of the README's `extract`.
fn digest(x: &str, step: &Value, body: &Value) -> Value {
    let expected = &step["expect"]["body"];
    match x {
        "core" => json!({"kind": body["kind"], "versions": body["versions"]}),
        "groups" => {
            let mut groups = Map::new();
            for g in body["groups"].as_array().into_iter().flatten() {
                let name = g["name"].as_str().unwrap_or("");
                if expected["groups"].get(name).is_some() {
                    groups.insert(name.into(), group_digest(g));
                }
            }
            json!({"kind": body["kind"], "groups": groups})
        }
        "group" => {
            let mut g = group_digest(body);
            g["kind"] = body["kind"].clone();
            g["name"] = body["name"].clone();
            g
        }
        "resources" => {
            let only = str_list(&step["resources"]);
            let mut res = Map::new();
            for r in body["resources"].as_array().into_iter().flatten() {
                let name = r["name"].as_str().unwrap_or("");
                if !only.is_empty() && !only.contains(&name) {
                    continue;
                }
                let mut d = json!({"namespaced": r["namespaced"], "kind": r["kind"]});
                let mut verbs: Vec<&str> = str_list(&r["verbs"]);
                verbs.sort();
                d["verbs"] = json!(verbs);
                let mut short: Vec<&str> = str_list(&r["shortNames"]);
                if !short.is_empty() {
                    short.sort();
                    d["shortNames"] = json!(short);
                }
                for k in ["group", "version", "singularName"] {
                    if let Some(s) = r[k].as_str().filter(|s| !s.is_empty()) {
                        d[k] = json!(s);
                    }
                }
                let cats = str_list(&r["categories"]);
                if !cats.is_empty() {
                    d["categories"] = json!(cats);
                }
                res.insert(name.into(), d);
            }
            json!({"kind": body["kind"], "groupVersion": body["groupVersion"], "resources": res})
        }
        "keys" => {
            let mut keys: Vec<&String> = body
                .as_object()
                .map(|m| m.keys().collect())
                .unwrap_or_default();
            keys.sort();
            json!({"keys": keys})
        }
        "openapi" => {
            let needle = step["pathContains"].as_str().unwrap_or("kruise");
            let mut paths: Vec<&String> = body["paths"]
                .as_object()
                .map(|m| m.keys().filter(|k| k.contains(needle)).collect())
                .unwrap_or_default();
            paths.sort();
            json!({"paths": paths})
        }
        "aggregated" => {
            let only = str_list(&step["groups"]);
            let mut groups = Map::new();
            for g in body["items"].as_array().into_iter().flatten() {
                let name = g["metadata"]["name"].as_str().unwrap_or("");
                if !only.contains(&name) {
                    continue;
                }
                let mut versions = Map::new();
                for v in g["versions"].as_array().into_iter().flatten() {
                    let mut names: Vec<&str> = v["resources"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|r| r["resource"].as_str())
                        .collect();
                    names.sort();
                    versions.insert(v["version"].as_str().unwrap_or("").into(), json!(names));
                }
                groups.insert(name.into(), Value::Object(versions));
            }
            json!({"kind": body["kind"], "apiVersion": body["apiVersion"], "groups": groups})
        }
        _ => json!({"unknown extract": x}),
    }
}

fn group_digest(g: &Value) -> Value {
    let versions: Vec<&Value> = g["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| &v["groupVersion"])
        .collect();
    json!({"preferredVersion": g["preferredVersion"]["groupVersion"], "versions": versions})
}
