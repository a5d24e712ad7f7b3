//! Parameter types that check their range as a scenario file is read: a count, a duration
//! in milliseconds, a whole number of seconds. A value out of range is an error at its
//! line, never a workload that allocates without bound or sleeps for centuries.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The largest [`Count`]: enough for any workload mcsim runs in reasonable time, small
/// enough that no setup allocates without bound.
pub const MAX_COUNT: u32 = 100_000;

/// Seconds in a year: the longest duration a parameter may give.
pub const YEAR_S: u64 = 365 * 24 * 3600;

fn out_of_range<E: serde::de::Error>(n: impl fmt::Display, max: impl fmt::Display) -> E {
    E::custom(format!("{n} is out of range: must be 0 to {max}"))
}

/// A count of rounds, keys, requests…: 0 to [`MAX_COUNT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Count(pub u32);

impl Count {
    /// The number.
    pub fn get(self) -> u32 {
        self.0
    }
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Count, D::Error> {
        let n = u64::deserialize(d)?;
        if n > u64::from(MAX_COUNT) {
            return Err(out_of_range(n, MAX_COUNT));
        }
        Ok(Count(n as u32))
    }
}

impl Serialize for Count {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(self.0)
    }
}

/// A duration given in whole milliseconds (name the field `…_ms`): 0 to a year.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Millis(pub u64);

impl Millis {
    /// The duration.
    pub fn get(self) -> Duration {
        Duration::from_millis(self.0)
    }
}

impl<'de> Deserialize<'de> for Millis {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Millis, D::Error> {
        let n = u64::deserialize(d)?;
        if n > YEAR_S * 1000 {
            return Err(out_of_range(n, YEAR_S * 1000));
        }
        Ok(Millis(n))
    }
}

impl Serialize for Millis {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

/// A whole number of seconds, as memcached counts a TTL (name the field `…_s`): 0 to a
/// year.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Seconds(pub u32);

impl Seconds {
    /// The number of seconds.
    pub fn get(self) -> u32 {
        self.0
    }
}

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Seconds, D::Error> {
        let n = u64::deserialize(d)?;
        if n > YEAR_S {
            return Err(out_of_range(n, YEAR_S));
        }
        Ok(Seconds(n as u32))
    }
}

impl Serialize for Seconds {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Debug)]
    struct P {
        n: Count,
        t: Millis,
        s: Seconds,
    }

    fn read(text: &str) -> Result<P, String> {
        toml::from_str(text).map_err(|e| e.message().to_string())
    }

    #[test]
    fn values_in_range_are_read() {
        let p = read("n = 3\nt = 250\ns = 10").unwrap();
        assert_eq!(
            (p.n.get(), p.t.get(), p.s.get()),
            (3, Duration::from_millis(250), 10)
        );
    }

    #[test]
    fn values_out_of_range_are_errors() {
        assert!(
            read("n = 100001\nt = 1\ns = 1")
                .unwrap_err()
                .contains("out of range")
        );
        assert!(
            read("n = 1\nt = 31536000001\ns = 1")
                .unwrap_err()
                .contains("out of range")
        );
        assert!(
            read("n = 1\nt = 1\ns = 31536001")
                .unwrap_err()
                .contains("out of range")
        );
        assert!(read("n = -1\nt = 1\ns = 1").is_err());
        assert!(read("n = \"x\"\nt = 1\ns = 1").is_err());
    }
}
