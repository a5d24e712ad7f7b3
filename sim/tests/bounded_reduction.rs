//! The sleep-set reduction under a preemption bound covers every order the bound lets the
//! unreduced search reach: checked on small systems of clients whose steps read or write
//! keys, driven through the `Strategy` interface as the engine drives it.

use std::collections::BTreeSet;

use mcsim::clock::VirtualTime;
use mcsim::exhaustive::Dfs;
use mcsim::explore::{CallOption, Choice, Footprint, Options, Strategy};

/// A step of a client: a key and whether it writes it.
type Step = (u64, bool);

/// One execution's order, up to swapping independent steps: for each key, its accesses
/// in order, a run of reads between two writes kept as a set.
type Class = Vec<Vec<BTreeSet<(usize, usize)>>>;

/// Every class of execution `search` reaches on `clients`, and how many executions it ran.
fn classes(clients: &[Vec<Step>], keys: usize, mut search: Dfs) -> (BTreeSet<Class>, u64) {
    let mut reached = BTreeSet::new();
    let mut runs = 0;
    loop {
        runs += 1;
        search.begin(runs);
        let mut next = vec![0; clients.len()];
        let mut order: Vec<(usize, usize)> = Vec::new();
        let mut cut_short = false;
        for step in 0.. {
            let calls: Vec<CallOption> = (0..clients.len())
                .filter(|&c| next[c] < clients[c].len())
                .map(|c| {
                    let (key, write) = clients[c][next[c]];
                    CallOption {
                        client: c,
                        earliest: VirtualTime(step),
                        latest: VirtualTime(step),
                        footprint: Some(Footprint {
                            server: 0,
                            keys: vec![key],
                            read_only: !write,
                        }),
                        edges: Vec::new(),
                    }
                })
                .collect();
            if calls.is_empty() {
                break;
            }
            let options = Options {
                step,
                clients: clients.len(),
                calls: &calls,
                faults: &[],
                eviction_possible: false,
                state: None,
                ranks: None,
                summarized: false,
            };
            let choice = match search.decided() {
                Some(decided) => Some(decided.choice),
                None => search.choose(&options),
            };
            let Some(Choice::Run { client, .. }) = choice else {
                cut_short = true;
                break;
            };
            order.push((client, next[client]));
            next[client] += 1;
        }
        if !cut_short {
            reached.insert(class_of(clients, keys, &order));
        }
        if !search.end(false) {
            return (reached, runs);
        }
    }
}

fn class_of(clients: &[Vec<Step>], keys: usize, order: &[(usize, usize)]) -> Class {
    let mut class: Class = vec![Vec::new(); keys];
    for &(c, i) in order {
        let (key, write) = clients[c][i];
        let accesses = &mut class[key as usize];
        let read_run = accesses
            .last()
            .is_some_and(|last| last.iter().all(|&(c, i)| !clients[c][i].1));
        if !write && read_run {
            accesses.last_mut().expect("a run").insert((c, i));
        } else {
            accesses.push(BTreeSet::from([(c, i)]));
        }
    }
    class
}

/// A small system drawn from `seed`: 2 or 3 clients of 2 to 4 steps on 2 keys.
fn system(seed: u64) -> Vec<Vec<Step>> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut draw = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let clients = 2 + draw(2) as usize;
    (0..clients)
        .map(|_| {
            let steps = 2 + draw(3) as usize;
            (0..steps).map(|_| (draw(2), draw(3) > 0)).collect()
        })
        .collect()
}

#[test]
fn the_reduced_search_within_a_preemption_bound_reaches_every_order_the_unreduced_one_does() {
    let (mut plain_runs, mut reduced_runs) = (0, 0);
    for seed in 0..300 {
        let clients = system(seed);
        for bound in [0, 1, 2] {
            let (plain, p) = classes(&clients, 2, Dfs::new(Some(bound), false));
            let (reduced, r) = classes(&clients, 2, Dfs::new(Some(bound), true));
            let missed: Vec<_> = plain.difference(&reduced).collect();
            assert!(
                missed.is_empty(),
                "system {seed} {clients:?}, bound {bound}: the reduced search missed {missed:?}"
            );
            plain_runs += p;
            reduced_runs += r;
        }
    }
    // The reduction still reduces, if less than without a bound, where it may take
    // every explored subtree as covering.
    assert!(reduced_runs < plain_runs, "{reduced_runs} of {plain_runs}");
}

#[test]
fn the_reduced_search_without_a_bound_reaches_every_order() {
    let (mut plain_runs, mut reduced_runs) = (0, 0);
    for seed in 0..100 {
        let clients = system(seed);
        let (plain, p) = classes(&clients, 2, Dfs::new(None, false));
        let (reduced, r) = classes(&clients, 2, Dfs::new(None, true));
        assert_eq!(plain, reduced, "system {seed} {clients:?}");
        plain_runs += p;
        reduced_runs += r;
    }
    assert!(
        reduced_runs * 2 < plain_runs,
        "{reduced_runs} of {plain_runs}"
    );
}
