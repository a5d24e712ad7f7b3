//! The tagged-cache recipes, written against [`Memcache`] the way HL describes them.

use mcsim::memcache::{Exptime, Key, McError, Memcache, Value, ValueMap};

/// How tag versions are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagsVariant {
    /// Integers bumped by one (`incr`); a lost tag restarts at 1.
    Counter,
    /// The invalidating frontend's clock in milliseconds.
    Time,
}

impl TagsVariant {
    /// Parses a variant name.
    pub fn parse(name: &str) -> Option<TagsVariant> {
        Some(match name {
            "counter" => TagsVariant::Counter,
            "time" => TagsVariant::Time,
            _ => return None,
        })
    }
}

/// The database behind the cache.
#[allow(async_fn_in_trait)]
pub trait Database {
    /// Runs the cached query, on the master (`true`: sees every committed change) or on a
    /// replica (may lag behind the master).
    async fn query(&self, master: bool) -> Vec<u8>;
}

/// A cache entry: the versions of its tags when it was built, then the rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tagged {
    /// One version per tag, in the cache's tag order.
    pub versions: Vec<u64>,
    /// The rows.
    pub data: Vec<u8>,
}

impl Tagged {
    /// `v1,v2,…|rows`.
    pub fn encode(&self) -> Vec<u8> {
        use std::io::Write;
        let mut out = Vec::with_capacity(21 * self.versions.len() + 1 + self.data.len());
        for (i, v) in self.versions.iter().enumerate() {
            let comma = if i == 0 { "" } else { "," };
            write!(out, "{comma}{v}").expect("a Vec takes every byte");
        }
        out.push(b'|');
        out.extend_from_slice(&self.data);
        out
    }

    /// Reads an encoded entry; `None` for bytes this recipe did not write.
    pub fn decode(bytes: &[u8]) -> Option<Tagged> {
        let (head, data) = split(bytes)?;
        Some(Tagged {
            versions: versions(head).collect::<Option<Vec<u64>>>()?,
            data: data.to_vec(),
        })
    }
}

/// An entry's version list and rows, at its first `|`.
fn split(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let bar = bytes.iter().position(|b| *b == b'|')?;
    Some((&bytes[..bar], &bytes[bar + 1..]))
}

/// The versions of a list `v1,v2,…` (none when empty): each `None` unless one or more
/// decimal digits that fit in 64 bits.
fn versions(head: &[u8]) -> impl Iterator<Item = Option<u64>> + '_ {
    let pieces = (!head.is_empty()).then(|| head.split(|b| *b == b','));
    pieces.into_iter().flatten().map(|v| {
        if v.is_empty() {
            return None;
        }
        v.iter().try_fold(0u64, |n, &b| {
            b.is_ascii_digit()
                .then(|| n.checked_mul(10)?.checked_add(u64::from(b - b'0')))
                .flatten()
        })
    })
}

/// The knobs of the recipe.
#[derive(Debug, Clone, PartialEq)]
pub struct TagsConfig {
    /// How versions are made.
    pub variant: TagsVariant,
    /// The cache entry's memcached TTL, seconds.
    pub entry_ttl_s: u32,
    /// With a replicated database (`time` only): a rebuild goes to the master when some tag
    /// changed less than this many milliseconds ago (by the reader's clock minus the
    /// version), otherwise to a replica. `None`: one database, always up to date.
    pub master_window_ms: Option<u64>,
}

/// What a read gave the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    /// The rows.
    pub data: Vec<u8>,
    /// The entry was valid (no rebuild).
    pub hit: bool,
    /// A rebuild read the master (false: a replica, or no rebuild).
    pub master: bool,
}

/// A cached query depending on some tags.
#[derive(Debug, Clone)]
pub struct TaggedCache {
    /// The entry's key, then its tags' keys: what a read asks for in one multi-get.
    keys: Vec<Key>,
    cfg: TagsConfig,
}

impl TaggedCache {
    /// The entry `name`, tagged with `tags`.
    pub fn new(name: &str, tags: &[String], cfg: TagsConfig) -> TaggedCache {
        let entry = Key::new(name).expect("entry names are valid keys");
        let tags = tags
            .iter()
            .map(|t| Key::new(t.as_str()).expect("tag names are valid keys"));
        TaggedCache {
            keys: std::iter::once(entry).chain(tags).collect(),
            cfg,
        }
    }

    /// The entry's key.
    pub fn key(&self) -> &Key {
        &self.keys[0]
    }

    /// The tags' keys.
    pub fn tags(&self) -> &[Key] {
        &self.keys[1..]
    }

    /// Reads the entry with its tags in one multi-get; serves it if every stored version
    /// equals the tag's current one, otherwise rebuilds it from `db` with the current
    /// versions.
    pub async fn read(&self, mc: &impl Memcache, db: &impl Database) -> Result<Read, McError> {
        let got = mc.get_multi(&self.keys).await?;
        let mut current = Vec::with_capacity(self.tags().len());
        for tag in self.tags() {
            current.push(match version(&got, tag) {
                Some(v) => v,
                None => self.create_tag(mc, tag).await?,
            });
        }
        let entry = got.get(self.key()).and_then(|v| Tagged::decode(&v.data));
        if let Some(entry) = entry
            && entry.versions == current
        {
            return Ok(Read {
                data: entry.data,
                hit: true,
                master: false,
            });
        }
        let master = match (self.cfg.variant, self.cfg.master_window_ms) {
            (_, None) | (TagsVariant::Counter, _) => true,
            (TagsVariant::Time, Some(window)) => {
                let now = mc.now().millis();
                current.iter().any(|v| now.saturating_sub(*v) < window)
            }
        };
        let data = db.query(master).await;
        let entry = Tagged {
            versions: current,
            data: data.clone(),
        };
        mc.set(
            self.key(),
            Value::new(entry.encode()),
            Exptime::secs(self.cfg.entry_ttl_s),
        )
        .await?;
        Ok(Read {
            data,
            hit: false,
            master,
        })
    }

    /// A tag nobody has versioned yet (or whose key was lost): give it a first version.
    async fn create_tag(&self, mc: &impl Memcache, tag: &Key) -> Result<u64, McError> {
        loop {
            let first = self.first_version(mc);
            match mc.add(tag, Value::from(first), Exptime::NEVER).await {
                Ok(()) => return Ok(first),
                Err(McError::NotStored) => {
                    if let Some(v) = mc.get(tag).await?.and_then(|v| v.as_u64()) {
                        return Ok(v);
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn first_version(&self, mc: &impl Memcache) -> u64 {
        match self.cfg.variant {
            TagsVariant::Counter => 1,
            TagsVariant::Time => mc.now().millis(),
        }
    }

    /// Invalidates every entry tagged `tag` by giving the tag a new version. Call it after
    /// the change to the database has committed.
    pub async fn invalidate(&self, mc: &impl Memcache, tag: &Key) -> Result<(), McError> {
        match self.cfg.variant {
            TagsVariant::Counter => loop {
                match mc.incr(tag, 1).await {
                    Ok(_) => return Ok(()),
                    Err(McError::NotFound) => {}
                    Err(e) => return Err(e),
                }
                // The version was lost: it starts again from the beginning.
                match mc.add(tag, Value::from(1u64), Exptime::NEVER).await {
                    Ok(()) => return Ok(()),
                    Err(McError::NotStored) => continue,
                    Err(e) => return Err(e),
                }
            },
            TagsVariant::Time => {
                let version = mc.now().millis();
                mc.set(tag, Value::from(version), Exptime::NEVER).await
            }
        }
    }
}

fn version(got: &ValueMap, tag: &Key) -> Option<u64> {
    got.get(tag).and_then(|v| v.as_u64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip() {
        for versions in [vec![], vec![7], vec![1_700_000_123_456, 3]] {
            let e = Tagged {
                versions,
                data: b"db#4|x".to_vec(),
            };
            assert_eq!(Tagged::decode(&e.encode()), Some(e));
        }
    }

    #[test]
    fn foreign_bytes_are_not_entries() {
        assert_eq!(Tagged::decode(b"db#4"), None);
        assert_eq!(Tagged::decode(b"1,,2|db#4"), None);
        assert_eq!(Tagged::decode(b"1,x|db#4"), None);
        assert_eq!(Tagged::decode(b"-1|db#4"), None);
    }

    #[test]
    fn variants_parse() {
        assert_eq!(TagsVariant::parse("counter"), Some(TagsVariant::Counter));
        assert_eq!(TagsVariant::parse("time"), Some(TagsVariant::Time));
        assert_eq!(TagsVariant::parse("clock"), None);
    }
}
