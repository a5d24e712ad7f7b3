//! Locks on memcached (RECIPES.md §1).
//!
//! - `lock/add`: `try_lock` is `add(lock_<name>, 1, timeout)`; `unlock` is `delete`.
//! - `lock/get-set`: `get`; when missing, `set` with the timeout: the check and the write
//!   are two calls, so two clients can both see the key missing.
//! - `lock/token`: an owner-token lock: `add` a unique token; unlock reads it with `gets`
//!   and deletes it only if it is still its own (meta delete with the cas it read), so an
//!   expired holder cannot remove the next holder's lock.
//!
//! Invariant `lock.exclusion`: no two clients inside the critical section at the same
//! virtual instant (ghost state the harness keeps, never read from memcached). Its
//! violation reports `held_ms`, how long the first holder had held the lock when the
//! second came in; an execution run on past the violation (`mcsim findings`) records
//! `lock.overlap_ms`, how long two or more clients were inside at once.
//!
//! Parameters: `timeout_s` (the lock's TTL, 10), `hold_ms` (50), `backoff_ms` between
//! failed attempts (10), `rounds` per client (2), `attempts` after which a client gives
//! up a round (0: never; the loom cross-check bounds it so loom's search is finite).

mod harness;
mod recipe;

pub use harness::{LockParams, setup};
pub use recipe::{Lock, LockVariant};

use mcsim::prelude::*;

/// A lock scenario's `[params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// The lock key's TTL.
    pub timeout_s: Seconds,
    /// Time spent in the critical section.
    pub hold_ms: Millis,
    /// Wait between failed attempts.
    pub backoff_ms: Millis,
    /// Critical sections each client tries to enter.
    pub rounds: Count,
    /// Failed attempts after which a client gives up a round (0: never).
    pub attempts: Count,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            timeout_s: Seconds(10),
            hold_ms: Millis(50),
            backoff_ms: Millis(10),
            rounds: Count(2),
            attempts: Count(0),
        }
    }
}

impl Model for LockVariant {
    const NAME: &'static str = "lock";
    const VARIANTS: &'static [(&'static str, LockVariant)] = &[
        ("add", LockVariant::Add),
        ("get-set", LockVariant::GetSet),
        ("token", LockVariant::Token),
    ];
    const INVARIANTS: &'static [&'static str] = &["lock.exclusion"];
    const CLAIMS: &'static [Claim] = &[
        Claim {
            variant: "add",
            source: "DS MCLock; HL locks",
            says: "add of the lock key with a timeout gives mutual exclusion, and the timeout frees the lock of a holder that died.",
            presented_as_correct: true,
            magnitude: &["lock.overlap_ms", "lock.exclusion.held_ms"],
        },
        Claim {
            variant: "get-set",
            source: "HL locks",
            says: "get the key, set it when missing: shown as the obvious but incorrect lock.",
            presented_as_correct: false,
            magnitude: &["lock.overlap_ms", "lock.exclusion.held_ms"],
        },
        Claim {
            variant: "token",
            source: "mcsim (beyond the seeds)",
            says: "an owner token added with a timeout and deleted only by its owner (meta delete with the cas read) keeps an expired holder from unlocking the next one.",
            presented_as_correct: true,
            magnitude: &["lock.overlap_ms", "lock.exclusion.held_ms"],
        },
    ];
    type Params = Params;

    fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
        let params = LockParams {
            variant: *self,
            timeout_s: p.timeout_s.get(),
            hold: p.hold_ms.get(),
            backoff: p.backoff_ms.get(),
            rounds: p.rounds.get(),
            attempts: p.attempts.get(),
            skews: cx.skews.clone(),
        };
        setup(&params, cx.clients, sim);
    }
}
