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
//! writes `\r\n` for `\n` (`terminal`). Running a line, the builtins and the programs is `run`.

mod commands;
mod parse;
mod run;
mod terminal;

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use run::Target;
use terminal::{Escape, crlf};

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
}

#[cfg(test)]
mod tests;
