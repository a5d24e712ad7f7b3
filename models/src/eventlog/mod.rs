//! Event log as a ring of keys (RECIPES.md §5, DS `MCEventLog`).
//!
//! Parameters `timeChunk` and `numChunks`. An event of time `w` goes to key
//! `w // timeChunk % numChunks` by `append`, the key being created with
//! `add(key, data, timeChunk * (numChunks - 1))`. `fetch(first, last)` clamps `last` to now
//! and `first` to `now - timeChunk * (numChunks - 1)`, multi-gets the arc of the ring,
//! decodes and keeps `first <= w <= last`. DS claims the log holds
//! `(numChunks - 1) * timeChunk` seconds and that a key is gone before its slot is reused.
//!
//! - `eventlog/as-written`: DS exactly. The TTL counts from the chunk's first event, so
//!   the chunk's last events live about one chunk less than claimed (less again by
//!   whole-second expiry); a chunk created late (sparse traffic, late events, a writer
//!   whose clock runs ahead) dies early or outlives its turn; and a chunk at the item size
//!   limit answers `NOT_STORED` to `append`, which the recipe takes for "missing": it
//!   `add`s, is refused, and retries until the chunk expires.
//! - `eventlog/chunk-keys`: keys named by the absolute chunk number (never reused), TTL
//!   `numChunks * timeChunk + 2` (the claim plus the chunk plus whole-second expiry and a
//!   second of clock skew), a full chunk spilling into up to `parts` further keys, and a
//!   refusal reported to the caller. Beyond the seeds: the fix RECIPES.md's analysis
//!   suggests (a TTL longer than the slot reuse period, made safe by not reusing slots).
//!
//! Invariants `eventlog.capacity`, `eventlog.window`, `eventlog.bytes` (see the `check` module);
//! the harness measures the retention the log really kept.

mod check;
mod codec;
mod harness;
mod recipe;

use std::time::Duration;

pub use codec::{DecodeError, Event, deserialize};
pub use harness::{EventLogParams, setup};
pub use recipe::{EventLog, EventLogVariant, Fetched, PutError};

/// The recipe family's name.
pub const FAMILY: &str = "eventlog";

/// Its variants.
pub const VARIANTS: &[&str] = &["as-written", "chunk-keys"];

/// Its invariants.
pub const INVARIANTS: &[&str] = &["eventlog.capacity", "eventlog.window", "eventlog.bytes"];

/// The largest event a scenario may ask for (64 MiB): far above any item size limit, so
/// an event the server must refuse can still be tested.
const EVENT_BYTES_MAX: u32 = 64 << 20;

/// Builds an event-log scenario's setup from its parameters.
pub fn build(
    cx: &mcsim::scenario::BuildContext<'_>,
) -> Result<mcsim::scenario::Setup, mcsim::scenario::FieldError> {
    let p = cx.params;
    let params = EventLogParams {
        variant: EventLogVariant::parse(cx.variant)
            .ok_or_else(|| crate::catalog::unknown_variant(cx))?,
        chunk_s: p.seconds("chunk_s", 2)?.max(1),
        chunks: p.count("chunks", 4)?.max(2),
        parts: p.count("parts", 4)?.max(1),
        cycles: p.count("cycles", 2)?.max(1),
        traffic: crate::arrivals::Traffic::from_params(p, 5.0)?,
        event_bytes: p.u32_in("event_bytes", 32, 0..=EVENT_BYTES_MAX)?,
        large_every: p.count("large_every", 0)?,
        large_bytes: p.u32_in("large_bytes", 0, 0..=EVENT_BYTES_MAX)?,
        late_every: p.count("late_every", 0)?,
        late: p.millis("late_ms", 0)?,
        fetch_every: p.millis("fetch_every_ms", 250)?,
        tail_reader: p.bool("tail_reader", false)?,
        put_deadline: Duration::from_millis(p.u64_in("put_deadline_ms", 250, 0..=3_600_000)?),
        skews: cx.skews.to_vec(),
    };
    let clients = cx.clients;
    Ok(std::rc::Rc::new(move |sim| setup(&params, clients, sim)))
}
