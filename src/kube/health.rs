//! Connection health of one watch: the retry backoff and failure episodes.
//!
//! kube-rs's default watcher backoff grows to 30 s, far above the 5 s the console promises for
//! resuming after an API server restart, so watches use [`WatchBackoff`] (0.25 s doubling, capped
//! at 2 s). [`Health`] turns a stream of retried errors into one `WatchFailed` per failure episode
//! and one `WatchRecovered` when it ends. No IO here.

use std::time::Duration;

use kube::runtime::utils::Backoff;

/// First retry delay after a watch error.
pub const BACKOFF_MIN: Duration = Duration::from_millis(250);
/// The longest wait between retries: keeps recovery well under 5 s.
pub const BACKOFF_MAX: Duration = Duration::from_secs(2);

/// Exponential backoff, 0.25 s doubling up to 2 s, never giving up. Reset by any good event.
#[derive(Debug, Clone)]
pub struct WatchBackoff {
    next: Duration,
}

impl Default for WatchBackoff {
    fn default() -> Self {
        Self { next: BACKOFF_MIN }
    }
}

impl Iterator for WatchBackoff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        let delay = self.next;
        self.next = (self.next * 2).min(BACKOFF_MAX);
        Some(delay)
    }
}

impl Backoff for WatchBackoff {
    fn reset(&mut self) {
        self.next = BACKOFF_MIN;
    }
}

/// Whether a watch is healthy, tracked across retries.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Health {
    failing: bool,
}

impl Health {
    /// Records an error; true when it starts a failure episode (report it), false for a retry.
    pub fn failed(&mut self) -> bool {
        !std::mem::replace(&mut self.failing, true)
    }

    /// Records a sign of life; true when it ends a failure episode (report the recovery).
    pub fn alive(&mut self) -> bool {
        std::mem::replace(&mut self.failing, false)
    }

    pub fn is_failing(&self) -> bool {
        self.failing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_its_cap_and_resets() {
        let mut backoff = WatchBackoff::default();
        let delays: Vec<_> = backoff.by_ref().take(6).collect();
        assert_eq!(
            delays,
            [250, 500, 1000, 2000, 2000, 2000].map(Duration::from_millis)
        );
        backoff.reset();
        assert_eq!(backoff.next(), Some(BACKOFF_MIN));
    }

    #[test]
    fn one_report_per_failure_episode() {
        let mut health = Health::default();
        assert!(!health.alive(), "healthy watches report no recovery");
        assert!(health.failed(), "first error starts an episode");
        assert!(!health.failed(), "retries stay quiet");
        assert!(health.is_failing());
        assert!(health.alive(), "first good event ends it");
        assert!(!health.alive());
        assert!(health.failed(), "a later error is a new episode");
    }
}
