//! The lines a running container prints between its banner and its end: access logs,
//! checkpoints, flushes and health lines, in each family's format.

use jiff::Timestamp;

use super::{Run, Style, app, fluent_time, go_duration, ip, logfmt_time, mix, pg_time, pick};

impl Style {
    /// Periodic line `k`, printed at `t`, from the seeded draw `r`.
    pub(in crate::sim::logs) fn periodic(self, run: &Run, k: u64, r: u64, t: Timestamp) -> String {
        let r2 = mix(r);
        match self {
            Style::Nginx => {
                let (path, status, size, agent) = match r % 10 {
                    0..=2 => ("/healthz", 200, 2, "kube-probe/1.32"),
                    3 => (
                        "/",
                        200,
                        615,
                        "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0",
                    ),
                    4 => ("/index.html", 200, 615, "curl/8.5.0"),
                    5 => (
                        "/api/cart",
                        200,
                        180 + r2 % 900,
                        "Mozilla/5.0 (Macintosh) Safari/605.1.15",
                    ),
                    6 => (
                        "/static/app.js",
                        200,
                        48_213,
                        "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0",
                    ),
                    7 => (
                        "/static/style.css",
                        304,
                        0,
                        "Mozilla/5.0 (Windows NT 10.0) Chrome/126.0",
                    ),
                    8 => (
                        "/api/products?page=2",
                        200,
                        2_000 + r2 % 6_000,
                        "Mozilla/5.0 (Windows NT 10.0) Chrome/126.0",
                    ),
                    _ => (
                        "/favicon.ico",
                        404,
                        153,
                        "Mozilla/5.0 (Windows NT 10.0) Chrome/126.0",
                    ),
                };
                format!(
                    "{} - - [{}] \"GET {path} HTTP/1.1\" {status} {size} \"-\" \"{agent}\" \"-\"",
                    ip(r2),
                    t.strftime("%d/%b/%Y:%H:%M:%S +0000")
                )
            }
            Style::Postgres => {
                let pid = 100 + r2 % 9_000;
                let what = match k % 40 {
                    0 if k > 0 => "LOG:  checkpoint starting: time".to_owned(),
                    1 if k > 1 => format!(
                        "LOG:  checkpoint complete: wrote {} buffers ({}.{}%); 0 WAL file(s) added, 0 removed, 0 recycled; write={}.{:03} s, sync=0.00{} s, total={}.{:03} s",
                        3 + r2 % 60,
                        r2 % 2,
                        r2 % 10,
                        r2 % 3,
                        r2 % 1000,
                        1 + r2 % 9,
                        r2 % 3,
                        (r2 >> 10) % 1000
                    ),
                    _ => match r % 8 {
                        0..=2 => format!(
                            "LOG:  connection received: host={} port={}",
                            ip(r2),
                            30_000 + r2 % 30_000
                        ),
                        3..=5 => format!(
                            "LOG:  connection authorized: user=app database=app application_name={}",
                            pick(r2, &["checkout", "web", "psql", "pgbouncer"])
                        ),
                        6 => format!(
                            "LOG:  disconnection: session time: 0:00:{:02}.{:03} user=app database=app host={} port={}",
                            r2 % 60,
                            (r2 >> 8) % 1000,
                            ip(r2),
                            30_000 + r2 % 30_000
                        ),
                        _ => format!(
                            "LOG:  duration: {}.{:03} ms  statement: SELECT * FROM orders WHERE customer_id = {} ORDER BY created_at DESC LIMIT 50",
                            1_000 + r2 % 4_000,
                            (r2 >> 12) % 1000,
                            r2 % 100_000
                        ),
                    },
                };
                format!("{} [{pid}] {what}", pg_time(t))
            }
            Style::FluentBit => {
                let chunk = format!("1-{}.{:09}.flb", t.as_second(), t.subsec_nanosecond());
                let what = match r % 6 {
                    0..=2 => format!(
                        "[ info] [input:tail:tail.0] inotify_fs_add(): inode={} watch_fd={} name=/var/log/containers/{}-{:05x}_{}_app-{:016x}.log",
                        1_000_000 + r2 % 9_000_000,
                        3 + r2 % 60,
                        pick(r2 >> 3, &["web", "checkout", "db", "api"]),
                        r2 & 0xfffff,
                        run.namespace,
                        mix(r2)
                    ),
                    3 => format!(
                        "[ info] [input:tail:tail.0] inotify_fs_remove(): inode={} watch_fd={}",
                        1_000_000 + r2 % 9_000_000,
                        3 + r2 % 60
                    ),
                    4 => format!(
                        "[ warn] [engine] failed to flush chunk '{chunk}', retry in {} seconds: task_id={}, input=tail.0 > output=es.0 (out_id=0)",
                        2 + r2 % 10,
                        r2 % 8
                    ),
                    _ => format!(
                        "[ info] [engine] flush chunk '{chunk}' succeeded at retry 1: task_id={}, input=tail.0 > output=es.0 (out_id=0)",
                        r2 % 8
                    ),
                };
                format!("{} {what}", fluent_time(t))
            }
            Style::Generic { shipper } => {
                let name = app(&run.image);
                let uptime = go_duration(t.as_second() - run.started.as_second());
                let what = if k % 20 == 19 {
                    format!(
                        "level=info msg=heartbeat uptime={uptime} goroutines={}",
                        12 + r2 % 30
                    )
                } else if shipper {
                    format!(
                        "level=info msg=\"shipped batch\" file=/var/log/app/{} lines={} bytes={} dest=logs.kruise-system.svc:24224",
                        pick(r2, &["access.log", "error.log", "app.log"]),
                        1 + r2 % 80,
                        200 + (r2 >> 8) % 20_000
                    )
                } else if r.is_multiple_of(25) {
                    format!(
                        "level=warn msg=\"slow request\" method=GET path=/api/{name}/{} duration={}ms",
                        r2 % 10_000,
                        800 + r2 % 2_000
                    )
                } else {
                    let (method, status) = match r % 10 {
                        0..=5 => ("GET", 200),
                        6 | 7 => ("POST", 201),
                        8 => ("GET", 404),
                        _ => ("GET", 304),
                    };
                    let path = match r2 % 4 {
                        0 => "/healthz".to_owned(),
                        1 => format!("/api/{name}"),
                        _ => format!("/api/{name}/{}", r2 % 10_000),
                    };
                    format!(
                        "level=info msg=\"request served\" method={method} path={path} status={status} duration={}.{}ms",
                        1 + r2 % 40,
                        (r2 >> 7) % 10
                    )
                };
                format!("{} {what}", logfmt_time(t))
            }
        }
    }
}
