//! `mcsim serve`: the simulated memcached on TCP, with injected faults, for recipes
//! written in any language.
//!
//! Each server listens on its own port and speaks memcached's text, meta and binary
//! protocols as memcached 1.6.18 does: each read of a connection goes whole to a
//! [`Session`](mcsim::codec::Session), which frames it as memcached does (pipelined, split
//! and malformed input alike), and a [`Gate`](mcsim::codec::gate::Gate) around each
//! command takes the lockstep turn, injects faults, moves the clock and writes the trace.
//! Connections are served by four event-loop workers (`--threads`), as memcached's worker threads serve
//! theirs; under lockstep or a reply delay, where a connection waits, each
//! has a thread of its own.
//! The trace keeps its last lines in memory (`--trace-window`) and every line in the
//! `--trace` file, so memory stays flat. Faults come by policy (`--lose-reply`, `--evict`, `--delay-ms`, drawn from
//! `--seed`) or on command over the same connection (`mcsim evict KEY`, `mcsim advance
//! 30`, …: [`control`]). The clock follows real time or, with `--clock manual`, moves
//! only when told, so TTL tests run in milliseconds. With `--lockstep N`, commands of N
//! client connections are released one at a time in an order drawn from the seed
//! (see `lockstep`). Every command, fault and control command is a line of the trace
//! (`--trace FILE`, and `mcsim trace` on any connection), in the timeline format.

mod connection;
pub mod control;
mod faults;
mod footprint;
mod lockstep;
mod outside;
mod process;
mod workers;
mod world;

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use connection::Connection;
use mcsim::server::ServerConfig;
use workers::Inbox;

pub use faults::{FaultCount, FaultPolicy};
pub use lockstep::{Chooser, Held, SeededOrder};
pub use outside::Unscheduled;
pub use world::{ClockMode, Exchange, FaultMark};

/// The default port of the first server (memcached's 11211, a hundred up).
pub const DEFAULT_PORT: u16 = 11311;

/// How `mcsim serve` runs.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The first server's port (`0`: any free port for each server).
    pub port: u16,
    /// Servers, on consecutive ports.
    pub servers: usize,
    /// Each server's settings.
    pub server: ServerConfig,
    /// How the clock moves.
    pub clock: ClockMode,
    /// Faults by policy.
    pub faults: FaultPolicy,
    /// How long each command takes in virtual time under a manual clock, drawn per
    /// command between the two from the seed ([`COMMAND_TIME`] by default): a scenario's
    /// latency.
    pub latency: (Duration, Duration),
    /// Seeds the fault policy and the lockstep order.
    pub seed: u64,
    /// Lockstep over this many client connections.
    pub lockstep: Option<usize>,
    /// How long lockstep waits for a participant that sends nothing.
    pub lockstep_wait: Duration,
    /// Where the trace goes as it happens.
    pub trace: Option<std::path::PathBuf>,
    /// How many of the trace's last lines are kept in memory (for `mcsim trace`).
    pub trace_window: usize,
    /// With a prefix, a read of `PREFIX` + a name names the connection (answered as a
    /// miss), in any form a client library sends it (`get`, `gets`, `gat`, `mg`, a binary
    /// GET or GAT of any kind: [`mcsim::codec::gate::Gate::names`]); without one, every read is
    /// a read. The prefix is chosen at start, so no key of the recipe's is taken
    /// for it.
    pub name_key: Option<String>,
    /// Event-loop workers serving the connections (memcached's `-t`); unused under
    /// lockstep or a reply delay, where each connection has a thread.
    pub threads: usize,
}

/// How long a command takes in virtual time under a manual clock, unless a latency is
/// given: each command has an instant of its own.
pub const COMMAND_TIME: (Duration, Duration) = (Duration::from_micros(1), Duration::from_micros(1));

/// Event-loop workers by default (memcached's `-t 4`).
pub const DEFAULT_THREADS: usize = 4;

/// The trace lines `mcsim serve` keeps in memory by default.
pub const DEFAULT_TRACE_WINDOW: usize = 10_000;

struct Shared {
    world: Mutex<World>,
    turn: Condvar,
    next_id: std::sync::atomic::AtomicU64,
    /// Every reply is held this long (fixed for the run: read without the lock).
    delay: Duration,
    /// A read of a key with this prefix names the connection ([`ServeConfig::name_key`]).
    name_key: Option<String>,
    /// Where `mcsim next` asks for the next execution, once [`Running::executions`] was
    /// called.
    executions: parking_lot::Mutex<Option<std::sync::mpsc::Sender<NextRequest>>>,
}

/// A program's request for its next execution (`mcsim next` on a connection): its
/// connection waits until it is answered (or the request is dropped, which answers
/// `done`).
pub struct NextRequest {
    reply: std::sync::mpsc::Sender<String>,
}

impl NextRequest {
    /// Answers `OK` + `detail` (for example `run 3 seed 45 clients 3`, or `done pass`).
    pub fn answer(self, detail: &str) {
        let _ = self.reply.send(detail.to_string());
    }
}

use world::World;

/// The world, for one connection at a time. The lock is eventually fair (`parking_lot`):
/// a connection waiting for it is not passed over for long by busier ones, so a small
/// `get` is not starved by a burst of large multi-gets. A connection thread that
/// panicked leaves the world as it was between commands.
fn lock(shared: &Shared) -> MutexGuard<'_, World> {
    shared.world.lock()
}

/// Binds every server's port; `ready` gets their addresses; then serves until the
/// process ends, saying on stderr why it ends: a stopping signal, a thread's panic, a
/// failed worker (the `process` module).
pub fn serve(config: &ServeConfig, ready: impl FnOnce(&[SocketAddr])) -> std::io::Result<()> {
    process::watch_signals()?;
    let running = start(config)?;
    ready(running.addrs());
    for t in running.threads {
        let _ = t.join();
    }
    process::exit(1, "every listener stopped")
}

/// Servers started by [`start`], serving on threads of their own until the process ends.
pub struct Running {
    shared: Arc<Shared>,
    addrs: Vec<SocketAddr>,
    threads: Vec<std::thread::JoinHandle<()>>,
    lockstep_wait: Duration,
}

impl Running {
    /// Every server's address, the first server's first.
    pub fn addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Starts afresh for another run of a client program: the servers empty at time
    /// zero, their whole-second clocks ticking at `phase` into each second (`None`: the
    /// configured phase), the fault policy seeded with `seed`, the trace empty,
    /// connection names counted from `c1` again, and, with `lockstep`, commands of that
    /// many participants released one at a time in the order `chooser` picks.
    pub fn reset(
        &self,
        seed: u64,
        phase: Option<Duration>,
        lockstep: Option<(usize, Box<dyn Chooser>)>,
    ) {
        let lockstep = lockstep.map(|(clients, chooser)| {
            lockstep::Lockstep::new(clients, chooser, self.lockstep_wait)
        });
        let mut w = lock(&self.shared);
        w.reset(seed, phase, lockstep);
        self.shared
            .next_id
            .store(1, std::sync::atomic::Ordering::Relaxed);
        drop(w);
        self.shared.turn.notify_all();
    }

    /// The participants of this run so far, in the order they named themselves (each
    /// name once): without lockstep, none.
    pub fn participants(&self) -> Vec<String> {
        let w = lock(&self.shared);
        w.lockstep
            .as_ref()
            .map_or(Vec::new(), |ls| ls.named().to_vec())
    }

    /// The commands of connections that never named themselves, run between the
    /// participants' first command and their last, by connection: outside the schedule
    /// (see `outside`). Without lockstep, none.
    pub fn unscheduled(&self) -> Vec<Unscheduled> {
        let w = lock(&self.shared);
        (w.lockstep.as_ref()).map_or(Vec::new(), |ls| ls.outside.unscheduled())
    }

    /// The faults injected in this run so far (lost replies and requests, evictions,
    /// pauses, crashes, leaves, connections closed): where each one's line is, as an
    /// index into [`trace`](Running::trace) (those whose line left the window are
    /// counted, as `None`).
    pub fn faults(&self) -> Vec<Option<usize>> {
        let w = lock(&self.shared);
        w.fault_lines.iter().map(|&at| w.kept_index(at)).collect()
    }

    /// The participants' commands and replies in this run so far, in the order they ran,
    /// the faults injected, and when the first failure was declared or found (µs of
    /// virtual time): what a run's timeline draws.
    pub fn exchanges(&self) -> (Vec<Exchange>, Vec<FaultMark>, Option<u64>) {
        let w = lock(&self.shared);
        (
            w.exchanges.clone(),
            w.marks.clone(),
            w.declared.failed_at_us,
        )
    }

    /// Where in a second (µs since its server's boot) a command of this run so far read
    /// the clock: a tick edge crossing one of them may change the run.
    pub fn phase_points(&self) -> Vec<u32> {
        lock(&self.shared).phase_points.iter().copied().collect()
    }

    /// By kind the policy allows, how many faults fired in this run so far and how many
    /// of them bit (the program met them: see [`FaultPolicy`]).
    pub fn fault_counts(&self) -> Vec<(mcsim::fault::FaultKind, FaultCount)> {
        lock(&self.shared).faults.counts()
    }

    /// The participants still taking part now (not done, connection not closed), in
    /// name order.
    pub fn running_participants(&self) -> Vec<String> {
        let w = lock(&self.shared);
        w.lockstep.as_ref().map_or(Vec::new(), |ls| ls.running())
    }

    /// The failures the client program declared or its sections showed, in order
    /// (`mcsim fail`, `mcsim enter`).
    pub fn failures(&self) -> Vec<String> {
        lock(&self.shared).declared.failures.clone()
    }

    /// Where the first failure was declared or found, as an index into
    /// [`trace`](Running::trace) (`None`: none was, or its line left the window).
    pub fn failed_at(&self) -> Option<usize> {
        let w = lock(&self.shared);
        w.kept_index(w.declared.failed_at?)
    }

    /// Where a participant's connection first closed before the participant said it was
    /// done, as an index into [`trace`](Running::trace) (`None`: none did, or the line
    /// left the window): past it, the program may be ending, and its connections close
    /// in no order the schedule picks.
    pub fn vanished_at(&self) -> Option<usize> {
        let w = lock(&self.shared);
        w.kept_index(w.lockstep.as_ref()?.vanished()?)
    }

    /// What the client program asked of mcsim that it could not do, in order: a control
    /// command unknown or with wrong arguments, a participant's name taken twice.
    pub fn misuse(&self) -> Vec<String> {
        lock(&self.shared).declared.misuse.clone()
    }

    /// The figures the client program declared (`mcsim metric`), in order, and the
    /// dangers it saw (`mcsim sometimes`).
    pub fn declared(&self) -> (Vec<(String, f64)>, Vec<String>) {
        let w = lock(&self.shared);
        let d = &w.declared;
        (d.metrics.clone(), d.sometimes.iter().cloned().collect())
    }

    /// Connections open now, over every server, apart from those that asked for an
    /// execution (`mcsim next`): a program's own connections, which close as its
    /// execution ends.
    pub fn connections(&self) -> u64 {
        let w = lock(&self.shared);
        w.connections
            .iter()
            .sum::<u64>()
            .saturating_sub(w.controllers)
    }

    /// Waits until [`connections`](Running::connections) is 0 or `by` has come; true if
    /// it is 0.
    pub fn wait_closed(&self, by: std::time::Instant) -> bool {
        let mut w = lock(&self.shared);
        loop {
            if w.connections.iter().sum::<u64>() <= w.controllers {
                return true;
            }
            if self.shared.turn.wait_until(&mut w, by).timed_out() {
                return false;
            }
        }
    }

    /// From now on a connection may ask for the next execution (`mcsim next`): each
    /// request comes here, and its connection waits for the answer. Without this, `mcsim
    /// next` is answered with an error.
    pub fn executions(&self) -> std::sync::mpsc::Receiver<NextRequest> {
        let (send, receive) = std::sync::mpsc::channel();
        *self.shared.executions.lock() = Some(send);
        receive
    }

    /// The trace's lines kept in memory (the last `trace_window`), oldest first.
    pub fn trace(&self) -> Vec<String> {
        let w = lock(&self.shared);
        let (lines, _) = w.trace();
        lines.cloned().collect()
    }
}

/// Binds every server's port and serves them on threads of their own (see [`serve`]).
pub fn start(config: &ServeConfig) -> std::io::Result<Running> {
    let listeners = listen_all(config.port, config.servers.max(1))?;
    let addrs: Vec<SocketAddr> = listeners
        .iter()
        .map(|l| l.local_addr())
        .collect::<Result<_, _>>()?;
    let trace_file = match &config.trace {
        Some(p) => Some(std::fs::File::create(p)?),
        None => None,
    };
    let mut server = config.server.clone();
    if config.clock == ClockMode::Real {
        // Absolute exptimes count from the real unix time at start, as memcached's do.
        server.unix_at_zero = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(server.unix_at_zero, |d| d.as_secs() as i64);
    }
    let ports: Vec<u16> = addrs.iter().map(SocketAddr::port).collect();
    let mut world = World::new(
        &ports,
        &server,
        config.clock,
        (config.faults.clone(), config.latency),
        config.seed,
        trace_file,
        config.trace_window,
    );
    if let Some(n) = config.lockstep {
        let order = Box::new(SeededOrder::new(config.seed));
        world.lockstep = Some(lockstep::Lockstep::new(n, order, config.lockstep_wait));
    }
    let shared = Arc::new(Shared {
        world: Mutex::new(world),
        turn: Condvar::new(),
        next_id: std::sync::atomic::AtomicU64::new(1),
        delay: config.faults.delay,
        name_key: config.name_key.clone(),
        executions: parking_lot::Mutex::new(None),
    });
    // Nothing makes a connection wait for another: a few event-loop workers serve them
    // all, as memcached's do; lockstep and reply delays block, a thread per connection.
    let inboxes = if config.lockstep.is_none() && config.faults.delay.is_zero() {
        workers::start(&shared, config.threads)?
    } else {
        Vec::new()
    };
    let mut threads = Vec::new();
    for (server, listener) in listeners.into_iter().enumerate() {
        let (shared, inboxes) = (shared.clone(), inboxes.clone());
        threads.push(std::thread::spawn(move || {
            let what = format!("the listener of server {server}");
            process::or_exit(&what, || accept(&shared, server, &listener, &inboxes))
        }));
    }
    Ok(Running {
        shared,
        addrs,
        threads,
        lockstep_wait: config.lockstep_wait,
    })
}

/// The backlog of pending connections: memcached's default (`-b 1024`), so a burst of
/// connects waits for `accept` instead of being dropped and retried a second later.
const BACKLOG: i32 = 1024;

/// Stack of a connection's thread: what it holds is on the heap.
const CONNECTION_STACK: usize = 256 * 1024;

/// Listens on `count` consecutive ports from `first`, or, with `first` 0, on free ones, as
/// consecutive as can be found (a client that spreads keys over servers hashes their
/// addresses: consecutive ports from a base make them one number to give again).
fn listen_all(first: u16, count: usize) -> std::io::Result<Vec<TcpListener>> {
    let from = |base: u16| -> std::io::Result<Vec<TcpListener>> {
        (0..count)
            .map(|i| {
                let port = base.checked_add(i as u16).ok_or_else(|| {
                    std::io::Error::new(std::io::ErrorKind::InvalidInput, "port out of range")
                })?;
                listen(port)
            })
            .collect()
    };
    if first != 0 {
        return from(first);
    }
    for _ in 0..100 {
        let base = listen(0)?.local_addr()?.port();
        if let Ok(listeners) = from(base) {
            return Ok(listeners);
        }
    }
    (0..count).map(|_| listen(0)).collect()
}

/// Listens on 127.0.0.1:`port` with memcached's backlog.
fn listen(port: u16) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    socket.set_reuse_address(true)?;
    socket.bind(&SocketAddr::from(([127, 0, 0, 1], port)).into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}

/// Accepts connections to `server` and hands each to the next worker's inbox in turn, or,
/// without workers, to a thread of its own.
fn accept(shared: &Arc<Shared>, server: usize, listener: &TcpListener, inboxes: &[Arc<Inbox>]) {
    let mut next = 0;
    loop {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors (EMFILE, ENFILE) or memory: memcached stops accepting
                // for a while; looping at once would only spin a core.
                if !matches!(
                    e.kind(),
                    std::io::ErrorKind::Interrupted | std::io::ErrorKind::ConnectionAborted
                ) {
                    std::thread::sleep(Duration::from_millis(10));
                }
                continue;
            }
        };
        let id = shared
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // A connection to a server that is down is refused on a thread of its own: under
        // lockstep it waits for its turn.
        let down = lock(shared).is_down(server);
        if !down && !inboxes.is_empty() {
            inboxes[next % inboxes.len()].give(stream, server, id);
            next += 1;
            continue;
        }
        let shared = shared.clone();
        let spawned = std::thread::Builder::new()
            .stack_size(CONNECTION_STACK)
            .spawn(move || {
                let mut conn = Connection::new(id, server, &shared);
                if down {
                    conn.refuse(&shared, stream);
                } else {
                    conn.run(&shared, stream);
                }
                conn.close(&shared);
            });
        if spawned.is_err() {
            // No thread for it: the connection closes (its stream was moved into the
            // closure that failed to start, and is dropped with it); wait a little.
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
