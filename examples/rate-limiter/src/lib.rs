//! A fixed-window rate limiter on memcached, and its mcsim model: a recipe mcsim does not
//! ship, tested from outside mcsim through its public API only.
//!
//! - `ratelimit/as-written`: `get` the count; on a miss `set` 1, under the limit `incr`.
//!   Two clients that read the same count are both admitted: it overruns the limit.
//! - `ratelimit/fixed`: `incr`; on a miss `add` 1; when the `add` loses, `incr` again.
//!
//! Invariant `ratelimit.within_limit`: no window admits more than `limit` requests unless
//! the limiter's own calls saw its counter lost (evicted, or a server restarted): two
//! `add`s created it, or `incr` gave the same count twice. Memcached may lose a counter;
//! a limiter that cannot tell when it did is the bug.
//!
//! `cargo run -p rate-limiter -- check examples/rate-limiter/scenarios` runs the scenario
//! files through the whole mcsim command line; `tests/limiter.rs` checks both variants
//! from `#[test]`s.

mod model;
mod recipe;

pub use model::Params;
pub use recipe::{Decision, Evidence, Limiter, RateLimit};

/// The families this crate adds, for `mcsim_cli::main`.
pub static FAMILIES: &[&dyn mcsim::model::Family] = &[mcsim::model::family::<RateLimit>()];

#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
