//! The read-mostly array (DS `MCArray1`), written against [`Memcache`].
//!
//! The array is one key holding the serialized elements. A change takes the DS lock
//! (`add` with a timeout, spinning), reads, filters, appends, writes the whole array back
//! with one `set` and unlocks; the lock-free variant replaces the lock with `gets` and
//! `cas` (and `add` when the key does not exist yet). `fetch` is a single `get`.

use std::time::Duration;

use mcsim::memcache::{Exptime, Key, McError, Memcache, Value};

use crate::lock::{Lock, LockVariant};

/// Which change recipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayVariant {
    /// DS as written: spin on the lock, `get`, filter, `set`, unlock.
    Lock,
    /// The lock-free variant DS suggests: `gets`, filter, `cas` (or `add` on a miss),
    /// start over when another writer got there first.
    Cas,
}

impl ArrayVariant {
    /// Parses a variant name.
    pub fn parse(name: &str) -> Option<ArrayVariant> {
        Some(match name {
            "lock" => ArrayVariant::Lock,
            "cas" => ArrayVariant::Cas,
            _ => return None,
        })
    }
}

/// Serializes an array: the elements separated by single spaces (elements are tokens
/// without whitespace).
pub fn encode(elements: &[String]) -> Value {
    Value::from(elements.join(" "))
}

/// Reads an array back; an empty value is the empty array.
pub fn decode(data: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(data)
        .split(' ')
        .filter(|e| !e.is_empty())
        .map(str::to_string)
        .collect()
}

/// One change: drop every element listed in `delete`, then append `add` (duplicates are
/// not checked, as in DS).
pub fn apply(mut array: Vec<String>, add: &[String], delete: &[String]) -> Vec<String> {
    array.retain(|e| !delete.contains(e));
    array.extend(add.iter().cloned());
    array
}

/// A named array under the key `array_<name>`.
#[derive(Debug, Clone)]
pub struct Array {
    key: Key,
    lock: Lock,
    variant: ArrayVariant,
    backoff: Duration,
}

impl Array {
    /// The array `name`; its lock (variant `lock`) expires `lock_timeout` seconds after it
    /// is taken (DS: 5), and a writer that finds it taken waits `backoff` before trying
    /// again.
    pub fn new(
        name: &str,
        variant: ArrayVariant,
        lock_timeout: u32,
        backoff: Duration,
        owner: usize,
    ) -> Array {
        let key =
            Key::from_parts(&[b"array_", name.as_bytes()]).expect("array names are valid keys");
        Array {
            key,
            lock: Lock::new(name, lock_timeout, LockVariant::Add, owner),
            variant,
            backoff,
        }
    }

    /// The key holding the array.
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// The key of its lock.
    pub fn lock_key(&self) -> &Key {
        self.lock.key()
    }

    /// The whole array (`get`; a miss is the empty array).
    pub async fn fetch(&self, mc: &impl Memcache) -> Result<Vec<String>, McError> {
        Ok(mc
            .get(&self.key)
            .await?
            .map(|v| decode(&v.data))
            .unwrap_or_default())
    }

    /// Removes `delete` and appends `add`. `work` is the time the writer spends between
    /// reading the array and writing it back (filtering, a slow process, a pause).
    pub async fn change(
        &self,
        mc: &impl Memcache,
        add: &[String],
        delete: &[String],
        work: Duration,
    ) -> Result<(), McError> {
        match self.variant {
            ArrayVariant::Lock => {
                while !self.lock.try_lock(mc).await? {
                    mc.sleep(self.backoff).await;
                }
                // The body runs "in try … finally unlock".
                let result = self.locked_change(mc, add, delete, work).await;
                let unlocked = self.lock.unlock(mc).await;
                result.and(unlocked)
            }
            ArrayVariant::Cas => loop {
                match mc.gets(&self.key).await? {
                    None => {
                        let array = apply(Vec::new(), add, delete);
                        pause(mc, work).await;
                        match mc.add(&self.key, encode(&array), Exptime::NEVER).await {
                            Ok(()) => return Ok(()),
                            Err(McError::NotStored) => continue,
                            Err(e) => return Err(e),
                        }
                    }
                    Some((value, cas)) => {
                        let array = apply(decode(&value.data), add, delete);
                        pause(mc, work).await;
                        match mc.cas(&self.key, encode(&array), Exptime::NEVER, cas).await {
                            Ok(()) => return Ok(()),
                            Err(McError::Exists | McError::NotFound) => continue,
                            Err(e) => return Err(e),
                        }
                    }
                }
            },
        }
    }

    async fn locked_change(
        &self,
        mc: &impl Memcache,
        add: &[String],
        delete: &[String],
        work: Duration,
    ) -> Result<(), McError> {
        let array = mc
            .get(&self.key)
            .await?
            .map(|v| decode(&v.data))
            .unwrap_or_default();
        let array = apply(array, add, delete);
        pause(mc, work).await;
        mc.set(&self.key, encode(&array), Exptime::NEVER).await
    }
}

async fn pause(mc: &impl Memcache, work: Duration) {
    if !work.is_zero() {
        mc.sleep(work).await;
    }
}
