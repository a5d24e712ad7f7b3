//! What the runs of a program covered, as a figure a user can compare between runs: the
//! orders of conflicting command pairs seen. Two commands conflict when they are on the
//! same key, of different participants, and one of them may write; each such pair can
//! run in two orders, and a bug of interleaving needs one of them. A command is named by
//! its participant, its key and how many commands that participant made on that key
//! before it, so the same pair is recognised from run to run.

use std::collections::BTreeMap;

use mcsim_serve::Exchange;

/// The commands of a key a run's figure looks at, from its first (a loop that retries
/// hundreds of times adds pairs of the same few commands).
const PER_KEY: usize = 256;

/// A command, as the figure names it: participant, key, and its place among that
/// participant's commands on the key.
type Label = (u32, u32, u32);

/// The pairs of conflicting commands seen over the runs, and the orders each ran in.
#[derive(Default)]
pub(super) struct Coverage {
    /// Participants' and keys' numbers, in the order first seen.
    names: BTreeMap<String, u32>,
    keys: BTreeMap<Vec<u8>, u32>,
    /// By pair (the smaller label first), the orders seen: bit 1 the smaller first, bit 2
    /// the other.
    pairs: BTreeMap<(Label, Label), u8>,
}

/// The figure, as reports give it.
#[derive(serde::Serialize, Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(super) struct Figure {
    /// Orders of conflicting pairs seen.
    pub(super) orders_seen: u64,
    /// Orders possible of the pairs seen: two each.
    pub(super) orders_possible: u64,
    /// Keys some pair conflicted on.
    pub(super) keys: u64,
}

impl Figure {
    /// The figure in words: `412 of 630 orders of conflicting command pairs (65.4%) on 3
    /// keys`.
    pub(super) fn line(&self) -> String {
        if self.orders_possible == 0 {
            return "no conflicting command pairs (no key two participants used, one of them writing)".into();
        }
        let share = 100.0 * self.orders_seen as f64 / self.orders_possible as f64;
        format!(
            "{} of {} orders of conflicting command pairs ({share:.1}%) on {} key{}",
            self.orders_seen,
            self.orders_possible,
            self.keys,
            if self.keys == 1 { "" } else { "s" }
        )
    }
}

impl Coverage {
    /// Adds a run's commands, in the order they ran.
    pub(super) fn add(&mut self, exchanges: &[Exchange]) {
        let mut by_key: BTreeMap<u32, Vec<(Label, bool)>> = BTreeMap::new();
        let mut made: BTreeMap<(u32, u32), u32> = BTreeMap::new();
        for e in exchanges {
            let next = self.names.len() as u32;
            let who = *self.names.entry(e.who.clone()).or_insert(next);
            for k in &e.keys {
                let next = self.keys.len() as u32;
                let key = *self.keys.entry(k.clone()).or_insert(next);
                let nth = made.entry((who, key)).or_default();
                let commands = by_key.entry(key).or_default();
                if commands.len() < PER_KEY {
                    commands.push(((who, key, *nth), e.write));
                }
                *nth += 1;
            }
        }
        for commands in by_key.values() {
            for (i, &(first, first_writes)) in commands.iter().enumerate() {
                for &(then, then_writes) in &commands[i + 1..] {
                    if first.0 == then.0 || !(first_writes || then_writes) {
                        continue;
                    }
                    let (pair, order) = if first < then {
                        ((first, then), 1)
                    } else {
                        ((then, first), 2)
                    };
                    *self.pairs.entry(pair).or_default() |= order;
                }
            }
        }
    }

    /// The figure so far.
    pub(super) fn figure(&self) -> Figure {
        let keys: std::collections::BTreeSet<u32> = self.pairs.keys().map(|(a, _)| a.1).collect();
        Figure {
            orders_seen: self.pairs.values().map(|o| u64::from(o.count_ones())).sum(),
            orders_possible: 2 * self.pairs.len() as u64,
            keys: keys.len() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(who: &str, key: &str, write: bool) -> Exchange {
        Exchange {
            who: who.into(),
            at_us: 0,
            server: 0,
            keys: vec![key.as_bytes().to_vec()],
            write,
            request: String::new(),
            reply: String::new(),
            lost: false,
        }
    }

    #[test]
    fn a_pair_counts_once_per_order_and_reads_alone_never_conflict() {
        let mut c = Coverage::default();
        // t0 writes k, then t1 reads it; both read j; t0's own commands never pair.
        let run = [
            access("t0", "k", true),
            access("t1", "k", false),
            access("t0", "j", false),
            access("t1", "j", false),
            access("t0", "k", true),
        ];
        c.add(&run);
        let f = c.figure();
        // Pairs: (t0 k#0, t1 k#0), (t1 k#0, t0 k#1), each seen in one order.
        assert_eq!((f.orders_seen, f.orders_possible, f.keys), (2, 4, 1));
        // The same run again adds nothing; the other order of the first pair adds one.
        c.add(&run);
        assert_eq!(c.figure().orders_seen, 2);
        c.add(&[access("t1", "k", false), access("t0", "k", true)]);
        let f = c.figure();
        assert_eq!((f.orders_seen, f.orders_possible), (3, 4));
        assert_eq!(
            f.line(),
            "3 of 4 orders of conflicting command pairs (75.0%) on 1 key"
        );
    }
}
