//! Faults by policy: which kinds a run may suffer, how often, how many at most and aimed at
//! which keys (a [`FaultPlan`], as a scenario file's `[faults]` gives it), and, over a
//! run, what fired, what bit, and which servers are down until when.
//!
//! A fault *bites* when the program meets it: an evicted key when a later command names
//! it; a crash, a leave or a skipped second when a later command goes to that server (a
//! connection it refused counts); a lost request or reply and a pause as they fire. A
//! kind that fired in some run but never bit in any leaves a pass that shows nothing
//! about it.

use std::time::Duration;

use mcsim::clock::VirtualTime;
use mcsim::codec::gate::Pending;
use mcsim::fault::{FaultKind, FaultPlan, FaultRule};

/// The faults `mcsim serve` injects by policy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FaultPolicy {
    /// Each kind's chance at each command where it can fire, its budget per run (a
    /// flag's is unbounded) and the keys it is aimed at; how long a crashed server stays
    /// down (`restart_after`, zero: it restarts at once), whether it keeps its items
    /// (`warm_restart`), how long a server that left stays away (`rejoin_after`) and
    /// how long a pause lasts (`pause_for`). `timeout` is not used: a program's client
    /// has its own.
    pub plan: FaultPlan,
    /// Every reply is held this long.
    pub delay: Duration,
}

impl FaultPolicy {
    /// The kinds `mcsim serve` injects: every kind but a client's death and a value over
    /// the item limit, which happen in the client's own process.
    pub const KINDS: [FaultKind; 7] = [
        FaultKind::Evict,
        FaultKind::ReplyLost,
        FaultKind::RequestLost,
        FaultKind::Crash,
        FaultKind::SkipSecond,
        FaultKind::Leave,
        FaultKind::Pause,
    ];

    /// The `mcsim test` flag that allows `kind` with a chance (unbounded per run).
    pub fn flag(kind: FaultKind) -> &'static str {
        match kind {
            FaultKind::Evict => "--evict",
            FaultKind::ReplyLost => "--lose-reply",
            FaultKind::RequestLost => "--lose-request",
            FaultKind::Crash => "--crash",
            FaultKind::SkipSecond => "--skip-second",
            FaultKind::Leave => "--leave",
            FaultKind::Pause => "--pause",
            FaultKind::Die | FaultKind::TooLarge => "",
        }
    }

    /// The policy's rule for `kind`, if it allows any of it.
    pub fn rule(&self, kind: FaultKind) -> Option<&FaultRule> {
        self.plan
            .rule(kind)
            .filter(|r| r.max > 0 && r.probability > 0.0)
    }

    /// The kinds it may inject, in [`FaultKind`] order.
    pub fn kinds(&self) -> Vec<FaultKind> {
        FaultKind::ALL
            .into_iter()
            .filter(|&k| self.rule(k).is_some())
            .collect()
    }

    /// True if some fault may be injected.
    pub fn any(&self) -> bool {
        !self.kinds().is_empty()
    }
}

/// How many faults of each kind fired and bit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaultCount {
    /// Injected.
    pub fired: u64,
    /// Met by the program (see the module's doc).
    pub bit: u64,
}

/// What a fault that has not bitten yet waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// A command naming this key on this server.
    Key(usize, Vec<u8>),
    /// A command to this server.
    Server(usize),
}

/// A server that is down, and how it comes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Down {
    /// Which fault took it down.
    pub kind: FaultKind,
    /// When it comes back.
    pub until: VirtualTime,
}

/// The faults of one run: the policy, and what fired and bit so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct Faults {
    pub policy: FaultPolicy,
    /// By kind, in [`FaultKind::ALL`] order.
    counts: [FaultCount; FaultKind::ALL.len()],
    /// Faults fired that have not bitten yet.
    waiting: Vec<(FaultKind, Target)>,
    /// By server, down after a crash or a leave, until it comes back.
    pub down: Vec<Option<Down>>,
}

impl Faults {
    pub fn new(policy: FaultPolicy, servers: usize) -> Faults {
        Faults {
            policy,
            counts: Default::default(),
            waiting: Vec::new(),
            down: vec![None; servers],
        }
    }

    /// A fresh run: nothing fired, every server up.
    pub fn reset(&mut self) {
        self.counts = Default::default();
        self.waiting.clear();
        self.down.iter_mut().for_each(|d| *d = None);
    }

    /// The chance that a fault of `kind` fires at `command`, if it may: the policy allows
    /// the kind, its budget is not spent, and it is aimed at no keys or at one `command`
    /// names (an eviction's keys say which keys it evicts instead:
    /// [`evict_keys`](Faults::evict_keys)).
    pub fn may_fire(&self, kind: FaultKind, command: &Pending<'_>) -> Option<f64> {
        let rule = self.policy.rule(kind)?;
        if self.counts[kind as usize].fired >= u64::from(rule.max) {
            return None;
        }
        let aimed = match &rule.keys {
            Some(keys) if kind != FaultKind::Evict => command
                .keys()
                .any(|k| keys.iter().any(|a| a.as_bytes() == k)),
            _ => true,
        };
        aimed.then_some(rule.probability)
    }

    /// The keys evictions are aimed at, if they are.
    pub fn evict_keys(&self) -> Option<&[String]> {
        self.policy.rule(FaultKind::Evict)?.keys.as_deref()
    }

    /// A fault of `kind` fired, on `server` (and `key`, for an eviction): it bites at once
    /// if the program meets it as it fires (a lost request or reply, a pause), or when a
    /// later command meets it ([`met`](Faults::met)).
    pub fn fired(&mut self, kind: FaultKind, server: usize, key: Option<&[u8]>) {
        self.counts[kind as usize].fired += 1;
        match kind {
            FaultKind::Evict => {
                let key = key.unwrap_or_default().to_vec();
                self.waiting.push((kind, Target::Key(server, key)));
            }
            FaultKind::Crash | FaultKind::Leave | FaultKind::SkipSecond => {
                self.waiting.push((kind, Target::Server(server)));
            }
            _ => self.counts[kind as usize].bit += 1,
        }
    }

    /// A command reached `server` (or was refused by it): the faults it meets bite.
    pub fn met(&mut self, server: usize, command: &Pending<'_>) {
        if self.waiting.is_empty() {
            return;
        }
        let counts = &mut self.counts;
        self.waiting.retain(|(kind, target)| {
            let bites = match target {
                Target::Server(s) => *s == server,
                Target::Key(s, key) => *s == server && command.keys().any(|k| k == key),
            };
            if bites {
                counts[*kind as usize].bit += 1;
            }
            !bites
        });
    }

    /// What fired and bit in this run, by kind, for the kinds the policy allows.
    pub fn counts(&self) -> Vec<(FaultKind, FaultCount)> {
        (self.policy.kinds().into_iter())
            .map(|k| (k, self.counts[k as usize]))
            .collect()
    }

    /// The servers due back by `now`, with the fault that took each down, in server order
    /// (they are up from now on).
    pub fn due(&mut self, now: VirtualTime) -> Vec<(usize, FaultKind)> {
        let mut back = Vec::new();
        for (server, down) in self.down.iter_mut().enumerate() {
            if let Some(d) = *down
                && d.until <= now
            {
                back.push((server, d.kind));
                *down = None;
            }
        }
        back
    }

    /// When the first server that is down comes back.
    pub fn next_return(&self) -> Option<VirtualTime> {
        self.down.iter().flatten().map(|d| d.until).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcsim::memcache::Key;

    fn policy(plan: FaultPlan) -> Faults {
        Faults::new(
            FaultPolicy {
                plan,
                delay: Duration::ZERO,
            },
            2,
        )
    }

    #[test]
    fn a_rule_fires_within_its_budget_and_only_at_the_keys_it_is_aimed_at() {
        let mut f = policy(FaultPlan::lost_replies().max(2).on_keys(&["lock"]));
        let lock = [Key::new(b"lock").unwrap()];
        let other = [Key::new(b"other").unwrap()];
        assert_eq!(
            f.may_fire(FaultKind::ReplyLost, &Pending::of(&other, false)),
            None
        );
        assert_eq!(
            f.may_fire(FaultKind::Evict, &Pending::of(&lock, false)),
            None
        );
        for _ in 0..2 {
            let p = f.may_fire(FaultKind::ReplyLost, &Pending::of(&lock, false));
            assert_eq!(p, Some(0.05));
            f.fired(FaultKind::ReplyLost, 0, None);
        }
        assert_eq!(
            f.may_fire(FaultKind::ReplyLost, &Pending::of(&lock, false)),
            None
        );
        // A lost reply bites as it fires.
        let counts = f.counts();
        assert_eq!(
            counts,
            vec![(FaultKind::ReplyLost, FaultCount { fired: 2, bit: 2 })]
        );
    }

    #[test]
    fn an_eviction_bites_when_its_key_is_named_again_on_its_server() {
        let mut f = policy(FaultPlan::evictions().and(FaultPlan::crashes()));
        f.fired(FaultKind::Evict, 1, Some(b"k"));
        f.fired(FaultKind::Crash, 0, None);
        let k = [Key::new(b"k").unwrap()];
        // Another key on its server, the key on another server: no bite.
        f.met(1, &Pending::of_bytes(b"j", false));
        f.met(0, &Pending::of(&k, false));
        assert_eq!(f.counts()[0].1, FaultCount { fired: 1, bit: 0 });
        assert_eq!(f.counts()[1].1.bit, 1, "the crash of server 0 bit");
        f.met(1, &Pending::of(&k, false));
        assert_eq!(f.counts()[0].1, FaultCount { fired: 1, bit: 1 });
        f.reset();
        assert_eq!(f.counts()[0].1, FaultCount::default());
    }
}
