//! The set encoding (SET): `+m ` adds `m`, `-m ` removes it; tokens are separated by
//! spaces and replayed in order, so `+a +b +c -b ` is `{a, c}`.
//!
//! A member holding a space would split into two tokens, and the second one would be read
//! as an operation of its own: adding `"a -b"` naively writes `+a -b `, which *removes*
//! `b`. So members are escaped, not rejected: every byte that is `%`, a space or another
//! ASCII control or whitespace byte (`0x00..=0x20`, `0x7f`) is written `%XX` (two upper-case
//! hex digits), and so is a leading `+` or `-` (not ambiguous after the sign, but escaped so
//! that an escaped member never starts like a token). Any other byte, UTF-8 included, is
//! written as is. The only member refused is the empty one (its token `+` would carry no
//! member). The decoder is strict: a token that does not start with `+` or `-`, a bad
//! escape, or an empty member is an error, never silently skipped.

use std::collections::BTreeSet;
use std::fmt;

/// Whether a token adds or removes its member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sign {
    /// `+`
    Add,
    /// `-`
    Remove,
}

impl Sign {
    /// Its character.
    pub fn char(self) -> char {
        match self {
            Sign::Add => '+',
            Sign::Remove => '-',
        }
    }
}

/// Why a member list cannot be encoded or a value cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodecError {
    /// The empty string is not a member.
    EmptyMember,
    /// A token starts with neither `+` nor `-`.
    UnknownOp(String),
    /// A `%` not followed by two hex digits, or escapes that are not UTF-8.
    BadEscape(String),
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodecError::EmptyMember => write!(f, "the empty string is not a set member"),
            CodecError::UnknownOp(t) => write!(f, "token {t:?} is neither +member nor -member"),
            CodecError::BadEscape(t) => write!(f, "token {t:?} has a bad %-escape"),
        }
    }
}

impl std::error::Error for CodecError {}

fn must_escape(b: u8, first: bool) -> bool {
    b == b'%' || b <= b' ' || b == 0x7f || (first && (b == b'+' || b == b'-'))
}

/// Escapes one member (see the module doc).
pub fn escape(member: &str) -> String {
    let mut out = String::with_capacity(member.len());
    for (i, ch) in member.char_indices() {
        if ch.is_ascii() && must_escape(ch as u8, i == 0) {
            out.push_str(&format!("%{:02X}", ch as u8));
        } else {
            out.push(ch);
        }
    }
    out
}

/// Undoes [`escape`].
pub fn unescape(text: &str) -> Result<String, CodecError> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
                .ok_or_else(|| CodecError::BadEscape(text.to_string()))?;
            out.push(u8::from_str_radix(hex, 16).expect("checked hex digits"));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| CodecError::BadEscape(text.to_string()))
}

/// Encodes a modification of `members` (SET's `encodeSet`): `+a +b ` or `-a -b `.
pub fn encode<S: AsRef<str>>(sign: Sign, members: &[S]) -> Result<String, CodecError> {
    let mut out = String::new();
    for m in members {
        let m = m.as_ref();
        if m.is_empty() {
            return Err(CodecError::EmptyMember);
        }
        out.push(sign.char());
        out.push_str(&escape(m));
        out.push(' ');
    }
    Ok(out)
}

/// The compact form of a set: one `+` token per member, in order.
pub fn compact(members: &BTreeSet<String>) -> String {
    let members: Vec<&String> = members.iter().collect();
    encode(Sign::Add, &members).expect("members of a decoded set are not empty")
}

/// A decoded index: the set and its dirtiness (SET's compaction hint: the number of `-`
/// tokens).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Decoded {
    /// The members after replaying every token.
    pub members: BTreeSet<String>,
    /// How many `-` tokens the value holds.
    pub dirtiness: usize,
}

/// Decodes an index value (SET's `decodeSet`), replaying its tokens in order.
pub fn decode(data: &[u8]) -> Result<Decoded, CodecError> {
    let text = std::str::from_utf8(data)
        .map_err(|_| CodecError::BadEscape(String::from_utf8_lossy(data).into_owned()))?;
    let mut d = Decoded::default();
    for token in text.split(' ').filter(|t| !t.is_empty()) {
        let (sign, rest) = match token.as_bytes()[0] {
            b'+' => (Sign::Add, &token[1..]),
            b'-' => (Sign::Remove, &token[1..]),
            _ => return Err(CodecError::UnknownOp(token.to_string())),
        };
        let member = unescape(rest)?;
        if member.is_empty() {
            return Err(CodecError::EmptyMember);
        }
        match sign {
            Sign::Add => {
                d.members.insert(member);
            }
            Sign::Remove => {
                d.members.remove(&member);
                d.dirtiness += 1;
            }
        }
    }
    Ok(d)
}

/// The set a sequence of modifications leaves, applied directly (the reference the
/// encoding is tested against).
pub fn replay<'a>(mods: impl IntoIterator<Item = (Sign, &'a str)>) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    for (sign, m) in mods {
        match sign {
            Sign::Add => set.insert(m.to_string()),
            Sign::Remove => set.remove(m),
        };
    }
    set
}

/// SET's `encodeSet` exactly as shown: `op + member + ' '` per member, nothing escaped,
/// nothing refused. A member holding whitespace or starting with a sign is written as is.
pub fn encode_as_written<S: AsRef<str>>(sign: Sign, members: &[S]) -> String {
    let mut out = String::new();
    for m in members {
        out.push(sign.char());
        out.push_str(m.as_ref());
        out.push(' ');
    }
    out
}

/// SET's `decodeSet` exactly as shown: split on runs of whitespace, take each token's
/// first character as the op and the rest as the member; `+` adds, `-` discards and
/// counts as dirt, any other op is skipped without a word. So `+a -b ` (a member `a -b`
/// added) adds `a` and removes `b`, and `+-x ` adds `-x` but `-x` alone removes `x`.
pub fn decode_as_written(data: &[u8]) -> Decoded {
    let text = String::from_utf8_lossy(data);
    let mut d = Decoded::default();
    for token in text.split(|c: char| c.is_ascii_whitespace() || c == '\x0b') {
        let Some(op) = token.chars().next() else {
            continue;
        };
        let member = token[op.len_utf8()..].to_string();
        match op {
            '+' => {
                d.members.insert(member);
            }
            '-' => {
                d.members.remove(&member);
                d.dirtiness += 1;
            }
            _ => {}
        }
    }
    d
}

#[cfg(test)]
mod as_written {
    use super::*;

    #[test]
    fn the_shown_codec_round_trips_plain_members_and_breaks_on_hostile_ones() {
        let plain = encode_as_written(Sign::Add, &["a", "b", "c"]);
        assert_eq!(plain, "+a +b +c ");
        let d = decode_as_written(format!("{plain}-b -x").as_bytes());
        assert_eq!(
            d.members,
            ["a", "c"].iter().map(|s| s.to_string()).collect()
        );
        assert_eq!(d.dirtiness, 2);
        // A member with a space adds its first word and removes the second.
        let v = format!("+b {}", encode_as_written(Sign::Add, &["a -b"]));
        let d = decode_as_written(v.as_bytes());
        assert_eq!(d.members, ["a".to_string()].into_iter().collect());
        // The empty member survives (`+` alone adds "").
        let d = decode_as_written(encode_as_written(Sign::Add, &[""]).as_bytes());
        assert!(d.members.contains(""));
        // The escaped codec keeps all of them.
        let e = encode(Sign::Add, &["a -b", "-x", "+y"]).unwrap();
        let d = decode(e.as_bytes()).unwrap();
        assert_eq!(d.members.len(), 3);
    }
}
