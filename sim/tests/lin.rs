//! Properties of the linearizability checker.
//!
//! A history made by applying operations atomically at instants inside their intervals is
//! always accepted; a history whose operations do not overlap and one of whose reads
//! returns a wrong value is always rejected.

use mcsim::history::Entry;
use mcsim::lin::{self, CounterOp, CounterSpec, SequentialSpec};
use quickcheck::{Arbitrary, Gen, quickcheck};

/// One operation of a generated history: which client, read or add, and how far its
/// interval stretches around its linearization point.
#[derive(Debug, Clone)]
struct Op {
    client: u8,
    read: bool,
    delta: u8,
    before: u8,
    after: u8,
    unknown: bool,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Op {
        Op {
            client: u8::arbitrary(g) % 4,
            read: bool::arbitrary(g),
            delta: u8::arbitrary(g) % 5,
            before: u8::arbitrary(g) % 15,
            after: u8::arbitrary(g) % 15,
            unknown: u8::arbitrary(g) % 10 == 0,
        }
    }
}

/// Applies the ops in order at instants 10, 20, 30…; with `spread` each op's call and
/// return lie up to 14 units around its instant, so intervals overlap.
fn history(ops: &[Op], spread: bool) -> Vec<Entry<CounterOp, Option<u64>>> {
    let mut state = CounterSpec.init();
    ops.iter()
        .enumerate()
        .map(|(i, o)| {
            let op = if o.read {
                CounterOp::Read
            } else {
                CounterOp::Add(u64::from(o.delta))
            };
            let (next, ret) = CounterSpec.step(&state, &op);
            state = next;
            let at = 20 * (i as u64 + 1);
            let (b, a) = if spread {
                (u64::from(o.before), u64::from(o.after))
            } else {
                (1, 1)
            };
            let unknown = o.unknown && !o.read;
            Entry {
                client: usize::from(o.client),
                object: "c".into(),
                op,
                ret: (!unknown).then_some(ret),
                call: at - b,
                returned: if unknown { u64::MAX } else { at + a },
            }
        })
        .collect()
}

quickcheck! {
    fn histories_from_atomic_executions_are_linearizable(ops: Vec<Op>) -> bool {
        let ops: Vec<Op> = ops.into_iter().take(40).collect();
        lin::check(&CounterSpec, &history(&ops, true)).is_ok()
    }

    fn a_wrong_read_in_a_sequential_history_is_caught(ops: Vec<Op>, pick: usize, off: u8) -> bool {
        let mut ops: Vec<Op> = ops.into_iter().take(30).collect();
        for o in &mut ops {
            o.unknown = false;
        }
        let mut h = history(&ops, false);
        let reads: Vec<usize> = (0..h.len()).filter(|&i| h[i].op == CounterOp::Read).collect();
        if reads.is_empty() {
            return true;
        }
        let i = reads[pick % reads.len()];
        if let Some(Some(v)) = h[i].ret {
            h[i].ret = Some(Some(v + 1 + u64::from(off % 3)));
        }
        lin::check(&CounterSpec, &h).is_err()
    }
}
