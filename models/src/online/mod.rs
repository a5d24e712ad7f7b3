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

use crate::arrivals::TrafficParams;
use mcsim::prelude::*;

/// An online-counter scenario's `[params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// Minute keys in the ring (at least 2).
    pub keys: Count,
    /// Length of a "minute", in seconds.
    pub minute_s: Seconds,
    /// Minutes simulated (default: keys + 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minutes: Option<Count>,
    /// Distinct sessions (0: every hit a new one).
    pub sessions: u64,
    /// Reads of the online count per minute.
    pub reads_per_minute: Count,
    /// When the hits come.
    #[serde(flatten)]
    pub traffic: TrafficParams,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            keys: Count(6),
            minute_s: Seconds(4),
            minutes: None,
            sessions: 0,
            reads_per_minute: Count(4),
            traffic: TrafficParams::default(),
        }
    }
}

/// Hits a second when the file gives no `rate_per_s`.
const DEFAULT_RATE: f64 = 2.0;

impl Model for OnlineVariant {
    const NAME: &'static str = "online";
    const VARIANTS: &'static [(&'static str, OnlineVariant)] = &[
        ("set", OnlineVariant::Set),
        ("add", OnlineVariant::Add),
        ("spare-key", OnlineVariant::SpareKey),
    ];
    const INVARIANTS: &'static [&'static str] = &["online.window_exact"];
    const CLAIMS: &'static [Claim] = &[
        Claim {
            variant: "set",
            source: "HL online users",
            says: "six per-minute keys, created with set: the shown sum counts the users of the last five minutes.",
            presented_as_correct: true,
            magnitude: &[
                "online.window_exact.under_max",
                "online.window_exact.over_max",
            ],
        },
        Claim {
            variant: "add",
            source: "HL online users",
            says: "the same created with add, which HL gives against the race of two first hits.",
            presented_as_correct: true,
            magnitude: &[
                "online.window_exact.under_max",
                "online.window_exact.over_max",
            ],
        },
        Claim {
            variant: "spare-key",
            source: "mcsim (beyond the seeds)",
            says: "a seventh spare key and a TTL ending inside the spare minute keep the shown sum exact.",
            presented_as_correct: true,
            magnitude: &[
                "online.window_exact.under_max",
                "online.window_exact.over_max",
            ],
        },
    ];
    type Params = Params;

    fn check_params(&self, p: &Params, _: &Context) -> Result<(), FieldError> {
        if p.sessions > 100_000 {
            return Err(FieldError::new(
                "params.sessions",
                None,
                format!("{} is out of range: must be 0 to 100000", p.sessions),
            ));
        }
        p.traffic.traffic(DEFAULT_RATE).map(drop)
    }

    fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
        let keys = p.keys.get().max(2);
        let params = OnlineParams {
            variant: *self,
            keys,
            minute_s: p.minute_s.get().max(1),
            minutes: p.minutes.map_or(keys + 3, Count::get).max(1),
            traffic: p
                .traffic
                .traffic(DEFAULT_RATE)
                .expect("checked by check_params"),
            sessions: p.sessions,
            reads_per_minute: p.reads_per_minute.get(),
            skews: cx.skews.clone(),
        };
        setup(&params, cx.clients, sim);
    }
}
