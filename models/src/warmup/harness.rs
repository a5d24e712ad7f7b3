//! The warmup workload: client 0 writes the row (the database updated, the cold cluster
//! invalidated, and after the delete stream's lag the warm one), client 1 is the warm
//! cluster's own traffic (it reads the row there and fills it from the database), the
//! others read it through the cold cluster; once every write was acknowledged and both
//! clusters invalidated, each cold reader reads once more, and that read must give the
//! last version.

use std::cell::{Cell, RefCell};
use std::hash::Hasher;
use std::rc::Rc;
use std::time::Duration;

use mcsim::memcache::{McError, Memcache};
use mcsim::{Failure, Sim, Skew};

use crate::retry::attempt;
use crate::row::{Database, Query, Row};
use crate::warmup::recipe::{Source, Warmup, WarmupVariant};

/// The server of the cold cluster.
pub const COLD: usize = 0;
/// The server of the warm cluster.
pub const WARM: usize = 1;

/// The client that is the warm cluster's own traffic.
const WARM_READER: usize = 1;

/// Parameters of the warmup workload.
#[derive(Debug, Clone, PartialEq)]
pub struct WarmupParams {
    /// The recipe.
    pub variant: WarmupVariant,
    /// A filled value's TTL.
    pub ttl_s: u32,
    /// `hold-off`: how long a tombstone refuses fills.
    pub hold_off_s: u32,
    /// How long after the cold cluster's invalidation the warm one's arrives.
    pub lag: Duration,
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

/// A judged read that gave an older version than the last written.
#[derive(Debug, Clone, Copy)]
struct StaleRead {
    client: usize,
    got: u64,
    latest: u64,
    source: Source,
}

/// What the readers counted.
#[derive(Debug, Default)]
struct Counts {
    stale_reads: Cell<u64>,
    from_warm: Cell<u64>,
    refused: Cell<u64>,
}

/// Registers the warmup workload.
pub fn setup(p: &WarmupParams, clients: usize, sim: &mut Sim) {
    let row: Rc<Row> = Rc::default();
    // Every write acknowledged and both clusters invalidated: the reads begun since must
    // give the last version.
    let settled: Rc<Cell<bool>> = Rc::default();
    let stale: Rc<RefCell<Option<StaleRead>>> = Rc::default();
    let counts: Rc<Counts> = Rc::default();
    let (ghost, done, seen) = (row.clone(), settled.clone(), stale.clone());
    sim.ghost(move |h| {
        h.write_u64(ghost.version());
        h.write_u8(u8::from(done.get()));
        h.write_u8(u8::from(seen.borrow().is_some()));
    });
    let cache = Warmup::new("profile", p.variant, p.ttl_s, p.hold_off_s);
    let writer_skew = p.skews.first().copied().unwrap_or_default();
    let (written, done, writer, params) = (row.clone(), settled.clone(), cache.clone(), p.clone());
    sim.client(writer_skew, move |mc| async move {
        let (cold, warm) = (mc.on_server(COLD), mc.on_server(WARM));
        // The warm cluster holds the row; a failed warm-up leaves it to the database.
        match writer.warm_up(&warm, written.version()).await {
            Ok(()) | Err(McError::Transport(_)) => {}
            Err(e) => return Err(e),
        }
        for _ in 0..params.writes {
            mc.sleep(params.write_interval).await;
            let n = written.update();
            mc.note(format!("database row now v{n}"));
            if !attempt(params.attempts, || writer.invalidate_cold(&cold)).await? {
                // Never invalidated: the write is not acknowledged, nothing is judged.
                return Ok(());
            }
            mc.sleep(params.lag).await;
            if !attempt(params.attempts, || writer.invalidate_warm(&warm)).await? {
                return Ok(());
            }
            mc.note("the warm cluster invalidated");
        }
        done.set(true);
        mc.note("every write acknowledged, both clusters invalidated");
        Ok(())
    });
    let (warm_row, warm_cache, wp) = (row.clone(), cache.clone(), p.clone());
    let warm_skew = p.skews.get(WARM_READER).copied().unwrap_or_default();
    sim.client(warm_skew, move |mc| async move {
        let warm = mc.on_server(WARM);
        let db = Query::new(warm_row, wp.db_read, mc.clone());
        for _ in 0..wp.reads {
            mc.sleep(wp.read_interval).await;
            match warm_cache.read_warm(&warm, &db).await {
                Ok(_) | Err(McError::Transport(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    });
    for c in WARM_READER + 1..clients {
        let (row, settled, stale, counts, cache, p) = (
            row.clone(),
            settled.clone(),
            stale.clone(),
            counts.clone(),
            cache.clone(),
            p.clone(),
        );
        let skew = p.skews.get(c).copied().unwrap_or_default();
        sim.client(skew, move |mc| async move {
            let (cold, warm) = (mc.on_server(COLD), mc.on_server(WARM));
            let db = Query::new(row.clone(), p.db_read, mc.clone());
            for i in 0..=p.reads {
                let last = i == p.reads;
                mc.sleep(if last { p.settle } else { p.read_interval })
                    .await;
                // Judged if every write was acknowledged before the read began.
                let judged = last && settled.get();
                mc.remember(judged);
                let (got, source) = match cache.read(&cold, &warm, &db).await {
                    Ok(served) => {
                        if served.refused {
                            counts.refused.set(counts.refused.get() + 1);
                        }
                        (served.version, served.source)
                    }
                    // A cluster unreachable: the row from the database.
                    Err(McError::Transport(_)) => (db.read().await, Source::Database),
                    Err(e) => return Err(e),
                };
                if source == Source::Warm {
                    counts.from_warm.set(counts.from_warm.get() + 1);
                }
                let latest = row.version();
                if judged && got != latest {
                    counts.stale_reads.set(counts.stale_reads.get() + 1);
                    stale.borrow_mut().get_or_insert(StaleRead {
                        client: c,
                        got,
                        latest,
                        source,
                    });
                }
            }
            Ok(())
        });
    }
    let seen = stale.clone();
    sim.always("warmup.fresh_after_write", move || match *seen.borrow() {
        Some(s) => Err(Failure::new(format!(
            "c{} read v{} from the {} after every write was acknowledged and both clusters invalidated, the row being v{}: {} behind",
            s.client,
            s.got,
            match s.source {
                Source::Cold => "cold cluster",
                Source::Warm => "warm cluster",
                Source::Database => "database",
            },
            s.latest,
            versions(s.latest - s.got),
        ))
        .with("got", s.got as i64)
        .with("latest", s.latest as i64)
        .with("behind", (s.latest - s.got) as i64)),
        None => Ok(()),
    });
    sim.at_end("warmup.fresh_after_write", move |view| {
        let behind = stale.borrow().map_or(0, |s| s.latest - s.got);
        view.metric("warmup.stale_reads", counts.stale_reads.get() as f64);
        view.metric("warmup.versions_behind", behind as f64);
        view.metric("warmup.from_warm", counts.from_warm.get() as f64);
        view.metric("warmup.fills_refused", counts.refused.get() as f64);
        view.metric("warmup.db_reads", row.reads() as f64);
        Ok(())
    });
}

/// "1 version", "2 versions".
fn versions(n: u64) -> String {
    format!("{n} version{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_counted_in_words() {
        assert_eq!(versions(1), "1 version");
        assert_eq!(versions(3), "3 versions");
    }
}
