//! Numbers in decimal ASCII, as memcached writes them into values and keys, without the
//! formatting machinery.

/// `n` in decimal ASCII, as memcached writes numbers into values, without going through
/// the formatting machinery (counters store one on every increment).
pub fn decimal(n: u64) -> Vec<u8> {
    decimal_in(n, &mut [0; 20]).to_vec()
}

/// `n` in decimal ASCII, written at the end of `buf` (20 bytes hold any `u64`): for the
/// trace's hash and the clock's text, which write numbers at every step.
pub fn decimal_in(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[at..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_matches_display() {
        for n in [0, 1, 9, 10, 99, 100, 12345, u64::MAX - 1, u64::MAX] {
            assert_eq!(decimal(n), n.to_string().into_bytes());
        }
    }
}
