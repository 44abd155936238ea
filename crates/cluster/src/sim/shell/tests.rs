use jiff::Timestamp;

use super::*;

fn t0() -> Timestamp {
    "2025-03-10T12:00:00Z".parse().unwrap()
}

fn container(image: &str) -> Container {
    Container {
        pod: "web-x".into(),
        namespace: "demo".into(),
        hostname: "web-x".into(),
        container: "main".into(),
        image: image.into(),
        env: vec![
            (
                "PATH".into(),
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into(),
            ),
            ("HOSTNAME".into(), "web-x".into()),
            ("MODE".into(), "demo".into()),
            ("HOME".into(), "/root".into()),
        ],
        pod_ip: "10.1.2.3".into(),
        command: Vec::new(),
        started: t0(),
    }
}

fn argv(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| (*s).to_owned()).collect()
}

/// Stdout and stderr concatenated, and the exit code if it ended.
fn text(ev: &[Event]) -> (String, Option<i32>) {
    let mut s = String::new();
    let mut code = None;
    for e in ev {
        match e {
            Event::Stdout(x) | Event::Stderr(x) => s.push_str(x),
            Event::Exit(c) => code = Some(*c),
            Event::Sleep(_) => {}
        }
    }
    (s, code)
}

fn run(image: &str, a: &[&str]) -> Vec<Event> {
    Session::start(container(image), &argv(a), false, t0()).1
}

#[test]
fn one_shot_programs_print_and_exit() {
    assert_eq!(
        run("nginx:1.25.4", &["hostname"]),
        vec![Event::Stdout("web-x\n".into()), Event::Exit(0)]
    );
    assert_eq!(
        text(&run("nginx:1.25.4", &["cat", "/etc/hostname"])),
        ("web-x\n".into(), Some(0))
    );
    let (env, code) = text(&run("nginx:1.25.4", &["env"]));
    assert_eq!(code, Some(0));
    assert!(
        env.contains("HOSTNAME=web-x\n") && env.contains("MODE=demo\n"),
        "{env}"
    );
    assert_eq!(run("nginx:1.25.4", &["false"]), vec![Event::Exit(1)]);
    let (ps, _) = text(&run("nginx:1.25.4", &["ps"]));
    assert!(
        ps.contains("    1 root      0:00 nginx: master process nginx -g daemon off;"),
        "{ps}"
    );
    let (v, _) = text(&run("nginx:1.25.4", &["nginx", "-v"]));
    assert_eq!(v, "nginx version: nginx/1.25.4\n");
    let (date, _) = text(&run("nginx:1.25.4", &["date"]));
    assert_eq!(date, "Mon Mar 10 12:00:00 UTC 2025\n");
}

#[test]
fn an_unknown_program_is_not_found_with_127() {
    let ev = run("nginx:1.25.4", &["frobnicate", "--now"]);
    assert_eq!(
        ev,
        vec![
            Event::Stderr(
                "OCI runtime exec failed: exec failed: unable to start container process: exec: \"frobnicate\": executable file not found in $PATH: unknown\n"
                    .into()
            ),
            Event::Exit(127)
        ]
    );
    // Alpine-like images have no bash.
    assert_eq!(text(&run("demo/checkout:1.4.2", &["bash"])).1, Some(127));
    assert_eq!(
        text(&run("demo/checkout:1.4.2", &["/bin/ls", "/app"])),
        ("checkout\n".into(), Some(0))
    );
}

#[test]
fn sh_dash_c_runs_a_line_and_exits_with_its_status() {
    let (out, code) = text(&run(
        "nginx:1.25.4",
        &["sh", "-c", "echo $HOSTNAME in $PWD; exit 3; echo never"],
    ));
    assert_eq!((out.as_str(), code), ("web-x in /\n", Some(3)));
    let (out, code) = text(&run(
        "nginx:1.25.4",
        &["sh", "-c", "ls /nope 2>/dev/null || echo missing"],
    ));
    assert_eq!((out.as_str(), code), ("missing\n", Some(0)));
    let (out, code) = text(&run("nginx:1.25.4", &["sh", "-c", "frob && echo no"]));
    assert_eq!((out.as_str(), code), ("sh: frob: not found\n", Some(127)));
    let (out, code) = text(&run("nginx:1.25.4", &["bash", "-c", "frob"]));
    assert_eq!(
        (out.as_str(), code),
        ("bash: frob: command not found\n", Some(127))
    );
    let (out, code) = text(&run("nginx:1.25.4", &["sh", "-c", "echo x > /tmp/f"]));
    assert_eq!(
        (out.as_str(), code),
        ("sh: can't create /tmp/f: Read-only file system\n", Some(1))
    );
    let (out, code) = text(&run("nginx:1.25.4", &["sh", "-c", "ps | grep nginx"]));
    assert_eq!(code, Some(2));
    assert!(
        out.contains("pipeline (|) is not supported by this simulated shell"),
        "{out}"
    );
    let (out, _) = text(&run(
        "nginx:1.25.4",
        &["sh", "-c", "A=1; X=2 env; echo $A; export A; env"],
    ));
    assert!(out.contains("X=2\n"));
    assert!(out.ends_with("A=1\n"), "{out}");
    assert_eq!(
        out.matches("X=2").count(),
        1,
        "X was only in env's environment: {out}"
    );
}

#[test]
fn a_shell_on_piped_stdin_runs_each_line_and_exits_as_told() {
    let (mut s, ev) = Session::start(container("nginx:1.25.4"), &argv(&["sh"]), false, t0());
    assert_eq!(ev, vec![], "no prompt without a terminal");
    let ev = s.input(b"echo hi\nexi", t0());
    assert_eq!(ev, vec![Event::Stdout("hi\n".into())]);
    let ev = s.input(b"t 3\necho never\n", t0());
    assert_eq!(ev, vec![Event::Exit(3)]);
    assert!(s.exited());
    assert_eq!(s.input(b"echo more\n", t0()), vec![]);

    let (mut s, _) = Session::start(container("nginx:1.25.4"), &argv(&["sh"]), false, t0());
    let mut ev = s.input(b"cd /etc/nginx\npwd\nfalse", t0());
    ev.extend(s.close_stdin(t0()));
    assert_eq!(text(&ev), ("/etc/nginx\n".into(), Some(1)));
}

#[test]
fn a_terminal_gets_a_prompt_echo_and_line_editing() {
    let (mut s, ev) = Session::start(container("demo/checkout:1.4.2"), &argv(&["sh"]), true, t0());
    assert_eq!(ev, vec![Event::Stdout("/ # ".into())]);
    let mut out = text(&s.input(b"ecx\x7fho hi\x1b[A\r", t0())).0;
    assert_eq!(out, "ecx\x08 \x08ho hi\r\nhi\r\n/ # ");
    out = text(&s.input(b"cd /etc\r", t0())).0;
    assert_eq!(out, "cd /etc\r\n/etc # ");
    let (out, code) = text(&s.input(b"\x03\x04", t0()));
    assert_eq!(out, "^C\r\n/etc # \r\n");
    assert_eq!(code, Some(130));
}

#[test]
fn k9s_shell_command_picks_bash_where_there_is_one() {
    let k9s = [
        "sh",
        "-c",
        "command -v bash >/dev/null && exec bash || exec sh",
    ];
    let (mut s, ev) = Session::start(container("nginx:1.25.4"), &argv(&k9s), true, t0());
    assert_eq!(ev, vec![Event::Stdout("root@web-x:/# ".into())]);
    let (out, code) = text(&s.input(b"exit 4\r", t0()));
    assert_eq!((out.as_str(), code), ("exit 4\r\n", Some(4)));
    let (_, ev) = Session::start(container("demo/checkout:1.4.2"), &argv(&k9s), true, t0());
    assert_eq!(ev, vec![Event::Stdout("/ # ".into())]);
}

#[test]
fn nested_shells_return_to_the_outer_one() {
    let (mut s, _) = Session::start(container("nginx:1.25.4"), &argv(&["bash"]), true, t0());
    let out = text(&s.input(b"sh\r", t0())).0;
    assert_eq!(out, "sh\r\n/ # ");
    let out = text(&s.input(b"exit 5\r", t0())).0;
    assert_eq!(out, "exit 5\r\nroot@web-x:/# ");
    let (out, code) = text(&s.input(b"echo $?\rexit\r", t0()));
    assert_eq!(out, "echo $?\r\n5\r\nroot@web-x:/# exit\r\n");
    assert_eq!(
        code,
        Some(0),
        "exit without a number: the last status, echo's"
    );
}

#[test]
fn sleep_waits_and_the_clock_moves_with_it() {
    let ev = run("nginx:1.25.4", &["sh", "-c", "sleep 2; date"]);
    assert_eq!(
        ev,
        vec![
            Event::Sleep(Duration::from_secs(2)),
            Event::Stdout("Mon Mar 10 12:00:02 UTC 2025\n".into()),
            Event::Exit(0)
        ]
    );
}

#[test]
fn cat_without_files_copies_its_input() {
    let (mut s, ev) = Session::start(container("nginx:1.25.4"), &argv(&["cat"]), false, t0());
    assert_eq!(ev, vec![]);
    assert_eq!(text(&s.input(b"a\nb", t0())).0, "a\nb");
    assert_eq!(s.close_stdin(t0()), vec![Event::Exit(0)]);
}

#[test]
fn the_filesystem_shows_the_pod_and_the_image() {
    let (out, _) = text(&run(
        "nginx:1.25.4",
        &["sh", "-c", "cat /etc/resolv.conf; ls /etc/nginx; cat /nope"],
    ));
    assert_eq!(
        out,
        "search demo.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n\
         conf.d\nmime.types\nnginx.conf\ncat: /nope: No such file or directory\n"
    );
    let (out, _) = text(&run(
        "demo/checkout:1.5.0-crash",
        &["cat", "/etc/checkout/config.yaml"],
    ));
    assert!(out.contains("${CHECKOUT_UPSTREAM_URL}"), "{out}");
    let (out, _) = text(&run(
        "postgres:16.2",
        &["cat", "/var/lib/postgresql/data/PG_VERSION"],
    ));
    assert_eq!(out, "16\n");
}

#[test]
fn what_a_directory_lists_exists() {
    let (out, code) = text(&run(
        "nginx:1.25.4",
        &["ls", "/docker-entrypoint.sh", "/bin/sh", "/app"],
    ));
    assert_eq!(code, Some(2));
    assert_eq!(
        out,
        "/docker-entrypoint.sh\n/bin/sh\nls: cannot access '/app': No such file or directory\n"
    );
    let (out, code) = text(&run("nginx:1.25.4", &["cat", "/bin/sh"]));
    assert_eq!(code, Some(1));
    assert!(out.starts_with("cat: /bin/sh: a binary file"), "{out}");
}
