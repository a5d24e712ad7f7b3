//! The counters of one server's items: server-wide and per slab class, as `stats`,
//! `stats items` and `stats slabs` report them, and `stats reset`.

use super::{Items, Reservation};
use crate::server::lru::Segment;
use crate::server::stats::{ClassStats, Hit, Stats};

impl Items {
    /// `stats reset`: every counter back to zero but the gauges (`curr_items`, `bytes`,
    /// `curr_connections`, `connection_structures`), as memcached's `stats_reset` leaves
    /// them.
    pub fn reset_counters(&mut self) {
        let s = &self.stats;
        self.stats = Stats {
            curr_items: s.curr_items,
            bytes: s.bytes,
            curr_connections: s.curr_connections,
            connection_structures: s.connection_structures,
            ..Stats::default()
        };
        self.classes.clear();
    }

    /// The server's counters, as `stats` reports them: its own, plus the sums of those
    /// also counted per class (hits, `cmd_set`, evictions, reclaims, the LRU's moves),
    /// which memcached adds up from its per-class counters the same way.
    pub fn stats(&self) -> Stats {
        let [
            get_hits,
            touch_hits,
            delete_hits,
            incr_hits,
            decr_hits,
            cas_hits,
            cas_badval,
            cmd_set,
            evictions,
            reclaimed,
            expired_unfetched,
            evicted_unfetched,
            evicted_active,
            moves_to_cold,
            moves_to_warm,
            moves_within_lru,
            direct_reclaims,
        ] = self.class_sums();
        Stats {
            get_hits,
            touch_hits,
            delete_hits,
            incr_hits,
            decr_hits,
            cas_hits,
            cas_badval,
            cmd_set,
            evictions,
            reclaimed,
            expired_unfetched,
            evicted_unfetched,
            evicted_active,
            moves_to_cold,
            moves_to_warm,
            moves_within_lru,
            direct_reclaims,
            ..self.stats.clone()
        }
    }

    /// Hashes what [`Items::stats`] reports, without building it (an explorer's
    /// fingerprint takes it at every state).
    pub fn hash_counters(&self, h: &mut impl std::hash::Hasher) {
        use std::hash::Hash;
        self.stats.hash(h);
        self.class_sums().hash(h);
    }

    /// The per-class counters the server-wide ones sum, in the order [`Items::stats`]
    /// reads them.
    fn class_sums(&self) -> [u64; 17] {
        let mut sums = [0; 17];
        for c in &self.classes {
            let values = [
                c.get_hits,
                c.touch_hits,
                c.delete_hits,
                c.incr_hits,
                c.decr_hits,
                c.cas_hits,
                c.cas_badval,
                c.set_cmds,
                c.evicted,
                c.reclaimed,
                c.expired_unfetched,
                c.evicted_unfetched,
                c.evicted_active,
                c.moves_to_cold,
                c.moves_to_warm,
                c.moves_within_lru,
                c.direct_reclaims,
            ];
            for (sum, v) in sums.iter_mut().zip(values) {
                *sum += v;
            }
        }
        sums
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
