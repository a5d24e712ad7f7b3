//! Decimal numbers the way memcached's C code reads them (`strtol`/`strtoull` in base 10).
//!
//! The parser of request lines, the meta commands and `incr`/`decr` on stored values all
//! rest on the same scan: leading whitespace, an optional sign, at least one digit. What
//! each accepts after the digits differs, so the scan returns the rest for the caller to
//! judge.

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
}
