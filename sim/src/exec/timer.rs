//! The world's timed events: what happens at a set instant whatever the clients do.

use crate::fault::Fault;

/// A timed event of the world.
#[derive(Debug, Clone, Hash)]
pub(crate) enum Timer {
    /// A crashed server comes back.
    Restart(usize),
    /// A server that left the clients' list rejoins it.
    Rejoin(usize),
    /// A fault the scenario scripted at a fixed time.
    Scripted(Fault),
}
