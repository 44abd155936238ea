//! `KRUISE_TUI_TIMINGS=<file>`: the console appends what a measurement needs, one JSON object a
//! line (scripts/measure-console and benches/scale.rs read it):
//!
//! - `{"event":"start","unix_ms":..}` when the console process starts;
//! - `{"event":"first_frame",..}` after the first frame (the terminal is in raw mode by then);
//! - `{"event":"first_rows","rows":N,..}` after the first frame whose all-pods list shows a row;
//! - `{"event":"all_rows","rows":N,..}` after the first frame of the all-pods list drawn once
//!   the pod store reported ready (every initial page in);
//! - `{"event":"key","key":"j","loading":true,"drawn":true,"latency_us":..,"read_unix_us":..,
//!   "done_unix_us":..}` per key press: from the moment the loop read the key to the end of the
//!   `terminal.draw` that shows its effect (`drawn`), or to the end of its update when it changed
//!   nothing on screen (`drawn: false`); `loading` when the pod store was not ready yet;
//! - `{"event":"requests","count":N,"unix_ms":..}`: the HTTP requests the console's clients
//!   sent so far ([`kruise_client::connect::requests_sent`]), on the 1 s tick when the count
//!   changed, and at once on SIGUSR1 (whether it changed or not).
//!
//! Every event but `start`, `key` and `requests` is written once. Write errors are logged once
//! and then ignored: the console never fails for its measurement.

use std::{
    fs::{File, OpenOptions},
    io::Write as _,
    path::{Path, PathBuf},
    time::{Instant, SystemTime, UNIX_EPOCH},
};

use crossterm::event::{KeyCode, KeyEvent};
use serde_json::{Value, json};

use super::console::LoadState;

/// The environment variable naming the timings file.
pub const ENV: &str = "KRUISE_TUI_TIMINGS";

/// The open timings file and what was written to it already.
pub struct Timings {
    file: File,
    path: PathBuf,
    failed: bool,
    first_frame: bool,
    first_rows: bool,
    all_rows: bool,
    /// The request count last written.
    requests: Option<u64>,
    /// Keys read in this loop turn and not yet shown (read instant, wall clock, line fields).
    keys: Vec<(Instant, u128, Value)>,
    #[cfg(unix)]
    usr1: Option<tokio::signal::unix::Signal>,
}

impl Timings {
    /// Opens the file `KRUISE_TUI_TIMINGS` names and writes `start`; None when unset (or the
    /// file cannot be opened: logged).
    pub fn from_env() -> Option<Timings> {
        let path = std::env::var_os(ENV).filter(|p| !p.is_empty())?;
        match Timings::open(Path::new(&path)) {
            Ok(timings) => Some(timings),
            Err(err) => {
                tracing::warn!("{ENV}: cannot open {}: {err}", Path::new(&path).display());
                None
            }
        }
    }

    /// Opens `path` for appending and writes `start`.
    pub fn open(path: &Path) -> std::io::Result<Timings> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let mut timings = Timings {
            file,
            path: path.to_owned(),
            failed: false,
            first_frame: false,
            first_rows: false,
            all_rows: false,
            requests: None,
            keys: Vec::new(),
            #[cfg(unix)]
            usr1: None,
        };
        timings.write(json!({"event": "start", "unix_ms": unix_ms()}));
        Ok(timings)
    }

    /// Listens for SIGUSR1 (must run inside the tokio runtime); [`Timings::signalled`] then
    /// resolves once per signal.
    pub fn listen(&mut self) {
        #[cfg(unix)]
        if self.usr1.is_none() {
            use tokio::signal::unix::{SignalKind, signal};
            match signal(SignalKind::user_defined1()) {
                Ok(sig) => self.usr1 = Some(sig),
                Err(err) => tracing::warn!("{ENV}: cannot listen for SIGUSR1: {err}"),
            }
        }
    }

    /// Resolves on SIGUSR1; never without [`Timings::listen`].
    pub async fn signalled(&mut self) {
        #[cfg(unix)]
        if let Some(sig) = self.usr1.as_mut()
            && sig.recv().await.is_some()
        {
            return;
        }
        std::future::pending::<()>().await;
    }

    /// A key press was read; `state` is the console's before the key is applied.
    pub fn key_read(&mut self, key: &KeyEvent, state: LoadState) {
        let name = match key.code {
            KeyCode::Char(c) => c.to_string(),
            code => format!("{code:?}"),
        };
        self.keys.push((
            Instant::now(),
            unix_us(),
            json!({"event": "key", "key": name, "loading": !state.pods_ready}),
        ));
    }

    /// A frame was drawn; `state` is what it showed. Ends the keys read since the last call.
    pub fn frame_drawn(&mut self, state: LoadState) {
        self.end_keys(true);
        if !self.first_frame {
            self.first_frame = true;
            self.write(json!({"event": "first_frame", "unix_ms": unix_ms()}));
        }
        let rows = state.pod_rows.unwrap_or(0);
        if !self.first_rows && rows > 0 {
            self.first_rows = true;
            self.write(json!({"event": "first_rows", "rows": rows, "unix_ms": unix_ms()}));
        }
        if !self.all_rows && state.pods_ready && state.pod_rows.is_some() {
            self.all_rows = true;
            self.write(json!({"event": "all_rows", "rows": rows, "unix_ms": unix_ms()}));
        }
    }

    /// The loop turn ended without a frame: the keys read changed nothing on screen.
    pub fn turn_ended(&mut self) {
        self.end_keys(false);
    }

    /// Writes the request count if it changed since the last line (or always with `force`).
    pub fn requests(&mut self, force: bool) {
        let count = kruise_client::connect::requests_sent();
        if force || self.requests != Some(count) {
            self.requests = Some(count);
            self.write(json!({"event": "requests", "count": count, "unix_ms": unix_ms()}));
        }
    }

    fn end_keys(&mut self, drawn: bool) {
        if self.keys.is_empty() {
            return;
        }
        let done = unix_us();
        for (read, read_unix_us, mut line) in std::mem::take(&mut self.keys) {
            line["drawn"] = json!(drawn);
            line["latency_us"] = json!(read.elapsed().as_micros() as u64);
            line["read_unix_us"] = json!(read_unix_us as u64);
            line["done_unix_us"] = json!(done as u64);
            self.write(line);
        }
    }

    fn write(&mut self, line: Value) {
        if self.failed {
            return;
        }
        // One write per line: a reader never sees half a line it could take for a whole one.
        let mut text = line.to_string();
        text.push('\n');
        if let Err(err) = self.file.write_all(text.as_bytes()) {
            self.failed = true;
            tracing::warn!("{ENV}: cannot write {}: {err}", self.path.display());
        }
    }
}

fn since_epoch() -> std::time::Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

fn unix_ms() -> u64 {
    since_epoch().as_millis() as u64
}

fn unix_us() -> u128 {
    since_epoch().as_micros()
}
