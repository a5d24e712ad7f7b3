//! The herd workload: client 0 stores an invalid value (the bad value pushed), then
//! every client reads the value `reads` times, `interval` apart, repairing it from a
//! database that runs `capacity` queries at once; from `recover` on, no read may fail
//! for want of the database.

use std::cell::{Cell, RefCell};
use std::hash::Hasher;
use std::rc::Rc;
use std::time::Duration;

use mcsim::memcache::{Exptime, McError, Memcache, Value};
use mcsim::{Failure, Sim, Skew, VirtualTime};

use crate::herd::recipe::{Herd, HerdVariant, Read};
use crate::row::{Capacity, Query, Row};

/// Parameters of the herd workload.
#[derive(Debug, Clone, PartialEq)]
pub struct HerdParams {
    /// The recipe.
    pub variant: HerdVariant,
    /// The repaired value's TTL.
    pub ttl_s: u32,
    /// How long a database query takes.
    pub db_read: Duration,
    /// The database's room.
    pub capacity: Capacity,
    /// `backoff`: the first wait after a failed query.
    pub backoff: Duration,
    /// Reads per client.
    pub reads: u32,
    /// Time before each read.
    pub interval: Duration,
    /// How long after the invalid value the herd must have died out.
    pub recover: Duration,
    /// Clock skew per client.
    pub skews: Vec<Skew>,
}

/// A read begun after the herd should have died out that failed for want of the
/// database.
#[derive(Debug, Clone, Copy)]
struct LateFailure {
    client: usize,
    at: VirtualTime,
}

/// What the run measured, for the end check's metrics.
#[derive(Debug, Default)]
struct Counts {
    /// Reads that failed for want of the database.
    failed_reads: Cell<u64>,
    /// Reads that failed because the cache did not answer.
    cache_failures: Cell<u64>,
    late_failures: Cell<u64>,
    /// When the last failed read began.
    last_failure: Cell<VirtualTime>,
}

/// Registers the herd workload.
pub fn setup(p: &HerdParams, clients: usize, sim: &mut Sim) {
    let row: Rc<Row> = Rc::default();
    let late: Rc<RefCell<Option<LateFailure>>> = Rc::default();
    let counts: Rc<Counts> = Rc::default();
    let (ghost, seen) = (row.clone(), late.clone());
    sim.ghost(move |h| {
        h.write_u32(ghost.running());
        h.write_u8(u8::from(seen.borrow().is_some()));
    });
    let herd = Herd::new("config", p.variant, p.ttl_s, p.backoff);
    // The value the database holds: every repair stores it.
    row.update();
    let recover_at = VirtualTime::ZERO + p.recover;
    for c in 0..clients {
        let (row, late, counts, herd, p) = (
            row.clone(),
            late.clone(),
            counts.clone(),
            herd.clone(),
            p.clone(),
        );
        let skew = p.skews.get(c).copied().unwrap_or_default();
        sim.client(skew, move |mc| async move {
            if c == 0 {
                // A lost reply: the value may be stored or not, as the fault says.
                match mc
                    .set(herd.key(), Value::from("invalid"), Exptime::NEVER)
                    .await
                {
                    Ok(()) => mc.note("the invalid value is in the cache"),
                    Err(McError::Transport(_)) => {}
                    Err(e) => return Err(e),
                }
            }
            let db = Query::new(row, p.db_read, mc.clone()).limited(p.capacity);
            let mut reader = herd.reader();
            for _ in 0..p.reads {
                mc.sleep(p.interval).await;
                let began = mc.global_now();
                match reader.read(&mc, &db).await? {
                    Read::Hit(_) | Read::Repaired(_) => continue,
                    // Not the herd's doing: counted, not judged.
                    Read::CacheFailed => {
                        counts.cache_failures.set(counts.cache_failures.get() + 1);
                        continue;
                    }
                    Read::DatabaseFailed => {}
                }
                counts.failed_reads.set(counts.failed_reads.get() + 1);
                counts
                    .last_failure
                    .set(counts.last_failure.get().max(began));
                if began >= recover_at {
                    counts.late_failures.set(counts.late_failures.get() + 1);
                    late.borrow_mut().get_or_insert(LateFailure {
                        client: c,
                        at: began,
                    });
                }
            }
            Ok(())
        });
    }
    let (seen, queried) = (late.clone(), row.clone());
    sim.always("herd.dies_out", move || match *seen.borrow() {
        Some(l) => Err(Failure::new(format!(
            "c{}'s read at {} failed for want of the database, {} ms after the invalid value was stored: the herd still runs ({} database queries, {} failed)",
            l.client,
            l.at,
            l.at.since(VirtualTime::ZERO).as_millis(),
            queried.reads(),
            queried.errors(),
        ))
        .with("at_ms", l.at.since(VirtualTime::ZERO).as_millis() as i64)
        .with("db_errors", queried.errors() as i64)),
        None => Ok(()),
    });
    sim.at_end("herd.dies_out", move |view| {
        view.metric("herd.db_queries", row.reads() as f64);
        view.metric("herd.db_errors", row.errors() as f64);
        view.metric("herd.failed_reads", counts.failed_reads.get() as f64);
        view.metric("herd.late_failures", counts.late_failures.get() as f64);
        view.metric("herd.cache_failures", counts.cache_failures.get() as f64);
        view.metric(
            "herd.last_failure_ms",
            counts
                .last_failure
                .get()
                .since(VirtualTime::ZERO)
                .as_secs_f64()
                * 1000.0,
        );
        Ok(())
    });
}
