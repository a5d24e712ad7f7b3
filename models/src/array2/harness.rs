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

/// Registers the workload and the invariant `array.no_lost_elements`.
pub fn setup(p: &Array2Params, clients: usize, sim: &mut Sim) {
    // Elements whose `add` returned successfully.
    let completed: Rc<RefCell<Vec<u64>>> = Rc::default();
    for c in 0..clients {
        let (completed, p) = (completed.clone(), p.clone());
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
