//! The recipe: a counting semaphore with `permits` permits, two ways.

use std::time::Duration;

use mcsim::prelude::*;

/// How a client takes a permit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Semaphore {
    /// `get` the count and, below the limit, `incr` it (`add` 1 when it is missing);
    /// `decr` on release. Two clients that read the same count both get in.
    CountThenIncr,
    /// One key per permit: `add slot_i` with a TTL takes permit `i`, `delete` gives it
    /// back. `add` is atomic, so two clients never hold one slot, as long as no holder
    /// stays longer than the TTL (a pause past it lets the slot expire under its holder).
    Slots,
}

/// What a client needs to take and give back permits.
#[derive(Debug, Clone)]
pub struct Permits {
    /// The recipe.
    pub variant: Semaphore,
    /// How many clients may hold a permit at once.
    pub permits: u32,
    /// The TTL of a slot (and of the count), whole seconds.
    pub ttl_s: u32,
}

fn key(name: &str) -> Key {
    Key::new(name).expect("a short ASCII key")
}

impl Permits {
    /// Takes a permit: which one, or `None` when all are taken.
    pub async fn acquire(&self, mc: &impl Memcache) -> Result<Option<u32>, McError> {
        let ttl = Exptime::secs(self.ttl_s);
        match self.variant {
            Semaphore::CountThenIncr => {
                let count = key("sem_count");
                let held = mc.get(&count).await?.and_then(|v| v.as_u64()).unwrap_or(0);
                if held >= u64::from(self.permits) {
                    return Ok(None);
                }
                match mc.incr(&count, 1).await {
                    Ok(_) => Ok(Some(0)),
                    Err(McError::NotFound) => match mc.add(&count, "1".into(), ttl).await {
                        Ok(()) => Ok(Some(0)),
                        Err(McError::NotStored) => mc.incr(&count, 1).await.map(|_| Some(0)),
                        Err(e) => Err(e),
                    },
                    Err(e) => Err(e),
                }
            }
            Semaphore::Slots => {
                for slot in 0..self.permits {
                    match mc.add(&key(&format!("sem_{slot}")), "1".into(), ttl).await {
                        Ok(()) => return Ok(Some(slot)),
                        Err(McError::NotStored) => continue,
                        Err(e) => return Err(e),
                    }
                }
                Ok(None)
            }
        }
    }

    /// Gives permit `slot` back.
    pub async fn release(&self, mc: &impl Memcache, slot: u32) -> Result<(), McError> {
        let result = match self.variant {
            Semaphore::CountThenIncr => mc.decr(&key("sem_count"), 1).await.map(|_| ()),
            Semaphore::Slots => mc.delete(&key(&format!("sem_{slot}"))).await,
        };
        match result {
            // Expired meanwhile: nothing to give back.
            Err(McError::NotFound) => Ok(()),
            other => other,
        }
    }

    /// Takes a permit, retrying every `backoff` until one is free.
    pub async fn acquire_waiting(
        &self,
        mc: &impl Memcache,
        backoff: Duration,
    ) -> Result<u32, McError> {
        loop {
            if let Some(slot) = self.acquire(mc).await? {
                return Ok(slot);
            }
            mc.sleep(backoff).await;
        }
    }
}
