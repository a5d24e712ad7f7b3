//! Faults: what a real deployment does to recipes, as choices the strategy can make.
//!
//! A [`FaultPlan`] says which faults a run may suffer, how often (for the random
//! strategies) and at most how many times. The engine offers only the faults the plan
//! still allows; the strategy decides whether and when one fires; every fault that fires
//! is recorded in the schedule like any other choice.

use std::fmt;
use std::time::Duration;

use crate::memcache::Key;

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

impl Fault {
    /// The client this fault happens to, if it happens to one.
    pub fn client(&self) -> Option<usize> {
        match self {
            Fault::ReplyLost { client }
            | Fault::RequestLost { client }
            | Fault::Pause { client }
            | Fault::Die { client }
            | Fault::TooLarge { client } => Some(*client),
            Fault::Evict { .. }
            | Fault::Crash { .. }
            | Fault::SkipSecond { .. }
            | Fault::Leave { .. } => None,
        }
    }

    /// The same fault with its client renamed by `rename` (the others unchanged).
    pub fn relabeled(&self, rename: impl Fn(usize) -> usize) -> Fault {
        match *self {
            Fault::ReplyLost { client } => Fault::ReplyLost {
                client: rename(client),
            },
            Fault::RequestLost { client } => Fault::RequestLost {
                client: rename(client),
            },
            Fault::Pause { client } => Fault::Pause {
                client: rename(client),
            },
            Fault::Die { client } => Fault::Die {
                client: rename(client),
            },
            Fault::TooLarge { client } => Fault::TooLarge {
                client: rename(client),
            },
            _ => self.clone(),
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
    /// Every kind, in a fixed order: the order of declaration, so that `kind as usize`
    /// is its place here (the engine keeps per-kind budgets in an array).
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
    /// Only where these keys are involved (`None`: anywhere). An eviction hits only these
    /// keys; a lost request or reply and a value over the limit hit only calls naming
    /// one; a pause or a death hits a client only while its pending call names one, or
    /// while it sleeps after a call that did (holding the lock it just took, say); a
    /// crash, a skipped second or a server leaving hits only servers one of them maps to.
    pub keys: Option<Vec<String>>,
}

impl FaultRule {
    /// True when the rule allows a fault where these keys are involved (a call's, or a
    /// client's last call's).
    pub fn aims_at(&self, keys: &[Key]) -> bool {
        match &self.keys {
            None => true,
            Some(aimed) => keys
                .iter()
                .any(|k| aimed.iter().any(|a| a.as_bytes() == k.as_bytes())),
        }
    }
}

/// The faults a run may suffer: a rule per kind allowed, and the delays faults take.
///
/// Start from a constructor per kind ([`FaultPlan::evictions`], [`FaultPlan::pauses`],
/// …), aim it at keys with [`FaultPlan::on_keys`], and combine plans with
/// [`FaultPlan::and`]:
///
/// ```
/// use std::time::Duration;
/// use mcsim::{FaultKind, FaultPlan};
///
/// let plan = FaultPlan::evictions()
///     .on_keys(&["lock"])
///     .and(FaultPlan::pauses(Duration::from_secs(3)))
///     .and(FaultPlan::deaths().max(1));
/// assert_eq!(plan.rule(FaultKind::Evict).unwrap().keys, Some(vec!["lock".to_string()]));
/// assert_eq!(plan.pause_for, Duration::from_secs(3));
/// assert_eq!(plan.rule(FaultKind::Die).unwrap().max, 1);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FaultPlan {
    /// Rules by kind, in [`FaultKind`] order; a kind without a rule never fires.
    pub rules: Vec<(FaultKind, FaultRule)>,
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

impl Default for FaultPlan {
    fn default() -> FaultPlan {
        FaultPlan::none()
    }
}

impl FaultPlan {
    /// How long a client waits for a lost request or reply, unless a plan says otherwise.
    pub const TIMEOUT: Duration = Duration::from_millis(100);
    /// How long a crashed server stays down, unless a plan says otherwise.
    pub const RESTART_AFTER: Duration = Duration::from_secs(1);
    /// How long a server stays out of the list, unless a plan says otherwise.
    pub const REJOIN_AFTER: Duration = Duration::from_secs(1);
    /// How long a paused client stops, unless a plan says otherwise.
    pub const PAUSE_FOR: Duration = Duration::from_secs(5);

    /// No faults at all, with the default delays.
    ///
    /// Each constructor below allows one kind with a budget, stated in its doc: at most
    /// `max` faults of that kind per execution, each possible step firing with chance
    /// `probability` (random strategies; `swarm` scales it, exhaustive searches try every
    /// placement within `max`). [`FaultPlan::max`] and [`FaultPlan::probability`] change
    /// them; [`FaultPlan::allow`] sets both for any kind.
    pub fn none() -> FaultPlan {
        FaultPlan {
            rules: Vec::new(),
            timeout: FaultPlan::TIMEOUT,
            restart_after: FaultPlan::RESTART_AFTER,
            warm_restart: false,
            rejoin_after: FaultPlan::REJOIN_AFTER,
            pause_for: FaultPlan::PAUSE_FOR,
        }
    }

    /// The same plan allowing one more kind, anywhere (a rule the plan had for it is
    /// replaced).
    pub fn allow(mut self, kind: FaultKind, max: u32, probability: f64) -> FaultPlan {
        self.rules.retain(|(k, _)| *k != kind);
        self.rules.push((
            kind,
            FaultRule {
                max,
                probability,
                keys: None,
            },
        ));
        self.rules.sort_by_key(|(k, _)| *k);
        self
    }

    /// At most 3 evictions of any key per execution, each step with chance 0.05: the
    /// pressure of other traffic on a shared memcached.
    pub fn evictions() -> FaultPlan {
        FaultPlan::none().allow(FaultKind::Evict, 3, 0.05)
    }

    /// At most 3 replies lost per execution (chance 0.05 a call), after the server
    /// applied the call: the client times out after [`FaultPlan::timeout`], not knowing
    /// whether the call took effect.
    pub fn lost_replies() -> FaultPlan {
        FaultPlan::none().allow(FaultKind::ReplyLost, 3, 0.05)
    }

    /// At most 3 requests lost per execution (chance 0.05 a call) before the server saw
    /// them (the client times out).
    pub fn lost_requests() -> FaultPlan {
        FaultPlan::none().allow(FaultKind::RequestLost, 3, 0.05)
    }

    /// At most one crash of a server per execution (chance 0.01 a step), which comes back
    /// empty after [`FaultPlan::restart_after`] (1 s; [`FaultPlan::restarting_after`]
    /// changes it).
    pub fn crashes() -> FaultPlan {
        FaultPlan::none().allow(FaultKind::Crash, 1, 0.01)
    }

    /// At most 2 seconds a server's clock skips per execution (chance 0.01 a step):
    /// memcached's timer firing late, then catching up; items expire a second early.
    pub fn skipped_seconds() -> FaultPlan {
        FaultPlan::none().allow(FaultKind::SkipSecond, 2, 0.01)
    }

    /// At most one server leaving the clients' list per execution (chance 0.01 a step),
    /// for [`FaultPlan::rejoin_after`] (needs two servers or more): its keys map
    /// elsewhere meanwhile.
    pub fn leaves() -> FaultPlan {
        FaultPlan::none().allow(FaultKind::Leave, 1, 0.01)
    }

    /// At most 2 pauses of a client per execution (chance 0.02 a step), for `pause_for`
    /// each (a GC pause, a stopped VM), wherever it is: in a sleep (holding a lock) or
    /// before its call reaches the server.
    pub fn pauses(pause_for: Duration) -> FaultPlan {
        FaultPlan {
            pause_for,
            ..FaultPlan::none().allow(FaultKind::Pause, 2, 0.02)
        }
    }

    /// At most one client's process dying per execution (chance 0.02 a step; `.max(n)`
    /// for more), where it is: its pending call is never sent and it never runs again
    /// ([`crate::Sim::on_death`] tells the model).
    pub fn deaths() -> FaultPlan {
        FaultPlan::none().allow(FaultKind::Die, 1, 0.02)
    }

    /// At most 2 storage calls per execution (chance 0.02 a call) carrying a value over
    /// the item size limit (memcached refuses it, and a `set` loses the key's old value).
    pub fn too_large_values() -> FaultPlan {
        FaultPlan::none().allow(FaultKind::TooLarge, 2, 0.02)
    }

    /// This plan with every rule of `other` too, and every delay `other` changed from
    /// the defaults: for a kind both allow, `other`'s rule wins; for a delay both
    /// changed, `other`'s. `a.and(b).and(c) == a.and(b.and(c))`.
    pub fn and(mut self, other: FaultPlan) -> FaultPlan {
        for (kind, rule) in other.rules {
            self.rules.retain(|(k, _)| *k != kind);
            self.rules.push((kind, rule));
        }
        self.rules.sort_by_key(|(k, _)| *k);
        let none = FaultPlan::none();
        if other.timeout != none.timeout {
            self.timeout = other.timeout;
        }
        if other.restart_after != none.restart_after {
            self.restart_after = other.restart_after;
        }
        if other.rejoin_after != none.rejoin_after {
            self.rejoin_after = other.rejoin_after;
        }
        if other.pause_for != none.pause_for {
            self.pause_for = other.pause_for;
        }
        self.warm_restart |= other.warm_restart;
        self
    }

    /// Every rule of the plan aimed at these keys only (see [`FaultRule::keys`]).
    pub fn on_keys(mut self, keys: &[&str]) -> FaultPlan {
        let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        for (_, rule) in &mut self.rules {
            rule.keys = Some(keys.clone());
        }
        self
    }

    /// Evictions hit only these keys (the other rules stay as they are).
    pub fn evict_keys(mut self, keys: &[&str]) -> FaultPlan {
        if let Some((_, rule)) = self.rules.iter_mut().find(|(k, _)| *k == FaultKind::Evict) {
            rule.keys = Some(keys.iter().map(|k| k.to_string()).collect());
        }
        self
    }

    /// Every rule of the plan allows at most `max` faults per execution.
    pub fn max(mut self, max: u32) -> FaultPlan {
        for (_, rule) in &mut self.rules {
            rule.max = max;
        }
        self
    }

    /// Every rule of the plan fires with this chance at each step where it can (for the
    /// random strategies; exhaustive searches try every placement).
    pub fn probability(mut self, probability: f64) -> FaultPlan {
        for (_, rule) in &mut self.rules {
            rule.probability = probability;
        }
        self
    }

    /// Lost requests and replies time out after `timeout`.
    pub fn timing_out_after(mut self, timeout: Duration) -> FaultPlan {
        self.timeout = timeout;
        self
    }

    /// A crashed server stays down this long.
    pub fn restarting_after(mut self, delay: Duration) -> FaultPlan {
        self.restart_after = delay;
        self
    }

    /// A crashed server comes back with its items (memcached's `-e` warm restart).
    pub fn warm(mut self) -> FaultPlan {
        self.warm_restart = true;
        self
    }

    /// A server that left the list rejoins after this long.
    pub fn rejoining_after(mut self, delay: Duration) -> FaultPlan {
        self.rejoin_after = delay;
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

#[cfg(test)]
mod tests {
    use super::FaultKind;

    #[test]
    fn a_kind_as_usize_is_its_place_in_all() {
        for (i, kind) in FaultKind::ALL.iter().enumerate() {
            assert_eq!(*kind as usize, i, "{kind:?}");
        }
    }
}
