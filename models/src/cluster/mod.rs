//! Keys spread over several servers (RECIPES.md §12): `crc32(key) % n` against
//! libketama consistent hashing, when a server leaves the clients' list and comes back.
//!
//! The distribution is the scenario's `servers.distribution` (`modulo` or `ketama`); the
//! workload (variant `rehash`) writes `keys` keys, then server `leave_server` leaves the
//! list at `leave_at_ms` (a scripted fault), the client reads every key back (a miss is a
//! key that moved), writes new values for the moved keys, and after the server rejoins
//! (`faults.rejoin_after_ms` later) reads again: keys that map back to the returning
//! server show its old values.
//!
//! Invariants: `cluster.no_lost_keys` (every key written is read back after the server
//! leaves) and `cluster.no_stale_after_rejoin` (no read after the rejoin returns a value
//! older than the last write). Metrics: `cluster.moved_fraction`,
//! `cluster.stale_fraction`, `cluster.balance` (most keys on one server over the mean).

mod harness;

pub use harness::{ClusterParams, setup};

use mcsim::prelude::*;

/// The one cluster recipe: keys spread over servers by the client's distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterVariant {
    /// Each key on the server its hash picks; the list changes when one leaves.
    Rehash,
}

/// A cluster scenario's `[params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// Keys written.
    pub keys: Count,
    /// The server that leaves the list (an index below `servers.count`).
    pub leave_server: usize,
    /// When it leaves.
    pub leave_at_ms: Millis,
    /// When the client reads again, after the rejoin.
    pub read_after_rejoin_ms: Millis,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            keys: Count(1000),
            leave_server: 0,
            leave_at_ms: Millis(1000),
            read_after_rejoin_ms: Millis(3000),
        }
    }
}

impl Model for ClusterVariant {
    const NAME: &'static str = "cluster";
    const VARIANTS: &'static [(&'static str, ClusterVariant)] =
        &[("rehash", ClusterVariant::Rehash)];
    const INVARIANTS: &'static [&'static str] =
        &["cluster.no_lost_keys", "cluster.no_stale_after_rejoin"];
    const CLAIMS: &'static [Claim] = &[Claim {
        variant: "rehash",
        source: "HL clustering",
        says: "crc32(key) % n spreads keys over the servers; when one leaves, its keys move and come back stale when it returns (consistent hashing moves about 1/n).",
        presented_as_correct: false,
        magnitude: &["cluster.moved_fraction", "cluster.stale_fraction"],
    }];
    type Params = Params;

    fn check_params(&self, p: &Params, cx: &Context) -> Result<(), FieldError> {
        if p.leave_server >= cx.servers {
            return Err(FieldError::new(
                "params.leave_server",
                None,
                format!(
                    "{} is not a server: the scenario has {} (0 to {})",
                    p.leave_server,
                    cx.servers,
                    cx.servers - 1
                ),
            ));
        }
        Ok(())
    }

    fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
        let params = ClusterParams {
            keys: p.keys.get(),
            leave_server: p.leave_server,
            leave_at: p.leave_at_ms.get(),
            read_after_rejoin: p.read_after_rejoin_ms.get(),
        };
        setup(&params, cx.clients, sim);
    }
}
