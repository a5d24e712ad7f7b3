//! The read-mostly array (RECIPES.md §6, DS `MCArray1`).
//!
//! One key `array_<name>` holds the serialized array; writers are rare, readers frequent.
//!
//! - `array/lock` (as written): `change(add, delete)` spins on the DS lock (`add` of
//!   `lock_<name>` with a 5-second timeout), `get`s the array, filters out `delete`,
//!   appends `add`, writes it back with one `set`, and unlocks (in a `finally`). `fetch`
//!   is one `get`, so readers never see a half-written array. The lock is only as good as
//!   its key: when it expires under a slow writer or is evicted while held, two writers
//!   read the same array and the second `set` erases the first writer's change.
//! - `array/cas`: the lock-free variant DS suggests: `gets`, filter, `cas` (or `add` when
//!   the key is missing), and start over on `EXISTS` / `NOT_FOUND` / `NOT_STORED`.
//!
//! A change is not idempotent: a caller that retries a change whose reply was lost (the
//! server applied it) appends its elements twice.
//!
//! Invariants:
//! - `array.no_lost_updates`: at quiescence the array equals some sequential application
//!   of the completed changes, each exactly once, respecting their real-time order (a
//!   change whose outcome stayed unknown may count once or not at all). The failure
//!   counts elements `lost`, `duplicated` and `resurrected`.
//! - `array.snapshot_reads`: every `fetch` returns the state some prefix of that sequence
//!   produced (the history of changes and fetches is linearizable).
//!
//! Metrics: `array.elements`, `array.lost`, `array.duplicated`, `array.resurrected`,
//! `array.retries` (changes retried after a timeout), `array.longest_change_ms` (the longest
//! a change took, e.g. waiting out the lock of a writer whose `add` reply was lost).

mod final_state;
mod harness;
mod recipe;
mod spec;

pub use harness::{ArrayParams, setup};
pub use recipe::{Array, ArrayVariant, apply, decode, encode};
pub use spec::{ArrayOp, ArraySpec};

use mcsim::prelude::*;

/// An array scenario's `[params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// Changes per writer.
    pub changes: Count,
    /// Clients that only read.
    pub readers: Count,
    /// Reads per reader.
    pub reads: Count,
    /// Pause between a reader's reads.
    pub read_gap_ms: Millis,
    /// The lock's TTL.
    pub lock_timeout_s: Seconds,
    /// Wait between failed lock attempts.
    pub backoff_ms: Millis,
    /// Time a writer works while holding the lock.
    pub work_ms: Millis,
    /// Extra delay of the first writer (to outlive the lock).
    pub slow_ms: Millis,
    /// Retries after a timeout.
    pub retries: Count,
    /// Pause between a writer's changes.
    pub think_ms: Millis,
    /// When the writers start.
    pub start_ms: Millis,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            changes: Count(2),
            readers: Count(1),
            reads: Count(4),
            read_gap_ms: Millis(1),
            lock_timeout_s: Seconds(5),
            backoff_ms: Millis(2),
            work_ms: Millis(0),
            slow_ms: Millis(0),
            retries: Count(3),
            think_ms: Millis(0),
            start_ms: Millis(0),
        }
    }
}

impl Model for ArrayVariant {
    const NAME: &'static str = "array";
    const VARIANTS: &'static [(&'static str, ArrayVariant)] =
        &[("lock", ArrayVariant::Lock), ("cas", ArrayVariant::Cas)];
    const INVARIANTS: &'static [&'static str] = &["array.no_lost_updates", "array.snapshot_reads"];
    const CLAIMS: &'static [Claim] = &[
        Claim {
            variant: "lock",
            source: "DS MCArray1",
            says: "changes made under the DS lock (get, filter, set) are never lost and readers see whole arrays.",
            presented_as_correct: true,
            magnitude: &[
                "array.no_lost_updates.lost",
                "array.no_lost_updates.duplicated",
            ],
        },
        Claim {
            variant: "cas",
            source: "DS MCArray1",
            says: "the lock-free variant DS suggests (gets, cas, add) loses no change.",
            presented_as_correct: true,
            magnitude: &[
                "array.no_lost_updates.lost",
                "array.no_lost_updates.duplicated",
            ],
        },
    ];
    type Params = Params;

    fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
        let params = ArrayParams {
            variant: *self,
            changes: p.changes.get(),
            readers: p.readers.get(),
            reads: p.reads.get(),
            read_gap: p.read_gap_ms.get(),
            lock_timeout_s: p.lock_timeout_s.get(),
            backoff: p.backoff_ms.get(),
            work: p.work_ms.get(),
            slow: p.slow_ms.get(),
            retries: p.retries.get(),
            think: p.think_ms.get(),
            start: p.start_ms.get(),
            skews: cx.skews.clone(),
        };
        setup(&params, cx.clients, sim);
    }
}
