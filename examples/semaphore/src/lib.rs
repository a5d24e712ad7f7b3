//! A counting semaphore on memcached, and its mcsim model, in a crate of its own outside
//! mcsim's workspace: what a downstream author writes, following mcsim's README and its
//! guide (`mcsim::guide`).
//!
//! - `semaphore/count-then-incr`: `get` the count, `incr` it below the limit. Broken:
//!   two clients read the same count and both get in.
//! - `semaphore/slots`: `add` one of `permits` keys with a TTL. Holds under deaths (a
//!   dead holder's slot expires) and under pauses shorter than the TTL; a pause past the
//!   TTL lets a slot expire under its holder.
//!
//! Invariant `semaphore.within_permits`: never more than `permits` clients inside. Who is
//! inside is kept in [`mcsim::Holders`], which forgets a client that dies, so a dead
//! holder is never counted against the recipe.

mod recipe;

use std::time::Duration;

use mcsim::prelude::*;

pub use recipe::{Permits, Semaphore};

/// The workload: every client takes a permit `rounds` times, holds it `hold_ms`, gives it
/// back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Permits.
    pub permits: Count,
    /// Times each client takes a permit.
    pub rounds: Count,
    /// How long a client holds it.
    pub hold_ms: Millis,
    /// A slot's TTL, whole seconds.
    pub ttl_s: Seconds,
    /// Wait between attempts when every permit is taken.
    pub backoff_ms: Millis,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            permits: Count(2),
            rounds: Count(2),
            hold_ms: Millis(100),
            ttl_s: Seconds(2),
            backoff_ms: Millis(50),
        }
    }
}

impl Model for Semaphore {
    const NAME: &'static str = "semaphore";
    const VARIANTS: &'static [(&'static str, Semaphore)] = &[
        ("count-then-incr", Semaphore::CountThenIncr),
        ("slots", Semaphore::Slots),
    ];
    const INVARIANTS: &'static [&'static str] = &["semaphore.within_permits"];
    type Params = Params;

    fn check_params(&self, p: &Params, _: &Context) -> Result<(), FieldError> {
        if p.permits.get() == 0 {
            return Err(FieldError::new("params.permits", None, "needs at least 1"));
        }
        Ok(())
    }

    fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
        let permits = Permits {
            variant: *self,
            permits: p.permits.get(),
            ttl_s: p.ttl_s.get(),
        };
        // Who is inside; a client that dies leaves it (no false alarm from a dead holder).
        let holders = sim.holders();
        for c in 0..cx.clients {
            let (permits, holders, p) = (permits.clone(), holders.clone(), p.clone());
            sim.client(cx.skew(c), move |mc| async move {
                for _ in 0..p.rounds.get() {
                    let slot = match permits.acquire_waiting(&mc, p.backoff_ms.get()).await {
                        Ok(slot) => slot,
                        // A lost reply or a down server: this round is given up.
                        Err(McError::Transport(_)) => continue,
                        Err(e) => return Err(e),
                    };
                    holders.enter(c);
                    mc.note(format_args!("holds permit {slot}"));
                    mc.sleep(p.hold_ms.get()).await;
                    holders.leave(c);
                    match permits.release(&mc, slot).await {
                        Ok(()) | Err(McError::Transport(_)) => {}
                        Err(e) => return Err(e),
                    }
                    mc.sleep(Duration::from_millis(10)).await;
                }
                Ok(())
            });
        }
        let limit = p.permits.get() as usize;
        sim.always("semaphore.within_permits", move || {
            let inside = holders.clients();
            if inside.len() > limit {
                Err(Failure::new(format!(
                    "{} clients hold {limit} permits: {inside:?}",
                    inside.len()
                ))
                .with("inside", inside.len() as i64))
            } else {
                Ok(())
            }
        });
    }
}
