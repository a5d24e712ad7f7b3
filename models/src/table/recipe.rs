//! The table (DS `MCTable`), written against [`Memcache`].
//!
//! A set of strings kept twice: one marker key per member (`table_<name>_v_<member>`, so
//! `has` is one `get`) and one key holding the serialized member list
//! (`table_<name>_keys`, so `fetch` is one `get`). `add` and `delete` write both under
//! the DS lock; `has` and `fetch` take no lock.

use std::time::Duration;

use mcsim::memcache::{Exptime, Key, McError, Memcache, Value};

use crate::lock::{Lock, LockVariant};

/// Serializes the member list: members separated by single spaces (members are key
/// fragments, so they hold no whitespace).
pub fn encode_list(members: &[String]) -> Value {
    Value::from(members.join(" "))
}

/// Reads a member list back.
pub fn decode_list(data: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(data)
        .split(' ')
        .filter(|m| !m.is_empty())
        .map(str::to_string)
        .collect()
}

/// A named table.
#[derive(Debug, Clone)]
pub struct Table {
    name: String,
    list: Key,
    lock: Lock,
    backoff: Duration,
}

impl Table {
    /// The table `name`; its lock expires `lock_timeout` seconds after it is taken (DS:
    /// 5), and a writer that finds it taken waits `backoff` before trying again.
    pub fn new(name: &str, lock_timeout: u32, backoff: Duration, owner: usize) -> Table {
        let list = Key::from_parts(&[b"table_", name.as_bytes(), b"_keys"])
            .expect("table names are valid keys");
        Table {
            name: name.to_string(),
            list,
            lock: Lock::new(name, lock_timeout, LockVariant::Add, owner),
            backoff,
        }
    }

    /// The key holding the member list.
    pub fn list_key(&self) -> &Key {
        &self.list
    }

    /// The marker key of `member`; a member that cannot be part of a key (whitespace,
    /// control characters, too long) is refused.
    pub fn marker(&self, member: &str) -> Result<Key, McError> {
        if member.is_empty() || member.contains(' ') {
            return Err(McError::Client(format!("bad table member {member:?}")));
        }
        Key::new(format!("table_{}_v_{member}", self.name))
            .map_err(|e| McError::Client(format!("bad table member {member:?}: {e}")))
    }

    /// Is `member` in the table? (`get` of its marker.)
    pub async fn has(&self, mc: &impl Memcache, member: &str) -> Result<bool, McError> {
        Ok(mc.get(&self.marker(member)?).await?.is_some())
    }

    /// Every member, or — as written — nothing at all (`None`, not an empty list) when the
    /// list key is missing.
    pub async fn fetch(&self, mc: &impl Memcache) -> Result<Option<Vec<String>>, McError> {
        Ok(mc.get(&self.list).await?.map(|v| decode_list(&v.data)))
    }

    /// Adds `member`: under the lock, read the list (a miss is an empty list), add the
    /// member if absent, `set` its marker, `set` the list. `work` is the time spent
    /// between reading the list and writing.
    pub async fn add(
        &self,
        mc: &impl Memcache,
        member: &str,
        work: Duration,
    ) -> Result<(), McError> {
        let marker = self.marker(member)?;
        self.locked(mc, async {
            let mut list = self.read_list(mc).await?;
            if !list.iter().any(|m| m == member) {
                list.push(member.to_string());
            }
            pause(mc, work).await;
            mc.set(&marker, Value::from("1"), Exptime::NEVER).await?;
            mc.set(&self.list, encode_list(&list), Exptime::NEVER).await
        })
        .await
    }

    /// Deletes `member` the same way: under the lock, read the list, remove the member,
    /// `delete` its marker, `set` the list.
    pub async fn delete(
        &self,
        mc: &impl Memcache,
        member: &str,
        work: Duration,
    ) -> Result<(), McError> {
        let marker = self.marker(member)?;
        self.locked(mc, async {
            let mut list = self.read_list(mc).await?;
            list.retain(|m| m != member);
            pause(mc, work).await;
            match mc.delete(&marker).await {
                Ok(()) | Err(McError::NotFound) => {}
                Err(e) => return Err(e),
            }
            mc.set(&self.list, encode_list(&list), Exptime::NEVER).await
        })
        .await
    }

    async fn read_list(&self, mc: &impl Memcache) -> Result<Vec<String>, McError> {
        Ok(mc
            .get(&self.list)
            .await?
            .map(|v| decode_list(&v.data))
            .unwrap_or_default())
    }

    /// Spins on the lock, runs `body`, and unlocks whatever `body` returned ("try …
    /// finally").
    async fn locked(
        &self,
        mc: &impl Memcache,
        body: impl Future<Output = Result<(), McError>>,
    ) -> Result<(), McError> {
        while !self.lock.try_lock(mc).await? {
            mc.sleep(self.backoff).await;
        }
        let result = body.await;
        let unlocked = self.lock.unlock(mc).await;
        result.and(unlocked)
    }
}

async fn pause(mc: &impl Memcache, work: Duration) {
    if !work.is_zero() {
        mc.sleep(work).await;
    }
}
