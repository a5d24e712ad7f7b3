//! The checks memcached makes on a meta command's flags before it looks at any item.
//!
//! Each flag is one token: a letter, then an optional argument. memcached rejects a letter
//! seen twice and an unknown letter at once; a bad numeric argument is remembered and
//! reported after the whole list was read (the last such message wins). Flag `F`'s failure
//! has no message of its own and reports the generic one.

use crate::protocol::number::{parse_i32, parse_u32, parse_u64};

/// The generic `CLIENT_ERROR` text.
pub const BAD_FORMAT: &str = "bad command line format";

/// What the flag list says, once it passed the checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Preparsed {
    /// The `M` mode letter, if given.
    pub mode: Option<u8>,
    /// The `F` client flags (0 if not given).
    pub client_flags: u32,
    /// Some `O` (opaque) token is longer than memcached echoes back (32 bytes).
    pub opaque_too_long: bool,
}

/// The longest opaque token memcached accepts, letter included.
pub const MAX_OPAQUE_LEN: usize = 32;

/// Checks the flag tokens of a meta command (each a letter and its argument);
/// `key_decodes` says whether the key decodes as base64, asked only when `b` is given.
/// The error is the text after `CLIENT_ERROR `.
pub fn preparse<'a>(
    flags: impl IntoIterator<Item = (u8, &'a [u8])>,
    key_decodes: impl Fn() -> bool,
) -> Result<Preparsed, &'static str> {
    let mut seen = [false; 127];
    let mut out = Preparsed::default();
    let mut error: Option<&'static str> = None;
    let mut failed = false;
    for (letter, arg) in flags {
        if letter >= 127 || seen[usize::from(letter)] {
            return Err("duplicate flag");
        }
        seen[usize::from(letter)] = true;
        match letter {
            b'N' | b'T' | b'R' => {
                if parse_i32(arg).is_none() {
                    error = Some("bad token in command line format");
                    failed = true;
                }
            }
            b'C' => {
                if parse_u64(arg).is_none() {
                    error = Some("bad token in command line format");
                    failed = true;
                }
            }
            b'F' => match parse_u32(arg) {
                Some(f) => out.client_flags = f,
                None => failed = true,
            },
            b'M' => {
                if arg.len() != 1 {
                    error = Some("incorrect length for M token");
                    failed = true;
                } else {
                    out.mode = Some(arg[0]);
                }
            }
            b'J' => {
                if parse_u64(arg).is_none() {
                    error = Some("invalid numeric initial value");
                    failed = true;
                }
            }
            b'D' => {
                if parse_u64(arg).is_none() {
                    error = Some("invalid numeric delta value");
                    failed = true;
                }
            }
            b'O' => {
                if 1 + arg.len() > MAX_OPAQUE_LEN {
                    out.opaque_too_long = true;
                }
            }
            b'b' => {
                if !key_decodes() {
                    error = Some("error decoding key");
                    failed = true;
                }
            }
            b'l' | b'P' | b'L' | b'k' | b's' | b't' | b'c' | b'f' | b'v' | b'h' | b'u' | b'q'
            | b'I' => {}
            _ => return Err("invalid flag"),
        }
    }
    if failed {
        return Err(error.unwrap_or(BAD_FORMAT));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(flags: &str) -> Result<Preparsed, &'static str> {
        let words = flags.split(' ').map(str::as_bytes);
        preparse(words.map(|w| (w[0], &w[1..])), || false)
    }

    #[test]
    fn errors() {
        assert_eq!(run("T1 T2"), Err("duplicate flag"));
        assert_eq!(run("Z"), Err("invalid flag"));
        assert_eq!(run("T"), Err("bad token in command line format"));
        assert_eq!(run("F-1"), Err(BAD_FORMAT));
        assert_eq!(run("MXY"), Err("incorrect length for M token"));
        assert_eq!(run("Jx Dy"), Err("invalid numeric delta value"));
        assert_eq!(run("Jx Z"), Err("invalid flag"));
        assert_eq!(run("b T1"), Err("error decoding key"));
        assert_eq!(run("b Tx"), Err("bad token in command line format"));
        assert_eq!(run("C\t"), Err("bad token in command line format"));
        let ok = run("v c MS F7 T30 N0").unwrap();
        assert_eq!(ok.mode, Some(b'S'));
        assert_eq!(ok.client_flags, 7);
    }
}
