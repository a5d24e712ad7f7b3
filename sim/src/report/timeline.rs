//! A counterexample as the HTML report draws it: one lane per client with a box per
//! call, the world's faults, what each key held over time, and where the verdict fell.
//!
//! Built from an [`Execution`] replayed with its timeline on (every finding is), and
//! serialized with the suite's rows, so `mcsim merge` can draw the shards' failures too.

use serde::{Deserialize, Serialize};

use crate::exec::{Event, Execution};
use crate::invariant::Verdict;
use crate::trace::{describe_reply, describe_request};

/// A counterexample's timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// Clients (lanes).
    pub clients: usize,
    /// The lanes' names, when they have their own (a program's participants, under
    /// `mcsim test`); absent, lane `i` is `client i`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lanes: Vec<String>,
    /// Virtual time at the end, in µs.
    pub end_us: u64,
    /// Every call, in the order the servers executed them.
    pub calls: Vec<CallBox>,
    /// The world's faults: evictions, crashes, clock jumps, pauses.
    pub faults: Vec<Mark>,
    /// Each key a call named, with what it held over time.
    pub keys: Vec<KeyTrack>,
    /// The verdict, where it fell.
    pub verdict: Mark,
    /// Calls left out before the first one shown (a long execution keeps its last
    /// [`MAX_CALLS`], the ones leading to the verdict).
    #[serde(default)]
    pub omitted: usize,
    /// When the first call shown was made, µs (0 when nothing was left out).
    #[serde(default)]
    pub from_us: u64,
    /// Keys left out of the strips (more than [`MAX_KEYS`] changed).
    #[serde(default)]
    pub keys_omitted: usize,
}

/// Key strips a timeline keeps: the keys that changed last.
pub const MAX_KEYS: usize = 12;

/// Calls a timeline keeps.
pub const MAX_CALLS: usize = 240;

/// One call: from the instant its client made it to the instant the server ran it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallBox {
    /// The step that ran it.
    pub step: u64,
    /// Whose call.
    pub client: usize,
    /// When the client made it, µs.
    pub issued_us: u64,
    /// When the server ran it, µs.
    pub at_us: u64,
    /// The server.
    pub server: usize,
    /// The request, as the text protocol spells it.
    pub request: String,
    /// The reply, or the transport failure.
    pub reply: String,
    /// A fault on this call (request or reply lost, value too large).
    pub fault: Option<String>,
}

/// Something that happened at one instant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    /// The step.
    pub step: u64,
    /// When, µs.
    pub at_us: u64,
    /// What.
    pub text: String,
}

/// One key on one server over the execution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyTrack {
    /// The key.
    pub key: String,
    /// Its server.
    pub server: usize,
    /// Its states, each from its instant to the next one's (absent before the first).
    pub states: Vec<KeySpan>,
}

/// A key's state from an instant on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeySpan {
    /// From when, µs.
    pub from_us: u64,
    /// The step that made it.
    pub step: u64,
    /// The value's first bytes (`None`: absent).
    pub value: Option<String>,
    /// The value's length.
    pub len: usize,
    /// When the item expires, µs (`None`: never, or absent).
    pub expires_us: Option<u64>,
}

/// The step and instant a verdict fell at, and its text.
fn verdict_mark(e: &Execution) -> Mark {
    let (step, at) = match &e.verdict {
        Verdict::Violation(v) => (v.step, v.time),
        Verdict::Livelock { step, time, .. } | Verdict::Stuck { step, time, .. } => (*step, *time),
        Verdict::Panic { step, .. }
        | Verdict::ClientError { step, .. }
        | Verdict::Diverged { step, .. } => (*step, e.end_time),
        Verdict::Pass => (e.steps, e.end_time),
    };
    Mark {
        step,
        at_us: at.micros(),
        text: e.verdict.to_string(),
    }
}

impl Timeline {
    /// The timeline of an execution run with tracing on.
    pub fn of(e: &Execution, clients: usize) -> Timeline {
        let mut calls = Vec::new();
        let mut faults = Vec::new();
        for event in &e.events {
            match event {
                Event::Call {
                    step,
                    time,
                    issued,
                    client,
                    server,
                    request,
                    outcome,
                    fault,
                    ..
                } => calls.push(CallBox {
                    step: *step,
                    client: *client,
                    issued_us: issued.micros(),
                    at_us: time.micros(),
                    server: *server,
                    request: describe_request(request),
                    reply: match outcome {
                        Ok(r) => describe_reply(r),
                        Err(t) => t.to_string(),
                    },
                    fault: fault.as_ref().map(ToString::to_string),
                }),
                Event::Fault { step, time, fault } => faults.push(Mark {
                    step: *step,
                    at_us: time.micros(),
                    text: fault.to_string(),
                }),
            }
        }
        let mut keys: Vec<KeyTrack> = Vec::new();
        for k in &e.key_states {
            let span = KeySpan {
                from_us: k.time.micros(),
                step: k.step,
                value: k.stored.as_ref().map(|s| s.preview.clone()),
                len: k.stored.as_ref().map_or(0, |s| s.len),
                expires_us: k
                    .stored
                    .as_ref()
                    .and_then(|s| s.expires.map(|t| t.micros())),
            };
            match keys
                .iter_mut()
                .find(|t| t.key == k.key && t.server == k.server)
            {
                Some(track) => track.states.push(span),
                None => keys.push(KeyTrack {
                    key: k.key.clone(),
                    server: k.server,
                    states: vec![span],
                }),
            }
        }
        let clients = clients.max(calls.iter().map(|c| c.client + 1).max().unwrap_or(0));
        let mut t = Timeline {
            lanes: Vec::new(),
            clients,
            end_us: e.end_time.micros(),
            calls,
            faults,
            keys,
            verdict: verdict_mark(e),
            omitted: 0,
            from_us: 0,
            keys_omitted: 0,
        };
        t.keep_last(MAX_CALLS);
        t.keep_keys(MAX_KEYS);
        t
    }

    /// Keeps the `n` keys whose state changed last (in their first order).
    fn keep_keys(&mut self, n: usize) {
        if self.keys.len() <= n {
            return;
        }
        let mut last: Vec<(u64, usize)> = self
            .keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.states.iter().map(|s| s.step).max().unwrap_or(0), i))
            .collect();
        last.sort_by(|a, b| b.cmp(a));
        let mut keep: Vec<usize> = last.iter().take(n).map(|(_, i)| *i).collect();
        keep.sort_unstable();
        self.keys_omitted = self.keys.len() - n;
        let keys = std::mem::take(&mut self.keys);
        self.keys = keys
            .into_iter()
            .enumerate()
            .filter(|(i, _)| keep.binary_search(i).is_ok())
            .map(|(_, k)| k)
            .collect();
    }

    /// Keeps the last `n` calls and what happened from the first of them on; each key
    /// keeps the state it had then.
    fn keep_last(&mut self, n: usize) {
        if self.calls.len() <= n {
            return;
        }
        self.omitted = self.calls.len() - n;
        self.calls.drain(..self.omitted);
        let from = self.calls.iter().map(|c| c.issued_us).min().unwrap_or(0);
        self.from_us = from;
        self.faults.retain(|f| f.at_us >= from);
        for k in &mut self.keys {
            let before = k.states.iter().rposition(|s| s.from_us < from);
            if let Some(i) = before {
                k.states.drain(..i);
                k.states[0].from_us = from;
            }
        }
    }
}
