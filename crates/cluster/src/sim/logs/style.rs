//! The words: each image family's banner, periodic lines (`periodic`), shutdown and failure, in
//! the format that family really logs in. Times come from the caller (the layout decides when
//! each line is printed); randomness comes from the caller's seeded draws.

mod periodic;

use jiff::Timestamp;

use super::{Run, hash, mix};
use crate::sim::ids;

/// An image family's log style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Nginx,
    Postgres,
    FluentBit,
    /// logfmt lines; a log shipper (`logtail`, `log-agent`) reports batches, not requests.
    Generic {
        shipper: bool,
    },
}

/// The image's name without registry path, tag or digest (`demo/checkout:1.5` → `checkout`).
pub(crate) fn app(image: &str) -> &str {
    let repo = ids::image_repo(image);
    repo.rsplit('/').next().unwrap_or(repo)
}

/// The image's tag, or its short digest, or `latest`.
fn version(image: &str) -> String {
    if let Some((_, digest)) = image.split_once('@') {
        let short: String = digest.chars().take(19).collect();
        return short;
    }
    let repo = ids::image_repo(image);
    image
        .get(repo.len()..)
        .and_then(|rest| rest.strip_prefix(':'))
        .filter(|t| !t.is_empty())
        .unwrap_or("latest")
        .to_owned()
}

/// A release number from the tag (`1.25.4-alpine` → `1.25.4`).
pub(crate) fn release(image: &str) -> String {
    let v = version(image);
    v.split('-').next().unwrap_or(&v).to_owned()
}

fn ip(r: u64) -> String {
    format!(
        "10.{}.{}.{}",
        (r >> 8) as u8,
        (r >> 16) as u8,
        ((r >> 24) as u8).clamp(2, 254)
    )
}

fn pick<'a>(r: u64, from: &[&'a str]) -> &'a str {
    from[(r % from.len() as u64) as usize]
}

fn nginx_time(t: Timestamp) -> String {
    t.strftime("%Y/%m/%d %H:%M:%S").to_string()
}

fn pg_time(t: Timestamp) -> String {
    t.strftime("%Y-%m-%d %H:%M:%S%.3f UTC").to_string()
}

fn fluent_time(t: Timestamp) -> String {
    t.strftime("[%Y/%m/%d %H:%M:%S]").to_string()
}

fn logfmt_time(t: Timestamp) -> String {
    t.strftime("time=%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// A Go-style duration of whole seconds (`1h2m3s`); negative spans read as 0s.
fn go_duration(secs: i64) -> String {
    crate::gotime::go_duration(secs.max(0).saturating_mul(1_000_000_000))
}

type At<'a> = &'a dyn Fn(usize) -> Timestamp;

impl Style {
    pub(crate) fn of(image: &str) -> Style {
        let name = app(image).to_ascii_lowercase();
        if name.contains("nginx") {
            Style::Nginx
        } else if name.contains("postgres") {
            Style::Postgres
        } else if name.contains("fluent-bit") || name.contains("fluentbit") {
            Style::FluentBit
        } else {
            Style::Generic {
                shipper: name.contains("log"),
            }
        }
    }

    /// The mean gap between periodic lines, in nanoseconds.
    pub(super) fn period_ns(self) -> i128 {
        let secs = match self {
            Style::Nginx => 2,
            Style::Postgres => 6,
            Style::FluentBit => 5,
            Style::Generic { .. } => 3,
        };
        secs * 1_000_000_000
    }

    /// What the run prints as it starts; a run that is going to fail stops before "ready".
    pub(super) fn banner(self, run: &Run, failing: bool, at: At) -> Vec<String> {
        let image = &run.image;
        match self {
            Style::Nginx => {
                let mut v: Vec<String> = [
                    "/docker-entrypoint.sh: /docker-entrypoint.d/ is not empty, will attempt to perform configuration",
                    "/docker-entrypoint.sh: Looking for shell scripts in /docker-entrypoint.d/",
                    "/docker-entrypoint.sh: Launching /docker-entrypoint.d/10-listen-on-ipv6-by-default.sh",
                    "10-listen-on-ipv6-by-default.sh: info: Getting the checksum of /etc/nginx/conf.d/default.conf",
                    "10-listen-on-ipv6-by-default.sh: info: Enabled listen on IPv6 in /etc/nginx/conf.d/default.conf",
                    "/docker-entrypoint.sh: Launching /docker-entrypoint.d/20-envsubst-on-templates.sh",
                    "/docker-entrypoint.sh: Launching /docker-entrypoint.d/30-tune-worker-processes.sh",
                    "/docker-entrypoint.sh: Configuration complete; ready for start up",
                ]
                .map(str::to_owned)
                .to_vec();
                if !failing {
                    let n = v.len();
                    let t = |i: usize| nginx_time(at(n + i));
                    let rel = release(image);
                    v.extend([
                        format!("{} [notice] 1#1: using the \"epoll\" event method", t(0)),
                        format!("{} [notice] 1#1: nginx/{rel}", t(1)),
                        format!(
                            "{} [notice] 1#1: built by gcc 12.2.0 (Debian 12.2.0-14)",
                            t(2)
                        ),
                        format!("{} [notice] 1#1: OS: Linux 6.1.0-kruise-tui", t(3)),
                        format!(
                            "{} [notice] 1#1: getrlimit(RLIMIT_NOFILE): 1048576:1048576",
                            t(4)
                        ),
                        format!("{} [notice] 1#1: start worker processes", t(5)),
                        format!("{} [notice] 1#1: start worker process 29", t(6)),
                        format!("{} [notice] 1#1: start worker process 30", t(7)),
                    ]);
                }
                v
            }
            Style::Postgres => {
                let rel = release(image);
                let t = |i: usize| pg_time(at(i));
                let mut v = vec![
                    "PostgreSQL Database directory appears to contain a database; Skipping initialization".to_owned(),
                    String::new(),
                    format!(
                        "{} [1] LOG:  starting PostgreSQL {rel} (Debian {rel}-1.pgdg120+2) on x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14) 12.2.0, 64-bit",
                        t(2)
                    ),
                ];
                if !failing {
                    let shut = pg_time(at(0) - jiff::SignedDuration::from_secs(3));
                    v.extend([
                        format!("{} [1] LOG:  listening on IPv4 address \"0.0.0.0\", port 5432", t(3)),
                        format!("{} [1] LOG:  listening on IPv6 address \"::\", port 5432", t(4)),
                        format!(
                            "{} [1] LOG:  listening on Unix socket \"/var/run/postgresql/.s.PGSQL.5432\"",
                            t(5)
                        ),
                        format!("{} [29] LOG:  database system was shut down at {shut}", t(6)),
                        format!("{} [1] LOG:  database system is ready to accept connections", t(7)),
                    ]);
                }
                v
            }
            Style::FluentBit => {
                let rel = release(image);
                let commit = format!("{:07x}", hash(&[image]) & 0xfff_ffff);
                let t = |i: usize| fluent_time(at(i));
                let mut v = vec![
                    format!("Fluent Bit v{rel}"),
                    "* Copyright (C) 2015-2024 The Fluent Bit Authors".to_owned(),
                    "* Fluent Bit is a CNCF sub-project under the umbrella of Fluentd".to_owned(),
                    "* https://fluentbit.io".to_owned(),
                    String::new(),
                    format!(
                        "{} [ info] [fluent bit] version={rel}, commit={commit}, pid=1",
                        t(5)
                    ),
                    format!(
                        "{} [ info] [storage] ver=1.5.2, type=memory, sync=normal, checksum=off, max_chunks_up=128",
                        t(6)
                    ),
                    format!("{} [ info] [input:tail:tail.0] initializing", t(7)),
                ];
                if !failing {
                    v.extend([
                        format!("{} [ info] [input:tail:tail.0] storage_strategy='memory' (memory only)", t(8)),
                        format!(
                            "{} [ info] [filter:kubernetes:kubernetes.0] https=1 host=kubernetes.default.svc port=443",
                            t(9)
                        ),
                        format!("{} [ info] [filter:kubernetes:kubernetes.0]  token updated", t(10)),
                        format!("{} [ info] [filter:kubernetes:kubernetes.0] local POD info OK", t(11)),
                        format!(
                            "{} [ info] [filter:kubernetes:kubernetes.0] testing connectivity with API server...",
                            t(12)
                        ),
                        format!("{} [ info] [filter:kubernetes:kubernetes.0] connectivity OK", t(13)),
                        format!("{} [ info] [output:es:es.0] worker #0 started", t(14)),
                        format!("{} [ info] [http_server] listen iface=0.0.0.0 tcp_port=2020", t(15)),
                        format!("{} [ info] [sp] stream processor started", t(16)),
                    ]);
                }
                v
            }
            Style::Generic { shipper } => {
                let name = app(image);
                let t = |i: usize| logfmt_time(at(i));
                let mut v = vec![format!(
                    "{} level=info msg=\"starting {name}\" version={} image={image} pid=1",
                    t(0),
                    version(image)
                )];
                if !failing {
                    let listen = if shipper {
                        "msg=\"watching files\" path=/var/log/app/*.log".to_owned()
                    } else {
                        "msg=listening addr=:8080".to_owned()
                    };
                    v.extend([
                        format!(
                            "{} level=info msg=\"loaded configuration\" path=/etc/{name}/config.yaml",
                            t(1)
                        ),
                        format!("{} level=info {listen}", t(2)),
                        format!("{} level=info msg=ready", t(3)),
                    ]);
                }
                v
            }
        }
    }

    /// What the run prints as it is stopped on request.
    pub(super) fn shutdown(self, run: &Run, at: At) -> Vec<String> {
        let code = run.end.map_or(0, |e| e.code);
        match self {
            Style::Nginx => {
                let t = |i: usize| nginx_time(at(i));
                vec![
                    format!(
                        "{} [notice] 1#1: signal 3 (SIGQUIT) received, shutting down",
                        t(0)
                    ),
                    format!("{} [notice] 29#29: gracefully shutting down", t(1)),
                    format!("{} [notice] 29#29: exiting", t(2)),
                    format!("{} [notice] 29#29: exit", t(3)),
                    format!(
                        "{} [notice] 1#1: signal 17 (SIGCHLD) received from 29",
                        t(4)
                    ),
                    format!(
                        "{} [notice] 1#1: worker process 29 exited with code 0",
                        t(5)
                    ),
                    format!("{} [notice] 1#1: exit", t(6)),
                ]
            }
            Style::Postgres => {
                let t = |i: usize| pg_time(at(i));
                vec![
                    format!("{} [1] LOG:  received fast shutdown request", t(0)),
                    format!("{} [1] LOG:  aborting any active transactions", t(1)),
                    format!(
                        "{} [1] LOG:  background worker \"logical replication launcher\" (PID 32) exited with exit code 1",
                        t(2)
                    ),
                    format!("{} [27] LOG:  shutting down", t(3)),
                    format!(
                        "{} [27] LOG:  checkpoint starting: shutdown immediate",
                        t(4)
                    ),
                    format!("{} [1] LOG:  database system is shut down", t(5)),
                ]
            }
            Style::FluentBit => {
                let t = |i: usize| fluent_time(at(i));
                vec![
                    format!("{} [engine] caught signal (SIGTERM)", t(0)),
                    format!("{} [ info] [input] pausing tail.0", t(1)),
                    format!(
                        "{} [ warn] [engine] service will shutdown in max 5 seconds",
                        t(2)
                    ),
                    format!(
                        "{} [ info] [engine] service has stopped (0 pending tasks)",
                        t(3)
                    ),
                    format!(
                        "{} [ info] [output:es:es.0] thread worker #0 stopping...",
                        t(4)
                    ),
                    format!("{} [ info] [output:es:es.0] thread worker #0 stopped", t(5)),
                ]
            }
            Style::Generic { .. } => {
                let name = app(&run.image);
                let t = |i: usize| logfmt_time(at(i));
                vec![
                    format!(
                        "{} level=info msg=\"received signal, shutting down\" signal=terminated",
                        t(0)
                    ),
                    format!(
                        "{} level=info msg=\"draining connections\" inflight=0",
                        t(1)
                    ),
                    format!("{} level=info msg=\"{name} stopped\" code={code}", t(2)),
                ]
            }
        }
    }

    /// What a failing run prints before it exits on its own; the same failure for every run
    /// of one image.
    pub(super) fn failure(self, run: &Run, at: At) -> Vec<String> {
        let code = run.end.map_or(1, |e| e.code);
        let image = &run.image;
        match self {
            Style::Nginx => {
                let t = nginx_time(at(0));
                let msg = "host not found in upstream \"backend:8080\" in /etc/nginx/conf.d/default.conf:14";
                vec![
                    format!("{t} [emerg] 1#1: {msg}"),
                    format!("nginx: [emerg] {msg}"),
                ]
            }
            Style::Postgres => {
                let t = |i: usize| pg_time(at(i));
                vec![
                    format!(
                        "{} [1] FATAL:  could not load server certificate file \"/var/lib/postgresql/tls/server.crt\": No such file or directory",
                        t(0)
                    ),
                    format!("{} [1] LOG:  database system is shut down", t(1)),
                ]
            }
            Style::FluentBit => {
                let t = |i: usize| fluent_time(at(i));
                vec![
                    format!(
                        "{} [error] [output:es:es.0] cannot resolve host 'elasticsearch.logging.svc': Name or service not known",
                        t(0)
                    ),
                    format!(
                        "{} [error] [engine] could not initialize output plugin es.0",
                        t(1)
                    ),
                    format!("{} [error] [lib] backend failed", t(2)),
                ]
            }
            Style::Generic { .. } => {
                let name = app(image);
                let t = |i: usize| logfmt_time(at(i));
                let mut v = match hash(&[image]) % 3 {
                    0 => {
                        let var = format!(
                            "{}_UPSTREAM_URL",
                            name.to_ascii_uppercase().replace('-', "_")
                        );
                        vec![
                            format!(
                                "{} level=info msg=\"loading configuration\" path=/etc/{name}/config.yaml",
                                t(0)
                            ),
                            format!(
                                "{} level=error msg=\"invalid configuration\" err=\"upstream.url: required environment variable {var} is not set\"",
                                t(1)
                            ),
                        ]
                    }
                    1 => {
                        let db = format!("{name}-db.{}.svc.cluster.local:5432", run.namespace);
                        let err = format!(
                            "dial tcp {}:5432: connect: connection refused",
                            ip(hash(&[&db]))
                        );
                        vec![
                            format!(
                                "{} level=info msg=\"connecting to database\" addr={db}",
                                t(0)
                            ),
                            format!(
                                "{} level=warn msg=\"database not reachable, retrying\" attempt=1 err=\"{err}\"",
                                t(1)
                            ),
                            format!(
                                "{} level=warn msg=\"database not reachable, retrying\" attempt=2 err=\"{err}\"",
                                t(2)
                            ),
                            format!(
                                "{} level=error msg=\"giving up on the database\" attempts=3 err=\"{err}\"",
                                t(3)
                            ),
                        ]
                    }
                    _ => vec![
                        format!(
                            "{} level=info msg=\"running migrations\" from=41 to=42",
                            t(0)
                        ),
                        format!(
                            "{} level=error msg=\"migration failed\" version=42 err=\"pq: column \\\"discount_code\\\" of relation \\\"orders\\\" already exists\"",
                            t(1)
                        ),
                    ],
                };
                let n = v.len();
                v.push(format!(
                    "{} level=error msg=\"{name} exited\" code={code}",
                    t(n)
                ));
                v
            }
        }
    }
}
