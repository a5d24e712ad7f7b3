//! What a multi-get found: the values by key, in key order.

use std::collections::BTreeMap;

use super::{Key, Value};

/// The most entries a map looks through in turn rather than by binary search.
const SHORT: usize = 8;

/// The values a multi-get ([`super::Memcache::get_multi`]) found, by key, in key order;
/// a key asked for twice holds the value of its last hit.
///
/// A map as small as the keys of one request: a sorted list, looked up by binary search.
/// A recipe reads one on most calls, so it costs one allocation and frees each value with
/// the list (a `BTreeMap` of the same few entries inserts each one into a tree node and
/// walks the tree again to drop it). [`BTreeMap::from`] gives the tree where one is
/// wanted.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ValueMap {
    /// Sorted by key, each key once.
    entries: Vec<(Key, Value)>,
}

impl ValueMap {
    /// The map of `hits` as a server returns them (in the order of the keys asked for,
    /// misses left out): sorted by key, the last hit of a key kept.
    pub(crate) fn from_hits(mut entries: Vec<(Key, Value)>) -> ValueMap {
        // Most requests name their keys once each, in order.
        if entries.windows(2).all(|w| w[0].0 < w[1].0) {
            return ValueMap { entries };
        }
        // Stable: hits of one key stay in the order asked, and the last one is kept.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                std::mem::swap(later, kept);
            }
            same
        });
        ValueMap { entries }
    }

    /// Where `key` is: compared with each key in turn in a short list (an equality test
    /// is a few words), by binary search in a long one.
    fn find(&self, key: &Key) -> Option<usize> {
        if self.entries.len() <= SHORT {
            self.entries.iter().position(|(k, _)| k == key)
        } else {
            self.entries.binary_search_by(|(k, _)| k.cmp(key)).ok()
        }
    }

    /// The value of `key`, if it was found.
    pub fn get(&self, key: &Key) -> Option<&Value> {
        self.find(key).map(|i| &self.entries[i].1)
    }

    /// The value of `key`, to change or take.
    pub fn get_mut(&mut self, key: &Key) -> Option<&mut Value> {
        self.find(key).map(|i| &mut self.entries[i].1)
    }

    /// Takes the value of `key` out of the map.
    pub fn remove(&mut self, key: &Key) -> Option<Value> {
        self.find(key).map(|i| self.entries.remove(i).1)
    }

    /// True if `key` was found.
    pub fn contains_key(&self, key: &Key) -> bool {
        self.find(key).is_some()
    }

    /// How many keys were found.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True if none was.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The keys and values, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&Key, &Value)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// The keys found, in order.
    pub fn keys(&self) -> impl Iterator<Item = &Key> {
        self.entries.iter().map(|(k, _)| k)
    }

    /// The values, in the order of their keys.
    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.entries.iter().map(|(_, v)| v)
    }
}

impl IntoIterator for ValueMap {
    type Item = (Key, Value);
    type IntoIter = std::vec::IntoIter<(Key, Value)>;

    /// The keys and values, in key order.
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl From<ValueMap> for BTreeMap<Key, Value> {
    fn from(map: ValueMap) -> BTreeMap<Key, Value> {
        map.entries.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> Key {
        Key::new(s).unwrap()
    }

    #[test]
    fn holds_what_a_tree_map_fed_the_same_hits_holds() {
        // Out of order, a key twice (its last hit wins), long and short keys.
        let long = "k".repeat(40);
        let hits = [
            ("b", "1"),
            ("a", "2"),
            (long.as_str(), "3"),
            ("b", "4"),
            ("c", "5"),
        ];
        let entries: Vec<(Key, Value)> = hits
            .iter()
            .map(|(k, v)| (key(k), Value::from(*v)))
            .collect();
        let tree: BTreeMap<Key, Value> = entries.iter().cloned().collect();
        let mut map = ValueMap::from_hits(entries);
        assert_eq!(map.len(), tree.len());
        assert!(map.iter().eq(tree.iter()));
        assert!(map.keys().eq(tree.keys()));
        assert!(map.values().eq(tree.values()));
        for k in ["a", "b", "c", "d", long.as_str()] {
            assert_eq!(map.get(&key(k)), tree.get(&key(k)), "{k}");
            assert_eq!(map.contains_key(&key(k)), tree.contains_key(&key(k)));
        }
        assert_eq!(map.get(&key("b")), Some(&Value::from("4")));
        assert_eq!(BTreeMap::from(map.clone()), tree);
        map.get_mut(&key("a")).unwrap().data.push(b'!');
        assert_eq!(map.remove(&key("a")), Some(Value::from("2!")));
        assert_eq!((map.remove(&key("a")), map.len()), (None, 3));
        assert!(ValueMap::default().is_empty());
    }

    #[test]
    fn finds_every_key_of_a_long_map_and_no_other() {
        // Past the short list's length, in and out of order.
        for n in [SHORT, SHORT + 1, 40] {
            for reversed in [false, true] {
                let mut names: Vec<String> = (0..n).map(|i| format!("k{i:03}")).collect();
                if reversed {
                    names.reverse();
                }
                let entries = names.iter().map(|k| (key(k), Value::from(k.as_str())));
                let map = ValueMap::from_hits(entries.collect());
                assert!(map.keys().is_sorted());
                for k in &names {
                    assert_eq!(map.get(&key(k)), Some(&Value::from(k.as_str())));
                }
                assert_eq!(map.get(&key("k")), None);
                assert_eq!(map.get(&key("z")), None);
            }
        }
    }
}
