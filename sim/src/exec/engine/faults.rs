//! The faults that may fire at a step, within the plan's budgets.

use crate::exec::core::Wait;
use crate::explore::{CallOption, FaultOption};
use crate::fault::{Fault, FaultKind, FaultPlan, FaultRule};
use crate::memcache::Key;
use crate::protocol::{Request, StoreMode};

use super::observer::Observer;
use super::{Engine, Faults};

/// Builds a fault for a client.
type MakeFault = fn(usize) -> Fault;

/// Per kind (`kind as usize`), the keys its rule aims at, as text and parsed, in the
/// rule's order (`None`: the rule names no keys and aims anywhere; a text that is no
/// valid key aims at nothing): parsed once per plan, not at every step that builds the
/// options.
pub(super) type AimedKeys = [Option<Vec<(String, Key)>>; FaultKind::ALL.len()];

/// The keys each kind's rule in `plan` aims at ([`AimedKeys`]).
pub(super) fn aimed_keys(plan: &FaultPlan) -> AimedKeys {
    FaultKind::ALL.map(|kind| {
        let keys = plan.rule(kind)?.keys.as_ref()?;
        Some(
            keys.iter()
                .filter_map(|text| {
                    Key::new(text.as_bytes())
                        .ok()
                        .map(|key| (text.clone(), key))
                })
                .collect(),
        )
    })
}

/// True if `plan` aims a pause or death at keys: an execution then follows the keys of
/// each client's last call (what [`aimed_keys`] would give for either kind).
fn aims_at_keys(plan: &FaultPlan) -> bool {
    [FaultKind::Pause, FaultKind::Die]
        .into_iter()
        .any(|kind| plan.rule(kind).is_some_and(|rule| rule.keys.is_some()))
}

impl Faults {
    /// What follows from the fault plan alone, worked out when the plan changes, not at
    /// every execution: the keys each kind aims at, each kind's budget, and whether any
    /// budget is above zero. One pass over the plan's rules, the first rule of a kind
    /// counting (as `FaultPlan::rule` finds it), so the last written here.
    pub(super) fn adopt_plan(&mut self) {
        self.aimed_keys = aimed_keys(&self.plan);
        self.allowed = [0; FaultKind::ALL.len()];
        for (kind, rule) in self.plan.rules.iter().rev() {
            self.allowed[*kind as usize] = rule.max;
        }
        self.plan_budget = self.allowed.iter().any(|&max| max > 0);
        self.liveness =
            self.plan.rule(FaultKind::Pause).is_some() || self.plan.rule(FaultKind::Die).is_some();
        self.follows_keys = aims_at_keys(&self.plan);
    }

    /// Ready for an execution of `clients` clients: their last keys kept empty if the
    /// plan aims at keys, not kept otherwise.
    pub(super) fn begin(&mut self, clients: usize) {
        self.last_keys = self.follows_keys.then(|| vec![Vec::new(); clients]);
    }

    /// `client` calls with `keys`: kept as its last keys, if they are kept.
    pub(super) fn called(&mut self, client: usize, keys: &[Key]) {
        if let Some(slot) = self.last_keys.as_mut().and_then(|all| all.get_mut(client)) {
            slot.clear();
            slot.extend(keys.iter().cloned());
        }
    }

    /// The keys of `client`'s last call (none unless the plan aims at keys).
    fn last_keys_of(&self, client: usize) -> &[Key] {
        (self.last_keys.as_ref())
            .and_then(|all| all.get(client))
            .map_or(&[], Vec::as_slice)
    }
}

impl<O: Observer> Engine<O> {
    fn budget_left(&self, kind: FaultKind) -> Option<(f64, &FaultRule)> {
        if self.faults.fired[kind as usize] >= self.faults.allowed[kind as usize] {
            return None;
        }
        let rule = self.faults.plan.rule(kind)?;
        Some((rule.probability, rule))
    }

    /// True when a server-wide fault of `kind` may hit server `s`: its rule names no
    /// keys, or one of them maps to `s`.
    fn server_aimed(&self, kind: FaultKind, s: usize) -> bool {
        self.faults.aimed_keys[kind as usize]
            .as_ref()
            .is_none_or(|keys| {
                keys.iter()
                    .any(|(_, key)| self.cluster.server_for(key) == s)
            })
    }

    /// True if the client's pending call would change the server if it ran now: a `set`,
    /// an `add` of a missing key, an `incr`, `replace`, `append`, `cas`, `delete` or
    /// `touch` of a present one (a `cas` whose unique is stale counts too), a meta
    /// command or a flush. A lost reply or request matters there: the client may retry
    /// what was done, or believe done what was not. An `incr` that misses, an `add` that
    /// finds the key, or a read is simply retried.
    fn writes(&self, client: usize) -> bool {
        let core = self.sim.core.borrow();
        let mailbox = &core.mailboxes[client];
        let Some(request) = mailbox.pending() else {
            return false;
        };
        let now = core.now;
        // On the server the call goes to: the one it is addressed to, or its key's.
        let present = |key: &Key| {
            let target = mailbox
                .server
                .unwrap_or_else(|| self.cluster.server_for(key));
            self.cluster.servers[target].peek(key, now).is_some()
        };
        match request {
            Request::Get { .. } | Request::Gat { .. } | Request::Stats => false,
            Request::Store { mode, key, .. } => match mode {
                StoreMode::Set => true,
                StoreMode::Add => !present(key),
                _ => present(key),
            },
            Request::Arith { key, .. }
            | Request::Delete { key, .. }
            | Request::Touch { key, .. } => present(key),
            _ => !request.is_read_only(),
        }
    }

    /// True when a fault of `rule` may hit `client`'s pending call.
    fn call_aimed(&self, rule: &FaultRule, client: usize) -> bool {
        rule.keys.is_none() || {
            let core = self.sim.core.borrow();
            core.mailboxes[client]
                .pending()
                .is_some_and(|request| rule.aims_at(request.keys()))
        }
    }

    /// The faults that may fire at this step, into `out` (emptied first: the engine
    /// reuses one buffer for every step). Only asked when the plan has some: the step
    /// loop checks that once per execution.
    pub(super) fn fault_options(&self, calls: &[CallOption], out: &mut Vec<FaultOption>) {
        let mut options = Written { out, n: 0 };
        let now = self.now();
        if let Some((p, _)) = self.budget_left(FaultKind::Evict) {
            for (s, server) in self.cluster.servers.iter().enumerate() {
                if !server.is_up() {
                    continue;
                }
                match &self.faults.aimed_keys[FaultKind::Evict as usize] {
                    Some(keys) => {
                        for (text, key) in keys {
                            if server.peek(key, now).is_some() {
                                options.evict(s, text, p);
                            }
                        }
                    }
                    None => {
                        for (key, _) in server.live_items(now) {
                            options.evict(s, &key.to_string(), p);
                        }
                    }
                }
            }
        }
        for (kind, make) in [
            (
                FaultKind::ReplyLost,
                (|client| Fault::ReplyLost { client }) as MakeFault,
            ),
            (FaultKind::RequestLost, |client| Fault::RequestLost {
                client,
            }),
        ] {
            if let Some((p, rule)) = self.budget_left(kind) {
                for c in calls.iter().filter(|c| self.call_aimed(rule, c.client)) {
                    options.put(FaultOption {
                        fault: make(c.client),
                        probability: p,
                        aimed: self.writes(c.client),
                    });
                }
            }
        }
        if let Some((p, _)) = self.budget_left(FaultKind::Crash) {
            for (s, server) in self.cluster.servers.iter().enumerate() {
                if server.is_up() && self.server_aimed(FaultKind::Crash, s) {
                    options.put(FaultOption {
                        fault: Fault::Crash { server: s },
                        probability: p,
                        aimed: true,
                    });
                }
            }
        }
        if let Some((p, _)) = self.budget_left(FaultKind::Leave)
            && self.cluster.listed_count() >= 2
        {
            for s in 0..self.cluster.servers.len() {
                if self.cluster.is_listed(s) && self.server_aimed(FaultKind::Leave, s) {
                    options.put(FaultOption {
                        fault: Fault::Leave { server: s },
                        probability: p,
                        aimed: true,
                    });
                }
            }
        }
        if let Some((p, _)) = self.budget_left(FaultKind::SkipSecond) {
            for s in (0..self.cluster.servers.len())
                .filter(|&s| self.server_aimed(FaultKind::SkipSecond, s))
            {
                options.put(FaultOption {
                    fault: Fault::SkipSecond { server: s },
                    probability: p,
                    aimed: true,
                });
            }
        }
        self.client_fault_options(calls, &mut options);
        let n = options.n;
        out.truncate(n);
    }

    /// Pauses and deaths of any running client, and values over the item limit for
    /// pending storage commands.
    fn client_fault_options(&self, calls: &[CallOption], options: &mut Written<'_>) {
        let core = self.sim.core.borrow();
        let client_faults: [(FaultKind, MakeFault); 2] = [
            (FaultKind::Pause, |client| Fault::Pause { client }),
            (FaultKind::Die, |client| Fault::Die { client }),
        ];
        for (kind, make) in client_faults {
            let Some((p, rule)) = self.budget_left(kind) else {
                continue;
            };
            for (client, m) in core.mailboxes.iter().enumerate() {
                let aimed = match &m.wait {
                    Wait::Call { .. } => rule.aims_at(m.request.keys()),
                    Wait::Sleep { .. } => rule.aims_at(self.faults.last_keys_of(client)),
                    _ => false,
                };
                if aimed {
                    options.put(FaultOption {
                        fault: make(client),
                        probability: p,
                        aimed: self.per_client.get(client).is_some_and(|c| c.wrote_last),
                    });
                }
            }
        }
        if let Some((p, rule)) = self.budget_left(FaultKind::TooLarge) {
            for c in calls {
                if let Some(request @ Request::Store { .. }) = core.mailboxes[c.client].pending()
                    && rule.aims_at(request.keys())
                {
                    options.put(FaultOption {
                        fault: Fault::TooLarge { client: c.client },
                        probability: p,
                        aimed: true,
                    });
                }
            }
        }
    }
}

/// The step's fault options written into the engine's buffer in place: an entry that
/// already holds the same fault (an eviction of the same key, as at most steps) is kept
/// with its key text instead of being dropped and built again. Entries past `n` are
/// left over from an earlier step.
struct Written<'a> {
    out: &'a mut Vec<FaultOption>,
    n: usize,
}

impl Written<'_> {
    /// Writes `option` as the next entry.
    fn put(&mut self, option: FaultOption) {
        match self.out.get_mut(self.n) {
            Some(slot) => *slot = option,
            None => self.out.push(option),
        }
        self.n += 1;
    }

    /// Writes an eviction of `key` on `server` as the next entry, its text copied only
    /// when that entry held another fault.
    fn evict(&mut self, server: usize, key: &str, probability: f64) {
        if let Some(slot) = self.out.get_mut(self.n)
            && matches!(&slot.fault, Fault::Evict { server: s, key: k } if *s == server && k == key)
        {
            slot.probability = probability;
            slot.aimed = true;
            self.n += 1;
            return;
        }
        self.put(FaultOption {
            fault: Fault::Evict {
                server,
                key: key.to_string(),
            },
            probability,
            aimed: true,
        });
    }
}
