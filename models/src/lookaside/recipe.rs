//! The look-aside cache's read and invalidation, written against [`Memcache`] as
//! "Scaling Memcache at Facebook" and memcached 1.6's meta commands describe them.

use mcsim::memcache::{Cas, Exptime, Key, McError, Memcache, Value};
use mcsim::protocol::{MetaCode, MetaFlag};

use crate::row::{Database, cached, version_of};

/// Which recipe fills the cache after a miss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookasideVariant {
    /// `get`; on a miss read the database and `set`.
    AsWritten,
    /// The same, filling with `add`.
    Add,
    /// A lease: `add` an empty placeholder, take its cas unique with `gets`, read the
    /// database, fill with `cas`.
    LeaseCas,
    /// A lease from memcached 1.6: `mg … N` vivifies a placeholder and gives one reader
    /// `W`; it fills with `ms … C<cas>`.
    LeaseMeta,
}

/// What a read served, and what became of its fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Served {
    /// The row's version served.
    pub version: u64,
    /// The read filled the cache, tried and was refused, or did not try.
    pub fill: Fill,
}

/// What became of a read's fill of the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// A hit, or a hot miss served from the database: no fill.
    None,
    /// Stored.
    Stored,
    /// Refused: the item was filled, replaced or deleted since the miss (`NOT_STORED`,
    /// `EXISTS`, `NOT_FOUND`).
    Refused,
}

impl Served {
    fn hit(version: u64) -> Served {
        Served {
            version,
            fill: Fill::None,
        }
    }
}

/// A look-aside cache of one database row, under one key.
#[derive(Debug, Clone)]
pub struct Lookaside {
    key: Key,
    variant: LookasideVariant,
    /// The filled value's TTL.
    ttl_s: u32,
    /// The placeholder's TTL: a lease its holder never fills ends with it.
    lease_s: u32,
}

impl Lookaside {
    /// The cache of the row `row`.
    pub fn new(row: &str, variant: LookasideVariant, ttl_s: u32, lease_s: u32) -> Lookaside {
        Lookaside {
            key: Key::from_parts(&[b"row_", row.as_bytes()]).expect("row names are valid keys"),
            variant,
            ttl_s,
            lease_s,
        }
    }

    /// The cache key.
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// A read: from the cache, or on a miss from the database, filling the cache as the
    /// variant does.
    pub async fn read(&self, mc: &impl Memcache, db: &impl Database) -> Result<Served, McError> {
        match self.variant {
            LookasideVariant::AsWritten | LookasideVariant::Add => self.read_fill(mc, db).await,
            LookasideVariant::LeaseCas => self.read_lease_cas(mc, db).await,
            LookasideVariant::LeaseMeta => self.read_lease_meta(mc, db).await,
        }
    }

    async fn read_fill(&self, mc: &impl Memcache, db: &impl Database) -> Result<Served, McError> {
        if let Some(n) = mc.get(&self.key).await?.and_then(|v| version_of(&v.data)) {
            return Ok(Served::hit(n));
        }
        let n = db.read().await;
        let ttl = Exptime::secs(self.ttl_s);
        let fill = if self.variant == LookasideVariant::AsWritten {
            mc.set(&self.key, cached(n), ttl).await?;
            Fill::Stored
        } else {
            // Not stored: another reader filled it meanwhile; the row is served anyway.
            match mc.add(&self.key, cached(n), ttl).await {
                Ok(()) => Fill::Stored,
                Err(McError::NotStored) => Fill::Refused,
                Err(e) => return Err(e),
            }
        };
        Ok(Served { version: n, fill })
    }

    /// A miss takes a lease (an empty placeholder only one `add` places) and fills only
    /// over it, with `cas`: a delete since removed the placeholder, and the fill finds
    /// it gone (`NOT_FOUND`) or replaced (`EXISTS`). A reader that finds a placeholder,
    /// or loses the `add`, serves the row from the database without filling (a hot
    /// miss).
    async fn read_lease_cas(
        &self,
        mc: &impl Memcache,
        db: &impl Database,
    ) -> Result<Served, McError> {
        if let Some(found) = mc.get(&self.key).await? {
            return Ok(match version_of(&found.data) {
                Some(n) => Served::hit(n),
                None => Served::hit(db.read().await),
            });
        }
        match mc
            .add(
                &self.key,
                Value::new(Vec::new()),
                Exptime::secs(self.lease_s),
            )
            .await
        {
            Ok(()) => {}
            Err(McError::NotStored) => return Ok(Served::hit(db.read().await)),
            Err(e) => return Err(e),
        }
        // The placeholder's cas unique: none if a delete came first.
        let lease: Option<Cas> = match mc.gets(&self.key).await? {
            Some((found, cas)) if found.data.is_empty() => Some(cas),
            _ => None,
        };
        let n = db.read().await;
        let fill = match lease {
            Some(cas) => match mc
                .cas(&self.key, cached(n), Exptime::secs(self.ttl_s), cas)
                .await
            {
                Ok(()) => Fill::Stored,
                Err(McError::Exists) | Err(McError::NotFound) => Fill::Refused,
                Err(e) => return Err(e),
            },
            None => Fill::Refused,
        };
        Ok(Served { version: n, fill })
    }

    /// `mg key v c N<lease_s>`: on a miss the server places an empty item and answers
    /// `W` (fill it) to this reader alone; it fills with `ms … C<cas>`, which a delete
    /// since makes fail. Others see the placeholder (`Z`) and serve the row from the
    /// database.
    async fn read_lease_meta(
        &self,
        mc: &impl Memcache,
        db: &impl Database,
    ) -> Result<Served, McError> {
        let flags = [
            MetaFlag::bare(b'v'),
            MetaFlag::bare(b'c'),
            MetaFlag::with(b'N', self.lease_s),
        ];
        let reply = mc.mg(&self.key, &flags).await?;
        if reply.has(b'W') {
            let n = db.read().await;
            let mut set = vec![MetaFlag::with(b'T', self.ttl_s)];
            if let Some(cas) = reply.flag(b'c') {
                set.push(MetaFlag::with(b'C', cas));
            }
            // HD, or NF/EX when a delete came since: the row is served either way.
            let stored = mc.ms(&self.key, &cached(n).data, &set).await?;
            let fill = match stored.code {
                MetaCode::Header => Fill::Stored,
                _ => Fill::Refused,
            };
            return Ok(Served { version: n, fill });
        }
        Ok(Served::hit(
            match reply.value.as_deref().and_then(version_of) {
                Some(n) => n,
                None => db.read().await,
            },
        ))
    }

    /// The writer's invalidation after it updated the row: the key deleted (`md` for
    /// the meta lease), a missing key is no error.
    pub async fn invalidate(&self, mc: &impl Memcache) -> Result<(), McError> {
        if self.variant == LookasideVariant::LeaseMeta {
            mc.md(&self.key, &[]).await?;
            return Ok(());
        }
        match mc.delete(&self.key).await {
            Ok(()) | Err(McError::NotFound) => Ok(()),
            Err(e) => Err(e),
        }
    }
}
