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
mod record;

pub use codec::{DecodeError, Event, deserialize};
pub use harness::{EventLogParams, setup};
pub use recipe::{EventLog, EventLogVariant, Fetched, PutError};

use crate::arrivals::TrafficParams;
use mcsim::prelude::*;

/// The largest event a scenario may ask for (64 MiB): far above any item size limit, so
/// an event the server must refuse can still be tested.
const EVENT_BYTES_MAX: u32 = 64 << 20;

/// An event-log scenario's `[params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// Length of a chunk, in seconds.
    pub chunk_s: Seconds,
    /// Chunks in the window (at least 2).
    pub chunks: Count,
    /// Parts of a chunk key (`chunk-keys`).
    pub parts: Count,
    /// Times the window is filled.
    pub cycles: Count,
    /// Bytes of an event.
    pub event_bytes: u32,
    /// Every this many events one is large (0: none).
    pub large_every: Count,
    /// Bytes of a large event.
    pub large_bytes: u32,
    /// Every this many events one comes late (0: none).
    pub late_every: Count,
    /// How late.
    pub late_ms: Millis,
    /// Time between a reader's fetches.
    pub fetch_every_ms: Millis,
    /// A client that only reads the tail.
    pub tail_reader: bool,
    /// How long a put may take before the writer gives it up (at most an hour).
    pub put_deadline_ms: Millis,
    /// When the events come.
    #[serde(flatten)]
    pub traffic: TrafficParams,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            chunk_s: Seconds(2),
            chunks: Count(4),
            parts: Count(4),
            cycles: Count(2),
            event_bytes: 32,
            large_every: Count(0),
            large_bytes: 0,
            late_every: Count(0),
            late_ms: Millis(0),
            fetch_every_ms: Millis(250),
            tail_reader: false,
            put_deadline_ms: Millis(250),
            traffic: TrafficParams::default(),
        }
    }
}

/// Events a second when the file gives no `rate_per_s`.
const DEFAULT_RATE: f64 = 5.0;

impl Model for EventLogVariant {
    const NAME: &'static str = "eventlog";
    const VARIANTS: &'static [(&'static str, EventLogVariant)] = &[
        ("as-written", EventLogVariant::AsWritten),
        ("chunk-keys", EventLogVariant::ChunkKeys),
    ];
    const INVARIANTS: &'static [&'static str] =
        &["eventlog.capacity", "eventlog.window", "eventlog.bytes"];
    const CLAIMS: &'static [Claim] = &[
        Claim {
            variant: "as-written",
            source: "DS MCEventLog",
            says: "a ring of numChunks keys holds (numChunks - 1) x timeChunk seconds of events, and a key is gone before its slot is reused.",
            presented_as_correct: true,
            magnitude: &[
                "eventlog.capacity.events_missed",
                "eventlog.retention_measured_s",
            ],
        },
        Claim {
            variant: "chunk-keys",
            source: "mcsim (beyond the seeds)",
            says: "keys named by absolute chunk number with a TTL one chunk longer, spilling a full chunk into further keys, keep every event of the claimed window.",
            presented_as_correct: true,
            magnitude: &[
                "eventlog.capacity.events_missed",
                "eventlog.retention_measured_s",
            ],
        },
    ];
    type Params = Params;

    fn check_params(&self, p: &Params, _: &Context) -> Result<(), FieldError> {
        for (name, n) in [
            ("event_bytes", p.event_bytes),
            ("large_bytes", p.large_bytes),
        ] {
            if n > EVENT_BYTES_MAX {
                return Err(FieldError::new(
                    format!("params.{name}"),
                    None,
                    format!("{n} is out of range: must be 0 to {EVENT_BYTES_MAX}"),
                ));
            }
        }
        if p.put_deadline_ms.0 > 3_600_000 {
            return Err(FieldError::new(
                "params.put_deadline_ms",
                None,
                format!(
                    "{} is out of range: must be 0 to 3600000",
                    p.put_deadline_ms.0
                ),
            ));
        }
        p.traffic.traffic(DEFAULT_RATE).map(drop)
    }

    fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
        let params = EventLogParams {
            variant: *self,
            chunk_s: p.chunk_s.get().max(1),
            chunks: p.chunks.get().max(2),
            parts: p.parts.get().max(1),
            cycles: p.cycles.get().max(1),
            traffic: p
                .traffic
                .traffic(DEFAULT_RATE)
                .expect("checked by check_params"),
            event_bytes: p.event_bytes,
            large_every: p.large_every.get(),
            large_bytes: p.large_bytes,
            late_every: p.late_every.get(),
            late: p.late_ms.get(),
            fetch_every: p.fetch_every_ms.get(),
            tail_reader: p.tail_reader,
            put_deadline: p.put_deadline_ms.get(),
            skews: cx.skews.clone(),
        };
        setup(&params, cx.clients, sim);
    }
}
