//! The lock recipes themselves, written against [`Memcache`] as the articles write them.

use mcsim::memcache::{Exptime, Key, McError, Memcache, Value};
use mcsim::protocol::MetaFlag;

/// Which lock recipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockVariant {
    /// `add` to take, `delete` to release.
    Add,
    /// `get` then `set`: not atomic.
    GetSet,
    /// `add` a token; release only the own token (`gets` + meta delete with cas).
    Token,
}

impl LockVariant {
    /// Parses a variant name.
    pub fn parse(name: &str) -> Option<LockVariant> {
        Some(match name {
            "add" => LockVariant::Add,
            "get-set" => LockVariant::GetSet,
            "token" => LockVariant::Token,
            _ => return None,
        })
    }
}

/// A named lock with a timeout (the key's TTL).
#[derive(Debug, Clone)]
pub struct Lock {
    key: Key,
    timeout: u32,
    variant: LockVariant,
    token: String,
}

impl Lock {
    /// The lock `name`, expiring `timeout` seconds after it is taken; `owner` makes the
    /// token unique for the token variant.
    pub fn new(name: &str, timeout: u32, variant: LockVariant, owner: usize) -> Lock {
        let key = Key::from_parts(&[b"lock_", name.as_bytes()]).expect("lock names are valid keys");
        Lock {
            key,
            timeout,
            variant,
            token: format!("owner{owner}"),
        }
    }

    /// The key the lock lives under.
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// Tries once to take the lock.
    pub async fn try_lock(&self, mc: &impl Memcache) -> Result<bool, McError> {
        let ttl = Exptime::secs(self.timeout);
        match self.variant {
            LockVariant::Add => match mc.add(&self.key, Value::from("1"), ttl).await {
                Ok(()) => Ok(true),
                Err(McError::NotStored) => Ok(false),
                Err(e) => Err(e),
            },
            LockVariant::GetSet => {
                if mc.get(&self.key).await?.is_some() {
                    return Ok(false);
                }
                mc.set(&self.key, Value::from("1"), ttl).await?;
                Ok(true)
            }
            LockVariant::Token => {
                match mc
                    .add(&self.key, Value::from(self.token.as_str()), ttl)
                    .await
                {
                    Ok(()) => Ok(true),
                    Err(McError::NotStored) => Ok(false),
                    Err(e) => Err(e),
                }
            }
        }
    }

    /// Releases the lock.
    pub async fn unlock(&self, mc: &impl Memcache) -> Result<(), McError> {
        match self.variant {
            LockVariant::Add | LockVariant::GetSet => match mc.delete(&self.key).await {
                Ok(()) | Err(McError::NotFound) => Ok(()),
                Err(e) => Err(e),
            },
            LockVariant::Token => {
                let Some((value, cas)) = mc.gets(&self.key).await? else {
                    return Ok(());
                };
                if value.data != self.token.as_bytes() {
                    return Ok(());
                }
                // Deletes only if nobody replaced the item since the `gets`.
                mc.md(&self.key, &[MetaFlag::with(b'C', cas.0)]).await?;
                Ok(())
            }
        }
    }
}
