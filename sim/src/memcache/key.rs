//! Validated memcached keys.

use std::fmt;
use std::hash::{Hash, Hasher};

/// The longest key memcached accepts, in bytes.
pub const MAX_KEY_LEN: usize = 250;

/// Keys up to this many bytes are stored inline, without a heap allocation.
const INLINE: usize = 23;

/// A memcached key: 1 to 250 bytes, without space, carriage return or line feed.
///
/// The text protocol splits tokens on spaces and lines on `\n`, so those bytes can never be
/// part of a key; a tab is accepted, as memcached itself does.
///
/// A key of up to 23 bytes (most recipe keys) lives inline: creating, cloning and
/// dropping it never touches the allocator, which matters because the simulated server
/// clones keys into its item table and LRU queues on every store.
#[derive(Clone)]
pub struct Key(Repr);

/// Short keys inline, long ones on the heap. Equality, order and hashing go through
/// [`Key::as_bytes`], so the representation never shows.
#[derive(Clone)]
enum Repr {
    Inline(Inline),
    Heap(Box<[u8]>),
}

/// An inline key: its length and bytes, 24 bytes aligned as a word. The bytes past `len`
/// are zero, so equal keys have equal inline forms. Every request and reply carries a
/// key and is moved several times per call; a payload of whole aligned words is copied
/// as such (an odd-sized one is copied in overlapping pieces that the processor cannot
/// forward to the next read of the same bytes, which stalls it).
#[derive(Clone, Copy)]
#[repr(C, align(8))]
struct Inline {
    len: u8,
    bytes: [u8; INLINE],
}

impl Inline {
    /// The bytes and their zero padding as three big-endian words, in byte order: bytes
    /// 0 to 7, 8 to 15, and 15 to 22 (overlapping by one byte, which the words before
    /// have already compared, so that each word is one load).
    fn words(&self) -> [u64; 3] {
        let word =
            |at: usize| u64::from_be_bytes(self.bytes[at..at + 8].try_into().expect("eight bytes"));
        [word(0), word(8), word(INLINE - 8)]
    }
}

impl Repr {
    fn from_slice(bytes: &[u8]) -> Repr {
        if bytes.len() <= INLINE {
            let mut inline = [0; INLINE];
            inline[..bytes.len()].copy_from_slice(bytes);
            Repr::Inline(Inline {
                len: bytes.len() as u8,
                bytes: inline,
            })
        } else {
            Repr::Heap(bytes.into())
        }
    }
}

/// True for the bytes a key cannot hold: space, carriage return, line feed and NUL.
fn forbidden(b: u8) -> bool {
    (b == b' ') | (b == b'\r') | (b == b'\n') | (b == 0)
}

/// True if some byte is [`forbidden`], eight bytes at a time.
fn any_forbidden(bytes: &[u8]) -> bool {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    // Exactly "some byte of v is zero" (the borrow may blur which byte, not whether).
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS != 0;
    let mut words = bytes.chunks_exact(8);
    for chunk in &mut words {
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        if has_zero(w)
            || has_zero(w ^ (ONES * u64::from(b' ')))
            || has_zero(w ^ (ONES * u64::from(b'\r')))
            || has_zero(w ^ (ONES * u64::from(b'\n')))
        {
            return true;
        }
    }
    words.remainder().iter().any(|&b| forbidden(b))
}

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
    pub fn new(bytes: impl AsRef<[u8]>) -> Result<Key, KeyError> {
        Key::validate(bytes.as_ref())?;
        Ok(Key(Repr::from_slice(bytes.as_ref())))
    }

    /// A key that arrived in a form that carries any bytes (a meta command's base64 key,
    /// a binary protocol packet): only its length, 1 to 250 bytes, is checked. Such a
    /// key may hold a space or a line end, so no text command can name it.
    pub fn binary(bytes: impl AsRef<[u8]>) -> Result<Key, KeyError> {
        Key::check_len(bytes.as_ref())?;
        Ok(Key(Repr::from_slice(bytes.as_ref())))
    }

    /// 1 to 250 bytes.
    fn check_len(bytes: &[u8]) -> Result<(), KeyError> {
        if bytes.is_empty() {
            return Err(KeyError::Empty);
        }
        if bytes.len() > MAX_KEY_LEN {
            return Err(KeyError::TooLong(bytes.len()));
        }
        Ok(())
    }

    /// Validates the concatenation of `parts` as a key (a prefix and a name, say),
    /// without an intermediate string for short keys.
    pub fn from_parts(parts: &[&[u8]]) -> Result<Key, KeyError> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        if len > INLINE {
            return Key::new(parts.concat());
        }
        // The parts are copied whole, then checked as one key: recipes build a key on
        // most calls.
        let mut bytes = [0; INLINE];
        let mut at = 0;
        for part in parts {
            bytes[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
        Key::validate(&bytes[..len])?;
        Ok(Key(Repr::Inline(Inline {
            len: len as u8,
            bytes,
        })))
    }

    fn validate(bytes: &[u8]) -> Result<(), KeyError> {
        Key::check_len(bytes)?;
        // Checked eight bytes at a time; only a bad key pays for the byte-by-byte search
        // that finds where.
        if !any_forbidden(bytes) {
            return Ok(());
        }
        if let Some(offset) = bytes.iter().position(|&b| forbidden(b)) {
            return Err(KeyError::BadByte {
                byte: bytes[offset] as char,
                offset,
            });
        }
        Ok(())
    }

    /// The key's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline(Inline { len, bytes }) => &bytes[..usize::from(*len)],
            Repr::Heap(bytes) => bytes,
        }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    /// Always false: a key has at least one byte.
    pub fn is_empty(&self) -> bool {
        false
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        match (&self.0, &other.0) {
            // Whole inline forms compare as equal exactly when the keys do: the bytes
            // past `len` are always zero (both constructors zero-fill).
            (Repr::Inline(a), Repr::Inline(b)) => a.len == b.len && a.words() == b.words(),
            (Repr::Heap(a), Repr::Heap(b)) => a == b,
            // A key lives inline exactly when it fits, so the two forms never hold one key.
            _ => false,
        }
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    /// The order of the keys' bytes. Two inline keys compare as their zero-padded bytes,
    /// read as big-endian words, then by length: where the padded forms first differ,
    /// the byte strings differ there too or one runs out (its zero padding sorts first,
    /// as a prefix does), and equal padded forms mean one key is the other followed by
    /// zero bytes (a binary key may hold them), the shorter first.
    fn cmp(&self, other: &Key) -> std::cmp::Ordering {
        match (&self.0, &other.0) {
            (Repr::Inline(a), Repr::Inline(b)) => a.words().cmp(&b.words()).then(a.len.cmp(&b.len)),
            _ => self.as_bytes().cmp(other.as_bytes()),
        }
    }
}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(self.as_bytes()))
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({:?})", String::from_utf8_lossy(self.as_bytes()))
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
        Key::new(s.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_as_their_bytes_inline_or_not() {
        // Prefixes, zero bytes (a binary key may end in them), high bytes, and lengths
        // on either side of the inline limit (23 bytes).
        let mut texts: Vec<Vec<u8>> = vec![
            b"a".to_vec(),
            b"a\0".to_vec(),
            b"a\0\0".to_vec(),
            b"a\x01".to_vec(),
            b"ab".to_vec(),
            b"b".to_vec(),
            b"\xff".to_vec(),
            b"\x7f\xff".to_vec(),
            b"tag_0".to_vec(),
            b"tag_1".to_vec(),
            b"tag_10".to_vec(),
            b"posts".to_vec(),
        ];
        for len in [7, 8, 9, 15, 16, 17, 22, 23, 24, 30] {
            for last in [0u8, b'a', b'z', 0xff] {
                let mut t = vec![b'k'; len];
                t[len - 1] = last;
                texts.push(t);
            }
        }
        let keys: Vec<Key> = texts.iter().map(|t| Key::binary(t).unwrap()).collect();
        for (a, ka) in texts.iter().zip(&keys) {
            for (b, kb) in texts.iter().zip(&keys) {
                assert_eq!(
                    ka.cmp(kb),
                    a.cmp(b),
                    "{:?} against {:?}",
                    String::from_utf8_lossy(a),
                    String::from_utf8_lossy(b)
                );
            }
        }
    }

    #[test]
    fn keys_are_equal_exactly_when_their_bytes_are_whichever_way_they_were_built() {
        let k = |s: &str| Key::new(s).unwrap();
        let parts = Key::from_parts(&[b"coun", b"ter_views"]).unwrap();
        assert_eq!(parts, k("counter_views"));
        assert_ne!(parts, k("counter_view"));
        assert_ne!(parts, k("counter_viewt"));
        assert_ne!(k("a"), k("a\t"));
        // Either side of the inline limit (23 bytes), and across it.
        let (at, over) = ("x".repeat(23), "x".repeat(24));
        assert_eq!(k(&at), Key::from_parts(&[at.as_bytes()]).unwrap());
        assert_eq!(k(&over), Key::from_parts(&[over.as_bytes()]).unwrap());
        assert_ne!(k(&at), k(&over));
        assert_eq!(k(&over), k(&over.clone()));
        assert_ne!(k(&over), k(&"x".repeat(25)));
    }

    #[test]
    fn inline_and_heap_keys_compare_by_bytes() {
        let short = Key::new("a").unwrap();
        let long = Key::new(vec![b'a'; 40]).unwrap();
        assert!(short < long);
        assert_eq!(long.clone(), long);
        assert_eq!(long.as_bytes(), &[b'a'; 40][..]);
        let mut keys = vec![long.clone(), short.clone(), Key::new("b").unwrap()];
        keys.sort();
        assert_eq!(keys, vec![short, long, Key::new("b").unwrap()]);
    }

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
        assert_eq!(
            Key::from_parts(&[b"counter:", b"views"]),
            Key::new("counter:views")
        );
        let long = vec![b'k'; 200];
        assert_eq!(Key::from_parts(&[&long, b"x"]).unwrap().len(), 201);
        assert!(Key::from_parts(&[b"a ", b"b"]).is_err());
    }

    #[test]
    fn parts_are_checked_as_the_whole_key_is() {
        // Every bad byte at every offset of short keys, inside a word and in the tail,
        // and every byte value: `from_parts` agrees with `new`.
        for len in 1..=INLINE {
            for at in 0..len {
                for bad in [b' ', b'\r', b'\n', 0, b'\t', b'!', 0x80, 0xff, 0x20 ^ 0x80] {
                    let mut bytes = vec![b'k'; len];
                    bytes[at] = bad;
                    let (head, tail) = bytes.split_at(at / 2);
                    assert_eq!(
                        Key::from_parts(&[head, tail]),
                        Key::new(&bytes),
                        "{bytes:?}"
                    );
                }
            }
        }
        for b in 0..=255u8 {
            let bytes = [b'a', b, b'c', b'd', b'e', b'f', b'g', b'h', b'i'];
            assert_eq!(Key::from_parts(&[&bytes]), Key::new(bytes), "byte {b}");
        }
    }
}
