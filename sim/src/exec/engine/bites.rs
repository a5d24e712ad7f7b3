//! Whether an injected fault bit: changed what some call of the recipe then saw.
//!
//! A lost request or reply, a value over the size limit, a pause and a death act on a
//! client directly, so they bite when they fire. An eviction bites when a later call
//! names the evicted key on that server; a crash, a skipped second or a server leaving
//! the list bites when a later call goes to that server. A fault that never bit could
//! not have broken anything: a pass that needed it is `vacuous`.

use crate::fault::{Fault, FaultKind};
use crate::protocol::Request;

use super::Faults;

/// A fault that has not bitten yet, and what would make it bite.
#[derive(Debug, Clone)]
pub(super) struct Pending {
    kind: FaultKind,
    server: usize,
    /// The evicted key; `None`: any call to the server.
    key: Option<String>,
}

impl Faults {
    /// A fault fired: counted, and either bitten at once or waiting for a call.
    pub(super) fn fault_fired(&mut self, fault: &Fault) {
        let kind = fault.kind();
        self.fired[kind as usize] += 1;
        self.budget_left = self.fired.iter().zip(&self.allowed).any(|(f, a)| f < a);
        let pending = match fault {
            Fault::Evict { server, key } => Pending {
                kind,
                server: *server,
                key: Some(key.clone()),
            },
            Fault::Crash { server } | Fault::SkipSecond { server } | Fault::Leave { server } => {
                Pending {
                    kind,
                    server: *server,
                    key: None,
                }
            }
            _ => {
                self.bitten[kind as usize] += 1;
                return;
            }
        };
        self.bites_pending.push(pending);
    }

    /// A call goes to `server`: the faults it makes bite.
    pub(super) fn note_bites(&mut self, request: &Request, server: usize) {
        let bitten = &mut self.bitten;
        self.bites_pending.retain(|p| {
            let bit = p.server == server
                && p.key.as_ref().is_none_or(|k| {
                    request
                        .keys()
                        .iter()
                        .any(|named| named.as_bytes() == k.as_bytes())
                });
            if bit {
                bitten[p.kind as usize] += 1;
            }
            !bit
        });
    }

    /// Per kind that fired: how many times, and how many of those bit (into `out`,
    /// emptied first).
    pub(super) fn fault_figures(&self, out: &mut Vec<(FaultKind, u32, u32)>) {
        out.clear();
        if self.fired.iter().all(|&n| n == 0) {
            return;
        }
        out.extend(
            FaultKind::ALL
                .into_iter()
                .zip(self.fired)
                .filter(|&(_, n)| n > 0)
                .map(|(kind, n)| (kind, n, self.bitten[kind as usize])),
        );
    }
}
