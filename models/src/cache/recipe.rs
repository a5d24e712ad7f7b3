//! The cache recipes, written against [`Memcache`] the way HL describes them.

use std::time::Duration;

use mcsim::memcache::{Exptime, Key, McError, Memcache, Value};
use mcsim::protocol::{MetaCode, MetaFlag};

/// Which cache recipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheVariant {
    /// Plain memcached TTL; every reader that misses rebuilds.
    Naive,
    /// HL's value with its own `valid_until`, locked with `get` then `set`.
    GetSetLock,
    /// The same locked with `add`.
    AddLock,
    /// memcached 1.6 meta commands: `mg … N<s>` hands out one win token (`W`), later
    /// readers get `Z`; the winner stores with `ms … C<cas>`.
    MgVivify,
}

impl CacheVariant {
    /// Parses a variant name.
    pub fn parse(name: &str) -> Option<CacheVariant> {
        Some(match name {
            "naive" => CacheVariant::Naive,
            "get-set-lock" => CacheVariant::GetSetLock,
            "add-lock" => CacheVariant::AddLock,
            "mg-vivify" => CacheVariant::MgVivify,
            _ => return None,
        })
    }
}

/// One logical event of a cache key: a letter of HL's debugging strip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// `M`: the value is missing or stale.
    Miss,
    /// `L`: an attempt to take the lock, or a look at whether it is still held.
    Lock,
    /// `W`: a rebuilt value was written.
    Write,
    /// `U`: the lock was removed.
    Unlock,
    /// `H`: a fresh value was served.
    Hit,
    /// `S`: a stale value was served (gave up waiting, or served while revalidating).
    Stale,
    /// `E`: nothing could be served (no value at all, and waiting did not help).
    Empty,
}

impl Event {
    /// Every event, in strip-letter order.
    pub const ALL: [Event; 7] = [
        Event::Miss,
        Event::Lock,
        Event::Write,
        Event::Unlock,
        Event::Hit,
        Event::Stale,
        Event::Empty,
    ];

    /// Its letter.
    pub fn letter(self) -> char {
        match self {
            Event::Miss => 'M',
            Event::Lock => 'L',
            Event::Write => 'W',
            Event::Unlock => 'U',
            Event::Hit => 'H',
            Event::Stale => 'S',
            Event::Empty => 'E',
        }
    }
}

/// The expensive query behind a cache key (the database).
#[allow(async_fn_in_trait)]
pub trait Backend {
    /// Runs the query that builds `key`'s value and returns the rows.
    async fn query(&self, key: &Key) -> Vec<u8>;
}

/// Where the recipe writes its debugging strip: one letter per logical event.
pub trait Strip {
    /// Records `event` for the cache key `key`.
    fn event(&self, key: &Key, event: Event);
}

/// What a read of the cache gave the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A value within its lifetime (or just built).
    Fresh(Vec<u8>),
    /// A value past its lifetime.
    Stale(Vec<u8>),
    /// Nothing.
    Nothing,
}

/// A value as HL stores it: no memcached TTL, its own `valid_until` (the writer's clock, in
/// milliseconds) in front of the rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Milliseconds on the writer's clock until which the value is fresh.
    pub valid_until_ms: u64,
    /// The rows.
    pub data: Vec<u8>,
}

impl Entry {
    /// `valid_until_ms:rows`.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = format!("{}:", self.valid_until_ms).into_bytes();
        out.extend_from_slice(&self.data);
        out
    }

    /// Reads an encoded entry; `None` for bytes no writer of this recipe produced.
    pub fn decode(bytes: &[u8]) -> Option<Entry> {
        let colon = bytes.iter().position(|b| *b == b':')?;
        let head = std::str::from_utf8(&bytes[..colon]).ok()?;
        // Digits only: `parse` alone would take a sign (`+5`), which no writer produces.
        // An empty head fails the parse.
        if !head.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(Entry {
            valid_until_ms: head.parse().ok()?,
            data: bytes[colon + 1..].to_vec(),
        })
    }
}

/// The knobs of a cache recipe.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheConfig {
    /// The recipe.
    pub variant: CacheVariant,
    /// How long a built value is fresh, seconds (the memcached TTL for `naive` and
    /// `mg-vivify`, `valid_until` for the locked variants).
    pub ttl_s: u32,
    /// The lock key's TTL, seconds (HL: "for example 10 seconds").
    pub lock_timeout_s: u32,
    /// How often a client that lost the lock checks whether it is gone.
    pub poll: Duration,
    /// How long a client waits for someone else's rebuild before giving up (HL: 2–3 s).
    pub max_wait: Duration,
    /// A client that loses the lock and holds a stale value serves it at once instead of
    /// waiting.
    pub serve_stale: bool,
    /// `mg … N<s>`: how long the win token lives if its holder never stores.
    pub vivify_s: u32,
    /// `mg … R<s>`: hand out a win token early when less than this many seconds of TTL are
    /// left (0: only on a miss).
    pub recache_s: u32,
}

/// A cached query under one key.
#[derive(Debug, Clone)]
pub struct Cache {
    key: Key,
    lock: Key,
    cfg: CacheConfig,
}

impl Cache {
    /// The cache `name` (its lock is `<name>_lock`).
    pub fn new(name: &str, cfg: CacheConfig) -> Cache {
        Cache {
            key: Key::new(name).expect("cache names are valid keys"),
            lock: Key::from_parts(&[name.as_bytes(), b"_lock"])
                .expect("cache names are valid keys"),
            cfg,
        }
    }

    /// The key the value lives under.
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// The lock key of the locked variants.
    pub fn lock_key(&self) -> &Key {
        &self.lock
    }

    /// Reads the cache, rebuilding it from `backend` when this recipe says so.
    pub async fn fetch(
        &self,
        mc: &impl Memcache,
        backend: &impl Backend,
        strip: &impl Strip,
    ) -> Result<Answer, McError> {
        match self.cfg.variant {
            CacheVariant::Naive => self.fetch_naive(mc, backend, strip).await,
            CacheVariant::GetSetLock | CacheVariant::AddLock => {
                self.fetch_locked(mc, backend, strip).await
            }
            CacheVariant::MgVivify => self.fetch_meta(mc, backend, strip).await,
        }
    }

    async fn fetch_naive(
        &self,
        mc: &impl Memcache,
        backend: &impl Backend,
        strip: &impl Strip,
    ) -> Result<Answer, McError> {
        if let Some(v) = mc.get(&self.key).await? {
            strip.event(&self.key, Event::Hit);
            return Ok(Answer::Fresh(v.data));
        }
        strip.event(&self.key, Event::Miss);
        let data = backend.query(&self.key).await;
        let ttl = Exptime::secs(self.cfg.ttl_s);
        mc.set(&self.key, Value::new(data.clone()), ttl).await?;
        strip.event(&self.key, Event::Write);
        Ok(Answer::Fresh(data))
    }

    /// HL's algorithm: a stale reader tries the lock; the winner rebuilds, writes and
    /// unlocks; a loser waits for the lock to go and reads again, or gives up after
    /// `max_wait` and serves what it has.
    async fn fetch_locked(
        &self,
        mc: &impl Memcache,
        backend: &impl Backend,
        strip: &impl Strip,
    ) -> Result<Answer, McError> {
        let started = mc.now();
        let mut stale: Option<Vec<u8>> = None;
        loop {
            match self.read_entry(mc).await? {
                Some(e) if e.valid_until_ms > mc.now().millis() => {
                    strip.event(&self.key, Event::Hit);
                    return Ok(Answer::Fresh(e.data));
                }
                Some(e) => stale = Some(e.data),
                None => {}
            }
            strip.event(&self.key, Event::Miss);
            strip.event(&self.key, Event::Lock);
            if self.try_lock(mc).await? {
                let data = backend.query(&self.key).await;
                let entry = Entry {
                    valid_until_ms: mc.now().millis() + u64::from(self.cfg.ttl_s) * 1000,
                    data: data.clone(),
                };
                // No memcached TTL: the old value stays readable while it is rebuilt.
                mc.set(&self.key, Value::new(entry.encode()), Exptime::NEVER)
                    .await?;
                strip.event(&self.key, Event::Write);
                self.unlock(mc).await?;
                strip.event(&self.key, Event::Unlock);
                return Ok(Answer::Fresh(data));
            }
            if self.cfg.serve_stale
                && let Some(data) = stale.take()
            {
                strip.event(&self.key, Event::Stale);
                return Ok(Answer::Stale(data));
            }
            // Someone is rebuilding: wait for the lock to go, then read again.
            loop {
                if mc.now().since(started) >= self.cfg.max_wait {
                    return Ok(self.give_up(stale, strip));
                }
                mc.sleep(self.cfg.poll).await;
                strip.event(&self.key, Event::Lock);
                if mc.get(&self.lock).await?.is_none() {
                    break;
                }
            }
        }
    }

    fn give_up(&self, stale: Option<Vec<u8>>, strip: &impl Strip) -> Answer {
        match stale {
            Some(data) => {
                strip.event(&self.key, Event::Stale);
                Answer::Stale(data)
            }
            None => {
                strip.event(&self.key, Event::Empty);
                Answer::Nothing
            }
        }
    }

    async fn read_entry(&self, mc: &impl Memcache) -> Result<Option<Entry>, McError> {
        Ok(mc
            .get(&self.key)
            .await?
            .and_then(|v| Entry::decode(&v.data)))
    }

    async fn try_lock(&self, mc: &impl Memcache) -> Result<bool, McError> {
        let ttl = Exptime::secs(self.cfg.lock_timeout_s);
        match self.cfg.variant {
            CacheVariant::GetSetLock => {
                if mc.get(&self.lock).await?.is_some() {
                    return Ok(false);
                }
                mc.set(&self.lock, Value::from("1"), ttl).await?;
                Ok(true)
            }
            _ => match mc.add(&self.lock, Value::from("1"), ttl).await {
                Ok(()) => Ok(true),
                Err(McError::NotStored) => Ok(false),
                Err(e) => Err(e),
            },
        }
    }

    async fn unlock(&self, mc: &impl Memcache) -> Result<(), McError> {
        match mc.delete(&self.lock).await {
            Ok(()) | Err(McError::NotFound) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The meta-command recipe: the server itself hands out one win token per miss (and,
    /// with `R`, one per value about to expire); the others get `Z` and either the value
    /// (still served while it is being rebuilt) or, after a miss, nothing to serve yet.
    async fn fetch_meta(
        &self,
        mc: &impl Memcache,
        backend: &impl Backend,
        strip: &impl Strip,
    ) -> Result<Answer, McError> {
        let started = mc.now();
        let mut flags = vec![
            MetaFlag::bare(b'v'),
            MetaFlag::bare(b'c'),
            MetaFlag::bare(b't'),
            MetaFlag::with(b'N', self.cfg.vivify_s),
        ];
        if self.cfg.recache_s > 0 {
            flags.push(MetaFlag::with(b'R', self.cfg.recache_s));
        }
        let mut waiting = false;
        loop {
            let reply = mc.mg(&self.key, &flags).await?;
            let value = reply.value.clone().unwrap_or_default();
            let empty = value.is_empty() || reply.code == MetaCode::Miss;
            if reply.has(b'W') {
                if !waiting {
                    strip.event(&self.key, Event::Miss);
                }
                strip.event(&self.key, Event::Lock);
                let data = backend.query(&self.key).await;
                let mut set = vec![MetaFlag::with(b'T', self.cfg.ttl_s)];
                if let Some(cas) = reply.flag(b'c').and_then(|c| c.parse::<u64>().ok()) {
                    set.push(MetaFlag::with(b'C', cas));
                }
                // HD, or EX/NF if the token's item was replaced or dropped meanwhile: the
                // rows are served either way.
                mc.ms(&self.key, &data, &set).await?;
                strip.event(&self.key, Event::Write);
                return Ok(Answer::Fresh(data));
            }
            if !empty {
                if reply.has(b'X') {
                    strip.event(&self.key, Event::Stale);
                    return Ok(Answer::Stale(value));
                }
                strip.event(&self.key, Event::Hit);
                return Ok(Answer::Fresh(value));
            }
            // `Z` on an empty placeholder: someone else is building the first value.
            if !waiting {
                strip.event(&self.key, Event::Miss);
                waiting = true;
            }
            strip.event(&self.key, Event::Lock);
            if mc.now().since(started) >= self.cfg.max_wait {
                return Ok(self.give_up(None, strip));
            }
            mc.sleep(self.cfg.poll).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip() {
        let e = Entry {
            valid_until_ms: 12_345,
            data: b"rows#7:with:colons".to_vec(),
        };
        assert_eq!(Entry::decode(&e.encode()), Some(e));
    }

    #[test]
    fn foreign_bytes_are_not_entries() {
        assert_eq!(Entry::decode(b"rows#7"), None);
        assert_eq!(Entry::decode(b":rows"), None);
        assert_eq!(Entry::decode(b"12a:rows"), None);
        assert_eq!(Entry::decode(b"-1:rows"), None);
        assert_eq!(Entry::decode(b"+5:rows"), None);
    }

    #[test]
    fn variants_parse() {
        for (name, v) in [
            ("naive", CacheVariant::Naive),
            ("get-set-lock", CacheVariant::GetSetLock),
            ("add-lock", CacheVariant::AddLock),
            ("mg-vivify", CacheVariant::MgVivify),
        ] {
            assert_eq!(CacheVariant::parse(name), Some(v));
        }
        assert_eq!(CacheVariant::parse("add"), None);
    }
}
