//! The event-log workload.
//!
//! Writer clients (each with its own clock skew) put events on a deterministic schedule:
//! an event's time is the writer's clock, or, for late events, a moment before it; its
//! payload is small or, now and then, large. One reader with an exact clock fetches the
//! whole claimed window several times a second until the last event is older than the
//! claimed retention; optionally a second reader follows the log as DS suggests
//! (`fetch(first = lastSeen)`). The harness keeps every put with its times and outcome and
//! every fetch with what it returned; [`super::check`] judges them.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use mcsim::memcache::{McError, Memcache};
use mcsim::{Client, Failure, Sim, Skew, VirtualTime};

use crate::arrivals::{Traffic, hash3, unit};
use crate::eventlog::check;
use crate::eventlog::codec::Event;
use crate::eventlog::recipe::{EventLog, EventLogVariant, PutError};
use crate::eventlog::record::{Fetch, Ghost, Outcome, Put};

/// Parameters of the event-log workload.
#[derive(Debug, Clone, PartialEq)]
pub struct EventLogParams {
    /// The recipe.
    pub variant: EventLogVariant,
    /// `timeChunk`, seconds.
    pub chunk_s: u32,
    /// `numChunks`.
    pub chunks: u32,
    /// Keys a chunk may spill into (`chunk-keys`).
    pub parts: u32,
    /// Full turns of the ring with traffic.
    pub cycles: u32,
    /// When events are put.
    pub traffic: Traffic,
    /// Payload bytes of an ordinary event.
    pub event_bytes: u32,
    /// Every how many events (on average) one is large (0: none).
    pub large_every: u32,
    /// Payload bytes of a large event.
    pub large_bytes: u32,
    /// Every how many events (on average) one is late (0: none).
    pub late_every: u32,
    /// A late event's time lies up to this long before its put.
    pub late: Duration,
    /// Time between the reader's fetches.
    pub fetch_every: Duration,
    /// Also run a reader that follows the log with `fetch(first = lastSeen)`.
    pub tail_reader: bool,
    /// A put still running after this long is stuck (`eventlog.bytes`).
    pub put_deadline: Duration,
    /// Clock skew per writer.
    pub skews: Vec<Skew>,
}

/// Registers the event-log workload.
pub fn setup(p: &EventLogParams, clients: usize, sim: &mut Sim) {
    let ghost: Rc<RefCell<Ghost>> = Rc::default();
    {
        // Hashed field by field: the record grows with every put and fetch, and the
        // explorer fingerprints it at every choice point.
        let g = ghost.clone();
        sim.ghost(move |h| std::hash::Hash::hash(&*g.borrow(), h));
    }
    let clock: Rc<RefCell<Option<Client>>> = Rc::default();
    let log = EventLog::new("events", p.chunk_s, p.chunks, p.parts, p.variant);
    let cycle = Duration::from_secs(u64::from(p.chunk_s) * u64::from(p.chunks.max(2)));
    let start = VirtualTime::from_secs(1);
    let end = start + cycle * p.cycles.max(1);
    for c in 0..clients {
        let (ghost, p, log) = (ghost.clone(), p.clone(), log.clone());
        let skew = p.skews.get(c).copied().unwrap_or_default();
        sim.client(skew, move |mc| async move {
            // A first look at the log's current chunk; when it executes seeds the schedule.
            match mc.get(&log.key(0, 0)).await {
                Ok(_) | Err(McError::Transport(_)) => {}
                Err(e) => return Err(e),
            }
            let salt = p.traffic.salt(c, mc.global_now().micros());
            // The arrivals drawn from it decide the client's future: its state.
            mc.remember(salt);
            let times = p.traffic.times(c, clients, salt, start, end);
            for (i, t) in times.into_iter().enumerate() {
                mc.sleep(t.since(mc.global_now())).await;
                let h = |tag: u64| unit(hash3(salt, i as u64, tag));
                let pick = |every: u32, tag: u64| every > 0 && h(tag) * f64::from(every) < 1.0;
                let late = if pick(p.late_every, 1) {
                    (p.late.as_millis() as f64 * h(2)) as u64
                } else {
                    0
                };
                let size = if pick(p.large_every, 3) {
                    p.large_bytes
                } else {
                    p.event_bytes
                };
                let event = Event::new(
                    mc.now().millis().saturating_sub(late),
                    c as u32,
                    i as u32,
                    size as usize,
                );
                let index = {
                    let mut g = ghost.borrow_mut();
                    g.puts.push(Put {
                        id: event.id(),
                        when_ms: event.when_ms,
                        bytes: event.serialize().len(),
                        started: mc.global_now(),
                        ended: None,
                        outcome: Outcome::Running,
                    });
                    g.puts.len() - 1
                };
                let outcome = match log.put(&mc, &event).await {
                    Ok(()) => Outcome::Stored,
                    Err(PutError::Full) => Outcome::Refused("log full".into()),
                    Err(PutError::Memcache(McError::Transport(_))) => Outcome::Unknown,
                    // DS lets memcached's refusal (SERVER_ERROR object too large) reach
                    // the caller; the application logs it and carries on.
                    Err(PutError::Memcache(e @ McError::Server(_))) => {
                        Outcome::Refused(e.to_string())
                    }
                    Err(PutError::Memcache(e)) => return Err(e),
                };
                let mut g = ghost.borrow_mut();
                g.puts[index].ended = Some(mc.global_now());
                g.puts[index].outcome = outcome;
            }
            Ok(())
        });
    }
    // The reader: fetches the whole claimed window until the last event has aged out.
    let retention = Duration::from_millis(log.capacity_ms());
    let chunk = Duration::from_secs(u64::from(p.chunk_s));
    let stop = end + retention + chunk;
    let (g, l, every, clk) = (ghost.clone(), log.clone(), p.fetch_every, clock.clone());
    sim.client(Skew::default(), move |mc| async move {
        *clk.borrow_mut() = Some(mc.clone());
        let mut t = start;
        while t < stop {
            mc.sleep(t.since(mc.global_now())).await;
            let at = mc.global_now();
            match l.fetch(&mc, None, None).await {
                Ok(f) => g.borrow_mut().fetches.push(record(at, f, false)),
                Err(McError::Transport(_)) => {}
                Err(e) => return Err(e),
            }
            t += every.max(Duration::from_millis(1));
        }
        Ok(())
    });
    if p.tail_reader {
        let (g, l, every) = (ghost.clone(), log.clone(), p.fetch_every);
        sim.client(Skew::default(), move |mc| async move {
            let mut last_seen: Option<u64> = None;
            let mut t = start;
            while t < stop {
                mc.sleep(t.since(mc.global_now())).await;
                let at = mc.global_now();
                match l.fetch(&mc, last_seen, None).await {
                    Ok(f) => {
                        if let Some(m) = f.events.iter().map(|e| e.when_ms).max() {
                            last_seen = Some(last_seen.map_or(m, |s| s.max(m)));
                        }
                        g.borrow_mut().fetches.push(record(at, f, true));
                    }
                    Err(McError::Transport(_)) => {}
                    Err(e) => return Err(e),
                }
                t += every.max(Duration::from_millis(1));
            }
            Ok(())
        });
    }
    let (g, deadline) = (ghost.clone(), p.put_deadline);
    sim.always("eventlog.bytes", move || {
        let Some(now) = clock.borrow().as_ref().map(|c| c.global_now()) else {
            return Ok(());
        };
        let g = g.borrow();
        let stuck = g
            .puts
            .iter()
            .find(|p| p.outcome == Outcome::Running && now.since(p.started) > deadline);
        match stuck {
            None => Ok(()),
            Some(p) => Err(Failure::new(format!(
                "put of event c{}#{} ({} bytes, time {} ms) started at t={} is still not \
                 stored {:.3} s later: its chunk refuses the append and the recipe keeps \
                 retrying append and add",
                p.id.0,
                p.id.1,
                p.bytes,
                p.when_ms,
                p.started,
                now.since(p.started).as_secs_f64()
            ))
            .with("event_bytes", p.bytes as i64)
            .with("stuck_ms", now.since(p.started).as_millis() as i64)),
        }
    });
    check::register(sim, ghost, log.capacity_ms(), chunk);
}

fn record(at: VirtualTime, f: crate::eventlog::recipe::Fetched, tail: bool) -> Fetch {
    Fetch {
        at,
        first: f.first,
        last: f.last,
        events: f.events.iter().map(|e| (e.id(), e.when_ms)).collect(),
        tail,
    }
}
