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
        // As `str::trim_matches(' ')` and `u64::from_str` would, without the UTF-8 pass:
        // spaces around, an optional `+`, at least one digit, nothing past 64 bits.
        let start = self.data.iter().position(|&b| b != b' ')?;
        let end = self.data.iter().rposition(|&b| b != b' ')? + 1;
        let digits = match &self.data[start..end] {
            [b'+', rest @ ..] => rest,
            all => all,
        };
        if digits.is_empty() {
            return None;
        }
        digits.iter().try_fold(0u64, |n, &b| {
            if b.is_ascii_digit() {
                n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
            } else {
                None
            }
        })
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
        Value::new(crate::decimal::decimal(n))
    }
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
    fn as_u64_reads_what_trimming_and_parsing_text_reads() {
        let cases: &[&[u8]] = &[
            b"0",
            b"42",
            b" 42 ",
            b"42   ",
            b"+7",
            b" +7",
            b"+",
            b"",
            b"   ",
            b"-1",
            b"4 2",
            b"18446744073709551615",
            b"18446744073709551616",
            b"0042",
            b"\t5",
            b"5\r",
            b"\xff1",
            b"12a",
            b"++1",
        ];
        for &bytes in cases {
            let text = std::str::from_utf8(bytes)
                .ok()
                .and_then(|t| t.trim_matches(' ').parse::<u64>().ok());
            assert_eq!(Value::new(bytes).as_u64(), text, "{bytes:?}");
        }
    }
}
