//! Numbers as memcached's text parser reads them.
//!
//! memcached converts tokens with the C library's `strtol`/`strtoul`/`strtoull` (base 10,
//! on a 64-bit build) and then checks what follows the digits. The quirks a client can see
//! come from that: leading whitespace and a sign are accepted, anything but whitespace
//! after the digits is rejected, values beyond 64 bits are rejected, a minus sign on a huge
//! unsigned value is rejected, and the 32-bit destinations simply keep the low 32 bits
//! (`flags` of 4294967296 are stored as 0, an exptime of 2^31 reads as negative).

pub(crate) use crate::protocol::number::is_c_space;

/// The result of scanning a decimal number the way `strto*` do.
struct Scan {
    negative: bool,
    /// The magnitude, or `None` if it does not fit in 64 bits.
    magnitude: Option<u64>,
}

/// Scans `token`: whitespace, an optional sign, at least one digit, and then either the end
/// of the token or a whitespace byte.
fn scan(token: &[u8]) -> Option<Scan> {
    let n = crate::protocol::number::scan(token)?;
    if n.rest.first().is_some_and(|&b| !is_c_space(b)) {
        return None;
    }
    Some(Scan {
        negative: n.negative,
        magnitude: n.magnitude,
    })
}

/// `strtol` on a 64-bit build: the signed value, or `None` when memcached would reject the
/// token (no digits, junk after them, outside the 64-bit range).
pub fn parse_i64(token: &[u8]) -> Option<i64> {
    let s = scan(token)?;
    let m = s.magnitude?;
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
/// rejected when the token holds a minus sign (`-1` is not 2^64-1). `-0` is 0.
pub fn parse_u64(token: &[u8]) -> Option<u64> {
    let s = scan(token)?;
    let m = s.magnitude?;
    let v = if s.negative { m.wrapping_neg() } else { m };
    if (v as i64) < 0 && token.contains(&b'-') {
        return None;
    }
    Some(v)
}

/// memcached's `safe_strtoul`: [`parse_u64`] kept in a 32-bit integer (the low 32 bits).
pub fn parse_u32(token: &[u8]) -> Option<u32> {
    parse_u64(token).map(|v| v as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed() {
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
    fn unsigned() {
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
