//! DS `MCVisitorCounter`, written against [`Memcache`]: a shadow key collects this period's
//! visits while the other key shows the previous period's count; the two swap every `T`
//! seconds of the client's own clock.

use mcsim::memcache::{Exptime, Key, McError, Memcache, Value};

/// Which visitor counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VisitorVariant {
    /// Two keys; the shadow key is created with TTL `2T` counted from its creation.
    AsWritten,
    /// Two keys; TTL `2T - now % T`, so the key dies at the end of its read period (DS's
    /// own correction).
    Aligned,
    /// One key per period, named by the period's number, TTL `3T`: keys are never
    /// reused, so no TTL has to end on a period boundary.
    WindowKey,
}

impl VisitorVariant {
    /// Parses a variant name.
    pub fn parse(name: &str) -> Option<VisitorVariant> {
        Some(match name {
            "as-written" => VisitorVariant::AsWritten,
            "aligned" => VisitorVariant::Aligned,
            "window-key" => VisitorVariant::WindowKey,
            _ => return None,
        })
    }
}

/// How an increment was counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// `incr` found the key; the new value.
    Incremented(u64),
    /// The key was missing and this call created it with `add` and this TTL.
    Created {
        /// The TTL sent with the `add`, seconds.
        ttl: u32,
    },
}

/// A visitor counter with period `T` seconds.
#[derive(Debug, Clone)]
pub struct VisitorCounter {
    name: String,
    period: u64,
    variant: VisitorVariant,
    /// The two keys the two-key variants swap between, named once.
    pair: [Key; 2],
}

impl VisitorCounter {
    /// The counter `name` with period `period_s` seconds.
    pub fn new(name: &str, period_s: u32, variant: VisitorVariant) -> VisitorCounter {
        VisitorCounter {
            name: name.to_string(),
            period: u64::from(period_s.max(1)),
            variant,
            pair: [0, 1].map(|i| Self::named(name, i)),
        }
    }

    fn named(name: &str, i: u64) -> Key {
        Key::new(format!("counter{name}_{i}")).expect("counter names are valid keys")
    }

    /// The DS `time()`: whole seconds of the client's own clock.
    fn time(mc: &impl Memcache) -> u64 {
        mc.now().secs()
    }

    /// DS `_active()`: 0 in the first half of every `2T` cycle, else 1.
    fn active(&self, now: u64) -> u64 {
        if now % (2 * self.period) < self.period {
            0
        } else {
            1
        }
    }

    /// The key with suffix `i` (a key index, or a period number for `window-key`).
    pub fn key(&self, i: u64) -> Key {
        match self.pair.get(i as usize) {
            Some(key) => key.clone(),
            None => Self::named(&self.name, i),
        }
    }

    /// The key `increment` works on at second `now`.
    pub fn shadow_key(&self, now: u64) -> Key {
        match self.variant {
            VisitorVariant::WindowKey => self.key(now / self.period),
            _ => self.key(1 - self.active(now)),
        }
    }

    /// The key `value` reads at second `now`.
    pub fn shown_key(&self, now: u64) -> Key {
        match self.variant {
            // The previous period; before the first one there is nothing to show.
            VisitorVariant::WindowKey => self.key((now / self.period).wrapping_sub(1)),
            _ => self.key(self.active(now)),
        }
    }

    /// The TTL of a shadow key created at second `now`.
    fn ttl(&self, now: u64) -> u32 {
        let t = self.period;
        let secs = match self.variant {
            VisitorVariant::AsWritten => 2 * t,
            VisitorVariant::Aligned => 2 * t - now % t,
            VisitorVariant::WindowKey => 3 * t,
        };
        secs as u32
    }

    /// Counts one visit: `incr` the shadow key; on a miss create it with `add`; if another
    /// client created it first, start over.
    pub async fn increment(&self, mc: &impl Memcache) -> Result<Counted, McError> {
        let key = self.shadow_key(Self::time(mc));
        loop {
            match mc.incr(&key, 1).await {
                Ok(n) => return Ok(Counted::Incremented(n)),
                Err(McError::NotFound) => {}
                Err(e) => return Err(e),
            }
            // DS reads the clock again here (its line 43): the aligned TTL depends on it.
            let ttl = self.ttl(Self::time(mc));
            match mc.add(&key, Value::from("1"), Exptime::secs(ttl)).await {
                Ok(()) => return Ok(Counted::Created { ttl }),
                Err(McError::NotStored) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The number of visitors of the previous period (0 when its key is missing).
    pub async fn value(&self, mc: &impl Memcache) -> Result<u64, McError> {
        let key = self.shown_key(Self::time(mc));
        Ok(mc.get(&key).await?.and_then(|v| v.as_u64()).unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_swap_every_period() {
        let c = VisitorCounter::new("v", 4, VisitorVariant::AsWritten);
        assert_eq!(c.shadow_key(0), c.key(1));
        assert_eq!(c.shown_key(0), c.key(0));
        assert_eq!(c.shadow_key(4), c.key(0));
        assert_eq!(c.shown_key(5), c.key(1));
        assert_eq!(c.shadow_key(8), c.key(1));
    }

    #[test]
    fn ttls_follow_the_variant() {
        let t = |v| VisitorCounter::new("v", 10, v).ttl(25);
        assert_eq!(t(VisitorVariant::AsWritten), 20);
        assert_eq!(t(VisitorVariant::Aligned), 15);
        assert_eq!(t(VisitorVariant::WindowKey), 30);
    }
}
