//! The ends of the LRU queues: allocation that evicts from a class's COLD tail, and the
//! LRU maintainer's juggle between HOT, WARM and COLD, with the per-class counters
//! `stats items` reports.

use super::{Items, Pull};
use crate::server::lru::Segment;

impl Items {
    /// memcached's `do_item_alloc_pull`: up to ten tries, each after evicting from the
    /// class's COLD tail (or moving HOT to COLD when COLD is empty).
    pub(super) fn alloc_part(&mut self, class: usize, chunks: u64, tick: u32) -> bool {
        let mut tries = 0;
        let done = loop {
            if self.slabs.try_alloc(class, chunks) {
                break true;
            }
            if tries == 10 {
                break false;
            }
            tries += 1;
            if self.pull_tail(class, Segment::Cold, Pull::Eviction, 0, u32::MAX, tick) == 0 {
                self.pull_tail(class, Segment::Hot, Pull::Juggle, 0, u32::MAX, tick);
            }
        };
        if tries > 0 {
            self.class_stats(class).direct_reclaims += tries;
        }
        done
    }

    /// Counts the eviction of the item in `slot` in its class.
    pub(super) fn count_eviction(&mut self, slot: u32, tick: u32) {
        let item = &self.slot(slot).item;
        let (class, time, exptime) = (item.class, item.time, item.exptime);
        let (fetched, active) = (item.fetched, item.active);
        let c = self.class_stats(class);
        c.evicted += 1;
        c.evicted_time = tick.wrapping_sub(time);
        c.evicted_nonzero += u64::from(exptime != 0);
        c.evicted_unfetched += u64::from(!fetched);
        c.evicted_active += u64::from(active);
    }

    /// memcached's `lru_pull_tail`: looks at up to five items at a queue's tail; reclaims
    /// expired or flushed ones; moves one item on, or evicts it. Returns how many items it
    /// removed or moved.
    pub(super) fn pull_tail(
        &mut self,
        class: usize,
        segment: Segment,
        pull: Pull,
        total_bytes: u64,
        max_age: u32,
        tick: u32,
    ) -> usize {
        let mut removed = 0;
        // Up to five items from the tail, one at a time: each reclaimed item uncovers the
        // next, and most calls stop at the first.
        for _ in 0..5 {
            let Some(slot) = self.lru(class).oldest(segment) else {
                break;
            };
            let item = &self.slot(slot).item;
            if (item.exptime != 0 && item.exptime < tick) || self.is_flushed(item, tick) {
                let fetched = item.fetched;
                let c = self.class_stats(class);
                c.reclaimed += 1;
                c.expired_unfetched += u64::from(!fetched);
                self.unlink_slot(slot);
                removed += 1;
                continue;
            }
            let (active, time) = (item.active, item.time);
            match segment {
                Segment::Hot | Segment::Warm => {
                    let pct = if segment == Segment::Hot { 20 } else { 40 };
                    let limit = total_bytes * pct / 100;
                    if active {
                        // Active items flow from HOT to WARM, and go back to WARM's head.
                        self.item_mut(slot).active = false;
                        self.lru_remove(slot);
                        self.relink(slot, Segment::Warm);
                        let c = self.class_stats(class);
                        if segment == Segment::Hot {
                            c.moves_to_warm += 1;
                        } else {
                            c.moves_within_lru += 1;
                        }
                        removed += 1;
                    } else if self.lru(class).bytes(segment) > limit
                        || tick.saturating_sub(time) > max_age
                    {
                        self.lru_remove(slot);
                        self.relink(slot, Segment::Cold);
                        self.class_stats(class).moves_to_cold += 1;
                        removed += 1;
                    }
                }
                Segment::Cold => {
                    if pull == Pull::Eviction && self.evict_to_free {
                        self.count_eviction(slot, tick);
                        self.unlink_slot(slot);
                        removed += 1;
                    }
                }
            }
            break;
        }
        removed
    }

    /// The LRU maintainer's juggle for one class, run synchronously after each link: HOT
    /// above 20% of the class's bytes and WARM above 40% drain into COLD; active items
    /// move to WARM.
    pub(super) fn juggle(&mut self, class: usize, tick: u32) {
        let lru = self.lru(class);
        let cold_age = lru
            .oldest(Segment::Cold)
            .map(|slot| tick.saturating_sub(self.slot(slot).item.time))
            .unwrap_or(0);
        let total = lru.total_bytes();
        let hot_age = (f64::from(cold_age) * 0.2) as u32;
        let warm_age = cold_age.saturating_mul(2);
        for _ in 0..500 {
            let moved = self.pull_tail(class, Segment::Hot, Pull::Juggle, total, hot_age, tick)
                + self.pull_tail(class, Segment::Warm, Pull::Juggle, total, warm_age, tick);
            if moved == 0 {
                break;
            }
        }
    }
}
