//! Decimal numbers the way memcached's C code reads them (`strtol`/`strtoull` in base 10).
//!
//! The parser of request lines, the meta commands and `incr`/`decr` on stored values all
//! rest on the same scan: leading whitespace, an optional sign, at least one digit. What
//! each accepts after the digits differs, so the scan returns the rest for the caller to
//! judge. The `parse_*` functions are memcached's `safe_strto*`: they accept only
//! whitespace after the digits, reject values beyond 64 bits and a minus sign on a huge
//! unsigned value, and the 32-bit ones keep the low 32 bits (`flags` of 4294967296 are
//! stored as 0, an exptime of 2^31 reads as negative). This is the one number parser of
//! the protocol: request lines, meta flags and the server's meta commands all use it.

/// C's `isspace` in the "C" locale.
pub fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// A number as `strto*` scans it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scanned<'a> {
    /// A minus sign came first.
    pub negative: bool,
    /// The magnitude, or `None` if it does not fit in 64 bits (`ERANGE`).
    pub magnitude: Option<u64>,
    /// The bytes after the last digit.
    pub rest: &'a [u8],
}

/// Scans whitespace, a sign and digits; `None` if there is no digit (C's end pointer
/// stays at the start).
pub fn scan(s: &[u8]) -> Option<Scanned<'_>> {
    let mut i = 0;
    while i < s.len() && is_c_space(s[i]) {
        i += 1;
    }
    let negative = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let start = i;
    let mut magnitude = Some(0u64);
    while i < s.len() && s[i].is_ascii_digit() {
        magnitude = magnitude
            .and_then(|m| m.checked_mul(10))
            .and_then(|m| m.checked_add(u64::from(s[i] - b'0')));
        i += 1;
    }
    if i == start {
        return None;
    }
    Some(Scanned {
        negative,
        magnitude,
        rest: &s[i..],
    })
}

/// The value `strtoull` returns for a scan, unless memcached's `safe_strtoull` refuses it:
/// out of range, or negative-looking after a minus sign (`-0` is 0).
pub fn unsigned(s: &Scanned<'_>) -> Option<u64> {
    let m = s.magnitude?;
    if !s.negative {
        return Some(m);
    }
    let v = m.wrapping_neg();
    if (v as i64) < 0 { None } else { Some(v) }
}

/// The digits of a number end where memcached's `safe_strto*` accept: at the end of the
/// token or at whitespace.
fn ends_well(rest: &[u8]) -> bool {
    rest.first().is_none_or(|&b| is_c_space(b))
}

/// `strtol` on a 64-bit build: the signed value, or `None` when memcached would reject the
/// token (no digits, junk after them, outside the 64-bit range).
pub fn parse_i64(token: &[u8]) -> Option<i64> {
    let s = scan(token)?;
    let m = s.magnitude?;
    if !ends_well(s.rest) {
        return None;
    }
    if s.negative {
        if m > 1u64 << 63 {
            return None;
        }
        Some((m as i64).wrapping_neg())
    } else {
        i64::try_from(m).ok()
    }
}

/// memcached's `safe_strtol`: [`parse_i64`] kept in a 32-bit integer (the low 32 bits).
pub fn parse_i32(token: &[u8]) -> Option<i32> {
    parse_i64(token).map(|v| v as i32)
}

/// memcached's `safe_strtoull`: `strtoull`, except that a value whose top bit is set is
/// rejected after a minus sign (`-1` is not 2^64-1). `-0` is 0.
pub fn parse_u64(token: &[u8]) -> Option<u64> {
    let s = scan(token)?;
    if !ends_well(s.rest) {
        return None;
    }
    unsigned(&s)
}

/// memcached's `safe_strtoul`: [`parse_u64`] kept in a 32-bit integer (the low 32 bits).
pub fn parse_u32(token: &[u8]) -> Option<u32> {
    parse_u64(token).map(|v| v as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_like_strtoull() {
        let s = scan(b"  +12 x").unwrap();
        assert_eq!(
            (s.negative, s.magnitude, s.rest),
            (false, Some(12), &b" x"[..])
        );
        assert_eq!(scan(b"x"), None);
        assert_eq!(scan(b"99999999999999999999").unwrap().magnitude, None);
        assert_eq!(unsigned(&scan(b"-0").unwrap()), Some(0));
        assert_eq!(unsigned(&scan(b"-1").unwrap()), None);
    }

    #[test]
    fn signed_like_safe_strtol() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-1"), Some(-1));
        assert_eq!(parse_i64(b"+7"), Some(7));
        assert_eq!(parse_i64(b"\t7"), Some(7));
        assert_eq!(parse_i64(b"7\r"), Some(7));
        assert_eq!(parse_i64(b"7x"), None);
        assert_eq!(parse_i64(b""), None);
        assert_eq!(parse_i64(b"-"), None);
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"-9223372036854775809"), None);
        assert_eq!(parse_i32(b"4294967299"), Some(3));
        assert_eq!(parse_i32(b"2147483648"), Some(i32::MIN));
    }

    #[test]
    fn unsigned_like_safe_strtoull() {
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_u64(b"-0"), Some(0));
        assert_eq!(
            parse_u64(b"-9223372036854775809"),
            Some(9223372036854775807)
        );
        assert_eq!(parse_u32(b"4294967296"), Some(0));
        assert_eq!(parse_u32(b"18446744073709551615"), Some(u32::MAX));
        assert_eq!(parse_u32(b"abc"), None);
    }
}
