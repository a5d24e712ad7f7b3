//! Number parsing and rewriting for `incr`/`decr`, as memcached does it.

/// memcached's `safe_strtoull`: optional leading whitespace and sign, decimal digits, then
/// whitespace or the end. A negative number is rejected; `-0` is 0. Overflow is rejected.
/// memcached parses the item's data as a C string, so a NUL byte also ends the number.
pub fn parse_u64(bytes: &[u8]) -> Option<u64> {
    let mut i = 0;
    while i < bytes.len() && is_space(bytes[i]) {
        i += 1;
    }
    let negative = match bytes.get(i) {
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
    let mut value: u64 = 0;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        value = value
            .checked_mul(10)?
            .checked_add(u64::from(bytes[i] - b'0'))?;
        i += 1;
    }
    if i == start {
        return None;
    }
    if i < bytes.len() && !is_space(bytes[i]) && bytes[i] != 0 {
        return None;
    }
    if negative {
        // strtoull negates; memcached rejects the result when it reads as negative and a
        // minus sign was present.
        let v = value.wrapping_neg();
        return if (v as i64) < 0 { None } else { Some(v) };
    }
    Some(value)
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Applies the delta: incr wraps at 2^64, decr stops at 0.
pub fn apply(incr: bool, value: u64, delta: u64) -> u64 {
    if incr {
        value.wrapping_add(delta)
    } else {
        value.saturating_sub(delta)
    }
}

/// The new number written over the old bytes when it fits: right-padded with spaces to the
/// old length. `None` if it needs more room.
pub fn in_place(old_len: usize, value: u64) -> Option<Vec<u8>> {
    let digits = value.to_string().into_bytes();
    if digits.len() > old_len {
        return None;
    }
    let mut out = digits;
    out.resize(old_len, b' ');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_safe_strtoull() {
        assert_eq!(parse_u64(b"10"), Some(10));
        assert_eq!(parse_u64(b"  7"), Some(7));
        assert_eq!(parse_u64(b"9 "), Some(9));
        assert_eq!(parse_u64(b"+5"), Some(5));
        assert_eq!(parse_u64(b"-0"), Some(0));
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"hi"), None);
        assert_eq!(parse_u64(b"12abc"), None);
        assert_eq!(parse_u64(b"12 abc"), Some(12));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"5\0x"), Some(5));
        assert_eq!(parse_u64(b" \x005"), None);
    }

    #[test]
    fn rewrites_in_place() {
        assert_eq!(in_place(2, 9), Some(b"9 ".to_vec()));
        assert_eq!(in_place(3, 8), Some(b"8  ".to_vec()));
        assert_eq!(in_place(2, 100), None);
        assert_eq!(apply(true, u64::MAX, 2), 1);
        assert_eq!(apply(false, 3, 100), 0);
    }
}
