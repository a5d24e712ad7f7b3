//! The counter recipes, written against [`Memcache`].

use std::cell::Cell;
use std::rc::Rc;

use mcsim::memcache::{Exptime, Key, McError, Memcache, Value};

/// Which counter recipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterVariant {
    /// `incr`, on a miss `add`, retry.
    IncrAdd,
    /// `get` then `set`.
    GetSet,
    /// `incr`, on a miss `set` from the backing store.
    IncrSet,
    /// `incr`, on a miss `add` from the backing store, on `NOT_STORED` `incr` again.
    IncrAddDb,
}

impl CounterVariant {
    /// Parses a variant name.
    pub fn parse(name: &str) -> Option<CounterVariant> {
        Some(match name {
            "incr-add" => CounterVariant::IncrAdd,
            "get-set" => CounterVariant::GetSet,
            "incr-set" => CounterVariant::IncrSet,
            "incr-add-db" => CounterVariant::IncrAddDb,
            _ => return None,
        })
    }
}

/// A counter under one key. `store` is the durable backing store the view-counter variants
/// fall back on (shared by all clients; it holds the count persisted before the run).
#[derive(Debug, Clone)]
pub struct Counter {
    key: Key,
    variant: CounterVariant,
    store: Rc<Cell<u64>>,
}

impl Counter {
    /// The counter `name`.
    pub fn new(name: &str, variant: CounterVariant, store: Rc<Cell<u64>>) -> Counter {
        let key =
            Key::from_parts(&[b"counter_", name.as_bytes()]).expect("counter names are valid keys");
        Counter {
            key,
            variant,
            store,
        }
    }

    /// The key the counter lives under.
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// Adds `delta`.
    pub async fn increment(&self, mc: &impl Memcache, delta: u64) -> Result<(), McError> {
        match self.variant {
            CounterVariant::IncrAdd => loop {
                match mc.incr(&self.key, delta).await {
                    Ok(_) => return Ok(()),
                    Err(McError::NotFound) => {}
                    Err(e) => return Err(e),
                }
                match mc.add(&self.key, Value::from(delta), Exptime::NEVER).await {
                    Ok(()) => return Ok(()),
                    Err(McError::NotStored) => continue,
                    Err(e) => return Err(e),
                }
            },
            CounterVariant::GetSet => {
                let current = mc
                    .get(&self.key)
                    .await?
                    .and_then(|v| v.as_u64())
                    .unwrap_or(0);
                mc.set(&self.key, Value::from(current + delta), Exptime::NEVER)
                    .await
            }
            CounterVariant::IncrSet => match mc.incr(&self.key, delta).await {
                Ok(_) => Ok(()),
                Err(McError::NotFound) => {
                    let durable = self.store.get();
                    mc.set(&self.key, Value::from(durable + delta), Exptime::NEVER)
                        .await
                }
                Err(e) => Err(e),
            },
            CounterVariant::IncrAddDb => loop {
                match mc.incr(&self.key, delta).await {
                    Ok(_) => return Ok(()),
                    Err(McError::NotFound) => {}
                    Err(e) => return Err(e),
                }
                let durable = self.store.get();
                match mc
                    .add(&self.key, Value::from(durable + delta), Exptime::NEVER)
                    .await
                {
                    Ok(()) => return Ok(()),
                    Err(McError::NotStored) => continue,
                    Err(e) => return Err(e),
                }
            },
        }
    }

    /// The current value (`get`, 0 on a miss).
    pub async fn value(&self, mc: &impl Memcache) -> Result<u64, McError> {
        Ok(mc
            .get(&self.key)
            .await?
            .and_then(|v| v.as_u64())
            .unwrap_or(0))
    }
}
