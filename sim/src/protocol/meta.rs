//! Meta command names, flags and reply codes (memcached 1.6).

use std::fmt;

/// Which meta command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetaCommand {
    /// `mg`: meta get.
    Get,
    /// `ms`: meta set.
    Set,
    /// `md`: meta delete.
    Delete,
    /// `ma`: meta arithmetic.
    Arithmetic,
    /// `mn`: meta no-op.
    Noop,
    /// `me`: meta debug, what the server knows of one item (`b` is its only flag).
    Debug,
}

impl MetaCommand {
    /// The command's name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            MetaCommand::Get => "mg",
            MetaCommand::Set => "ms",
            MetaCommand::Delete => "md",
            MetaCommand::Arithmetic => "ma",
            MetaCommand::Noop => "mn",
            MetaCommand::Debug => "me",
        }
    }
}

/// One meta flag: a letter and an optional token, e.g. `N30`, `v`, `C12`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct MetaFlag {
    /// The flag letter.
    pub letter: u8,
    /// The token that follows the letter, if any: bytes as sent (a key returned by `k`
    /// or an opaque echoed by `O` need not be text).
    pub token: Option<Vec<u8>>,
}

impl MetaFlag {
    /// A flag without a token.
    pub fn bare(letter: u8) -> MetaFlag {
        MetaFlag {
            letter,
            token: None,
        }
    }

    /// A flag with a token.
    pub fn with(letter: u8, token: impl fmt::Display) -> MetaFlag {
        MetaFlag::with_bytes(letter, token.to_string().into_bytes())
    }

    /// A flag with a token of any bytes.
    pub fn with_bytes(letter: u8, token: impl Into<Vec<u8>>) -> MetaFlag {
        MetaFlag {
            letter,
            token: Some(token.into()),
        }
    }

    /// The token's bytes, empty for a bare flag.
    pub fn token_bytes(&self) -> &[u8] {
        self.token.as_deref().unwrap_or(&[])
    }

    /// The flag as sent: its letter and its token's bytes.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        out.push(self.letter);
        out.extend_from_slice(self.token_bytes());
    }

    /// Parses one flag word such as `T30`.
    pub fn parse(word: &[u8]) -> MetaFlag {
        let letter = word.first().copied().unwrap_or(b'?');
        let rest = &word[word.len().min(1)..];
        let token = (!rest.is_empty()).then(|| rest.to_vec());
        MetaFlag { letter, token }
    }
}

impl fmt::Display for MetaFlag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            self.letter as char,
            String::from_utf8_lossy(self.token_bytes())
        )
    }
}

impl fmt::Debug for MetaFlag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A meta reply's status code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetaCode {
    /// `VA`: value follows.
    Value,
    /// `HD`: success, no value.
    Header,
    /// `EN`: miss.
    Miss,
    /// `NS`: not stored.
    NotStored,
    /// `EX`: cas mismatch.
    Exists,
    /// `NF`: not found.
    NotFound,
    /// `MN`: no-op marker.
    Noop,
}

impl MetaCode {
    /// The two letters on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            MetaCode::Value => "VA",
            MetaCode::Header => "HD",
            MetaCode::Miss => "EN",
            MetaCode::NotStored => "NS",
            MetaCode::Exists => "EX",
            MetaCode::NotFound => "NF",
            MetaCode::Noop => "MN",
        }
    }

    /// Parses the two letters.
    pub fn parse(s: &[u8]) -> Option<MetaCode> {
        Some(match s {
            b"VA" => MetaCode::Value,
            b"HD" => MetaCode::Header,
            b"EN" => MetaCode::Miss,
            b"NS" => MetaCode::NotStored,
            b"EX" => MetaCode::Exists,
            b"NF" => MetaCode::NotFound,
            b"MN" => MetaCode::Noop,
            _ => return None,
        })
    }
}
