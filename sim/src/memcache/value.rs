//! Values, client flags and cas uniques.

use std::fmt;

/// A value with its client flags.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Value {
    /// The bytes.
    pub data: Vec<u8>,
    /// Opaque 32-bit client flags stored beside the bytes.
    pub flags: u32,
}

impl Value {
    /// A value with flags 0.
    pub fn new(data: impl Into<Vec<u8>>) -> Value {
        Value {
            data: data.into(),
            flags: 0,
        }
    }

    /// The same value with other flags.
    pub fn with_flags(mut self, flags: u32) -> Value {
        self.flags = flags;
        self
    }

    /// The bytes as text, lossily.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.data).into_owned()
    }

    /// The bytes parsed as a decimal number, allowing memcached's space padding.
    pub fn as_u64(&self) -> Option<u64> {
        std::str::from_utf8(&self.data)
            .ok()?
            .trim_matches(' ')
            .parse()
            .ok()
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(&self.data))?;
        if self.flags != 0 {
            write!(f, "/f{}", self.flags)?;
        }
        Ok(())
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::new(s.as_bytes())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::new(s.into_bytes())
    }
}

impl From<&[u8]> for Value {
    fn from(s: &[u8]) -> Value {
        Value::new(s)
    }
}

impl From<Vec<u8>> for Value {
    fn from(s: Vec<u8>) -> Value {
        Value::new(s)
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Value {
        Value::new(decimal(n))
    }
}

/// `n` in decimal ASCII, as memcached writes numbers into values, without going through
/// the formatting machinery (counters store one on every increment).
pub fn decimal(n: u64) -> Vec<u8> {
    decimal_in(n, &mut [0; 20]).to_vec()
}

/// `n` in decimal ASCII, written at the end of `buf` (20 bytes hold any `u64`).
pub(crate) fn decimal_in(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
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

/// A cas unique, as returned by `gets` and expected by `cas`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cas(pub u64);

impl fmt::Debug for Cas {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cas:{}", self.0)
    }
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
