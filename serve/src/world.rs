//! What every connection of `mcsim serve` shares: the servers, the clock, the fault
//! policy with its seeded random source, pending one-shot faults, and the trace.

use std::collections::VecDeque;
use std::io::Write;
use std::time::{Duration, Instant};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use mcsim::clock::VirtualTime;
use mcsim::codec::gate::Pending;
use mcsim::fault::FaultKind;
use mcsim::memcache::Key;

use crate::faults::{Down, FaultPolicy, Faults};
use mcsim::server::{Server, ServerConfig};

/// Bytes a new trace line starts with room for: a time, a connection and a command with
/// a 40-byte value preview fit.
const LINE_ROOM: usize = 160;

/// How long a connection refused by a server that is down takes in virtual time.
pub const REFUSED: Duration = Duration::from_millis(1);

/// How the servers' clock moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockMode {
    /// It follows real time (plus whatever `mcsim advance` added); the unix time at start
    /// is the real one, so absolute exptimes mean what they mean to memcached.
    Real,
    /// It moves only by `mcsim advance`, and by one microsecond per command so that
    /// commands keep their order in the trace. The run starts at unix time 1,700,000,000
    /// (2023-11-14 22:13:20 UTC) whatever the date, so absolute exptimes and `stats`
    /// times are the same from run to run.
    Manual,
}

/// A participant's command and its reply, as a run's timeline draws it and its coverage
/// counts it (`mcsim test`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    /// The participant.
    pub who: String,
    /// When it ran, µs of virtual time.
    pub at_us: u64,
    /// The server it went to.
    pub server: usize,
    /// The keys it named (none for a line answered without a request).
    pub keys: Vec<Vec<u8>>,
    /// True if it may change what a later command observes.
    pub write: bool,
    /// The command, as the trace writes it.
    pub request: String,
    /// Its reply, likewise.
    pub reply: String,
    /// Its reply was lost (a fault).
    pub lost: bool,
}

/// A fault injected, as a run's timeline marks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultMark {
    /// When, µs of virtual time.
    pub at_us: u64,
    /// What happened (`evict lock_x from server 0`).
    pub text: String,
}

/// The most exchanges a run keeps (a run is a test's, a few thousand commands at most; a
/// longer one's timeline and coverage have its start).
pub const EXCHANGES_KEPT: usize = 100_000;

/// One-shot faults armed by control commands, per server.
#[derive(Debug, Clone, Default)]
pub(crate) struct Armed {
    /// Replies to drop, after applying their commands.
    pub lose_replies: u32,
    /// Connections to close at their next command (without applying it).
    pub close_next: u32,
}

/// What a client program declared about its run (`mcsim fail`, `mcsim enter` and
/// `mcsim leave`): the failures `mcsim test` judges it by.
#[derive(Debug, Default)]
pub(crate) struct Declared {
    /// Failures, in the order declared or found.
    pub failures: Vec<String>,
    /// Where the first one was: the trace's lines written before it, over the run; and
    /// when, µs of virtual time.
    pub failed_at: Option<u64>,
    pub failed_at_us: Option<u64>,
    /// By section, who is inside and since when.
    pub inside: std::collections::BTreeMap<String, Vec<(String, VirtualTime)>>,
    /// Figures, in the order declared (`mcsim metric`).
    pub metrics: Vec<(String, f64)>,
    /// Dangers seen (`mcsim sometimes`), each once.
    pub sometimes: std::collections::BTreeSet<String>,
    /// What the program asked of mcsim that mcsim could not do (a control command it does
    /// not know or whose arguments are wrong, a participant's name taken twice): a run
    /// with one is not judged.
    pub misuse: Vec<String>,
}

impl Declared {
    /// `who` enters `section` at `now`; the failure if someone else is inside (for
    /// [`World::fail`]).
    pub fn enter(&mut self, section: &str, who: &str, now: VirtualTime) -> Option<String> {
        let inside = self.inside.entry(section.to_string()).or_default();
        let broken = inside.iter().find(|(o, _)| o != who).map(|(other, since)| {
            format!(
                "exclusion of {section} broken: {who} entered at {now} while {other} was inside (since {since})"
            )
        });
        inside.push((who.to_string(), now));
        broken
    }

    /// `who` leaves `section`.
    pub fn leave(&mut self, section: &str, who: &str) -> bool {
        let Some(inside) = self.inside.get_mut(section) else {
            return false;
        };
        let Some(at) = inside.iter().position(|(o, _)| o == who) else {
            return false;
        };
        inside.remove(at);
        true
    }
}

/// The shared state of a serve run.
pub(crate) struct World {
    pub servers: Vec<Server>,
    pub armed: Vec<Armed>,
    /// The fault policy, and what fired and bit in this run.
    pub faults: Faults,
    pub rng: ChaCha8Rng,
    /// How long each command takes in virtual time (a manual clock), drawn between the
    /// two from its own source, so that latencies never change which faults are drawn.
    latency: (Duration, Duration),
    latency_rng: ChaCha8Rng,
    mode: ClockMode,
    started: Instant,
    /// Time added by `mcsim advance` (and, in manual mode, per command).
    advanced: Duration,
    /// Connections open per server.
    pub connections: Vec<u64>,
    /// Of those, the ones that asked for an execution (`mcsim next`).
    pub controllers: u64,
    /// Servers that left (`mcsim down`) and have not returned.
    pub down: Vec<bool>,
    /// Bumped by a crash: connections opened before it are closed.
    pub epochs: Vec<u64>,
    /// The lockstep scheduler, when clients are declared.
    pub lockstep: Option<crate::lockstep::Lockstep>,
    /// The last `trace_window` lines of the trace (the whole trace goes to the file).
    trace: VecDeque<String>,
    trace_window: usize,
    /// Lines that left the window.
    trace_dropped: u64,
    trace_file: Option<std::fs::File>,
    pub commands: u64,
    /// The faults injected in this run: where each one's line is in the trace (counted
    /// over the run).
    pub fault_lines: Vec<u64>,
    /// The participants' commands and replies in this run, in the order they ran (under
    /// lockstep; at most [`EXCHANGES_KEPT`]), and the faults injected.
    pub exchanges: Vec<Exchange>,
    pub marks: Vec<FaultMark>,
    /// Where in a second (µs since its server's boot) a command of this run read the
    /// clock ([`Request::reads_clock`](mcsim::protocol::Request::reads_clock), an expiry
    /// set, an item within a second of expiring): the instants that cut the tick phases
    /// into classes giving the same run. Kept under lockstep only (`mcsim test`'s runs),
    /// so a long `mcsim serve` does not gather them.
    pub phase_points: std::collections::BTreeSet<u32>,
    /// What the client program declared.
    pub declared: Declared,
    /// Pauses armed for participants' next commands (`mcsim pause WHO MS`), by name.
    pub pauses: std::collections::BTreeMap<String, Duration>,
    /// Runs started afresh ([`reset`](World::reset)) so far.
    pub runs: u64,
    /// Connections opened so far, over every run.
    serials: u64,
}

/// A fresh server at time zero whose `stats` describe this process.
fn served(config: ServerConfig) -> Server {
    let mut server = Server::new(config, VirtualTime::ZERO);
    server.report_process(crate::process::this_process);
    server
}

impl World {
    pub fn new(
        ports: &[u16],
        config: &ServerConfig,
        mode: ClockMode,
        (policy, latency): (FaultPolicy, (Duration, Duration)),
        seed: u64,
        trace_file: Option<std::fs::File>,
        trace_window: usize,
    ) -> World {
        let count = ports.len();
        World {
            servers: ports
                .iter()
                .map(|&port| {
                    let mut config = config.clone();
                    config.tcp_port = port;
                    served(config)
                })
                .collect(),
            armed: vec![Armed::default(); count],
            faults: Faults::new(policy, count),
            rng: ChaCha8Rng::seed_from_u64(seed),
            latency,
            latency_rng: latency_source(seed),
            mode,
            started: Instant::now(),
            advanced: Duration::ZERO,
            connections: vec![0; count],
            controllers: 0,
            down: vec![false; count],
            epochs: vec![0; count],
            lockstep: None,
            trace: VecDeque::new(),
            trace_window,
            trace_dropped: 0,
            trace_file,
            commands: 0,
            fault_lines: Vec::new(),
            exchanges: Vec::new(),
            phase_points: std::collections::BTreeSet::new(),
            marks: Vec::new(),
            declared: Declared::default(),
            pauses: std::collections::BTreeMap::new(),
            runs: 0,
            serials: 0,
        }
    }

    /// Starts afresh for another run of a client program (`mcsim test`): the servers
    /// empty at time zero, the fault policy's source seeded with `seed`, nothing armed,
    /// every server up, the trace empty and `lockstep` in place of the scheduler.
    /// Connections of the last run still open are closed at their next command.
    pub fn reset(
        &mut self,
        seed: u64,
        phase: Option<Duration>,
        lockstep: Option<crate::lockstep::Lockstep>,
    ) {
        for server in &mut self.servers {
            *server = served(server.config().clone());
            if let Some(phase) = phase {
                server.set_phase(phase);
            }
        }
        self.armed.iter_mut().for_each(|a| *a = Armed::default());
        self.rng = ChaCha8Rng::seed_from_u64(seed);
        self.latency_rng = latency_source(seed);
        self.faults.reset();
        (self.started, self.advanced) = (Instant::now(), Duration::ZERO);
        self.down.iter_mut().for_each(|d| *d = false);
        self.epochs.iter_mut().for_each(|e| *e += 1);
        self.lockstep = lockstep;
        self.trace.clear();
        self.trace_dropped = 0;
        self.commands = 0;
        self.fault_lines.clear();
        self.exchanges.clear();
        self.marks.clear();
        self.phase_points.clear();
        self.declared = Declared::default();
        self.pauses.clear();
        self.runs += 1;
    }

    /// A number for a new connection, never given before.
    pub fn serial(&mut self) -> u64 {
        self.serials += 1;
        self.serials
    }

    /// The servers' current virtual time.
    pub fn now(&self) -> VirtualTime {
        let real = match self.mode {
            ClockMode::Real => self.started.elapsed(),
            ClockMode::Manual => Duration::ZERO,
        };
        VirtualTime::ZERO + real + self.advanced
    }

    /// True if the clock follows real time.
    pub fn real_clock(&self) -> bool {
        self.mode == ClockMode::Real
    }

    /// Moves the clock ahead, waking the sleepers whose time came.
    pub fn advance(&mut self, by: Duration) {
        self.advanced += by;
        self.bring_back();
        self.wake_sleepers();
    }

    /// Wakes the lockstep participants whose sleep is over (moving the clock to the
    /// first wake time if every one sleeps), each with a line of the trace. Called
    /// wherever the clock moves, so a sleeper wakes at the first instant past its time,
    /// before the command that comes next.
    pub fn wake_sleepers(&mut self) {
        let now = self.now();
        let back = self.faults.next_return();
        let Some(ls) = &mut self.lockstep else {
            return;
        };
        let (jump, woken) = ls.wake(now, back);
        self.advanced += jump;
        self.bring_back();
        for who in woken {
            let (at, n) = (self.now(), self.commands);
            self.record(format!("{n:>8} {at}  {who}  woke"));
        }
    }

    /// A command is about to run: in manual mode time moves one microsecond, so each
    /// command has its own instant. A sleeper whose time that is wakes once the command
    /// has run (at the next turn taken), so what the command did (a fault that broke its
    /// connection) is settled before anyone wakes.
    pub fn tick_command(&mut self) {
        self.commands += 1;
        if self.mode == ClockMode::Manual {
            let (least, most) = self.latency;
            self.advanced += if least < most {
                self.latency_rng.random_range(least..=most)
            } else {
                least
            };
            self.bring_back();
        }
    }

    /// A connection to a server that is down was refused: it counts as a command, and in
    /// manual mode takes [`REFUSED`] of virtual time (a connect's round trip to a port
    /// nobody listens on), so a client that tries again at once meets the server's
    /// return after as many tries as its time away holds.
    pub fn tick_refused(&mut self) {
        self.commands += 1;
        if self.mode == ClockMode::Manual {
            self.advanced += REFUSED;
            self.bring_back();
        }
    }

    /// True if `server` is down: it left (`mcsim down`), or a crash or a leave took it
    /// down and it has not come back.
    pub fn is_down(&self, server: usize) -> bool {
        self.down[server] || self.faults.down[server].is_some()
    }

    /// Why `server` is down, when a crash or a leave took it down: until when, for the
    /// trace.
    pub fn why_down(&self, server: usize) -> Option<String> {
        let down = self.faults.down[server]?;
        Some(match down.kind {
            FaultKind::Crash => format!("server {server} crashed and is down until {}", down.until),
            _ => format!("server {server} left and is away until {}", down.until),
        })
    }

    /// `server` leaves when told (`mcsim down`): it loses its items, its connections close
    /// at their next command and new ones are refused until it is told to come back.
    pub fn take_down_told(&mut self, server: usize) {
        self.servers[server].crash();
        self.down[server] = true;
        self.epochs[server] += 1;
    }

    /// `server` goes down after a fault of `kind` (a crash or a leave), until the policy's
    /// delay for it has passed: a crash loses its items now and its connections close;
    /// after a leave it keeps both, but its connections close and new ones are refused
    /// until it is back (as a client that dropped it from its list no longer reaches
    /// it). With no delay it is back at once.
    pub fn take_down(&mut self, server: usize, kind: FaultKind, now: VirtualTime) {
        let plan = &self.faults.policy.plan;
        let away = match kind {
            FaultKind::Crash => plan.restart_after,
            _ => plan.rejoin_after,
        };
        if kind == FaultKind::Crash {
            self.servers[server].crash();
        }
        self.epochs[server] += 1;
        if away.is_zero() {
            self.come_back(server, kind, now);
            return;
        }
        let until = now + away;
        self.faults.down[server] = Some(Down { kind, until });
    }

    /// The servers whose time away is over come back, each with a line of the trace.
    fn bring_back(&mut self) {
        let now = self.now();
        for (server, kind) in self.faults.due(now) {
            self.come_back(server, kind, now);
            let how = match kind {
                FaultKind::Crash if self.faults.policy.plan.warm_restart => {
                    "restarted (warm: with the items it had)"
                }
                FaultKind::Crash => "restarted empty",
                _ => "is back, with the items it had",
            };
            let n = self.commands;
            self.record(format!("{n:>8} {now}  --  server {server} {how}"));
        }
    }

    /// `server` is back after a fault of `kind`: a crashed one restarts.
    fn come_back(&mut self, server: usize, kind: FaultKind, now: VirtualTime) {
        if kind == FaultKind::Crash {
            let warm = self.faults.policy.plan.warm_restart;
            self.servers[server].restart(now, warm);
        }
    }

    /// Whether a fault with chance `p` fires now (drawn only when `p > 0`, so a run
    /// without faults draws nothing).
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.rng.random_bool(p.min(1.0))
    }

    /// A pause due before the next command of participant `who`: one armed for it
    /// (`mcsim pause WHO MS`), or one drawn by the policy's chance.
    pub fn pause_due(&mut self, who: &str, command: &Pending<'_>) -> Option<Duration> {
        if let Some(by) = self.pauses.remove(who) {
            return Some(by);
        }
        self.draw(FaultKind::Pause, command)
            .then_some(self.faults.policy.plan.pause_for)
    }

    /// Whether a fault of `kind` fires now, at `command` if it is tied to one: drawn only
    /// where the policy lets it fire ([`Faults::may_fire`]), so a run without faults
    /// draws nothing. One that fires is counted; [`Faults::fired`] says where.
    pub fn draw(&mut self, kind: FaultKind, command: &Pending<'_>) -> bool {
        match self.faults.may_fire(kind, command) {
            Some(p) => self.chance(p),
            None => false,
        }
    }

    /// The keys live on `server` now, in key order.
    fn live_keys(&self, server: usize) -> Vec<Key> {
        let now = self.now();
        self.servers[server]
            .live_items(now)
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// `server` crashes and restarts at once, empty: the connections opened before close
    /// at their next command (its epoch moves on).
    pub fn restart_empty(&mut self, server: usize, now: VirtualTime) {
        self.servers[server].crash();
        self.servers[server].restart(now, false);
        self.epochs[server] += 1;
    }

    /// Evicts one live key of `server`, chosen by the seeded source among those the
    /// policy aims evictions at (any, if none); its name.
    pub fn evict_one(&mut self, server: usize) -> Option<String> {
        let mut live = self.live_keys(server);
        if let Some(aimed) = self.faults.evict_keys() {
            live.retain(|k| aimed.iter().any(|a| a.as_bytes() == k.as_bytes()));
        }
        if live.is_empty() {
            return None;
        }
        let key = live[self.rng.random_range(0..live.len())].clone();
        let now = self.now();
        self.servers[server].evict(&key, now);
        Some(key.to_string())
    }

    /// Evicts each live key of `server` with chance `fraction`; how many went.
    pub fn evict_fraction(&mut self, server: usize, fraction: f64) -> usize {
        let mut gone = 0;
        let now = self.now();
        for key in self.live_keys(server) {
            if self.chance(fraction) {
                self.servers[server].evict(&key, now);
                gone += 1;
            }
        }
        gone
    }

    /// Adds a line to the trace: to the trace file as it happens, and to the window kept
    /// in memory, whose oldest line leaves when it is full (so memory stays flat over any
    /// run).
    pub fn record(&mut self, line: String) {
        self.record_with(|s| *s = line);
    }

    /// [`record`](World::record) for a line `write` writes into a string of its own: the
    /// line leaving the window lends its buffer, so a full window writes without
    /// allocating.
    pub fn record_with(&mut self, write: impl FnOnce(&mut String)) {
        let mut line = if self.trace_window > 0 && self.trace.len() == self.trace_window {
            self.trace_dropped += 1;
            self.trace.pop_front().unwrap_or_default()
        } else {
            String::new()
        };
        line.clear();
        // Room for a usual line at once, instead of growing it a few bytes at a time (a
        // line the window lent has it already).
        line.reserve(LINE_ROOM);
        write(&mut line);
        if let Some(f) = &mut self.trace_file {
            // A trace file that cannot be written is reported once, then left.
            if writeln!(f, "{line}").is_err() {
                eprintln!("mcsim serve: cannot write the trace file; going on without it");
                self.trace_file = None;
            }
        }
        if self.trace_window == 0 {
            self.trace_dropped += 1;
            return;
        }
        self.trace.push_back(line);
    }

    /// Where line `at` of the run (counted from its first) is among the lines kept in
    /// memory, if it is still there.
    pub fn kept_index(&self, at: u64) -> Option<usize> {
        at.checked_sub(self.trace_dropped).map(|i| i as usize)
    }

    /// Lines written to the trace in this run.
    pub fn lines(&self) -> u64 {
        self.trace_dropped + self.trace.len() as u64
    }

    /// Adds the line of a fault injected now to the trace ([`record`](World::record)), and
    /// counts it.
    pub fn record_fault(&mut self, (n, now): (u64, VirtualTime), who: &str, what: String) {
        let at = self.lines();
        self.record(format!("{n:>8} {now}  {who}  FAULT {what}"));
        self.mark_fault(at, now, what);
    }

    /// Counts a fault whose line is line `at` of the run, injected at `now`: `what`
    /// happened.
    pub fn mark_fault(&mut self, at: u64, now: VirtualTime, what: String) {
        self.fault_lines.push(at);
        self.marks.push(FaultMark {
            at_us: now.micros(),
            text: what,
        });
    }

    /// A failure declared or found now (`mcsim fail`, a section entered twice).
    pub fn fail(&mut self, message: String) {
        let (at, now) = (self.lines(), self.now());
        self.declared.failed_at.get_or_insert(at);
        self.declared.failed_at_us.get_or_insert(now.micros());
        self.declared.failures.push(message);
    }

    /// The lines of the trace kept in memory, and how many earlier lines left the window.
    pub fn trace(&self) -> (impl Iterator<Item = &String>, u64) {
        (self.trace.iter(), self.trace_dropped)
    }
}

/// The source latencies are drawn from: a stream of the run's seed apart from the faults'.
fn latency_source(seed: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(1);
    rng
}
