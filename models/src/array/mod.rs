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

mod harness;
mod recipe;
mod spec;

pub use harness::{ArrayParams, setup};
pub use recipe::{Array, ArrayVariant, apply, decode, encode};
pub use spec::{ArrayOp, ArraySpec};

/// The recipe family's name.
pub const FAMILY: &str = "array";

/// Its variants.
pub const VARIANTS: &[&str] = &["lock", "cas"];

/// Its invariants.
pub const INVARIANTS: &[&str] = &["array.no_lost_updates", "array.snapshot_reads"];

/// Builds a read-mostly array scenario's setup from its parameters.
pub fn build(
    cx: &mcsim::scenario::BuildContext<'_>,
) -> Result<mcsim::scenario::Setup, mcsim::scenario::FieldError> {
    let p = cx.params;
    let params = ArrayParams {
        variant: ArrayVariant::parse(cx.variant)
            .ok_or_else(|| crate::catalog::unknown_variant(cx))?,
        changes: p.count("changes", 2)?,
        readers: p.count("readers", 1)?,
        reads: p.count("reads", 4)?,
        read_gap: p.millis("read_gap_ms", 1)?,
        lock_timeout_s: p.seconds("lock_timeout_s", 5)?,
        backoff: p.millis("backoff_ms", 2)?,
        work: p.millis("work_ms", 0)?,
        slow: p.millis("slow_ms", 0)?,
        retries: p.count("retries", 3)?,
        think: p.millis("think_ms", 0)?,
        start: p.millis("start_ms", 0)?,
        skews: cx.skews.to_vec(),
    };
    let clients = cx.clients;
    Ok(std::rc::Rc::new(move |sim| setup(&params, clients, sim)))
}
