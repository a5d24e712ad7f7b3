//! Atomic counters on memcached (RECIPES.md §2).
//!
//! - `counter/incr-add`: `incr`; on a miss `add` the delta; if that add loses a race,
//!   start over.
//! - `counter/get-set`: read, add, write back: loses increments under interleaving.
//! - `counter/incr-set`: `incr`; on a miss read the durable count from the backing store,
//!   add one, `set`: two clients that miss together lose a view.
//! - `counter/incr-add-db`: the same with `add`; when the add loses, `incr` again.
//!
//! Invariants: `counter.no_lost_increments` and `counter.no_extra_increments` (at
//! quiescence the value equals the sum of completed increments; the report says by how
//! much it is off), and `counter.linearizable` (every read agrees with some linearization
//! of the increments).

mod harness;
mod recipe;

pub use harness::{CounterParams, setup};
pub use recipe::{Counter, CounterVariant};

use mcsim::prelude::*;

/// A counter scenario's `[params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// Increments per client.
    pub increments: Count,
    /// Reads per client, spread among the increments.
    pub reads: Count,
    /// Pause between a client's operations.
    pub think_ms: Millis,
    /// Retries of an increment after a timeout.
    pub retries: Count,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            increments: Count(1),
            reads: Count(0),
            think_ms: Millis(0),
            retries: Count(3),
        }
    }
}

impl Model for CounterVariant {
    const NAME: &'static str = "counter";
    const VARIANTS: &'static [(&'static str, CounterVariant)] = &[
        ("incr-add", CounterVariant::IncrAdd),
        ("get-set", CounterVariant::GetSet),
        ("incr-set", CounterVariant::IncrSet),
        ("incr-add-db", CounterVariant::IncrAddDb),
    ];
    const INVARIANTS: &'static [&'static str] = &[
        "counter.no_lost_increments",
        "counter.no_extra_increments",
        "counter.linearizable",
    ];
    const CLAIMS: &'static [Claim] = &[
        Claim {
            variant: "incr-add",
            source: "DS MCCounter",
            says: "incr, and add the delta on a miss, retrying when the add loses, counts every increment exactly once.",
            presented_as_correct: true,
            magnitude: &[
                "counter.no_lost_increments.lost",
                "counter.no_extra_increments.extra",
            ],
        },
        Claim {
            variant: "get-set",
            source: "HL view counter",
            says: "read, add one, write back: shown as the way that loses views under concurrency.",
            presented_as_correct: false,
            magnitude: &["counter.no_lost_increments.lost"],
        },
        Claim {
            variant: "incr-set",
            source: "HL view counter",
            says: "incr, and on a miss set the durable count plus one: as first written, two clients that miss together lose a view.",
            presented_as_correct: false,
            magnitude: &["counter.no_lost_increments.lost"],
        },
        Claim {
            variant: "incr-add-db",
            source: "HL view counter",
            says: "the fix: create with add, and incr again when the add loses, so no view is lost.",
            presented_as_correct: true,
            magnitude: &[
                "counter.no_lost_increments.lost",
                "counter.no_extra_increments.extra",
            ],
        },
    ];
    type Params = Params;

    fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
        let params = CounterParams {
            variant: *self,
            increments: p.increments.get(),
            reads: p.reads.get(),
            think: p.think_ms.get(),
            retries: p.retries.get(),
            skews: cx.skews.clone(),
        };
        setup(&params, cx.clients, sim);
    }
}
