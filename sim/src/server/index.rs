//! The key index of an item table: key to slot, looked up on every command.
//!
//! Most executions touch a handful of keys, and a server under load thousands, so the
//! index has two forms: up to [`SMALL`] keys, a short list searched in turn (one or two
//! key comparisons, nothing to hash); past that, a hash table (foldhash, fixed seed),
//! because an ordered map pays a key comparison per level of its tree on every lookup.
//! It is never iterated: hash order would make traces depend on the table's history, so
//! whatever must walk the items in key order sorts them (see
//! [`crate::server::Items::iter`]), and this type offers no iteration but a `Debug` that
//! lists its entries in key order.

use std::collections::HashMap;
use std::fmt;

use foldhash::fast::FixedState;

use crate::memcache::Key;

/// The most keys the short list holds before the index moves them into the hash table.
pub(crate) const SMALL: usize = 8;

/// Key to slot, for lookups only.
#[derive(Clone, Default)]
pub(crate) struct KeyIndex {
    /// Every entry while the table holds at most [`SMALL`] keys and `large` is empty.
    small: Vec<(Key, u32)>,
    /// Every entry once the table has outgrown `small` (which is then empty), until the
    /// table is emptied.
    large: HashMap<Key, u32, FixedState>,
}

impl KeyIndex {
    /// The slot of `key`, if it is linked.
    #[inline]
    pub(crate) fn get(&self, key: &Key) -> Option<u32> {
        if self.large.is_empty() {
            self.small
                .iter()
                .find(|(k, _)| k == key)
                .map(|&(_, slot)| slot)
        } else {
            self.large.get(key).copied()
        }
    }

    /// Records that `key` lives in `slot`.
    pub(crate) fn insert(&mut self, key: Key, slot: u32) {
        if !self.large.is_empty() {
            self.large.insert(key, slot);
        } else if let Some(entry) = self.small.iter_mut().find(|(k, _)| *k == key) {
            entry.1 = slot;
        } else if self.small.len() < SMALL {
            self.small.push((key, slot));
        } else {
            self.large.extend(self.small.drain(..));
            self.large.insert(key, slot);
        }
    }

    /// Forgets `key`.
    pub(crate) fn remove(&mut self, key: &Key) {
        if !self.large.is_empty() {
            self.large.remove(key);
        } else if let Some(at) = self.small.iter().position(|(k, _)| k == key) {
            self.small.swap_remove(at);
        }
    }

    /// Forgets every key, keeping the room both forms have grown.
    pub(crate) fn clear(&mut self) {
        self.small.clear();
        // Spilled only past `SMALL` keys: most servers never fill it.
        if !self.large.is_empty() {
            self.large.clear();
        }
    }

    /// How many keys are linked.
    pub(crate) fn len(&self) -> usize {
        self.small.len() + self.large.len()
    }

    /// True if no key is linked.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Debug for KeyIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut entries: Vec<(&Key, &u32)> = self
            .small
            .iter()
            .map(|(k, slot)| (k, slot))
            .chain(self.large.iter())
            .collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        f.debug_map().entries(entries).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> Key {
        Key::new(s).unwrap()
    }

    #[test]
    fn finds_what_was_inserted_and_forgets_what_was_removed() {
        let mut index = KeyIndex::default();
        assert!(index.is_empty());
        index.insert(key("a"), 3);
        index.insert(key(&"b".repeat(40)), 7);
        assert_eq!(index.get(&key("a")), Some(3));
        assert_eq!(index.get(&key(&"b".repeat(40))), Some(7));
        assert_eq!(index.get(&key("c")), None);
        index.insert(key("a"), 4);
        assert_eq!((index.get(&key("a")), index.len()), (Some(4), 2));
        index.remove(&key("a"));
        assert_eq!((index.get(&key("a")), index.len()), (None, 1));
        index.clear();
        assert!(index.is_empty());
    }

    #[test]
    fn agrees_with_an_ordered_map_through_growth_removal_and_clearing() {
        use std::collections::BTreeMap;
        let mut index = KeyIndex::default();
        let mut model: BTreeMap<Key, u32> = BTreeMap::new();
        // A deterministic walk that crosses SMALL both ways, reuses keys and clears.
        let mut x: u64 = 7;
        let (mut hashed, mut listed) = (0, 0);
        for step in 0..5_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = key(&format!("k{}", (x >> 33) % 24));
            match (x >> 60) % 8 {
                0..4 => {
                    index.insert(k.clone(), step);
                    model.insert(k, step);
                }
                4..7 => {
                    index.remove(&k);
                    model.remove(&k);
                }
                _ if step % 97 == 0 => {
                    index.clear();
                    model.clear();
                }
                _ => {}
            }
            assert_eq!(index.len(), model.len(), "step {step}");
            if index.large.is_empty() {
                listed += 1;
            } else {
                hashed += 1;
            }
            for i in 0..24 {
                let probe = key(&format!("k{i}"));
                assert_eq!(index.get(&probe), model.get(&probe).copied(), "step {step}");
            }
        }
        assert!(
            hashed > 100 && listed > 100,
            "{hashed} steps hashed, {listed} listed"
        );
    }

    #[test]
    fn debug_lists_keys_in_order_whatever_the_insertion_order() {
        let mut forward = KeyIndex::default();
        let mut backward = KeyIndex::default();
        let names: Vec<String> = (0..200).map(|i| format!("k{i:03}")).collect();
        for (i, n) in names.iter().enumerate() {
            forward.insert(key(n), i as u32);
        }
        for (i, n) in names.iter().enumerate().rev() {
            backward.insert(key(n), i as u32);
        }
        let shown = format!("{forward:?}");
        assert_eq!(shown, format!("{backward:?}"));
        assert!(
            shown.starts_with("{Key(\"k000\"): 0, Key(\"k001\"): 1"),
            "{shown}"
        );
    }
}
