//! A herd that an error keeps going (Facebook's outage of 23 September 2010, "More
//! Details on Today's Outage").
//!
//! Clients read a value from the cache and repair it from the database when they find
//! it missing or invalid. The database runs `db_capacity` queries at once; a query it
//! has no room for gets no answer and fails at the client's timeout (`db_timeout_ms`),
//! as an overloaded database's clients see it. The workload starts with an invalid
//! value in the cache (the bad value pushed): every client finds it and queries at
//! once, more than the database has room for. The variants:
//!
//! - `herd/as-written`: the repair as the account describes it: a client that gets an
//!   error from the database takes it for an invalid value and deletes the key. The
//!   repairs that succeed store the value, the failed ones delete it after them (the
//!   timeout ends after the answer), and every client misses again: the herd sustains
//!   itself long after its cause is gone.
//! - `herd/backoff`: a database error leaves the key alone, and the client queries
//!   again only after a wait (`backoff_ms`) that doubles with each failure in a row (a
//!   valid value read ends the wait): the first repair stored ends the herd. A cache
//!   that does not answer is an error too, not a miss: the read fails without a query.
//! - `herd/backoff-miss-on-error`: the same backoff, with a cache that does not answer
//!   taken for a miss, as commonly written: when several clients' cache replies are
//!   lost together (a network blip), they query the database together, and the herd
//!   starts again (`herd-backoff-miss-on-error-reply-lost`).
//!
//! On a slow database that refuses at once what it has no room for
//! (`herd-backoff-fail-fast`), the waits keep the refusals to 12 where a client that
//! queries at every read is refused 60 times; its reads fail meanwhile.
//!
//! With room for every client (`db_capacity` at least the clients) no query fails and
//! the repair as written is fine: the sweep `herd-as-written-sweep` finds where the
//! database's room decides.
//!
//! Invariant `herd.dies_out`: no read begun `recover_ms` or more after the invalid value
//! was stored fails for want of the database (finds no valid value, and the database
//! fails its query or the reader waits out its backoff); a read the cache did not
//! answer fails for another reason, counted as `herd.cache_failures`. Metrics:
//! `herd.db_queries`, `herd.db_errors`, `herd.failed_reads` (for want of the database),
//! `herd.late_failures` (those after `recover_ms`), `herd.last_failure_ms` (when the
//! last of them began: how long the herd lasted), `herd.cache_failures`.

mod harness;
mod recipe;

pub use harness::{HerdParams, setup};
pub use recipe::{Herd, HerdVariant, Read, Reader};

use mcsim::prelude::*;

use crate::row::Capacity;

/// A herd scenario's `[params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// The repaired value's TTL.
    pub ttl_s: Seconds,
    /// How long a database query takes.
    pub db_read_ms: Millis,
    /// Queries the database runs at once.
    pub db_capacity: Count,
    /// How long a query the database has no room for takes to fail.
    pub db_timeout_ms: Millis,
    /// `backoff`: the first wait after a failed query.
    pub backoff_ms: Millis,
    /// Reads per client.
    pub reads: Count,
    /// Time before each read.
    pub interval_ms: Millis,
    /// How long after the invalid value the herd must have died out.
    pub recover_ms: Millis,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            ttl_s: Seconds(300),
            db_read_ms: Millis(50),
            db_capacity: Count(2),
            db_timeout_ms: Millis(200),
            backoff_ms: Millis(100),
            reads: Count(60),
            interval_ms: Millis(25),
            recover_ms: Millis(1000),
        }
    }
}

impl Model for HerdVariant {
    const NAME: &'static str = "herd";
    const VARIANTS: &'static [(&'static str, HerdVariant)] = &[
        ("as-written", HerdVariant::AsWritten),
        ("backoff", HerdVariant::Backoff),
        ("backoff-miss-on-error", HerdVariant::BackoffMissOnError),
    ];
    const INVARIANTS: &'static [&'static str] = &["herd.dies_out"];
    const CLAIMS: &'static [Claim] = &[
        Claim {
            variant: "as-written",
            source: "Facebook, More Details on Today's Outage (23 September 2010)",
            says: "clients repair an invalid cached value from the database; one that gets a database error takes it for an invalid value and deletes the key, and the queries go on after the cause is gone.",
            presented_as_correct: false,
            magnitude: &["herd.last_failure_ms", "herd.db_errors"],
        },
        Claim {
            variant: "backoff",
            source: "Facebook, More Details on Today's Outage (2010); AWS Architecture Blog, Exponential Backoff and Jitter (2015)",
            says: "a database error is not an invalid value, nor a cache error a miss: the key is left alone and the client waits longer after each failure, so the herd ends with the first repair stored.",
            presented_as_correct: true,
            magnitude: &["herd.last_failure_ms", "herd.db_queries"],
        },
        Claim {
            variant: "backoff-miss-on-error",
            source: "Facebook, More Details on Today's Outage (2010)",
            says: "backing off on database errors while a cache that does not answer is taken for a miss: clients whose cache replies are lost together query the database together, and its errors start the herd again.",
            presented_as_correct: false,
            magnitude: &["herd.late_failures", "herd.db_errors"],
        },
    ];
    type Params = Params;

    fn check_params(&self, p: &Params, _: &Context) -> Result<(), FieldError> {
        let reads_end = p.interval_ms.get() * p.reads.get();
        if p.recover_ms.get() >= reads_end {
            return Err(FieldError::new(
                "params.recover_ms",
                None,
                format!(
                    "the reads end at {} ms ({} reads {} ms apart), before the herd must have died out: nothing would be judged",
                    reads_end.as_millis(),
                    p.reads.get(),
                    p.interval_ms.get().as_millis()
                ),
            ));
        }
        Ok(())
    }

    fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
        let params = HerdParams {
            variant: *self,
            ttl_s: p.ttl_s.get(),
            db_read: p.db_read_ms.get(),
            capacity: Capacity {
                queries: p.db_capacity.get(),
                timeout: p.db_timeout_ms.get(),
            },
            backoff: p.backoff_ms.get(),
            reads: p.reads.get(),
            interval: p.interval_ms.get(),
            recover: p.recover_ms.get(),
            skews: cx.skews.clone(),
        };
        setup(&params, cx.clients, sim);
    }
}
