//! Visitor counter with two shadow keys (RECIPES.md §3, DS `MCVisitorCounter`).
//!
//! Period `T`; keys `counter<name>_0` and `_1`; `active = 0 if now % 2T < T else 1`.
//! `increment()` counts on key `1 - active` (`incr`, on a miss `add(key, 1, ttl)`, retry);
//! `value()` reads key `active`. Meant: during period `i + 1`, `value()` is the number of
//! visits of period `i`.
//!
//! - `visitor/as-written`: TTL `2T` from the key's creation. When the first visit of a
//!   period comes `s` seconds in, the key outlives its cycle by about `s` seconds, and the
//!   first visits of its next shadow period land on it and vanish with it.
//! - `visitor/aligned`: DS's correction, TTL `2T - now % T`. Exact only while the
//!   server's whole-second ticks coincide with the clients' whole seconds; with a tick
//!   phase `p` the key dies `p` too late or `1 - p` too early, and an `add` whose call
//!   crosses a second boundary gets a TTL one second too long.
//! - `visitor/window-key`: one key per period number with TTL `3T` (no key is reused, so
//!   no TTL has to end on a boundary). Beyond the seeds, for comparison.
//!
//! Periods are numbered one way everywhere (messages, numbers, metric names): period `k`
//! is virtual time `[k·T, (k+1)·T)`.
//!
//! Invariant `visitor.window_exact`: every `value()` equals the harness's count of the
//! previous period's visits by true time. Metrics (every execution): `visitor.lost` (mean
//! visitors lost per period: the period's true count minus what its key showed first),
//! `visitor.lost_w<k>` per period, `visitor.shift_seconds` (mean of when each shadow key
//! really died minus the end of its read period, from the measured tick phase; per period
//! `visitor.shift_w<k>`), `visitor.wrong_reads`, `visitor.misattributed` (visits a
//! skewed frontend put in another period than the true one), `visitor.phase_ms`.

mod harness;
mod probe;
mod recipe;

pub use harness::{VisitorParams, setup};
pub use recipe::{Counted, VisitorCounter, VisitorVariant};

/// The recipe family's name.
pub const FAMILY: &str = "visitor";

/// Its variants.
pub const VARIANTS: &[&str] = &["as-written", "aligned", "window-key"];

/// Its invariants.
pub const INVARIANTS: &[&str] = &["visitor.window_exact"];

/// Builds a visitor scenario's setup from its parameters.
pub fn build(
    cx: &mcsim::scenario::BuildContext<'_>,
) -> Result<mcsim::scenario::Setup, mcsim::scenario::FieldError> {
    let p = cx.params;
    let params = VisitorParams {
        variant: VisitorVariant::parse(cx.variant)
            .ok_or_else(|| crate::catalog::unknown_variant(cx))?,
        period_s: p.seconds("period_s", 4)?.max(1),
        windows: p.count("windows", 5)?.max(1),
        traffic: crate::arrivals::Traffic::from_params(p, 2.0)?,
        reads_per_window: p.count("reads_per_window", 8)?,
        skews: cx.skews.to_vec(),
    };
    let clients = cx.clients;
    Ok(std::rc::Rc::new(move |sim| setup(&params, clients, sim)))
}
