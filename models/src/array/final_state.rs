//! What the array's end checks need beyond the search over orders ([`lin`]): whether
//! the array found at quiescence can be explained at all (`array.no_lost_updates`), and
//! the order in which both checks search.
//!
//! The search costs the number of distinct arrays the changes can build, which grows
//! with the factorial of concurrent writers: at eight writers, in call order, one
//! execution's checks took from 70 ms (every change explained) to most of a second (a
//! change lost). What the final array already says decides most failing executions before
//! any search: an element a completed change appended and no change removes must be
//! there, and no element can be there more often than the changes append it. The rest
//! are searched in the order the fetches and the final array saw the elements, so that a
//! history that has an order finds it first.

use std::collections::BTreeMap;

use mcsim::history::Entry;
use mcsim::lin;

use crate::array::spec::{ArrayOp, ArraySpec};

type ArrayEntry = Entry<ArrayOp, Option<Vec<String>>>;

/// True if some sequential application of `changes` (each completed one exactly once,
/// each of unknown outcome once or not at all, in an order their real time allows), then
/// the fetch that ends them, gives `array`: [`lin::check`] on that history, with the
/// same verdict.
pub(crate) fn explained(changes: &[ArrayEntry], array: &[String]) -> bool {
    if cannot_be_explained(changes, array) {
        return false;
    }
    Ranks::check(changes, array).is_ok()
}

/// True if no order of `changes` can end in `array`, by what any order must keep: an
/// element a completed change appends and no change removes is there at the end
/// ([`lost`] finds none missing), and an element is there at most as often as the
/// changes append it (each at most once).
fn cannot_be_explained(changes: &[ArrayEntry], array: &[String]) -> bool {
    let appended = |x: &String| {
        changes
            .iter()
            .map(|e| match &e.op {
                ArrayOp::Change { add, .. } => add.iter().filter(|a| *a == x).count(),
                ArrayOp::Fetch => 0,
            })
            .sum::<usize>()
    };
    !lost(changes, array).is_empty()
        || array
            .iter()
            .any(|x| array.iter().filter(|y| *y == x).count() > appended(x))
}

/// The elements a completed change of `history` appended, that no change removes,
/// missing from `array`: any order of the changes would have kept them, so each proves
/// that none gives `array` (and counts as lost in the failure's figures).
pub(crate) fn lost(history: &[ArrayEntry], array: &[String]) -> Vec<String> {
    let removed = |x: &String| {
        history.iter().any(|e| match &e.op {
            ArrayOp::Change { delete, .. } => delete.contains(x),
            ArrayOp::Fetch => false,
        })
    };
    history
        .iter()
        .filter(|e| e.ret.is_some())
        .flat_map(|e| match &e.op {
            ArrayOp::Change { add, .. } => add.as_slice(),
            ArrayOp::Fetch => &[],
        })
        .filter(|a| !removed(a) && !array.contains(a))
        .cloned()
        .collect()
}

/// Where the search tries each operation, after what the fetches of the history (by
/// return) and the array at the end saw: a change where what it appended was first seen,
/// a fetch after everything it was the first to see. A change whose elements nothing saw
/// comes just before the change that removed them, or first when none did; one of unknown
/// outcome that nothing saw (which probably never applied), last.
pub(crate) struct Ranks {
    /// Each element seen, with the first fetch that saw it and its place there.
    seen: BTreeMap<String, (usize, usize)>,
    /// Each element a change removes, with where the search tries that change.
    removed_by: BTreeMap<String, (usize, usize)>,
    /// Each fetch's place among the fetches, by its call and return.
    fetches: BTreeMap<(u64, u64), usize>,
}

impl Ranks {
    /// The ranks of `history`'s operations, `array` holding at the end.
    pub(crate) fn new(history: &[ArrayEntry], array: &[String]) -> Ranks {
        let mut fetched: Vec<(&ArrayEntry, &[String])> = history
            .iter()
            .filter_map(|e| match (&e.op, &e.ret) {
                (ArrayOp::Fetch, Some(Some(seen))) => Some((e, seen.as_slice())),
                _ => None,
            })
            .collect();
        // Stable: fetches that returned together stay in call order.
        fetched.sort_by_key(|f| f.0.returned);
        let mut seen = BTreeMap::new();
        let mut fetches = BTreeMap::new();
        let at_end = std::iter::once(array);
        for (i, elements) in fetched.iter().map(|f| f.1).chain(at_end).enumerate() {
            for (place, x) in elements.iter().enumerate() {
                seen.entry(x.clone()).or_insert((i, place));
            }
        }
        for (i, (e, _)) in fetched.iter().enumerate() {
            fetches.entry((e.call, e.returned)).or_insert(i);
        }
        let mut removed_by = BTreeMap::new();
        for e in history {
            if let ArrayOp::Change { add, delete } = &e.op
                && let Some(at) = add.iter().filter_map(|a| seen.get(a)).min()
            {
                for d in delete {
                    removed_by.entry(d.clone()).or_insert(*at);
                }
            }
        }
        Ranks {
            seen,
            removed_by,
            fetches,
        }
    }

    /// [`lin::check_ranked`] of `history` by these ranks, `array` holding at the end;
    /// the ranks are worked out only if the history reaches the search (most are
    /// linearizable in call order, which the check tries first).
    pub(crate) fn check(
        history: &[ArrayEntry],
        array: &[String],
    ) -> Result<(), lin::NotLinearizable> {
        let ranks = std::cell::OnceCell::new();
        lin::check_ranked(&ArraySpec, history, |e| {
            ranks.get_or_init(|| Ranks::new(history, array)).of(e)
        })
    }

    /// Where the search tries `e` (lowest first).
    pub(crate) fn of(&self, e: &ArrayEntry) -> (usize, usize, bool) {
        let ArrayOp::Change { add, .. } = &e.op else {
            return match self.fetches.get(&(e.call, e.returned)) {
                Some(&i) => (i, usize::MAX, true),
                None => (usize::MAX, usize::MAX, true),
            };
        };
        if let Some(&(fetch, place)) = add.iter().filter_map(|a| self.seen.get(a)).min() {
            return (fetch, place, true);
        }
        match add.iter().filter_map(|a| self.removed_by.get(a)).min() {
            Some(&(fetch, place)) => (fetch, place, false),
            None if e.ret.is_some() => (0, 0, false),
            None => (usize::MAX, usize::MAX, true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draw::Draw;

    fn change(
        client: usize,
        add: &[&str],
        delete: &[&str],
        call: u64,
        ret: Option<u64>,
    ) -> ArrayEntry {
        Entry {
            client,
            object: "array".into(),
            op: ArrayOp::Change {
                add: add.iter().map(|s| s.to_string()).collect(),
                delete: delete.iter().map(|s| s.to_string()).collect(),
            },
            ret: ret.map(|_| None),
            call,
            returned: ret.unwrap_or(u64::MAX),
        }
    }

    fn with_end(mut changes: Vec<ArrayEntry>, array: &[&str]) -> (Vec<ArrayEntry>, Vec<String>) {
        let array: Vec<String> = array.iter().map(|s| s.to_string()).collect();
        changes.push(Entry {
            client: usize::MAX,
            object: "array".into(),
            op: ArrayOp::Fetch,
            ret: Some(Some(array.clone())),
            call: 1000,
            returned: 1001,
        });
        (changes, array)
    }

    /// Both ways of deciding give one verdict.
    fn decide(changes: Vec<ArrayEntry>, array: &[&str]) -> bool {
        let (history, array) = with_end(changes, array);
        let verdict = explained(&history, &array);
        assert_eq!(verdict, lin::check(&ArraySpec, &history).is_ok());
        verdict
    }

    #[test]
    fn concurrent_changes_explain_their_appends_in_either_order() {
        let changes = || {
            vec![
                change(0, &["a"], &[], 1, Some(10)),
                change(1, &["b"], &[], 2, Some(9)),
            ]
        };
        assert!(decide(changes(), &["a", "b"]));
        assert!(decide(changes(), &["b", "a"]));
    }

    #[test]
    fn a_lost_append_is_not_explained() {
        let changes = vec![
            change(0, &["a"], &[], 1, Some(10)),
            change(1, &["b"], &[], 2, Some(9)),
        ];
        let (history, array) = with_end(changes, &["b"]);
        assert!(cannot_be_explained(&history, &array));
        assert!(!decide(history[..2].to_vec(), &["b"]));
    }

    #[test]
    fn an_element_appended_once_and_found_twice_is_not_explained() {
        let changes = vec![change(0, &["a"], &[], 1, Some(10))];
        let (history, array) = with_end(changes.clone(), &["a", "a"]);
        assert!(cannot_be_explained(&history, &array));
        assert!(!decide(changes, &["a", "a"]));
    }

    #[test]
    fn a_removed_element_may_be_missing_and_an_unknown_change_may_not_have_applied() {
        let changes = || {
            vec![
                change(0, &["a"], &[], 1, Some(2)),
                change(0, &["c"], &["a"], 3, Some(4)),
                change(1, &["b"], &[], 1, None),
            ]
        };
        assert!(decide(changes(), &["c"]));
        assert!(decide(changes(), &["b", "c"]));
        assert!(decide(changes(), &["c", "b"]));
        // Before its call, the unknown change cannot have applied.
        assert!(!decide(
            vec![
                change(0, &["a"], &[], 1, Some(2)),
                change(1, &["b"], &[], 3, None)
            ],
            &["b", "a"]
        ));
    }

    #[test]
    fn the_real_time_order_binds_where_the_array_does_not() {
        // a returned before b was called: b cannot come first.
        let changes = vec![
            change(0, &["a"], &[], 1, Some(2)),
            change(1, &["b"], &[], 3, Some(4)),
        ];
        assert!(!decide(changes, &["b", "a"]));
    }

    #[test]
    fn ranks_follow_what_the_fetches_and_the_final_array_saw() {
        let fetch = |seen: &[&str], call, returned| Entry {
            client: 9,
            object: "array".into(),
            op: ArrayOp::Fetch,
            ret: Some(Some(seen.iter().map(|s| s.to_string()).collect())),
            call,
            returned,
        };
        let history = vec![
            change(0, &["a"], &[], 1, Some(4)),
            change(1, &["b"], &[], 2, Some(9)),
            fetch(&["a"], 5, 6),
            change(0, &["c"], &["a"], 7, Some(8)),
            change(2, &["d"], &[], 3, None),
            change(3, &["e"], &[], 3, Some(5)),
            fetch(&["x"], 10, 20),
        ];
        let ranks = Ranks::new(&history, &["b".into(), "c".into()]);
        let [a, b, first, c, unknown, unseen, missed] =
            [0, 1, 2, 3, 4, 5, 6].map(|i| ranks.of(&history[i]));
        // Seen by the first fetch, then the fetch, then what only the end saw, in its order.
        assert_eq!((a, first), ((0, 0, true), (0, usize::MAX, true)));
        assert!(first < b && b < c, "{b:?} {c:?}");
        assert_eq!(c, (2, 1, true));
        // Nothing saw `e` and nothing removed it: first. Nothing saw `d`, of unknown
        // outcome: last. A fetch that saw nothing of the history comes after what it saw.
        assert_eq!(unseen, (0, 0, false));
        assert_eq!(unknown, (usize::MAX, usize::MAX, true));
        assert_eq!(missed, (1, usize::MAX, true));
        // `a`, had no fetch seen it, would come just before the change that removed it.
        let history = [history[0].clone(), history[3].clone()];
        let ranks = Ranks::new(&history, &["c".into()]);
        assert_eq!(ranks.of(&history[0]), (0, 0, false));
        assert_eq!(ranks.of(&history[1]), (0, 0, true));
    }

    #[test]
    fn eight_writers_in_any_order_are_decided_without_trying_every_order() {
        // Eight concurrent writers, each appending once then replacing it: the array's
        // order is one of 8!, which a search in call order may reach only after trying
        // most of the others; ranked, it goes there first.
        let mut changes = Vec::new();
        for c in 0..8 {
            let first = format!("c{c}.0");
            let second = format!("c{c}.1");
            changes.push(change(c, &[&first], &[], 1 + c as u64, Some(20 + c as u64)));
            changes.push(change(
                c,
                &[&second],
                &[&first],
                30 + c as u64,
                Some(50 + c as u64),
            ));
        }
        let order = [
            "c5.1", "c2.1", "c7.1", "c0.1", "c3.1", "c6.1", "c1.1", "c4.1",
        ];
        let (history, array) = with_end(changes.clone(), &order);
        assert!(explained(&history, &array));
        // One element lost: decided before any search.
        let (history, array) = with_end(changes, &order[1..]);
        assert!(cannot_be_explained(&history, &array));
        assert!(!explained(&history, &array));
    }

    #[test]
    fn on_random_histories_the_verdict_is_the_plain_search_s() {
        let mut draw = Draw(11);
        let (mut yes, mut no) = (0, 0);
        for _ in 0..3000 {
            // Writers each make changes one after another: append a new element, every
            // second one also removes the writer's last; now and then an element of a
            // shared pool (appended twice) or another writer's removed.
            let mut changes = Vec::new();
            for c in 0..1 + draw.below(4) as usize {
                let mut at = draw.below(4);
                for i in 0..1 + draw.below(3) {
                    let add = if draw.below(8) == 0 {
                        format!("p{}", draw.below(2))
                    } else {
                        format!("c{c}.{i}")
                    };
                    let delete = match (i % 2, draw.below(8)) {
                        (_, 0) => vec![format!("c{}.0", draw.below(3))],
                        (1, _) => vec![format!("c{c}.{}", i - 1)],
                        _ => Vec::new(),
                    };
                    let end = at + 1 + draw.below(10);
                    let known = draw.below(6) != 0;
                    let d: Vec<&str> = delete.iter().map(String::as_str).collect();
                    changes.push(change(c, &[&add], &d, at, known.then_some(end)));
                    at = end + draw.below(3);
                }
            }
            // The array some order real time allows gives (unknown outcomes applied or
            // not), then, in half of them, spoiled.
            let mut points: Vec<(u64, usize)> = changes
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let end = e.returned.min(e.call + 10);
                    (e.call * 2 + 1 + draw.below((end - e.call) * 2 - 1), i)
                })
                .collect();
            points.sort();
            let mut array: Vec<String> = Vec::new();
            for (_, i) in points {
                if changes[i].ret.is_none() && draw.below(2) == 0 {
                    continue;
                }
                if let ArrayOp::Change { add, delete } = &changes[i].op {
                    array = crate::array::recipe::apply(array, add, delete);
                }
            }
            if draw.below(2) == 0 && !array.is_empty() {
                let i = draw.below(array.len() as u64) as usize;
                match draw.below(3) {
                    0 => drop(array.remove(i)),
                    1 => array.push(array[i].clone()),
                    _ => array.swap(i, 0),
                }
            }
            let array: Vec<&str> = array.iter().map(String::as_str).collect();
            if decide(changes, &array) {
                yes += 1;
            } else {
                no += 1;
            }
        }
        assert!(yes > 1000 && no > 500, "{yes} explained, {no} not");
    }
}
