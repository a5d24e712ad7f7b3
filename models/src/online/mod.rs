//! Online-users counter over rotating per-minute keys (RECIPES.md §4, HL "online users
//! counter").
//!
//! Six keys `c_0..c_5`; the current key is `c_(minute % 6)`; a hit of a session not counted
//! in the last five minutes `incr`s it, and on a miss creates it with TTL six minutes; the
//! shown value is the sum of the five other keys.
//!
//! - `online/set` (as written): creates with `set`, so two first hits of a minute both
//!   miss and both write 1: a hit is lost.
//! - `online/add`: creates with `add` and `incr`s again when the add loses. The TTL is
//!   still counted from the first hit, so a key outlives its six minutes by as long as its
//!   minute's first hit came late: the first hits of its next turn land on the old key and
//!   vanish with it, and a frontend whose clock runs ahead counts on it while the others
//!   still show it (an over-count).
//! - `online/spare-key`: `add`, a seventh (spare) key in the ring and a TTL that ends in
//!   the middle of the spare minute. Beyond the seeds, for comparison.
//!
//! Invariant `online.window_exact`: every shown value equals the number of counted hits
//! in the previous `keys - 1` whole minutes, by true time. Metrics: `online.under_max`,
//! `online.over_max`, `online.under_mean`, `online.over_mean` (per read),
//! `online.wrong_reads`, `online.hits_per_minute`, and `online.design_gap` (distinct
//! sessions seen in the window minus counted hits: how far "a hit of a session not counted
//! for five minutes" is from "a session seen in the last five minutes").

mod harness;
mod recipe;

pub use harness::{OnlineParams, setup};
pub use recipe::{OnlineCounter, OnlineVariant};

/// The recipe family's name.
pub const FAMILY: &str = "online";

/// Its variants.
pub const VARIANTS: &[&str] = &["set", "add", "spare-key"];

/// Its invariants.
pub const INVARIANTS: &[&str] = &["online.window_exact"];

/// Builds an online-counter scenario's setup from its parameters.
pub fn build(
    cx: &mcsim::scenario::BuildContext<'_>,
) -> Result<mcsim::scenario::Setup, mcsim::scenario::FieldError> {
    let p = cx.params;
    let keys = p.count("keys", 6)?.max(2);
    let params = OnlineParams {
        variant: OnlineVariant::parse(cx.variant)
            .ok_or_else(|| crate::catalog::unknown_variant(cx))?,
        keys,
        minute_s: p.seconds("minute_s", 4)?.max(1),
        minutes: p.count("minutes", keys + 3)?.max(1),
        traffic: crate::arrivals::Traffic::from_params(p, 2.0)?,
        sessions: p.u64_in("sessions", 0, 0..=100_000)?,
        reads_per_minute: p.count("reads_per_minute", 4)?,
        skews: cx.skews.to_vec(),
    };
    let clients = cx.clients;
    Ok(std::rc::Rc::new(move |sim| setup(&params, clients, sim)))
}
