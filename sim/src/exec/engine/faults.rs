//! The faults that may fire at a step, within the plan's budgets.

use crate::exec::core::Wait;
use crate::explore::{CallOption, FaultOption};
use crate::fault::{EvictTarget, Fault, FaultKind};
use crate::memcache::Key;
use crate::protocol::Request;

use super::Engine;

/// Builds a fault for a client.
type MakeFault = fn(usize) -> Fault;

impl Engine<'_> {
    fn budget_left(&self, kind: FaultKind) -> Option<f64> {
        let rule = self.config.faults.rule(kind)?;
        let used = self.fault_counts.get(&kind).copied().unwrap_or(0);
        (used < rule.max).then_some(rule.probability)
    }

    /// The faults that may fire at this step. Only asked when the plan has some: the
    /// step loop checks that once per execution.
    pub(super) fn fault_options(&self, calls: &[CallOption]) -> Vec<FaultOption> {
        let mut out = Vec::new();
        let now = self.now();
        if let Some(p) = self.budget_left(FaultKind::Evict) {
            for (s, server) in self.cluster.servers.iter().enumerate() {
                if !server.is_up() {
                    continue;
                }
                match &self.config.faults.evict {
                    EvictTarget::Keys(keys) => {
                        for k in keys {
                            if let Ok(key) = Key::new(k.as_bytes())
                                && server.peek(&key, now).is_some()
                            {
                                out.push(FaultOption {
                                    fault: Fault::Evict {
                                        server: s,
                                        key: k.clone(),
                                    },
                                    probability: p,
                                });
                            }
                        }
                    }
                    EvictTarget::Any => {
                        for (key, _) in server.live_items(now) {
                            out.push(FaultOption {
                                fault: Fault::Evict {
                                    server: s,
                                    key: key.to_string(),
                                },
                                probability: p,
                            });
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
            if let Some(p) = self.budget_left(kind) {
                for c in calls {
                    out.push(FaultOption {
                        fault: make(c.client),
                        probability: p,
                    });
                }
            }
        }
        if let Some(p) = self.budget_left(FaultKind::Crash) {
            for (s, server) in self.cluster.servers.iter().enumerate() {
                if server.is_up() {
                    out.push(FaultOption {
                        fault: Fault::Crash { server: s },
                        probability: p,
                    });
                }
            }
        }
        if let Some(p) = self.budget_left(FaultKind::Leave)
            && self.cluster.listed_count() >= 2
        {
            for s in 0..self.cluster.servers.len() {
                if self.cluster.is_listed(s) {
                    out.push(FaultOption {
                        fault: Fault::Leave { server: s },
                        probability: p,
                    });
                }
            }
        }
        if let Some(p) = self.budget_left(FaultKind::SkipSecond) {
            for s in 0..self.cluster.servers.len() {
                out.push(FaultOption {
                    fault: Fault::SkipSecond { server: s },
                    probability: p,
                });
            }
        }
        self.client_fault_options(calls, &mut out);
        out
    }

    /// Pauses and deaths of any running client, and values over the item limit for
    /// pending storage commands.
    fn client_fault_options(&self, calls: &[CallOption], out: &mut Vec<FaultOption>) {
        let core = self.core.borrow();
        let client_faults: [(FaultKind, MakeFault); 2] = [
            (FaultKind::Pause, |client| Fault::Pause { client }),
            (FaultKind::Die, |client| Fault::Die { client }),
        ];
        for (kind, make) in client_faults {
            let Some(p) = self.budget_left(kind) else {
                continue;
            };
            for (client, m) in core.mailboxes.iter().enumerate() {
                if matches!(m.wait, Wait::Sleep { .. } | Wait::Call { .. }) {
                    out.push(FaultOption {
                        fault: make(client),
                        probability: p,
                    });
                }
            }
        }
        if let Some(p) = self.budget_left(FaultKind::TooLarge) {
            for c in calls {
                if let Wait::Call {
                    request: Request::Store { .. },
                    ..
                } = &core.mailboxes[c.client].wait
                {
                    out.push(FaultOption {
                        fault: Fault::TooLarge { client: c.client },
                        probability: p,
                    });
                }
            }
        }
    }
}
