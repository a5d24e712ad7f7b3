//! The set workload: every client adds and removes its own members in turn, reading the
//! set (and so maybe compacting it) after each modification. The harness records a
//! history for the linearizability check and logs the index's writes for the compaction
//! check.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::time::Duration;

use mcsim::history::{Entry, History};
use mcsim::lin::SetOp;
use mcsim::memcache::{McError, Memcache};
use mcsim::{Failure, Sim, Skew};

use crate::set::observe::{IndexLog, Observed};
use crate::set::order;
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
    /// Which members the clients add and remove.
    pub members: Members,
}

/// The members a workload draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Members {
    /// `m{client}_{op}`: nothing an encoding could trip on.
    #[default]
    Plain,
    /// Members that stress an encoding, in turn: one holding a space and a sign
    /// (`m0 -m0_0x`), one starting with `-`, one starting with `+`, the empty one, and one
    /// of 300 bytes.
    Encoding,
}

impl Members {
    /// Parses a `members` parameter.
    pub fn parse(name: &str) -> Option<Members> {
        match name {
            "plain" => Some(Members::Plain),
            "encoding" => Some(Members::Encoding),
            _ => None,
        }
    }

    /// The member client `c` adds at its `k`-th add (and then removes).
    pub fn member(self, c: usize, k: u32) -> String {
        match (self, k % 5) {
            (Members::Plain, _) => format!("m{c}_{}", 2 * k),
            (Members::Encoding, 0) => format!("m{c} -m{c}_{k}x"),
            (Members::Encoding, 1) => format!("-m{c}_{k}"),
            (Members::Encoding, 2) => format!("+m{c}_{k}"),
            // One empty member per client (it belongs to nobody else's namespace only
            // once: later empty adds of other clients would share it).
            (Members::Encoding, 3) if k == 3 && c == 0 => String::new(),
            (Members::Encoding, _) => format!("m{c}_{k}_{}", "x".repeat(300)),
        }
    }
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
    // Adds the recipe returned as done while none of the client's writes reached the
    // index (a figure: the explorer does not tell states apart by it).
    let dropped: Rc<Cell<u64>> = Rc::default();
    // Each completed operation's call, with the instant its effect reached the server:
    // the order the linearizability search tries first (not state: it decides nothing).
    let effects: Rc<RefCell<BTreeMap<u64, u64>>> = Rc::default();
    for c in 0..clients {
        let (history, log, p, index) = (history.clone(), log.clone(), p.clone(), index.clone());
        let (dropped, effects) = (dropped.clone(), effects.clone());
        let skew = p.skews.get(c).copied().unwrap_or_default();
        sim.client(skew, move |mc| async move {
            let mine = log.clone();
            let mc = Observed::new(mc, c, index.key().clone(), log);
            for i in 0..p.ops {
                let member = p.members.member(c, i / 2);
                let op = match i % 2 {
                    0 => SetOp::Add(member.clone()),
                    _ => SetOp::Remove(member.clone()),
                };
                if !index.accepts(&member) {
                    // Refused before any call (the escaped codecs take no empty member):
                    // nothing happened that the history should hold.
                    continue;
                }
                let id = history.invoke(c, "set", op.clone());
                let since = mine.borrow().now();
                let written = matches!(op, SetOp::Add(_)).then(|| mine.borrow().writes_by(c));
                let mut attempt = 0;
                loop {
                    let done = match op {
                        SetOp::Add(_) => index.add(&mc, &[&member]).await,
                        _ => index.remove(&mc, &[&member]).await,
                    };
                    match done {
                        Ok(()) => {
                            if written.is_some_and(|w| mine.borrow().writes_by(c) == w) {
                                dropped.set(dropped.get() + 1);
                            }
                            let at = mine.borrow().modified_since(c, since);
                            effect(&history, &effects, id, at);
                            break history.complete(id, None);
                        }
                        Err(McError::Transport(_)) if attempt < p.retries => attempt += 1,
                        Err(McError::Transport(_)) => break,
                        Err(e) => return Err(e),
                    }
                }
                if p.read_every > 0 && (i + 1) % p.read_every == 0 {
                    let id = history.invoke(c, "set", SetOp::Items);
                    let since = mine.borrow().now();
                    match index.items(&mc).await {
                        Ok(items) => {
                            let at = mine.borrow().read_since(c, since);
                            effect(&history, &effects, id, at);
                            history.complete(id, Some(items.into_iter().collect()))
                        }
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
    let reader = index.clone();
    sim.at_end("set.compaction_safe", move |view| {
        let value = view.peek(&key);
        let decoded = value.as_ref().map(|v| reader.decode(&v.data));
        let log = l.borrow();
        let erased: usize = log.drops.iter().map(|d| d.erased.len()).sum();
        let entries = h.entries();
        let (lost, extra) = membership_errors(&entries, decoded.as_ref());
        view.metric("set.modifications", log.modifications() as f64);
        view.metric("set.creation_races", log.races as f64);
        view.metric("set.compactions", log.compactions as f64);
        view.metric("set.compactions_refused", log.refused as f64);
        view.metric("set.erased_by_compaction", erased as f64);
        view.metric("set.lost", lost as f64);
        view.metric("set.dropped", dropped.get() as f64);
        view.metric("set.phantoms", phantoms(&entries, decoded.as_ref()) as f64);
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
        let final_items = match view.peek(&key).map(|v| index.decode(&v.data)) {
            None => Vec::new(),
            Some(Ok(d)) => d.members.into_iter().collect(),
            Some(Err(e)) => return Err(Failure::new(format!("the index does not decode: {e}"))),
        };
        let shown = final_items.join(" ");
        entries.push(final_read(&entries, final_items));
        let unexplained = |why: String| {
            Failure::new(format!(
                "no order of the set's operations explains what was read (at quiescence: \
                 {{{shown}}}; {races} add(s) lost the race to create the index); {why}"
            ))
            .with("creation_races", races as i64)
            .with("operations", entries.len() as i64)
        };
        // Most failing histories are decided by real time alone, before any search.
        if let Some(wrong) = order::misread(&entries) {
            return Err(unexplained(wrong.to_string()));
        }
        order::check(&entries, &effects.borrow()).map_err(|e| {
            let stuck = e.stuck.first().cloned().unwrap_or_default();
            unexplained(format!("stuck at: {stuck}"))
                .with("linearized", e.longest_prefix.len() as i64)
        })
    });
}

/// Notes that the operation `id` of `history` took effect at the server's instant `at`
/// (if known), under its call.
fn effect(history: &SetHistory, effects: &RefCell<BTreeMap<u64, u64>>, id: usize, at: Option<u64>) {
    if let Some(at) = at {
        let call = history.with_entries(|e| e[id].call);
        effects.borrow_mut().insert(call, at);
    }
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

/// Members a reader was shown (by a read, or at quiescence) that no client ever added:
/// what an encoding that splits or misreads members makes up.
fn phantoms(
    entries: &[Entry<SetOp, Option<Vec<String>>>],
    decoded: Option<&Result<crate::set::encoding::Decoded, McError>>,
) -> usize {
    let added: BTreeSet<&str> = entries
        .iter()
        .filter_map(|e| match &e.op {
            SetOp::Add(m) => Some(m.as_str()),
            _ => None,
        })
        .collect();
    let mut shown: BTreeSet<&str> = entries
        .iter()
        .filter_map(|e| match &e.ret {
            Some(Some(items)) => Some(items.iter().map(String::as_str)),
            _ => None,
        })
        .flatten()
        .collect();
    if let Some(Ok(d)) = decoded {
        shown.extend(d.members.iter().map(String::as_str));
    }
    shown.difference(&added).count()
}

/// Members whose owner's last completed modification disagrees with the index at
/// quiescence: `(lost, resurrected)`. A member whose last modification's outcome is
/// unknown is skipped.
fn membership_errors(
    entries: &[Entry<SetOp, Option<Vec<String>>>],
    decoded: Option<&Result<crate::set::encoding::Decoded, McError>>,
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
