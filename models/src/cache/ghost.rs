//! What the harness knows and memcached does not: the backend (a query that takes a while,
//! with a count of who is running it), HL's debugging strip of every cache key, and what
//! the pages were served.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::time::Duration;

use mcsim::memcache::{Key, Memcache};
use mcsim::trace::fnv1a;
use mcsim::{Client, VirtualTime};

use crate::arrivals::{hash3, unit};
use crate::cache::recipe::{Answer, Backend, Chance, Event, Strip};

/// Two or more rebuilds of one key running at once: the first time it happened.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Overlap {
    /// The cache key.
    pub key: String,
    /// When the last of them started.
    pub at: VirtualTime,
    /// Who was rebuilding.
    pub clients: Vec<usize>,
}

/// The shared ghost state of one execution.
///
/// Its fingerprint ([`Hash`]) takes what decides what clients do next and the verdict:
/// how many queries of each key are running (who runs them is each client's own part,
/// [`Ghost::running_for`], so that the clients stay interchangeable), how many queries
/// ever started (the next one's serial is in the rows it returns), whether rebuilds
/// overlapped yet, and how many clients still run. The strips, counts, waits and ages
/// only measure, and would split states that differ only in the past.
#[derive(Debug, Default)]
pub struct Ghost {
    /// How long one backend query takes.
    pub rebuild: Duration,
    /// Who is querying the backend now, per key.
    pub running: BTreeMap<String, BTreeSet<usize>>,
    /// When each query started, by serial number (the serial is in the rows it returns).
    pub builds: Vec<VirtualTime>,
    /// Queries per key.
    pub queries: BTreeMap<String, u64>,
    /// Most queries of one key ever running at once.
    pub max_concurrent: usize,
    /// The first overlap of rebuilds.
    pub overlap: Option<Overlap>,
    /// HL's strip per key.
    pub strips: BTreeMap<String, String>,
    /// Keys seen missing or stale since their last write (an expiry in progress).
    pub expiring: BTreeSet<String>,
    /// Expiries per key: a miss or stale read after a write (or the first one).
    pub expiries: BTreeMap<String, u64>,
    /// Requests answered, per kind of answer.
    pub fresh: u64,
    /// Stale values served.
    pub stale: u64,
    /// Requests answered with nothing.
    pub empty: u64,
    /// Requests that failed with a transport error.
    pub errors: u64,
    /// The longest a request waited for its answer.
    pub longest_wait: Duration,
    /// The oldest rows served: time since their query started.
    pub oldest: Duration,
    /// Clients still running.
    pub live: usize,
}

impl std::hash::Hash for Ghost {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        for (key, running) in &self.running {
            (key, running.len()).hash(h);
        }
        let started = self.builds.len();
        (self.rebuild, started, self.overlap.is_some(), self.live).hash(h);
    }
}

impl Ghost {
    /// Feeds client `c`'s part of the ghost state: the keys it is querying the backend
    /// for.
    pub fn running_for(&self, c: usize, h: &mut impl std::hash::Hasher) {
        use std::hash::Hash;
        for (key, running) in &self.running {
            if running.contains(&c) {
                key.hash(h);
            }
        }
    }

    /// Records a served answer.
    pub fn served(&mut self, answer: &Answer, waited: Duration, now: VirtualTime) {
        self.longest_wait = self.longest_wait.max(waited);
        let data = match answer {
            Answer::Fresh(d) => {
                self.fresh += 1;
                d
            }
            Answer::Stale(d) => {
                self.stale += 1;
                d
            }
            Answer::Nothing => {
                self.empty += 1;
                return;
            }
        };
        if let Some(built) = serial(data).and_then(|s| self.builds.get(s)) {
            self.oldest = self.oldest.max(now.since(*built));
        }
    }

    /// The rows of a value built before the run (a warm cache) at `now`: a build, not a
    /// query.
    pub fn warm_rows(&mut self, now: VirtualTime) -> Vec<u8> {
        let serial = self.builds.len();
        self.builds.push(now);
        format!("rows#{serial}").into_bytes()
    }

    /// Total backend queries.
    pub fn total_queries(&self) -> u64 {
        self.queries.values().sum()
    }

    /// Total expiries.
    pub fn total_expiries(&self) -> u64 {
        self.expiries.values().sum()
    }

    /// How many times `letter` occurs over all strips.
    pub fn letters(&self, letter: char) -> usize {
        self.strips
            .values()
            .map(|s| s.chars().filter(|c| *c == letter).count())
            .sum()
    }

    /// Every strip as `key: LETTERS`, each cut to `max` letters.
    pub fn strips_text(&self, max: usize) -> String {
        self.strips
            .iter()
            .map(|(k, s)| {
                if s.chars().count() > max {
                    let head: String = s.chars().take(max).collect();
                    format!("{k}: {head}…")
                } else {
                    format!("{k}: {s}")
                }
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// The serial number in rows the backend returned (`rows#<serial>`).
pub fn serial(data: &[u8]) -> Option<usize> {
    std::str::from_utf8(data.strip_prefix(b"rows#")?)
        .ok()?
        .parse()
        .ok()
}

/// One client's view of the world around the recipe: the backend it queries and the strip
/// it writes, both kept in the ghost state and echoed into the trace.
#[derive(Clone)]
pub struct Frontend {
    /// The client.
    pub mc: Client,
    /// The shared ghost state.
    pub ghost: Rc<RefCell<Ghost>>,
}

impl Backend for Frontend {
    async fn query(&self, key: &Key) -> Vec<u8> {
        let c = self.mc.id();
        let name = key.to_string();
        let (serial, rebuild, running) = {
            let mut g = self.ghost.borrow_mut();
            let serial = g.builds.len();
            g.builds.push(self.mc.global_now());
            *g.queries.entry(name.clone()).or_insert(0) += 1;
            let running = g.running.entry(name.clone()).or_default();
            running.insert(c);
            let running: Vec<usize> = running.iter().copied().collect();
            g.max_concurrent = g.max_concurrent.max(running.len());
            if running.len() > 1 && g.overlap.is_none() {
                g.overlap = Some(Overlap {
                    key: name.clone(),
                    at: self.mc.global_now(),
                    clients: running.clone(),
                });
            }
            (serial, g.rebuild, running.len())
        };
        // Returned after the query's sleep: part of the client's state until then.
        self.mc.remember(serial);
        self.mc.note(format_args!(
            "backend query #{serial} for {name} starts ({running} running)"
        ));
        self.mc.sleep(rebuild).await;
        if let Some(r) = self.ghost.borrow_mut().running.get_mut(&name) {
            r.remove(&c);
        }
        format!("rows#{serial}").into_bytes()
    }
}

/// A draw from the virtual instant and the key alone, as the engine's state holds them
/// (the clients are interchangeable, and a client keeps no count of its draws): two
/// clients that draw for one key at the same microsecond draw alike, which the
/// latencies of their calls make rare.
impl Chance for Frontend {
    fn unit(&self, key: &Key) -> f64 {
        unit(hash3(
            self.mc.global_now().micros(),
            fnv1a(key.as_bytes()),
            0x5846_6574_6368,
        ))
    }
}

impl Strip for Frontend {
    fn event(&self, key: &Key, event: Event) {
        let name = key.to_string();
        let mut g = self.ghost.borrow_mut();
        g.strips
            .entry(name.clone())
            .or_default()
            .push(event.letter());
        // An expiry starts at the first miss after a write and ends at the next write.
        match event {
            Event::Miss if g.expiring.insert(name.clone()) => {
                *g.expiries.entry(name.clone()).or_insert(0) += 1;
            }
            Event::Write => {
                g.expiring.remove(&name);
            }
            _ => {}
        }
        drop(g);
        self.mc
            .note(format_args!("strip {name} += {}", event.letter()));
    }
}

#[cfg(test)]
mod tests {
    use std::hash::{Hash, Hasher};

    use super::*;

    fn fingerprint(g: &Ghost, client: Option<usize>) -> u64 {
        let mut h = mcsim::exec::Fingerprint::default();
        match client {
            None => g.hash(&mut h),
            Some(c) => g.running_for(c, &mut h),
        }
        h.finish()
    }

    #[test]
    fn the_ghost_fingerprint_tells_apart_what_decides_verdicts_and_not_what_measures() {
        let base = || {
            let mut g = Ghost {
                live: 3,
                ..Ghost::default()
            };
            g.running.entry("k".into()).or_default().insert(1);
            g.builds.push(VirtualTime::from_millis(10));
            g
        };
        let b = fingerprint(&base(), None);
        // Strips, counts, waits and ages only measure; who runs a query is each
        // client's own part.
        let mut g = base();
        g.strips.insert("k".into(), "MW".into());
        (g.fresh, g.stale, g.empty, g.errors) = (3, 1, 1, 1);
        g.longest_wait = Duration::from_millis(300);
        g.builds[0] = VirtualTime::from_millis(20);
        g.running.insert("k".into(), [2].into());
        assert_eq!(fingerprint(&g, None), b);
        // Another query running, another started, an overlap seen, a client finished.
        let mut running = base();
        running.running.entry("k".into()).or_default().insert(2);
        let mut started = base();
        started.builds.push(VirtualTime::from_millis(30));
        let mut overlap = base();
        overlap.overlap = Some(Overlap {
            key: "k".into(),
            at: VirtualTime::ZERO,
            clients: vec![1, 2],
        });
        let mut finished = base();
        finished.live = 2;
        for g in [running, started, overlap, finished] {
            assert_ne!(fingerprint(&g, None), b, "{g:?}");
        }
        // Each client's part: the keys it queries for.
        let g = base();
        assert_ne!(fingerprint(&g, Some(1)), fingerprint(&g, Some(2)));
        assert_eq!(
            fingerprint(&g, Some(2)),
            fingerprint(&Ghost::default(), Some(1))
        );
    }

    #[test]
    fn serials_are_read_from_rows() {
        assert_eq!(serial(b"rows#0"), Some(0));
        assert_eq!(serial(b"rows#42"), Some(42));
        assert_eq!(serial(b"rows#"), None);
        assert_eq!(serial(b"42"), None);
    }

    #[test]
    fn strips_are_cut() {
        let mut g = Ghost::default();
        g.strips.insert("a".into(), "MLWUHHHH".into());
        g.strips.insert("b".into(), "H".into());
        assert_eq!(g.strips_text(4), "a: MLWU…; b: H");
        assert_eq!(g.letters('H'), 5);
    }
}
