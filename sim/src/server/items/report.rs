//! `stats items` and `stats slabs`: per slab class, what memcached 1.6.18 reports, in its
//! order and with its class numbers (the smallest class is 1).
//!
//! memcached's LRU maintainer thread juggles items between HOT, WARM and COLD some time
//! after a store (up to a second when idle); the simulator juggles right after each
//! store. The HOT/WARM/COLD split, the moves and the `hits_to_*` queues can therefore
//! differ from a real server's for items touched within that second; their sums
//! (`number`, `get_hits`) do not.

use super::Items;
use crate::server::lru::Segment;
use crate::server::stats::ClassStats;

/// `STAT` lines.
type Lines = Vec<(String, String)>;

impl Items {
    fn class_counters(&self, class: usize) -> ClassStats {
        self.classes.get(class).cloned().unwrap_or_default()
    }

    /// Seconds since the item at the tail of a queue was last accessed (0 when empty).
    fn tail_age(&self, class: usize, segment: Segment, tick: u32) -> u32 {
        self.lru(class)
            .oldest(segment)
            .map_or(0, |slot| tick.wrapping_sub(self.slot(slot).item.time))
    }

    /// The `STAT items:N:…` lines, for every class holding an item.
    pub fn items_report(&self, tick: u32) -> Lines {
        let mut out = Vec::new();
        for class in 0..self.lrus.len() {
            let lru = self.lru(class);
            let counts = [Segment::Hot, Segment::Warm, Segment::Cold].map(|s| lru.count(s));
            let number: u32 = counts.iter().sum();
            if number == 0 {
                continue;
            }
            let c = self.class_counters(class);
            let n = class + 1;
            let mut stat = |name: &str, value: String| {
                out.push((format!("items:{n}:{name}"), value));
            };
            stat("number", number.to_string());
            stat("number_hot", counts[0].to_string());
            stat("number_warm", counts[1].to_string());
            stat("number_cold", counts[2].to_string());
            stat(
                "age_hot",
                self.tail_age(class, Segment::Hot, tick).to_string(),
            );
            stat(
                "age_warm",
                self.tail_age(class, Segment::Warm, tick).to_string(),
            );
            stat("age", self.tail_age(class, Segment::Cold, tick).to_string());
            stat("mem_requested", lru.total_bytes().to_string());
            for (name, value) in [
                ("evicted", c.evicted),
                ("evicted_nonzero", c.evicted_nonzero),
                ("evicted_time", u64::from(c.evicted_time)),
                ("outofmemory", c.outofmemory),
                ("tailrepairs", 0),
                ("reclaimed", c.reclaimed),
                ("expired_unfetched", c.expired_unfetched),
                ("evicted_unfetched", c.evicted_unfetched),
                ("evicted_active", c.evicted_active),
                ("crawler_reclaimed", 0),
                ("crawler_items_checked", 0),
                ("lrutail_reflocked", 0),
                ("moves_to_cold", c.moves_to_cold),
                ("moves_to_warm", c.moves_to_warm),
                ("moves_within_lru", c.moves_within_lru),
                ("direct_reclaims", c.direct_reclaims),
                ("hits_to_hot", c.hits_to_hot),
                ("hits_to_warm", c.hits_to_warm),
                ("hits_to_cold", c.hits_to_cold),
                ("hits_to_temp", 0),
            ] {
                stat(name, value.to_string());
            }
        }
        out
    }

    /// The `STAT N:…` lines for every class with memory, then `active_slabs` and
    /// `total_malloced`.
    pub fn slabs_report(&self) -> Lines {
        let mut out = Vec::new();
        let mut active = 0;
        for (class, chunk, per_page, pages, used) in self.slabs.classes_in_use() {
            active += 1;
            let c = self.class_counters(class);
            let n = class + 1;
            for (name, value) in [
                ("chunk_size", chunk),
                ("chunks_per_page", per_page),
                ("total_pages", pages),
                ("total_chunks", pages * per_page),
                ("used_chunks", used),
                ("free_chunks", pages * per_page - used),
                ("free_chunks_end", 0),
                ("get_hits", c.get_hits),
                ("cmd_set", c.set_cmds),
                ("delete_hits", c.delete_hits),
                ("incr_hits", c.incr_hits),
                ("decr_hits", c.decr_hits),
                ("cas_hits", c.cas_hits),
                ("cas_badval", c.cas_badval),
                ("touch_hits", c.touch_hits),
            ] {
                out.push((format!("{n}:{name}"), value.to_string()));
            }
        }
        out.push(("active_slabs".into(), active.to_string()));
        out.push(("total_malloced".into(), self.malloced().to_string()));
        out
    }
}
