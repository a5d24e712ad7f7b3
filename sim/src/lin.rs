//! Linearizability checking (Wing & Gong's search with the memoization of Lowe and of
//! porcupine), partitioned per object.
//!
//! A history is linearizable if its operations can be ordered so that each takes effect
//! at one instant between its call and its return, and the order is a legal run of the
//! sequential specification. Operations whose outcome is unknown (a timeout) may take
//! effect at any time after their call, or never.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::hash::Hash;

use crate::history::Entry;

/// A sequential specification: a state machine over operations.
pub trait SequentialSpec {
    /// The state.
    type State: Clone + Eq + Hash + Ord + Debug;
    /// An operation.
    type Op: Clone + Debug;
    /// Its result.
    type Ret: Clone + Eq + Debug;

    /// The state before any operation.
    fn init(&self) -> Self::State;

    /// Applies `op` to `state`: the next state and what the operation returns.
    fn step(&self, state: &Self::State, op: &Self::Op) -> (Self::State, Self::Ret);

    /// True if `op` leaves every state as it is (a read). Optional: the search places
    /// such an operation the moment its result fits, without trying the others there,
    /// which a spec that says so finds much sooner on histories with many reads. The
    /// verdict does not depend on it, as long as it is true only of operations that
    /// never change a state (a write of the value already there changes nothing now,
    /// but would elsewhere: not a read).
    fn read_only(&self, _op: &Self::Op) -> bool {
        false
    }
}

/// Why a history is not linearizable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotLinearizable {
    /// The object whose history fails.
    pub object: String,
    /// The longest prefix of operations that could be linearized, as text.
    pub longest_prefix: Vec<String>,
    /// The operations that could not be placed after it.
    pub stuck: Vec<String>,
}

/// A history split by object.
type ByObject<'a, S> =
    BTreeMap<&'a str, Vec<&'a Entry<<S as SequentialSpec>::Op, <S as SequentialSpec>::Ret>>>;

/// Checks every object's history separately.
///
/// The search tries first the operations that returned first: they are the ones real
/// time pins soonest, and an operation placed early that could have waited costs a
/// search nothing, where one placed too late sends it back over every order of what came
/// between (on 16 clients incrementing a counter, call order took 300 times longer).
pub fn check<S: SequentialSpec>(
    spec: &S,
    history: &[Entry<S::Op, S::Ret>],
) -> Result<(), NotLinearizable> {
    check_ranked(spec, history, |e| e.returned)
}

/// [`check`], with the search trying the operations that may take effect next in the
/// order of `rank` (lowest first, ties in call order) instead of by their returns.
///
/// The verdict is [`check`]'s: the search is as exhaustive, only the order in which it
/// tries the operations differs, and with it how soon it finds a linearization. A rank
/// drawn from what the history already says about its own order (where each operation's
/// effect sits in a final state, say) leads the search straight to it, where call order
/// may try every order of many concurrent operations first: with eight writers
/// appending to one array, that is tens of thousands of distinct states.
pub fn check_ranked<S: SequentialSpec, K: Ord>(
    spec: &S,
    history: &[Entry<S::Op, S::Ret>],
    rank: impl Fn(&Entry<S::Op, S::Ret>) -> K,
) -> Result<(), NotLinearizable> {
    // Fast path: most histories of a passing run are linearizable in call order.
    if fits_in_call_order(spec, history) {
        return Ok(());
    }
    let mut objects: ByObject<'_, S> = BTreeMap::new();
    for e in history {
        objects.entry(e.object.as_str()).or_default().push(e);
    }
    for (object, entries) in objects {
        let ranks: Vec<K> = entries.iter().map(|e| rank(e)).collect();
        check_object(spec, object, &entries, &ranks)?;
    }
    Ok(())
}

/// True if taking effect in call order (each operation an instant after its call, which
/// respects real time: an operation that returned before another was called was also
/// called before it) explains every known result, with every operation of unknown outcome
/// taking effect. A shortcut, not a verdict: false sends the history to the full search.
fn fits_in_call_order<S: SequentialSpec>(spec: &S, history: &[Entry<S::Op, S::Ret>]) -> bool {
    if !history.windows(2).all(|w| w[0].call <= w[1].call) {
        return false;
    }
    // Objects are independent: stepping one state per object in call order is the
    // per-object call order.
    let mut states: Vec<(&str, S::State)> = Vec::new();
    for e in history {
        let i = match states.iter().position(|(o, _)| *o == e.object) {
            Some(i) => i,
            None => {
                states.push((e.object.as_str(), spec.init()));
                states.len() - 1
            }
        };
        let (next, ret) = spec.step(&states[i].1, &e.op);
        if e.ret.as_ref().is_some_and(|want| *want != ret) {
            return false;
        }
        states[i].1 = next;
    }
    true
}

fn describe<Op: Debug, Ret: Debug>(e: &Entry<Op, Ret>) -> String {
    match &e.ret {
        Some(r) => format!("c{} {:?} -> {:?}", e.client, e.op, r),
        None => format!("c{} {:?} -> (unknown)", e.client, e.op),
    }
}

fn check_object<S: SequentialSpec, K: Ord>(
    spec: &S,
    object: &str,
    entries: &[&Entry<S::Op, S::Ret>],
    ranks: &[K],
) -> Result<(), NotLinearizable> {
    let n = entries.len();
    let mut done = vec![0u64; n.div_ceil(64).max(1)];
    // Operations not yet placed, by call and by return: the earliest return among them
    // bounds which operations may be linearized next.
    let mut by_call: BTreeSet<(u64, usize)> = (0..n).map(|i| (entries[i].call, i)).collect();
    let mut by_return: BTreeSet<(u64, usize)> = (0..n).map(|i| (entries[i].returned, i)).collect();
    let mut required_left = entries.iter().filter(|e| e.ret.is_some()).count();
    let mut seen: BTreeSet<(Vec<u64>, S::State)> = BTreeSet::new();
    let mut state = spec.init();
    let mut placed: Vec<usize> = Vec::new();
    let mut best: Vec<usize> = Vec::new();

    struct Frame<St> {
        candidates: Vec<usize>,
        next: usize,
        before: Option<(usize, St)>,
    }
    // The order the ranks ask for (ties in call order), and each operation's place in it.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        ranks[a]
            .cmp(&ranks[b])
            .then(entries[a].call.cmp(&entries[b].call))
    });
    let mut place = vec![0; n];
    for (p, &i) in order.iter().enumerate() {
        place[i] = p;
    }
    let placed_bit = |done: &[u64], i: usize| done[i / 64] & (1 << (i % 64)) != 0;
    // The operations that may take effect next, in the order they are tried: first the
    // one that follows the ranks most closely (the first unplaced in rank order, or, if
    // real time does not allow it yet, the first in rank order of those that must come
    // before it, and so on), then the others in rank order. Ranked by return, that is
    // plain return order: the first unplaced return is always allowed.
    let candidates =
        |by_call: &BTreeSet<(u64, usize)>, by_return: &BTreeSet<(u64, usize)>, done: &[u64]| {
            let horizon = by_return.first().map(|r| r.0).unwrap_or(u64::MAX);
            let mut next: Vec<usize> = by_call
                .iter()
                .take_while(|(call, _)| *call <= horizon)
                .map(|c| c.1)
                .collect();
            next.sort_by_key(|&i| place[i]);
            // The first unplaced operation in rank order that returned before `before`.
            let unplaced = |before: Option<u64>| {
                order.iter().copied().find(|&i| {
                    !placed_bit(done, i) && before.is_none_or(|t| entries[i].returned < t)
                })
            };
            if let Some(mut want) = unplaced(None) {
                // Each step goes to an operation that returned before the last one's call:
                // it ends, at one that is allowed (the horizon is an unplaced return).
                while entries[want].call > horizon {
                    match unplaced(Some(entries[want].call)) {
                        Some(earlier) => want = earlier,
                        None => break,
                    }
                }
                if let Some(at) = next.iter().position(|&i| i == want) {
                    next[..=at].rotate_right(1);
                }
            }
            next
        };
    let mut stack = vec![Frame {
        candidates: candidates(&by_call, &by_return, &done),
        next: 0,
        before: None,
    }];
    while let Some(top) = stack.last_mut() {
        if required_left == 0 {
            return Ok(());
        }
        if top.next < top.candidates.len() {
            let i = top.candidates[top.next];
            top.next += 1;
            let (next, ret) = spec.step(&state, &entries[i].op);
            if let Some(want) = &entries[i].ret
                && *want != ret
            {
                continue;
            }
            // A read whose result fits goes here and no other choice is tried: a
            // linearization from here that places it later is still one with it moved
            // here (what it must follow is placed, what must follow it is only helped,
            // and it changes no state in between). So if taking it here fails, or failed
            // here before (the memo), so does every other choice here.
            if spec.read_only(&entries[i].op) {
                top.next = top.candidates.len();
            }
            done[i / 64] |= 1 << (i % 64);
            if !seen.insert((done.clone(), next.clone())) {
                done[i / 64] &= !(1 << (i % 64));
                continue;
            }
            by_call.remove(&(entries[i].call, i));
            by_return.remove(&(entries[i].returned, i));
            if entries[i].ret.is_some() {
                required_left -= 1;
            }
            placed.push(i);
            if placed.len() > best.len() {
                best = placed.clone();
            }
            let before = std::mem::replace(&mut state, next);
            stack.push(Frame {
                candidates: candidates(&by_call, &by_return, &done),
                next: 0,
                before: Some((i, before)),
            });
        } else {
            let frame = stack.pop().expect("non-empty");
            if let Some((i, before)) = frame.before {
                state = before;
                done[i / 64] &= !(1 << (i % 64));
                by_call.insert((entries[i].call, i));
                by_return.insert((entries[i].returned, i));
                if entries[i].ret.is_some() {
                    required_left += 1;
                }
                placed.pop();
            }
        }
    }
    if required_left == 0 {
        return Ok(());
    }
    let in_best: BTreeSet<usize> = best.iter().copied().collect();
    Err(NotLinearizable {
        object: object.to_string(),
        longest_prefix: best.iter().map(|&i| describe(entries[i])).collect(),
        stuck: (0..n)
            .filter(|i| !in_best.contains(i))
            .map(|i| describe(entries[i]))
            .collect(),
    })
}

/// A counter: `Add(d)` returns nothing, `Read` returns the value.
#[derive(Debug, Clone, Copy, Default)]
pub struct CounterSpec;

/// Operations of [`CounterSpec`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CounterOp {
    /// Add to the counter.
    Add(u64),
    /// Read it.
    Read,
}

impl SequentialSpec for CounterSpec {
    type State = u64;
    type Op = CounterOp;
    type Ret = Option<u64>;

    fn init(&self) -> u64 {
        0
    }

    fn step(&self, state: &u64, op: &CounterOp) -> (u64, Option<u64>) {
        match op {
            CounterOp::Add(d) => (state + d, None),
            CounterOp::Read => (*state, Some(*state)),
        }
    }

    fn read_only(&self, op: &CounterOp) -> bool {
        matches!(op, CounterOp::Read)
    }
}

/// A register: `Write(v)`, `Read` returns the last value written (or `None`).
#[derive(Debug, Clone, Copy, Default)]
pub struct RegisterSpec;

/// Operations of [`RegisterSpec`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegisterOp {
    /// Write a value.
    Write(String),
    /// Read.
    Read,
}

impl SequentialSpec for RegisterSpec {
    type State = Option<String>;
    type Op = RegisterOp;
    type Ret = Option<String>;

    fn init(&self) -> Option<String> {
        None
    }

    fn step(&self, state: &Option<String>, op: &RegisterOp) -> (Option<String>, Option<String>) {
        match op {
            RegisterOp::Write(v) => (Some(v.clone()), None),
            RegisterOp::Read => (state.clone(), state.clone()),
        }
    }

    fn read_only(&self, op: &RegisterOp) -> bool {
        matches!(op, RegisterOp::Read)
    }
}

/// A lock: `Acquire` returns whether it got the lock, `Release` always succeeds.
#[derive(Debug, Clone, Copy, Default)]
pub struct LockSpec;

/// Operations of [`LockSpec`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockOp {
    /// Try to take the lock.
    TryAcquire,
    /// Release it.
    Release,
}

impl SequentialSpec for LockSpec {
    type State = bool;
    type Op = LockOp;
    type Ret = bool;

    fn init(&self) -> bool {
        false
    }

    fn step(&self, held: &bool, op: &LockOp) -> (bool, bool) {
        match op {
            LockOp::TryAcquire if *held => (true, false),
            LockOp::TryAcquire => (true, true),
            LockOp::Release => (false, true),
        }
    }
}

/// A set of strings: `Add`, `Remove`, `Items` (returns the sorted members).
#[derive(Debug, Clone, Copy, Default)]
pub struct SetSpec;

/// Operations of [`SetSpec`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetOp {
    /// Add a member.
    Add(String),
    /// Remove a member.
    Remove(String),
    /// List the members.
    Items,
}

impl SequentialSpec for SetSpec {
    type State = BTreeSet<String>;
    type Op = SetOp;
    type Ret = Option<Vec<String>>;

    fn init(&self) -> BTreeSet<String> {
        BTreeSet::new()
    }

    fn step(&self, s: &BTreeSet<String>, op: &SetOp) -> (BTreeSet<String>, Option<Vec<String>>) {
        let mut s = s.clone();
        match op {
            SetOp::Add(m) => {
                s.insert(m.clone());
                (s, None)
            }
            SetOp::Remove(m) => {
                s.remove(m);
                (s, None)
            }
            SetOp::Items => {
                let items = s.iter().cloned().collect();
                (s, Some(items))
            }
        }
    }

    fn read_only(&self, op: &SetOp) -> bool {
        matches!(op, SetOp::Items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(
        client: usize,
        op: CounterOp,
        ret: Option<Option<u64>>,
        call: u64,
        returned: u64,
    ) -> Entry<CounterOp, Option<u64>> {
        Entry {
            client,
            object: "c".into(),
            op,
            ret,
            call,
            returned,
        }
    }

    #[test]
    fn concurrent_reads_may_see_either_order() {
        let h = vec![
            e(0, CounterOp::Add(1), Some(None), 1, 4),
            e(1, CounterOp::Read, Some(Some(1)), 2, 3),
            e(2, CounterOp::Read, Some(Some(0)), 2, 5),
        ];
        assert!(check(&CounterSpec, &h).is_ok());
    }

    #[test]
    fn a_read_after_a_completed_add_must_see_it() {
        let h = vec![
            e(0, CounterOp::Add(1), Some(None), 1, 2),
            e(1, CounterOp::Read, Some(Some(0)), 3, 4),
        ];
        let err = check(&CounterSpec, &h).unwrap_err();
        assert_eq!(err.object, "c");
        assert_eq!(err.stuck.len(), 1);
    }

    #[test]
    fn an_unknown_outcome_may_or_may_not_apply() {
        let h = vec![
            e(0, CounterOp::Add(1), None, 1, u64::MAX),
            e(1, CounterOp::Read, Some(Some(1)), 2, 3),
            e(1, CounterOp::Read, Some(Some(1)), 4, 5),
        ];
        assert!(check(&CounterSpec, &h).is_ok());
        let h2 = vec![
            e(0, CounterOp::Add(1), None, 1, u64::MAX),
            e(1, CounterOp::Read, Some(Some(0)), 2, 3),
        ];
        assert!(check(&CounterSpec, &h2).is_ok());
    }
}
