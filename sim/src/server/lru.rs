//! The segmented LRU of one slab class: HOT, WARM and COLD queues.
//!
//! As in memcached, each queue is a doubly linked list threaded through the items
//! themselves: an item is linked at the head, the tail is the oldest, and unlinking is
//! constant time. Items are named by their slot in the item table's arena
//! ([`crate::server::Items`]), and the links live in a vector parallel to that arena, so
//! a store moves no key and allocates nothing. The order is fully determined by the
//! order of pushes, as the sequence numbers of an ordered map would give it.

/// No slot: the end of a list.
pub const NIL: u32 = u32::MAX;

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

/// An item's neighbours in its queue: `prev` towards the head (newer), `next` towards
/// the tail (older).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Links {
    prev: u32,
    next: u32,
}

impl Links {
    /// Not in any queue.
    pub const UNLINKED: Links = Links {
        prev: NIL,
        next: NIL,
    };
}

/// One queue's ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Queue {
    head: u32,
    tail: u32,
}

/// The three queues of one class, and the bytes each holds.
#[derive(Debug, Clone)]
pub struct ClassLru {
    queues: [Queue; 3],
    bytes: [u64; 3],
    counts: [u32; 3],
}

impl Default for ClassLru {
    fn default() -> ClassLru {
        ClassLru::new()
    }
}

impl ClassLru {
    /// Empty queues.
    pub const fn new() -> ClassLru {
        const EMPTY: Queue = Queue {
            head: NIL,
            tail: NIL,
        };
        ClassLru {
            queues: [EMPTY; 3],
            bytes: [0; 3],
            counts: [0; 3],
        }
    }

    /// The slot at the tail of a queue (the oldest), if any.
    pub fn oldest(&self, segment: Segment) -> Option<u32> {
        let tail = self.queues[segment.index()].tail;
        (tail != NIL).then_some(tail)
    }

    /// Links a slot at the head of a queue.
    pub fn push(&mut self, links: &mut [Links], segment: Segment, slot: u32, bytes: u64) {
        let q = &mut self.queues[segment.index()];
        links[slot as usize] = Links {
            prev: NIL,
            next: q.head,
        };
        if q.head == NIL {
            q.tail = slot;
        } else {
            links[q.head as usize].prev = slot;
        }
        q.head = slot;
        self.bytes[segment.index()] += bytes;
        self.counts[segment.index()] += 1;
    }

    /// Unlinks a slot from the queue it is in.
    pub fn remove(&mut self, links: &mut [Links], segment: Segment, slot: u32, bytes: u64) {
        let Links { prev, next } = links[slot as usize];
        let q = &mut self.queues[segment.index()];
        if prev == NIL {
            q.head = next;
        } else {
            links[prev as usize].next = next;
        }
        if next == NIL {
            q.tail = prev;
        } else {
            links[next as usize].prev = prev;
        }
        links[slot as usize] = Links::UNLINKED;
        self.bytes[segment.index()] -= bytes;
        self.counts[segment.index()] -= 1;
    }

    /// Bytes held by a queue.
    pub fn bytes(&self, segment: Segment) -> u64 {
        self.bytes[segment.index()]
    }

    /// Items in a queue.
    pub fn count(&self, segment: Segment) -> u32 {
        self.counts[segment.index()]
    }

    /// Bytes held by the whole class.
    pub fn total_bytes(&self) -> u64 {
        self.bytes.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(lru: &ClassLru, links: &[Links], segment: Segment) -> Vec<u32> {
        let mut out = Vec::new();
        let mut at = lru.oldest(segment);
        while let Some(slot) = at {
            out.push(slot);
            let prev = links[slot as usize].prev;
            at = (prev != NIL).then_some(prev);
        }
        out
    }

    #[test]
    fn queues_keep_push_order_and_unlink_anywhere() {
        let mut links = vec![Links::UNLINKED; 5];
        let mut lru = ClassLru::new();
        for slot in 0..5 {
            lru.push(&mut links, Segment::Hot, slot, 10);
        }
        assert_eq!(order(&lru, &links, Segment::Hot), vec![0, 1, 2, 3, 4]);
        lru.remove(&mut links, Segment::Hot, 2, 10);
        lru.remove(&mut links, Segment::Hot, 0, 10);
        lru.remove(&mut links, Segment::Hot, 4, 10);
        assert_eq!(order(&lru, &links, Segment::Hot), vec![1, 3]);
        assert_eq!(lru.bytes(Segment::Hot), 20);
        lru.push(&mut links, Segment::Cold, 0, 7);
        lru.push(&mut links, Segment::Hot, 4, 10);
        assert_eq!(order(&lru, &links, Segment::Hot), vec![1, 3, 4]);
        assert_eq!(order(&lru, &links, Segment::Cold), vec![0]);
        assert_eq!(lru.total_bytes(), 37);
        for slot in [1, 3, 4] {
            lru.remove(&mut links, Segment::Hot, slot, 10);
        }
        assert_eq!(lru.oldest(Segment::Hot), None);
    }
}
