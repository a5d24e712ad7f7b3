//! The rate limiter itself, written against [`Memcache`] as an application would.

use mcsim::prelude::*;

/// Which rate limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateLimit {
    /// As people first write it: `get` the window's count; on a miss `set` it to 1,
    /// under the limit `incr` it. The read and the write are separate calls, so two
    /// clients can both read 2 under a limit of 3 and both be admitted.
    AsWritten,
    /// `incr` the window's count and admit while the result is within the limit; on a
    /// miss `add` the count at 1, and when that `add` loses to another client's, `incr`
    /// again. A call that times out denies the request (it fails closed).
    Fixed,
}

/// What the limiter's own calls showed about the window's counter: what lets it tell an
/// overrun it caused from one memcached caused by losing the counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Evidence {
    /// Nothing: a denial after a failed call, or a blind `set`.
    None,
    /// `add` created the counter.
    Created,
    /// `incr` returned this count.
    Counted(u64),
    /// `get` read this count.
    Read(u64),
}

/// One decision of the limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// The window it fell in (the client's clock, in windows since the epoch).
    pub window: u64,
    /// Whether the request may go ahead.
    pub admitted: bool,
    /// What the calls showed.
    pub evidence: Evidence,
}

/// A rate limiter of `limit` requests per window of `window_s` seconds for one user.
#[derive(Debug, Clone)]
pub struct Limiter {
    /// The recipe.
    pub variant: RateLimit,
    /// The user it limits.
    pub user: String,
    /// Requests admitted per window.
    pub limit: u64,
    /// The window's length, seconds.
    pub window_s: u32,
}

impl Limiter {
    fn key(&self, window: u64) -> Key {
        Key::new(format!("rl:{}:{window}", self.user)).expect("a short key without spaces")
    }

    /// Asks to admit one request now.
    pub async fn admit(&self, mc: &impl Memcache) -> Result<Decision, McError> {
        let window = mc.now().secs() / u64::from(self.window_s.max(1));
        let key = self.key(window);
        // The counter outlives its window, so it never expires while still counting.
        let ttl = Exptime::secs(self.window_s.saturating_mul(2).saturating_add(1));
        let decide = |admitted, evidence| Decision {
            window,
            admitted,
            evidence,
        };
        match self.variant {
            RateLimit::AsWritten => match mc.get(&key).await? {
                None => {
                    mc.set(&key, "1".into(), ttl).await?;
                    Ok(decide(true, Evidence::None))
                }
                Some(v) => {
                    let n = v.as_u64().unwrap_or(0);
                    if n >= self.limit {
                        return Ok(decide(false, Evidence::Read(n)));
                    }
                    let counted = mc.incr(&key, 1).await?;
                    Ok(decide(true, Evidence::Counted(counted)))
                }
            },
            RateLimit::Fixed => {
                for _ in 0..3 {
                    match mc.incr(&key, 1).await {
                        Ok(n) => return Ok(decide(n <= self.limit, Evidence::Counted(n))),
                        Err(McError::NotFound) => {}
                        Err(e) => return Err(e),
                    }
                    match mc.add(&key, "1".into(), ttl).await {
                        Ok(()) => return Ok(decide(self.limit >= 1, Evidence::Created)),
                        // Another client created it first: count on it.
                        Err(McError::NotStored) => {}
                        Err(e) => return Err(e),
                    }
                }
                // The counter keeps vanishing: deny rather than guess.
                Ok(decide(false, Evidence::None))
            }
        }
    }
}
