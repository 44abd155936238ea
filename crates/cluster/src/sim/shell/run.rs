//! Running a line: variables and their expansion, `;`/`&&`/`||` lists, redirections, the
//! builtins (`exit`, `cd`, `export`, `unset`, `exec`, `command -v`), nested `sh -c` and the
//! programs in `commands`.

use jiff::{SignedDuration, Timestamp};

use super::{
    Event, Flavor, Flow, MAX_DEPTH, SHELL_PID, Session, Var, commands,
    parse::{self, Join, Redirect},
};

impl Session {
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
    pub(super) fn run_line(
        &mut self,
        line: &str,
        ev: &mut Vec<Event>,
        now: Timestamp,
        depth: usize,
    ) -> Flow {
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

    pub(super) fn program(
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
pub(super) enum Target {
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
