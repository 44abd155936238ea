//! Durations as Go and kubectl print them: Go's `time.Duration.String()` (the protobuf JSON of a
//! `Duration`, the uptime a simulated container logs) and apimachinery's `HumanDuration` (the
//! ages of kubectl's tables). One copy of each, for the server and the simulated nodes.

/// Go's `time.Duration.String()`: `1h2m3.5s`, `150ms`, `0s`.
pub fn go_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let u = nanos.unsigned_abs();
    let frac = |v: u64, unit: u64, digits: usize| {
        let (whole, rest) = (v / unit, v % unit);
        if rest == 0 {
            whole.to_string()
        } else {
            let f = format!("{rest:0digits$}");
            format!("{whole}.{}", f.trim_end_matches('0'))
        }
    };
    if u < 1_000 {
        return format!("{sign}{u}ns");
    }
    if u < 1_000_000 {
        return format!("{sign}{}µs", frac(u, 1_000, 3));
    }
    if u < 1_000_000_000 {
        return format!("{sign}{}ms", frac(u, 1_000_000, 6));
    }
    let secs = u / 1_000_000_000;
    let sub = u % 1_000_000_000;
    let s = frac(secs % 60 * 1_000_000_000 + sub, 1_000_000_000, 9);
    let (m, h) = (secs / 60 % 60, secs / 3600);
    match (h, m) {
        (0, 0) => format!("{sign}{s}s"),
        (0, m) => format!("{sign}{m}m{s}s"),
        (h, m) => format!("{sign}{h}h{m}m{s}s"),
    }
}

/// A duration in seconds as kubectl prints ages and durations (apimachinery's HumanDuration).
pub fn human(secs: i64) -> String {
    let (m, h, d) = (secs / 60, secs / 3600, secs / 86_400);
    if secs < 120 {
        format!("{secs}s")
    } else if m < 10 {
        format!("{m}m{}s", secs % 60)
    } else if h < 3 {
        format!("{m}m")
    } else if h < 8 {
        format!("{h}h{}m", m % 60)
    } else if d < 2 {
        format!("{h}h")
    } else if d < 8 {
        format!("{d}d{}h", h % 24)
    } else {
        format!("{d}d")
    }
}
