//! The counter recipes under loom, and the exhaustive execution counts of each.

#[allow(unused_imports)]
use super::*;

// ---- counter ---------------------------------------------------------------------------

/// One increment per client; at the end the value must equal the completed increments.
pub(crate) fn counter_model(
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

pub(crate) fn counter_case(variant: &str, v: CounterVariant, n: usize, expect_violation: bool) {
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
pub(crate) fn counter_get_set_2() {
    counter_case("get-set", CounterVariant::GetSet, 2, true);
}

#[test]
pub(crate) fn counter_get_set_3() {
    counter_case("get-set", CounterVariant::GetSet, 3, true);
}

#[test]
pub(crate) fn counter_incr_add_3() {
    counter_case("incr-add", CounterVariant::IncrAdd, 3, false);
}

#[test]
pub(crate) fn counter_incr_set_3() {
    counter_case("incr-set", CounterVariant::IncrSet, 3, true);
}

#[test]
pub(crate) fn counter_incr_add_db_3() {
    counter_case("incr-add-db", CounterVariant::IncrAddDb, 3, false);
}

/// Exhausts the 3-client get/set and incr/add counters without stopping at a violation,
/// for the benchmark table: loom's executions and time next to `mcsim explore --all`'s.
#[test]
pub(crate) fn exhaust_counters() {
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
