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
    /// Probabilistic early recomputation (XFetch): the value carries its expiry and how
    /// long its last recompute took; a reader recomputes early, before the expiry, with a
    /// chance that grows as the expiry nears. The item's memcached TTL is the value's
    /// expiry, as commonly written.
    XFetch,
    /// The same with the item's memcached TTL [`XFETCH_MARGIN_S`] beyond the value's
    /// expiry: memcached's whole-second clock ends a TTL up to a second early, before the
    /// early recomputes XFetch counts on.
    XFetchMargin,
}

/// How far `xfetch-margin` stores the item's TTL beyond the value's expiry: more than the
/// second memcached's clock may cut, and the delta of a recompute.
pub const XFETCH_MARGIN_S: u32 = 2;

impl CacheVariant {
    /// Parses a variant name.
    pub fn parse(name: &str) -> Option<CacheVariant> {
        Some(match name {
            "naive" => CacheVariant::Naive,
            "get-set-lock" => CacheVariant::GetSetLock,
            "add-lock" => CacheVariant::AddLock,
            "mg-vivify" => CacheVariant::MgVivify,
            "xfetch" => CacheVariant::XFetch,
            "xfetch-margin" => CacheVariant::XFetchMargin,
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

/// Where a recipe that decides by chance draws: a number in (0, 1), the same for the
/// same state (the engine's runs are deterministic).
pub trait Chance {
    /// A number in (0, 1).
    fn unit(&self, key: &Key) -> f64;
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

/// A value as XFetch stores it: its expiry and how long its last recompute took (both on
/// the writer's clock, in milliseconds) in front of the rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Early {
    /// Milliseconds on the writer's clock at which the value expires.
    pub expiry_ms: u64,
    /// How long the recompute that built it took (XFetch's delta).
    pub delta_ms: u64,
    /// The rows.
    pub data: Vec<u8>,
}

impl Early {
    /// `expiry_ms:delta_ms:rows`.
    pub fn encode(&self) -> Vec<u8> {
        let inner = Entry {
            valid_until_ms: self.delta_ms,
            data: self.data.clone(),
        };
        Entry {
            valid_until_ms: self.expiry_ms,
            data: inner.encode(),
        }
        .encode()
    }

    /// Reads an encoded value; `None` for bytes no writer of this recipe produced.
    pub fn decode(bytes: &[u8]) -> Option<Early> {
        let outer = Entry::decode(bytes)?;
        let inner = Entry::decode(&outer.data)?;
        Some(Early {
            expiry_ms: outer.valid_until_ms,
            delta_ms: inner.valid_until_ms,
            data: inner.data,
        })
    }

    /// XFetch's test: recompute now if `now - delta * beta * ln(u)` reaches the expiry
    /// (`u` in (0, 1), so `-ln(u)` is a draw of an exponential distribution of mean 1).
    pub fn recompute_early(&self, now_ms: u64, beta: f64, u: f64) -> bool {
        now_ms as f64 - self.delta_ms as f64 * beta * u.ln() >= self.expiry_ms as f64
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
    /// `xfetch`: its beta, how early it recomputes (1: as its authors advise; above 1
    /// earlier, below later).
    pub beta: f64,
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
        chance: &impl Chance,
    ) -> Result<Answer, McError> {
        match self.cfg.variant {
            CacheVariant::Naive => self.fetch_naive(mc, backend, strip).await,
            CacheVariant::GetSetLock | CacheVariant::AddLock => {
                self.fetch_locked(mc, backend, strip).await
            }
            CacheVariant::MgVivify => self.fetch_meta(mc, backend, strip).await,
            CacheVariant::XFetch | CacheVariant::XFetchMargin => {
                self.fetch_early(mc, backend, strip, chance).await
            }
        }
    }

    /// Stores `data` as a rebuild that took `rebuild` would have, before any reader comes
    /// (a warm cache), in the form the variant reads.
    pub async fn warm(
        &self,
        mc: &impl Memcache,
        data: Vec<u8>,
        rebuild: Duration,
    ) -> Result<(), McError> {
        let expiry_ms = mc.now().millis() + u64::from(self.cfg.ttl_s) * 1000;
        let ttl = Exptime::secs(self.cfg.ttl_s);
        let (bytes, exptime) = match self.cfg.variant {
            CacheVariant::Naive | CacheVariant::MgVivify => (data, ttl),
            CacheVariant::GetSetLock | CacheVariant::AddLock => (
                Entry {
                    valid_until_ms: expiry_ms,
                    data,
                }
                .encode(),
                Exptime::NEVER,
            ),
            CacheVariant::XFetch | CacheVariant::XFetchMargin => (
                Early {
                    expiry_ms,
                    delta_ms: rebuild.as_millis() as u64,
                    data,
                }
                .encode(),
                self.early_ttl(),
            ),
        };
        mc.set(&self.key, Value::new(bytes), exptime).await
    }

    /// The memcached TTL of an XFetch value: its expiry, or beyond it by the margin.
    fn early_ttl(&self) -> Exptime {
        match self.cfg.variant {
            CacheVariant::XFetchMargin => Exptime::secs(self.cfg.ttl_s + XFETCH_MARGIN_S),
            _ => Exptime::secs(self.cfg.ttl_s),
        }
    }

    /// XFetch (Vattani, Chierichetti, Lowenstein, VLDB 2015): a hit recomputes early when
    /// its draw says so, else serves the value; a miss recomputes. The value carries its
    /// expiry, `ttl_s` after it was built, and its delta.
    async fn fetch_early(
        &self,
        mc: &impl Memcache,
        backend: &impl Backend,
        strip: &impl Strip,
        chance: &impl Chance,
    ) -> Result<Answer, McError> {
        if let Some(found) = mc.get(&self.key).await?
            && let Some(early) = Early::decode(&found.data)
        {
            let now = mc.now().millis();
            if !early.recompute_early(now, self.cfg.beta, chance.unit(&self.key)) {
                strip.event(&self.key, Event::Hit);
                return Ok(Answer::Fresh(early.data));
            }
        }
        strip.event(&self.key, Event::Miss);
        let started = mc.now().millis();
        let data = backend.query(&self.key).await;
        let now = mc.now().millis();
        let early = Early {
            expiry_ms: now + u64::from(self.cfg.ttl_s) * 1000,
            delta_ms: now - started,
            data,
        };
        mc.set(&self.key, Value::new(early.encode()), self.early_ttl())
            .await?;
        strip.event(&self.key, Event::Write);
        Ok(Answer::Fresh(early.data))
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
    fn early_values_round_trip_and_recompute_more_often_near_their_expiry() {
        let e = Early {
            expiry_ms: 10_000,
            delta_ms: 300,
            data: b"rows:7".to_vec(),
        };
        assert_eq!(Early::decode(&e.encode()), Some(e.clone()));
        assert_eq!(Early::decode(b"12:rows"), None);
        // -ln(0.5) * 300 ms is about 208 ms of headroom.
        assert!(!e.recompute_early(9_700, 1.0, 0.5));
        assert!(e.recompute_early(9_800, 1.0, 0.5));
        assert!(e.recompute_early(10_000, 1.0, 0.999));
        // A larger beta recomputes earlier; an unlucky draw very early.
        assert!(e.recompute_early(9_700, 2.0, 0.5));
        assert!(e.recompute_early(8_000, 1.0, 0.0001));
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
            ("xfetch", CacheVariant::XFetch),
            ("xfetch-margin", CacheVariant::XFetchMargin),
        ] {
            assert_eq!(CacheVariant::parse(name), Some(v));
        }
        assert_eq!(CacheVariant::parse("add"), None);
    }
}
