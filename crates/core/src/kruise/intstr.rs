//! Int-or-percent scaling: Kruise's float-percent parser (partitions), the apimachinery integer
//! parsers (maxSurge / maxUnavailable), and partition resolution.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// Why an int-or-percent value could not be scaled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IntStrError {
    #[error("{0:?} is not a percentage (expected a number followed by %)")]
    NotPercent(String),
    #[error("{0:?} is not a valid number")]
    BadNumber(String),
}

/// Parses `v` the Kruise way: an integer as is, a string must end in `%` and the number before it
/// is a float (`"99.99%"` is legal). Returns (value, is_percent).
fn kruise_value(v: &IntOrString) -> Result<(f64, bool), IntStrError> {
    match v {
        IntOrString::Int(i) => Ok((f64::from(*i), false)),
        IntOrString::String(s) => {
            let number = s
                .strip_suffix('%')
                .ok_or_else(|| IntStrError::NotPercent(s.clone()))?;
            let parsed: f64 = number
                .parse()
                .map_err(|_| IntStrError::BadNumber(s.clone()))?;
            if parsed.is_finite() {
                Ok((parsed, true))
            } else {
                Err(IntStrError::BadNumber(s.clone()))
            }
        }
    }
}

fn scale(value: f64, percent: bool, total: i32, round_up: bool) -> i32 {
    if !percent {
        return value as i32;
    }
    let raw = value * f64::from(total) / 100.0;
    let rounded = if round_up { raw.ceil() } else { raw.floor() };
    // `as` saturates, matching the clamp every caller applies afterwards.
    rounded as i32
}

/// Port of pkg/util/tools.go::GetScaledValueFromIntOrPercent (v1.8.4): percent parsed as float64.
pub fn scaled_value_kruise(
    v: &IntOrString,
    total: i32,
    round_up: bool,
) -> Result<i32, IntStrError> {
    let (value, percent) = kruise_value(v)?;
    Ok(scale(value, percent, total, round_up))
}

/// Port of apimachinery intstr::GetScaledValueFromIntOrPercent (k8s v1.30): a string must end in
/// `%` and hold an integer.
pub fn scaled_value_apimachinery(
    v: &IntOrString,
    total: i32,
    round_up: bool,
) -> Result<i32, IntStrError> {
    match v {
        IntOrString::Int(i) => Ok(*i),
        IntOrString::String(s) => {
            let number = s
                .strip_suffix('%')
                .ok_or_else(|| IntStrError::NotPercent(s.clone()))?;
            let parsed: i64 = number
                .parse()
                .map_err(|_| IntStrError::BadNumber(s.clone()))?;
            Ok(scale(parsed as f64, true, total, round_up))
        }
    }
}

/// Port of apimachinery intstr::GetValueFromIntOrPercent (deprecated, k8s v1.30), which
/// `calculateDiffsWithExpectation` uses: every `%` is removed and the rest must be an integer, so
/// a bare string `"5"` means 5 percent.
pub fn value_from_int_or_percent(
    v: &IntOrString,
    total: i32,
    round_up: bool,
) -> Result<i32, IntStrError> {
    match v {
        IntOrString::Int(i) => Ok(*i),
        IntOrString::String(s) => {
            let number = s.replace('%', "");
            let parsed: i64 = number
                .parse()
                .map_err(|_| IntStrError::BadNumber(s.clone()))?;
            Ok(scale(parsed as f64, true, total, round_up))
        }
    }
}

/// Port of pkg/util/tools.go::CalculatePartitionReplicas (v1.8.4).
///
/// A nil partition is 0; nil replicas count as 1; percents round up; a percent string other than
/// exactly `"100%"` that resolves to all replicas (> 1) leaves one pod to update; the result is
/// clamped to `[0, replicas]`.
pub fn calculate_partition_replicas(
    partition: Option<&IntOrString>,
    replicas: Option<i32>,
) -> Result<i32, IntStrError> {
    let Some(partition) = partition else {
        return Ok(0);
    };
    let replicas = replicas.unwrap_or(1);
    let mut value = scaled_value_kruise(partition, replicas, true)?;
    if replicas > 1
        && value == replicas
        && matches!(partition, IntOrString::String(s) if s != "100%")
    {
        value = replicas - 1;
    }
    Ok(value.min(replicas).max(0))
}

/// `status.expectedUpdatedReplicas` (cloneset_status.go `calculateStatus`): `replicas −
/// partition`, or 0 when the partition is invalid.
pub fn expected_updated_replicas(partition: Option<&IntOrString>, replicas: i32) -> i32 {
    match calculate_partition_replicas(partition, Some(replicas)) {
        Ok(p) => replicas - p,
        Err(_) => 0,
    }
}

/// A partition a user typed that the console refuses to send.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartitionInputError {
    #[error("partition is empty: give a number of pods (e.g. 3) or a percent (e.g. 40%)")]
    Empty,
    #[error("partition {0:?} is not a number of pods (e.g. 3) or a percent (e.g. 40%)")]
    NotANumber(String),
    #[error("partition {0:?} is negative: it must be 0 or more")]
    Negative(String),
    #[error("partition {0:?} is over 100%")]
    OverHundredPercent(String),
    #[error("partition {0} is more than the {1} replicas")]
    MoreThanReplicas(i32, i32),
}

/// Parses a partition typed by a user: a non-negative integer or a percent in `[0%, 100%]`.
/// With `replicas`, an integer above it is refused too.
pub fn parse_partition_input(
    text: &str,
    replicas: Option<i32>,
) -> Result<IntOrString, PartitionInputError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(PartitionInputError::Empty);
    }
    if let Some(number) = text.strip_suffix('%') {
        let value: f64 = number
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| PartitionInputError::NotANumber(text.to_owned()))?;
        if value < 0.0 {
            return Err(PartitionInputError::Negative(text.to_owned()));
        }
        if value > 100.0 {
            return Err(PartitionInputError::OverHundredPercent(text.to_owned()));
        }
        return Ok(IntOrString::String(format!("{}%", number.trim())));
    }
    let value: i64 = text
        .parse()
        .map_err(|_| PartitionInputError::NotANumber(text.to_owned()))?;
    if value < 0 {
        return Err(PartitionInputError::Negative(text.to_owned()));
    }
    let value =
        i32::try_from(value).map_err(|_| PartitionInputError::NotANumber(text.to_owned()))?;
    if let Some(replicas) = replicas
        && value > replicas
    {
        return Err(PartitionInputError::MoreThanReplicas(value, replicas));
    }
    Ok(IntOrString::Int(value))
}

/// Go's `%#v` of an `intstr.IntOrString` value, as field errors print it (its `String()` has a
/// pointer receiver, so a value prints as the struct).
pub fn go_struct(v: &IntOrString) -> String {
    match v {
        IntOrString::Int(n) => format!("intstr.IntOrString{{Type:0, IntVal:{n}, StrVal:\"\"}}"),
        IntOrString::String(s) => format!("intstr.IntOrString{{Type:1, IntVal:0, StrVal:{s:?}}}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> IntOrString {
        IntOrString::String(v.to_owned())
    }

    #[test]
    fn parsers_differ_on_float_percent() {
        assert_eq!(scaled_value_kruise(&s("30.5%"), 10, true), Ok(4));
        assert!(scaled_value_apimachinery(&s("30.5%"), 10, true).is_err());
        assert!(scaled_value_apimachinery(&s("30"), 10, true).is_err());
        assert_eq!(value_from_int_or_percent(&s("30"), 10, true), Ok(3));
    }

    #[test]
    fn apimachinery_rounds_percents_both_ways() {
        assert_eq!(scaled_value_apimachinery(&s("50%"), 3, true), Ok(2));
        assert_eq!(scaled_value_apimachinery(&s("50%"), 3, false), Ok(1));
        assert_eq!(scaled_value_apimachinery(&s("30%"), 15, true), Ok(5));
        assert_eq!(
            scaled_value_apimachinery(&IntOrString::Int(7), 3, true),
            Ok(7)
        );
        assert_eq!(scaled_value_apimachinery(&s("0%"), 10, true), Ok(0));
        assert!(scaled_value_apimachinery(&s("5"), 10, true).is_err());
        assert!(scaled_value_apimachinery(&s("1.5%"), 10, true).is_err());
    }

    #[test]
    fn partition_rules() {
        assert_eq!(
            calculate_partition_replicas(Some(&s("99%")), Some(9)),
            Ok(8)
        );
        assert_eq!(
            calculate_partition_replicas(Some(&s("99%")), Some(1)),
            Ok(1)
        );
        assert_eq!(calculate_partition_replicas(Some(&s("100%")), None), Ok(1));
        assert_eq!(
            calculate_partition_replicas(Some(&IntOrString::Int(20)), Some(3)),
            Ok(3)
        );
        assert!(calculate_partition_replicas(Some(&s("99")), Some(9)).is_err());
        assert_eq!(expected_updated_replicas(Some(&s("99")), 9), 0);
    }

    #[test]
    fn user_input() {
        assert_eq!(parse_partition_input("3", Some(5)), Ok(IntOrString::Int(3)));
        assert_eq!(parse_partition_input(" 40% ", None), Ok(s("40%")));
        assert!(matches!(
            parse_partition_input("abc", None),
            Err(PartitionInputError::NotANumber(_))
        ));
        assert!(matches!(
            parse_partition_input("150%", None),
            Err(PartitionInputError::OverHundredPercent(_))
        ));
        assert!(matches!(
            parse_partition_input("-1", None),
            Err(PartitionInputError::Negative(_))
        ));
        assert_eq!(
            parse_partition_input("6", Some(5)),
            Err(PartitionInputError::MoreThanReplicas(6, 5))
        );
        let msg = parse_partition_input("abc", None)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(msg.contains("\"abc\""), "{msg}");
    }
}
