//! Validated memcached keys.

use std::fmt;

/// The longest key memcached accepts, in bytes.
pub const MAX_KEY_LEN: usize = 250;

/// A memcached key: 1 to 250 bytes, without space, carriage return or line feed.
///
/// The text protocol splits tokens on spaces and lines on `\n`, so those bytes can never be
/// part of a key; a tab is accepted, as memcached itself does.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key(Box<[u8]>);

/// Why a byte string is not a valid key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The key is empty.
    #[error("key is empty")]
    Empty,
    /// The key is longer than 250 bytes.
    #[error("key is {0} bytes long; memcached allows at most 250")]
    TooLong(usize),
    /// The key holds a byte the text protocol cannot carry.
    #[error("key contains {byte:?} at offset {offset}; spaces and line ends are not allowed")]
    BadByte {
        /// The offending byte.
        byte: char,
        /// Where it is.
        offset: usize,
    },
}

impl Key {
    /// Validates `bytes` as a key.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<Key, KeyError> {
        let bytes = bytes.into();
        if bytes.is_empty() {
            return Err(KeyError::Empty);
        }
        if bytes.len() > MAX_KEY_LEN {
            return Err(KeyError::TooLong(bytes.len()));
        }
        if let Some(offset) = bytes
            .iter()
            .position(|b| matches!(b, b' ' | b'\r' | b'\n' | 0))
        {
            return Err(KeyError::BadByte {
                byte: bytes[offset] as char,
                offset,
            });
        }
        Ok(Key(bytes.into_boxed_slice()))
    }

    /// The key's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always false: a key has at least one byte.
    pub fn is_empty(&self) -> bool {
        false
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.0))
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({:?})", String::from_utf8_lossy(&self.0))
    }
}

impl TryFrom<&str> for Key {
    type Error = KeyError;
    fn try_from(s: &str) -> Result<Key, KeyError> {
        Key::new(s.as_bytes())
    }
}

impl TryFrom<String> for Key {
    type Error = KeyError;
    fn try_from(s: String) -> Result<Key, KeyError> {
        Key::new(s.into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits() {
        assert!(Key::new(vec![b'a'; 250]).is_ok());
        assert_eq!(Key::new(vec![b'a'; 251]), Err(KeyError::TooLong(251)));
        assert_eq!(Key::new(""), Err(KeyError::Empty));
        assert!(matches!(
            Key::new("a b"),
            Err(KeyError::BadByte { offset: 1, .. })
        ));
        assert!(Key::new("a\r").is_err());
        assert!(Key::new("a\nb").is_err());
        assert!(Key::new("tab\there").is_ok());
    }
}
