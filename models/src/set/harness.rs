//! The set workload: every client adds and removes its own members in turn, reading the
//! set (and so maybe compacting it) after each modification. The harness records a
//! history for the linearizability check and logs the index's writes for the compaction
//! check.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::time::Duration;

use mcsim::history::{Entry, History};
use mcsim::lin::{self, SetOp, SetSpec};
use mcsim::memcache::{McError, Memcache};
use mcsim::{Failure, Sim, Skew};

use crate::set::encoding::decode;
use crate::set::observe::{IndexLog, Observed};
use crate::set::recipe::{SetIndex, SetVariant};

/// Parameters of the set workload.
#[derive(Debug, Clone, PartialEq)]
pub struct SetParams {
    /// The recipe.
    pub variant: SetVariant,
    /// Modifications per client: adds of new members, each followed by its removal.
    pub ops: u32,
    /// Read the set after every this many modifications (0: never).
    pub read_every: u32,
    /// Compact when the dirtiness exceeds this.
    pub dirtiness_threshold: u32,
    /// Retries of an operation after a timeout.
    pub retries: u32,
    /// Pause between a client's operations.
    pub think: Duration,
    /// Clock skew per client.
    pub skews: Vec<Skew>,
}

type SetHistory = History<SetOp, Option<Vec<String>>>;

/// The index key.
pub const INDEX: &str = "set_index";

/// Registers the workload and the invariants `set.compaction_safe` and `set.linearizable`.
pub fn setup(p: &SetParams, clients: usize, sim: &mut Sim) {
    let history = SetHistory::new();
    let log: Rc<RefCell<IndexLog>> = Rc::default();
    {
        let (h0, l0) = (history.clone(), log.clone());
        sim.ghost(move |h| crate::ghost::by_debug(h, &(&h0, &*l0.borrow())));
    }
    let index = SetIndex::new(INDEX, p.variant, p.dirtiness_threshold as usize);
    for c in 0..clients {
        let (history, log, p, index) = (history.clone(), log.clone(), p.clone(), index.clone());
        let skew = p.skews.get(c).copied().unwrap_or_default();
        sim.client(skew, move |mc| async move {
            let mc = Observed::new(mc, c, index.key().clone(), log);
            for i in 0..p.ops {
                let (op, member) = match i % 2 {
                    0 => (SetOp::Add(format!("m{c}_{i}")), format!("m{c}_{i}")),
                    _ => (
                        SetOp::Remove(format!("m{c}_{}", i - 1)),
                        format!("m{c}_{}", i - 1),
                    ),
                };
                let id = history.invoke(c, "set", op.clone());
                let mut attempt = 0;
                loop {
                    let done = match op {
                        SetOp::Add(_) => index.add(&mc, &[&member]).await,
                        _ => index.remove(&mc, &[&member]).await,
                    };
                    match done {
                        Ok(()) => break history.complete(id, None),
                        Err(McError::Transport(_)) if attempt < p.retries => attempt += 1,
                        Err(McError::Transport(_)) => break,
                        Err(e) => return Err(e),
                    }
                }
                if p.read_every > 0 && (i + 1) % p.read_every == 0 {
                    let id = history.invoke(c, "set", SetOp::Items);
                    match index.items(&mc).await {
                        Ok(items) => history.complete(id, Some(items.into_iter().collect())),
                        Err(McError::Transport(_)) => {}
                        Err(e) => return Err(e),
                    }
                }
                if !p.think.is_zero() {
                    mc.sleep(p.think).await;
                }
            }
            Ok(())
        });
    }

    let key = index.key().clone();
    let h = history.clone();
    let l = log.clone();
    sim.at_end("set.compaction_safe", move |view| {
        let value = view.peek(&key);
        let decoded = value.as_ref().map(|v| decode(&v.data));
        let log = l.borrow();
        let erased: usize = log.drops.iter().map(|d| d.erased.len()).sum();
        let (lost, extra) = membership_errors(&h.entries(), decoded.as_ref());
        view.metric("set.modifications", log.modifications() as f64);
        view.metric("set.creation_races", log.races as f64);
        view.metric("set.compactions", log.compactions as f64);
        view.metric("set.compactions_refused", log.refused as f64);
        view.metric("set.erased_by_compaction", erased as f64);
        view.metric("set.lost", lost as f64);
        view.metric("set.resurrected", extra as f64);
        view.metric(
            "set.bytes",
            value.as_ref().map_or(0, |v| v.data.len()) as f64,
        );
        if let Some(Ok(d)) = &decoded {
            view.metric("set.dirtiness", d.dirtiness as f64);
        }
        match log.drops.first() {
            None => Ok(()),
            Some(d) => {
                let who: BTreeSet<String> = d.erased.iter().map(|c| format!("c{c}")).collect();
                Err(Failure::new(format!(
                    "c{}'s compaction overwrote {} modification(s) by {} appended after \
                     its read",
                    d.client,
                    d.erased.len(),
                    who.into_iter().collect::<Vec<_>>().join(", ")
                ))
                .with("compactions", log.compactions as i64)
                .with("unsafe_compactions", log.drops.len() as i64)
                .with("erased", erased as i64))
            }
        }
    });
    let key = index.key().clone();
    sim.at_end("set.linearizable", move |view| {
        let races = log.borrow().races;
        let mut entries = history.entries();
        let final_items = match view.peek(&key).map(|v| decode(&v.data)) {
            None => Vec::new(),
            Some(Ok(d)) => d.members.into_iter().collect(),
            Some(Err(e)) => return Err(Failure::new(format!("the index does not decode: {e}"))),
        };
        let shown = final_items.join(" ");
        entries.push(final_read(&entries, final_items));
        lin::check(&SetSpec, &entries).map_err(|e| {
            Failure::new(format!(
                "no order of the set's operations explains what was read (at quiescence: \
                 {{{shown}}}; {races} add(s) lost the race to create the index); stuck at: {}",
                e.stuck.first().cloned().unwrap_or_default()
            ))
            .with("creation_races", races as i64)
            .with("operations", entries.len() as i64)
            .with("linearized", e.longest_prefix.len() as i64)
        })
    });
}

/// An `Items` of `items` after every recorded event, by no client.
fn final_read(
    entries: &[Entry<SetOp, Option<Vec<String>>>],
    items: Vec<String>,
) -> Entry<SetOp, Option<Vec<String>>> {
    let last = entries
        .iter()
        .flat_map(|e| [e.call, e.returned])
        .filter(|&t| t != u64::MAX)
        .max()
        .unwrap_or(0);
    Entry {
        client: usize::MAX,
        object: "set".into(),
        op: SetOp::Items,
        ret: Some(Some(items)),
        call: last + 1,
        returned: last + 2,
    }
}

/// Members whose owner's last completed modification disagrees with the index at
/// quiescence: `(lost, resurrected)`. A member whose last modification's outcome is
/// unknown is skipped.
fn membership_errors(
    entries: &[Entry<SetOp, Option<Vec<String>>>],
    decoded: Option<&Result<crate::set::encoding::Decoded, crate::set::encoding::CodecError>>,
) -> (usize, usize) {
    let members = match decoded {
        None => BTreeSet::new(),
        Some(Ok(d)) => d.members.clone(),
        Some(Err(_)) => return (0, 0),
    };
    // Each member belongs to one client, whose operations are sequential: the last call
    // is the one that counts.
    let mut last: BTreeMap<&str, (bool, bool)> = BTreeMap::new();
    for e in entries {
        let (m, present) = match &e.op {
            SetOp::Add(m) => (m, true),
            SetOp::Remove(m) => (m, false),
            SetOp::Items => continue,
        };
        last.insert(m, (present, e.ret.is_some()));
    }
    let (mut lost, mut extra) = (0, 0);
    for (m, (present, known)) in last {
        match (known, present, members.contains(m)) {
            (true, true, false) => lost += 1,
            (true, false, true) => extra += 1,
            _ => {}
        }
    }
    (lost, extra)
}
