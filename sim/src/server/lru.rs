//! The segmented LRU of one slab class: HOT, WARM and COLD queues.
//!
//! Each queue is ordered by a sequence number taken when an item is linked at its head;
//! the tail is the smallest number. A `BTreeMap` keeps the order deterministic.

use std::collections::BTreeMap;

use crate::memcache::Key;

/// Which queue an item is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Segment {
    /// New items.
    Hot,
    /// Items read at least twice: protected from eviction.
    Warm,
    /// Items that aged out of HOT or WARM: the eviction end.
    Cold,
}

impl Segment {
    fn index(self) -> usize {
        match self {
            Segment::Hot => 0,
            Segment::Warm => 1,
            Segment::Cold => 2,
        }
    }
}

/// The three queues of one class, and the bytes each holds.
#[derive(Debug, Clone, Default)]
pub struct ClassLru {
    queues: [BTreeMap<u64, Key>; 3],
    bytes: [u64; 3],
}

impl ClassLru {
    /// Empty queues.
    pub const fn new() -> ClassLru {
        ClassLru {
            queues: [BTreeMap::new(), BTreeMap::new(), BTreeMap::new()],
            bytes: [0; 3],
        }
    }

    /// The key at the tail of a queue (the oldest), if any.
    pub fn oldest(&self, segment: Segment) -> Option<&Key> {
        self.queues[segment.index()].values().next()
    }

    /// Links a key at the head of a queue.
    pub fn push(&mut self, segment: Segment, seq: u64, key: Key, bytes: u64) {
        self.queues[segment.index()].insert(seq, key);
        self.bytes[segment.index()] += bytes;
    }

    /// Unlinks a key.
    pub fn remove(&mut self, segment: Segment, seq: u64, bytes: u64) {
        if self.queues[segment.index()].remove(&seq).is_some() {
            self.bytes[segment.index()] -= bytes;
        }
    }

    /// Bytes held by a queue.
    pub fn bytes(&self, segment: Segment) -> u64 {
        self.bytes[segment.index()]
    }

    /// Bytes held by the whole class.
    pub fn total_bytes(&self) -> u64 {
        self.bytes.iter().sum()
    }
}
