//! A server's items are walked in key order, whatever order they were stored, deleted and
//! evicted in: eviction choices, state fingerprints and final-state hashes all walk them,
//! and a trace must not depend on how the item table got where it is.

use std::collections::BTreeSet;
use std::time::Duration;

use mcsim::protocol::{Request, StoreMode};
use mcsim::{Exptime, Key, Server, VirtualTime};

fn key(i: u32) -> Key {
    Key::new(format!("item:{i:03}")).unwrap()
}

fn set(server: &mut Server, i: u32, now: VirtualTime) {
    let request = Request::Store {
        mode: StoreMode::Set,
        key: key(i),
        flags: 0,
        exptime: Exptime::NEVER,
        data: i.to_string().into_bytes(),
        noreply: false,
    };
    server.apply(request, now);
}

fn delete(server: &mut Server, i: u32, now: VirtualTime) {
    let request = Request::Delete {
        key: key(i),
        noreply: false,
    };
    server.apply(request, now);
}

/// Stores `keys` in the order given, then deletes every third of them and evicts every
/// fifth; returns the server, the time and the keys that should remain.
fn churned(keys: &[u32]) -> (Server, VirtualTime, BTreeSet<u32>) {
    let mut server = Server::with_defaults();
    let mut now = VirtualTime::ZERO;
    let mut left = BTreeSet::new();
    for &i in keys {
        now += Duration::from_millis(1);
        set(&mut server, i, now);
        left.insert(i);
    }
    for &i in keys {
        now += Duration::from_millis(1);
        if i % 3 == 0 {
            delete(&mut server, i, now);
            left.remove(&i);
        } else if i % 5 == 0 {
            server.evict(&key(i), now);
            left.remove(&i);
        }
    }
    (server, now, left)
}

#[test]
fn live_items_come_in_key_order_for_few_keys_and_for_many() {
    for n in [5, 8, 9, 60] {
        // A scrambled order: 37 is prime to every count used here.
        let keys: Vec<u32> = (0..n).map(|i| (i * 37 + 11) % n).collect();
        let (server, now, left) = churned(&keys);
        let walked: Vec<Key> = server.live_items(now).map(|(k, _)| k.clone()).collect();
        let expected: Vec<Key> = left.iter().map(|&i| key(i)).collect();
        assert_eq!(walked, expected, "{n} keys");
    }
}

#[test]
fn the_same_items_reached_in_different_orders_walk_alike() {
    for n in [6, 40] {
        let forward: Vec<u32> = (0..n).collect();
        let backward: Vec<u32> = (0..n).rev().collect();
        let (a, now_a, left_a) = churned(&forward);
        let (b, now_b, left_b) = churned(&backward);
        assert_eq!((left_a, now_a), (left_b, now_b));
        // Same keys with the same values, walked in the same order (the cas uniques and
        // LRU positions differ with the order the table was built in, and may).
        let walk = |s: &Server| -> Vec<(Key, Vec<u8>)> {
            s.items()
                .iter()
                .map(|(k, item)| (k.clone(), item.data.clone()))
                .collect()
        };
        let walked = walk(&a);
        assert_eq!(walked, walk(&b), "{n} keys");
        assert!(walked.windows(2).all(|w| w[0].0 < w[1].0), "{n} keys");
    }
}
