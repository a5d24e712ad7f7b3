//! `mcsim serve`: the simulated memcached on TCP, with injected faults, for recipes
//! written in any language.
//!
//! Each server listens on its own port and speaks memcached's text and meta protocols
//! exactly as the simulated server does in-process (through [`Session`], byte for
//! byte). Faults come by policy (`--lose-reply`, `--evict`, `--delay-ms`, drawn from
//! `--seed`) or on command over the same connection (`mcsim evict KEY`, `mcsim advance
//! 30`, …: [`control`]). The clock follows real time or, with `--clock manual`, moves
//! only when told, so TTL tests run in milliseconds. With `--lockstep N`, commands of N
//! client connections are released one at a time in an order drawn from the seed
//! (see `lockstep`). Every command, fault and control command is a line of the trace
//! (`--trace FILE`, and `mcsim trace` on any connection), in the timeline format.

pub mod control;
mod lockstep;
mod world;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::codec::{Command, Parsed, Session, parse_command, read_reply, read_request};
use crate::server::ServerConfig;
use crate::trace::{describe_reply, describe_request};

pub use world::{ClockMode, FaultPolicy};

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
    /// With a prefix, a `get` of `PREFIX` + a name names the connection (answered as a
    /// miss), for client libraries that send only memcached commands; without one, every
    /// `get` is a `get`. The prefix is chosen at start, so no key of the recipe's is taken
    /// for it.
    pub name_key: Option<String>,
}

/// The trace lines `mcsim serve` keeps in memory by default.
pub const DEFAULT_TRACE_WINDOW: usize = 10_000;

struct Shared {
    world: Mutex<World>,
    turn: Condvar,
    next_id: Mutex<u64>,
    /// Every reply is held this long (fixed for the run: read without the lock).
    delay: Duration,
    /// A `get` of a key with this prefix names the connection ([`ServeConfig::name_key`]).
    name_key: Option<String>,
}

use world::World;

fn lock(shared: &Shared) -> MutexGuard<'_, World> {
    // A connection thread that panicked leaves the state as it was between commands.
    shared.world.lock().unwrap_or_else(|p| p.into_inner())
}

/// Binds every server's port; `ready` gets their addresses; then serves until the
/// process ends.
pub fn serve(config: &ServeConfig, ready: impl FnOnce(&[SocketAddr])) -> std::io::Result<()> {
    let mut listeners = Vec::new();
    for i in 0..config.servers.max(1) {
        let port = if config.port == 0 {
            0
        } else {
            config.port.checked_add(i as u16).ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "port out of range")
            })?
        };
        listeners.push(TcpListener::bind(("127.0.0.1", port))?);
    }
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
    let mut world = World::new(
        listeners.len(),
        &server,
        config.clock,
        config.faults,
        config.seed,
        trace_file,
        config.trace_window,
    );
    if let Some(n) = config.lockstep {
        world.lockstep = Some(lockstep::Lockstep::new(
            n,
            config.seed,
            config.lockstep_wait,
        ));
    }
    let shared = Arc::new(Shared {
        world: Mutex::new(world),
        turn: Condvar::new(),
        next_id: Mutex::new(0),
        delay: config.faults.delay,
        name_key: config.name_key.clone(),
    });
    ready(&addrs);
    let mut threads = Vec::new();
    for (server, listener) in listeners.into_iter().enumerate() {
        let shared = shared.clone();
        threads.push(std::thread::spawn(move || {
            accept(&shared, server, &listener)
        }));
    }
    for t in threads {
        let _ = t.join();
    }
    Ok(())
}

fn accept(shared: &Arc<Shared>, server: usize, listener: &TcpListener) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let id = {
            let mut n = shared.next_id.lock().unwrap_or_else(|p| p.into_inner());
            *n += 1;
            *n
        };
        let shared = shared.clone();
        std::thread::spawn(move || {
            let mut conn = Connection::new(id, server, &shared);
            conn.run(&shared, stream);
            conn.close(&shared);
        });
    }
}

/// One client connection.
struct Connection {
    id: u64,
    server: usize,
    session: Session,
    label: String,
    epoch: u64,
    /// It named itself: in lockstep, its commands are held and released in turn.
    named: bool,
}

/// What to do after a command.
enum Next {
    Write(Vec<u8>),
    Close(Vec<u8>),
}

impl Connection {
    fn new(id: u64, server: usize, shared: &Shared) -> Connection {
        let mut w = lock(shared);
        w.connections[server] += 1;
        let open = w.connections[server];
        w.servers[server].set_connections(open);
        Connection {
            id,
            server,
            session: Session::new(),
            label: format!("c{id}"),
            epoch: w.epochs[server],
            named: false,
        }
    }

    fn close(&mut self, shared: &Shared) {
        let mut w = lock(shared);
        w.connections[self.server] = w.connections[self.server].saturating_sub(1);
        let open = w.connections[self.server];
        w.servers[self.server].set_connections(open);
        if let Some(ls) = &mut w.lockstep {
            ls.leave(self.id);
        }
        drop(w);
        shared.turn.notify_all();
    }

    fn run(&mut self, shared: &Shared, mut stream: TcpStream) {
        let _ = stream.set_nodelay(true);
        let mut input: Vec<u8> = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let participant = self.named && lock(shared).lockstep.is_some();
            if participant {
                if let Some(ls) = &mut lock(shared).lockstep {
                    ls.reading(self.id, &stream);
                }
                shared.turn.notify_all();
            }
            if participant {
                // Waits for bytes without taking them, so that from the moment they arrive
                // until this connection counts as busy, lockstep sees them unread.
                let _ = stream.peek(&mut buf[..1]);
                if let Some(ls) = &mut lock(shared).lockstep {
                    ls.busy(self.id);
                }
            }
            let n = match stream.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            input.extend_from_slice(&buf[..n]);
            while let Some(len) = command_len(&input) {
                let command: Vec<u8> = input.drain(..len).collect();
                let next = self.command(shared, &command);
                let (bytes, close) = match next {
                    Next::Write(b) => (b, false),
                    Next::Close(b) => (b, true),
                };
                if !shared.delay.is_zero() {
                    std::thread::sleep(shared.delay);
                }
                if (!bytes.is_empty() && stream.write_all(&bytes).is_err()) || close {
                    return;
                }
            }
        }
    }

    /// Runs one command (or control command) and says what goes back.
    fn command(&mut self, shared: &Shared, bytes: &[u8]) -> Next {
        let line_end = bytes
            .iter()
            .position(|&b| b == b'\n')
            .unwrap_or(bytes.len());
        let line = String::from_utf8_lossy(&bytes[..line_end]);
        let line = line.trim_end_matches('\r');
        if control::is_control(line.as_bytes()) {
            let mut w = lock(shared);
            let effect = control::run(&mut w, self.server, line);
            drop(w);
            shared.turn.notify_all();
            return match effect {
                control::Effect::Reply(b) => Next::Write(b),
                control::Effect::Name(name) => {
                    self.name(shared, name);
                    Next::Write(b"OK\r\n".to_vec())
                }
                control::Effect::Crashed => Next::Close(Vec::new()),
            };
        }
        if let Some(name) = shared
            .name_key
            .as_deref()
            .and_then(|prefix| line.strip_prefix("get ")?.strip_prefix(prefix))
            .filter(|name| !name.is_empty() && !name.contains(' '))
        {
            self.name(shared, name.to_string());
            return Next::Write(b"END\r\n".to_vec());
        }
        let mut w = self.wait_turn(shared);
        let out = self.execute(&mut w, bytes);
        drop(w);
        shared.turn.notify_all();
        out
    }

    /// The connection names itself: in lockstep it takes part from now on.
    fn name(&mut self, shared: &Shared, name: String) {
        let mut w = lock(shared);
        if let Some(ls) = &mut w.lockstep {
            ls.join(self.id, &name);
        }
        self.label = name;
        self.named = true;
    }

    /// In lockstep, blocks until this connection's command is released.
    fn wait_turn<'a>(&mut self, shared: &'a Shared) -> MutexGuard<'a, World> {
        let mut w = lock(shared);
        if !self.named {
            // Not a participant: it runs once no participant has a command on its way.
            let since = Instant::now();
            while let Some(ls) = &w.lockstep
                && !ls.quiet()
                && since.elapsed() < ls.wait_limit
            {
                let (guard, _) = shared
                    .turn
                    .wait_timeout(w, Duration::from_millis(1))
                    .unwrap_or_else(|p| p.into_inner());
                w = guard;
            }
            return w;
        }
        let Some(ls) = w.lockstep.as_mut() else {
            return w;
        };
        ls.arrive(self.id, &self.label);
        let limit = ls.wait_limit;
        let mut since = Instant::now();
        loop {
            let ls = w.lockstep.as_mut().expect("lockstep is on");
            if ls.take(self.id) {
                return w;
            }
            let force = since.elapsed() >= limit;
            if let Some(passed) = ls.grant(force) {
                if force && !passed.is_empty() {
                    let at = w.now();
                    let n = w.commands;
                    w.record(format!(
                        "{n:>8} {at}  --  lockstep: released without {} (nothing sent for {limit:?})",
                        passed.join(", ")
                    ));
                }
                since = Instant::now();
                shared.turn.notify_all();
                continue;
            }
            let (guard, _) = shared
                .turn
                .wait_timeout(w, Duration::from_millis(20))
                .unwrap_or_else(|p| p.into_inner());
            w = guard;
        }
    }

    fn execute(&mut self, w: &mut World, bytes: &[u8]) -> Next {
        let server = self.server;
        w.tick_command();
        let now = w.now();
        let n = w.commands;
        let who = self.label.clone();
        if w.down[server] || w.epochs[server] != self.epoch {
            w.record(format!(
                "{n:>8} {now}  {who}  connection closed: the server restarted or left"
            ));
            return Next::Close(Vec::new());
        }
        if w.armed[server].close_next > 0 {
            w.armed[server].close_next -= 1;
            w.record(format!(
                "{n:>8} {now}  {who}  FAULT connection closed before its command"
            ));
            return Next::Close(Vec::new());
        }
        let evict = w.policy.evict;
        if w.chance(evict)
            && let Some(key) = w.evict_one(server)
        {
            w.record(format!(
                "{n:>8} {now}  --  FAULT evict {key} from server {server}"
            ));
        }
        let out = self.session.feed(&mut w.servers[server], bytes, now);
        let lose = w.policy.lose_reply;
        let lost = if w.armed[server].lose_replies > 0 {
            w.armed[server].lose_replies -= 1;
            true
        } else {
            w.chance(lose)
        };
        let mut line = format!("{n:>8} {now}  {who}  {}", describe(bytes, &out));
        if lost {
            line.push_str(" (reply lost: FAULT)");
        }
        w.record(line);
        let out = if lost { Vec::new() } else { out };
        if self.session.is_closed() {
            Next::Close(out)
        } else {
            Next::Write(out)
        }
    }
}

/// The length of the first whole command in `input` (a storage command with its data
/// block), or `None` until it is all there.
fn command_len(input: &[u8]) -> Option<usize> {
    match parse_command(input) {
        Parsed::Incomplete => None,
        // The session closes the connection on these bytes.
        Parsed::Close => Some(input.len()),
        Parsed::Line { consumed, command } => match command {
            Command::Store(head) => {
                let total = consumed + head.len + 2;
                (input.len() >= total).then_some(total)
            }
            Command::Answer { swallow, .. } if swallow > 0 => {
                let total = consumed + swallow;
                (input.len() >= total).then_some(total)
            }
            _ => Some(consumed),
        },
    }
}

/// One command and its reply for the trace, as the in-process timeline writes them.
fn describe(command: &[u8], reply: &[u8]) -> String {
    let first_line = |b: &[u8]| {
        let end = b
            .iter()
            .position(|&c| c == b'\r' || c == b'\n')
            .unwrap_or(b.len());
        String::from_utf8_lossy(&b[..end.min(120)]).into_owned()
    };
    match read_request(command) {
        Ok(Some((request, _))) => {
            let what = describe_request(&request);
            let answer = match read_reply(reply, &request) {
                Ok(Some((r, _))) => describe_reply(&r),
                _ if reply.is_empty() => "(no reply)".into(),
                _ => first_line(reply),
            };
            format!("{what} -> {answer}")
        }
        _ => format!("{} -> {}", first_line(command), first_line(reply)),
    }
}
