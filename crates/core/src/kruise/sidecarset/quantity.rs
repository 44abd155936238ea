//! Canonical form of a Kubernetes quantity, as Go's `resource.Quantity` marshals it (the
//! SidecarSet hash sees `"0.5"` as `"500m"` and `"1024Mi"` as `"1Gi"`).

/// Parsed quantity: `mantissa * 10^scale` (binary suffixes already multiplied out) and the
/// suffix family that picks the output format.
struct Parsed {
    negative: bool,
    mantissa: i128,
    scale: i32,
    format: Format,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    DecimalSi,
    BinarySi,
    DecimalExponent,
}

fn parse(s: &str) -> Option<Parsed> {
    let s = s.trim();
    let (negative, rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let num_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(num_end);
    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let digits = format!("{int_part}{frac_part}");
    let mut mantissa: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    let mut scale = -i32::try_from(frac_part.len()).ok()?;
    let format = match suffix {
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => {
            let power = match suffix {
                "Ki" => 1,
                "Mi" => 2,
                "Gi" => 3,
                "Ti" => 4,
                "Pi" => 5,
                _ => 6,
            };
            mantissa = mantissa.checked_mul(1024i128.checked_pow(power)?)?;
            Format::BinarySi
        }
        "n" | "u" | "m" | "" | "k" | "M" | "G" | "T" | "P" | "E" => {
            scale += match suffix {
                "n" => -9,
                "u" => -6,
                "m" => -3,
                "" => 0,
                "k" => 3,
                "M" => 6,
                "G" => 9,
                "T" => 12,
                "P" => 15,
                _ => 18,
            };
            Format::DecimalSi
        }
        e if e.starts_with(['e', 'E']) => {
            scale = scale.checked_add(e[1..].parse::<i32>().ok()?)?;
            Format::DecimalExponent
        }
        _ => return None,
    };
    // Precision below nano is rounded up (away from zero), as ParseQuantity does.
    if scale < -60 {
        mantissa = i128::from(mantissa != 0);
        scale = -9;
    }
    while scale < -9 {
        let rem = mantissa % 10;
        mantissa /= 10;
        if rem != 0 {
            mantissa += 1;
        }
        scale += 1;
    }
    Some(Parsed {
        negative,
        mantissa,
        scale,
        format,
    })
}

fn decimal_suffix(exponent: i32, format: Format) -> Option<&'static str> {
    if format == Format::DecimalExponent {
        return None;
    }
    Some(match exponent {
        -9 => "n",
        -6 => "u",
        -3 => "m",
        0 => "",
        3 => "k",
        6 => "M",
        9 => "G",
        12 => "T",
        15 => "P",
        18 => "E",
        _ => return None,
    })
}

/// The canonical string of a quantity, or None when it cannot be parsed (callers keep the
/// input as given).
///
/// Port of k8s.io/apimachinery/pkg/api/resource/quantity.go::CanonicalizeBytes.
pub fn canonical(s: &str) -> Option<String> {
    canonical_of(parse(s)?)
}

/// The value of a quantity in nano units (`1` → 10^9, `1m` → 10^6, `1Ki` → 1024 × 10^9), or
/// None when it cannot be parsed or does not fit.
pub fn nanos(s: &str) -> Option<i128> {
    let q = parse(s)?;
    let v = q
        .mantissa
        .checked_mul(10i128.checked_pow(u32::try_from(q.scale.checked_add(9)?).ok()?)?)?;
    Some(if q.negative { -v } else { v })
}

/// `Quantity.MilliValue()`: the value in thousandths, rounded up (CPU in millicores: `"250m"`
/// → 250, `"123456789n"` → 124, `"2"` → 2000), or None when it cannot be parsed or does not fit.
pub fn milli_value(s: &str) -> Option<i64> {
    let n = nanos(s)?;
    i64::try_from(n.div_euclid(1_000_000) + i128::from(n.rem_euclid(1_000_000) != 0)).ok()
}

/// `Quantity.Value()`: the value in whole units, rounded up (memory in bytes: `"51200Ki"` →
/// 52428800, `"1e3"` → 1000), or None when it cannot be parsed or does not fit.
pub fn value(s: &str) -> Option<i64> {
    let n = nanos(s)?;
    i64::try_from(n.div_euclid(1_000_000_000) + i128::from(n.rem_euclid(1_000_000_000) != 0)).ok()
}

/// Whether a quantity is written with a binary suffix (`Ki`, `Mi`, ...): Go keeps that format
/// through arithmetic, so results print as `200Mi` rather than `209715200`.
pub fn is_binary(s: &str) -> bool {
    parse(s).is_some_and(|q| q.format == Format::BinarySi)
}

/// The canonical string of a value in nano units, in the binary or decimal SI format (what
/// Go's `Quantity.String` prints after arithmetic on quantities of that format).
pub fn from_nanos(nanos: i128, binary: bool) -> Option<String> {
    canonical_of(Parsed {
        negative: nanos < 0,
        mantissa: nanos.checked_abs()?,
        scale: -9,
        format: if binary {
            Format::BinarySi
        } else {
            Format::DecimalSi
        },
    })
}

fn canonical_of(q: Parsed) -> Option<String> {
    if q.mantissa == 0 {
        return Some("0".to_owned());
    }
    let sign = if q.negative { "-" } else { "" };
    let mut format = q.format;
    if format == Format::BinarySi {
        let integral =
            q.scale >= 0 || q.mantissa % 10i128.checked_pow(q.scale.unsigned_abs())? == 0;
        let small =
            q.scale <= 0 && q.mantissa < 1024 * 10i128.checked_pow(q.scale.unsigned_abs())?;
        if small || !integral {
            format = Format::DecimalSi;
        }
    }
    if format == Format::BinarySi {
        let mut value = if q.scale >= 0 {
            q.mantissa
                .checked_mul(10i128.checked_pow(q.scale.unsigned_abs())?)?
        } else {
            q.mantissa / 10i128.checked_pow(q.scale.unsigned_abs())?
        };
        let mut power = 0;
        while value % 1024 == 0 && power < 6 {
            value /= 1024;
            power += 1;
        }
        let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][power];
        return Some(format!("{sign}{value}{suffix}"));
    }
    let (mut amount, mut exponent) = (q.mantissa, q.scale);
    while amount % 10 == 0 {
        amount /= 10;
        exponent += 1;
    }
    match exponent.rem_euclid(3) {
        1 => {
            amount = amount.checked_mul(10)?;
            exponent -= 1;
        }
        2 => {
            amount = amount.checked_mul(100)?;
            exponent -= 2;
        }
        _ => {}
    }
    Some(match decimal_suffix(exponent, format) {
        Some(suffix) => format!("{sign}{amount}{suffix}"),
        None if exponent == 0 => format!("{sign}{amount}"),
        None => format!("{sign}{amount}e{exponent}"),
    })
}

#[cfg(test)]
mod tests {
    use super::{canonical, milli_value, value};

    #[test]
    fn milli_and_whole_values_round_up_as_go_does() {
        for (input, milli) in [
            ("250m", Some(250)),
            ("123456789n", Some(124)),
            ("1u", Some(1)),
            ("0", Some(0)),
            ("2", Some(2000)),
            ("1.5", Some(1500)),
            ("5e-3", Some(5)),
            ("x", None),
        ] {
            assert_eq!(milli_value(input), milli, "{input}");
        }
        for (input, bytes) in [
            ("51200Ki", Some(52_428_800)),
            ("128Mi", Some(134_217_728)),
            ("1Gi", Some(1_073_741_824)),
            ("1k", Some(1000)),
            ("2M", Some(2_000_000)),
            ("1G", Some(1_000_000_000)),
            ("1e3", Some(1000)),
            ("12345", Some(12345)),
            ("500m", Some(1)),
            ("Mi", None),
        ] {
            assert_eq!(value(input), bytes, "{input}");
        }
    }

    #[test]
    fn canonical_forms() {
        for (input, want) in [
            ("100m", "100m"),
            ("0.5", "500m"),
            ("1000m", "1"),
            ("1500", "1500"),
            ("1000", "1k"),
            ("1.5", "1500m"),
            ("128Mi", "128Mi"),
            ("1024Mi", "1Gi"),
            ("1.5Gi", "1536Mi"),
            ("512", "512"),
            ("0.5Ki", "512"),
            ("1e3", "1e3"),
            ("0", "0"),
            ("0.0000000001", "1n"),
            ("-2k", "-2k"),
        ] {
            assert_eq!(canonical(input).as_deref(), Some(want), "{input}");
        }
        assert_eq!(canonical("12x"), None);
        // Out of range: left to the caller (written as given), never a panic.
        assert_eq!(canonical(&"9".repeat(40)), None);
        assert!(canonical(&format!("{}0", "9".repeat(37))).is_none_or(|c| !c.is_empty()));
        assert_eq!(canonical("1e-2147483648").as_deref(), Some("1e-9"));
        assert_eq!(canonical("0.5e-100").as_deref(), Some("1e-9"));
    }

    #[test]
    fn nanos_and_back() {
        use super::{from_nanos, is_binary, nanos};
        assert_eq!(nanos("200m"), Some(200_000_000));
        assert_eq!(nanos("1"), Some(1_000_000_000));
        assert_eq!(nanos("1Ki"), Some(1024 * 1_000_000_000));
        assert_eq!(nanos("-2"), Some(-2_000_000_000));
        assert_eq!(nanos("x"), None);
        assert!(is_binary("512Mi") && !is_binary("512M") && !is_binary("1"));
        assert_eq!(from_nanos(300_000_000, false).as_deref(), Some("300m"));
        assert_eq!(
            from_nanos(200 * 1024 * 1024 * 1_000_000_000, true).as_deref(),
            Some("200Mi")
        );
        assert_eq!(
            from_nanos(260 * 1024 * 1024 * 1_000_000_000, true).as_deref(),
            Some("260Mi")
        );
        assert_eq!(from_nanos(0, true).as_deref(), Some("0"));
    }

    proptest::proptest! {
        #[test]
        fn canonical_is_idempotent(
            int in 0u64..1_000_000,
            frac in proptest::option::of(0u32..1000),
            suffix in proptest::sample::select(vec!["", "m", "k", "M", "Ki", "Mi", "Gi", "e3", "e-2", "n"]),
        ) {
            let input = match frac {
                Some(f) => format!("{int}.{f}{suffix}"),
                None => format!("{int}{suffix}"),
            };
            let once = canonical(&input).expect("parsable");
            let twice = canonical(&once);
            proptest::prop_assert_eq!(twice.as_deref(), Some(once.as_str()));
        }
    }
}
