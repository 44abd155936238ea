//! What a simulated container printed: pure and deterministic, so the embedded API server can
//! serve `pods/log` for the pods it stores without anyone having written a log anywhere.
//!
//! A container's log is a function of one **run** of it (one container ID: started at, ended at
//! with an exit code, or still running) and of the time window asked for. The lines are laid
//! out in time, so a follower can compute when the next line is due and sleep until then:
//!
//! - a **startup banner** in the image's style that names the image (nginx's entrypoint and
//!   `nginx/1.25.4`, `starting PostgreSQL 16.2`, `Fluent Bit v3.0.4`, or a logfmt
//!   `msg="starting checkout" image=demo/checkout:1.4.2` for any other image), in the run's
//!   first second;
//! - **periodic lines** from the run's second second on: nginx access-log lines (about one every
//!   2 s), PostgreSQL connection and checkpoint lines (6 s), fluent-bit tail and flush lines
//!   (5 s), logfmt request lines with a heartbeat now and then (3 s; log shippers such as
//!   `logtail` report shipped batches instead);
//! - **ending lines** once the run ended: a graceful shutdown (exit 0 or 143) in the image's
//!   style just after it stopped; nothing for a SIGKILL (137); and for an image containing
//!   `crash` (PRODUCT §5), or any other non-zero exit, the **failure** it logs in the 400 ms
//!   before it exits (a configuration error, a refused database connection or a Go panic,
//!   picked by the image so every run of one image fails the same way) and an exit message.
//!   A crashing run serves nothing periodic.
//!
//! Content is seeded by the pod UID, the container name and the container ID, so one run's log
//! is the same every time it is asked for, and every restart logs afresh. The runtime keeps the
//! newest [`KEPT_LINES`] periodic lines of a run; once older ones are rotated away, the banner
//! goes with them. [`run_of`] picks the run a request means from the pod's status, as the
//! kubelet does (the current one, `previous=true` for the one before the last restart, the
//! kubelet's refusals otherwise).
//!
//! `kruise-tui sim-nodes` against a real API server cannot serve these logs: a real API server
//! asks the node's kubelet for them and the simulated nodes have no kubelet endpoint. Only the
//! embedded cluster (`demo-server`, `--demo`) serves them.

mod runs;
mod style;

use jiff::Timestamp;

pub use runs::{LogError, previous_image_candidates, run_of};
pub(crate) use style::{Style, app as image_app, release as image_release};

/// Periodic lines a run keeps (older ones are rotated away, and the banner with them).
pub const KEPT_LINES: u64 = 10_000;

/// Banner line `i` is printed about `i * BANNER_STEP` after the start.
const BANNER_STEP_NS: i128 = 7_000_000;
/// Periodic lines start one second after the run did.
const PERIODIC_START_NS: i128 = 1_000_000_000;
/// A crashing run logs its failure in the last 400 ms before it exits, 25 ms apart.
const CRASH_LEAD_NS: i128 = 400_000_000;
const CRASH_STEP_NS: i128 = 25_000_000;
/// Shutdown lines follow the stop about 300 µs apart.
const SHUTDOWN_STEP_NS: i128 = 300_000;

/// One run of a container: what a runtime keeps one log for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub pod: String,
    pub namespace: String,
    pub uid: String,
    pub container: String,
    /// What is known of the image it ran (a tag, or `repo@sha256:…`).
    pub image: String,
    /// The runtime's ID of this run; each restart gets a new one.
    pub container_id: String,
    pub started: Timestamp,
    /// When and how it ended; for a running `crash` image, when it will.
    pub end: Option<Exit>,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    pub at: Timestamp,
    pub code: i32,
}

/// One line of a container's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    pub at: Timestamp,
    pub text: String,
}

impl LogLine {
    /// The line as `timestamps=true` serves it: RFC 3339 with nanoseconds, a space, the text.
    pub fn stamped(&self) -> String {
        format!("{} {}", rfc3339_nano(self.at), self.text)
    }
}

/// Go's `time.RFC3339Nano`: UTC, trailing zeros of the fraction trimmed.
pub fn rfc3339_nano(t: Timestamp) -> String {
    let secs = t.strftime("%Y-%m-%dT%H:%M:%S").to_string();
    let nanos = t.subsec_nanosecond();
    if nanos == 0 {
        return format!("{secs}Z");
    }
    let frac = format!("{nanos:09}");
    format!("{secs}.{}Z", frac.trim_end_matches('0'))
}

/// How a run's last lines read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// Still running.
    None,
    /// Stopped on request.
    Shutdown,
    /// Killed without a word.
    Killed,
    /// Failed on its own.
    Failure,
}

/// A run's lines laid out in time (nanoseconds since the epoch).
struct Layout<'a> {
    run: &'a Run,
    style: Style,
    seed: u64,
    start: i128,
    end: Option<i128>,
    ending: Ending,
    banner: Vec<(i128, String)>,
    tail: Vec<(i128, String)>,
}

impl<'a> Layout<'a> {
    fn new(run: &'a Run) -> Layout<'a> {
        let style = Style::of(&run.image);
        let seed = hash(&[&run.uid, &run.container, &run.container_id]);
        let start = run.started.as_nanosecond();
        let end = run.end.map(|e| e.at.as_nanosecond().max(start));
        let ending = match run.end {
            None => Ending::None,
            Some(e) if e.code == 0 || e.code == 143 => Ending::Shutdown,
            Some(e) if e.code == 137 => Ending::Killed,
            Some(_) => Ending::Failure,
        };
        // Up to half a step later than the grid, so lines keep their order.
        let jitter = |i: usize, salt: u64, step: i128| {
            (mix(seed ^ salt ^ (i as u64 + 1)) % (step as u64 / 2)) as i128
        };
        let banner_at =
            |i: usize| start + i as i128 * BANNER_STEP_NS + jitter(i, 0, BANNER_STEP_NS);
        let mut banner: Vec<(i128, String)> = style
            .banner(run, ending == Ending::Failure, &|i| at(banner_at(i)))
            .into_iter()
            .enumerate()
            .map(|(i, text)| (banner_at(i), text))
            .collect();
        if let Some(end) = end {
            banner.retain(|(t, _)| *t < end);
        }
        let last_banner = banner.last().map_or(start, |(t, _)| *t);
        let tail = match (ending, end) {
            (Ending::Failure, Some(end)) => {
                let failure_at = |i: usize| {
                    (end - CRASH_LEAD_NS
                        + i as i128 * CRASH_STEP_NS
                        + jitter(i, 0xc4a5, CRASH_STEP_NS))
                    .max(last_banner + (i as i128 + 1) * 1_000)
                };
                let lines = style.failure(run, &|i| at(failure_at(i)));
                lines
                    .into_iter()
                    .enumerate()
                    .map(|(i, text)| (failure_at(i), text))
                    .collect()
            }
            (Ending::Shutdown, Some(end)) => {
                let shutdown_at = |i: usize| {
                    end + i as i128 * SHUTDOWN_STEP_NS + jitter(i, 0x5107, SHUTDOWN_STEP_NS)
                };
                let lines = style.shutdown(run, &|i| at(shutdown_at(i)));
                lines
                    .into_iter()
                    .enumerate()
                    .map(|(i, text)| (shutdown_at(i), text))
                    .collect()
            }
            _ => Vec::new(),
        };
        Layout {
            run,
            style,
            seed,
            start,
            end,
            ending,
            banner,
            tail,
        }
    }

    fn periodic_base(&self) -> i128 {
        self.start + PERIODIC_START_NS
    }

    /// Whether the run prints periodic lines at all.
    fn serves(&self) -> bool {
        self.ending != Ending::Failure
    }

    /// The time of periodic line `k` (strictly increasing in `k`).
    fn periodic_at(&self, k: u64) -> i128 {
        let period = self.style.period_ns();
        let jitter =
            (mix(self.seed ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15)) % period as u64) as i128;
        self.periodic_base() + k as i128 * period + jitter
    }

    /// Whether periodic line `k` was printed before the run ended.
    fn periodic_live(&self, k: u64) -> bool {
        self.serves() && self.end.is_none_or(|end| self.periodic_at(k) < end)
    }

    /// The last periodic index printed at or before `t`, if any.
    fn last_periodic(&self, t: i128) -> Option<u64> {
        let t = match self.end {
            Some(end) => t.min(end - 1),
            None => t,
        };
        if !self.serves() || t < self.periodic_base() {
            return None;
        }
        let k = ((t - self.periodic_base()) / self.style.period_ns()) as u64;
        if self.periodic_at(k) <= t {
            Some(k)
        } else {
            k.checked_sub(1)
        }
    }

    /// The first periodic index printed after `t`.
    fn first_periodic_after(&self, t: i128) -> u64 {
        if t < self.periodic_base() {
            return 0;
        }
        let k = ((t - self.periodic_base()) / self.style.period_ns()) as u64;
        if self.periodic_at(k) > t { k } else { k + 1 }
    }

    fn periodic_line(&self, k: u64) -> (i128, String) {
        let t = self.periodic_at(k);
        let r = mix(self.seed ^ k.wrapping_mul(0xd1b5_4a32_d192_ed03) ^ 0x5bd1_e995);
        (t, self.style.periodic(self.run, k, r, at(t)))
    }
}

fn at(ns: i128) -> Timestamp {
    Timestamp::from_nanosecond(ns).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// The lines `run` printed at `since` (inclusive, None: from its start) up to `until`
/// (inclusive), oldest first; with `tail`, only the last that many.
pub fn lines(
    run: &Run,
    since: Option<Timestamp>,
    until: Timestamp,
    tail: Option<usize>,
) -> Vec<LogLine> {
    let layout = Layout::new(run);
    let lo = since.map_or(i128::MIN, |s| s.as_nanosecond());
    let hi = until.as_nanosecond();
    let in_window = |t: i128| lo <= t && t <= hi;
    let last = layout.last_periodic(hi);
    let kept_from = last.map_or(0, |k| k.saturating_sub(KEPT_LINES - 1));
    let mut out: Vec<(i128, String)> = Vec::new();
    if kept_from == 0 {
        out.extend(layout.banner.iter().filter(|(t, _)| in_window(*t)).cloned());
    }
    if let Some(last) = last {
        let mut first = kept_from.max(if lo == i128::MIN {
            0
        } else {
            layout.first_periodic_after(lo - 1)
        });
        if let Some(n) = tail {
            first = first.max((last + 1).saturating_sub(n as u64));
        }
        for k in first..=last {
            out.push(layout.periodic_line(k));
        }
    }
    out.extend(layout.tail.iter().filter(|(t, _)| in_window(*t)).cloned());
    if let Some(n) = tail
        && out.len() > n
    {
        out.drain(..out.len() - n);
    }
    out.into_iter()
        .map(|(t, text)| LogLine { at: at(t), text })
        .collect()
}

/// When `run` prints its next line after `after`; None once it has printed its last.
pub fn next_line_at(run: &Run, after: Timestamp) -> Option<Timestamp> {
    let layout = Layout::new(run);
    let after = after.as_nanosecond();
    let banner = layout.banner.iter().map(|(t, _)| *t).find(|t| *t > after);
    let k = layout.first_periodic_after(after);
    let periodic = layout
        .periodic_live(k)
        .then(|| layout.periodic_at(k))
        .filter(|t| *t > after);
    let ending = layout.tail.iter().map(|(t, _)| *t).find(|t| *t > after);
    [banner, periodic, ending]
        .into_iter()
        .flatten()
        .min()
        .map(at)
}

/// FNV-1a over the parts (NUL-separated), finished with [`mix`].
fn hash(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain([0]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    mix(h)
}

/// splitmix64's finalizer.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests;
