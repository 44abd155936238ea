//! How `top` prints: an aligned table with the total, or one JSON object.

use serde_json::{Value, json};

use super::Report;
use crate::app::usage::{Bounds, Figures, format_cpu, format_memory};

fn pair(req: Option<i64>, lim: Option<i64>, fmt: fn(i64) -> String) -> String {
    match (req, lim) {
        (None, None) => "-".to_owned(),
        (r, l) => format!(
            "{}/{}",
            r.map_or_else(|| "-".to_owned(), fmt),
            l.map_or_else(|| "-".to_owned(), fmt)
        ),
    }
}

/// The four cells: usage (`-` when not measured yet) and the requests/limits beside it.
fn cells(f: Option<&Figures>, bounds: &Bounds) -> [String; 4] {
    let b = f.map_or(bounds, |f| &f.bounds);
    [
        f.map_or_else(|| "-".to_owned(), |f| format_cpu(f.cpu)),
        pair(b.cpu_request, b.cpu_limit, format_cpu),
        f.map_or_else(|| "-".to_owned(), |f| format_memory(f.memory)),
        pair(b.memory_request, b.memory_limit, format_memory),
    ]
}

/// The table: NAMESPACE (with -A), POD, CPU, CPU REQ/LIM, MEM, MEM REQ/LIM; with
/// `containers` a line per container under each pod; then the total of the measured pods.
pub fn table(report: &Report, containers: bool) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut head = Vec::new();
    if report.all_namespaces {
        head.push("NAMESPACE".to_owned());
    }
    head.extend(["POD", "CPU", "CPU REQ/LIM", "MEM", "MEM REQ/LIM"].map(str::to_owned));
    rows.push(head);
    for pod in &report.pods {
        let mut row = Vec::new();
        if report.all_namespaces {
            row.push(pod.namespace.clone());
        }
        row.push(pod.name.clone());
        row.extend(cells(pod.figures.as_ref(), &pod.bounds));
        rows.push(row);
        if containers {
            for c in &pod.containers {
                let mut row = Vec::new();
                if report.all_namespaces {
                    row.push(String::new());
                }
                row.push(format!("  {}", c.name));
                row.extend(cells(c.figures.as_ref(), &c.bounds));
                rows.push(row);
            }
        }
    }
    let (total, measured) = report.total();
    let mut row = Vec::new();
    if report.all_namespaces {
        row.push(String::new());
    }
    row.push(format!("TOTAL ({measured}/{} pods)", report.pods.len()));
    row.extend(cells(Some(&total), &total.bounds));
    rows.push(row);
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(line.join("   ").trim_end());
        out.push('\n');
    }
    out
}

fn bounds_json(b: &Bounds) -> Value {
    json!({
        "requests": {"cpuMillis": b.cpu_request, "memoryBytes": b.memory_request},
        "limits": {"cpuMillis": b.cpu_limit, "memoryBytes": b.memory_limit},
    })
}

fn figures_json(f: Option<&Figures>) -> Value {
    match f {
        None => Value::Null,
        Some(f) => json!({
            "cpu": format_cpu(f.cpu),
            "memory": format_memory(f.memory),
            "cpuMillis": f.cpu,
            "memoryBytes": f.memory,
            "resources": bounds_json(&f.bounds),
        }),
    }
}

/// One object: what was measured, each pod (`usage` null when not measured yet) with its
/// containers, and the total.
pub fn json(report: &Report) -> Value {
    let (total, measured) = report.total();
    json!({
        "target": report.what,
        "pods": report.pods.iter().map(|p| json!({
            "namespace": p.namespace,
            "name": p.name,
            "usage": figures_json(p.figures.as_ref()),
            "containers": p.containers.iter().map(|c| json!({
                "name": c.name,
                "usage": figures_json(c.figures.as_ref()),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "total": {"pods": report.pods.len(), "measured": measured, "usage": figures_json(Some(&total))},
    })
}
