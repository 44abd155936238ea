//! The Log view's state (`l` on a pod): one container's log as the kube layer streams it, in a
//! bounded buffer, with follow, wrap, timestamps, the previous run, `/` search and the container
//! switch. Pure: keys and stream messages in, [`Effect`]s out (`StreamLogs` / `StopLogs`).
//!
//! Follow is the stream's `follow` (the server keeps sending new lines) and glues the view to
//! the newest line; scrolling up unglues the view, the stream keeps running; `G` glues it again.
//! Every change of container, previous or timestamps asks for a new stream (the old one is
//! stopped, the buffer refilled), as `kubectl logs` with other flags would print another text.

pub mod open;
mod search;

use std::collections::VecDeque;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

pub use search::Search;

use super::Effect;

/// What the kube layer reports about a log stream (tagged with the stream's id).
#[derive(Debug, Clone, PartialEq)]
pub struct LogEvent {
    pub stream: u64,
    pub kind: LogEventKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum LogEventKind {
    /// Lines as the server sent them (no trailing newline), oldest first.
    Lines(Vec<String>),
    /// The server ended the stream (all of it was sent, or the container stopped).
    Ended,
    /// The request failed or the stream broke; the server's message.
    Failed(String),
}

/// What [`Effect::StreamLogs`] asks for: `GET pods/NAME/log` with these parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRequest {
    pub id: u64,
    pub namespace: String,
    pub pod: String,
    pub container: String,
    pub follow: bool,
    pub timestamps: bool,
    pub previous: bool,
    /// Only the newest lines (the buffer's size): older ones would be dropped at once.
    pub tail_lines: Option<i64>,
}

/// Where the stream is.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamState {
    Connecting,
    Streaming,
    /// The server ended it.
    Ended,
    /// Follow was turned off: the stream was stopped by the console.
    Stopped,
    Failed(String),
}

/// The Log view.
#[derive(Debug, Clone, PartialEq)]
pub struct LogView {
    pub namespace: String,
    pub pod: String,
    /// Every container of the pod (init containers first), for `c`.
    pub containers: Vec<String>,
    pub container: String,
    /// The id of the stream that fills the buffer now (answers of older streams are ignored).
    pub stream: u64,
    pub state: StreamState,
    pub follow: bool,
    pub wrap: bool,
    pub timestamps: bool,
    pub previous: bool,
    /// The newest `limit` lines.
    pub lines: VecDeque<String>,
    pub limit: usize,
    /// Lines dropped from the front of the buffer since the stream started.
    pub dropped: u64,
    /// Glued to the newest line (the view computes the top from the bottom).
    pub stick: bool,
    /// The first line shown when not glued.
    pub top: usize,
    pub search: Search,
}

/// How a key was taken by the log view.
pub enum Handled {
    /// Used here; these effects follow.
    Yes(Vec<Effect>),
    /// Not a log-view key: the keymap decides.
    No,
}

impl LogView {
    /// A view of `container` of the pod; `stream` is the id of its first stream.
    pub fn new(
        namespace: String,
        pod: String,
        containers: Vec<String>,
        container: String,
        limit: usize,
        stream: u64,
    ) -> LogView {
        LogView {
            namespace,
            pod,
            containers,
            container,
            stream,
            state: StreamState::Connecting,
            follow: true,
            wrap: false,
            timestamps: false,
            previous: false,
            lines: VecDeque::new(),
            limit: limit.max(1),
            dropped: 0,
            stick: true,
            top: 0,
            search: Search::default(),
        }
    }

    /// The request for the current stream.
    pub fn request(&self) -> LogRequest {
        LogRequest {
            id: self.stream,
            namespace: self.namespace.clone(),
            pod: self.pod.clone(),
            container: self.container.clone(),
            // A previous run has ended: there is nothing to follow.
            follow: self.follow && !self.previous,
            timestamps: self.timestamps,
            previous: self.previous,
            tail_lines: i64::try_from(self.limit).ok(),
        }
    }

    /// True while the server may still send lines.
    pub fn open(&self) -> bool {
        matches!(self.state, StreamState::Connecting | StreamState::Streaming)
    }

    /// Stops the current stream and starts another with the current settings (`next_id` is the
    /// new stream's id); the buffer starts empty.
    fn restart(&mut self, next_id: u64) -> Vec<Effect> {
        let mut effects = Vec::new();
        if self.open() {
            effects.push(Effect::StopLogs(self.stream));
        }
        self.stream = next_id;
        self.state = StreamState::Connecting;
        self.lines.clear();
        self.dropped = 0;
        self.stick = true;
        self.top = 0;
        self.search.current = None;
        effects.push(Effect::StreamLogs(self.request()));
        effects
    }

    /// Applies a stream's report; false when it is about another stream.
    pub fn apply(&mut self, event: LogEvent) -> bool {
        if event.stream != self.stream {
            return false;
        }
        match event.kind {
            LogEventKind::Lines(lines) => {
                if self.state == StreamState::Connecting {
                    self.state = StreamState::Streaming;
                }
                for line in lines {
                    self.push(line);
                }
            }
            LogEventKind::Ended => {
                if self.open() {
                    self.state = StreamState::Ended;
                }
            }
            LogEventKind::Failed(why) => self.state = StreamState::Failed(why),
        }
        true
    }

    fn push(&mut self, line: String) {
        self.lines.push_back(line);
        if self.lines.len() > self.limit {
            self.lines.pop_front();
            self.dropped += 1;
            // What is on screen stays on screen while it can.
            self.top = self.top.saturating_sub(1);
            self.search.current = match self.search.current {
                Some(0) | None => None,
                Some(i) => Some(i - 1),
            };
        }
    }

    /// The log view's own keys (the search line takes text while it is open). `next_id` gives
    /// a new stream id; `rows`/`width` are the text area's size.
    pub fn key(
        &mut self,
        ev: &KeyEvent,
        next_id: &mut dyn FnMut() -> u64,
        rows: usize,
        width: usize,
    ) -> Handled {
        if self.search.input.is_some() {
            self.search_key(ev, rows, width);
            return Handled::Yes(Vec::new());
        }
        if ev
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return Handled::No;
        }
        let effects = match ev.code {
            KeyCode::Char('f') => {
                if self.follow && self.open() && !self.previous {
                    // Stop asking for new lines; what was read stays.
                    self.follow = false;
                    self.state = StreamState::Stopped;
                    vec![Effect::StopLogs(self.stream)]
                } else {
                    // Follow again (or anew after the stream ended): read the tail and follow.
                    self.follow = true;
                    self.previous = false;
                    self.restart(next_id())
                }
            }
            KeyCode::Char('w') => {
                self.wrap = !self.wrap;
                Vec::new()
            }
            KeyCode::Char('t') => {
                self.timestamps = !self.timestamps;
                self.restart(next_id())
            }
            KeyCode::Char('p') => {
                self.previous = !self.previous;
                self.restart(next_id())
            }
            KeyCode::Char('n') => {
                self.next_match(true, rows, width);
                Vec::new()
            }
            KeyCode::Char('N') => {
                self.next_match(false, rows, width);
                Vec::new()
            }
            _ => return Handled::No,
        };
        Handled::Yes(effects)
    }

    /// `c`: the next container of the pod (its log from the start, same settings).
    pub fn next_container(&mut self, next_id: u64) -> Vec<Effect> {
        let Some(i) = self.containers.iter().position(|c| *c == self.container) else {
            return Vec::new();
        };
        if self.containers.len() < 2 {
            return Vec::new();
        }
        self.container = self.containers[(i + 1) % self.containers.len()].clone();
        self.restart(next_id)
    }

    /// Opens the search line (`/`).
    pub fn start_search(&mut self) {
        self.search.input = Some(String::new());
    }

    /// Esc: closes the search line, then clears the search; false when there was none (the
    /// view itself closes).
    pub fn escape(&mut self) -> bool {
        if self.search.input.take().is_some() {
            return true;
        }
        if !self.search.query.is_empty() {
            self.search.query.clear();
            self.search.current = None;
            return true;
        }
        false
    }

    fn search_key(&mut self, ev: &KeyEvent, rows: usize, width: usize) {
        let Some(input) = self.search.input.as_mut() else {
            return;
        };
        match ev.code {
            KeyCode::Esc => self.search.input = None,
            KeyCode::Enter => {
                self.search.query = std::mem::take(input);
                self.search.input = None;
                self.search.current = None;
                if !self.search.query.is_empty() {
                    // From the newest line up: the last occurrence is the one that matters.
                    let from = self.lines.len();
                    self.search.current = self.search.find(&self.lines, from, false);
                    self.show_current(rows, width);
                }
            }
            // Backspace erases a character (in the guard); on an empty line it closes it.
            KeyCode::Backspace if input.pop().is_none() => self.search.input = None,
            KeyCode::Char(c)
                if !ev
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                input.push(c)
            }
            _ => {}
        }
    }

    fn next_match(&mut self, forward: bool, rows: usize, width: usize) {
        if self.search.query.is_empty() {
            return;
        }
        let from = match self.search.current {
            Some(i) if forward => i + 1,
            Some(i) => i,
            None if forward => self.first_shown(rows, width),
            None => self.first_shown(rows, width),
        };
        self.search.current = self.search.find(&self.lines, from, forward).or_else(|| {
            // Wrap around, as less does.
            let from = if forward { 0 } else { self.lines.len() };
            self.search.find(&self.lines, from, forward)
        });
        self.show_current(rows, width);
    }

    /// Scrolls so the current match is in view (a third from the top).
    fn show_current(&mut self, rows: usize, width: usize) {
        if let Some(i) = self.search.current {
            let shown = self.first_shown(rows, width);
            let last_shown = shown + rows.saturating_sub(1);
            if self.stick && i >= shown {
                return;
            }
            if !self.stick && i >= shown && i <= last_shown && !self.wrap {
                return;
            }
            self.stick = false;
            self.top = i.saturating_sub(rows / 3);
        }
    }

    /// The first line on screen for a text area of `rows` × `width`.
    pub fn first_shown(&self, rows: usize, width: usize) -> usize {
        if self.stick {
            bottom_top(&self.lines, rows, width, self.wrap)
        } else {
            self.top.min(self.lines.len().saturating_sub(1))
        }
    }

    /// Up/down/page/top/bottom. Moving up unglues the view; reaching the bottom glues it again.
    pub fn scroll(&mut self, delta: isize, rows: usize, width: usize) {
        let bottom = bottom_top(&self.lines, rows, width, self.wrap);
        let from = self.first_shown(rows, width) as isize;
        let to = from.saturating_add(delta).clamp(0, bottom as isize) as usize;
        self.top = to;
        self.stick = to >= bottom;
    }
}

/// Terminal rows `line` takes at `width` columns (1 without wrap).
pub fn rows_of(line: &str, width: usize, wrap: bool) -> usize {
    if !wrap || width == 0 {
        return 1;
    }
    let chars = line.chars().count();
    chars.div_ceil(width).max(1)
}

/// The first line to show so the last line sits on the bottom row.
pub fn bottom_top(lines: &VecDeque<String>, rows: usize, width: usize, wrap: bool) -> usize {
    let mut used = 0;
    let mut top = lines.len();
    while top > 0 {
        let need = rows_of(&lines[top - 1], width, wrap);
        if used + need > rows.max(1) {
            break;
        }
        used += need;
        top -= 1;
    }
    // A single line taller than the screen still shows its start.
    if top == lines.len() && !lines.is_empty() {
        top = lines.len() - 1;
    }
    top
}

#[cfg(test)]
mod tests;
