//! The counter workload: each client increments a number of times (retrying after a
//! timeout, as a real client would) and sometimes reads; the harness records completed
//! increments and a history for the linearizability check.

use std::cell::Cell;
use std::hash::Hasher;
use std::rc::Rc;
use std::time::Duration;

use mcsim::history::History;
use mcsim::lin::{self, CounterOp, CounterSpec};
use mcsim::memcache::{McError, Memcache};
use mcsim::{Failure, Sim, Skew};

use crate::counter::recipe::{Counter, CounterVariant};

/// Parameters of the counter workload.
#[derive(Debug, Clone, PartialEq)]
pub struct CounterParams {
    /// The recipe.
    pub variant: CounterVariant,
    /// Increments per client.
    pub increments: u32,
    /// Reads per client, interleaved with the increments.
    pub reads: u32,
    /// Pause between a client's operations.
    pub think: Duration,
    /// Retries of an increment after a timeout.
    pub retries: u32,
    /// Clock skew per client.
    pub skews: Vec<Skew>,
}

/// Registers the counter workload.
pub fn setup(p: &CounterParams, clients: usize, sim: &mut Sim) {
    let completed: Rc<Cell<u64>> = Rc::default();
    // Increments given up after a timeout: the server may or may not have applied them.
    let unknown: Rc<Cell<u64>> = Rc::default();
    let store: Rc<Cell<u64>> = Rc::default();
    let history: History<CounterOp, Option<u64>> = History::new();
    let (ghost, recorded, durable) = (completed.clone(), history.clone(), store.clone());
    let given_up = unknown.clone();
    sim.ghost(move |h| {
        h.write_u64(ghost.get());
        h.write_u64(given_up.get());
        h.write_u64(durable.get());
        recorded.fingerprint(h);
    });
    for c in 0..clients {
        let (completed, store, history, p) =
            (completed.clone(), store.clone(), history.clone(), p.clone());
        let unknown = unknown.clone();
        let skew = p.skews.get(c).copied().unwrap_or_default();
        sim.client(skew, move |mc| async move {
            let counter = Counter::new("views", p.variant, store);
            // Reads are spread evenly among the increments.
            let every = (p.increments / p.reads.max(1)).max(1);
            let mut reads_done = 0;
            for i in 0..p.increments {
                let id = history.invoke(c, "views", CounterOp::Add(1));
                let mut attempt = 0;
                loop {
                    match counter.increment(&mc, 1).await {
                        Ok(()) => {
                            completed.set(completed.get() + 1);
                            history.complete(id, None);
                            break;
                        }
                        Err(McError::Transport(_)) if attempt < p.retries => attempt += 1,
                        // Gave up: the increment's outcome stays unknown.
                        Err(McError::Transport(_)) => {
                            unknown.set(unknown.get() + 1);
                            break;
                        }
                        Err(e) => return Err(e),
                    }
                }
                if reads_done < p.reads && (i + 1) % every == 0 {
                    reads_done += 1;
                    let id = history.invoke(c, "views", CounterOp::Read);
                    match counter.value(&mc).await {
                        Ok(v) => history.complete(id, Some(v)),
                        Err(McError::Transport(_)) => {}
                        Err(e) => return Err(e),
                    }
                }
                if !p.think.is_zero() {
                    mc.sleep(p.think).await;
                }
            }
            Ok(())
        });
    }
    let (done, key) = (
        completed.clone(),
        Counter::new("views", p.variant, store).key().clone(),
    );
    sim.at_end("counter.no_lost_increments", move |view| {
        let value = view.peek(&key).and_then(|v| v.as_u64()).unwrap_or(0);
        let expected = done.get();
        view.metric("counter.value", value as f64);
        view.metric("counter.completed", expected as f64);
        view.metric("counter.lost", expected.saturating_sub(value) as f64);
        view.metric("counter.extra", value.saturating_sub(expected) as f64);
        if value < expected {
            return Err(Failure::new(format!(
                "counter reads {value} after {expected} completed increments: {} lost",
                expected - value
            ))
            .with("value", value as i64)
            .with("completed", expected as i64)
            .with("lost", (expected - value) as i64));
        }
        Ok(())
    });
    let (done, key) = (
        completed,
        Counter::new("views", p.variant, Rc::default())
            .key()
            .clone(),
    );
    sim.at_end("counter.no_extra_increments", move |view| {
        let value = view.peek(&key).and_then(|v| v.as_u64()).unwrap_or(0);
        let expected = done.get();
        // A given-up increment may have been applied; only more than those is extra.
        let unknown = unknown.get();
        if value > expected + unknown {
            let given_up = match unknown {
                0 => String::new(),
                n => format!(" and {n} given up"),
            };
            return Err(Failure::new(format!(
                "counter reads {value} after {expected} completed increments{given_up}: {} extra",
                value - expected - unknown
            ))
            .with("value", value as i64)
            .with("completed", expected as i64)
            .with("given_up", unknown as i64)
            .with("extra", (value - expected - unknown) as i64));
        }
        Ok(())
    });
    sim.at_end("counter.linearizable", move |_| {
        history
            .with_entries(|h| lin::check(&CounterSpec, h))
            .map_err(|e| {
                Failure::new(format!(
                    "reads of {} fit no order of the increments; stuck at: {}",
                    e.object,
                    e.stuck.first().cloned().unwrap_or_default()
                ))
            })
    });
}
