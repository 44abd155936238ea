//! client-go's EventCorrelator (tools/record/events_cache.go), which every upstream controller's
//! recorder runs before it writes: similar events are aggregated, and a per-object spam filter
//! drops what goes beyond a burst. Without it a CloneSet creating 100 pods writes 100 Events
//! (one per "Created pod: NAME"), and 100,000 pods leave 100,000 Events in the cluster.
//!
//! - Aggregation: events about one object from one source with the same type and reason but
//!   different messages are "similar"; once [`AGGREGATE_MAX_EVENTS`] distinct messages were seen
//!   within [`AGGREGATE_INTERVAL`], the next is recorded as one event whose message starts with
//!   `(combined from similar events): ` and whose count grows.
//! - Spam filter: a token bucket per (source, object): a burst of [`SPAM_BURST`] events, then
//!   one per [`SPAM_REFILL`]. An event beyond it is not written (neither created nor patched).

use std::{collections::HashMap, time::Duration};

use jiff::Timestamp;

/// client-go's `defaultAggregateMaxEvents`.
pub const AGGREGATE_MAX_EVENTS: usize = 10;
/// client-go's `defaultAggregateIntervalInSeconds`.
pub const AGGREGATE_INTERVAL: Duration = Duration::from_secs(600);
/// client-go's `defaultSpamBurst`.
pub const SPAM_BURST: f64 = 25.0;
/// client-go's `defaultSpamQPS` (1/300): one token every five minutes.
pub const SPAM_REFILL: Duration = Duration::from_secs(300);
/// How many keys each cache holds (client-go's LRU caches hold 4096).
const MAX_KEYS: usize = 4096;

/// The message an aggregated event carries.
pub fn combined(message: &str) -> String {
    format!("(combined from similar events): {message}")
}

/// What the correlator decided for one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Write it with this message (its own, or the combined one).
    Write { message: String, aggregated: bool },
    /// The spam filter dropped it.
    Skip,
}

#[derive(Debug, Default)]
struct Aggregate {
    messages: Vec<String>,
    since: Option<Timestamp>,
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Timestamp,
}

/// The correlator's state (one per recorder, as client-go's broadcaster has one).
#[derive(Debug, Default)]
pub struct Correlator {
    aggregates: HashMap<String, Aggregate>,
    buckets: HashMap<String, Bucket>,
}

impl Correlator {
    /// Decides about an event from `source` about `object` (kind, namespace, name, uid and
    /// apiVersion joined) of `type_` and `reason`, at `now`.
    pub fn decide(
        &mut self,
        source: &str,
        object: &str,
        type_: &str,
        reason: &str,
        message: &str,
        now: Timestamp,
    ) -> Decision {
        if self.aggregates.len() > MAX_KEYS {
            self.aggregates.clear();
        }
        if self.buckets.len() > MAX_KEYS {
            self.buckets.clear();
        }
        let aggregate_key = format!("{source}\u{0}{object}\u{0}{type_}\u{0}{reason}");
        let entry = self.aggregates.entry(aggregate_key).or_default();
        let interval = jiff::SignedDuration::try_from(AGGREGATE_INTERVAL).unwrap_or_default();
        if entry.since.is_none_or(|t| now.duration_since(t) > interval) {
            entry.messages.clear();
            entry.since = Some(now);
        }
        if !entry.messages.iter().any(|m| m == message) {
            entry.messages.push(message.to_owned());
        }
        let aggregated = entry.messages.len() >= AGGREGATE_MAX_EVENTS;
        // The spam filter sees every event, aggregated or not.
        let bucket = self
            .buckets
            .entry(format!("{source}\u{0}{object}"))
            .or_insert(Bucket {
                tokens: SPAM_BURST,
                at: now,
            });
        let elapsed = now.duration_since(bucket.at).as_secs_f64().max(0.0);
        bucket.tokens = (bucket.tokens + elapsed / SPAM_REFILL.as_secs_f64()).min(SPAM_BURST);
        bucket.at = now;
        if bucket.tokens < 1.0 {
            return Decision::Skip;
        }
        bucket.tokens -= 1.0;
        Decision::Write {
            message: if aggregated {
                combined(message)
            } else {
                message.to_owned()
            },
            aggregated,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decide(c: &mut Correlator, object: &str, message: &str, now: Timestamp) -> Decision {
        c.decide(
            "cloneset-controller",
            object,
            "Normal",
            "SuccessfulCreate",
            message,
            now,
        )
    }

    #[test]
    fn the_tenth_similar_event_is_combined_and_the_burst_is_twenty_five() {
        let mut c = Correlator::default();
        let now = Timestamp::now();
        let mut written = Vec::new();
        for i in 0..100 {
            match decide(
                &mut c,
                "web",
                &format!("succeed to create pod web-{i}"),
                now,
            ) {
                Decision::Write { message, .. } => written.push(message),
                Decision::Skip => {}
            }
        }
        assert_eq!(written.len(), 25);
        assert_eq!(written[8], "succeed to create pod web-8");
        assert_eq!(
            written[9],
            "(combined from similar events): succeed to create pod web-9"
        );
        // Another object has its own budget.
        assert!(matches!(
            decide(&mut c, "api", "succeed to create pod api-0", now),
            Decision::Write {
                aggregated: false,
                ..
            }
        ));
        // Five minutes later one more token; ten minutes later the aggregation starts over.
        let later = now + jiff::SignedDuration::from_secs(301);
        assert!(matches!(
            decide(&mut c, "web", "succeed to create pod web-100", later),
            Decision::Write {
                aggregated: true,
                ..
            }
        ));
        assert_eq!(
            decide(&mut c, "web", "succeed to create pod web-101", later),
            Decision::Skip
        );
        let much_later = now + jiff::SignedDuration::from_secs(1_500);
        assert_eq!(
            decide(&mut c, "web", "scaled", much_later),
            Decision::Write {
                message: "scaled".into(),
                aggregated: false
            }
        );
    }

    #[test]
    fn a_repeated_message_is_not_a_new_similar_event() {
        let mut c = Correlator::default();
        let now = Timestamp::now();
        for _ in 0..20 {
            assert_eq!(
                decide(&mut c, "web", "same", now),
                Decision::Write {
                    message: "same".into(),
                    aggregated: false
                }
            );
        }
    }
}
