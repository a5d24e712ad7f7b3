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
//! virtual instant (ghost state the harness keeps, never read from memcached).
//!
//! Parameters: `timeout_s` (the lock's TTL, 10), `hold_ms` (50), `backoff_ms` between
//! failed attempts (10), `rounds` per client (2), `attempts` after which a client gives
//! up a round (0: never; the loom cross-check bounds it so loom's search is finite).

mod harness;
mod recipe;

pub use harness::{LockParams, setup};
pub use recipe::{Lock, LockVariant};

/// The recipe family's name.
pub const FAMILY: &str = "lock";

/// Its variants.
pub const VARIANTS: &[&str] = &["add", "get-set", "token"];

/// Its invariants.
pub const INVARIANTS: &[&str] = &["lock.exclusion"];

/// Builds a lock scenario's setup from its parameters.
pub fn build(
    cx: &mcsim::scenario::BuildContext<'_>,
) -> Result<mcsim::scenario::Setup, mcsim::scenario::FieldError> {
    let p = cx.params;
    let params = LockParams {
        variant: LockVariant::parse(cx.variant)
            .ok_or_else(|| crate::catalog::unknown_variant(cx))?,
        timeout_s: p.seconds("timeout_s", 10)?,
        hold: p.millis("hold_ms", 50)?,
        backoff: p.millis("backoff_ms", 10)?,
        rounds: p.count("rounds", 2)?,
        attempts: p.count("attempts", 0)?,
        skews: cx.skews.to_vec(),
    };
    let clients = cx.clients;
    Ok(std::rc::Rc::new(move |sim| setup(&params, clients, sim)))
}
