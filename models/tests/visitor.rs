//! The visitor counter: the as-written TTL and DS's aligned TTL lose visitors, and the
//! harness says how many per period and how far each key's life was shifted; one key per
//! period is exact at any traffic density and tick phase.

mod support;

use mcsim::scenario::Scenario;
use support::{at_phase_zero, points, quick, violation};

fn point<'a>(ps: &'a [Scenario], label: &str) -> &'a Scenario {
    ps.iter()
        .find(|s| s.point.join(",") == label)
        .unwrap_or_else(|| panic!("no point {label}"))
}

#[test]
fn as_written_loses_the_first_visits_of_a_period_when_traffic_is_sparse() {
    let s = &at_phase_zero(&points("visitor-as-written")[0]);
    let report = quick(s, 0, false);
    let v = violation(&report);
    assert_eq!(v.invariant, "visitor.window_exact");
    assert!(v.faults.is_empty());
    let n = &v.failure.numbers;
    assert!(n["missing"] >= 1 && n["value"] < n["expected"], "{n:?}");
    // The shadow key outlived its cycle by whole seconds (phase 0).
    let shift = report.metrics["visitor.shift_max_seconds"].max;
    assert!(shift >= 1.0 && shift.fract() == 0.0, "shift {shift}");
    assert!(report.metrics["visitor.lost_total"].max >= 1.0);
}

#[test]
fn as_written_sweep_loses_visitors_at_low_density_and_at_any_phase_but_zero() {
    let ps = points("visitor-as-written-sweep");
    assert_eq!(ps.len(), 16);
    // Sparse traffic: first visits come seconds into a period, the key outlives its turn.
    let sparse = quick(point(&ps, "rate_per_s=0.5,phase_ms=0"), 10, true);
    assert!(
        sparse
            .verdicts
            .get("visitor.window_exact")
            .copied()
            .unwrap_or(0)
            > 0
    );
    assert!(sparse.metrics["visitor.shift_seconds"].mean() > 0.5);
    // Dense traffic, ticks on the clients' whole seconds: what DS promises.
    let dense = quick(point(&ps, "rate_per_s=30,phase_ms=0"), 5, true);
    assert_eq!(dense.label(), "pass");
    // Dense traffic, ticks half a second off: each key dies half a second early.
    let off = quick(point(&ps, "rate_per_s=30,phase_ms=500"), 5, true);
    assert_eq!(off.label(), "visitor.window_exact");
    let shift = off.metrics["visitor.shift_seconds"].mean();
    assert!((shift + 0.5).abs() < 0.01, "shift {shift}");
}

#[test]
fn aligned_ttl_is_a_second_too_long_when_the_add_crosses_a_second() {
    let s = &at_phase_zero(&points("visitor-aligned-edge")[0]);
    let report = quick(s, 0, false);
    let v = violation(&report);
    assert_eq!(v.invariant, "visitor.window_exact");
    assert!(v.failure.numbers["missing"] >= 1);
    assert_eq!(report.metrics["visitor.shift_max_seconds"].max, 1.0);
}

#[test]
fn aligned_ttl_is_exact_only_when_the_ticks_fall_on_whole_seconds() {
    let ps = points("visitor-aligned-phase");
    let zero = quick(point(&ps, "phase_ms=0"), 5, true);
    assert_eq!(zero.label(), "pass");
    assert_eq!(zero.metrics["visitor.shift_max_seconds"].max, 0.0);
    let quarter = quick(point(&ps, "phase_ms=250"), 5, true);
    assert_eq!(quarter.label(), "visitor.window_exact");
    // The key dies 0.75 s early (first visit before the tick) or 0.25 s late.
    let worst = quarter.metrics["visitor.shift_max_seconds"].max;
    assert!((worst - 0.75).abs() < 0.01, "{worst}");
}

#[test]
fn skewed_frontends_put_visits_in_the_wrong_period() {
    for name in ["visitor-aligned-skew", "visitor-window-key-skew"] {
        let report = quick(&points(name)[0], 0, false);
        let v = violation(&report);
        assert_eq!(v.invariant, "visitor.window_exact", "{name}");
        assert!(report.metrics["visitor.misattributed"].max >= 1.0, "{name}");
    }
}

#[test]
fn one_key_per_period_is_exact_at_any_density_and_phase() {
    for s in points("visitor-window-key") {
        let report = quick(&s, 3, false);
        assert_eq!(report.label(), "pass", "{:?}", s.point);
        assert_eq!(report.metrics["visitor.wrong_reads"].max, 0.0);
    }
}
