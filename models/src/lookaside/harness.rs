//! The look-aside workload: client 0 writes the row (the database updated, then the
//! cache key invalidated), the others read it through the cache; once every write was
//! acknowledged each reader reads once more, and that read must give the last version
//! written.

use std::cell::{Cell, RefCell};
use std::hash::Hasher;
use std::rc::Rc;
use std::time::Duration;

use mcsim::memcache::{McError, Memcache};
use mcsim::{Failure, Sim, Skew};

use crate::lookaside::recipe::{Fill, Lookaside, LookasideVariant};
use crate::retry::attempt;
use crate::row::{Database, Query, Row, version_of};

/// Parameters of the look-aside workload.
#[derive(Debug, Clone, PartialEq)]
pub struct LookasideParams {
    /// The recipe.
    pub variant: LookasideVariant,
    /// The filled value's TTL.
    pub ttl_s: u32,
    /// A lease placeholder's TTL.
    pub lease_s: u32,
    /// How long a database read takes (its row is the one at the query's start).
    pub db_read: Duration,
    /// Writes of the row.
    pub writes: u32,
    /// Time before each write.
    pub write_interval: Duration,
    /// Reads per reader before the last one.
    pub reads: u32,
    /// Time between a reader's reads.
    pub read_interval: Duration,
    /// How long a reader waits before its last read.
    pub settle: Duration,
    /// Attempts of an invalidation that meets a connection error.
    pub attempts: u32,
    /// Clock skew per client.
    pub skews: Vec<Skew>,
}

/// A read begun after the last write that gave an older version.
#[derive(Debug, Clone, Copy)]
struct StaleRead {
    client: usize,
    got: u64,
    latest: u64,
}

/// Registers the look-aside workload.
pub fn setup(p: &LookasideParams, clients: usize, sim: &mut Sim) {
    let row: Rc<Row> = Rc::default();
    // Every write acknowledged (the row updated and the key invalidated): the reads
    // begun since must give the last version.
    let settled: Rc<Cell<bool>> = Rc::default();
    let stale: Rc<RefCell<Option<StaleRead>>> = Rc::default();
    let stale_reads: Rc<Cell<u64>> = Rc::default();
    // Fills refused: the item was filled, replaced or deleted since the reader's miss.
    let refused: Rc<Cell<u64>> = Rc::default();
    let (ghost, done, seen) = (row.clone(), settled.clone(), stale.clone());
    sim.ghost(move |h| {
        h.write_u64(ghost.version());
        h.write_u8(u8::from(done.get()));
        h.write_u8(u8::from(seen.borrow().is_some()));
    });
    let cache = Lookaside::new("profile", p.variant, p.ttl_s, p.lease_s);
    let writer_skew = p.skews.first().copied().unwrap_or_default();
    let (written, done, writer, params) = (row.clone(), settled.clone(), cache.clone(), p.clone());
    sim.client(writer_skew, move |mc| async move {
        for _ in 0..params.writes {
            mc.sleep(params.write_interval).await;
            let n = written.update();
            mc.note(format!("database row now v{n}"));
            if !attempt(params.attempts, || writer.invalidate(&mc)).await? {
                // Never invalidated: the write is not acknowledged, nothing is judged.
                return Ok(());
            }
        }
        done.set(true);
        mc.note("every write acknowledged");
        Ok(())
    });
    for c in 1..clients {
        let (row, settled, stale, stale_reads, refused, cache, p) = (
            row.clone(),
            settled.clone(),
            stale.clone(),
            stale_reads.clone(),
            refused.clone(),
            cache.clone(),
            p.clone(),
        );
        let skew = p.skews.get(c).copied().unwrap_or_default();
        sim.client(skew, move |mc| async move {
            let db = Query::new(row.clone(), p.db_read, mc.clone());
            for i in 0..=p.reads {
                let last = i == p.reads;
                mc.sleep(if last { p.settle } else { p.read_interval })
                    .await;
                // Judged if every write was acknowledged before the read began.
                let judged = last && settled.get();
                mc.remember(judged);
                let got = match cache.read(&mc, &db).await {
                    Ok(served) => {
                        if served.fill == Fill::Refused {
                            refused.set(refused.get() + 1);
                        }
                        served.version
                    }
                    // The cache unreachable: the row from the database.
                    Err(McError::Transport(_)) => db.read().await,
                    Err(e) => return Err(e),
                };
                let latest = row.version();
                if judged && got != latest {
                    stale_reads.set(stale_reads.get() + 1);
                    stale.borrow_mut().get_or_insert(StaleRead {
                        client: c,
                        got,
                        latest,
                    });
                }
            }
            Ok(())
        });
    }
    let seen = stale.clone();
    sim.always("lookaside.fresh_after_write", move || match *seen.borrow() {
        Some(s) => Err(Failure::new(format!(
            "c{} read v{} after every write was acknowledged, the row being v{}: {} version{} behind",
            s.client,
            s.got,
            s.latest,
            s.latest - s.got,
            if s.latest - s.got == 1 { "" } else { "s" },
        ))
        .with("got", s.got as i64)
        .with("latest", s.latest as i64)
        .with("behind", (s.latest - s.got) as i64)),
        None => Ok(()),
    });
    let key = cache.key().clone();
    sim.at_end("lookaside.fresh_after_write", move |view| {
        let cached = view.peek(&key).and_then(|v| version_of(&v.data));
        let behind = stale.borrow().map_or(0, |s| s.latest - s.got);
        view.metric("lookaside.stale_reads", stale_reads.get() as f64);
        view.metric("lookaside.versions_behind", behind as f64);
        view.metric("lookaside.db_reads", row.reads() as f64);
        view.metric("lookaside.fills_refused", refused.get() as f64);
        view.metric(
            "lookaside.cached_behind",
            cached.map_or(0, |n| row.version().saturating_sub(n)) as f64,
        );
        Ok(())
    });
}
