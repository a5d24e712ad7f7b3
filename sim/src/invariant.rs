//! Invariants and verdicts.
//!
//! Invariants are named values, so a report can say which one broke: `always` checks run
//! after every step over ghost state the harness keeps (who is in the critical section),
//! `at_end` checks run at quiescence with a read-only view of the servers (counter total
//! against the increments that completed), and may record metrics. Checks over a recorded
//! history (linearizability) are `at_end` checks that call [`crate::lin`].

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;

use crate::clock::VirtualTime;
use crate::cluster::Cluster;
use crate::fault::Fault;
use crate::memcache::{Key, Value};

/// What a failed check reports: a message and the numbers behind it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Failure {
    /// One line a person can read (a fixed message costs no allocation: a failing check
    /// runs in most executions of a broken recipe).
    pub message: std::borrow::Cow<'static, str>,
    /// Named quantities, e.g. `lost = 3`.
    pub numbers: BTreeMap<String, i64>,
}

impl Failure {
    /// A failure with a message.
    pub fn new(message: impl Into<std::borrow::Cow<'static, str>>) -> Failure {
        Failure {
            message: message.into(),
            numbers: BTreeMap::new(),
        }
    }

    /// Adds a named number.
    pub fn with(mut self, name: &str, value: i64) -> Failure {
        self.numbers.insert(name.to_string(), value);
        self
    }
}

/// A broken invariant.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// The invariant's name, e.g. `lock.exclusion`.
    pub invariant: std::borrow::Cow<'static, str>,
    /// The step after which it was found.
    pub step: u64,
    /// Virtual time then.
    pub time: VirtualTime,
    /// What was wrong.
    pub failure: Failure,
    /// Every fault injected before it, with its step.
    pub faults: Vec<(u64, Fault)>,
}

impl Violation {
    /// "no fault", or the faults that preceded the violation.
    pub fn cause(&self) -> String {
        if self.faults.is_empty() {
            return "no fault injected: the interleaving alone breaks it".into();
        }
        let list: Vec<String> = self
            .faults
            .iter()
            .map(|(step, f)| format!("{f} (step {step})"))
            .collect();
        format!("after {}", list.join(", "))
    }
}

/// The outcome of one execution.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Every invariant held.
    Pass,
    /// An invariant broke.
    Violation(Violation),
    /// The recipe spins: for `repeated` calls nothing changed on the servers, every call
    /// repeated an earlier one of its client with the same reply, and nothing scheduled
    /// (an expiry, a timer, a clock read) could change that. Or, with `wakes` above 0,
    /// clients kept sleeping for no time: they woke `wakes` times at one instant with no
    /// call between, so virtual time could not move on. Or, with a `cycle`, the calls kept
    /// changing the servers but came round to states seen before. (`repeated` and
    /// `wakes` are 0 when no client could run at all.)
    Livelock {
        /// Steps taken.
        step: u64,
        /// Virtual time reached.
        time: VirtualTime,
        /// What each unfinished client was doing.
        waiting: Vec<String>,
        /// Consecutive calls that repeated earlier ones.
        repeated: u64,
        /// Consecutive wakes at one instant with no call between (sleeps that end the
        /// instant they begin).
        wakes: u64,
        /// A cycle of states: the calls kept changing the servers, but each came round
        /// to a call, reply and state seen before (`repeated` counts them), and
        /// nothing scheduled could end it.
        cycle: Option<crate::exec::Cycle>,
    },
    /// Clients were still busy, without spinning, when the step or time budget ran out:
    /// a liveness finding (a recipe waiting on a TTL, a lost reply, a dead holder).
    Stuck {
        /// Steps taken.
        step: u64,
        /// Virtual time reached.
        time: VirtualTime,
        /// What each unfinished client was doing.
        waiting: Vec<String>,
        /// The longest any unfinished client went without progress, and which one.
        longest_wait: (usize, std::time::Duration),
        /// The earliest expiry ahead that may release them: key and time.
        next_expiry: Option<(String, VirtualTime)>,
    },
    /// Recipe code panicked.
    Panic {
        /// Which client.
        client: usize,
        /// The panic message.
        message: String,
        /// At which step.
        step: u64,
    },
    /// Recipe code gave up with an error it did not handle (e.g. `CLIENT_ERROR`,
    /// `SERVER_ERROR`, an unknown command): a client of a real deployment would have
    /// failed the request.
    ClientError {
        /// Which client.
        client: usize,
        /// The error.
        error: String,
        /// At which step.
        step: u64,
    },
    /// A replayed schedule asked for a step that is not possible: the code changed.
    Diverged {
        /// At which step.
        step: u64,
        /// What was asked and what was possible.
        detail: String,
    },
}

impl Verdict {
    /// The labels every scenario may expect whatever its family: `pass` and the verdicts
    /// the engine gives on its own (a diverged replay is bad input, never expected).
    pub const GENERAL_LABELS: [&'static str; 5] =
        ["pass", "livelock", "stuck", "panic", "client_error"];

    /// The short form used in scenario files and summaries: `pass`, `livelock`, `panic`,
    /// `diverged`, or the violated invariant's name.
    pub fn label(&self) -> String {
        match self {
            Verdict::Pass => "pass".into(),
            Verdict::Violation(v) => v.invariant.to_string(),
            Verdict::Livelock { .. } => "livelock".into(),
            Verdict::Stuck { .. } => "stuck".into(),
            Verdict::Panic { .. } => "panic".into(),
            Verdict::ClientError { .. } => "client_error".into(),
            Verdict::Diverged { .. } => "diverged".into(),
        }
    }

    /// True for [`Verdict::Pass`].
    pub fn is_pass(&self) -> bool {
        matches!(self, Verdict::Pass)
    }

    /// True for a verdict of never finishing ([`Verdict::Stuck`], [`Verdict::Livelock`]):
    /// the execution ran on until a budget ran out or its spin or cycle was told, so how
    /// long it ran says little about the counterexample, which is the choices that led
    /// there.
    pub fn never_finishes(&self) -> bool {
        matches!(self, Verdict::Stuck { .. } | Verdict::Livelock { .. })
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Pass => write!(f, "pass"),
            Verdict::Violation(v) => {
                write!(
                    f,
                    "violation of {} at step {} (t={}): {}",
                    v.invariant, v.step, v.time, v.failure.message
                )?;
                for (k, n) in &v.failure.numbers {
                    write!(f, "; {k} = {n}")?;
                }
                write!(f, "; {}", v.cause())
            }
            Verdict::Livelock {
                step,
                time,
                waiting,
                cycle: Some(cycle),
                ..
            } => {
                write!(
                    f,
                    "livelock: going round a cycle at step {step} (t={time}): the last {} \
                     calls each came back to a call, reply and server state seen before, and \
                     no expiry, timer or clock read can end it; one turn, {} call{}: ",
                    cycle.repeated,
                    cycle.period,
                    crate::plural::plural(cycle.period)
                )?;
                if cycle.turn.len() < cycle.period as usize {
                    write!(f, "…, ")?;
                }
                write!(
                    f,
                    "{}; still busy: {}",
                    cycle.turn.join(", "),
                    waiting.join(", ")
                )
            }
            Verdict::Livelock {
                step,
                time,
                waiting,
                wakes: wakes @ 1..,
                ..
            } => write!(
                f,
                "livelock: sleeping for no time at step {step} (t={time}): clients woke \
                 {wakes} times at this instant with no call between, so virtual time cannot \
                 move on; still busy: {}",
                waiting.join(", ")
            ),
            Verdict::Livelock {
                step,
                time,
                waiting,
                repeated: 0,
                ..
            } => write!(
                f,
                "livelock: no client can run at step {step} (t={time}); still busy: {}",
                waiting.join(", ")
            ),
            Verdict::Livelock {
                step,
                time,
                waiting,
                repeated,
                ..
            } => write!(
                f,
                "livelock: spinning at step {step} (t={time}): the last {repeated} calls \
                 changed nothing and repeated earlier calls with the same replies, and no \
                 expiry, timer or clock read can change that; still busy: {}",
                waiting.join(", ")
            ),
            Verdict::Stuck {
                step,
                time,
                waiting,
                longest_wait: (client, wait),
                next_expiry,
            } => {
                write!(
                    f,
                    "stuck: {} client{} still busy when the budget ran out at step {step} \
                     (t={time}), without spinning; c{client} went {:.3} s without progress",
                    waiting.len(),
                    crate::plural::plural(waiting.len() as u64),
                    wait.as_secs_f64()
                )?;
                if let Some((key, at)) = next_expiry {
                    write!(f, "; the earliest expiry ahead: {key} at t={at}")?;
                }
                write!(f, "; still busy: {}", waiting.join(", "))
            }
            Verdict::Panic {
                client,
                message,
                step,
            } => {
                write!(f, "recipe panic in c{client} at step {step}: {message}")
            }
            Verdict::ClientError {
                client,
                error,
                step,
            } => {
                write!(
                    f,
                    "c{client} gave up at step {step} with an unhandled error: {error}"
                )
            }
            Verdict::Diverged { step, detail } => {
                write!(f, "replay diverged at step {step}: {detail}")
            }
        }
    }
}

/// A check run after every step.
pub type StepCheck = Box<dyn Fn() -> Result<(), Failure>>;

/// A check run at quiescence.
pub type EndCheck = Box<dyn Fn(&EndView<'_>) -> Result<(), Failure>>;

/// What an end-of-run check may look at: the servers (without disturbing them) and a
/// place to record metrics.
pub struct EndView<'a> {
    pub(crate) cluster: &'a Cluster,
    pub(crate) now: VirtualTime,
    pub(crate) metrics: &'a RefCell<BTreeMap<String, f64>>,
}

impl EndView<'_> {
    /// The live value under `key` on the server it maps to, without touching the LRU.
    pub fn peek(&self, key: &Key) -> Option<Value> {
        self.cluster.peek(key, self.now)
    }

    /// The server a key maps to in the clients' current list.
    pub fn server_for(&self, key: &Key) -> usize {
        self.cluster.server_for(key)
    }

    /// Number of servers.
    pub fn servers(&self) -> usize {
        self.cluster.servers.len()
    }

    /// Virtual time at quiescence.
    pub fn now(&self) -> VirtualTime {
        self.now
    }

    /// The whole-second clock of server `server` (see [`EndView::server_for`]): its tick
    /// phase and skipped seconds, for a check that needs to know when an item really
    /// died without having a client measure it.
    pub fn clock(&self, server: usize) -> &crate::ServerClock {
        self.cluster.servers[server].clock()
    }

    /// Records a metric of this execution.
    pub fn metric(&self, name: &str, value: f64) {
        self.metrics.borrow_mut().insert(name.to_string(), value);
    }
}
