//! AdvancedCronJob schedules: the next run of a Kubernetes cron schedule (five fields, or a
//! `@daily`-style descriptor, as robfig/cron's standard parser reads it) in the job's
//! `spec.timeZone`, with jiff's time zone database. The expression is evaluated by the
//! `jiff-cron` crate; this module only maps the Kubernetes dialect onto it (a seconds field,
//! day-of-week numbers 0-7 with 0 and 7 meaning Sunday, `?` for "any"). No clock: `after` is a
//! parameter.

use std::str::FromStr;

use jiff::{Timestamp, Zoned, tz::TimeZone};
use jiff_cron::Schedule;

/// Why a schedule or time zone cannot be evaluated (shown to the user as is).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CronError {
    #[error("schedule {schedule:?}: {reason}")]
    Schedule { schedule: String, reason: String },
    #[error("unknown time zone {0:?}")]
    TimeZone(String),
    #[error("schedule {0:?} never fires")]
    Never(String),
}

const DAY_NAMES: [&str; 8] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

/// The zone a job's schedule is read in: `spec.timeZone`, or UTC when unset (the zone the
/// Kruise controller manager runs in, in its published image).
pub fn zone(time_zone: Option<&str>) -> Result<TimeZone, CronError> {
    match time_zone.map(str::trim).filter(|z| !z.is_empty()) {
        None => Ok(TimeZone::UTC),
        Some(name) => TimeZone::get(name).map_err(|_| CronError::TimeZone(name.to_string())),
    }
}

/// The first time strictly after `after` at which `schedule` fires in `time_zone`.
pub fn next_run(
    schedule: &str,
    time_zone: Option<&str>,
    after: Timestamp,
) -> Result<Zoned, CronError> {
    let tz = zone(time_zone)?;
    let parsed = parse(schedule)?;
    parsed
        .after(after.to_zoned(tz))
        .next()
        .ok_or_else(|| CronError::Never(schedule.to_string()))
}

/// Parses a Kubernetes cron schedule.
pub fn parse(schedule: &str) -> Result<Schedule, CronError> {
    let err = |reason: String| CronError::Schedule {
        schedule: schedule.to_string(),
        reason,
    };
    let text = schedule.trim();
    if text.starts_with("TZ=") || text.starts_with("CRON_TZ=") {
        return Err(err(
            "set the time zone in spec.timeZone, not in the schedule".into(),
        ));
    }
    let expression = if text.starts_with('@') {
        if text.starts_with("@every") {
            return Err(err("@every is not a calendar schedule".into()));
        }
        let descriptor = if text == "@midnight" { "@daily" } else { text };
        descriptor.to_string()
    } else {
        let fields: Vec<&str> = text.split_whitespace().collect();
        let [minute, hour, dom, month, dow] = fields[..] else {
            return Err(err(format!("expected 5 fields, found {}", fields.len())));
        };
        let any = |f: &str| {
            if f == "?" {
                "*".to_string()
            } else {
                f.to_string()
            }
        };
        format!(
            "0 {minute} {hour} {} {month} {}",
            any(dom),
            day_of_week(&any(dow)).map_err(err)?
        )
    };
    Schedule::from_str(&expression).map_err(|e| err(e.to_string()))
}

/// Rewrites day-of-week numbers (0-7, Sunday = 0 or 7) as names, which jiff-cron reads the same
/// way (it numbers days 1-7 from Sunday). `N/step` means `N-Sat/step`, as in robfig/cron.
fn day_of_week(field: &str) -> Result<String, String> {
    let name = |n: &str| -> Result<&'static str, String> {
        match n.parse::<usize>() {
            Ok(i) if i < DAY_NAMES.len() => Ok(DAY_NAMES[i]),
            Ok(i) => Err(format!("day of week {i} is out of range 0-7")),
            Err(_) => Ok(""),
        }
    };
    let mut out = Vec::new();
    for part in field.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => (r, Some(s)),
            None => (part, None),
        };
        let mut range = match range.split_once('-') {
            Some((a, b)) => {
                let (na, nb) = (name(a)?, name(b)?);
                let a = if na.is_empty() { a } else { na };
                // 7 at the end of a range is Saturday's successor, Sunday: keep Sat as the end.
                let b = match (nb, b) {
                    (_, "7") => "Sat",
                    ("", b) => b,
                    (nb, _) => nb,
                };
                let mut r = format!("{a}-{b}");
                if b == "Sat" && range.ends_with("-7") {
                    // `N-7` includes Sunday as well.
                    r = format!("{r},Sun");
                }
                r
            }
            None => match name(range)? {
                "" => range.to_string(),
                n if step.is_some() => format!("{n}-Sat"),
                n => n.to_string(),
            },
        };
        if let Some(step) = step {
            if range.contains(',') {
                return Err(format!(
                    "day-of-week range {part:?} with a step ending at 7"
                ));
            }
            range = format!("{range}/{step}");
        }
        out.push(range);
    }
    Ok(out.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn next(schedule: &str, tz: Option<&str>, after: &str) -> String {
        let z = next_run(schedule, tz, at(after)).unwrap();
        format!("{} {}", z.timestamp(), z.strftime("%Y-%m-%d %H:%M %Z"))
    }

    #[test]
    fn daily_run_keeps_local_time_across_spring_forward() {
        // Berlin moves from CET (+1) to CEST (+2) on 2026-03-29 at 02:00.
        let s = "0 9 * * *";
        assert_eq!(
            next(s, Some("Europe/Berlin"), "2026-03-28T09:00:00Z"),
            "2026-03-29T07:00:00Z 2026-03-29 09:00 CEST"
        );
        assert_eq!(
            next(s, Some("Europe/Berlin"), "2026-03-27T09:00:00Z"),
            "2026-03-28T08:00:00Z 2026-03-28 09:00 CET"
        );
        // The same schedule without a zone runs at 09:00 UTC.
        assert_eq!(
            next(s, None, "2026-03-28T09:00:00Z"),
            "2026-03-29T09:00:00Z 2026-03-29 09:00 UTC"
        );
    }

    #[test]
    fn weekday_run_across_fall_back_in_new_york() {
        // New York moves from EDT (-4) to EST (-5) on Sunday 2026-11-01; Monday's 06:30 run
        // is 11:30 UTC, Friday's before it 10:30 UTC.
        let s = "30 6 * * 1-5";
        assert_eq!(
            next(s, Some("America/New_York"), "2026-10-29T12:00:00Z"),
            "2026-10-30T10:30:00Z 2026-10-30 06:30 EDT"
        );
        assert_eq!(
            next(s, Some("America/New_York"), "2026-10-30T12:00:00Z"),
            "2026-11-02T11:30:00Z 2026-11-02 06:30 EST"
        );
    }

    #[test]
    fn day_of_week_numbers_follow_kubernetes() {
        // 2026-11-24 is a Tuesday.
        let after = "2026-11-24T12:00:00Z";
        assert_eq!(
            next("0 0 * * 0", None, after),
            next("0 0 * * 7", None, after)
        );
        assert_eq!(
            next("0 0 * * 0", None, after),
            "2026-11-29T00:00:00Z 2026-11-29 00:00 UTC"
        );
        assert_eq!(
            next("0 0 * * 3", None, after),
            "2026-11-25T00:00:00Z 2026-11-25 00:00 UTC"
        );
        assert_eq!(
            next("0 0 * * 5-7", None, after),
            "2026-11-27T00:00:00Z 2026-11-27 00:00 UTC"
        );
        assert_eq!(
            next("0 0 ? * MON", None, after),
            "2026-11-30T00:00:00Z 2026-11-30 00:00 UTC"
        );
        assert_eq!(
            next("@hourly", Some("Asia/Kolkata"), after),
            "2026-11-24T12:30:00Z 2026-11-24 18:00 IST"
        );
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        let after = at("2026-11-24T12:00:00Z");
        assert_eq!(
            next_run("0 9 * * *", Some("Mars/Olympus"), after),
            Err(CronError::TimeZone("Mars/Olympus".into()))
        );
        let e = next_run("0 9 * *", None, after).unwrap_err().to_string();
        assert!(e.contains("expected 5 fields, found 4"), "{e}");
        let e = next_run("0 9 * * 8", None, after).unwrap_err().to_string();
        assert!(e.contains("out of range"), "{e}");
        let e = next_run("61 9 * * *", None, after).unwrap_err().to_string();
        assert!(e.starts_with("schedule \"61 9 * * *\""), "{e}");
        let e = next_run("TZ=UTC 0 9 * * *", None, after)
            .unwrap_err()
            .to_string();
        assert!(e.contains("spec.timeZone"), "{e}");
    }
}
