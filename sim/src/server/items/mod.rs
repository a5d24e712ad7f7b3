//! The item table of one server: items, their memory, their LRU position, cas uniques
//! and `flush_all`.
//!
//! Lookups follow memcached's `do_item_get`: a flushed or expired item is unlinked when
//! it is found, so expiry is lazy, and expired items keep their memory until something
//! looks at them or eviction walks past them.
//!
//! Items live in an arena of slots; an index from key to slot gives lookups (a short
//! list for a few keys, a hash table for more: see [`crate::server::index`]; it is never
//! iterated, and walks in key order sort the slots), and the LRU queues thread through
//! the slots (see [`crate::server::lru`]). Replacing an item reuses its slot, so the
//! common store touches the index once and allocates nothing.

use crate::memcache::Key;
use crate::server::config::ServerConfig;
use crate::server::index::KeyIndex;
use crate::server::lru::{ClassLru, Links, Segment};
use crate::server::slab::{CHUNK_HEADER, ITEM_HEADER, Placement, Slabs, item_total, too_large};
use crate::server::stats::{ClassStats, Stats};

mod counting;
mod report;
mod tail;

/// One stored item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// The value.
    pub data: Vec<u8>,
    /// Client flags.
    pub flags: u32,
    /// Expiry as a server tick (0: never).
    pub exptime: u32,
    /// cas unique.
    pub cas: u64,
    /// Last access tick.
    pub time: u32,
    /// Read once since stored.
    pub fetched: bool,
    /// Read twice: protected.
    pub active: bool,
    /// A meta `W` (win) token has been handed out.
    pub token_sent: bool,
    /// Marked stale by meta delete `I`.
    pub stale: bool,
    /// Stored by a meta command whose key came base64-encoded (`b`): meta replies
    /// encode the key again.
    pub key_binary: bool,
    class: usize,
    placement: Placement,
    total: u64,
    segment: Segment,
}

impl Item {
    /// Its slab class as memcached numbers them (`cls=` of `me`; the smallest is 1).
    pub fn class_id(&self) -> usize {
        self.class + 1
    }

    /// True if it is stored as a header and chunks (larger than `slab_chunk_max`):
    /// memcached's arithmetic treats such a value as not a number.
    pub fn is_chunked(&self) -> bool {
        self.placement.is_chunked()
    }

    /// The bytes it takes, header included (`size=` of `me`).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// A new item, not yet linked.
    pub fn new(data: Vec<u8>, flags: u32, exptime: u32) -> Item {
        Item {
            data,
            flags,
            exptime,
            cas: 0,
            time: 0,
            fetched: false,
            active: false,
            token_sent: false,
            stale: false,
            key_binary: false,
            class: 0,
            placement: Placement::default(),
            total: 0,
            segment: Segment::Hot,
        }
    }
}

/// Memory reserved for an item that is about to be linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reservation {
    placement: Placement,
    total: u64,
}

/// Why memory could not be reserved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocError {
    /// Larger than `-I`.
    TooLarge,
    /// Memory is full and nothing could be evicted (`-M`, or every tail busy).
    OutOfMemory,
}

/// What a pull from a queue's tail did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pull {
    Eviction,
    Juggle,
}

/// A linked item and its key (the LRU reaches items by slot and needs the key back).
#[derive(Debug, Clone)]
struct Slot {
    key: Key,
    item: Item,
}

/// All items of one server.
#[derive(Debug, Clone)]
pub struct Items {
    /// Key to slot.
    index: KeyIndex,
    /// The arena; `None` marks a free slot.
    slots: Vec<Option<Slot>>,
    /// LRU links, parallel to `slots`.
    links: Vec<Links>,
    /// Free slots, reused last-freed first.
    free: Vec<u32>,
    slabs: Slabs,
    /// The LRU of each class, created when the class links its first item (most
    /// executions touch one or two of the forty classes).
    lrus: Vec<ClassLru>,
    cas_id: u64,
    oldest_live: u32,
    oldest_cas: u64,
    item_size_max: u64,
    evict_to_free: bool,
    /// The server-wide counters without a per-class twin; those with one stay 0 here and
    /// [`Items::stats`] sums them from `classes`.
    pub stats: Stats,
    /// Counters per slab class, grown when a class first counts something.
    classes: Vec<ClassStats>,
    /// The class and queue of the item the last lookup found (before any bump), for the
    /// hit that follows it.
    found: (usize, Segment),
}

impl Items {
    /// An empty table for these settings.
    pub fn new(config: &ServerConfig) -> Items {
        let slabs = Slabs::new(config);
        Items {
            index: KeyIndex::default(),
            slots: Vec::new(),
            links: Vec::new(),
            free: Vec::new(),
            slabs,
            lrus: Vec::new(),
            cas_id: 0,
            oldest_live: 0,
            oldest_cas: 0,
            item_size_max: u64::from(config.item_size_max),
            evict_to_free: !config.no_evict,
            stats: Stats::default(),
            classes: Vec::new(),
            found: (0, Segment::Hot),
        }
    }

    /// The LRU of a class (an empty one if the class never linked an item).
    fn lru(&self, class: usize) -> &ClassLru {
        static EMPTY: ClassLru = ClassLru::new();
        self.lrus.get(class).unwrap_or(&EMPTY)
    }

    /// Empties the table as [`Items::new`] would build it for the same settings, keeping
    /// the room its vectors have grown (an executor reuses servers across executions).
    pub fn reset(&mut self) {
        self.index.clear();
        self.slots.clear();
        self.links.clear();
        self.free.clear();
        self.slabs.reset();
        self.lrus.clear();
        self.cas_id = 0;
        self.oldest_live = 0;
        self.oldest_cas = 0;
        self.stats = Stats::default();
        self.classes.clear();
    }

    /// Creates a class's LRU on first use.
    fn ensure_lru(&mut self, class: usize) {
        if class >= self.lrus.len() {
            self.lrus.resize_with(class + 1, ClassLru::default);
        }
    }

    fn slot(&self, slot: u32) -> &Slot {
        self.slots[slot as usize].as_ref().expect("a linked slot")
    }

    fn item_mut(&mut self, slot: u32) -> &mut Item {
        &mut self.slots[slot as usize]
            .as_mut()
            .expect("a linked slot")
            .item
    }

    /// Takes an item's slot out of its LRU queue.
    fn lru_remove(&mut self, slot: u32) {
        let item = &self.slot(slot).item;
        let (class, segment, total) = (item.class, item.segment, item.total);
        // A queued item was queued by `relink`, which created its class's LRU.
        self.lrus[class].remove(&mut self.links, segment, slot, total);
    }

    /// Hands out the next cas unique.
    pub fn next_cas(&mut self) -> u64 {
        self.cas_id += 1;
        self.cas_id
    }

    fn is_flushed(&self, item: &Item, tick: u32) -> bool {
        let oldest_live = self.oldest_live;
        if oldest_live == 0 || oldest_live > tick {
            return false;
        }
        item.time <= oldest_live
            || (self.oldest_cas != 0 && item.cas != 0 && item.cas < self.oldest_cas)
    }

    /// True if the item is present and neither flushed nor expired at `tick`, without
    /// touching it (no unlink, no LRU change, no counters).
    pub fn peek(&self, key: &Key, tick: u32) -> Option<&Item> {
        let item = &self.slot(self.index.get(key)?).item;
        if self.is_flushed(item, tick) || (item.exptime != 0 && item.exptime <= tick) {
            return None;
        }
        Some(item)
    }

    /// memcached's `do_item_get` without the LRU bump: the live item, unlinking it first
    /// if it is flushed or expired.
    pub fn find(&mut self, key: &Key, tick: u32) -> Option<&mut Item> {
        let slot = self.find_slot(key, tick)?;
        Some(self.item_mut(slot))
    }

    /// `find`, answering with the item's slot.
    fn find_slot(&mut self, key: &Key, tick: u32) -> Option<u32> {
        let slot = self.index.get(key)?;
        let item = &self.slot(slot).item;
        if self.is_flushed(item, tick) {
            self.stats.get_flushed += 1;
            self.unlink_slot(slot);
            return None;
        }
        if item.exptime != 0 && item.exptime <= tick {
            self.stats.get_expired += 1;
            self.unlink_slot(slot);
            return None;
        }
        self.found = (item.class, item.segment);
        Some(slot)
    }

    /// `find` and then the fetch bump of a read: the second read marks an item active
    /// (protected); an active item in COLD moves to WARM.
    pub fn fetch(&mut self, key: &Key, tick: u32, bump: bool) -> Option<&mut Item> {
        let slot = self.find_slot(key, tick)?;
        if bump {
            self.bump_slot(slot, tick);
        }
        Some(self.item_mut(slot))
    }

    /// memcached's `do_item_bump`, the LRU bump of a read: the first read marks an item
    /// fetched, the second active (protected); an active item in COLD moves to WARM.
    pub fn bump(&mut self, key: &Key, tick: u32) {
        if let Some(slot) = self.index.get(key) {
            self.bump_slot(slot, tick);
        }
    }

    fn bump_slot(&mut self, slot: u32, tick: u32) {
        let item = self.item_mut(slot);
        if item.active {
            return;
        }
        if !item.fetched {
            item.fetched = true;
            return;
        }
        item.time = tick;
        if item.segment == Segment::Cold {
            // memcached queues this bump for its LRU maintainer, which moves the item to
            // WARM and clears its active mark (`do_item_update`); here it happens at once.
            let class = item.class;
            self.lru_remove(slot);
            self.relink(slot, Segment::Warm);
            self.class_stats(class).moves_to_warm += 1;
        } else {
            item.active = true;
        }
    }

    /// The linked item under `key`, expired or flushed or not, without any side effect.
    pub fn linked(&self, key: &Key) -> Option<&Item> {
        Some(&self.slot(self.index.get(key)?).item)
    }

    /// The linked item under `key`, expired or flushed or not, without any side effect:
    /// for a command that goes on using an item it has already looked up.
    pub fn linked_mut(&mut self, key: &Key) -> Option<&mut Item> {
        let slot = self.index.get(key)?;
        Some(self.item_mut(slot))
    }

    /// memcached's `do_item_update` with its segmented LRU (the default): the access
    /// time becomes now, and an active item in COLD moves to WARM.
    pub fn touch_time(&mut self, key: &Key, tick: u32) {
        let Some(slot) = self.index.get(key) else {
            return;
        };
        let item = self.item_mut(slot);
        item.time = tick;
        if item.segment == Segment::Cold && item.active {
            item.active = false;
            let class = item.class;
            self.lru_remove(slot);
            self.relink(slot, Segment::Warm);
            self.class_stats(class).moves_to_warm += 1;
        }
    }

    /// Links a slot at the head of one of its class's queues.
    fn relink(&mut self, slot: u32, segment: Segment) {
        let item = self.item_mut(slot);
        item.segment = segment;
        let (class, total) = (item.class, item.total);
        self.ensure_lru(class);
        self.lrus[class].push(&mut self.links, segment, slot, total);
    }

    /// The largest item (`-I`), in the bytes [`item_total`] counts.
    pub fn item_size_max(&self) -> u64 {
        self.item_size_max
    }

    /// Reserves memory for an item, evicting from its class's COLD tail when needed.
    pub fn reserve(
        &mut self,
        key_len: usize,
        flags: u32,
        value_len: usize,
        tick: u32,
    ) -> Result<Reservation, AllocError> {
        if too_large(self.item_size_max, key_len, flags, value_len) {
            return Err(AllocError::TooLarge);
        }
        let total = item_total(key_len, flags, value_len);
        let header = key_len as u64 + 1 + u64::from(flags != 0) * 4 + ITEM_HEADER + CHUNK_HEADER;
        let placement = self.slabs.placement(total, header, value_len as u64 + 2);
        // Part by part, as memcached allocates a chunked item's header and then its
        // chunks: each part evicts, if it must, from its own class's LRU.
        for (i, &(class, chunks)) in placement.parts().iter().enumerate() {
            if !self.alloc_part(class, chunks, tick) {
                for &(c, n) in &placement.parts()[..i] {
                    self.slabs.free(c, n);
                }
                self.class_stats(placement.lru_class).outofmemory += 1;
                return Err(AllocError::OutOfMemory);
            }
        }
        Ok(Reservation { placement, total })
    }

    /// Gives back a reservation that was not linked.
    pub fn release(&mut self, r: Reservation) {
        for &(class, chunks) in r.placement.parts() {
            self.slabs.free(class, chunks);
        }
    }

    /// Links a new item under `key`, replacing any old one; hands it a new cas unique.
    pub fn link(&mut self, key: &Key, mut item: Item, r: Reservation, tick: u32) -> u64 {
        let old = self.index.get(key);
        if let Some(slot) = old {
            self.release_slot(slot);
        }
        item.class = r.placement.lru_class;
        item.placement = r.placement;
        item.total = r.total;
        item.time = tick;
        item.cas = self.next_cas();
        let cas = item.cas;
        self.stats.curr_items += 1;
        self.stats.total_items += 1;
        self.stats.bytes += r.total;
        let slot = match old {
            // The old item's slot takes the new one: the index is not touched.
            Some(slot) => {
                *self.item_mut(slot) = item;
                slot
            }
            None => {
                let slot = self.free.pop().unwrap_or_else(|| {
                    self.slots.push(None);
                    self.links.push(Links::UNLINKED);
                    (self.slots.len() - 1) as u32
                });
                self.slots[slot as usize] = Some(Slot {
                    key: key.clone(),
                    item,
                });
                self.index.insert(key.clone(), slot);
                slot
            }
        };
        self.relink(slot, Segment::Hot);
        self.juggle(r.placement.lru_class, tick);
        cas
    }

    /// Removes an item and frees its memory.
    pub fn unlink(&mut self, key: &Key) -> Option<Item> {
        let slot = self.index.get(key)?;
        Some(self.unlink_slot(slot))
    }

    /// Takes an item out of its queue and gives back its memory, leaving it in its slot.
    fn release_slot(&mut self, slot: u32) {
        self.lru_remove(slot);
        let item = &self.slot(slot).item;
        let (placement, total) = (item.placement, item.total);
        for &(class, chunks) in placement.parts() {
            self.slabs.free(class, chunks);
        }
        self.stats.curr_items -= 1;
        self.stats.bytes -= total;
    }

    /// Removes the item in `slot` from the table and frees its memory.
    fn unlink_slot(&mut self, slot: u32) -> Item {
        self.release_slot(slot);
        let Slot { key, item } = self.slots[slot as usize].take().expect("a linked slot");
        self.index.remove(&key);
        self.free.push(slot);
        item
    }

    /// `flush_all`: `oldest_live` is the last tick whose items are invisible. An immediate
    /// flush also hides every item whose cas unique is older than the flush.
    pub fn flush(&mut self, oldest_live: u32, tick: u32) {
        self.oldest_live = oldest_live;
        if oldest_live <= tick {
            self.oldest_cas = self.next_cas();
        }
    }

    /// Drops every item (crash, `drop everything` fault).
    pub fn clear(&mut self) {
        let keys: Vec<Key> = self.iter().map(|(k, _)| k.clone()).collect();
        for k in keys {
            self.unlink(&k);
        }
    }

    /// Evicts one item now, as memory pressure would. Returns whether it was there.
    pub fn evict(&mut self, key: &Key, tick: u32) -> bool {
        let Some(slot) = self.index.get(key) else {
            return false;
        };
        self.count_eviction(slot, tick);
        self.unlink_slot(slot);
        true
    }

    /// Number of items linked (live or expired-but-not-yet-reclaimed).
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True if no item is linked.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Every linked key with its item, in key order (the slots sorted by key: the index
    /// is a hash table and is never iterated).
    pub fn iter(&self) -> impl Iterator<Item = (&Key, &Item)> {
        let mut linked: Vec<&Slot> = self.slots.iter().flatten().collect();
        debug_assert_eq!(
            linked.len(),
            self.index.len(),
            "every linked slot is indexed"
        );
        linked.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        linked.into_iter().map(|s| (&s.key, &s.item))
    }

    /// Mutable access for warm restarts, which shift every exptime.
    pub fn items_mut(&mut self) -> impl Iterator<Item = &mut Item> {
        self.slots.iter_mut().flatten().map(|s| &mut s.item)
    }

    /// Forgets `flush_all` state (a new process).
    pub fn reset_flush(&mut self) {
        self.oldest_live = 0;
        self.oldest_cas = 0;
    }

    /// The table-wide state besides the items: the last cas unique handed out and the
    /// marks of the last `flush_all` (for state fingerprints).
    pub fn flush_marks(&self) -> (u64, u32, u64) {
        (self.cas_id, self.oldest_live, self.oldest_cas)
    }

    /// Memory handed to slab classes, in bytes.
    pub fn malloced(&self) -> u64 {
        self.slabs.malloced()
    }

    /// Per slab class in use: its chunk size, pages and chunks in use (what `stats
    /// slabs` reports as `chunk_size`, `total_pages` and `used_chunks`).
    pub fn slab_usage(&self) -> Vec<(u64, u64, u64)> {
        self.slabs.usage()
    }
}
