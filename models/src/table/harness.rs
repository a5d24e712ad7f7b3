//! The table workload: writers add their own members (and may delete some of them
//! afterwards); readers check every member with `has` and then `fetch` the list, and
//! report a member `has` saw but the list lacked. At quiescence the harness compares the
//! markers and the list with the operations that completed.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use mcsim::memcache::{McError, Memcache};
use mcsim::{Failure, Sim, Skew};

use crate::table::recipe::{Table, decode_list};

/// Parameters of the table workload.
#[derive(Debug, Clone, PartialEq)]
pub struct TableParams {
    /// Members each writer adds.
    pub members: u32,
    /// Of those, how many each writer deletes afterwards.
    pub deletes: u32,
    /// How many of the clients only read (the last ones); at least one client writes.
    pub readers: u32,
    /// Rounds per reader (`has` of every member, then `fetch`).
    pub reads: u32,
    /// Pause before each round.
    pub read_gap: Duration,
    /// The lock key's TTL, seconds (DS `MCLock` default: 5).
    pub lock_timeout_s: u32,
    /// Wait between failed lock attempts.
    pub backoff: Duration,
    /// Time every add or delete spends between reading the list and writing.
    pub work: Duration,
    /// Extra time the first add of client 0 spends there (a stalled process).
    pub slow: Duration,
    /// Retries of an operation after a timeout.
    pub retries: u32,
    /// Clock skew per client.
    pub skews: Vec<Skew>,
}

/// What the harness knows of a member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum State {
    Adding,
    Added,
    AddUnknown,
    Deleting,
    Deleted,
    DeleteUnknown,
}

#[derive(Debug, Default, Hash)]
struct Ghost {
    members: BTreeMap<String, State>,
    /// Instant inconsistencies readers saw: `(member, virtual time)`.
    seen: Vec<(String, String)>,
    rounds: u64,
    fetch_none: u64,
}

/// The member writer `c` adds `i`-th.
pub fn member(c: usize, i: u32) -> String {
    format!("u{c}_{i}")
}

/// Registers the workload and the invariants `table.no_lost_members`, `table.consistent`
/// and `table.instant_consistent`.
pub fn setup(p: &TableParams, clients: usize, sim: &mut Sim) {
    let ghost: Rc<RefCell<Ghost>> = Rc::default();
    crate::ghost::watch(sim, &ghost);
    let writers = clients.saturating_sub(p.readers as usize).max(1);
    let universe: Vec<String> = (0..writers)
        .flat_map(|c| (0..p.members).map(move |i| member(c, i)))
        .collect();
    let table = |c| Table::new("t", p.lock_timeout_s, p.backoff, c);
    for c in 0..clients {
        let (ghost, p, universe) = (ghost.clone(), p.clone(), universe.clone());
        let skew = p.skews.get(c).copied().unwrap_or_default();
        let table = table(c);
        if c < writers {
            sim.client(skew, move |mc| async move {
                let set = |m: &str, s| {
                    ghost.borrow_mut().members.insert(m.to_string(), s);
                };
                for i in 0..p.members {
                    let m = member(c, i);
                    let work = if c == 0 && i == 0 {
                        p.work + p.slow
                    } else {
                        p.work
                    };
                    set(&m, State::Adding);
                    let mut attempt = 0;
                    loop {
                        match table.add(&mc, &m, work).await {
                            Ok(()) => break set(&m, State::Added),
                            Err(McError::Transport(_)) if attempt < p.retries => attempt += 1,
                            Err(McError::Transport(_)) => break set(&m, State::AddUnknown),
                            Err(e) => return Err(e),
                        }
                    }
                }
                for i in 0..p.deletes.min(p.members) {
                    let m = member(c, i);
                    set(&m, State::Deleting);
                    let mut attempt = 0;
                    loop {
                        match table.delete(&mc, &m, p.work).await {
                            Ok(()) => break set(&m, State::Deleted),
                            Err(McError::Transport(_)) if attempt < p.retries => attempt += 1,
                            Err(McError::Transport(_)) => break set(&m, State::DeleteUnknown),
                            Err(e) => return Err(e),
                        }
                    }
                }
                Ok(())
            });
        } else {
            sim.client(skew, move |mc| async move {
                'rounds: for _ in 0..p.reads {
                    mc.sleep(p.read_gap).await;
                    let mut present = Vec::new();
                    for m in &universe {
                        match table.has(&mc, m).await {
                            Ok(true) => present.push(m.clone()),
                            Ok(false) => {}
                            Err(McError::Transport(_)) => continue 'rounds,
                            Err(e) => return Err(e),
                        }
                    }
                    let list = match table.fetch(&mc).await {
                        Ok(list) => list,
                        Err(McError::Transport(_)) => continue,
                        Err(e) => return Err(e),
                    };
                    let mut g = ghost.borrow_mut();
                    g.rounds += 1;
                    g.fetch_none += u64::from(list.is_none());
                    let list = list.unwrap_or_default();
                    for m in present {
                        // A delete of `m` started since may have removed it legitimately.
                        let deleting = matches!(
                            g.members.get(&m),
                            Some(State::Deleting | State::Deleted | State::DeleteUnknown)
                        );
                        if !deleting && !list.contains(&m) {
                            let at = mc.global_now().to_string();
                            mc.note(format_args!("has({m}) was true but fetch() lacks {m}"));
                            g.seen.push((m, at));
                        }
                    }
                }
                Ok(())
            });
        }
    }

    let t = table(0);
    let markers: Vec<_> = universe
        .iter()
        .map(|m| (m.clone(), t.marker(m).expect("workload members are valid")))
        .collect();
    let list_key = t.list_key().clone();
    let g = ghost.clone();
    let compare = Rc::new(move |view: &mcsim::EndView<'_>| {
        let list = view.peek(&list_key).map(|v| decode_list(&v.data));
        let in_list = |m: &String| list.as_ref().is_some_and(|l| l.contains(m));
        let (mut false_negatives, mut false_positives) = (Vec::new(), Vec::new());
        for (m, key) in &markers {
            match (view.peek(key).is_some(), in_list(m)) {
                (false, true) => false_negatives.push(m.clone()),
                (true, false) => false_positives.push(m.clone()),
                _ => {}
            }
        }
        let lost: Vec<String> = g
            .borrow()
            .members
            .iter()
            .filter(|(m, s)| **s == State::Added && !in_list(m))
            .map(|(m, _)| m.clone())
            .collect();
        (list, lost, false_negatives, false_positives)
    });
    let (cmp, g) = (compare.clone(), ghost.clone());
    sim.at_end("table.no_lost_members", move |view| {
        let (list, lost, false_negatives, false_positives) = cmp(view);
        let g = g.borrow();
        let expected = g.members.values().filter(|s| **s == State::Added).count();
        view.metric("table.members", list.as_ref().map_or(0, Vec::len) as f64);
        view.metric("table.expected", expected as f64);
        view.metric("table.lost", lost.len() as f64);
        view.metric("table.list_missing", f64::from(u8::from(list.is_none())));
        view.metric("table.false_negatives", false_negatives.len() as f64);
        view.metric("table.false_positives", false_positives.len() as f64);
        view.metric("table.instant_inconsistent", g.seen.len() as f64);
        view.metric("table.fetch_none", g.fetch_none as f64);
        view.metric("table.reader_rounds", g.rounds as f64);
        if lost.is_empty() {
            return Ok(());
        }
        let how = match &list {
            None => "the list key is gone, so fetch() returns nothing at all".to_string(),
            Some(l) => format!("the list holds only [{}]", l.join(" ")),
        };
        Err(Failure::new(format!(
            "{} of {expected} added members are missing from the list ({}): {how}",
            lost.len(),
            lost.join(" ")
        ))
        .with("expected", expected as i64)
        .with("lost", lost.len() as i64)
        .with("listed", list.as_ref().map_or(0, Vec::len) as i64)
        .with("list_missing", i64::from(list.is_none())))
    });
    sim.at_end("table.consistent", move |view| {
        let (_, _, false_negatives, false_positives) = compare(view);
        if false_negatives.is_empty() && false_positives.is_empty() {
            return Ok(());
        }
        Err(Failure::new(format!(
            "at quiescence has() and fetch() disagree: listed without a marker [{}], \
             marker without a listing [{}]",
            false_negatives.join(" "),
            false_positives.join(" ")
        ))
        .with("false_negatives", false_negatives.len() as i64)
        .with("false_positives", false_positives.len() as i64))
    });
    sim.at_end("table.instant_consistent", move |_| {
        let g = ghost.borrow();
        match g.seen.first() {
            None => Ok(()),
            Some((m, at)) => Err(Failure::new(format!(
                "a reader saw has({m}) true and then a fetch() without {m} (t={at}), \
                 between the two writes of add"
            ))
            .with("observations", g.seen.len() as i64)),
        }
    });
}
