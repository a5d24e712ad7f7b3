//! The counters of one server's items: server-wide and per slab class, as `stats`,
//! `stats items` and `stats slabs` report them, and `stats reset`.

use super::{Items, Reservation};
use crate::server::lru::Segment;
use crate::server::stats::{ClassStats, Hit, Stats};

impl Items {
    /// `stats reset`: every counter back to zero but the gauges (`curr_items`, `bytes`,
    /// `curr_connections`), as memcached's `stats_reset` leaves them.
    pub fn reset_counters(&mut self) {
        let s = &self.stats;
        let kept = (s.curr_items, s.bytes, s.curr_connections);
        self.stats = Stats {
            curr_items: kept.0,
            bytes: kept.1,
            curr_connections: kept.2,
            ..Stats::default()
        };
        self.classes.clear();
    }

    /// The server's counters, as `stats` reports them: its own, plus the sums of those
    /// also counted per class (hits, `cmd_set`, evictions, reclaims), which memcached
    /// adds up from its per-class counters the same way.
    pub fn stats(&self) -> Stats {
        let mut s = self.stats.clone();
        for c in &self.classes {
            s.get_hits += c.get_hits;
            s.touch_hits += c.touch_hits;
            s.delete_hits += c.delete_hits;
            s.incr_hits += c.incr_hits;
            s.decr_hits += c.decr_hits;
            s.cas_hits += c.cas_hits;
            s.cas_badval += c.cas_badval;
            s.cmd_set += c.set_cmds;
            s.evictions += c.evicted;
            s.reclaimed += c.reclaimed;
            s.expired_unfetched += c.expired_unfetched;
            s.evicted_unfetched += c.evicted_unfetched;
        }
        s
    }

    /// The counters of a class.
    pub(crate) fn class_stats(&mut self, class: usize) -> &mut ClassStats {
        class_entry(&mut self.classes, class)
    }

    /// Counts a hit on the item the last lookup found, in its class (the server-wide
    /// count is their sum).
    pub fn hit(&mut self, hit: Hit) {
        let (class, segment) = self.found;
        let c = class_entry(&mut self.classes, class);
        match hit {
            Hit::Get => {
                c.get_hits += 1;
                match segment {
                    Segment::Hot => c.hits_to_hot += 1,
                    Segment::Warm => c.hits_to_warm += 1,
                    Segment::Cold => c.hits_to_cold += 1,
                }
            }
            Hit::Touch => c.touch_hits += 1,
            Hit::Delete => c.delete_hits += 1,
            Hit::Incr => c.incr_hits += 1,
            Hit::Decr => c.decr_hits += 1,
            Hit::CasHit => c.cas_hits += 1,
            Hit::CasBadval => c.cas_badval += 1,
        }
    }

    /// Counts a storage command whose item got its memory (memcached counts `cmd_set`
    /// then, in the new item's class).
    pub fn count_set(&mut self, r: &Reservation) {
        self.class_stats(r.placement.lru_class).set_cmds += 1;
    }
}

/// The counters of `class`, grown into the table on first use.
fn class_entry(classes: &mut Vec<ClassStats>, class: usize) -> &mut ClassStats {
    if class >= classes.len() {
        classes.resize(class + 1, ClassStats::default());
    }
    &mut classes[class]
}
