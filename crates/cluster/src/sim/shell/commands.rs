//! The programs a simulated container has, and the few files it can show: a read-only view
//! made of the pod (hostname, hosts, resolv.conf) and of the image family (nginx's config,
//! PostgreSQL's data directory, fluent-bit's config, an app's config file).

use std::time::Duration;

use jiff::Timestamp;

use super::Container;
use crate::sim::logs::{Style, image_app, image_release};

/// What a program wrote and how it exited.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Io {
    pub out: String,
    pub err: String,
    pub code: i32,
    pub sleep: Option<Duration>,
}

impl Io {
    fn out(out: impl Into<String>) -> Io {
        Io {
            out: out.into(),
            ..Io::default()
        }
    }

    fn fail(err: impl Into<String>, code: i32) -> Io {
        Io {
            err: err.into(),
            code,
            ..Io::default()
        }
    }
}

/// What a program sees when it runs.
pub(super) struct Ctx<'a> {
    pub c: &'a Container,
    pub cwd: &'a str,
    /// The exported environment, in order.
    pub env: Vec<(String, String)>,
    pub now: Timestamp,
    pub tty: bool,
    /// The shell's process ID (for `ps`), None outside a shell.
    pub shell: Option<(u32, &'static str)>,
}

/// Programs every simulated container has (besides the shells and the image's own binary).
const PROGRAMS: [&str; 17] = [
    "cat", "clear", "date", "echo", "env", "false", "hostname", "id", "ls", "printenv", "ps",
    "pwd", "sleep", "true", "uname", "which", "whoami",
];

/// Whether the image is Debian-based (has bash, GNU-style tools).
pub(super) fn has_bash(image: &str) -> bool {
    matches!(Style::of(image), Style::Nginx | Style::Postgres)
}

/// The image's own binary (`nginx`, `postgres`, `fluent-bit`, or the app's name).
fn main_binary(image: &str) -> String {
    match Style::of(image) {
        Style::Nginx => "nginx".into(),
        Style::Postgres => "postgres".into(),
        Style::FluentBit => "fluent-bit".into(),
        Style::Generic { .. } => image_app(image).to_owned(),
    }
}

/// Where `name` is found on the PATH, if the container has it.
pub(super) fn which(image: &str, name: &str) -> Option<String> {
    let known = PROGRAMS.contains(&name)
        || name == "sh"
        || (name == "bash" && has_bash(image))
        || name == main_binary(image);
    known.then(|| {
        if name == main_binary(image) && !PROGRAMS.contains(&name) {
            format!("/usr/local/bin/{name}")
        } else {
            format!("/bin/{name}")
        }
    })
}

/// The program a path or name runs (`/bin/ls` → `ls`), if it is on the PATH.
pub(super) fn program(image: &str, arg0: &str) -> Option<String> {
    let name = arg0.rsplit('/').next().unwrap_or(arg0);
    let path = which(image, name)?;
    (!arg0.contains('/') || arg0 == path || arg0 == format!("/usr{path}")).then(|| name.to_owned())
}

fn debian(image: &str) -> bool {
    has_bash(image)
}

/// Directory listing of the simulated filesystem.
fn dir(c: &Container, path: &str) -> Option<Vec<String>> {
    let style = Style::of(&c.image);
    let app = image_app(&c.image);
    let mut v: Vec<String> = match path {
        "/" => {
            let mut v = vec![
                "bin", "dev", "etc", "home", "lib", "media", "mnt", "opt", "proc", "root", "run",
                "sbin", "srv", "sys", "tmp", "usr", "var",
            ];
            match style {
                Style::Nginx => v.extend(["docker-entrypoint.d", "docker-entrypoint.sh"]),
                Style::Postgres => v.push("docker-entrypoint-initdb.d"),
                Style::FluentBit => v.push("fluent-bit"),
                Style::Generic { .. } => v.push("app"),
            }
            v.into_iter().map(str::to_owned).collect()
        }
        "/etc" => {
            let mut v: Vec<String> = ["hostname", "hosts", "os-release", "passwd", "resolv.conf"]
                .map(str::to_owned)
                .to_vec();
            match style {
                Style::Nginx => v.push("nginx".into()),
                Style::Generic { .. } => v.push(app.to_owned()),
                _ => {}
            }
            v
        }
        "/etc/nginx" if style == Style::Nginx => {
            vec!["conf.d".into(), "mime.types".into(), "nginx.conf".into()]
        }
        "/etc/nginx/conf.d" if style == Style::Nginx => vec!["default.conf".into()],
        "/usr/share/nginx/html" if style == Style::Nginx => {
            vec!["50x.html".into(), "index.html".into()]
        }
        "/var/lib/postgresql/data" if style == Style::Postgres => [
            "PG_VERSION",
            "base",
            "global",
            "pg_hba.conf",
            "pg_wal",
            "postgresql.conf",
        ]
        .map(str::to_owned)
        .to_vec(),
        "/fluent-bit" if style == Style::FluentBit => vec!["bin".into(), "etc".into()],
        "/fluent-bit/etc" if style == Style::FluentBit => {
            vec!["fluent-bit.conf".into(), "parsers.conf".into()]
        }
        "/app" if matches!(style, Style::Generic { .. }) => vec![app.to_owned()],
        p if p == format!("/etc/{app}") && matches!(style, Style::Generic { .. }) => {
            vec!["config.yaml".into()]
        }
        "/bin" => {
            let mut v: Vec<String> = PROGRAMS.iter().map(|p| (*p).to_owned()).collect();
            v.push("sh".into());
            if has_bash(&c.image) {
                v.push("bash".into());
            }
            v
        }
        "/proc" => ["1", "cpuinfo", "meminfo", "self", "uptime", "version"]
            .map(str::to_owned)
            .to_vec(),
        "/usr" => vec![
            "bin".into(),
            "lib".into(),
            "local".into(),
            "sbin".into(),
            "share".into(),
        ],
        "/usr/local" => vec!["bin".into()],
        "/usr/local/bin" => vec![main_binary(&c.image)],
        "/var" => vec![
            "cache".into(),
            "lib".into(),
            "log".into(),
            "run".into(),
            "tmp".into(),
        ],
        "/var/lib" if style == Style::Postgres => vec!["postgresql".into()],
        "/var/lib/postgresql" if style == Style::Postgres => vec!["data".into()],
        "/usr/share" if style == Style::Nginx => vec!["nginx".into()],
        "/usr/share/nginx" if style == Style::Nginx => vec!["html".into()],
        "/dev" => [
            "null", "random", "stderr", "stdin", "stdout", "tty", "urandom", "zero",
        ]
        .map(str::to_owned)
        .to_vec(),
        "/home" | "/media" | "/mnt" | "/opt" | "/root" | "/run" | "/srv" | "/sys" | "/tmp"
        | "/lib" | "/sbin" | "/var/cache" | "/var/lib" | "/var/log" | "/var/run" | "/var/tmp"
        | "/usr/bin" | "/usr/lib" | "/usr/sbin" => Vec::new(),
        _ => return None,
    };
    v.sort();
    Some(v)
}

/// The contents of a file of the simulated filesystem.
fn file(ctx: &Ctx, path: &str) -> Option<String> {
    let c = ctx.c;
    let style = Style::of(&c.image);
    let app = image_app(&c.image);
    let rel = image_release(&c.image);
    Some(match path {
        "/etc/hostname" => format!("{}\n", c.hostname),
        "/etc/hosts" => format!(
            "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n\
             fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n{}\t{}\n",
            c.pod_ip, c.hostname
        ),
        "/etc/resolv.conf" => format!(
            "search {ns}.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n",
            ns = c.namespace
        ),
        "/etc/os-release" if debian(&c.image) => "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n\
             VERSION_ID=\"12\"\nVERSION=\"12 (bookworm)\"\nVERSION_CODENAME=bookworm\nID=debian\n\
             HOME_URL=\"https://www.debian.org/\"\n"
            .to_owned(),
        "/etc/os-release" => "NAME=\"Alpine Linux\"\nID=alpine\nVERSION_ID=3.20.3\nPRETTY_NAME=\"Alpine Linux v3.20\"\n\
             HOME_URL=\"https://alpinelinux.org/\"\n"
            .to_owned(),
        "/etc/passwd" => {
            let mut s = "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n".to_owned();
            match style {
                Style::Nginx => s.push_str("nginx:x:101:101:nginx user:/nonexistent:/bin/false\n"),
                Style::Postgres => s.push_str("postgres:x:999:999::/var/lib/postgresql:/bin/bash\n"),
                _ => {}
            }
            s
        }
        "/etc/nginx/nginx.conf" if style == Style::Nginx => "user  nginx;\nworker_processes  auto;\n\n\
             error_log  /var/log/nginx/error.log notice;\npid        /var/run/nginx.pid;\n\n\
             events {\n    worker_connections  1024;\n}\n\nhttp {\n    include       /etc/nginx/mime.types;\n\
             \x20   default_type  application/octet-stream;\n    access_log  /var/log/nginx/access.log  main;\n\
             \x20   sendfile        on;\n    keepalive_timeout  65;\n    include /etc/nginx/conf.d/*.conf;\n}\n"
            .to_owned(),
        "/etc/nginx/conf.d/default.conf" if style == Style::Nginx => "server {\n    listen       80;\n\
             \x20   listen  [::]:80;\n    server_name  localhost;\n\n    location / {\n\
             \x20       root   /usr/share/nginx/html;\n        index  index.html index.htm;\n    }\n\n\
             \x20   location /healthz {\n        return 200 'ok';\n    }\n}\n"
            .to_owned(),
        "/usr/share/nginx/html/index.html" if style == Style::Nginx => {
            "<!DOCTYPE html>\n<html>\n<head>\n<title>Welcome to nginx!</title>\n</head>\n<body>\n\
             <h1>Welcome to nginx!</h1>\n</body>\n</html>\n"
                .to_owned()
        }
        "/var/lib/postgresql/data/PG_VERSION" if style == Style::Postgres => {
            format!("{}\n", rel.split('.').next().unwrap_or(&rel))
        }
        "/fluent-bit/etc/fluent-bit.conf" if style == Style::FluentBit => "[SERVICE]\n    Flush        1\n\
             \x20   Log_Level    info\n    HTTP_Server  On\n    HTTP_Port    2020\n\n[INPUT]\n    Name   tail\n\
             \x20   Path   /var/log/containers/*.log\n    Tag    kube.*\n\n[FILTER]\n    Name   kubernetes\n\
             \x20   Match  kube.*\n\n[OUTPUT]\n    Name   es\n    Match  *\n    Host   elasticsearch.logging.svc\n"
            .to_owned(),
        p if matches!(style, Style::Generic { .. }) && p == format!("/etc/{app}/config.yaml") => {
            let var = format!("{}_UPSTREAM_URL", app.to_ascii_uppercase().replace('-', "_"));
            format!("listen: \":8080\"\nlogLevel: info\nupstream:\n  url: \"${{{var}}}\"\n  timeout: 5s\n")
        }
        "/proc/version" => "Linux version 6.1.0-kruise-tui (simulated) #1 SMP PREEMPT_DYNAMIC\n".to_owned(),
        "/proc/uptime" => {
            let up = (ctx.now.as_second() - c.started.as_second()).max(0);
            format!("{up}.00 {}.00\n", up * 2)
        }
        _ => return None,
    })
}

/// `path` made absolute against `cwd`, with `.` and `..` resolved.
pub(super) fn absolute(cwd: &str, path: &str) -> String {
    let joined = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("{cwd}/{path}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for p in joined.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Whether `path` is a directory of the simulated filesystem.
pub(super) fn is_dir(c: &Container, path: &str) -> bool {
    dir(c, path).is_some()
}

/// Whether the directory holding `abs` lists it (programs, scripts: files without contents
/// to show).
fn listed(c: &Container, abs: &str) -> bool {
    let (parent, name) = abs.rsplit_once('/').unwrap_or(("", abs));
    let parent = if parent.is_empty() { "/" } else { parent };
    dir(c, parent).is_some_and(|entries| entries.iter().any(|e| e == name))
}

/// The contents of `path` for `<` redirections and `cat`.
pub(super) fn read(ctx: &Ctx, path: &str) -> Result<String, String> {
    let abs = absolute(ctx.cwd, path);
    if is_dir(ctx.c, &abs) {
        return Err(format!("{path}: Is a directory"));
    }
    match file(ctx, &abs) {
        Some(contents) => Ok(contents),
        None if listed(ctx.c, &abs) => Err(format!(
            "{path}: a binary file; this simulated container shows only text files"
        )),
        None => Err(format!("{path}: No such file or directory")),
    }
}

fn ls(ctx: &Ctx, args: &[String]) -> Io {
    let paths: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let all = args.iter().any(|a| a.starts_with('-') && a.contains('a'));
    let targets: Vec<String> = if paths.is_empty() {
        vec![".".to_owned()]
    } else {
        paths.iter().map(|p| (*p).clone()).collect()
    };
    let mut io = Io::default();
    for (i, p) in targets.iter().enumerate() {
        let abs = absolute(ctx.cwd, p);
        let sep = if ctx.tty { "  " } else { "\n" };
        if let Some(mut entries) = dir(ctx.c, &abs) {
            if all {
                entries.splice(0..0, [".".to_owned(), "..".to_owned()]);
            }
            if targets.len() > 1 {
                io.out
                    .push_str(&format!("{}{p}:\n", if i > 0 { "\n" } else { "" }));
            }
            if !entries.is_empty() {
                io.out.push_str(&entries.join(sep));
                io.out.push('\n');
            }
        } else if file(ctx, &abs).is_some() || listed(ctx.c, &abs) {
            io.out.push_str(&format!("{p}\n"));
        } else {
            io.err.push_str(&format!(
                "ls: cannot access '{p}': No such file or directory\n"
            ));
            io.code = 2;
        }
    }
    io
}

fn ps(ctx: &Ctx) -> Io {
    let c = ctx.c;
    let main = if c.command.is_empty() {
        match Style::of(&c.image) {
            Style::Nginx => "nginx: master process nginx -g daemon off;".to_owned(),
            Style::Postgres => "postgres".to_owned(),
            Style::FluentBit => {
                "/fluent-bit/bin/fluent-bit -c /fluent-bit/etc/fluent-bit.conf".to_owned()
            }
            Style::Generic { .. } => format!("/usr/local/bin/{}", image_app(&c.image)),
        }
    } else {
        c.command.join(" ")
    };
    let mut rows: Vec<(u32, &str, String)> = vec![(1, "root", main)];
    match Style::of(&c.image) {
        Style::Nginx => {
            rows.push((29, "nginx", "nginx: worker process".into()));
            rows.push((30, "nginx", "nginx: worker process".into()));
        }
        Style::Postgres => {
            rows[0].1 = "postgres";
            for (pid, what) in [
                (27, "checkpointer"),
                (28, "background writer"),
                (30, "walwriter"),
                (31, "autovacuum launcher"),
                (32, "logical replication launcher"),
            ] {
                rows.push((pid, "postgres", format!("postgres: {what}")));
            }
        }
        _ => {}
    }
    let next = match ctx.shell {
        Some((pid, name)) => {
            rows.push((pid, "root", name.to_owned()));
            pid + 6
        }
        None => 41,
    };
    rows.push((next, "root", "ps".into()));
    let mut out = "PID   USER     TIME  COMMAND\n".to_owned();
    for (pid, user, cmd) in rows {
        out.push_str(&format!("{pid:>5} {user:<8}  0:00 {cmd}\n"));
    }
    Io::out(out)
}

fn version(c: &Container, name: &str) -> Io {
    let rel = image_release(&c.image);
    match Style::of(&c.image) {
        // nginx prints its version on stderr.
        Style::Nginx => Io {
            err: format!("nginx version: nginx/{rel}\n"),
            ..Io::default()
        },
        Style::Postgres => Io::out(format!("postgres (PostgreSQL) {rel}\n")),
        Style::FluentBit => Io::out(format!("Fluent Bit v{rel}\n")),
        Style::Generic { .. } => Io::out(format!("{name} {rel}\n")),
    }
}

/// Runs the program `name` (as [`program`] resolved it) with `args`; `stdin` is what a `<`
/// redirection gave it.
pub(super) fn run(ctx: &Ctx, name: &str, args: &[String], stdin: Option<&str>) -> Io {
    let c = ctx.c;
    match name {
        "echo" => {
            let (newline, rest) = match args.first().map(String::as_str) {
                Some("-n") => (false, &args[1..]),
                _ => (true, args),
            };
            let mut s = rest.join(" ");
            if newline {
                s.push('\n');
            }
            Io::out(s)
        }
        "hostname" => Io::out(format!("{}\n", c.hostname)),
        "env" | "printenv" if args.is_empty() => Io::out(
            ctx.env
                .iter()
                .map(|(k, v)| format!("{k}={v}\n"))
                .collect::<String>(),
        ),
        "printenv" => {
            let mut io = Io::default();
            for a in args {
                match ctx.env.iter().find(|(k, _)| k == a) {
                    Some((_, v)) => io.out.push_str(&format!("{v}\n")),
                    None => io.code = 1,
                }
            }
            io
        }
        "env" => Io::fail(
            format!("env: '{}': No such file or directory\n", args[0]),
            127,
        ),
        "cat" => {
            let mut io = Io::default();
            if args.is_empty() {
                io.out = stdin.unwrap_or_default().to_owned();
            }
            for a in args {
                match read(ctx, a) {
                    Ok(s) => io.out.push_str(&s),
                    Err(e) => {
                        io.err.push_str(&format!("cat: {e}\n"));
                        io.code = 1;
                    }
                }
            }
            io
        }
        "ls" => ls(ctx, args),
        "pwd" => Io::out(format!("{}\n", ctx.cwd)),
        "ps" => ps(ctx),
        "date" => Io::out(format!(
            "{}\n",
            ctx.now.strftime("%a %b %e %H:%M:%S UTC %Y")
        )),
        "whoami" => Io::out("root\n"),
        "id" => Io::out("uid=0(root) gid=0(root) groups=0(root)\n"),
        "uname" if args.iter().any(|a| a == "-a") => Io::out(format!(
            "Linux {} 6.1.0-kruise-tui #1 SMP PREEMPT_DYNAMIC x86_64 GNU/Linux\n",
            c.hostname
        )),
        "uname" => Io::out("Linux\n"),
        "true" => Io::default(),
        "false" => Io::fail("", 1),
        "clear" => Io::out("\x1b[H\x1b[2J"),
        "which" => {
            let mut io = Io::default();
            for a in args {
                match which(&c.image, a) {
                    Some(p) => io.out.push_str(&format!("{p}\n")),
                    None => io.code = 1,
                }
            }
            io
        }
        "sleep" => match args.first().and_then(|a| a.parse::<f64>().ok()) {
            Some(s) if s >= 0.0 => Io {
                sleep: Some(Duration::from_secs_f64(s.min(3600.0))),
                ..Io::default()
            },
            _ => Io::fail("sleep: invalid number\n", 1),
        },
        _ if args
            .iter()
            .any(|a| a == "--version" || a == "-v" || a == "-V") =>
        {
            version(c, name)
        }
        _ => Io::fail(
            format!("{name}: this simulated container's {name} only answers --version\n"),
            1,
        ),
    }
}
