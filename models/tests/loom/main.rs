//! The recipes under loom, cross-checked against `mcsim explore`.
//!
//! Each case runs the same recipe code twice: as loom threads over
//! [`mcsim::loom::LoomServer`] (every call atomic at the server, loom exploring every
//! order of calls), and as an `mcsim explore` of the equivalent scenario (a latency window
//! wide enough that every order of calls is feasible, no faults). The two must agree on
//! the verdict: a violation found, or none. Both execution counts are printed, one line
//! per case starting with `xcheck`; the benchmark table reads them, and the lines starting
//! with `exhaust`.
//!
//! Only built with `--cfg loom`: `just loom`.

#![cfg(loom)]

use std::cell::Cell;
use std::collections::BTreeSet;
use std::path::Path;
use std::rc::Rc;
use std::sync::Once;
use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use loom::thread;

use mcsim::exhaustive::{ExploreOptions, explore};
use mcsim::loom::{LoomClient, LoomServer};
use mcsim::memcache::Memcache;
use mcsim::scenario::Scenario;
use mcsim_models::RECIPES;
use mcsim_models::array::{Array, ArrayVariant};
use mcsim_models::array2::{Array2, Array2Variant, element};
use mcsim_models::counter::{Counter, CounterVariant};
use mcsim_models::lock::{Lock, LockVariant};
use mcsim_models::set::encoding::decode;
use mcsim_models::set::{INDEX, SetIndex, SetVariant};

/// Every invariant failure in a model panics with a message starting with this, so the
/// panic hook can keep expected violations quiet.
pub(crate) const VIOLATION: &str = "invariant violated";

/// What a model does when an invariant fails.
#[derive(Clone)]
pub(crate) enum Sink {
    /// Panic: loom stops at the first violating execution.
    Panic,
    /// Count the execution as violating and go on: loom exhausts the model.
    Count(std::sync::Arc<StdAtomicUsize>),
}

impl Sink {
    pub(crate) fn violated(&self, what: String) {
        match self {
            Sink::Panic => panic!("{VIOLATION}: {what}"),
            Sink::Count(n) => {
                n.fetch_add(1, Relaxed);
            }
        }
    }
}

pub(crate) fn quiet_violations() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let text = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("");
            if !text.starts_with(VIOLATION) {
                default(info);
            }
        }));
    });
}

/// What loom did with one model.
pub(crate) struct LoomRun {
    pub(crate) violated: bool,
    /// The panic message of the violating execution.
    pub(crate) message: Option<String>,
    pub(crate) executions: usize,
    pub(crate) elapsed: Duration,
}

/// Runs a model under loom, without a preemption bound, stopping at the first panic.
pub(crate) fn run_loom(model: impl Fn() + Sync + Send + 'static) -> LoomRun {
    quiet_violations();
    let count = std::sync::Arc::new(StdAtomicUsize::new(0));
    let counter = count.clone();
    let start = Instant::now();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let mut builder = loom::model::Builder::new();
        builder.max_branches = 100_000;
        builder.check(move || {
            counter.fetch_add(1, Relaxed);
            model();
        });
    }));
    let message = outcome.as_ref().err().map(|payload| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    });
    LoomRun {
        message,
        violated: outcome.is_err(),
        executions: count.load(Relaxed),
        elapsed: start.elapsed(),
    }
}

/// What `mcsim explore` did with one scenario.
pub(crate) struct ExploreRun {
    pub(crate) violated: bool,
    pub(crate) executions: u64,
    pub(crate) pruned: u64,
    pub(crate) complete: bool,
    pub(crate) elapsed: Duration,
}

pub(crate) fn scenario(recipe: &str, variant: &str, clients: usize, params: &str) -> Scenario {
    let text = format!(
        "recipe = \"{recipe}\"\nvariant = \"{variant}\"\nclients = {clients}\n\
         [params]\n{params}\n[timing]\nlatency_us = [100, 100000]\n\
         [expect]\nverdict = \"pass\"\n"
    );
    Scenario::parse(Path::new("loom-xcheck.toml"), &text, RECIPES)
        .unwrap_or_else(|e| panic!("bad scenario: {e}"))
}

pub(crate) fn run_explore(scenario: &Scenario, reduce: bool, keep_going: bool) -> ExploreRun {
    let options = ExploreOptions {
        reduce,
        keep_going,
        ..ExploreOptions::default()
    };
    let start = Instant::now();
    let report = explore(scenario, &options, &mut |_| true);
    ExploreRun {
        violated: report.failures > 0,
        executions: report.stats.executions,
        pruned: report.stats.pruned,
        complete: report.stats.complete,
        elapsed: start.elapsed(),
    }
}

pub(crate) fn verdict(violated: bool) -> &'static str {
    if violated { "violation" } else { "pass" }
}

/// Runs both checkers on one case and asserts they agree with each other and with what
/// the recipe is known to do.
pub(crate) fn agree(
    recipe: &str,
    variant: &str,
    clients: usize,
    params: &str,
    expect_violation: bool,
    model: impl Fn() + Sync + Send + 'static,
) {
    let s = scenario(recipe, variant, clients, params);
    let reduced = run_explore(&s, true, false);
    let full = run_explore(&s, false, false);
    let loom = run_loom(model);
    println!(
        "xcheck {recipe}/{variant} clients={clients} expect={} loom={} loom_executions={} \
         loom_ms={:.2} explore={} explore_executions={} \
         explore_pruned={} explore_noreduction_executions={} explore_ms={:.2}",
        verdict(expect_violation),
        verdict(loom.violated),
        loom.executions,
        loom.elapsed.as_secs_f64() * 1e3,
        verdict(reduced.violated),
        reduced.executions,
        reduced.pruned,
        full.executions,
        reduced.elapsed.as_secs_f64() * 1e3,
    );
    if let Some(m) = &loom.message {
        println!("  loom: {m}");
    }
    assert!(
        reduced.violated || reduced.complete,
        "explore did not finish {recipe}/{variant}"
    );
    assert_eq!(
        reduced.violated, full.violated,
        "{recipe}/{variant}: explore with and without reduction disagree"
    );
    assert_eq!(
        loom.violated,
        reduced.violated,
        "{recipe}/{variant}: loom says {}, explore says {}",
        verdict(loom.violated),
        verdict(reduced.violated)
    );
    assert_eq!(
        loom.violated,
        expect_violation,
        "{recipe}/{variant}: expected {}",
        verdict(expect_violation)
    );
}

/// Spawns one loom thread per client, each driving the future `body` builds with
/// `block_on`, and joins them in order.
pub(crate) fn clients<T, F, Fut>(server: &LoomServer, n: usize, body: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(usize, LoomClient) -> Fut + Send + Sync + Clone + 'static,
    Fut: Future<Output = T>,
{
    let handles: Vec<_> = (0..n)
        .map(|c| {
            let mc = server.client();
            let body = body.clone();
            thread::spawn(move || loom::future::block_on(body(c, mc)))
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("client thread"))
        .collect()
}

mod arrays;
mod counters;
mod locks;
mod sets;

#[allow(unused_imports)]
use arrays::*;
#[allow(unused_imports)]
use counters::*;
#[allow(unused_imports)]
use locks::*;
#[allow(unused_imports)]
use sets::*;
