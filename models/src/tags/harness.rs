//! The tagged-cache workload: writers change the database and invalidate a tag; readers
//! read the tagged entry. The database is ghost state: it numbers its changes, and rows
//! carry the number of changes they include (`db#<n>`), so the harness knows how stale
//! every served value is.

use std::cell::RefCell;
use std::hash::Hash;
use std::rc::Rc;
use std::time::Duration;

use mcsim::memcache::{McError, Memcache};
use mcsim::{Client, Failure, Sim, Skew, VirtualTime};

use crate::tags::recipe::{Database, TaggedCache, TagsConfig};

/// Parameters of the tagged-cache workload.
#[derive(Debug, Clone, PartialEq)]
pub struct TagsParams {
    /// The recipe and its knobs.
    pub cache: TagsConfig,
    /// Number of tags on the entry (`tag_0`, `tag_1`, …).
    pub tags: u32,
    /// The first `writers` clients write; the others read.
    pub writers: usize,
    /// Changes each writer makes.
    pub invalidations: u32,
    /// Pause before each change.
    pub write_interval: Duration,
    /// Reads each reader makes.
    pub reads: u32,
    /// Pause between reads.
    pub read_interval: Duration,
    /// How long the cached query takes.
    pub rebuild: Duration,
    /// How far the replica lags behind the master (zero: no replica).
    pub replica_lag: Duration,
    /// Every client waits this long before its first operation, so that a clock running
    /// behind is not clamped at the start of virtual time (where every lagging clock would
    /// read 0 and write the same version).
    pub warmup: Duration,
    /// Clock skew per client.
    pub skews: Vec<Skew>,
}

/// The first stale read: what the failure message reports.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StaleRead {
    /// Which reader.
    pub client: usize,
    /// When the read started.
    pub started: VirtualTime,
    /// Changes included in the rows served.
    pub served: u64,
    /// Changes whose invalidation had completed when the read started.
    pub required: u64,
    /// How long before the read ended the earliest missed invalidation had completed.
    pub late: Duration,
}

/// The ghost state of one execution.
///
/// Its fingerprint ([`Hash`]) takes what decides what clients do next and the verdict:
/// when each change committed (a replica query counts them by time), which changes'
/// invalidations completed, in order (a read is judged against them), how many ended
/// unknown, and whether a read was stale yet. The counts and the first stale read's
/// details only measure, and would split states that differ only in the past.
#[derive(Debug, Default)]
pub struct Ghost {
    /// When each database change committed, in order (change `n` is index `n - 1`).
    pub changes: Vec<VirtualTime>,
    /// Completed invalidations: (changes they announce, when they completed).
    pub completed: Vec<(u64, VirtualTime)>,
    /// Invalidations that ended in a transport error (outcome unknown).
    pub unknown: u64,
    /// How far the replica lags.
    pub replica_lag: Duration,
    /// How long a query takes.
    pub rebuild: Duration,
    /// Reads served.
    pub reads: u64,
    /// Reads served from a valid entry.
    pub hits: u64,
    /// Rebuilds that read a replica.
    pub replica_reads: u64,
    /// Reads that failed with a transport error.
    pub errors: u64,
    /// Reads that served rows older than a completed invalidation.
    pub stale: u64,
    /// Largest number of missed changes in one read.
    pub max_behind: u64,
    /// Longest a read served rows after an invalidation it missed had completed.
    pub max_late: Duration,
    /// The first stale read.
    pub first: Option<StaleRead>,
}

impl std::hash::Hash for Ghost {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.changes.hash(h);
        self.completed.len().hash(h);
        self.completed.iter().for_each(|(change, _)| change.hash(h));
        (self.unknown, self.first.is_some()).hash(h);
    }
}

impl Ghost {
    /// Checks one read that started when `completed_before` invalidations had completed
    /// and served rows with `served` changes.
    pub fn judge(
        &mut self,
        client: usize,
        started: VirtualTime,
        completed_before: usize,
        served: u64,
        now: VirtualTime,
    ) {
        let missed = self.completed[..completed_before]
            .iter()
            .filter(|(n, _)| *n > served);
        let Some(required) = missed.clone().map(|(n, _)| *n).max() else {
            return;
        };
        let earliest = missed.map(|(_, t)| *t).min().unwrap_or(started);
        let late = now.since(earliest);
        self.stale += 1;
        self.max_behind = self.max_behind.max(required - served);
        self.max_late = self.max_late.max(late);
        if self.first.is_none() {
            self.first = Some(StaleRead {
                client,
                started,
                served,
                required,
                late,
            });
        }
    }
}

/// The changes included in rows (`db#<n>`).
pub fn changes_in(data: &[u8]) -> Option<u64> {
    std::str::from_utf8(data.strip_prefix(b"db#")?)
        .ok()?
        .parse()
        .ok()
}

/// One client's connection to the ghost database.
struct Db {
    mc: Client,
    ghost: Rc<RefCell<Ghost>>,
}

impl Database for Db {
    async fn query(&self, master: bool) -> Vec<u8> {
        let (n, rebuild) = {
            let mut g = self.ghost.borrow_mut();
            let now = self.mc.global_now();
            let n = if master || g.replica_lag.is_zero() {
                g.changes.len()
            } else {
                g.replica_reads += 1;
                g.changes
                    .iter()
                    .filter(|t| now.since(**t) >= g.replica_lag)
                    .count()
            };
            (n as u64, g.rebuild)
        };
        // Returned after the query's sleep: part of the client's state until then.
        self.mc.remember(n);
        let from = if master { "master" } else { "replica" };
        self.mc
            .note(format_args!("query on the {from} sees {n} changes"));
        self.mc.sleep(rebuild).await;
        format!("db#{n}").into_bytes()
    }
}

/// The name of tag `i`.
pub fn tag_name(i: u32) -> String {
    format!("tag_{i}")
}

/// Registers the workload and its invariant.
pub fn setup(p: &TagsParams, clients: usize, sim: &mut Sim) {
    let ghost = Rc::new(RefCell::new(Ghost {
        replica_lag: p.replica_lag,
        rebuild: p.rebuild,
        ..Ghost::default()
    }));
    crate::ghost::watch(sim, &ghost);
    // Readers run the same code and write nothing of their own: interchangeable. A
    // writer's index picks the tags it invalidates, so each writer stays itself.
    let writers = p.writers;
    sim.symmetric(move |c, h| (c < writers).then_some(c).hash(h));
    let tags: Vec<String> = (0..p.tags.max(1)).map(tag_name).collect();
    let cache = TaggedCache::new("posts", &tags, p.cache.clone());
    for c in 0..clients {
        let (ghost, cache, p) = (ghost.clone(), cache.clone(), p.clone());
        let skew = p.skews.get(c).copied().unwrap_or_default();
        let writer = c < p.writers;
        sim.client(skew, move |mc| async move {
            mc.sleep(p.warmup).await;
            if writer {
                write(&mc, &ghost, &cache, &p, c).await
            } else {
                read(&mc, &ghost, &cache, &p).await
            }
        });
    }
    sim.at_end("tags.no_stale_after_invalidate", move |view| {
        let g = ghost.borrow();
        view.metric("tags.reads", g.reads as f64);
        view.metric("tags.hits", g.hits as f64);
        view.metric("tags.replica_reads", g.replica_reads as f64);
        view.metric("tags.invalidations", g.completed.len() as f64);
        view.metric("tags.stale_reads", g.stale as f64);
        view.metric("tags.max_versions_behind", g.max_behind as f64);
        view.metric("tags.max_stale_ms", g.max_late.as_secs_f64() * 1000.0);
        view.metric("tags.errors", (g.errors + g.unknown) as f64);
        if let Some(s) = &g.first {
            return Err(Failure::new(format!(
                "c{} read at t={} served rows with {} changes although the invalidation of \
                 change {} had completed {:.1} ms before it returned; {} of {} reads stale",
                s.client,
                s.started,
                s.served,
                s.required,
                s.late.as_secs_f64() * 1000.0,
                g.stale,
                g.reads
            ))
            .with("stale_reads", g.stale as i64)
            .with("behind", g.max_behind as i64)
            .with("stale_ms", g.max_late.as_millis() as i64));
        }
        Ok(())
    });
}

async fn write(
    mc: &Client,
    ghost: &Rc<RefCell<Ghost>>,
    cache: &TaggedCache,
    p: &TagsParams,
    c: usize,
) -> Result<(), McError> {
    for i in 0..p.invalidations {
        // Each change starts afresh: what the writer saw of the last one is behind it.
        mc.remember_only(i);
        mc.sleep(p.write_interval).await;
        let tag = &cache.tags()[(c + i as usize) % cache.tags().len()];
        let change = {
            let mut g = ghost.borrow_mut();
            g.changes.push(mc.global_now());
            g.changes.len() as u64
        };
        mc.remember(change);
        mc.note(format_args!("commits change {change}, invalidates {tag}"));
        match cache.invalidate(mc, tag).await {
            Ok(()) => {
                let now = mc.global_now();
                ghost.borrow_mut().completed.push((change, now));
                mc.note(format_args!("invalidation of change {change} complete"));
            }
            // The page reports the error; whether the tag moved is unknown.
            Err(McError::Transport(_)) => ghost.borrow_mut().unknown += 1,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

async fn read(
    mc: &Client,
    ghost: &Rc<RefCell<Ghost>>,
    cache: &TaggedCache,
    p: &TagsParams,
) -> Result<(), McError> {
    let db = Db {
        mc: mc.clone(),
        ghost: ghost.clone(),
    };
    for i in 0..p.reads {
        let started = mc.global_now();
        let before = ghost.borrow().completed.len();
        // Each read starts afresh: it is judged against the invalidations complete when
        // it started, and nothing of the reads before it carries over.
        mc.remember_only((i, before));
        match cache.read(mc, &db).await {
            Ok(r) => {
                let now = mc.global_now();
                let mut g = ghost.borrow_mut();
                g.reads += 1;
                g.hits += u64::from(r.hit);
                if let Some(n) = changes_in(&r.data) {
                    g.judge(mc.id(), started, before, n, now);
                }
            }
            Err(McError::Transport(_)) => ghost.borrow_mut().errors += 1,
            Err(e) => return Err(e),
        }
        mc.sleep(p.read_interval).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fingerprint(g: &Ghost) -> u64 {
        use std::hash::Hasher;
        let mut h = mcsim::exec::Fingerprint::default();
        g.hash(&mut h);
        h.finish()
    }

    #[test]
    fn the_ghost_fingerprint_tells_apart_what_decides_verdicts_and_not_what_measures() {
        let base = || {
            let mut g = Ghost::default();
            g.changes.push(VirtualTime::from_millis(100));
            g.completed.push((1, VirtualTime::from_millis(150)));
            g
        };
        let b = fingerprint(&base());
        // Counts and the first stale read's details only measure.
        let mut g = base();
        (g.reads, g.hits, g.errors, g.stale) = (9, 4, 1, 2);
        g.max_late = Duration::from_millis(70);
        g.completed[0].1 = VirtualTime::from_millis(160);
        assert_eq!(fingerprint(&g), b);
        // A stale read already seen, another change, another completed invalidation, an
        // unknown outcome: each decides a verdict or what a client does next.
        let mut stale = base();
        stale.first = Some(StaleRead {
            client: 1,
            started: VirtualTime::ZERO,
            served: 0,
            required: 1,
            late: Duration::ZERO,
        });
        let mut changed = base();
        changed.changes.push(VirtualTime::from_millis(200));
        let mut completed = base();
        completed.completed.push((2, VirtualTime::from_millis(250)));
        let mut unknown = base();
        unknown.unknown = 1;
        for g in [stale, changed, completed, unknown] {
            assert_ne!(fingerprint(&g), b, "{g:?}");
        }
    }

    #[test]
    fn rows_say_how_many_changes_they_include() {
        assert_eq!(changes_in(b"db#0"), Some(0));
        assert_eq!(changes_in(b"db#12"), Some(12));
        assert_eq!(changes_in(b"rows#1"), None);
    }

    #[test]
    fn a_read_missing_a_completed_invalidation_is_stale() {
        let mut g = Ghost::default();
        g.completed.push((1, VirtualTime::from_millis(100)));
        g.completed.push((2, VirtualTime::from_millis(300)));
        // Started after both completed, served rows with one change.
        g.judge(
            3,
            VirtualTime::from_millis(400),
            2,
            1,
            VirtualTime::from_millis(450),
        );
        assert_eq!(g.stale, 1);
        assert_eq!(g.max_behind, 1);
        assert_eq!(g.max_late, Duration::from_millis(150));
        // Started before the second completed: one change is enough.
        g.judge(
            3,
            VirtualTime::from_millis(200),
            1,
            1,
            VirtualTime::from_millis(500),
        );
        assert_eq!(g.stale, 1);
        // Newer rows than required are fine.
        g.judge(
            3,
            VirtualTime::from_millis(500),
            2,
            2,
            VirtualTime::from_millis(600),
        );
        assert_eq!(g.stale, 1);
    }
}
