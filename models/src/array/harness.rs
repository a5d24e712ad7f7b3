//! The read-mostly array workload: writers change the array (each change appends a new
//! element and every second change also removes the writer's previous one), readers fetch
//! it; the harness records a history of changes and fetches for the checks.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use mcsim::history::{Entry, History};
use mcsim::memcache::{McError, Memcache};
use mcsim::{Failure, Sim, Skew};

use crate::array::final_state;
use crate::array::recipe::{Array, ArrayVariant, decode};
use crate::array::spec::ArrayOp;

/// Parameters of the read-mostly array workload.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayParams {
    /// The recipe.
    pub variant: ArrayVariant,
    /// Changes per writer.
    pub changes: u32,
    /// How many of the clients only read (the last ones); at least one client writes.
    pub readers: u32,
    /// Fetches per reader.
    pub reads: u32,
    /// Pause before each fetch.
    pub read_gap: Duration,
    /// The lock key's TTL, seconds (DS `MCLock` default: 5).
    pub lock_timeout_s: u32,
    /// Wait between failed lock attempts.
    pub backoff: Duration,
    /// Time every change spends between reading and writing the array.
    pub work: Duration,
    /// Extra time the first change of client 0 spends there (a stalled process).
    pub slow: Duration,
    /// Retries of a change after a timeout (the caller cannot tell whether it applied).
    pub retries: u32,
    /// Pause between a writer's changes.
    pub think: Duration,
    /// When the writers start (where in the server's second the lock is taken).
    pub start: Duration,
    /// Clock skew per client.
    pub skews: Vec<Skew>,
}

type ArrayHistory = History<ArrayOp, Option<Vec<String>>>;

/// Registers the workload and the invariants `array.no_lost_updates` and
/// `array.snapshot_reads`.
pub fn setup(p: &ArrayParams, clients: usize, sim: &mut Sim) {
    let history = ArrayHistory::new();
    let longest: Rc<Cell<Duration>> = Rc::default();
    let retried: Rc<Cell<u64>> = Rc::default();
    {
        let (h0, l0, r0) = (history.clone(), longest.clone(), retried.clone());
        sim.ghost(move |h| crate::ghost::by_debug(h, &(&h0, l0.get(), r0.get())));
    }
    let writers = clients.saturating_sub(p.readers as usize).max(1);
    let array = |c| Array::new("a", p.variant, p.lock_timeout_s, p.backoff, c);
    for c in 0..clients {
        let (history, longest, retried, p) =
            (history.clone(), longest.clone(), retried.clone(), p.clone());
        let skew = p.skews.get(c).copied().unwrap_or_default();
        let array = array(c);
        if c < writers {
            sim.client(skew, move |mc| async move {
                if !p.start.is_zero() {
                    mc.sleep(p.start).await;
                }
                for i in 0..p.changes {
                    let add = vec![format!("c{c}.{i}")];
                    let delete = match i % 2 {
                        1 => vec![format!("c{c}.{}", i - 1)],
                        _ => Vec::new(),
                    };
                    let work = match (c, i) {
                        (0, 0) => p.work + p.slow,
                        _ => p.work,
                    };
                    let op = ArrayOp::Change {
                        add: add.clone(),
                        delete: delete.clone(),
                    };
                    let id = history.invoke(c, "array", op);
                    let start = mc.global_now();
                    let mut attempt = 0;
                    loop {
                        match array.change(&mc, &add, &delete, work).await {
                            Ok(()) => {
                                history.complete(id, None);
                                break;
                            }
                            Err(McError::Transport(_)) if attempt < p.retries => {
                                attempt += 1;
                                retried.set(retried.get() + 1);
                                mc.note("change failed with a timeout; the caller retries it");
                            }
                            Err(McError::Transport(_)) => {
                                mc.note("change failed with a timeout; the caller gives up");
                                break;
                            }
                            Err(e) => return Err(e),
                        }
                    }
                    longest.set(longest.get().max(mc.global_now().since(start)));
                    if !p.think.is_zero() {
                        mc.sleep(p.think).await;
                    }
                }
                Ok(())
            });
        } else {
            sim.client(skew, move |mc| async move {
                for _ in 0..p.reads {
                    mc.sleep(p.read_gap).await;
                    let id = history.invoke(c, "array", ArrayOp::Fetch);
                    match array.fetch(&mc).await {
                        Ok(v) => history.complete(id, Some(v)),
                        // The reader shows nothing this time; the fetch stays unknown.
                        Err(McError::Transport(_)) => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(())
            });
        }
    }

    let key = array(0).key().clone();
    let read_key = key.clone();
    let h = history.clone();
    sim.at_end("array.no_lost_updates", move |view| {
        let array = view.peek(&key).map(|v| decode(&v.data)).unwrap_or_default();
        let entries = h.entries();
        let n = Numbers::of(&entries, &array);
        view.metric("array.elements", array.len() as f64);
        view.metric("array.lost", n.lost.len() as f64);
        view.metric("array.duplicated", n.duplicated as f64);
        view.metric("array.resurrected", n.resurrected as f64);
        view.metric("array.retries", retried.get() as f64);
        view.metric(
            "array.longest_change_ms",
            longest.get().as_secs_f64() * 1000.0,
        );
        let mut changes: Vec<_> = entries
            .iter()
            .filter(|e| matches!(e.op, ArrayOp::Change { .. }))
            .cloned()
            .collect();
        let completed = changes.iter().filter(|e| e.ret.is_some()).count();
        changes.push(final_fetch(&entries, array.clone()));
        if final_state::explained(&changes, &array) {
            Ok(())
        } else {
            Err(Failure::new(format!(
                "the array holds [{}] at quiescence: no order of the {completed} completed \
                 changes gives it (lost: [{}], {} duplicated, {} resurrected)",
                array.join(" "),
                n.lost.join(" "),
                n.duplicated,
                n.resurrected
            ))
            .with("completed", completed as i64)
            .with("elements", array.len() as i64)
            .with("lost", n.lost.len() as i64)
            .with("duplicated", n.duplicated as i64)
            .with("resurrected", n.resurrected as i64))
        }
    });
    sim.at_end("array.snapshot_reads", move |view| {
        let array = view
            .peek(&read_key)
            .map(|v| decode(&v.data))
            .unwrap_or_default();
        history
            .with_entries(|h| final_state::Ranks::check(h, &array))
            .map_err(|e| {
                Failure::new(format!(
                    "a fetch returned a state no prefix of the changes produced; stuck at: {}",
                    e.stuck.first().cloned().unwrap_or_default()
                ))
                .with("stuck", e.stuck.len() as i64)
            })
    });
}

/// A fetch of `array` after every recorded event.
pub(crate) fn final_fetch(
    entries: &[Entry<ArrayOp, Option<Vec<String>>>],
    array: Vec<String>,
) -> Entry<ArrayOp, Option<Vec<String>>> {
    let last = entries
        .iter()
        .flat_map(|e| [e.call, e.returned])
        .filter(|&t| t != u64::MAX)
        .max()
        .unwrap_or(0);
    Entry {
        client: usize::MAX,
        object: "array".into(),
        op: ArrayOp::Fetch,
        ret: Some(Some(array)),
        call: last + 1,
        returned: last + 2,
    }
}

/// How the final array differs from the completed changes.
#[derive(Debug, Default)]
struct Numbers {
    /// Elements a completed change appended, that no change removes, missing at the end.
    lost: Vec<String>,
    /// Extra copies of elements (a change applied twice).
    duplicated: usize,
    /// Elements a completed change removed that are present at the end.
    resurrected: usize,
}

impl Numbers {
    fn of(entries: &[Entry<ArrayOp, Option<Vec<String>>>], array: &[String]) -> Numbers {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for e in array {
            *counts.entry(e).or_default() += 1;
        }
        let mut n = Numbers {
            lost: final_state::lost(entries, array),
            duplicated: counts.values().map(|c| c - 1).sum(),
            ..Numbers::default()
        };
        for e in entries.iter().filter(|e| e.ret.is_some()) {
            if let ArrayOp::Change { delete, .. } = &e.op {
                n.resurrected += delete
                    .iter()
                    .filter(|d| counts.contains_key(d.as_str()))
                    .count();
            }
        }
        n
    }
}
