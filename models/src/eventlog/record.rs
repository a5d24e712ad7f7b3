//! What the event-log harness records: every put with its times and outcome, every
//! fetch with what it returned. The workload ([`super::harness`]) writes it; the checks
//! ([`super::check`]) read it.

use std::collections::BTreeMap;

use mcsim::VirtualTime;

/// How a put ended.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Still running.
    Running,
    /// The recipe says it is stored.
    Stored,
    /// The recipe reported an error to its caller.
    Refused(String),
    /// A transport fault: the writer cannot tell.
    Unknown,
}

/// One put.
#[derive(Debug, Clone, Hash)]
pub struct Put {
    /// Writer and sequence number.
    pub id: (u32, u32),
    /// The event's time (writer's clock, ms).
    pub when_ms: u64,
    /// Serialized size.
    pub bytes: usize,
    /// True time the put started.
    pub started: VirtualTime,
    /// True time it returned.
    pub ended: Option<VirtualTime>,
    /// How it ended.
    pub outcome: Outcome,
}

/// One fetch.
#[derive(Debug, Clone, Hash)]
pub struct Fetch {
    /// True time it was invoked.
    pub at: VirtualTime,
    /// The reader's clamped window, ms of its clock.
    pub first: u64,
    /// Its end.
    pub last: u64,
    /// The events returned: id and time.
    pub events: Vec<((u32, u32), u64)>,
    /// A tail reader's fetch (`first = lastSeen`), not a full one.
    pub tail: bool,
}

/// Everything the harness saw.
#[derive(Debug, Default, Hash)]
pub struct Ghost {
    /// Every put, in the order they started.
    pub puts: Vec<Put>,
    /// Every fetch.
    pub fetches: Vec<Fetch>,
}

/// Puts by id, for the checks.
pub fn puts_by_id(g: &Ghost) -> BTreeMap<(u32, u32), &Put> {
    g.puts.iter().map(|p| (p.id, p)).collect()
}
