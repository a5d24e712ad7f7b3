//! Faults: what a real deployment does to recipes, as choices the strategy can make.
//!
//! A [`FaultPlan`] says which faults a run may suffer, how often (for the random
//! strategies) and at most how many times. The engine offers only the faults the plan
//! still allows; the strategy decides whether and when one fires; every fault that fires
//! is recorded in the schedule like any other choice.

use std::fmt;
use std::time::Duration;

/// One fault the strategy picked.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// The server evicts this key now (memory pressure, or the `evict(key)` hook).
    Evict {
        /// Which server.
        server: usize,
        /// The key, as text.
        key: String,
    },
    /// The server applies the client's pending call but the reply is lost: the client
    /// sees a timeout with unknown outcome.
    ReplyLost {
        /// Whose call.
        client: usize,
    },
    /// The client's pending call never reaches the server: the client sees a timeout.
    RequestLost {
        /// Whose call.
        client: usize,
    },
    /// The server crashes, losing everything; it restarts after the plan's delay.
    Crash {
        /// Which server.
        server: usize,
    },
    /// The server's whole-second clock jumps one second ahead.
    SkipSecond {
        /// Which server.
        server: usize,
    },
    /// The server leaves the clients' server list (it keeps running and keeps its items);
    /// its keys map elsewhere until it rejoins after the plan's delay.
    Leave {
        /// Which server.
        server: usize,
    },
    /// The client stops for the plan's `pause_for` (a GC pause, a stopped VM) wherever it
    /// is: inside a sleep (holding a lock, say) or before its pending call reaches the
    /// server. Then it goes on as if nothing happened.
    Pause {
        /// Which client.
        client: usize,
    },
    /// The client's process dies where it is: its pending call is never sent and it never
    /// runs again. What it stored stays until its TTL.
    Die {
        /// Which client.
        client: usize,
    },
    /// The client's pending storage command carries a value over the item size limit:
    /// the server answers `SERVER_ERROR object too large for cache` (and a `set` loses
    /// the key's old value), as memcached does.
    TooLarge {
        /// Which client.
        client: usize,
    },
}

impl Fault {
    /// True for the faults that run a client's pending call (losing its request or its
    /// reply, a value over the item limit): they show as that call.
    pub fn runs_a_call(&self) -> bool {
        matches!(
            self,
            Fault::ReplyLost { .. } | Fault::RequestLost { .. } | Fault::TooLarge { .. }
        )
    }

    /// The kind of fault.
    pub fn kind(&self) -> FaultKind {
        match self {
            Fault::Evict { .. } => FaultKind::Evict,
            Fault::ReplyLost { .. } => FaultKind::ReplyLost,
            Fault::RequestLost { .. } => FaultKind::RequestLost,
            Fault::Crash { .. } => FaultKind::Crash,
            Fault::SkipSecond { .. } => FaultKind::SkipSecond,
            Fault::Leave { .. } => FaultKind::Leave,
            Fault::Pause { .. } => FaultKind::Pause,
            Fault::Die { .. } => FaultKind::Die,
            Fault::TooLarge { .. } => FaultKind::TooLarge,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Evict { server, key } => write!(f, "evict {key} from server {server}"),
            Fault::ReplyLost { client } => write!(f, "reply to c{client} lost"),
            Fault::RequestLost { client } => write!(f, "request of c{client} lost"),
            Fault::Crash { server } => write!(f, "server {server} crashes"),
            Fault::SkipSecond { server } => write!(f, "server {server} clock skips a second"),
            Fault::Leave { server } => write!(f, "server {server} leaves the client's list"),
            Fault::Pause { client } => write!(f, "c{client} pauses"),
            Fault::Die { client } => write!(f, "c{client} dies"),
            Fault::TooLarge { client } => {
                write!(f, "c{client} stores a value over the item size limit")
            }
        }
    }
}

/// The kinds of faults a plan can allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultKind {
    /// [`Fault::Evict`]
    Evict,
    /// [`Fault::ReplyLost`]
    ReplyLost,
    /// [`Fault::RequestLost`]
    RequestLost,
    /// [`Fault::Crash`]
    Crash,
    /// [`Fault::SkipSecond`]
    SkipSecond,
    /// [`Fault::Leave`]
    Leave,
    /// [`Fault::Pause`]
    Pause,
    /// [`Fault::Die`]
    Die,
    /// [`Fault::TooLarge`]
    TooLarge,
}

impl FaultKind {
    /// Every kind, in a fixed order.
    pub const ALL: [FaultKind; 9] = [
        FaultKind::Evict,
        FaultKind::ReplyLost,
        FaultKind::RequestLost,
        FaultKind::Crash,
        FaultKind::SkipSecond,
        FaultKind::Leave,
        FaultKind::Pause,
        FaultKind::Die,
        FaultKind::TooLarge,
    ];

    /// The name used in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Evict => "evict",
            FaultKind::ReplyLost => "reply_lost",
            FaultKind::RequestLost => "request_lost",
            FaultKind::Crash => "crash",
            FaultKind::SkipSecond => "skip_second",
            FaultKind::Leave => "leave",
            FaultKind::Pause => "pause",
            FaultKind::Die => "die",
            FaultKind::TooLarge => "too_large",
        }
    }
}

/// How one kind of fault may occur in a run.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultRule {
    /// At most this many per run.
    pub max: u32,
    /// Chance, at each step where it is possible, that the random strategies fire it.
    pub probability: f64,
}

/// Which keys an eviction may hit.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum EvictTarget {
    /// Only these keys (when present).
    Keys(Vec<String>),
    /// Any key present on the server (LRU pressure on an unknown key).
    #[default]
    Any,
}

/// The faults a run may suffer.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FaultPlan {
    /// Rules by kind; a kind without a rule never fires.
    pub rules: Vec<(FaultKind, FaultRule)>,
    /// Which keys evictions may hit.
    pub evict: EvictTarget,
    /// How long a client waits before a lost request or reply becomes a timeout.
    pub timeout: Duration,
    /// How long a crashed server stays down.
    pub restart_after: Duration,
    /// Whether the restart keeps items (`-e` warm restart).
    pub warm_restart: bool,
    /// How long a server that left the list stays out.
    pub rejoin_after: Duration,
    /// How long a paused client stops.
    pub pause_for: Duration,
}

impl FaultPlan {
    /// No faults at all.
    pub fn none() -> FaultPlan {
        FaultPlan {
            timeout: Duration::from_millis(100),
            restart_after: Duration::from_secs(1),
            rejoin_after: Duration::from_secs(1),
            pause_for: Duration::from_secs(5),
            ..FaultPlan::default()
        }
    }

    /// The same plan allowing one more kind.
    pub fn allow(mut self, kind: FaultKind, max: u32, probability: f64) -> FaultPlan {
        self.rules.retain(|(k, _)| *k != kind);
        self.rules.push((kind, FaultRule { max, probability }));
        self.rules.sort_by_key(|(k, _)| *k);
        self
    }

    /// Up to 3 evictions of any key, each step with chance 0.05: the pressure of other
    /// traffic on a shared memcached.
    pub fn evictions() -> FaultPlan {
        FaultPlan::none().allow(FaultKind::Evict, 3, 0.05)
    }

    /// Up to 3 replies lost after the server applied the call (the client times out).
    pub fn lost_replies() -> FaultPlan {
        FaultPlan::none().allow(FaultKind::ReplyLost, 3, 0.05)
    }

    /// Up to 3 requests lost before the server saw them (the client times out).
    pub fn lost_requests() -> FaultPlan {
        FaultPlan::none().allow(FaultKind::RequestLost, 3, 0.05)
    }

    /// One crash of a server, which comes back empty after `restart_after`.
    pub fn crashes() -> FaultPlan {
        FaultPlan::none().allow(FaultKind::Crash, 1, 0.01)
    }

    /// This plan with every rule of `other` too (`other`'s rule wins for a kind both
    /// have; `other`'s eviction keys when it names some).
    pub fn and(mut self, other: FaultPlan) -> FaultPlan {
        for (kind, rule) in other.rules {
            self = self.allow(kind, rule.max, rule.probability);
        }
        if other.evict != EvictTarget::Any {
            self.evict = other.evict;
        }
        self
    }

    /// Evictions hit only these keys.
    pub fn evict_keys(mut self, keys: &[&str]) -> FaultPlan {
        self.evict = EvictTarget::Keys(keys.iter().map(|k| k.to_string()).collect());
        self
    }

    /// The rule for a kind, if the plan allows it.
    pub fn rule(&self, kind: FaultKind) -> Option<&FaultRule> {
        self.rules.iter().find(|(k, _)| *k == kind).map(|(_, r)| r)
    }

    /// True if no fault can fire.
    pub fn is_empty(&self) -> bool {
        self.rules.iter().all(|(_, r)| r.max == 0)
    }
}
