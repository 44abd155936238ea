//! What the controllers say about failing reconciles, pure: an error as one short line (the
//! API's reason and message, an object body the server echoes cut), said once per object until
//! it changes or the object reconciles again (then "recovered", once), however often the
//! back-off retries.

use std::collections::HashMap;

/// How much of a message that echoes an object body is kept (`Object 'Kind' is missing in
/// '{"metadata":…'` says what it needs to in its first words).
const ECHO_KEEP: usize = 120;
/// How much of any other message is kept.
const KEEP: usize = 300;

/// `reason: message` on one line, cut to [`ECHO_KEEP`] characters when the message echoes a
/// JSON body, else to [`KEEP`].
pub fn short(reason: Option<&str>, message: &str) -> String {
    let line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    let echoes = line.contains("{\"") || line.contains("'{");
    let mut text = cut(&line, if echoes { ECHO_KEEP } else { KEEP });
    if let Some(reason) = reason.filter(|r| !r.is_empty() && !text.starts_with(*r)) {
        text = format!("{reason}: {text}");
    }
    text
}

fn cut(line: &str, keep: usize) -> String {
    match line.char_indices().nth(keep) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_owned(),
    }
}

/// The failing objects of one controller: how often each failed in a row, and what was said.
#[derive(Debug, Default)]
pub struct Failures {
    by_key: HashMap<String, Failing>,
}

#[derive(Debug)]
struct Failing {
    attempts: u32,
    said: String,
}

/// What a failure means for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed {
    /// Failures in a row, this one included (for the back-off).
    pub attempts: u32,
    /// The line to say, when it is news (first failure, or another error than last time).
    pub say: Option<String>,
}

impl Failures {
    /// Records a failure of `key` with `line` (already [`short`]).
    pub fn failed(&mut self, key: &str, line: &str) -> Failed {
        match self.by_key.get_mut(key) {
            Some(failing) => {
                failing.attempts = failing.attempts.saturating_add(1);
                let news = failing.said != line;
                if news {
                    line.clone_into(&mut failing.said);
                }
                Failed {
                    attempts: failing.attempts,
                    say: news.then(|| line.to_owned()),
                }
            }
            None => {
                self.by_key.insert(
                    key.to_owned(),
                    Failing {
                        attempts: 1,
                        said: line.to_owned(),
                    },
                );
                Failed {
                    attempts: 1,
                    say: Some(line.to_owned()),
                }
            }
        }
    }

    /// Records a success of `key`: how many failures in a row it recovered from, if any.
    pub fn succeeded(&mut self, key: &str) -> Option<u32> {
        self.by_key.remove(key).map(|f| f.attempts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_echoed_object_body_is_cut_and_the_reason_leads() {
        let body = format!(
            r#"{{"metadata":{{"name":"web-0","namespace":"default","labels":{{"app":"web"}}}},"spec":{{"containers":[{}]}}}}"#,
            r#"{"name":"main","image":"nginx:1.25"}"#.repeat(40)
        );
        let message = format!("Object 'Kind' is missing in '{body}'");
        assert!(message.len() > 1500);
        let line = short(Some("BadRequest"), &message);
        assert!(line.starts_with("BadRequest: Object 'Kind' is missing in '{\"metadata\""));
        assert!(line.ends_with('…'));
        assert_eq!(line.chars().count(), "BadRequest: ".len() + ECHO_KEEP + 1);
        // A short message stays whole; one that already names its reason is not prefixed twice.
        assert_eq!(
            short(Some("Conflict"), "the object has been modified"),
            "Conflict: the object has been modified"
        );
        assert_eq!(short(None, "Forbidden:\n  no"), "Forbidden: no");
        assert_eq!(short(Some("Forbidden"), "Forbidden: no"), "Forbidden: no");
        let long = "x".repeat(1000);
        assert_eq!(short(None, &long).chars().count(), KEEP + 1);
    }

    #[test]
    fn the_same_error_is_said_once_until_it_changes_or_recovers() {
        let mut f = Failures::default();
        let first = f.failed("default/web", "BadRequest: a");
        assert_eq!(first.say.as_deref(), Some("BadRequest: a"));
        assert_eq!(first.attempts, 1);
        for n in 2..5 {
            assert_eq!(
                f.failed("default/web", "BadRequest: a"),
                Failed {
                    attempts: n,
                    say: None
                }
            );
        }
        // Another object fails on its own account.
        assert!(f.failed("default/db", "BadRequest: a").say.is_some());
        // The error changes: said again.
        assert_eq!(
            f.failed("default/web", "Invalid: b").say.as_deref(),
            Some("Invalid: b")
        );
        assert_eq!(f.succeeded("default/web"), Some(5));
        assert_eq!(f.succeeded("default/web"), None, "recovered is said once");
        // Failing again after recovering is news again.
        assert!(f.failed("default/web", "Invalid: b").say.is_some());
    }
}
