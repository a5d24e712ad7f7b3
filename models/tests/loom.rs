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

use mcsim::loom::{LoomClient, LoomServer};
use mcsim::memcache::Memcache;
use mcsim::run::{ExploreOptions, explore};
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
const VIOLATION: &str = "invariant violated";

/// What a model does when an invariant fails.
#[derive(Clone)]
enum Sink {
    /// Panic: loom stops at the first violating execution.
    Panic,
    /// Count the execution as violating and go on: loom exhausts the model.
    Count(std::sync::Arc<StdAtomicUsize>),
}

impl Sink {
    fn violated(&self, what: String) {
        match self {
            Sink::Panic => panic!("{VIOLATION}: {what}"),
            Sink::Count(n) => {
                n.fetch_add(1, Relaxed);
            }
        }
    }
}

fn quiet_violations() {
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
struct LoomRun {
    violated: bool,
    /// The panic message of the violating execution.
    message: Option<String>,
    executions: usize,
    elapsed: Duration,
}

/// Runs a model under loom, without a preemption bound, stopping at the first panic.
fn run_loom(model: impl Fn() + Sync + Send + 'static) -> LoomRun {
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
struct ExploreRun {
    violated: bool,
    executions: u64,
    pruned: u64,
    complete: bool,
    elapsed: Duration,
}

fn scenario(recipe: &str, variant: &str, clients: usize, params: &str) -> Scenario {
    let text = format!(
        "recipe = \"{recipe}\"\nvariant = \"{variant}\"\nclients = {clients}\n\
         [params]\n{params}\n[timing]\nlatency_us = [100, 100000]\n\
         [expect]\nverdict = \"pass\"\n"
    );
    Scenario::parse(Path::new("loom-xcheck.toml"), &text, RECIPES)
        .unwrap_or_else(|e| panic!("bad scenario: {e}"))
}

fn run_explore(scenario: &Scenario, reduce: bool, keep_going: bool) -> ExploreRun {
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

fn verdict(violated: bool) -> &'static str {
    if violated { "violation" } else { "pass" }
}

/// Runs both checkers on one case and asserts they agree with each other and with what
/// the recipe is known to do.
fn agree(
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
fn clients<T, F, Fut>(server: &LoomServer, n: usize, body: F) -> Vec<T>
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

// ---- lock ------------------------------------------------------------------------------

/// The lock workload of `models/src/lock/harness.rs` with the scenarios' parameters (TTL
/// 10 s, hold 50 ms, backoff 10 ms), one round, and a client giving up after `attempts`
/// failed tries. The bound keeps loom finite: loom has no notion of the holder's 50 ms
/// being up, so unbounded waiters may spin while it never runs again, an infinite family
/// of schedules (their backoffs would also age the shared logical clock past the TTL,
/// where mcsim's timed executions cannot go). With the bound, every client's calls and
/// sleeps add up to far less than the TTL on both sides, and both check the recipe's
/// logic over every order of its calls.
fn lock_model(variant: LockVariant, n: usize, attempts: u32) -> impl Fn() + Sync + Send + 'static {
    move || {
        let server = LoomServer::with_defaults();
        // Ghost state: clients inside the critical section. Std atomics, not loom's: the
        // harness watching the clients is not a step of the recipe for loom to permute
        // (loom runs one thread at a time, so they need no synchronization of their own).
        let inside = std::sync::Arc::new(StdAtomicUsize::new(0));
        clients(&server, n, move |c, mc| {
            let inside = inside.clone();
            async move {
                let lock = Lock::new("x", LOCK_TTL_S, variant, c);
                let mut failed = 0;
                while !lock.try_lock(&mc).await.expect("try_lock") {
                    failed += 1;
                    if failed == attempts {
                        return;
                    }
                    mc.sleep(Duration::from_millis(10)).await;
                }
                let before = inside.fetch_add(1, Relaxed);
                if before + 1 > 1 {
                    Sink::Panic.violated(format!(
                        "lock.exclusion: c{c} entered with {before} inside at {:?}",
                        mc.now()
                    ));
                }
                mc.sleep(Duration::from_millis(50)).await;
                inside.fetch_sub(1, Relaxed);
                lock.unlock(&mc).await.expect("unlock");
            }
        });
    }
}

/// The lock key's TTL in the lock cases, seconds (the scenarios' default).
const LOCK_TTL_S: u32 = 10;

fn lock_case(variant: &str, v: LockVariant, n: usize, attempts: u32, expect_violation: bool) {
    agree(
        "lock",
        variant,
        n,
        &format!("rounds = 1\nattempts = {attempts}"),
        expect_violation,
        lock_model(v, n, attempts),
    );
}

#[test]
fn lock_add_2() {
    lock_case("add", LockVariant::Add, 2, 3, false);
}

#[test]
fn lock_add_3() {
    lock_case("add", LockVariant::Add, 3, 2, false);
}

#[test]
fn lock_token_2() {
    lock_case("token", LockVariant::Token, 2, 3, false);
}

#[test]
fn lock_token_3() {
    lock_case("token", LockVariant::Token, 3, 2, false);
}

#[test]
fn lock_get_set_2() {
    lock_case("get-set", LockVariant::GetSet, 2, 3, true);
}

#[test]
fn lock_get_set_3() {
    lock_case("get-set", LockVariant::GetSet, 3, 2, true);
}

// ---- counter ---------------------------------------------------------------------------

/// One increment per client; at the end the value must equal the completed increments.
fn counter_model(
    variant: CounterVariant,
    n: usize,
    sink: Sink,
) -> impl Fn() + Sync + Send + 'static {
    move || {
        let server = LoomServer::with_defaults();
        let done: u64 = clients(&server, n, move |_, mc| async move {
            // The backing store holds 0, as in the scenarios.
            let counter = Counter::new("views", variant, Rc::new(Cell::new(0)));
            counter.increment(&mc, 1).await.expect("increment");
            1
        })
        .into_iter()
        .sum();
        let counter = Counter::new("views", variant, Rc::default());
        let value = loom::future::block_on(counter.value(&server.client())).expect("value");
        if value != done {
            sink.violated(format!(
                "counter.no_lost_increments: counter reads {value} after {done} increments"
            ));
        }
    }
}

fn counter_case(variant: &str, v: CounterVariant, n: usize, expect_violation: bool) {
    agree(
        "counter",
        variant,
        n,
        "increments = 1",
        expect_violation,
        counter_model(v, n, Sink::Panic),
    );
}

#[test]
fn counter_get_set_2() {
    counter_case("get-set", CounterVariant::GetSet, 2, true);
}

#[test]
fn counter_get_set_3() {
    counter_case("get-set", CounterVariant::GetSet, 3, true);
}

#[test]
fn counter_incr_add_3() {
    counter_case("incr-add", CounterVariant::IncrAdd, 3, false);
}

#[test]
fn counter_incr_set_3() {
    counter_case("incr-set", CounterVariant::IncrSet, 3, true);
}

#[test]
fn counter_incr_add_db_3() {
    counter_case("incr-add-db", CounterVariant::IncrAddDb, 3, false);
}

/// Exhausts the 3-client get/set and incr/add counters without stopping at a violation,
/// for the benchmark table: loom's executions and time next to `mcsim explore --all`'s.
#[test]
fn exhaust_counters() {
    for (name, variant) in [
        ("get-set", CounterVariant::GetSet),
        ("incr-add", CounterVariant::IncrAdd),
    ] {
        let violating = std::sync::Arc::new(StdAtomicUsize::new(0));
        let loom = run_loom(counter_model(variant, 3, Sink::Count(violating.clone())));
        assert!(
            !loom.violated,
            "counter/{name}: the counting model panicked"
        );
        let s = scenario("counter", name, 3, "increments = 1");
        let reduced = run_explore(&s, true, true);
        let full = run_explore(&s, false, true);
        println!(
            "exhaust counter/{name} clients=3 loom_executions={} loom_violating={} \
             loom_ms={:.3}",
            loom.executions,
            violating.load(Relaxed),
            loom.elapsed.as_secs_f64() * 1e3
        );
        assert!(reduced.complete && full.complete);
        assert_eq!(
            violating.load(Relaxed) > 0,
            reduced.violated,
            "counter/{name}: loom and explore disagree"
        );
        assert_eq!(reduced.violated, full.violated);
    }
}

// ---- set -------------------------------------------------------------------------------

/// The set workload: client `c` adds `m{c}_{i}` at even `i` and removes it at `i + 1`,
/// reading every `read_every` modifications. A client's reads must reflect its own
/// completed modifications (nobody else touches its members), and at the end the index
/// must hold exactly the members whose last modification was an add.
fn set_model(
    variant: SetVariant,
    n: usize,
    ops: u32,
    read_every: u32,
    threshold: usize,
) -> impl Fn() + Sync + Send + 'static {
    move || {
        let server = LoomServer::with_defaults();
        clients(&server, n, move |c, mc| async move {
            let index = SetIndex::new(INDEX, variant, threshold);
            for i in 0..ops {
                let member = format!("m{c}_{}", i - i % 2);
                if i % 2 == 0 {
                    index.add(&mc, &[&member]).await.expect("add");
                } else {
                    index.remove(&mc, &[&member]).await.expect("remove");
                }
                if read_every > 0 && (i + 1) % read_every == 0 {
                    let items = index.items(&mc).await.expect("items");
                    if items.contains(&member) != (i % 2 == 0) {
                        Sink::Panic.violated(format!(
                            "set.linearizable: c{c} read {items:?} right after its own \
                             modification of {member}"
                        ));
                    }
                }
            }
        });
        let index = SetIndex::new(INDEX, variant, threshold);
        let value = loom::future::block_on(server.client().get(index.key())).expect("get");
        let members = value
            .map(|v| decode(&v.data).expect("the index decodes").members)
            .unwrap_or_default();
        let expected: BTreeSet<String> = (0..n)
            .filter(|_| ops % 2 == 1)
            .map(|c| format!("m{c}_{}", ops - 1))
            .collect();
        if members != expected {
            Sink::Panic.violated(format!(
                "set.linearizable: the index holds {members:?}, the clients' last \
                 modifications say {expected:?}"
            ));
        }
    }
}

#[test]
fn set_as_written_2() {
    agree(
        "set",
        "as-written",
        2,
        "ops = 1\nread_every = 0",
        true,
        set_model(SetVariant::AsWritten, 2, 1, 0, 1),
    );
}

#[test]
fn set_retry_2() {
    agree(
        "set",
        "retry",
        2,
        "ops = 2\nread_every = 2",
        false,
        set_model(SetVariant::Retry, 2, 2, 2, 1),
    );
}

#[test]
fn set_compact_set_2() {
    agree(
        "set",
        "compact-set",
        2,
        "ops = 2\nread_every = 2\ndirtiness_threshold = 0",
        true,
        set_model(SetVariant::CompactSet, 2, 2, 2, 0),
    );
}

// ---- read-mostly array -----------------------------------------------------------------

/// Writers only (no readers), one change each: at the end the array holds every appended
/// element not removed, each once.
fn array_model(variant: ArrayVariant, n: usize, changes: u32) -> impl Fn() + Sync + Send + 'static {
    move || {
        let server = LoomServer::with_defaults();
        let array = move |c| Array::new("a", variant, 5, Duration::from_millis(2), c);
        clients(&server, n, move |c, mc| async move {
            let array = array(c);
            for i in 0..changes {
                let add = vec![format!("c{c}.{i}")];
                let delete = match i % 2 {
                    1 => vec![format!("c{c}.{}", i - 1)],
                    _ => Vec::new(),
                };
                array
                    .change(&mc, &add, &delete, Duration::ZERO)
                    .await
                    .expect("change");
            }
        });
        let mut got = loom::future::block_on(array(0).fetch(&server.client())).expect("fetch");
        got.sort();
        let mut expected: Vec<String> = (0..n)
            .flat_map(|c| (0..changes).map(move |i| (c, i)))
            .filter(|&(_, i)| i % 2 == 1 || i + 1 == changes)
            .map(|(c, i)| format!("c{c}.{i}"))
            .collect();
        expected.sort();
        if got != expected {
            Sink::Panic.violated(format!(
                "array.no_lost_updates: the array holds {got:?}, expected {expected:?}"
            ));
        }
    }
}

#[test]
fn array_lock_2() {
    agree(
        "array",
        "lock",
        2,
        "readers = 0\nchanges = 1",
        false,
        array_model(ArrayVariant::Lock, 2, 1),
    );
}

#[test]
fn array_cas_2() {
    agree(
        "array",
        "cas",
        2,
        "readers = 0\nchanges = 1",
        false,
        array_model(ArrayVariant::Cas, 2, 1),
    );
}

// ---- append-mostly array ---------------------------------------------------------------

/// Every element whose `add` returned must be in the array at the end.
fn array2_model(
    variant: Array2Variant,
    n: usize,
    elements: u32,
) -> impl Fn() + Sync + Send + 'static {
    move || {
        let server = LoomServer::with_defaults();
        let completed: Vec<u64> = clients(&server, n, move |c, mc| async move {
            let array = Array2::new("log", variant);
            let mut done = Vec::new();
            for i in 0..elements {
                array.add(&mc, element(c, i)).await.expect("add");
                done.push(element(c, i));
            }
            done
        })
        .into_iter()
        .flatten()
        .collect();
        let got = loom::future::block_on(Array2::new("log", variant).fetch(&server.client()))
            .expect("fetch");
        let lost: Vec<u64> = completed.into_iter().filter(|e| !got.contains(e)).collect();
        if !lost.is_empty() {
            Sink::Panic.violated(format!(
                "array.no_lost_elements: {lost:?} completed but the array holds {got:?}"
            ));
        }
    }
}

#[test]
fn array2_as_written_2() {
    agree(
        "array2",
        "as-written",
        2,
        "elements = 1",
        true,
        array2_model(Array2Variant::AsWritten, 2, 1),
    );
}

#[test]
fn array2_fixed_2() {
    agree(
        "array2",
        "fixed",
        2,
        "elements = 1",
        false,
        array2_model(Array2Variant::Fixed, 2, 1),
    );
}
