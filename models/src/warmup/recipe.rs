//! A cold cluster's reads and invalidations, written against [`Memcache`] as "Scaling
//! Memcache at Facebook" (NSDI 2013, §4.3) describes its warmup.

use mcsim::memcache::{Exptime, Key, McError, Memcache, Value};

use crate::row::{Database, cached, version_of};

/// How the cold cluster is invalidated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarmupVariant {
    /// `delete`: a reader that meets the miss before the warm cluster's invalidation
    /// copies the old version from it.
    AsWritten,
    /// A delete with a hold-off: the key replaced by an empty tombstone that lives
    /// `hold_off_s`, which readers take for a miss and which refuses their `add`; a
    /// refused fill after a warm hit reads the database instead.
    HoldOff,
}

/// Where a read's version came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A hit in the cold cluster.
    Cold,
    /// A hit in the warm cluster, after a miss in the cold one.
    Warm,
    /// The database: a miss in both, a refused fill under a hold-off, or a cluster that
    /// could not be reached.
    Database,
}

/// What a read served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Served {
    /// The row's version.
    pub version: u64,
    /// Where it came from.
    pub source: Source,
    /// Whether the read's `add` to the cold cluster was refused.
    pub refused: bool,
}

/// One row cached in a cold cluster warmed from a warm one, under one key.
#[derive(Debug, Clone)]
pub struct Warmup {
    key: Key,
    variant: WarmupVariant,
    /// A filled value's TTL.
    ttl_s: u32,
    /// How long a hold-off refuses fills.
    hold_off_s: u32,
}

impl Warmup {
    /// The row `row`, cached for `ttl_s`, held off for `hold_off_s` after an invalidation
    /// (`hold-off`).
    pub fn new(row: &str, variant: WarmupVariant, ttl_s: u32, hold_off_s: u32) -> Warmup {
        Warmup {
            key: Key::from_parts(&[b"row_", row.as_bytes()]).expect("row names are valid keys"),
            variant,
            ttl_s,
            hold_off_s,
        }
    }

    /// The key the row lives under, in both clusters.
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// A read by a client of the cold cluster: `cold` and `warm` are that client
    /// addressed to each cluster. A miss in the cold cluster asks the warm one, then the
    /// database, and fills the cold cluster with `add`.
    pub async fn read(
        &self,
        cold: &impl Memcache,
        warm: &impl Memcache,
        db: &impl Database,
    ) -> Result<Served, McError> {
        // A tombstone (an empty value) is a miss.
        if let Some(n) = cold.get(&self.key).await?.and_then(|v| version_of(&v.data)) {
            return Ok(Served {
                version: n,
                source: Source::Cold,
                refused: false,
            });
        }
        let (n, source) = match warm.get(&self.key).await?.and_then(|v| version_of(&v.data)) {
            Some(n) => (n, Source::Warm),
            None => (db.read().await, Source::Database),
        };
        let ttl = Exptime::secs(self.ttl_s);
        let refused = match cold.add(&self.key, cached(n), ttl).await {
            Ok(()) => false,
            Err(McError::NotStored) => true,
            Err(e) => return Err(e),
        };
        if refused && source == Source::Warm && self.variant == WarmupVariant::HoldOff {
            // The refusal says the row changed since: the warm copy may be older.
            return Ok(Served {
                version: db.read().await,
                source: Source::Database,
                refused,
            });
        }
        Ok(Served {
            version: n,
            source,
            refused,
        })
    }

    /// The writer's invalidation of the cold cluster after it updated the row: `delete`,
    /// or under a hold-off the tombstone `set` for `hold_off_s`. A missing key is no
    /// error.
    pub async fn invalidate_cold(&self, cold: &impl Memcache) -> Result<(), McError> {
        match self.variant {
            WarmupVariant::AsWritten => self.delete(cold).await,
            WarmupVariant::HoldOff => {
                cold.set(&self.key, Value::from(""), Exptime::secs(self.hold_off_s))
                    .await
            }
        }
    }

    /// The warm cluster's invalidation, when the delete stream reaches it: `delete`.
    pub async fn invalidate_warm(&self, warm: &impl Memcache) -> Result<(), McError> {
        self.delete(warm).await
    }

    /// `delete` in the cluster `mc` addresses; a missing key is no error.
    async fn delete(&self, mc: &impl Memcache) -> Result<(), McError> {
        match mc.delete(&self.key).await {
            Ok(()) | Err(McError::NotFound) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// A read by a client of the warm cluster, which fills it itself: a miss reads the
    /// database and fills with `add`.
    pub async fn read_warm(
        &self,
        warm: &impl Memcache,
        db: &impl Database,
    ) -> Result<u64, McError> {
        if let Some(n) = warm.get(&self.key).await?.and_then(|v| version_of(&v.data)) {
            return Ok(n);
        }
        let n = db.read().await;
        match warm
            .add(&self.key, cached(n), Exptime::secs(self.ttl_s))
            .await
        {
            Ok(()) | Err(McError::NotStored) => Ok(n),
            Err(e) => Err(e),
        }
    }

    /// The warm cluster before the cold one starts: the row's version `n` cached there.
    pub async fn warm_up(&self, warm: &impl Memcache, n: u64) -> Result<(), McError> {
        warm.set(&self.key, cached(n), Exptime::secs(self.ttl_s))
            .await
    }
}
