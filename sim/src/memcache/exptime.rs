//! Expiration times as memcached reads them.

use std::fmt;

/// Relative exptimes up to this many seconds (30 days) count from the store; larger ones are
/// absolute unix times.
pub const MAX_RELATIVE_EXPTIME: i64 = 60 * 60 * 24 * 30;

/// An expiration time exactly as sent on the wire.
///
/// `0` never expires; `1..=2592000` is seconds from the store; larger values are an absolute
/// unix time; negative values are already expired. The server parses the number as a signed
/// 32-bit integer, so values from 2^31 wrap negative: the wire value is kept as sent so that
/// effect can be reproduced.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Exptime(pub i64);

impl Exptime {
    /// Never expires.
    pub const NEVER: Exptime = Exptime(0);
    /// Already expired: the item is stored and immediately invisible.
    pub const EXPIRED: Exptime = Exptime(-1);

    /// Expires `secs` server ticks after the store (1 ..= 30 days).
    pub fn secs(secs: u32) -> Exptime {
        Exptime(i64::from(secs))
    }

    /// Expires at an absolute unix time.
    pub fn at_unix(unix: i64) -> Exptime {
        Exptime(unix)
    }

    /// The value sent on the wire.
    pub fn wire(self) -> i64 {
        self.0
    }
}

impl fmt::Debug for Exptime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl fmt::Display for Exptime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
