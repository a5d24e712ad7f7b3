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
//! really died minus the end of its read period, from the server's clock; per period
//! `visitor.shift_w<k>`), `visitor.wrong_reads`, `visitor.misattributed` (visits a
//! skewed frontend put in another period than the true one), `visitor.phase_ms`.

mod harness;
mod recipe;

pub use harness::{VisitorParams, setup};
pub use recipe::{Counted, VisitorCounter, VisitorVariant};

use crate::arrivals::TrafficParams;
use mcsim::prelude::*;

/// A visitor-counter scenario's `[params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// The window's length, in seconds.
    pub period_s: Seconds,
    /// Windows simulated.
    pub windows: Count,
    /// Reads of the count per window.
    pub reads_per_window: Count,
    /// When the visits come.
    #[serde(flatten)]
    pub traffic: TrafficParams,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            period_s: Seconds(4),
            windows: Count(5),
            reads_per_window: Count(8),
            traffic: TrafficParams::default(),
        }
    }
}

/// Visits a second when the file gives no `rate_per_s`.
const DEFAULT_RATE: f64 = 2.0;

impl Model for VisitorVariant {
    const NAME: &'static str = "visitor";
    const VARIANTS: &'static [(&'static str, VisitorVariant)] = &[
        ("as-written", VisitorVariant::AsWritten),
        ("aligned", VisitorVariant::Aligned),
        ("window-key", VisitorVariant::WindowKey),
    ];
    const INVARIANTS: &'static [&'static str] = &["visitor.window_exact"];
    const CLAIMS: &'static [Claim] = &[
        Claim {
            variant: "as-written",
            source: "DS MCVisitorCounter",
            says: "two shadow keys with TTL 2T: during period i+1, value() is the number of visits of period i.",
            presented_as_correct: true,
            magnitude: &["visitor.window_exact.missing", "visitor.shift_seconds"],
        },
        Claim {
            variant: "aligned",
            source: "DS MCVisitorCounter",
            says: "the correction DS gives: TTL 2T - now % T makes each key end on its period boundary, so value() is exact.",
            presented_as_correct: true,
            magnitude: &["visitor.window_exact.missing", "visitor.shift_seconds"],
        },
        Claim {
            variant: "window-key",
            source: "mcsim (beyond the seeds)",
            says: "one key per period number, TTL 3T: no key is reused, so no TTL has to end on a boundary.",
            presented_as_correct: true,
            magnitude: &["visitor.window_exact.missing"],
        },
    ];
    type Params = Params;

    fn check_params(&self, p: &Params, _: &Context) -> Result<(), FieldError> {
        p.traffic.traffic(DEFAULT_RATE).map(drop)
    }

    fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
        let params = VisitorParams {
            variant: *self,
            period_s: p.period_s.get().max(1),
            windows: p.windows.get().max(1),
            traffic: p
                .traffic
                .traffic(DEFAULT_RATE)
                .expect("checked by check_params"),
            reads_per_window: p.reads_per_window.get(),
            skews: cx.skews.clone(),
        };
        setup(&params, cx.clients, sim);
    }
}
