//! A cache read and written through a failover route to a gutter pool, against two
//! [`Memcache`] handles (the primary and the gutter), as mcrouter's `FailoverRoute` and
//! "Scaling Memcache at Facebook" describe it.

use std::time::Duration;

use mcsim::memcache::{Exptime, Key, McError, Memcache};

use crate::row::{Database, cached, version_of};

/// How a write treats a primary it cannot reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GutterVariant {
    /// mcrouter's failover route as configured by default: a `set` the primary does not
    /// take goes to the gutter (with the gutter's short TTL), and the write is done.
    AsWritten,
    /// The write also reaches the primary before it is acknowledged: a `set` the primary
    /// does not take goes to the gutter, then is sent to the primary again, every
    /// `retry`, until it takes it (as mcrouter's asynclog replays what a primary missed).
    Replay,
}

/// Where a read's version came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A hit on the primary.
    Primary,
    /// A hit on the gutter, the primary being unreachable.
    Gutter,
    /// The database, after a miss (the cache filled with `add`) or with both pools
    /// unreachable.
    Database,
}

/// What a read served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Served {
    /// The row's version.
    pub version: u64,
    /// Where it came from.
    pub source: Source,
    /// True if the primary was unreachable: the read failed over.
    pub failed_over: bool,
}

/// What became of a write's `set`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// The primary did not take it at once: it went to the gutter.
    pub to_gutter: bool,
    /// Times the primary was asked again after a connection error.
    pub retries: u32,
}

/// A cache of one database row, under one key, on a primary pool with a gutter pool
/// behind it.
#[derive(Debug, Clone)]
pub struct Gutter {
    key: Key,
    variant: GutterVariant,
    /// The TTL of a value on the primary.
    ttl_s: u32,
    /// The TTL of a value on the gutter: short, so that what lands there while the
    /// primary is away ends soon.
    gutter_ttl_s: u32,
    /// `Replay`: time between a write's attempts on the primary.
    retry: Duration,
    /// `Replay`: attempts on the primary before the write gives up.
    attempts: u32,
}

impl Gutter {
    /// The cache of the row `row`.
    pub fn new(row: &str, variant: GutterVariant, ttl_s: u32, gutter_ttl_s: u32) -> Gutter {
        Gutter {
            key: Key::from_parts(&[b"row_", row.as_bytes()]).expect("row names are valid keys"),
            variant,
            ttl_s,
            gutter_ttl_s,
            retry: Duration::from_millis(50),
            attempts: 1,
        }
    }

    /// `Replay`: the write asks the primary up to `attempts` times, `retry` apart.
    pub fn retrying(mut self, retry: Duration, attempts: u32) -> Gutter {
        self.retry = retry;
        self.attempts = attempts.max(1);
        self
    }

    /// The cache key.
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// A read: `get` on the primary; when the primary cannot be reached, `get` on the
    /// gutter. A miss reads the database and fills the pool that answered with `add`
    /// (a fill never overwrites a newer write), with that pool's TTL.
    pub async fn read(
        &self,
        primary: &impl Memcache,
        gutter: &impl Memcache,
        db: &impl Database,
    ) -> Result<Served, McError> {
        let failed_over = |version, source| Served {
            version,
            source,
            failed_over: true,
        };
        match self.read_from(primary, self.ttl_s, db).await {
            Ok((version, hit)) => Ok(Served {
                version,
                source: if hit {
                    Source::Primary
                } else {
                    Source::Database
                },
                failed_over: false,
            }),
            Err(McError::Transport(_)) => match self.read_from(gutter, self.gutter_ttl_s, db).await
            {
                Ok((version, true)) => Ok(failed_over(version, Source::Gutter)),
                Ok((version, false)) => Ok(failed_over(version, Source::Database)),
                Err(McError::Transport(_)) => Ok(failed_over(db.read().await, Source::Database)),
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        }
    }

    /// A read on one pool: its hit (`true`), or the database's row filled there with
    /// `add`. A fill the pool refuses (`NOT_STORED`: filled or written since the miss)
    /// or cannot take serves the row all the same.
    async fn read_from(
        &self,
        pool: &impl Memcache,
        ttl_s: u32,
        db: &impl Database,
    ) -> Result<(u64, bool), McError> {
        if let Some(n) = pool.get(&self.key).await?.and_then(|v| version_of(&v.data)) {
            return Ok((n, true));
        }
        let n = db.read().await;
        match pool.add(&self.key, cached(n), Exptime::secs(ttl_s)).await {
            Ok(()) | Err(McError::NotStored) | Err(McError::Transport(_)) => {}
            Err(e) => return Err(e),
        }
        Ok((n, false))
    }

    /// The writer's `set` of version `n` after it updated the row: to the primary, or,
    /// when the primary cannot be reached, to the gutter with the gutter's TTL (and, for
    /// `Replay`, to the primary again until it takes it). `Err` with a connection error
    /// when neither took it (`AsWritten`) or the primary never did (`Replay`): the write
    /// is not acknowledged.
    pub async fn write(
        &self,
        primary: &impl Memcache,
        gutter: &impl Memcache,
        n: u64,
    ) -> Result<Written, McError> {
        let ttl = Exptime::secs(self.ttl_s);
        let failed = match primary.set(&self.key, cached(n), ttl).await {
            Ok(()) => {
                return Ok(Written {
                    to_gutter: false,
                    retries: 0,
                });
            }
            Err(e @ McError::Transport(_)) => e,
            Err(e) => return Err(e),
        };
        let to_gutter = gutter
            .set(&self.key, cached(n), Exptime::secs(self.gutter_ttl_s))
            .await;
        if self.variant == GutterVariant::AsWritten {
            return match to_gutter {
                Ok(()) => Ok(Written {
                    to_gutter: true,
                    retries: 0,
                }),
                Err(e) => Err(e),
            };
        }
        // The gutter's copy serves readers while the primary is away; the write is
        // done once the primary has it.
        let mut last = failed;
        for retries in 1..self.attempts {
            primary.sleep(self.retry).await;
            match primary.set(&self.key, cached(n), ttl).await {
                Ok(()) => {
                    return Ok(Written {
                        to_gutter: true,
                        retries,
                    });
                }
                Err(e @ McError::Transport(_)) => last = e,
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }
}
