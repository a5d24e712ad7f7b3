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

/// The recipe family's name.
pub const FAMILY: &str = "cluster";

/// Its variants.
pub const VARIANTS: &[&str] = &["rehash"];

/// Its invariants.
pub const INVARIANTS: &[&str] = &["cluster.no_lost_keys", "cluster.no_stale_after_rejoin"];

/// Builds a cluster scenario's setup from its parameters.
pub fn build(
    cx: &mcsim::scenario::BuildContext<'_>,
) -> Result<mcsim::scenario::Setup, mcsim::scenario::FieldError> {
    let p = cx.params;
    let params = ClusterParams {
        keys: p.count("keys", 1000)?,
        leave_server: p.server("leave_server", 0, cx.servers)?,
        leave_at: p.millis("leave_at_ms", 1000)?,
        read_after_rejoin: p.millis("read_after_rejoin_ms", 3000)?,
    };
    let clients = cx.clients;
    Ok(std::rc::Rc::new(move |sim| setup(&params, clients, sim)))
}
