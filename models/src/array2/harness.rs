//! The append-mostly array workload: every client appends its own distinct elements; at
//! quiescence the harness compares the array with the appends that completed.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use mcsim::memcache::{McError, Memcache};
use mcsim::{Failure, Sim, Skew};

use crate::array2::recipe::{Array2, Array2Variant, decode_ints};

/// Parameters of the append-mostly array workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Array2Params {
    /// The recipe.
    pub variant: Array2Variant,
    /// Elements each client appends.
    pub elements: u32,
    /// Retries of an append after a timeout.
    pub retries: u32,
    /// Pause between a client's appends.
    pub think: Duration,
    /// Clock skew per client.
    pub skews: Vec<Skew>,
}

/// The element client `c` appends `i`-th: distinct over the run.
pub fn element(c: usize, i: u32) -> u64 {
    c as u64 * 1_000_000 + u64::from(i)
}

/// A client's read of the array through the recipe ([`Array2::fetch`]): the elements
/// whose `add` had completed when the read was issued, and what it returned.
#[derive(Debug, Clone)]
struct Read {
    client: usize,
    completed_before: Vec<u64>,
    seen: Vec<u64>,
}

/// Registers the workload and the invariant `array.no_lost_elements`: every element
/// whose `add` completed is in every array a client fetches afterwards, and in the array
/// the server holds at the end.
pub fn setup(p: &Array2Params, clients: usize, sim: &mut Sim) {
    // Elements whose `add` returned successfully.
    let completed: Rc<RefCell<Vec<u64>>> = Rc::default();
    let reads: Rc<RefCell<Vec<Read>>> = Rc::default();
    {
        let (c0, r0) = (completed.clone(), reads.clone());
        sim.ghost(move |h| crate::ghost::by_debug(h, &(&*c0.borrow(), &*r0.borrow())));
    }
    for c in 0..clients {
        let (completed, reads, p) = (completed.clone(), reads.clone(), p.clone());
        let skew = p.skews.get(c).copied().unwrap_or_default();
        sim.client(skew, move |mc| async move {
            let array = Array2::new("log", p.variant);
            for i in 0..p.elements {
                let e = element(c, i);
                let mut attempt = 0;
                loop {
                    match array.add(&mc, e).await {
                        Ok(()) => {
                            completed.borrow_mut().push(e);
                            break;
                        }
                        Err(McError::Transport(_)) if attempt < p.retries => attempt += 1,
                        Err(McError::Transport(_)) => break,
                        Err(e) => return Err(e),
                    }
                }
                if !p.think.is_zero() {
                    mc.sleep(p.think).await;
                }
            }
            // Read the array back the way its users do.
            for _ in 0..=p.retries {
                let completed_before = completed.borrow().clone();
                // Judged with the read after the fetch: the client's state until then.
                mc.remember(&completed_before);
                match array.fetch(&mc).await {
                    Ok(seen) => {
                        reads.borrow_mut().push(Read {
                            client: c,
                            completed_before,
                            seen,
                        });
                        break;
                    }
                    Err(McError::Transport(_)) => continue,
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        });
    }
    let key = Array2::new("log", p.variant).key().clone();
    sim.at_end("array.no_lost_elements", move |view| {
        let value = view.peek(&key);
        let stored = value
            .as_ref()
            .map(|v| decode_ints(&v.data))
            .unwrap_or_default();
        let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
        for e in &stored {
            *counts.entry(*e).or_default() += 1;
        }
        let completed = completed.borrow();
        let lost: Vec<u64> = completed
            .iter()
            .copied()
            .filter(|e| !counts.contains_key(e))
            .collect();
        let duplicated: usize = counts.values().map(|c| c - 1).sum();
        view.metric("array2.completed", completed.len() as f64);
        view.metric("array2.elements", stored.len() as f64);
        view.metric("array2.lost", lost.len() as f64);
        view.metric("array2.duplicated", duplicated as f64);
        view.metric(
            "array2.bytes",
            value.as_ref().map_or(0, |v| v.data.len()) as f64,
        );
        // What the clients read through the recipe.
        for r in reads.borrow().iter() {
            let missing: Vec<u64> = r
                .completed_before
                .iter()
                .copied()
                .filter(|e| !r.seen.contains(e))
                .collect();
            if let Some(first) = missing.first() {
                return Err(Failure::new(format!(
                    "c{} fetched the array and got {} elements, missing {} of the {} appends \
                     completed before it asked (first: {first})",
                    r.client,
                    r.seen.len(),
                    missing.len(),
                    r.completed_before.len()
                ))
                .with("completed", r.completed_before.len() as i64)
                .with("fetched", r.seen.len() as i64)
                .with("lost", missing.len() as i64));
            }
        }
        if lost.is_empty() {
            return Ok(());
        }
        let shown: Vec<String> = lost.iter().take(8).map(u64::to_string).collect();
        Err(Failure::new(format!(
            "{} of {} completed appends are missing{} (first: {})",
            lost.len(),
            completed.len(),
            if value.is_none() {
                ": the array key does not exist"
            } else {
                ""
            },
            shown.join(", ")
        ))
        .with("completed", completed.len() as i64)
        .with("stored", stored.len() as i64)
        .with("lost", lost.len() as i64)
        .with("key_exists", i64::from(value.is_some())))
    });
}
