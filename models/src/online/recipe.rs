//! HL's online-users counter, written against [`Memcache`]: a ring of per-minute keys; a
//! unique session's hit counts on the current minute's key; the shown value is the sum of
//! the other keys.

use mcsim::memcache::{Exptime, Key, McError, Memcache, Value};

/// Which online counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnlineVariant {
    /// `incr`; on a miss `set(key, 1, N minutes)`: two first hits of a minute both miss,
    /// both `set` 1, and one hit is lost (a `set` can also wipe `incr`s made in between).
    Set,
    /// `incr`; on a miss `add(key, 1, N minutes)`; when the add loses, `incr` again.
    Add,
    /// `add` as above, one spare key in the ring (`N + 1` keys) and a TTL that ends in the
    /// middle of the spare minute: a key is always gone before it is reused and never
    /// before its last minute of being shown, whatever the tick phase.
    SpareKey,
}

impl OnlineVariant {
    /// Parses a variant name.
    pub fn parse(name: &str) -> Option<OnlineVariant> {
        Some(match name {
            "set" => OnlineVariant::Set,
            "add" => OnlineVariant::Add,
            "spare-key" => OnlineVariant::SpareKey,
            _ => return None,
        })
    }
}

/// The online counter: `keys` per-minute keys (HL: six) for minutes of `minute_s`
/// seconds; the shown value covers the `keys - 1` previous minutes.
#[derive(Debug, Clone)]
pub struct OnlineCounter {
    keys: u64,
    minute: u64,
    variant: OnlineVariant,
    /// The ring's keys, named once.
    named: Vec<Key>,
}

impl OnlineCounter {
    /// A counter over `keys` keys (at least 2) and minutes of `minute_s` seconds.
    pub fn new(keys: u32, minute_s: u32, variant: OnlineVariant) -> OnlineCounter {
        let mut c = OnlineCounter {
            keys: u64::from(keys.max(2)),
            minute: u64::from(minute_s.max(1)),
            variant,
            named: Vec::new(),
        };
        c.named = (0..c.ring()).map(Self::slot_key).collect();
        c
    }

    fn slot_key(i: u64) -> Key {
        Key::new(format!("online_c_{i}")).expect("valid key")
    }

    /// Keys in the ring.
    fn ring(&self) -> u64 {
        match self.variant {
            OnlineVariant::SpareKey => self.keys + 1,
            _ => self.keys,
        }
    }

    /// The key of slot `i`.
    pub fn key(&self, i: u64) -> Key {
        match self.named.get(i as usize) {
            Some(key) => key.clone(),
            None => Self::slot_key(i),
        }
    }

    /// The minute number of second `now`.
    fn minute_of(&self, now: u64) -> u64 {
        now / self.minute
    }

    /// The TTL of the key of minute `minute`, created at second `now`.
    fn ttl(&self, minute: u64, now: u64) -> u32 {
        let secs = match self.variant {
            // HL: "six minutes".
            OnlineVariant::Set | OnlineVariant::Add => self.keys * self.minute,
            // Dies half a minute into the spare minute of the key's own minute, however
            // late the `add` comes: a TTL counted from a later reading of the clock (the
            // `incr` that missed ended in the next minute) outlives the key's next use.
            OnlineVariant::SpareKey => {
                let death = (minute + self.keys) * self.minute + self.minute / 2;
                death.saturating_sub(now).max(1)
            }
        };
        secs as u32
    }

    /// Counts one hit of a session not counted in the last `keys - 1` minutes.
    pub async fn hit(&self, mc: &impl Memcache) -> Result<(), McError> {
        let now = mc.now().secs();
        let minute = self.minute_of(now);
        let key = self.key(minute % self.ring());
        loop {
            match mc.incr(&key, 1).await {
                Ok(_) => return Ok(()),
                Err(McError::NotFound) => {}
                Err(e) => return Err(e),
            }
            let ttl = Exptime::secs(self.ttl(minute, mc.now().secs()));
            match self.variant {
                OnlineVariant::Set => return mc.set(&key, Value::from("1"), ttl).await,
                OnlineVariant::Add | OnlineVariant::SpareKey => {
                    match mc.add(&key, Value::from("1"), ttl).await {
                        Ok(()) => return Ok(()),
                        Err(McError::NotStored) => continue,
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }

    /// The keys summed at second `now`: those of the `keys - 1` previous minutes.
    pub fn shown_keys(&self, now: u64) -> Vec<Key> {
        let m = self.minute_of(now);
        (1..self.keys)
            .filter(|back| *back <= m)
            .map(|back| self.key((m - back) % self.ring()))
            .collect()
    }

    /// The number of users online: the sum of the shown keys (missing keys count 0).
    pub async fn value(&self, mc: &impl Memcache) -> Result<u64, McError> {
        let keys = self.shown_keys(mc.now().secs());
        let got = mc.get_multi(&keys).await?;
        Ok(got.values().filter_map(|v| v.as_u64()).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_every_key_but_the_current_one() {
        let c = OnlineCounter::new(6, 60, OnlineVariant::Set);
        // Minute 4: current c_4, shown c_3 c_2 c_1 c_0 c_5.
        let shown = c.shown_keys(4 * 60 + 10);
        assert_eq!(shown.len(), 4, "minute 4 has only four minutes before it");
        let shown = c.shown_keys(10 * 60);
        let names: Vec<String> = shown.iter().map(|k| k.to_string()).collect();
        assert_eq!(
            names,
            [
                "online_c_3",
                "online_c_2",
                "online_c_1",
                "online_c_0",
                "online_c_5"
            ]
        );
    }

    #[test]
    fn the_spare_key_ring_skips_the_spare_slot() {
        let c = OnlineCounter::new(6, 60, OnlineVariant::SpareKey);
        let names: Vec<String> = c
            .shown_keys(10 * 60)
            .iter()
            .map(|k| k.to_string())
            .collect();
        assert_eq!(
            names,
            [
                "online_c_2",
                "online_c_1",
                "online_c_0",
                "online_c_6",
                "online_c_5"
            ]
        );
        assert_eq!(c.ttl(10, 10 * 60 + 20), 6 * 60 + 30 - 20);
        // The key of minute 10 added one second into minute 11 (its `incr` missed at the
        // end of minute 10) still dies in minute 16, the spare, not in 17, where its slot
        // is used again.
        assert_eq!(
            11 * 60 + 1 + u64::from(c.ttl(10, 11 * 60 + 1)),
            16 * 60 + 30
        );
    }
}
