//! The event log's invariants over what the harness saw, and its metrics.
//!
//! - `eventlog.window`: a fetch returns only events that were put, each once, with times in
//!   its own clamped `[first, last]` (so none of a previous turn of the ring).
//! - `eventlog.bytes`: a stored event is never missing from its chunk while an event stored
//!   before it in the same chunk is still there (a silent drop), and no put stays stuck on
//!   a full chunk (checked at every step by the harness).
//! - `eventlog.capacity`: every fetch returns every event whose put completed before the
//!   fetch began and whose time lies in the fetch's window, which DS clamps to the claimed
//!   retention `(numChunks - 1) * timeChunk`.
//!
//! Metrics, recorded in every execution: `eventlog.retention_claimed_s`,
//! `eventlog.retention_measured_s` (the youngest age, by the reader's clock, at which a
//! fetch missed an event it should have returned; the claim when none was missed),
//! `eventlog.missing` (fetch/event pairs missed), `eventlog.events_missed`,
//! `eventlog.events`, `eventlog.refused`, `eventlog.longest_put_ms`, and for a tail
//! reader `eventlog.tail_missed` and `eventlog.tail_repeated`.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::time::Duration;

use mcsim::{EndView, Failure, Sim};

use crate::eventlog::record::{Ghost, Outcome, puts_by_id};

#[derive(Debug, Default)]
struct Analysis {
    window: Option<Failure>,
    bytes: Option<Failure>,
    capacity: Option<Failure>,
}

/// Registers the end checks over `ghost`.
pub fn register(sim: &mut Sim, ghost: Rc<RefCell<Ghost>>, claimed_ms: u64, chunk: Duration) {
    let result: Rc<RefCell<Analysis>> = Rc::default();
    let r = result.clone();
    sim.at_end("eventlog.window", move |view| {
        *r.borrow_mut() = analyse(&ghost.borrow(), claimed_ms, chunk, view);
        r.borrow_mut().window.take().map_or(Ok(()), Err)
    });
    let r = result.clone();
    sim.at_end("eventlog.bytes", move |_| {
        r.borrow_mut().bytes.take().map_or(Ok(()), Err)
    });
    sim.at_end("eventlog.capacity", move |_| {
        result.borrow_mut().capacity.take().map_or(Ok(()), Err)
    });
}

fn analyse(g: &Ghost, claimed_ms: u64, chunk: Duration, view: &EndView<'_>) -> Analysis {
    let mut out = Analysis::default();
    let puts = puts_by_id(g);
    let chunk_ms = chunk.as_millis() as u64;
    view.metric("eventlog.events", g.puts.len() as f64);
    let refused = g
        .puts
        .iter()
        .filter(|p| matches!(p.outcome, Outcome::Refused(_)))
        .count();
    view.metric("eventlog.refused", refused as f64);
    let longest = g
        .puts
        .iter()
        .filter_map(|p| p.ended.map(|e| e.since(p.started)))
        .max()
        .unwrap_or_default();
    view.metric("eventlog.longest_put_ms", longest.as_secs_f64() * 1000.0);
    view.metric("eventlog.retention_claimed_s", claimed_ms as f64 / 1000.0);

    // eventlog.window
    for f in &g.fetches {
        let mut seen = BTreeSet::new();
        for &(id, when) in &f.events {
            let problem = if when < f.first || when > f.last {
                Some("outside its window")
            } else if puts.get(&id).is_none_or(|p| p.when_ms != when) {
                Some("that was never put")
            } else if !seen.insert(id) {
                Some("twice")
            } else {
                None
            };
            if let (Some(problem), None) = (problem, &out.window) {
                out.window = Some(
                    Failure::new(format!(
                        "fetch at t={} with window [{}, {}] ms returned event c{}#{} (time {} \
                         ms) {problem}",
                        f.at, f.first, f.last, id.0, id.1, when
                    ))
                    .with("event_time_ms", when as i64)
                    .with("first_ms", f.first as i64)
                    .with("last_ms", f.last as i64),
                );
            }
        }
    }

    // eventlog.capacity and the silent drops of eventlog.bytes
    let stored: Vec<_> = g
        .puts
        .iter()
        .filter(|p| p.outcome == Outcome::Stored)
        .collect();
    let mut missing = 0u64;
    let mut missed: BTreeSet<(u32, u32)> = BTreeSet::new();
    let mut youngest_miss: Option<u64> = None;
    let mut first_miss = None;
    for f in &g.fetches {
        let ids: BTreeSet<(u32, u32)> = f.events.iter().map(|e| e.0).collect();
        let mut chunks_seen: BTreeMap<u64, Vec<(u32, u32)>> = BTreeMap::new();
        for (id, when) in &f.events {
            chunks_seen.entry(when / chunk_ms).or_default().push(*id);
        }
        for p in &stored {
            let ended = p.ended.expect("stored puts ended");
            if ended > f.at || p.when_ms < f.first || p.when_ms > f.last || ids.contains(&p.id) {
                continue;
            }
            missing += 1;
            missed.insert(p.id);
            let age = f.last - p.when_ms;
            if !f.tail {
                youngest_miss = Some(youngest_miss.map_or(age, |y| y.min(age)));
            }
            if first_miss.is_none() {
                first_miss = Some((f, *p, age));
            }
            // A silent drop: an event stored earlier in the same chunk is still there.
            let earlier = chunks_seen.get(&(p.when_ms / chunk_ms)).and_then(|v| {
                v.iter()
                    .find(|q| puts.get(q).and_then(|q| q.ended).is_some_and(|e| e < ended))
            });
            if let (Some(q), None) = (earlier, &out.bytes) {
                out.bytes = Some(
                    Failure::new(format!(
                        "event c{}#{} ({} bytes) was stored at t={} but the fetch at t={} \
                         misses it while returning c{}#{}, stored earlier in the same chunk",
                        p.id.0, p.id.1, p.bytes, ended, f.at, q.0, q.1
                    ))
                    .with("event_bytes", p.bytes as i64),
                );
            }
        }
    }
    let measured = youngest_miss.unwrap_or(claimed_ms);
    view.metric("eventlog.retention_measured_s", measured as f64 / 1000.0);
    view.metric("eventlog.missing", missing as f64);
    view.metric("eventlog.events_missed", missed.len() as f64);
    if let Some((f, p, age)) = first_miss {
        out.capacity = Some(
            Failure::new(format!(
                "fetch at t={} (window [{}, {}] ms) misses event c{}#{} of time {} ms, stored \
                 at t={}: {:.3} s old, within the claimed {:.3} s; {} events missed in all, \
                 the youngest at {:.3} s",
                f.at,
                f.first,
                f.last,
                p.id.0,
                p.id.1,
                p.when_ms,
                p.ended.expect("stored"),
                age as f64 / 1000.0,
                claimed_ms as f64 / 1000.0,
                missed.len(),
                measured as f64 / 1000.0
            ))
            .with("age_ms", age as i64)
            .with("claimed_ms", claimed_ms as i64)
            .with("retention_measured_ms", measured as i64)
            .with("events_missed", missed.len() as i64),
        );
    }

    // DS's way of following the log: fetch(first = lastSeen).
    let tail: Vec<_> = g.fetches.iter().filter(|f| f.tail).collect();
    if let Some(last_tail) = tail.last() {
        let mut times: BTreeMap<(u32, u32), u32> = BTreeMap::new();
        for f in &tail {
            for (id, _) in &f.events {
                *times.entry(*id).or_default() += 1;
            }
        }
        let never = stored
            .iter()
            .filter(|p| p.ended.is_some_and(|e| e < last_tail.at) && !times.contains_key(&p.id))
            .count();
        view.metric("eventlog.tail_missed", never as f64);
        let repeated = times.values().filter(|n| **n > 1).count();
        view.metric("eventlog.tail_repeated", repeated as f64);
    }
    out
}
