//! A look-aside cache and its stale set ("Scaling Memcache at Facebook", NSDI 2013,
//! §3.2.1; memcached 1.6's meta commands).
//!
//! Readers read a database row through the cache: a hit serves the cached value; a miss
//! reads the database and fills the cache. A writer updates the row, then deletes the
//! cache key. A reader that read the row before the update and fills after the delete
//! stores the old version, and every later read serves it until its TTL ends: the stale
//! set that leases were made for. The variants:
//!
//! - `lookaside/as-written`: `get`; on a miss read the database and `set`.
//! - `lookaside/add`: the same, filling with `add` (store only if nobody filled it
//!   meanwhile): the delete came before the fill, so the old version is stored still.
//! - `lookaside/lease-cas`: a lease made of memcached's classic commands: on a miss the
//!   reader `add`s an empty placeholder (`lease_s` TTL), takes its cas unique with
//!   `gets`, reads the database and fills with `cas`. The writer's delete removes the
//!   placeholder, and a late fill finds it gone. A reader that finds a placeholder, or
//!   loses the `add`, serves the row from the database without filling (a hot miss).
//! - `lookaside/lease-meta`: the same with memcached 1.6's meta commands: `mg key v c
//!   N<lease_s>` places the placeholder on a miss and answers `W` to one reader, which
//!   fills with `ms … C<cas>`; the writer invalidates with `md`.
//!
//! A lease guards the fill, not the servers: when the row's server leaves the clients'
//! list and rejoins with what it held (`lookaside-lease-cas-node-leave`, the stale data
//! mcrouter's users meet after a failover), the writer's deletes went to the server the
//! key moved to, and the old version comes back with it. A server that restarts empty
//! (`lookaside-lease-cas-crash`) brings nothing back.
//!
//! The workload: client 0 writes the row `writes` times, `write_interval_ms` apart; the
//! others read it `reads` times, then wait `settle_ms` and read once more. A database
//! read takes `db_read_ms` and gives the row as the query's start found it.
//!
//! Invariant `lookaside.fresh_after_write`: a read begun after every write was
//! acknowledged (the row updated and its key invalidated) serves the last version. A
//! read begun earlier may serve an older one: the writer's window between the update
//! and the delete is the recipe's design. Metrics: `lookaside.stale_reads`,
//! `lookaside.versions_behind`, `lookaside.db_reads`, `lookaside.cached_behind` (the
//! versions the cached value is behind at the end), `lookaside.fills_refused` (late fills
//! a lease refused: the danger a passing lease must have met).

mod harness;
mod recipe;

pub use harness::{LookasideParams, setup};
pub use recipe::{Fill, Lookaside, LookasideVariant, Served};

use mcsim::prelude::*;

/// A look-aside scenario's `[params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// The filled value's TTL.
    pub ttl_s: Seconds,
    /// A lease placeholder's TTL.
    pub lease_s: Seconds,
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
            lease_s: Seconds(10),
            db_read_ms: Millis(5),
            writes: Count(1),
            write_interval_ms: Millis(1),
            reads: Count(1),
            read_interval_ms: Millis(1),
            settle_ms: Millis(1000),
            attempts: Count(5),
        }
    }
}

impl Model for LookasideVariant {
    const NAME: &'static str = "lookaside";
    const VARIANTS: &'static [(&'static str, LookasideVariant)] = &[
        ("as-written", LookasideVariant::AsWritten),
        ("add", LookasideVariant::Add),
        ("lease-cas", LookasideVariant::LeaseCas),
        ("lease-meta", LookasideVariant::LeaseMeta),
    ];
    const INVARIANTS: &'static [&'static str] = &["lookaside.fresh_after_write"];
    const CLAIMS: &'static [Claim] = &[
        Claim {
            variant: "as-written",
            source: "Scaling Memcache at Facebook (NSDI 2013) §3.2.1",
            says: "a look-aside cache filled with set on a miss and invalidated by delete: a fill that lands after the delete keeps an old value cached, the stale set leases prevent.",
            presented_as_correct: false,
            magnitude: &["lookaside.versions_behind", "lookaside.stale_reads"],
        },
        Claim {
            variant: "add",
            source: "memcached wiki, ProgrammingTricks (add to avoid overwriting)",
            says: "filling with add instead of set: it keeps a fill from overwriting a newer one, but not from storing an old value after the delete.",
            presented_as_correct: false,
            magnitude: &["lookaside.versions_behind", "lookaside.stale_reads"],
        },
        Claim {
            variant: "lease-cas",
            source: "Scaling Memcache at Facebook (NSDI 2013) §3.2.1",
            says: "a lease on a miss that a delete invalidates (here a placeholder placed with add and filled with cas): a late fill is refused, no stale set.",
            presented_as_correct: true,
            magnitude: &["lookaside.versions_behind", "lookaside.db_reads"],
        },
        Claim {
            variant: "lease-meta",
            source: "memcached 1.6 meta commands (mg N vivify, ms C)",
            says: "mg with N places a placeholder on a miss and hands one reader the fill; ms with its cas is refused after a delete: no stale set.",
            presented_as_correct: true,
            magnitude: &["lookaside.versions_behind", "lookaside.db_reads"],
        },
    ];
    type Params = Params;

    fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
        let params = LookasideParams {
            variant: *self,
            ttl_s: p.ttl_s.get(),
            lease_s: p.lease_s.get(),
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
