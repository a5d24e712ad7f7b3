//! A cached value that clients repair from the database when they find it missing or
//! invalid, written against [`Memcache`] and a database that may fail
//! ([`FallibleDatabase`]), as Facebook's account of its 23 September 2010 outage
//! describes the repair.

use std::time::Duration;

use mcsim::VirtualTime;
use mcsim::memcache::{Exptime, Key, McError, Memcache};

use crate::row::{FallibleDatabase, cached, version_of};

/// What a reader does when the database fails its query, and when the cache does not
/// answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HerdVariant {
    /// A database error is taken for an invalid value: the key is deleted, so that the
    /// next read repairs it from the database. A cache that does not answer is a miss.
    AsWritten,
    /// A database error leaves the key alone, and this reader queries the database
    /// again only after a wait that doubles with each failure in a row (from `backoff`,
    /// up to 32 times it; a valid value read ends it). A cache that does not answer is
    /// an error, not a miss: the read fails without a query.
    Backoff,
    /// The same backoff, but a cache that does not answer is still a miss: the reader
    /// queries the database, and clients whose cache replies are lost together query it
    /// together.
    BackoffMissOnError,
}

/// What a read gave the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// A valid cached value, its version.
    Hit(u64),
    /// Missing or invalid: repaired from the database, its version.
    Repaired(u64),
    /// No value to serve for want of the database: it failed the query, or the reader
    /// waits out its backoff.
    DatabaseFailed,
    /// No value to serve: the cache did not answer, and the reader did not query.
    CacheFailed,
}

/// The repair: a read of one cached value that queries the database when the value is
/// missing or invalid, and stores what it gets.
#[derive(Debug, Clone)]
pub struct Herd {
    key: Key,
    variant: HerdVariant,
    ttl_s: u32,
    backoff: Duration,
}

/// One reader's use of the repair: its failures in a row and when it may query again.
#[derive(Debug, Clone)]
pub struct Reader {
    herd: Herd,
    failures: u32,
    not_before: VirtualTime,
}

impl Herd {
    /// The repair of the value under `name`.
    pub fn new(name: &str, variant: HerdVariant, ttl_s: u32, backoff: Duration) -> Herd {
        Herd {
            key: Key::new(name).expect("value names are valid keys"),
            variant,
            ttl_s,
            backoff,
        }
    }

    /// The cache key.
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// A reader of it.
    pub fn reader(&self) -> Reader {
        Reader {
            herd: self.clone(),
            failures: 0,
            not_before: VirtualTime::ZERO,
        }
    }
}

impl Reader {
    /// A read: the cached value if it is valid; otherwise (missing, invalid, or for
    /// `AsWritten` and `BackoffMissOnError` the cache not answering) the database's,
    /// stored with `set`. When the database fails, `AsWritten` deletes the key and the
    /// others wait before their next query.
    pub async fn read(
        &mut self,
        mc: &impl Memcache,
        db: &impl FallibleDatabase,
    ) -> Result<Read, McError> {
        let herd = &self.herd;
        let backs_off = herd.variant != HerdVariant::AsWritten;
        let found = match mc.get(&herd.key).await {
            Ok(found) => found,
            Err(McError::Transport(_)) if herd.variant == HerdVariant::Backoff => {
                return Ok(Read::CacheFailed);
            }
            // Taken for a miss: the value is repaired from the database.
            Err(McError::Transport(_)) => None,
            Err(e) => return Err(e),
        };
        if let Some(n) = found.and_then(|v| version_of(&v.data)) {
            // The herd is over as this reader sees it.
            self.failures = 0;
            self.not_before = VirtualTime::ZERO;
            return Ok(Read::Hit(n));
        }
        if backs_off && mc.now() < self.not_before {
            return Ok(Read::DatabaseFailed);
        }
        match db.try_read().await {
            Ok(n) => {
                self.failures = 0;
                // Served whether or not the cache took it.
                match mc
                    .set(&herd.key, cached(n), Exptime::secs(herd.ttl_s))
                    .await
                {
                    Ok(()) | Err(McError::Transport(_)) => Ok(Read::Repaired(n)),
                    Err(e) => Err(e),
                }
            }
            Err(_) => {
                if backs_off {
                    self.failures += 1;
                    let wait = herd.backoff * (1 << (self.failures - 1).min(5));
                    self.not_before = mc.now() + wait;
                } else {
                    match mc.delete(&herd.key).await {
                        Ok(()) | Err(McError::NotFound) | Err(McError::Transport(_)) => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(Read::DatabaseFailed)
            }
        }
    }
}
