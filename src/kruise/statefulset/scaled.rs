//! Int-or-percent scaling as apimachinery's `intstr.GetScaledValueFromIntOrPercent` does it
//! (integer percents only). Private to the workload ports until the shared `kruise::intstr`
//! lands; the lead can swap callers over then.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// Port of k8s.io/apimachinery/pkg/util/intstr::GetScaledValueFromIntOrPercent (v1.8.4 pin).
///
/// A percent is `ceil` (round up) or `floor` of `p * total / 100`; a string without `%` or with a
/// non-integer number is an error worded like upstream's.
pub(crate) fn scaled_value(value: &IntOrString, total: i32, round_up: bool) -> Result<i32, String> {
    match value {
        IntOrString::Int(v) => Ok(*v),
        IntOrString::String(s) => {
            let Some(number) = s.strip_suffix('%') else {
                return Err(format!(
                    "invalid value for IntOrString: invalid type: string is not a percentage: {s:?}"
                ));
            };
            let p: i64 = number
                .parse()
                .map_err(|e| format!("invalid value for IntOrString: invalid value {s:?}: {e}"))?;
            let product = p.saturating_mul(i64::from(total));
            let scaled = if round_up {
                product.div_euclid(100) + i64::from(product.rem_euclid(100) != 0)
            } else {
                product.div_euclid(100)
            };
            i32::try_from(scaled)
                .map_err(|_| format!("invalid value for IntOrString: {s:?} overflows"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> IntOrString {
        IntOrString::String(v.to_owned())
    }

    #[test]
    fn rounds_percents_both_ways() {
        assert_eq!(scaled_value(&s("50%"), 3, true), Ok(2));
        assert_eq!(scaled_value(&s("50%"), 3, false), Ok(1));
        assert_eq!(scaled_value(&s("30%"), 15, true), Ok(5));
        assert_eq!(scaled_value(&IntOrString::Int(7), 3, true), Ok(7));
        assert_eq!(scaled_value(&s("0%"), 10, true), Ok(0));
        assert!(scaled_value(&s("5"), 10, true).is_err());
        assert!(scaled_value(&s("1.5%"), 10, true).is_err());
    }
}
