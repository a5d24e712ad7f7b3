//! Failover to a gutter pool ("Scaling Memcache at Facebook", NSDI 2013, §3.3;
//! mcrouter's `FailoverRoute`, and its issues #105 and #202).
//!
//! Two servers: 0 is the primary pool, 1 the gutter, a small pool that takes over a key
//! while its primary cannot be reached, with a short TTL. Readers `get` from the
//! primary; when it cannot be reached they `get` from the gutter; a miss reads the
//! database and fills the pool that answered with `add`. A writer updates the row, then
//! `set`s the new version through the same route. The variants:
//!
//! - `gutter/as-written`: the failover route as mcrouter configures it by default: a
//!   `set` the primary does not take goes to the gutter, and the write is done. When the
//!   primary was cut off from the clients but kept running (a partition: the scenario's
//!   `leave`), it returns with the version it held before, and every read serves it
//!   until its TTL ends: the stale data mcrouter's users report after a failover.
//! - `gutter/replay`: the write also reaches the primary before it is acknowledged: the
//!   `set` goes to the gutter (readers meanwhile find the new version there), then to
//!   the primary again every `retry_ms`, up to `attempts` times, as mcrouter's asynclog
//!   replays what a primary missed. A write that never reaches the primary is not
//!   acknowledged.
//!
//! A primary that crashes comes back empty (`gutter-as-written-crash`): nothing old
//! returns with it, and the route as written is safe there.
//!
//! The gutter's copies lag the primary while it answers: nothing writes the gutter then.
//! A client that fails over later (its reply lost, its server cut off again) may read a
//! copy a reader filled there earlier, older than a write since acknowledged. The design
//! accepts that window and bounds it with the gutter's short TTL
//! (`gutter-replay-reply-lost`); the invariant allows it, counted as
//! `gutter.lagging_reads`, and no more.
//!
//! The workload: client 0 writes the row `writes` times, `write_interval_ms` apart; the
//! others read it `reads` times, `read_interval_ms` apart. A database read takes
//! `db_read_ms` and gives the row as the query's start found it.
//!
//! Invariant `gutter.fresh_after_write`: a read begun after a write was acknowledged
//! gives that write's version or a later one; a copy from the gutter may be older, by
//! at most the gutter's TTL and a database query (how long the newer version had been
//! acknowledged when the read began: the copy lives at most its TTL, and its fill may
//! land a query's latency after the version it holds was superseded). Metrics: `gutter.stale_reads`,
//! `gutter.versions_behind`, `gutter.stale_ms` (how long the newer version had been
//! acknowledged when a stale read began), `gutter.failovers` (reads that found the
//! primary unreachable), `gutter.lagging_reads` (gutter copies within the window),
//! `gutter.writes_to_gutter`, `gutter.write_retries`,
//! `gutter.db_reads`.

mod harness;
mod recipe;

pub use harness::{GUTTER, GutterParams, PRIMARY, setup};
pub use recipe::{Gutter, GutterVariant, Served, Source, Written};

use mcsim::prelude::*;

/// A gutter scenario's `[params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// A value's TTL on the primary.
    pub ttl_s: Seconds,
    /// A value's TTL on the gutter.
    pub gutter_ttl_s: Seconds,
    /// How long a database read takes.
    pub db_read_ms: Millis,
    /// Writes of the row.
    pub writes: Count,
    /// Time before each write.
    pub write_interval_ms: Millis,
    /// Reads per reader.
    pub reads: Count,
    /// Time before each read.
    pub read_interval_ms: Millis,
    /// `replay`: time between a write's attempts on the primary.
    pub retry_ms: Millis,
    /// `replay`: attempts on the primary before a write gives up.
    pub attempts: Count,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            ttl_s: Seconds(60),
            gutter_ttl_s: Seconds(10),
            db_read_ms: Millis(5),
            writes: Count(2),
            write_interval_ms: Millis(300),
            reads: Count(8),
            read_interval_ms: Millis(250),
            retry_ms: Millis(100),
            attempts: Count(50),
        }
    }
}

impl Model for GutterVariant {
    const NAME: &'static str = "gutter";
    const VARIANTS: &'static [(&'static str, GutterVariant)] = &[
        ("as-written", GutterVariant::AsWritten),
        ("replay", GutterVariant::Replay),
    ];
    const INVARIANTS: &'static [&'static str] = &["gutter.fresh_after_write"];
    const CLAIMS: &'static [Claim] = &[
        Claim {
            variant: "as-written",
            source: "mcrouter FailoverRoute; mcrouter issues #105 and #202",
            says: "gets and sets fail over to a gutter pool while the primary is unreachable; a primary that was only cut off returns with the values it held, and reads serve them though newer ones were written meanwhile.",
            presented_as_correct: false,
            magnitude: &["gutter.stale_ms", "gutter.versions_behind"],
        },
        Claim {
            variant: "replay",
            source: "Scaling Memcache at Facebook (NSDI 2013) §3.3; mcrouter asynclog",
            says: "a short-TTL gutter serves while the primary is away, and what the primary missed is replayed to it: no read after a write is acknowledged serves an older version, but for a gutter copy within its TTL.",
            presented_as_correct: true,
            magnitude: &["gutter.lagging_reads", "gutter.write_retries"],
        },
    ];
    type Params = Params;

    fn check_params(&self, _: &Params, cx: &Context) -> Result<(), FieldError> {
        crate::pools::check_two_servers(
            cx,
            "gutter",
            "0 the primary, 1 the gutter",
            2,
            "a writer and at least one reader",
        )
    }

    fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
        let params = GutterParams {
            variant: *self,
            ttl_s: p.ttl_s.get(),
            gutter_ttl_s: p.gutter_ttl_s.get(),
            db_read: p.db_read_ms.get(),
            writes: p.writes.get(),
            write_interval: p.write_interval_ms.get(),
            reads: p.reads.get(),
            read_interval: p.read_interval_ms.get(),
            retry: p.retry_ms.get(),
            attempts: p.attempts.get(),
            skews: cx.skews.clone(),
        };
        setup(&params, cx.clients, sim);
    }
}
