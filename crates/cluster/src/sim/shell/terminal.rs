//! The terminal side of a session: its line discipline (echo, erase, interrupt, end of input,
//! escape sequences ignored) and how output shows on a terminal; without a terminal, input is
//! plain lines.

use jiff::Timestamp;

use super::{Event, Flavor, Session, State};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Escape {
    #[default]
    None,
    Started,
    Csi,
}

impl Session {
    /// Without a terminal: input is lines.
    pub(super) fn raw(&mut self, ch: char, ev: &mut Vec<Event>, now: Timestamp) {
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
    pub(super) fn key(&mut self, ch: char, ev: &mut Vec<Event>, now: Timestamp) {
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
}

/// `\n` as a terminal shows it.
pub(super) fn crlf(s: &str) -> String {
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
