//! Number parsing and rewriting for `incr`/`decr`, as memcached does it.

use crate::protocol::number::{is_c_space, scan, unsigned};

/// memcached's `safe_strtoull`: optional leading whitespace and sign, decimal digits, then
/// whitespace or the end. A negative number is rejected; `-0` is 0. Overflow is rejected.
/// memcached parses the item's data as a C string, so a NUL byte also ends the number.
pub fn parse_u64(bytes: &[u8]) -> Option<u64> {
    let scanned = scan(bytes)?;
    match scanned.rest.first() {
        None | Some(0) => {}
        Some(&b) if is_c_space(b) => {}
        Some(_) => return None,
    }
    unsigned(&scanned)
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
    let digits = crate::memcache::decimal(value);
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
