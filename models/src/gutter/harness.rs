//! The gutter workload: client 0 writes the row (the database updated, then the new
//! version `set` through the failover route), the others read it through the same route
//! every `read_interval`; every read begun after a write was acknowledged must give
//! that write's version or a later one, but for a gutter copy within the gutter's TTL.

use std::cell::{Cell, RefCell};
use std::hash::Hasher;
use std::rc::Rc;
use std::time::Duration;

use mcsim::memcache::{McError, Memcache};
use mcsim::{Failure, Sim, Skew, VirtualTime};

use crate::gutter::recipe::{Gutter, GutterVariant, Source};
use crate::row::{Query, Row};

/// The primary's server, as the scenario's `[servers]` counts them.
pub const PRIMARY: usize = 0;
/// The gutter's server.
pub const GUTTER: usize = 1;

/// Parameters of the gutter workload.
#[derive(Debug, Clone, PartialEq)]
pub struct GutterParams {
    /// The recipe.
    pub variant: GutterVariant,
    /// A value's TTL on the primary.
    pub ttl_s: u32,
    /// A value's TTL on the gutter.
    pub gutter_ttl_s: u32,
    /// How long a database read takes (its row is the one at the query's start).
    pub db_read: Duration,
    /// Writes of the row.
    pub writes: u32,
    /// Time before each write.
    pub write_interval: Duration,
    /// Reads per reader.
    pub reads: u32,
    /// Time before each read.
    pub read_interval: Duration,
    /// `replay`: time between a write's attempts on the primary.
    pub retry: Duration,
    /// `replay`: attempts on the primary before a write gives up.
    pub attempts: u32,
    /// Clock skew per client.
    pub skews: Vec<Skew>,
}

/// The writes acknowledged, as ghost state.
#[derive(Debug, Default)]
struct Acks {
    /// The last version acknowledged: reads begun since must give it or a later one.
    last: Cell<u64>,
    /// Every acknowledged version with the time it was acknowledged, in order.
    at: RefCell<Vec<(u64, VirtualTime)>>,
}

impl Acks {
    fn push(&self, n: u64, at: VirtualTime) {
        self.last.set(n);
        self.at.borrow_mut().push((n, at));
    }

    /// When the first version newer than `got` was acknowledged.
    fn superseded_at(&self, got: u64) -> Option<VirtualTime> {
        let at = self.at.borrow();
        at.iter().find(|(v, _)| *v > got).map(|(_, at)| *at)
    }
}

/// A read that gave a version older than one acknowledged before it began.
#[derive(Debug, Clone, Copy)]
struct StaleRead {
    client: usize,
    got: u64,
    acked: u64,
    /// How long the newer version had been acknowledged when the read began.
    stale_for: Duration,
    source: Source,
}

/// What the run measured, for the end check's metrics.
#[derive(Debug, Default)]
struct Counts {
    stale_reads: Cell<u64>,
    /// The most versions a stale read was behind.
    behind: Cell<u64>,
    /// The longest a stale read came after the version it missed was acknowledged.
    stale_for: Cell<Duration>,
    /// Reads that found the primary unreachable.
    failovers: Cell<u64>,
    /// Reads the gutter served a version older than one acknowledged, within its TTL.
    gutter_lag: Cell<u64>,
    /// Writes the primary did not take at once.
    writes_to_gutter: Cell<u64>,
    /// Attempts on the primary a write made again.
    retries: Cell<u64>,
}

/// How long after a newer version was acknowledged a gutter copy may still serve an
/// older one: the copy lives at most the gutter's TTL (memcached's clock ends a TTL
/// early, never late), and may have been filled a query's latency after the version it
/// holds was superseded (the query began before).
fn gutter_window(gutter_ttl_s: u32, db_read: Duration) -> Duration {
    Duration::from_secs(u64::from(gutter_ttl_s)) + db_read
}

/// Registers the gutter workload.
pub fn setup(p: &GutterParams, clients: usize, sim: &mut Sim) {
    let row: Rc<Row> = Rc::default();
    let acks: Rc<Acks> = Rc::default();
    let stale: Rc<RefCell<Option<StaleRead>>> = Rc::default();
    let counts: Rc<Counts> = Rc::default();
    let (ghost, acked, seen) = (row.clone(), acks.clone(), stale.clone());
    sim.ghost(move |h| {
        h.write_u64(ghost.version());
        h.write_u64(acked.last.get());
        h.write_u8(u8::from(seen.borrow().is_some()));
    });
    let cache =
        Gutter::new("profile", p.variant, p.ttl_s, p.gutter_ttl_s).retrying(p.retry, p.attempts);
    let writer_skew = p.skews.first().copied().unwrap_or_default();
    let (written, acked, writer, counted, params) = (
        row.clone(),
        acks.clone(),
        cache.clone(),
        counts.clone(),
        p.clone(),
    );
    sim.client(writer_skew, move |mc| async move {
        let (primary, gutter) = (mc.on_server(PRIMARY), mc.on_server(GUTTER));
        for _ in 0..params.writes {
            mc.sleep(params.write_interval).await;
            let n = written.update();
            mc.note(format!("database row now v{n}"));
            match writer.write(&primary, &gutter, n).await {
                Ok(w) => {
                    if w.to_gutter {
                        counted
                            .writes_to_gutter
                            .set(counted.writes_to_gutter.get() + 1);
                    }
                    counted
                        .retries
                        .set(counted.retries.get() + u64::from(w.retries));
                    acked.push(n, mc.global_now());
                    mc.note(format!("v{n} acknowledged"));
                }
                // Neither pool took it: not acknowledged, nothing is judged against it.
                Err(McError::Transport(_)) => mc.note(format!("v{n} not acknowledged")),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    });
    for c in 1..clients {
        let (row, acks, stale, counts, cache, p) = (
            row.clone(),
            acks.clone(),
            stale.clone(),
            counts.clone(),
            cache.clone(),
            p.clone(),
        );
        let skew = p.skews.get(c).copied().unwrap_or_default();
        let gutter_window = gutter_window(p.gutter_ttl_s, p.db_read);
        sim.client(skew, move |mc| async move {
            let (primary, gutter) = (mc.on_server(PRIMARY), mc.on_server(GUTTER));
            let db = Query::new(row.clone(), p.db_read, mc.clone());
            for _ in 0..p.reads {
                mc.sleep(p.read_interval).await;
                // Judged against what was acknowledged before the read began.
                let acked = acks.last.get();
                let began = mc.global_now();
                mc.remember(acked);
                let served = cache.read(&primary, &gutter, &db).await?;
                if served.failed_over {
                    counts.failovers.set(counts.failovers.get() + 1);
                }
                if served.version >= acked {
                    continue;
                }
                let stale_for = acks
                    .superseded_at(served.version)
                    .map_or(Duration::ZERO, |at| began.since(at));
                // A gutter copy may lag the primary (nothing writes the gutter while the
                // primary answers), within the gutter's TTL: the design's accepted window.
                if served.source == Source::Gutter && stale_for <= gutter_window {
                    counts.gutter_lag.set(counts.gutter_lag.get() + 1);
                    continue;
                }
                counts.stale_reads.set(counts.stale_reads.get() + 1);
                counts
                    .behind
                    .set(counts.behind.get().max(acked - served.version));
                counts.stale_for.set(counts.stale_for.get().max(stale_for));
                stale.borrow_mut().get_or_insert(StaleRead {
                    client: c,
                    got: served.version,
                    acked,
                    stale_for,
                    source: served.source,
                });
            }
            Ok(())
        });
    }
    let seen = stale.clone();
    sim.always("gutter.fresh_after_write", move || match *seen.borrow() {
        Some(s) => Err(Failure::new(format!(
            "c{} read v{} from the {} after v{} was acknowledged, {} ms before the read began: {} version{} behind",
            s.client,
            s.got,
            match s.source {
                Source::Primary => "primary",
                Source::Gutter => "gutter",
                Source::Database => "database",
            },
            s.acked,
            s.stale_for.as_millis(),
            s.acked - s.got,
            if s.acked - s.got == 1 { "" } else { "s" },
        ))
        .with("got", s.got as i64)
        .with("acked", s.acked as i64)
        .with("stale_ms", s.stale_for.as_millis() as i64)),
        None => Ok(()),
    });
    sim.at_end("gutter.fresh_after_write", move |view| {
        view.metric("gutter.stale_reads", counts.stale_reads.get() as f64);
        view.metric("gutter.versions_behind", counts.behind.get() as f64);
        view.metric(
            "gutter.stale_ms",
            counts.stale_for.get().as_secs_f64() * 1000.0,
        );
        view.metric("gutter.failovers", counts.failovers.get() as f64);
        view.metric("gutter.lagging_reads", counts.gutter_lag.get() as f64);
        view.metric(
            "gutter.writes_to_gutter",
            counts.writes_to_gutter.get() as f64,
        );
        view.metric("gutter.write_retries", counts.retries.get() as f64);
        view.metric("gutter.db_reads", row.reads() as f64);
        Ok(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_is_superseded_when_the_first_newer_one_was_acknowledged() {
        let acks = Acks::default();
        let at = |ms| VirtualTime::ZERO + Duration::from_millis(ms);
        acks.push(1, at(100));
        acks.push(3, at(300));
        assert_eq!(acks.last.get(), 3);
        // v0 was never acknowledged: superseded by v1.
        assert_eq!(acks.superseded_at(0), Some(at(100)));
        // v1 by v3 (v2 never acknowledged), not by itself.
        assert_eq!(acks.superseded_at(1), Some(at(300)));
        assert_eq!(acks.superseded_at(2), Some(at(300)));
        assert_eq!(acks.superseded_at(3), None);
    }
}
