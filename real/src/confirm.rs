//! `mcsim confirm`: a counterexample found in simulation, replayed against a real
//! memcached.
//!
//! The shrunk execution's calls are sent in its order, one connection per client, to a
//! memcached mcsim starts itself (one per simulated server, with its `-m`, `-I`,
//! `slab_chunk_max` and `-M`) or to servers given. Faults become what a real server
//! allows: an eviction a `delete`, a crash the process stopped and started again empty
//! after the scenario's restart delay (calls meanwhile fail, as in simulation; a server
//! mcsim did not start is flushed instead), a lost reply a call whose reply is read and
//! dropped, a lost request a call not sent. Virtual waits between calls become real
//! sleeps, capped, and the cap is reported. The replay starts at the instant that puts the
//! first real server's tick edges (read from its `time` stat) where the simulation's fell,
//! so a TTL ends between the same two calls on both. Every reply is compared with the one the
//! simulated server gave: when all agree, the recipe sees on the real server exactly what
//! it saw in simulation, so its invariant breaks the same way; otherwise the first
//! difference is reported with its likely cause. A replay that diverges after a call the
//! real clock did not hold in its simulated second (memcached's timer skipped that
//! second, or the answer came after the next edge could have) is run again on fresh
//! servers, up to [`ConfirmOptions::attempts`] replays, and the earlier ones are reported.

use std::net::SocketAddr;
use std::time::Duration;

use crate::TcpClient;
use crate::fleet::Fleet;
use crate::ticks::{Due, Ticks};
use mcsim::cluster::Spread;
use mcsim::exec::{Event, ExecConfig, Execution};
use mcsim::fault::Fault;
use mcsim::memcache::{McError, Transport};
use mcsim::protocol::{Reply, Request};
use mcsim::trace::{describe_reply, describe_request};

/// How to confirm.
#[derive(Debug, Clone, Default)]
pub struct ConfirmOptions {
    /// Servers to use instead of starting memcached (one per simulated server).
    pub servers: Vec<SocketAddr>,
    /// The real time all waits together may take; longer waits are shortened.
    pub max_wait: Duration,
    /// The tick phase the simulated servers ran at: the replay starts so that the first
    /// server's real tick edges fall where the simulated ones did.
    pub phase: Duration,
    /// Replays in all (at least one): a replay that diverges after a call the real clock
    /// did not hold in its simulated second (see [`Outcome::Diverged`]) is run again on
    /// freshly started servers, up to this many times. Servers given are not restarted,
    /// so with them there is one replay.
    pub attempts: u32,
}

/// What the real server did with the counterexample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every reply matched the simulation.
    Confirmed {
        /// `VERSION` of the server.
        version: String,
    },
    /// The real server answered one call differently.
    Diverged {
        /// The step of the call.
        step: u64,
        /// What differed, and the likely cause.
        detail: String,
        /// Set when a call up to this one was not held in its simulated second by the
        /// real server's clock (memcached's timer skipped that second, or the answer
        /// came after the next edge may have): the divergence may be the real clock's,
        /// not the servers'. What happened, for the first such call.
        clock: Option<String>,
    },
}

/// The replay, line by line, and its outcome.
#[derive(Debug, Clone)]
pub struct Confirmation {
    /// One line per call or fault, as replayed.
    pub lines: Vec<String>,
    /// Virtual waits longer than the cap allowed, shortened by this much in all.
    pub shortened: Duration,
    /// The outcome.
    pub outcome: Outcome,
    /// Earlier replays that diverged where the real clock did not follow the
    /// simulation's, and were run again: their divergences, in order.
    pub retried: Vec<String>,
}

/// Why a confirmation could not run.
#[derive(Debug, thiserror::Error)]
pub enum ConfirmError {
    /// No memcached binary was found, and no server was given.
    #[error("no memcached binary found (install memcached, set $MEMCACHED, or give --server)")]
    NoMemcached,
    /// Starting memcached failed.
    #[error(transparent)]
    Daemon(#[from] crate::DaemonError),
    /// Talking to it failed.
    #[error("talking to memcached: {0}")]
    Client(#[from] mcsim::memcache::McError),
    /// The execution has no recorded calls (it was not replayed with its timeline).
    #[error("the execution has no recorded calls")]
    NoEvents,
    /// The servers given do not match the scenario's.
    #[error("the scenario has {want} servers; {given} given")]
    Servers {
        /// The scenario's.
        want: usize,
        /// Given.
        given: usize,
    },
}

/// Replays `execution` (recorded with its timeline) against real memcached servers, one
/// per simulated server of `config`; again, up to [`ConfirmOptions::attempts`] in all,
/// while a replay diverges after a call the real clock did not hold in its second.
pub fn confirm(
    execution: &Execution,
    config: &ExecConfig,
    options: &ConfirmOptions,
) -> Result<Confirmation, ConfirmError> {
    if execution.events.is_empty() {
        return Err(ConfirmError::NoEvents);
    }
    let attempts = if options.servers.is_empty() {
        options.attempts.max(1) as usize
    } else {
        1
    };
    let mut retried = Vec::new();
    loop {
        let mut c = replay(execution, config, options)?;
        match &c.outcome {
            Outcome::Diverged {
                detail,
                clock: Some(_),
                ..
            } if retried.len() + 1 < attempts => retried.push(detail.clone()),
            _ => {
                c.retried = retried;
                return Ok(c);
            }
        }
    }
}

/// One replay of `execution` on servers started for it (or given).
fn replay(
    execution: &Execution,
    config: &ExecConfig,
    options: &ConfirmOptions,
) -> Result<Confirmation, ConfirmError> {
    let mut real = Fleet::start(&config.servers, &options.servers)?;
    let version = match TcpClient::connect(real.addr(0))?.call(&Request::Version)? {
        Reply::Version(v) => v,
        other => describe_reply(&other),
    };
    let mut conns = Clients::default();
    let mut lines = Vec::new();
    // The first call the real clock may not have held in its simulated second.
    let mut clock: Option<String> = None;
    let (mut last, mut budget, mut shortened) = (
        mcsim::clock::VirtualTime::ZERO,
        options.max_wait,
        Duration::ZERO,
    );
    let mut ticks = Ticks::align(real.addr(0), options.phase)?;
    let unix_at_zero = config.servers.first().map_or(0, |c| c.unix_at_zero);
    let shift = ticks.as_ref().map_or(0, |t| t.unix_shift(unix_at_zero));
    // Waits are kept against this start, not added up: the calls' own time does not
    // push later calls off their instants.
    let origin = std::time::Instant::now() + Duration::from_secs(1)
        - options.phase.min(Duration::from_millis(999));
    // Until when each server is out of the clients' list (a leave, until its rejoin).
    let mut out_until = vec![mcsim::clock::VirtualTime::ZERO; config.servers.len()];
    for event in &execution.events {
        let time = match event {
            Event::Call { time, .. } | Event::Fault { time, .. } => *time,
        };
        let gap = time.since(last);
        last = time;
        let sleep = gap.min(budget);
        budget -= sleep;
        shortened += gap - sleep;
        // Timed from the real server's own edges while no wait was cut short; after
        // that, from the start.
        let (due, second) = match &mut ticks {
            Some(t) if shortened.is_zero() => {
                let d = t.due(time)?;
                (d.at, Some(d))
            }
            _ => (
                origin
                    + time
                        .since(mcsim::clock::VirtualTime::ZERO)
                        .saturating_sub(shortened),
                None,
            ),
        };
        // Crashed servers come back when their time comes, before any later call.
        while let Some(at) = real.next_restart().filter(|at| *at <= due) {
            let now = std::time::Instant::now();
            if at > now {
                std::thread::sleep(at - now);
            }
            lines.extend(real.restart_due(at)?);
        }
        let now = std::time::Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
        match event {
            Event::Fault {
                step, fault, time, ..
            } => {
                let did = match fault {
                    Fault::Evict { server, key } => match mcsim::memcache::Key::new(key.as_bytes())
                    {
                        Ok(key) => {
                            TcpClient::connect(real.addr(*server))?.call(&Request::Delete {
                                key,
                                noreply: false,
                            })?;
                            "delete".to_string()
                        }
                        Err(e) => format!("not reproducible: {e}"),
                    },
                    Fault::Crash { server } if config.faults.warm_restart => {
                        format!(
                            "not reproducible here: a warm restart of server {server} (memcached's -e memory file) is not scripted"
                        )
                    }
                    Fault::Crash { server } => real.crash(*server, config.faults.restart_after)?,
                    // They happen in the client: the calls that follow carry them (to
                    // the servers the client's list then maps their keys to, at the
                    // times the client made them).
                    Fault::Leave { server } => {
                        if let Some(until) = out_until.get_mut(*server) {
                            *until = *time + config.faults.rejoin_after;
                        }
                        "in the client: the calls after it carry it".to_string()
                    }
                    Fault::Pause { .. } | Fault::Die { .. } => {
                        "in the client: the calls after it carry it".to_string()
                    }
                    other => format!("not reproducible on a real server ({other})"),
                };
                lines.push(format!("{step:>5}  --  FAULT {fault}: {did}"));
            }
            Event::Call {
                step,
                client,
                server,
                owners,
                request,
                outcome,
                fault,
                ..
            } => {
                let what = describe_request(request);
                if matches!(fault, Some(Fault::RequestLost { .. })) {
                    lines.push(format!(
                        "{step:>5}  c{client}  {what} -> (request lost: not sent)"
                    ));
                    continue;
                }
                if matches!(fault, Some(Fault::TooLarge { .. })) {
                    lines.push(format!(
                        "{step:>5}  c{client}  {what} -> (value over the limit: not sent)"
                    ));
                    continue;
                }
                let sent = with_real_exptimes(request, shift);
                let answered = |clock: &mut Option<String>| {
                    if let (None, Some(d)) = (&clock, &second) {
                        *clock = off_second(*step, d, std::time::Instant::now());
                    }
                };
                // Refused in simulation by a server out of the clients' list (a call
                // addressed to it, as a pool's failover route makes): not sent, as a
                // client that cannot reach a server sends it nothing.
                let out = out_until.get(*server).is_some_and(|until| time < *until);
                if matches!(outcome, Err(Transport::ServerDown)) && out {
                    lines.push(format!(
                        "{step:>5}  c{client}  {what} -> refused: server {server} out of the clients' list, as in simulation"
                    ));
                    continue;
                }
                let got = conns.call(&real, *client, *server, owners, &sent);
                // A call to a stopped server fails, as the simulated one's did.
                let got = match (got, outcome) {
                    (Ok(reply), _) => reply,
                    (Err(_), Err(_)) => {
                        lines.push(format!(
                            "{step:>5}  c{client}  {what} -> failed (server down), as in simulation"
                        ));
                        continue;
                    }
                    (Err(e), Ok(expected)) => {
                        answered(&mut clock);
                        return Ok(Confirmation {
                            lines,
                            shortened,
                            outcome: Outcome::Diverged {
                                step: *step,
                                detail: format!(
                                    "step {step}: {what}: simulation {}, memcached failed: {e}",
                                    describe_reply(expected)
                                ),
                                clock,
                            },
                            retried: Vec::new(),
                        });
                    }
                };
                answered(&mut clock);
                let lost = matches!(fault, Some(Fault::ReplyLost { .. }));
                let note = if lost {
                    " (reply dropped, as in simulation)"
                } else {
                    ""
                };
                lines.push(format!(
                    "{step:>5}  c{client}  {what} -> {}{note}",
                    describe_reply(&got)
                ));
                let differs = match outcome {
                    Err(t) => Some(format!(
                        "step {step}: in simulation the call failed ({t}); memcached answered {}",
                        describe_reply(&got)
                    )),
                    Ok(expected) if got != *expected => {
                        let cause = if shortened > Duration::ZERO {
                            "waits were shortened to the cap, so an expiry may not have come yet"
                                .to_string()
                        } else if let Some(note) = &clock {
                            format!(
                                "memcached's clock did not hold the simulation's second: {note}"
                            )
                        } else {
                            // Any command on an item with a TTL can see it expired.
                            "memcached's clock ticks once a second from its own start, so a TTL can end up to a second apart from the simulation's, or the servers hold different state here".to_string()
                        };
                        Some(format!(
                            "step {step}: {what}: simulation {}, memcached {} ({cause})",
                            describe_reply(expected),
                            describe_reply(&got)
                        ))
                    }
                    Ok(_) => None,
                };
                if let Some(detail) = differs {
                    return Ok(Confirmation {
                        lines,
                        shortened,
                        outcome: Outcome::Diverged {
                            step: *step,
                            detail,
                            clock,
                        },
                        retried: Vec::new(),
                    });
                }
            }
        }
    }
    Ok(Confirmation {
        lines,
        shortened,
        outcome: Outcome::Confirmed { version },
        retried: Vec::new(),
    })
}

/// Why the real server may have answered the call of `step` in another second than the
/// simulated one did (`due` its timing, answered at `at`), if it may have.
pub(super) fn off_second(step: u64, due: &Due, at: std::time::Instant) -> Option<String> {
    match due.shown {
        Some(shown) if shown > due.second => Some(format!(
            "step {step} was due while memcached's clock read {}, a value it skipped (its once-a-second timer fires a little late each time and had drifted over a whole second, so the clock jumped to {shown})",
            due.second
        )),
        Some(shown) => Some(format!(
            "step {step} was due once memcached's clock read {}, but a second and a half after that edge was due it still read {shown}",
            due.second
        )),
        None if at >= due.next_edge => Some(format!(
            "step {step} was answered {:.1} ms after memcached's next second could have begun (a loaded machine)",
            (at - due.next_edge).as_secs_f64() * 1e3
        )),
        None => None,
    }
}

/// The replay's client connections: one per client and server, opened when first used
/// (a restarted server listens on a new port, and gets new ones).
#[derive(Default)]
struct Clients {
    open: std::collections::BTreeMap<(usize, usize, SocketAddr), TcpClient>,
}

impl Clients {
    /// `request` from `client` as its library sends it: to `server`, or, for a read the
    /// simulation spread over several servers (`owners`, each key's), each server its
    /// share, the hits merged back as the simulation merges them ([`Spread::gather`]).
    fn call(
        &mut self,
        real: &Fleet,
        client: usize,
        server: usize,
        owners: &[usize],
        request: &Request,
    ) -> Result<Reply, McError> {
        match Spread::new(request, owners.to_vec()) {
            Some(spread) => spread.gather(|s, share| self.call_one(real, client, s, &share)),
            None => self.call_one(real, client, server, request),
        }
    }

    fn call_one(
        &mut self,
        real: &Fleet,
        client: usize,
        server: usize,
        request: &Request,
    ) -> Result<Reply, McError> {
        let addr = real.addr(server);
        match self.open.entry((client, server, addr)) {
            std::collections::btree_map::Entry::Occupied(mut e) => e.get_mut().call(request),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(TcpClient::connect(addr)?).call(request)
            }
        }
    }
}

/// `request` with every absolute exptime (above 30 days: a unix time) moved by `shift`
/// seconds; relative ones and everything else as they are.
fn with_real_exptimes(request: &Request, shift: i64) -> std::borrow::Cow<'_, Request> {
    use mcsim::memcache::{Exptime, MAX_RELATIVE_EXPTIME};
    use mcsim::protocol::MetaFlag;
    let moved = |e: &Exptime| {
        Exptime(if e.0 > MAX_RELATIVE_EXPTIME {
            e.0 + shift
        } else {
            e.0
        })
    };
    let carries_exptime = matches!(
        request,
        Request::Store { .. }
            | Request::Touch { .. }
            | Request::Gat { .. }
            | Request::FlushAll { delay: Some(_), .. }
            | Request::Meta { .. }
    );
    if !carries_exptime {
        return std::borrow::Cow::Borrowed(request);
    }
    let mut r = request.clone();
    match &mut r {
        Request::Store { exptime, .. }
        | Request::Touch { exptime, .. }
        | Request::Gat { exptime, .. } => *exptime = moved(exptime),
        Request::FlushAll { delay: Some(d), .. } => *d = moved(&Exptime(*d)).0,
        Request::Meta { flags, .. } => {
            for f in flags.iter_mut().filter(|f| matches!(f.letter, b'T' | b'N')) {
                // Read as the server reads it (`safe_strtol`).
                if let Some(t) = mcsim::protocol::number::parse_i32(f.token_bytes()) {
                    *f = MetaFlag::with(f.letter, moved(&Exptime(i64::from(t))).0);
                }
            }
        }
        _ => {}
    }
    std::borrow::Cow::Owned(r)
}
