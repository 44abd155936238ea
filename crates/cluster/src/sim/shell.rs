//! A tiny simulated shell per container, for `kubectl exec` against the embedded cluster: pure
//! (input bytes and the time in, output events out), so the API server's exec endpoint only
//! moves bytes.
//!
//! `sh` (every image) and `bash` (Debian-based images: nginx, postgres) read lines, with a
//! prompt when a terminal is attached (`/ # `, `root@HOST:/# `); `sh -c 'STRING'` runs one
//! line. A line holds commands joined by `;`, `&&`, `||`, with quotes, `$VAR`, `~`,
//! redirections to `/dev/null` and between stdout and stderr (`parse`). Built in: `exit [N]`,
//! `cd`, `export`, `unset`, `exec`, `command -v`. Programs (`commands`): `hostname`, `env`,
//! `printenv`, `cat` (the pod's `/etc/hostname`, `/etc/hosts`, `/etc/resolv.conf`, the image's
//! config files), `ls`, `pwd`, `ps` (the image's main process), `echo`, `date`, `sleep`, `id`,
//! `whoami`, `uname`, `which`, `true`, `false`, `clear`, and the image's binary `--version`. An
//! unknown command exits 127 (`sh: NAME: not found`, bash's `command not found`; run directly,
//! the runtime's `executable file not found in $PATH`). Pipelines, background jobs, subshells
//! and command substitution are refused with a message that says so; files cannot be written
//! (the filesystem is read-only).
//!
//! With a terminal the session is its line discipline too: it echoes, erases (Backspace,
//! Ctrl-U), interrupts (Ctrl-C), ends on Ctrl-D, ignores escape sequences (arrow keys), and
//! writes `\r\n` for `\n`.

mod commands;
mod parse;

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use parse::{Join, Redirect};

/// The container a session runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container {
    pub pod: String,
    pub namespace: String,
    pub hostname: String,
    pub container: String,
    pub image: String,
    /// The environment the container's processes see, in order.
    pub env: Vec<(String, String)>,
    pub pod_ip: String,
    /// The container's command and args from its spec (empty: the image's default).
    pub command: Vec<String>,
    pub started: Timestamp,
}

/// What a session does, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Stdout(String),
    Stderr(String),
    /// Nothing happens for this long (`sleep`).
    Sleep(Duration),
    /// The process ended with this code; nothing follows.
    Exit(i32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavor {
    Sh,
    Bash,
}

impl Flavor {
    fn name(self) -> &'static str {
        match self {
            Flavor::Sh => "sh",
            Flavor::Bash => "bash",
        }
    }
}

/// What runs in the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Shells reading lines (innermost last).
    Shell,
    /// `cat` copying its input.
    Cat,
    Done,
}

/// How a list of commands ended.
enum Flow {
    /// Went on; the last status.
    Next(i32),
    /// `exit N`.
    Exit(i32),
    /// `exec sh`/`exec bash`: the shell process became an interactive shell.
    Become(Flavor),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Escape {
    #[default]
    None,
    Started,
    Csi,
}

/// A shell variable; exported ones are in the environment.
#[derive(Debug, Clone)]
struct Var {
    name: String,
    value: String,
    exported: bool,
}

/// One `kubectl exec` process in a simulated container.
pub struct Session {
    c: Container,
    tty: bool,
    state: State,
    levels: Vec<Flavor>,
    cwd: String,
    vars: Vec<Var>,
    last: i32,
    /// The terminal line being edited, or the unterminated input line.
    line: String,
    utf8: Vec<u8>,
    escape: Escape,
    /// Where `now` stands within a line (after its sleeps).
    clock: SignedDuration,
}

const SHELL_PID: u32 = 41;
const MAX_DEPTH: usize = 16;

impl Session {
    /// Starts `argv` in the container at `now`; returns the session and what it printed first.
    pub fn start(
        c: Container,
        argv: &[String],
        tty: bool,
        now: Timestamp,
    ) -> (Session, Vec<Event>) {
        let vars = c
            .env
            .iter()
            .map(|(k, v)| Var {
                name: k.clone(),
                value: v.clone(),
                exported: true,
            })
            .collect();
        let mut s = Session {
            c,
            tty,
            state: State::Done,
            levels: Vec::new(),
            cwd: "/".to_owned(),
            vars,
            last: 0,
            line: String::new(),
            utf8: Vec::new(),
            escape: Escape::None,
            clock: SignedDuration::ZERO,
        };
        let mut ev = Vec::new();
        let Some(name) = argv
            .first()
            .and_then(|a0| commands::program(&s.c.image, a0))
        else {
            let a0 = argv.first().map_or("", String::as_str);
            ev.push(Event::Stderr(format!(
                "OCI runtime exec failed: exec failed: unable to start container process: exec: \"{a0}\": executable file not found in $PATH: unknown\n"
            )));
            ev.push(Event::Exit(127));
            let ev = s.finish(ev);
            return (s, ev);
        };
        let args = &argv[1..];
        match name.as_str() {
            "sh" | "bash" => {
                let flavor = if name == "bash" {
                    Flavor::Bash
                } else {
                    Flavor::Sh
                };
                match args.iter().position(|a| a == "-c") {
                    Some(i) => {
                        let script = args.get(i + 1).cloned().unwrap_or_default();
                        s.levels.push(flavor);
                        let flow = s.run_line(&script, &mut ev, now, 1);
                        s.levels.pop();
                        match flow {
                            Flow::Become(f) => s.enter(f, &mut ev),
                            Flow::Next(code) | Flow::Exit(code) => ev.push(Event::Exit(code)),
                        }
                    }
                    None => s.enter(flavor, &mut ev),
                }
            }
            "cat" if args.is_empty() => s.state = State::Cat,
            _ => {
                let code = s.program(&name, args, None, &mut ev, now, (Target::Out, Target::Err));
                ev.push(Event::Exit(code));
            }
        }
        let ev = s.finish(ev);
        (s, ev)
    }

    /// The exit code, once the process ended.
    pub fn exited(&self) -> bool {
        self.state == State::Done
    }

    /// Input on stdin at `now`.
    pub fn input(&mut self, bytes: &[u8], now: Timestamp) -> Vec<Event> {
        let mut ev = Vec::new();
        if self.state == State::Done {
            return ev;
        }
        self.utf8.extend_from_slice(bytes);
        let text = match std::str::from_utf8(&self.utf8) {
            Ok(s) => {
                let s = s.to_owned();
                self.utf8.clear();
                s
            }
            Err(e) => {
                let valid = e.valid_up_to();
                let s = String::from_utf8_lossy(&self.utf8[..valid]).into_owned();
                // An incomplete sequence at the end waits for its rest; garbage is dropped.
                let rest = self.utf8.split_off(valid);
                self.utf8 = if e.error_len().is_none() {
                    rest
                } else {
                    Vec::new()
                };
                s
            }
        };
        for ch in text.chars() {
            if self.tty {
                self.key(ch, &mut ev, now);
            } else {
                self.raw(ch, &mut ev, now);
            }
            if matches!(ev.last(), Some(Event::Exit(_))) {
                self.state = State::Done;
                break;
            }
        }
        self.finish(ev)
    }

    /// Stdin closed at `now`: a shell runs what is left and ends with its last status.
    pub fn close_stdin(&mut self, now: Timestamp) -> Vec<Event> {
        let mut ev = Vec::new();
        match self.state {
            State::Done => {}
            State::Cat => {
                if !self.tty && !self.line.is_empty() {
                    ev.push(Event::Stdout(std::mem::take(&mut self.line)));
                }
                ev.push(Event::Exit(0));
            }
            State::Shell => {
                let pending = std::mem::take(&mut self.line);
                if !self.tty && !pending.trim().is_empty() {
                    self.line_entered(&pending, &mut ev, now);
                }
                if self.state == State::Shell {
                    ev.push(Event::Exit(self.last));
                }
            }
        }
        self.finish(ev)
    }

    /// Marks the end and, with a terminal, turns `\n` into `\r\n` and stderr into stdout.
    fn finish(&mut self, ev: Vec<Event>) -> Vec<Event> {
        if ev.iter().any(|e| matches!(e, Event::Exit(_))) {
            self.state = State::Done;
        }
        if !self.tty {
            return ev;
        }
        ev.into_iter()
            .map(|e| match e {
                Event::Stdout(s) | Event::Stderr(s) => Event::Stdout(crlf(&s)),
                other => other,
            })
            .collect()
    }

    fn prompt(&self) -> String {
        match self.levels.last() {
            Some(Flavor::Bash) => format!("root@{}:{}# ", self.c.hostname, self.cwd),
            _ => format!("{} # ", self.cwd),
        }
    }

    /// An interactive shell level starts.
    fn enter(&mut self, flavor: Flavor, ev: &mut Vec<Event>) {
        self.state = State::Shell;
        self.levels.push(flavor);
        if self.tty {
            ev.push(Event::Stdout(self.prompt()));
        }
    }

    /// The innermost shell level exits with `code`.
    fn leave(&mut self, code: i32, ev: &mut Vec<Event>) {
        self.levels.pop();
        self.last = code;
        if self.levels.is_empty() {
            ev.push(Event::Exit(code));
        } else if self.tty {
            ev.push(Event::Stdout(self.prompt()));
        }
    }

    /// A complete line typed into the innermost shell.
    fn line_entered(&mut self, line: &str, ev: &mut Vec<Event>, now: Timestamp) {
        self.clock = SignedDuration::ZERO;
        match self.run_line(line, ev, now, 0) {
            Flow::Next(code) => {
                self.last = code;
                if self.tty {
                    ev.push(Event::Stdout(self.prompt()));
                }
            }
            Flow::Exit(code) => self.leave(code, ev),
            Flow::Become(f) => {
                self.levels.pop();
                self.enter(f, ev);
            }
        }
    }

    /// Without a terminal: input is lines.
    fn raw(&mut self, ch: char, ev: &mut Vec<Event>, now: Timestamp) {
        if self.state == State::Cat {
            ev.push(Event::Stdout(ch.to_string()));
            return;
        }
        if ch == '\n' {
            let line = std::mem::take(&mut self.line);
            self.line_entered(&line, ev, now);
        } else {
            self.line.push(ch);
        }
    }

    /// With a terminal: one key of the line discipline.
    fn key(&mut self, ch: char, ev: &mut Vec<Event>, now: Timestamp) {
        match (self.escape, ch) {
            (Escape::Started, '[' | 'O') => {
                self.escape = Escape::Csi;
                return;
            }
            (Escape::Started, _) => {
                self.escape = Escape::None;
                return;
            }
            (Escape::Csi, c) => {
                if ('@'..='~').contains(&c) {
                    self.escape = Escape::None;
                }
                return;
            }
            (Escape::None, '\x1b') => {
                self.escape = Escape::Started;
                return;
            }
            _ => {}
        }
        match ch {
            '\r' | '\n' => {
                ev.push(Event::Stdout("\n".into()));
                let line = std::mem::take(&mut self.line);
                if self.state == State::Cat {
                    ev.push(Event::Stdout(format!("{line}\n")));
                } else {
                    self.line_entered(&line, ev, now);
                }
            }
            '\x7f' | '\x08' => {
                if self.line.pop().is_some() {
                    ev.push(Event::Stdout("\x08 \x08".into()));
                }
            }
            '\x15' => {
                let n = self.line.chars().count();
                self.line.clear();
                ev.push(Event::Stdout("\x08 \x08".repeat(n)));
            }
            '\x03' => {
                self.line.clear();
                ev.push(Event::Stdout("^C\n".into()));
                if self.state == State::Cat {
                    ev.push(Event::Exit(130));
                } else {
                    self.last = 130;
                    ev.push(Event::Stdout(self.prompt()));
                }
            }
            '\x04' if self.line.is_empty() => {
                if self.state == State::Cat {
                    ev.push(Event::Exit(0));
                    return;
                }
                let bash = self.levels.last() == Some(&Flavor::Bash);
                ev.push(Event::Stdout(if bash { "exit\n" } else { "\n" }.into()));
                let last = self.last;
                self.leave(last, ev);
            }
            '\x0c' => ev.push(Event::Stdout(format!(
                "\x1b[H\x1b[2J{}{}",
                self.prompt(),
                self.line
            ))),
            c if c.is_control() => {}
            c => {
                self.line.push(c);
                ev.push(Event::Stdout(c.to_string()));
            }
        }
    }

    /// The value of a parameter.
    fn lookup(&self, name: &str) -> String {
        match name {
            "?" => self.last.to_string(),
            "$" => SHELL_PID.to_string(),
            "#" => "0".to_owned(),
            "0" => self
                .levels
                .last()
                .copied()
                .unwrap_or(Flavor::Sh)
                .name()
                .to_owned(),
            "PWD" => self.cwd.clone(),
            n => self
                .vars
                .iter()
                .find(|v| v.name == n)
                .map(|v| v.value.clone())
                .unwrap_or_default(),
        }
    }

    fn set(&mut self, name: &str, value: Option<String>, export: bool) {
        match self.vars.iter_mut().find(|v| v.name == name) {
            Some(v) => {
                if let Some(value) = value {
                    v.value = value;
                }
                v.exported |= export;
            }
            None => self.vars.push(Var {
                name: name.to_owned(),
                value: value.unwrap_or_default(),
                exported: export,
            }),
        }
    }

    fn env(&self) -> Vec<(String, String)> {
        self.vars
            .iter()
            .filter(|v| v.exported)
            .map(|v| (v.name.clone(), v.value.clone()))
            .collect()
    }

    fn shell_name(&self) -> &'static str {
        self.levels.last().copied().unwrap_or(Flavor::Sh).name()
    }

    /// Runs one line of commands (`depth`: how many `sh -c` deep).
    fn run_line(&mut self, line: &str, ev: &mut Vec<Event>, now: Timestamp, depth: usize) -> Flow {
        let sh = self.shell_name();
        let commands = match parse::parse(line) {
            Ok(c) => c,
            Err(e) => {
                ev.push(Event::Stderr(format!("{sh}: {e}\n")));
                return Flow::Next(2);
            }
        };
        let mut status = self.last;
        for cmd in commands {
            let run = match cmd.join {
                Join::Always => true,
                Join::And => status == 0,
                Join::Or => status != 0,
            };
            if !run {
                continue;
            }
            let lookup = |n: &str| self.lookup(n);
            let mut words: Vec<String> = cmd
                .words
                .iter()
                .map(|w| parse::expand(w, &lookup))
                .collect();
            let assignments = words.iter().take_while(|w| assignment(w).is_some()).count();
            let prefix: Vec<String> = words.drain(..assignments).collect();
            if words.is_empty() {
                for a in &prefix {
                    if let Some((k, v)) = assignment(a) {
                        self.set(k, Some(v.to_owned()), false);
                    }
                }
                status = 0;
                self.last = status;
                continue;
            }
            let targets = match self.redirect(&cmd.redirects) {
                Ok(t) => t,
                Err(e) => {
                    ev.push(Event::Stderr(format!("{sh}: {e}\n")));
                    status = 1;
                    self.last = status;
                    continue;
                }
            };
            let flow = self.command(&words, &prefix, targets, ev, now, depth);
            match flow {
                Flow::Next(code) => status = code,
                other => return other,
            }
            self.last = status;
        }
        Flow::Next(status)
    }

    /// Where a command's stdout and stderr go, and what its stdin is.
    fn redirect(&self, redirects: &[Redirect]) -> Result<Targets, String> {
        let lookup = |n: &str| self.lookup(n);
        let mut out = Target::Out;
        let mut err = Target::Err;
        let mut input = None;
        for r in redirects {
            match r {
                Redirect::To { fd, both, target } => {
                    let path = parse::expand(target, &lookup);
                    if path != "/dev/null" {
                        return Err(format!("can't create {path}: Read-only file system"));
                    }
                    if *fd == 1 || *both {
                        out = Target::Null;
                    }
                    if *fd == 2 || *both {
                        err = Target::Null;
                    }
                }
                Redirect::ErrToOut => err = out,
                Redirect::OutToErr => out = err,
                Redirect::From(target) => {
                    let path = parse::expand(target, &lookup);
                    let ctx = self.ctx(Timestamp::UNIX_EPOCH);
                    input = Some(
                        commands::read(&ctx, &path)
                            .map_err(|_| format!("can't open {path}: no such file"))?,
                    );
                }
            }
        }
        Ok(((out, err), input))
    }

    fn ctx(&self, now: Timestamp) -> commands::Ctx<'_> {
        commands::Ctx {
            c: &self.c,
            cwd: &self.cwd,
            env: self.env(),
            now,
            tty: self.tty,
            shell: (!self.levels.is_empty()).then(|| (SHELL_PID, self.shell_name())),
        }
    }

    /// Runs one command (builtins here, programs in `commands`).
    fn command(
        &mut self,
        words: &[String],
        prefix: &[String],
        ((out, err), input): Targets,
        ev: &mut Vec<Event>,
        now: Timestamp,
        depth: usize,
    ) -> Flow {
        let sh = self.shell_name();
        let name = words[0].as_str();
        let args = &words[1..];
        let mut say = |target: Target, s: String| push(ev, target, s);
        match name {
            "exit" => {
                let code = match args.first() {
                    None => self.last,
                    Some(a) => match a.parse::<i64>() {
                        Ok(n) => n.rem_euclid(256) as i32,
                        Err(_) => {
                            say(err, format!("{sh}: exit: Illegal number: {a}\n"));
                            2
                        }
                    },
                };
                Flow::Exit(code)
            }
            "cd" => {
                let to = args.first().cloned().unwrap_or_else(|| self.lookup("HOME"));
                let to = if to.is_empty() { "/".to_owned() } else { to };
                let abs = commands::absolute(&self.cwd, &to);
                if commands::is_dir(&self.c, &abs) {
                    self.cwd = abs;
                    Flow::Next(0)
                } else {
                    say(
                        err,
                        format!("{sh}: cd: can't cd to {to}: No such file or directory\n"),
                    );
                    Flow::Next(2)
                }
            }
            "export" | "unset" => {
                for a in args {
                    if name == "unset" {
                        self.vars.retain(|v| v.name != *a);
                    } else if let Some((k, v)) = assignment(a) {
                        self.set(k, Some(v.to_owned()), true);
                    } else {
                        self.set(a, None, true);
                    }
                }
                Flow::Next(0)
            }
            "command" if args.first().is_some_and(|a| a == "-v") => {
                let mut code = 0;
                for a in &args[1..] {
                    if is_builtin(a) {
                        say(out, format!("{a}\n"));
                    } else if let Some(p) = commands::which(&self.c.image, a) {
                        say(out, format!("{p}\n"));
                    } else {
                        code = 1;
                    }
                }
                Flow::Next(code)
            }
            "exec" if args.is_empty() => Flow::Next(0),
            "exec" => match commands::program(&self.c.image, &args[0]).as_deref() {
                Some(shell @ ("sh" | "bash")) if !args.iter().any(|a| a == "-c") => {
                    Flow::Become(if shell == "bash" {
                        Flavor::Bash
                    } else {
                        Flavor::Sh
                    })
                }
                _ => match self.command(args, prefix, ((out, err), input), ev, now, depth) {
                    Flow::Next(code) | Flow::Exit(code) => Flow::Exit(code),
                    become_shell => become_shell,
                },
            },
            _ => match commands::program(&self.c.image, name).as_deref() {
                Some(shell @ ("sh" | "bash")) => {
                    let flavor = if shell == "bash" {
                        Flavor::Bash
                    } else {
                        Flavor::Sh
                    };
                    match args.iter().position(|a| a == "-c") {
                        Some(i) if depth < MAX_DEPTH => {
                            let script = args.get(i + 1).cloned().unwrap_or_default();
                            self.levels.push(flavor);
                            let flow = self.run_line(&script, ev, now, depth + 1);
                            self.levels.pop();
                            match flow {
                                Flow::Next(code) | Flow::Exit(code) => Flow::Next(code),
                                Flow::Become(f) => {
                                    self.levels.push(f);
                                    Flow::Next(0)
                                }
                            }
                        }
                        Some(_) => {
                            say(err, format!("{sh}: too many nested shells\n"));
                            Flow::Next(2)
                        }
                        None => {
                            // An interactive shell inside this one.
                            self.levels.push(flavor);
                            Flow::Next(self.last)
                        }
                    }
                }
                Some(program) => {
                    let program = program.to_owned();
                    Flow::Next(self.program_with(
                        &program,
                        args,
                        prefix,
                        input.as_deref(),
                        ev,
                        now,
                        (out, err),
                    ))
                }
                None => {
                    let msg = match self.levels.last() {
                        Some(Flavor::Bash) => format!("bash: {name}: command not found\n"),
                        _ => format!("sh: {name}: not found\n"),
                    };
                    say(err, msg);
                    Flow::Next(127)
                }
            },
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn program_with(
        &mut self,
        name: &str,
        args: &[String],
        prefix: &[String],
        input: Option<&str>,
        ev: &mut Vec<Event>,
        now: Timestamp,
        targets: (Target, Target),
    ) -> i32 {
        if prefix.is_empty() {
            return self.program(name, args, input, ev, now, targets);
        }
        // `NAME=value cmd`: the variables are in cmd's environment only.
        let saved = self.vars.clone();
        for a in prefix {
            if let Some((k, v)) = assignment(a) {
                self.set(k, Some(v.to_owned()), true);
            }
        }
        let code = self.program(name, args, input, ev, now, targets);
        self.vars = saved;
        code
    }

    fn program(
        &mut self,
        name: &str,
        args: &[String],
        input: Option<&str>,
        ev: &mut Vec<Event>,
        now: Timestamp,
        (out, err): (Target, Target),
    ) -> i32 {
        let io = commands::run(&self.ctx(now + self.clock), name, args, input);
        if !io.out.is_empty() {
            push(ev, out, io.out);
        }
        if !io.err.is_empty() {
            push(ev, err, io.err);
        }
        if let Some(d) = io.sleep {
            self.clock += SignedDuration::try_from(d).unwrap_or(SignedDuration::ZERO);
            ev.push(Event::Sleep(d));
        }
        io.code
    }
}

/// Where a stream goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Out,
    Err,
    Null,
}

type Targets = ((Target, Target), Option<String>);

fn push(ev: &mut Vec<Event>, target: Target, s: String) {
    match target {
        Target::Out => ev.push(Event::Stdout(s)),
        Target::Err => ev.push(Event::Stderr(s)),
        Target::Null => {}
    }
}

fn is_builtin(name: &str) -> bool {
    matches!(
        name,
        "cd" | "exit" | "export" | "unset" | "exec" | "command"
    )
}

/// `NAME=value` split, if the word is an assignment.
fn assignment(word: &str) -> Option<(&str, &str)> {
    let (k, v) = word.split_once('=')?;
    let valid = !k.is_empty()
        && k.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
        && !k.starts_with(|c: char| c.is_ascii_digit());
    valid.then_some((k, v))
}

/// `\n` as a terminal shows it.
fn crlf(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut prev = '\0';
    for c in s.chars() {
        if c == '\n' && prev != '\r' {
            out.push('\r');
        }
        out.push(c);
        prev = c;
    }
    out
}

#[cfg(test)]
mod tests;
