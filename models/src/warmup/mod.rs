//! A cold cluster warmed from a warm one ("Scaling Memcache at Facebook", NSDI 2013,
//! §4.3, "Cold Cluster Warmup").
//!
//! Two servers: 0 is the cold cluster (new, empty), 1 the warm one, which holds the row.
//! A client of the cold cluster reads it there; on a miss it asks the warm cluster, then
//! the database, and fills the cold cluster with `add`. A writer updates the row and
//! deletes it in its own (cold) cluster; the delete reaches the warm cluster later,
//! `lag_ms` after, as the database's delete stream delivers it. The variants:
//!
//! - `warmup/as-written`: the cold cluster invalidated with `delete`. A reader that
//!   misses between the two deletes finds the old version in the warm cluster and adds
//!   it to the cold one, where it stays until its TTL: the race the paper describes.
//! - `warmup/hold-off`: the paper's fix, a delete with a hold-off that refuses `add`s for
//!   two seconds; a refused fill after a warm hit means the row changed, and the reader
//!   reads the database instead. memcached 1.6 has no delete with a hold-off; the
//!   recipe replaces the key with an empty tombstone living `hold_off_s`, which readers
//!   take for a miss and which refuses their `add`. It holds while the delete stream's
//!   lag stays under the hold-off, as the paper says ("a theoretical possibility that
//!   deletes get delayed more than two seconds"): `warmup-hold-off-late` breaks it.
//!
//! The workload: client 0 first caches the row's version 0 in the warm cluster, then
//! writes the row `writes` times, `write_interval_ms` apart, each write acknowledged
//! once both clusters are invalidated; client 1 is the warm cluster's own traffic, which
//! reads the row there `reads` times, `read_interval_ms` apart, filling it from the
//! database on a miss; the others read it through the cold cluster as often, then once
//! more `settle_ms` later. A database read takes
//! `db_read_ms` and gives the row as the query's start found it.
//!
//! Invariant `warmup.fresh_after_write`: a read begun after every write was
//! acknowledged gives the last version. Metrics: `warmup.stale_reads`,
//! `warmup.versions_behind`, `warmup.from_warm` (reads the warm cluster served),
//! `warmup.fills_refused`, `warmup.db_reads`.

mod harness;
mod recipe;

pub use harness::{COLD, WARM, WarmupParams, setup};
pub use recipe::{Served, Source, Warmup, WarmupVariant};

use mcsim::prelude::*;

/// A warmup scenario's `[params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// A filled value's TTL.
    pub ttl_s: Seconds,
    /// `hold-off`: how long a tombstone refuses fills.
    pub hold_off_s: Seconds,
    /// How long after the cold cluster's invalidation the warm one's arrives.
    pub lag_ms: Millis,
    /// How long a database read takes.
    pub db_read_ms: Millis,
    /// Writes of the row.
    pub writes: Count,
    /// Time before each write.
    pub write_interval_ms: Millis,
    /// Reads per reader before the last one.
    pub reads: Count,
    /// Time between a reader's reads.
    pub read_interval_ms: Millis,
    /// How long a reader waits before its last read.
    pub settle_ms: Millis,
    /// Attempts of an invalidation that meets a connection error.
    pub attempts: Count,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            ttl_s: Seconds(60),
            hold_off_s: Seconds(2),
            lag_ms: Millis(500),
            db_read_ms: Millis(5),
            writes: Count(2),
            write_interval_ms: Millis(300),
            reads: Count(20),
            read_interval_ms: Millis(100),
            settle_ms: Millis(3000),
            attempts: Count(5),
        }
    }
}

impl Model for WarmupVariant {
    const NAME: &'static str = "warmup";
    const VARIANTS: &'static [(&'static str, WarmupVariant)] = &[
        ("as-written", WarmupVariant::AsWritten),
        ("hold-off", WarmupVariant::HoldOff),
    ];
    const INVARIANTS: &'static [&'static str] = &["warmup.fresh_after_write"];
    const CLAIMS: &'static [Claim] = &[
        Claim {
            variant: "as-written",
            source: "Scaling Memcache at Facebook (NSDI 2013) §4.3",
            says: "a cold cluster filled from a warm one on a miss: a reader that misses after a write's delete reached the cold cluster but before it reached the warm one copies the old value, and the cold cluster keeps it.",
            presented_as_correct: false,
            magnitude: &["warmup.versions_behind", "warmup.stale_reads"],
        },
        Claim {
            variant: "hold-off",
            source: "Scaling Memcache at Facebook (NSDI 2013) §4.3",
            says: "deletes to the cold cluster with a two-second hold-off that refuses adds, a refused add read from the database: no stale value stays, unless the delete reaches the warm cluster more than the hold-off later.",
            presented_as_correct: true,
            magnitude: &["warmup.fills_refused", "warmup.db_reads"],
        },
    ];
    type Params = Params;

    fn check_params(&self, _: &Params, cx: &Context) -> Result<(), FieldError> {
        crate::pools::check_two_servers(
            cx,
            "warmup",
            "0 the cold cluster, 1 the warm one",
            3,
            "a writer, the warm cluster's reader and at least one reader of the cold cluster",
        )
    }

    fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
        let params = WarmupParams {
            variant: *self,
            ttl_s: p.ttl_s.get(),
            hold_off_s: p.hold_off_s.get(),
            lag: p.lag_ms.get(),
            db_read: p.db_read_ms.get(),
            writes: p.writes.get(),
            write_interval: p.write_interval_ms.get(),
            reads: p.reads.get(),
            read_interval: p.read_interval_ms.get(),
            settle: p.settle_ms.get(),
            attempts: p.attempts.get(),
            skews: cx.skews.clone(),
        };
        setup(&params, cx.clients, sim);
    }
}
