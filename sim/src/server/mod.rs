//! One simulated memcached 1.6 server.
//!
//! [`Server::apply`] executes one [`Request`] at a virtual instant and returns exactly the
//! [`Reply`] memcached 1.6.18 gives (MEMCACHED.md): whole-second clock starting at 62,
//! `exptime <= tick` expiry, cas uniques, incr/decr in place, append/prepend keeping flags
//! and exptime, the item-size rule, slab classes with a segmented LRU, `-M`, delayed
//! `flush_all`, `stats`. Fault hooks ([`Server::evict`], [`Server::crash`],
//! [`Server::restart`], [`Server::skip_second`], [`Server::drop_all`]) let the executor
//! inject what a real deployment does to recipes.
//!
//! Where this model knowingly differs from memcached, the difference is named where it is
//! made, and in the README's fidelity table: the LRU maintainer runs synchronously after
//! each store instead of on a background thread (so the exact victim at the edge of an
//! eviction can differ when the real thread lags); pages never move between classes (no
//! slab mover); arithmetic on numbers of 2^63 or more and on whitespace-only values reads
//! only the value, where memcached reads on into leftover memory. Chunked items (above
//! 512 KiB) are placed as memcached 1.6 places them (`slab`). `sim/tests/evictions.rs`
//! and `real_settings.rs` compare with a real memcached. The server never reads the wall
//! clock: time comes in with every call.

mod arith;
mod config;
mod index;
mod items;
mod lru;
mod meta;
mod settings;
mod slab;
mod stats;

use std::borrow::Cow;

use crate::clock::{ServerClock, VirtualTime};
use crate::memcache::{Exptime, Key, MAX_RELATIVE_EXPTIME};
use crate::protocol::{ArithOp, Reply, Request, StatsGroup, StoreMode, ValueEntry};

pub use arith::parse_u64;
pub use config::{MIB, SLAB_CHUNK_MAX_DEFAULT, SLAB_PAGE_SIZE, ServerConfig};
pub use items::{AllocError, Item, Items};
pub use slab::{PAGE_SIZE, item_total};
pub use stats::{ClassStats, Hit, Moment, Process, Stats};

/// `CLIENT_ERROR` text for a value incr/decr cannot read as a number.
pub const NON_NUMERIC: &str = "cannot increment or decrement non-numeric value";

/// One simulated memcached process.
#[derive(Debug, Clone)]
pub struct Server {
    config: ServerConfig,
    /// The tick phase of this run: the configured one, unless a strategy chose another.
    phase: std::time::Duration,
    clock: ServerClock,
    items: Items,
    up: bool,
    /// The level last set by `verbosity` (`stats settings` shows it).
    verbosity: u32,
    /// Reads the process `stats` describes when it is asked.
    process: fn() -> Process,
}

impl Server {
    /// A fresh server booted at `boot`.
    pub fn new(config: ServerConfig, boot: VirtualTime) -> Server {
        let clock = ServerClock::new(boot, config.phase, config.unix_at_zero);
        let items = Items::new(&config);
        Server {
            phase: config.phase,
            config,
            clock,
            items,
            up: true,
            verbosity: 0,
            process: || Process::SIMULATED,
        }
    }

    /// A fresh server with default settings booted at time zero.
    pub fn with_defaults() -> Server {
        Server::new(ServerConfig::default(), VirtualTime::ZERO)
    }

    /// The settings.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The server's clock.
    pub fn clock(&self) -> &ServerClock {
        &self.clock
    }

    /// The server's tick at `now`.
    pub fn tick(&self, now: VirtualTime) -> u32 {
        self.clock.tick(now)
    }

    /// True if `key` names an item that expires within a second of `now`: whether a
    /// call finds it then depends on where the tick edges fall.
    pub fn near_expiry(&self, key: &Key, now: VirtualTime) -> bool {
        let tick = self.tick(now);
        (self.items.linked(key))
            .is_some_and(|item| item.exptime != 0 && item.exptime <= tick.saturating_add(1))
    }

    /// Where in a second `at` falls, counted from the server's boot (µs): where a tick
    /// edge must fall to change what a call at `at` reads of the clock.
    pub fn offset_in_second(&self, at: VirtualTime) -> u32 {
        let since_boot = at.micros().saturating_sub(self.clock.boot().micros());
        (since_boot % 1_000_000) as u32
    }

    /// The counters, as `stats` reports them.
    pub fn stats(&self) -> Stats {
        self.items.stats()
    }

    /// Sets the number of client connections `stats` reports as `curr_connections` (the
    /// executor opens one per virtual client; a process restart drops them, and clients
    /// reconnect). Those more than before count as opened (`total_connections`).
    pub fn set_connections(&mut self, connections: u64) {
        let s = &mut self.items.stats;
        s.total_connections += connections.saturating_sub(s.curr_connections);
        s.connection_structures = s.connection_structures.max(connections);
        s.curr_connections = connections;
    }

    /// Counts bytes read from a client's socket and written to it (`bytes_read`,
    /// `bytes_written`): the simulation has no wire; a server on one counts them.
    pub fn count_bytes(&mut self, read: u64, written: u64) {
        let s = &mut self.items.stats;
        s.bytes_read += read;
        s.bytes_written += written;
    }

    /// Reads the process `stats` describes with `process` from now on (in-process,
    /// [`Process::SIMULATED`]).
    pub fn report_process(&mut self, process: fn() -> Process) {
        self.process = process;
    }

    /// Plain `stats` at `now`: every field of memcached 1.6.18's, in its order
    /// ([`Stats::lines`]).
    pub fn stats_lines(&self, now: VirtualTime) -> Vec<(String, String)> {
        let tick = self.tick(now);
        // memcached's uptime is its current_time less the 2 s it starts the clock at,
        // and less ITEM_UPDATE_INTERVAL's 60 the clock starts after.
        let uptime = tick.saturating_sub(crate::clock::FIRST_TICK) + 2;
        self.items.stats().lines(&Moment {
            config: &self.config,
            uptime,
            time: self.clock.process_started() + i64::from(tick),
            process: (self.process)(),
        })
    }

    /// The item table (for checks that must not disturb the LRU).
    pub fn items(&self) -> &Items {
        &self.items
    }

    /// The live item under `key` at `now`, without any side effect.
    pub fn peek(&self, key: &Key, now: VirtualTime) -> Option<&Item> {
        self.items.peek(key, self.tick(now))
    }

    /// Every item still live at `now` (not expired, not flushed), in key order.
    pub fn live_items(&self, now: VirtualTime) -> impl Iterator<Item = (&Key, &Item)> {
        let tick = self.tick(now);
        self.items
            .iter()
            .filter(move |(key, _)| self.items.peek(key, tick).is_some())
    }

    /// Feeds everything that decides this server's future replies to `h`, except where
    /// items sit in the LRU and the slabs (which matter only under memory pressure): the
    /// clock, whether it is up, every linked item with its expiry, cas, access time and
    /// flags of the LRU and meta protocol, the cas counter, the `flush_all` marks and the
    /// counters `stats` reports.
    pub fn fingerprint(&self, h: &mut impl std::hash::Hasher) {
        use std::hash::Hash;
        self.up.hash(h);
        self.clock.hash(h);
        for (key, item) in self.items.iter() {
            key.as_bytes().hash(h);
            item.data.hash(h);
            (item.flags, item.exptime, item.cas, item.time).hash(h);
            let marks = (item.fetched, item.active, item.token_sent, item.stale);
            (marks, item.key_binary).hash(h);
        }
        self.items.flush_marks().hash(h);
        self.items.hash_counters(h);
    }

    /// False between a crash and the restart.
    pub fn is_up(&self) -> bool {
        self.up
    }

    /// Fault: evict `key` at `now`, as memory pressure would (counted as an eviction of
    /// its class). Returns whether it was there.
    pub fn evict(&mut self, key: &Key, now: VirtualTime) -> bool {
        let tick = self.tick(now);
        self.items.evict(key, tick)
    }

    /// Fault: every item is lost, the process keeps running.
    pub fn drop_all(&mut self) {
        self.items.clear();
    }

    /// Runs this boot's clock (and every restart's) at another tick phase than the
    /// configured one, as a strategy that searches phases asks before an execution
    /// starts. The clock restarts at its boot time; [`Server::reset`] goes back to the
    /// configured phase.
    pub fn set_phase(&mut self, phase: std::time::Duration) {
        self.phase = phase;
        self.clock = ServerClock::new(self.clock.boot(), phase, self.config.unix_at_zero);
    }

    /// Fault: the clock jumps one second ahead.
    pub fn skip_second(&mut self) {
        self.clock.skip_second();
    }

    /// Fault: the process dies. Everything is lost; calls fail until [`Server::restart`].
    pub fn crash(&mut self) {
        self.items.reset();
        self.up = false;
    }

    /// Back to the state of [`Server::new`] with the same settings, booted at `boot`,
    /// reusing this server's memory.
    pub fn reset(&mut self, boot: VirtualTime) {
        self.reset_at_phase(boot, None);
    }

    /// [`Server::reset`], the clock at tick phase `phase` (the configured one if `None`),
    /// as [`Server::set_phase`] after it would leave it: one clock built, not two.
    pub fn reset_at_phase(&mut self, boot: VirtualTime, phase: Option<std::time::Duration>) {
        self.phase = phase.unwrap_or(self.config.phase);
        self.clock = ServerClock::new(boot, self.phase, self.config.unix_at_zero);
        self.items.reset();
        self.up = true;
    }

    /// A new process starts at `now`; its clock starts again at 62. A warm restart
    /// (`-e`) keeps items and cas uniques, and their exptimes keep counting in wall time
    /// across the downtime; a cold one starts empty.
    pub fn restart(&mut self, now: VirtualTime, warm: bool) {
        let old_started = self.clock.process_started();
        self.clock = ServerClock::new(now, self.phase, self.config.unix_at_zero);
        if warm {
            let shift = old_started - self.clock.process_started();
            for item in self.items.items_mut() {
                if item.exptime != 0 {
                    item.exptime = (i64::from(item.exptime) + shift).max(1) as u32;
                }
                item.time = (i64::from(item.time) + shift).max(1) as u32;
            }
            self.items.reset_flush();
        } else {
            self.items.reset();
        }
        self.up = true;
    }

    /// memcached's `realtime()` applied to a wire exptime: the expiry tick (0: never).
    pub fn expiry_tick(&self, exptime: Exptime, now: VirtualTime) -> u32 {
        // The server parses exptime into a signed 32-bit integer.
        let e = exptime.0 as i32;
        let e = if e < 0 {
            MAX_RELATIVE_EXPTIME + 1
        } else {
            i64::from(e)
        };
        if e == 0 {
            return 0;
        }
        if e > MAX_RELATIVE_EXPTIME {
            let started = self.clock.process_started();
            if e <= started {
                return 1;
            }
            return (e - started) as u32;
        }
        (e + i64::from(self.tick(now))) as u32
    }

    /// A storage command whose item can never fit under `-I`, seen before its data block
    /// is read: memcached answers at once and then discards the block unread. A `set`
    /// (`unlink_old`; every meta set too) also loses the key's old value.
    pub fn reject_too_large(&mut self, key: &Key, unlink_old: bool, now: VirtualTime) -> Reply {
        let tick = self.tick(now);
        if unlink_old && self.items.find(key, tick).is_some() {
            self.items.unlink(key);
        }
        self.items.stats.store_too_large += 1;
        Reply::ServerError("object too large for cache".into())
    }

    /// Executes one request at `now`. A `noreply` request still runs and answers
    /// [`Reply::Silent`]. Given by value (`server.apply(request, now)`), a storage
    /// command's bytes move into the new item; given by reference (`&request`), they are
    /// copied.
    pub fn apply<'r>(&mut self, request: impl Into<Cow<'r, Request>>, now: VirtualTime) -> Reply {
        match request.into() {
            Cow::Borrowed(request) => {
                let silent = silenced(request);
                let reply = self.execute(request, now);
                if silent { Reply::Silent } else { reply }
            }
            Cow::Owned(mut request) => self.apply_in_place(&mut request, now),
        }
    }

    /// [`Server::apply`] that takes a storage command's bytes out of the request (leaving
    /// it empty) to move them into the new item: for the engine, which keeps the request
    /// in its client's mailbox while the server runs it.
    pub(crate) fn apply_in_place(&mut self, request: &mut Request, now: VirtualTime) -> Reply {
        let silent = silenced(request);
        let reply = match request {
            Request::Store {
                mode,
                key,
                flags,
                exptime,
                data,
                ..
            } => {
                let data = std::mem::take(data);
                self.store_at(*mode, key, *flags, *exptime, Cow::Owned(data), now)
            }
            other => self.execute(other, now),
        };
        if silent { Reply::Silent } else { reply }
    }

    fn execute(&mut self, request: &Request, now: VirtualTime) -> Reply {
        let tick = self.tick(now);
        match request {
            Request::Get { keys, with_cas } => self.get(keys, *with_cas, None, tick),
            Request::Gat {
                exptime,
                keys,
                with_cas,
            } => {
                let e = self.expiry_tick(*exptime, now);
                self.get(keys, *with_cas, Some(e), tick)
            }
            Request::Store {
                mode,
                key,
                flags,
                exptime,
                data,
                ..
            } => self.store_at(*mode, key, *flags, *exptime, Cow::Borrowed(data), now),
            Request::Arith { op, key, delta, .. } => self.arith(*op, key, *delta, tick),
            Request::Delete { key, .. } => {
                if self.items.find(key, tick).is_some() {
                    self.items.unlink(key);
                    self.items.hit(Hit::Delete);
                    Reply::Deleted
                } else {
                    self.items.stats.delete_misses += 1;
                    Reply::NotFound
                }
            }
            Request::Touch { key, exptime, .. } => {
                let e = self.expiry_tick(*exptime, now);
                self.items.stats.cmd_touch += 1;
                match self.items.fetch(key, tick, true) {
                    Some(item) => {
                        item.exptime = e;
                        self.items.hit(Hit::Touch);
                        Reply::Touched
                    }
                    None => {
                        self.items.stats.touch_misses += 1;
                        Reply::NotFound
                    }
                }
            }
            Request::FlushAll { delay, .. } => {
                self.items.stats.cmd_flush += 1;
                let d = delay.unwrap_or(0) as i32;
                let new_oldest = if d > 0 {
                    self.expiry_tick(Exptime(i64::from(d)), now)
                } else {
                    tick
                };
                self.items.flush(new_oldest.wrapping_sub(1), tick);
                Reply::Ok
            }
            Request::Meta {
                command,
                key,
                flags,
                data,
            } => meta::execute(self, *command, key.as_ref(), flags, data.as_deref(), now),
            Request::Stats => Reply::Stats(self.stats_lines(now)),
            Request::StatsGroup(group) => Reply::Stats(match group {
                StatsGroup::Items => self.items.items_report(tick),
                StatsGroup::Slabs => self.items.slabs_report(),
                StatsGroup::Settings => settings::settings_report(
                    &self.config,
                    self.verbosity,
                    self.items.flush_marks().1,
                ),
            }),
            Request::StatsReset => {
                self.items.reset_counters();
                Reply::Reset
            }
            Request::Version => Reply::Version(self.config.version.clone()),
            Request::Verbosity { level, .. } => {
                // memcached keeps at most its highest level, 2.
                self.verbosity = (*level).min(2);
                Reply::Ok
            }
        }
    }

    fn get(&mut self, keys: &[Key], with_cas: bool, touch: Option<u32>, tick: u32) -> Reply {
        // Allocated at the first hit: a miss (the common first read of a recipe) costs
        // no allocation.
        let mut out = Vec::new();
        for key in keys {
            if touch.is_some() {
                self.items.stats.cmd_touch += 1;
            } else {
                self.items.stats.cmd_get += 1;
            }
            match self.items.fetch(key, tick, true) {
                Some(item) => {
                    if let Some(e) = touch {
                        item.exptime = e;
                    }
                    out.push(ValueEntry {
                        key: key.clone(),
                        flags: item.flags,
                        data: item.data.clone(),
                        cas: with_cas.then_some(item.cas),
                    });
                    self.items.hit(if touch.is_some() {
                        Hit::Touch
                    } else {
                        Hit::Get
                    });
                }
                None if touch.is_some() => self.items.stats.touch_misses += 1,
                None => self.items.stats.get_misses += 1,
            }
        }
        Reply::Values(out)
    }

    /// A storage command with its wire exptime, at `now`.
    fn store_at(
        &mut self,
        mode: StoreMode,
        key: &Key,
        flags: u32,
        exptime: Exptime,
        data: Cow<'_, [u8]>,
        now: VirtualTime,
    ) -> Reply {
        let expiry = self.expiry_tick(exptime, now);
        self.store(mode, key, flags, expiry, data, self.tick(now))
    }

    fn store(
        &mut self,
        mode: StoreMode,
        key: &Key,
        flags: u32,
        exptime: u32,
        data: Cow<'_, [u8]>,
        tick: u32,
    ) -> Reply {
        // memcached allocates the new item before it looks at the old one, so the
        // allocation may evict the very item this command is about to compare with.
        let reservation = match self.items.reserve(key.len(), flags, data.len(), tick) {
            Ok(r) => {
                self.items.count_set(&r);
                r
            }
            Err(e) => {
                if mode == StoreMode::Set && self.items.find(key, tick).is_some() {
                    self.items.unlink(key);
                }
                return match e {
                    AllocError::TooLarge => {
                        self.items.stats.store_too_large += 1;
                        Reply::ServerError("object too large for cache".into())
                    }
                    AllocError::OutOfMemory => {
                        self.items.stats.store_no_memory += 1;
                        Reply::ServerError("out of memory storing object".into())
                    }
                };
            }
        };
        // Only append and prepend need the old bytes, and only when the joined item is
        // not too large (which the reservation below refuses before it looks at memory):
        // a recipe that appends to a full item again and again copies nothing.
        let joins = matches!(mode, StoreMode::Append | StoreMode::Prepend);
        let limit = self.items.item_size_max();
        let old = self.items.find(key, tick).map(|i| {
            let fits =
                joins && !slab::too_large(limit, key.len(), i.flags, i.data.len() + data.len());
            let old_data = if fits { i.data.clone() } else { Vec::new() };
            (i.cas, i.flags, i.exptime, old_data, fits)
        });
        let new_item = |d: Vec<u8>| Item::new(d, flags, exptime);
        let reply = match (mode, old) {
            (StoreMode::Set, _) | (StoreMode::Add, None) | (StoreMode::Replace, Some(_)) => {
                self.items
                    .link(key, new_item(data.into_owned()), reservation, tick);
                return Reply::Stored;
            }
            (StoreMode::Add, Some(_)) => {
                self.items.touch_time(key, tick);
                Reply::NotStored
            }
            (StoreMode::Replace | StoreMode::Append | StoreMode::Prepend, None) => Reply::NotStored,
            (StoreMode::Cas(_), None) => {
                self.items.stats.cas_misses += 1;
                Reply::NotFound
            }
            (StoreMode::Cas(want), Some((cas, ..))) => {
                if want != 0 && want == cas {
                    self.items.hit(Hit::CasHit);
                    self.items
                        .link(key, new_item(data.into_owned()), reservation, tick);
                    return Reply::Stored;
                }
                self.items.hit(Hit::CasBadval);
                Reply::Exists
            }
            (StoreMode::Append | StoreMode::Prepend, Some((.., false))) => Reply::NotStored,
            (
                StoreMode::Append | StoreMode::Prepend,
                Some((_, old_flags, old_exp, old_data, true)),
            ) => {
                let mut joined = Vec::with_capacity(old_data.len() + data.len());
                if mode == StoreMode::Append {
                    joined.extend_from_slice(&old_data);
                    joined.extend_from_slice(&data);
                } else {
                    joined.extend_from_slice(&data);
                    joined.extend_from_slice(&old_data);
                }
                match self.items.reserve(key.len(), old_flags, joined.len(), tick) {
                    Ok(r2) => {
                        let item = Item::new(joined, old_flags, old_exp);
                        self.items.link(key, item, r2, tick);
                        self.items.release(reservation);
                        return Reply::Stored;
                    }
                    Err(_) => Reply::NotStored,
                }
            }
        };
        self.items.release(reservation);
        reply
    }

    fn arith(&mut self, op: ArithOp, key: &Key, delta: u64, tick: u32) -> Reply {
        let incr = op == ArithOp::Incr;
        let Some(item) = self.items.find(key, tick) else {
            if incr {
                self.items.stats.incr_misses += 1;
            } else {
                self.items.stats.decr_misses += 1;
            }
            return Reply::NotFound;
        };
        let Some(value) = (!item.is_chunked())
            .then(|| arith::parse_u64(&item.data))
            .flatten()
        else {
            return Reply::ClientError(NON_NUMERIC.into());
        };
        let value = arith::apply(incr, value, delta);
        let (flags, exptime) = (item.flags, item.exptime);
        let rewritten = arith::in_place(item.data.len(), value);
        self.items.hit(if incr { Hit::Incr } else { Hit::Decr });
        if let Some(bytes) = rewritten {
            let cas = self.items.next_cas();
            if let Some(item) = self.items.find(key, tick) {
                item.data = bytes;
                item.cas = cas;
            }
            self.items.touch_time(key, tick);
            return Reply::Number(value);
        }
        let digits = crate::memcache::decimal(value);
        match self.items.reserve(key.len(), flags, digits.len(), tick) {
            Ok(r) => {
                self.items
                    .link(key, Item::new(digits, flags, exptime), r, tick);
                Reply::Number(value)
            }
            Err(_) => Reply::ServerError("out of memory".into()),
        }
    }
}

/// True if the server answers `request` with nothing: a `noreply` classic command (a meta
/// command's `q` flag only hides some replies, which the meta code decides).
fn silenced(request: &Request) -> bool {
    request.is_noreply() && !matches!(request, Request::Meta { .. })
}
