//! What `set.linearizable` needs beyond the search over orders ([`lin`]): a read that
//! real time alone proves wrong, found before any search, and the order in which the
//! search tries the operations.
//!
//! The search costs the number of distinct sets the concurrent modifications can build,
//! which grows with the factorial of the clients: at sixteen clients one passing
//! execution's check took most of a second and one failing execution's took minutes.
//! A failing execution of the set recipes is mostly a read that lacks a member whose add
//! returned before the read began, with no remove that could come between (a lost add), or
//! one that shows a member whose removal had already returned (a resurrected one): real
//! time alone decides those ([`misread`]). The rest are searched in the order the
//! operations' calls reached the server ([`check`]), so that a history that has an order
//! finds it first.

use std::collections::BTreeMap;
use std::fmt;

use mcsim::history::Entry;
use mcsim::lin::{self, SetOp, SetSpec};

type SetEntry = Entry<SetOp, Option<Vec<String>>>;

/// A completed read that no order of the history can explain, shown by real time alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Misread {
    /// The reading client (`usize::MAX`: the read of the index at quiescence).
    pub(crate) reader: usize,
    /// The member it got wrong.
    pub(crate) member: String,
    /// How.
    pub(crate) why: Why,
}

/// How a read got a member wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// It lacks the member, though an add of it returned before the read was called and
    /// no remove of it can come after that add and before the read.
    Lacks,
    /// It shows the member, though no add of it was called before the read returned.
    NeverAdded,
    /// It shows the member, though a remove of it returned before the read was called
    /// and no add of it can come after that remove and before the read.
    Removed,
}

impl fmt::Display for Misread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (reader, m) = match self.reader {
            usize::MAX => ("the index at quiescence".to_string(), &self.member),
            c => (format!("c{c}'s read"), &self.member),
        };
        match self.why {
            Why::Lacks => write!(
                f,
                "{reader} lacks {m:?}, though an add of it returned before the read began \
                 and no remove of it could come between"
            ),
            Why::NeverAdded => write!(
                f,
                "{reader} shows {m:?}, though no add of it began before the read ended"
            ),
            Why::Removed => write!(
                f,
                "{reader} shows {m:?}, though a remove of it returned before the read \
                 began and no add of it could come between"
            ),
        }
    }
}

/// The operations on one member, as `(call, returned, completed)`.
#[derive(Default)]
struct Member {
    adds: Vec<(u64, u64, bool)>,
    removes: Vec<(u64, u64, bool)>,
}

/// The first completed read of `history` (in the history's order) that real time alone
/// proves wrong, if any: then no order explains the history, and [`lin::check`] says so
/// too. `None` decides nothing: the history still needs the search.
///
/// In any order real time allows, an operation that returned before another was called
/// comes first. So for a read `r` and a member `m`: the last operation on `m` before `r`
/// must be an add if `r` shows `m`, a remove if not (or none at all), and it must be able
/// to come after every operation on `m` that returned before `r` began and before `r`
/// ended.
pub(crate) fn misread(history: &[SetEntry]) -> Option<Misread> {
    let mut members: BTreeMap<&str, Member> = BTreeMap::new();
    for e in history {
        let interval = (e.call, e.returned, e.ret.is_some());
        match &e.op {
            SetOp::Add(m) => members.entry(m).or_default().adds.push(interval),
            SetOp::Remove(m) => members.entry(m).or_default().removes.push(interval),
            SetOp::Items => {}
        }
    }
    let none = Member::default();
    for r in history {
        let (SetOp::Items, Some(Some(items))) = (&r.op, &r.ret) else {
            continue;
        };
        let wrong = |member: &str, why| {
            Some(Misread {
                reader: r.client,
                member: member.to_string(),
                why,
            })
        };
        for m in items {
            let ops = members.get(m.as_str()).unwrap_or(&none);
            let before: Vec<u64> = ops
                .adds
                .iter()
                .filter(|a| a.0 <= r.returned)
                .map(|a| a.1)
                .collect();
            if before.is_empty() {
                return wrong(m, Why::NeverAdded);
            }
            // Every completed remove that returned before the read began precedes it: the
            // last add must be able to follow the latest called of them.
            let removed = ops
                .removes
                .iter()
                .filter(|d| d.2 && d.1 < r.call)
                .map(|d| d.0)
                .max();
            if removed.is_some_and(|d| before.iter().all(|&a| a < d)) {
                return wrong(m, Why::Removed);
            }
        }
        for (m, ops) in &members {
            let added = ops
                .adds
                .iter()
                .filter(|a| a.2 && a.1 < r.call)
                .map(|a| a.0)
                .max();
            let Some(added) = added else {
                continue;
            };
            if items.iter().any(|i| i == m) {
                continue;
            }
            let removable = ops
                .removes
                .iter()
                .any(|d| d.0 <= r.returned && d.1 >= added);
            if !removable {
                return wrong(m, Why::Lacks);
            }
        }
    }
    None
}

/// [`lin::check`] of `history`, the search trying first the operations whose effects
/// reached the server first: `effects` maps an operation's call to the instant, in the
/// server's order, of the call that took effect (a read's `gets`, a modification's last
/// `append` or `add`). Those with none (the outcome unknown, the read at quiescence) come
/// last, by their returns. The verdict is [`lin::check`]'s, as exhaustive; where the
/// recipe is linearizable at those instants (each operation's effect one call inside it)
/// the first order tried is one.
pub(crate) fn check(
    history: &[SetEntry],
    effects: &BTreeMap<u64, u64>,
) -> Result<(), lin::NotLinearizable> {
    lin::check_ranked(&SetSpec, history, |e| {
        (
            effects.get(&e.call).copied().unwrap_or(u64::MAX),
            e.returned,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draw::Draw;

    /// An operation of `client` called at `call`, returned at `ret` (`None`: unknown
    /// outcome), a read's result in `items`.
    fn op(
        client: usize,
        op: SetOp,
        call: u64,
        ret: Option<u64>,
        items: Option<&[&str]>,
    ) -> SetEntry {
        let result = items.map(|i| i.iter().map(|s| s.to_string()).collect());
        Entry {
            client,
            object: "set".into(),
            op,
            ret: ret.map(|_| result),
            call,
            returned: ret.unwrap_or(u64::MAX),
        }
    }

    fn add(client: usize, m: &str, call: u64, ret: Option<u64>) -> SetEntry {
        op(client, SetOp::Add(m.into()), call, ret, None)
    }

    fn remove(client: usize, m: &str, call: u64, ret: Option<u64>) -> SetEntry {
        op(client, SetOp::Remove(m.into()), call, ret, None)
    }

    fn read(client: usize, call: u64, ret: u64, items: &[&str]) -> SetEntry {
        op(client, SetOp::Items, call, Some(ret), Some(items))
    }

    /// The verdict of the quick look and the ranked search together, held to the plain
    /// search's (any ranks give its verdict; `effects` are some).
    fn decide(history: &[SetEntry], effects: &BTreeMap<u64, u64>) -> bool {
        let wrong = misread(history);
        let verdict = wrong.is_none() && check(history, effects).is_ok();
        let plain = lin::check(&SetSpec, history).is_ok();
        assert_eq!(verdict, plain, "{history:#?} ({wrong:?})");
        verdict
    }

    fn why(history: &[SetEntry]) -> Option<(usize, String, Why)> {
        misread(history).map(|m| (m.reader, m.member, m.why))
    }

    #[test]
    fn a_read_after_an_add_returned_lacks_it_only_if_a_remove_could_come_between() {
        let lost = [add(0, "a", 1, Some(2)), read(1, 3, 4, &[])];
        assert_eq!(why(&lost), Some((1, "a".into(), Why::Lacks)));
        assert!(!decide(&lost, &BTreeMap::new()));
        // A remove concurrent with the read may come first.
        let removed = [lost[0].clone(), remove(0, "a", 3, Some(6)), lost[1].clone()];
        assert_eq!(why(&removed), None);
        assert!(decide(&removed, &BTreeMap::new()));
        // One called after the read returned may not; one of unknown outcome may.
        let late = [lost[0].clone(), lost[1].clone(), remove(0, "a", 5, Some(6))];
        assert_eq!(why(&late), Some((1, "a".into(), Why::Lacks)));
        let unknown = [lost[0].clone(), remove(0, "a", 3, None), lost[1].clone()];
        assert_eq!(why(&unknown), None);
        assert!(decide(&unknown, &BTreeMap::new()));
        // An add concurrent with the read may come after it.
        let concurrent = [add(0, "a", 1, Some(5)), read(1, 2, 4, &[])];
        assert_eq!(why(&concurrent), None);
        assert!(decide(&concurrent, &BTreeMap::new()));
    }

    #[test]
    fn a_read_shows_a_member_only_if_an_add_could_come_after_its_last_remove() {
        let phantom = [add(0, "a", 5, Some(6)), read(1, 1, 4, &["a"])];
        assert_eq!(why(&phantom), Some((1, "a".into(), Why::NeverAdded)));
        assert!(!decide(&phantom, &BTreeMap::new()));
        let resurrected = [
            add(0, "a", 1, Some(2)),
            remove(0, "a", 3, Some(4)),
            read(1, 5, 6, &["a"]),
        ];
        assert_eq!(why(&resurrected), Some((1, "a".into(), Why::Removed)));
        assert!(!decide(&resurrected, &BTreeMap::new()));
        // A second add concurrent with the remove may come after it.
        let again = [
            resurrected[0].clone(),
            add(2, "a", 2, Some(7)),
            resurrected[1].clone(),
            resurrected[2].clone(),
        ];
        assert_eq!(why(&again), None);
        assert!(decide(&again, &BTreeMap::new()));
    }

    #[test]
    fn the_read_at_quiescence_is_named_as_such() {
        let history = [add(0, "a", 1, Some(2)), read(usize::MAX, 3, 4, &[])];
        let wrong = misread(&history).expect("a lost add");
        assert_eq!(
            wrong.to_string(),
            "the index at quiescence lacks \"a\", though an add of it returned before the read \
             began and no remove of it could come between"
        );
    }

    #[test]
    fn what_real_time_alone_cannot_decide_goes_to_the_search() {
        // Two reads that cannot both be right, though each alone could be: `a` and `b`
        // added concurrently, one read sees only `a`, the other only `b`.
        let history = [
            add(0, "a", 1, Some(10)),
            add(1, "b", 2, Some(11)),
            read(2, 3, 12, &["a"]),
            read(3, 4, 13, &["b"]),
        ];
        assert_eq!(why(&history), None);
        assert!(!decide(&history, &BTreeMap::new()));
    }

    #[test]
    fn sixteen_concurrent_adds_read_in_the_servers_order_are_explained() {
        // Sixteen concurrent adds, each followed by a read of its own client that shows
        // the adds the server had then: in call order the search would try many orders of
        // the adds first; by the server's instants, the first order it tries is right.
        let order: Vec<usize> = (0..16).map(|c| (c * 7) % 16).collect();
        let mut history = Vec::new();
        let mut effects = BTreeMap::new();
        for (p, &c) in order.iter().enumerate() {
            let done = 20 + 2 * p as u64;
            history.push(add(c, &format!("m{c:02}"), 1 + c as u64, Some(done)));
            let mut shown: Vec<String> = order[..=p].iter().map(|o| format!("m{o:02}")).collect();
            shown.sort();
            let shown: Vec<&str> = shown.iter().map(String::as_str).collect();
            history.push(read(c, done + 1, 100 + c as u64, &shown));
            effects.insert(1 + c as u64, 2 * p as u64);
            effects.insert(done + 1, 2 * p as u64 + 1);
        }
        history.sort_by_key(|e| e.call);
        // The server's order is a linearization, so the history is linearizable (the plain
        // search, trying the reads by return, takes seconds to find one).
        assert_eq!(why(&history), None);
        assert!(check(&history, &effects).is_ok());
        // The last add lost: the read of its own client lacks it.
        let last = order[15];
        let lost = format!("m{last:02}");
        for e in &mut history {
            if let Some(Some(items)) = &mut e.ret {
                items.retain(|m| *m != lost);
            }
        }
        // Decided before any search.
        assert_eq!(why(&history), Some((last, lost, Why::Lacks)));
    }

    #[test]
    fn on_random_histories_the_verdict_is_the_plain_search_s() {
        let mut draw = Draw(5);
        let (mut yes, mut no, mut quick) = (0, 0, 0);
        for _ in 0..3000 {
            // Clients each add a member of their own, read, remove it, read, one after
            // another; now and then the member is a shared one, an outcome unknown.
            let mut history = Vec::new();
            for c in 0..1 + draw.below(4) as usize {
                let mut at = draw.below(4);
                for k in 0..1 + draw.below(2) {
                    let m = if draw.below(6) == 0 {
                        format!("p{}", draw.below(2))
                    } else {
                        format!("m{c}_{k}")
                    };
                    for o in [
                        SetOp::Add(m.clone()),
                        SetOp::Items,
                        SetOp::Remove(m),
                        SetOp::Items,
                    ] {
                        let end = at + 1 + draw.below(12);
                        let known = matches!(o, SetOp::Items) || draw.below(8) != 0;
                        history.push(op(c, o, at, known.then_some(end), None));
                        at = end + draw.below(3);
                    }
                }
            }
            history.sort_by_key(|e| e.call);
            // Each operation takes effect at a point inside it (one of unknown outcome
            // maybe not at all); the reads get the set there, and half the histories
            // have one read spoiled.
            let mut points: Vec<(u64, usize)> = history
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let end = e.returned.min(e.call + 12);
                    (e.call * 2 + 1 + draw.below((end - e.call) * 2 - 1), i)
                })
                .collect();
            points.sort();
            let mut set = std::collections::BTreeSet::new();
            let mut effects = BTreeMap::new();
            for (t, i) in points {
                let e = &mut history[i];
                if draw.below(3) == 0 {
                    effects.insert(e.call, t);
                } else {
                    effects.insert(e.call, draw.below(100));
                }
                match &e.op {
                    _ if e.ret.is_none() && draw.below(2) == 0 => {}
                    SetOp::Add(m) => drop(set.insert(m.clone())),
                    SetOp::Remove(m) => drop(set.remove(m)),
                    SetOp::Items => e.ret = Some(Some(set.iter().cloned().collect())),
                }
            }
            let reads: Vec<usize> = (0..history.len())
                .filter(|&i| matches!(history[i].op, SetOp::Items))
                .collect();
            if draw.below(2) == 0 && !reads.is_empty() {
                let r = reads[draw.below(reads.len() as u64) as usize];
                let items = history[r]
                    .ret
                    .as_mut()
                    .and_then(Option::as_mut)
                    .expect("read");
                if items.is_empty() || draw.below(2) == 0 {
                    items.push(format!("m{}_0", draw.below(4)));
                    items.sort();
                    items.dedup();
                } else {
                    items.remove(draw.below(items.len() as u64) as usize);
                }
            }
            if misread(&history).is_some() {
                quick += 1;
            }
            if decide(&history, &effects) {
                yes += 1;
            } else {
                no += 1;
            }
        }
        assert!(
            yes > 1000 && no > 500 && quick > 300,
            "{yes} explained, {no} not ({quick} without a search)"
        );
    }
}
