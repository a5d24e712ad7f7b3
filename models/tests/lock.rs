//! The lock recipes: the broken ones are caught, the sound one passes, and a failure
//! replays to the same trace from its seed and from its schedule.

mod support;

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use mcsim::explore::Schedule;
use mcsim::memcache::Memcache;
use mcsim::{ExecConfig, Random, Sim, Verdict, execute, run};
use mcsim_models::lock::{Lock, LockVariant};
use support::{at_phase_zero, load, run, violation};

#[test]
fn get_set_lock_breaks_exclusion_and_replays_identically() {
    let (s, report) = run("lock-get-set");
    let v = violation(&report);
    assert_eq!(v.invariant, "lock.exclusion");
    assert_eq!(v.failure.numbers["inside"], 2);
    assert!(v.faults.is_empty(), "no fault is needed: {}", v.cause());

    // The execution as found (not shrunk) replays from the printed seed command.
    let mut options = run::RunOptions::from_scenario(&s);
    options.shrink = false;
    let found = run::run(&s, &options).first_failure.expect("a failure");
    let line = mcsim::report::replay_seed_command(&s, s.strategy, found.seed);
    let seed: u64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert_eq!(Some(seed), found.seed);
    let again = run::run_seed(&s, s.strategy, seed);
    assert_eq!(again.trace.render(), found.execution.trace.render());
    assert_eq!(again.trace.hash(), found.execution.trace.hash());

    // The schedule string alone replays it too, byte for byte.
    let text = found.execution.schedule.to_string();
    let replayed = run::replay(&s, &Schedule::parse(&text).unwrap());
    assert_eq!(replayed.trace.render(), found.execution.trace.render());
    assert_eq!(replayed.verdict, found.execution.verdict);
}

#[test]
fn add_lock_with_eight_clients_passes_ten_thousand_seeds() {
    let (s, report) = run("lock-add");
    assert_eq!(s.clients, 8);
    assert_eq!(report.executions, 10_000);
    assert!(
        report.first_failure.is_none(),
        "{:?}",
        report.first_failure.map(|f| f.execution.verdict)
    );
}

#[test]
fn add_lock_holder_outlasting_the_timeout_breaks_exclusion() {
    // Ticks on the clients' whole seconds: the lock taken in the first second lives it all.
    let s = at_phase_zero(&load("lock-add-long-hold"));
    let report = mcsim::run::run(&s, &mcsim::run::RunOptions::from_scenario(&s));
    let v = violation(&report);
    assert_eq!(v.invariant, "lock.exclusion");
    assert!(v.faults.is_empty());
    // The second holder got in after the key expired: at least the 1 s timeout later.
    assert!(v.time.secs() >= 1, "violation at {}", v.time);
}

#[test]
fn add_lock_key_eviction_breaks_exclusion_and_the_report_names_it() {
    let (_, report) = run("lock-add-evict");
    let v = violation(&report);
    assert_eq!(v.invariant, "lock.exclusion");
    assert_eq!(v.faults.len(), 1);
    assert!(v.cause().contains("evict lock_x"), "cause: {}", v.cause());
    let trace = report.first_failure.unwrap().execution.trace.render();
    assert!(trace.contains("FAULT evict lock_x"), "{trace}");
}

#[test]
fn token_lock_passes_without_faults() {
    let (_, report) = run("lock-token");
    assert!(
        report.first_failure.is_none(),
        "{:?}",
        report.first_failure.map(|f| f.execution.verdict)
    );
}

#[test]
fn a_failure_report_has_the_timeline_and_both_replay_lines() {
    let (s, report) = run("lock-get-set");
    let failure = report.first_failure.expect("a failure");
    let text = mcsim::report::render_failure(&s, s.strategy, &failure);
    assert!(text.contains("FAILED lock-get-set: lock.exclusion"));
    assert!(text.contains("enters critical section"));
    assert!(
        text.contains("mcsim replay")
            && text.contains("--seed")
            && text.contains("--schedule mc1:")
    );
}

#[test]
fn pct_finds_the_get_set_lock_bug_too() {
    let s = load("lock-get-set");
    let options = run::RunOptions {
        strategy: mcsim::scenario::StrategyKind::Pct {
            depth: 2,
            steps: 20,
        },
        seed: 0,
        executions: 200,
        keep_going: false,
        shrink: false,
        expect: s.expectation.clone(),
    };
    let report = run::run(&s, &options);
    assert!(matches!(
        report.first_failure.map(|f| f.execution.verdict),
        Some(Verdict::Violation(_))
    ));
}

#[test]
fn a_holder_paused_past_the_ttl_breaks_exclusion_and_the_report_names_the_pause() {
    let (_, report) = support::run("lock-add-holder-pause");
    let v = support::violation(&report);
    assert_eq!(v.invariant, "lock.exclusion");
    assert!(v.cause().contains("pauses"), "{}", v.cause());
}

#[test]
fn a_dead_client_makes_the_others_wait_out_the_ttl_without_breaking_exclusion() {
    let s = support::load("lock-add-holder-dies");
    let report = support::quick(&s, 0, true);
    assert!(report.first_failure.is_none(), "{:?}", report.verdicts);
    let wait = support::metric(&report, "liveness.longest_wait_s");
    // Some executions kill the holder: the others wait for the 10 s TTL.
    assert!(wait.max >= 9.9 && wait.max < 11.0, "{wait:?}");
    assert_eq!(support::metric(&report, "liveness.stuck_clients").max, 0.0);
}

/// Every execution of the scenario's budget, run on past its first violation (as
/// `mcsim findings` measures) or stopped at it.
fn measure(name: &str, past_violation: bool) -> run::RunReport {
    let mut s = load(name);
    s.config.past_violation = past_violation;
    let mut options = run::RunOptions::from_scenario(&s);
    options.keep_going = true;
    options.shrink = false;
    run::run(&s, &options)
}

#[test]
fn run_past_the_violation_the_get_set_lock_reports_how_long_two_holders_overlapped() {
    let stopped = measure("lock-get-set", false);
    let measured = measure("lock-get-set", true);
    // The same executions, the same verdicts: running on changes no verdict.
    assert_eq!(stopped.verdicts, measured.verdicts);
    assert!(measured.failing() > 0);
    // Stopped at the violation, nothing says how long it lasted.
    assert!(!stopped.metrics.contains_key("lock.overlap_ms"));
    // Run on, every violating execution records the overlap, and only those: both
    // clients saw the key missing and stayed their 5 ms inside, so they overlapped for
    // up to that (less the latency between their entries), never for nothing.
    let overlap = &measured.metrics["lock.overlap_ms"];
    assert_eq!(overlap.count, measured.failing());
    assert!(overlap.min > 0.0 && overlap.max <= 10.0, "{overlap:?}");
}

#[test]
fn a_holder_paused_past_the_timeout_overlaps_the_next_for_its_whole_stay() {
    let measured = measure("lock-add-holder-pause", true);
    let overlap = &measured.metrics["lock.overlap_ms"];
    assert_eq!(overlap.count, measured.failing());
    assert!(overlap.max >= 50.0, "{overlap:?}");
    // The sound lock never records one.
    let sound = measure("lock-add", true);
    assert_eq!(sound.failing(), 0);
    assert!(!sound.metrics.contains_key("lock.overlap_ms"));
}

/// Whether the second holder still holds the lock after the first, paused past the TTL,
/// releases its own: two clients, timed so that every schedule runs the same order (the
/// first takes the lock at 0 and its 3 s TTL lapses by 5 s on the server's whole-second
/// clock, the second takes it at 5.5 s, the first releases at 6 s, the second looks at
/// 6.25 s, before its own TTL can lapse).
fn second_holder_keeps_the_lock(variant: LockVariant, seed: u64) -> bool {
    let kept: Rc<Cell<Option<bool>>> = Rc::default();
    let k = kept.clone();
    let setup = move |sim: &mut Sim| {
        sim.client(Default::default(), move |mc| async move {
            let lock = Lock::new("x", 3, variant, 0);
            assert!(
                lock.try_lock(&mc).await?,
                "the first client finds the lock free"
            );
            mc.sleep(Duration::from_millis(6000)).await;
            lock.unlock(&mc).await
        });
        let k = k.clone();
        sim.client(Default::default(), move |mc| async move {
            let lock = Lock::new("x", 3, variant, 1);
            mc.sleep(Duration::from_millis(5500)).await;
            assert!(lock.try_lock(&mc).await?, "the lapsed lock is free again");
            mc.sleep(Duration::from_millis(750)).await;
            // Taking it again fails only while it is still held.
            k.set(Some(!lock.try_lock(&mc).await?));
            Ok(())
        });
    };
    let e = execute(&ExecConfig::default(), &setup, &mut Random::new(seed), 0);
    assert!(e.verdict.is_pass(), "{}", e.verdict);
    kept.get().expect("the second client looked")
}

#[test]
fn a_token_lock_released_late_leaves_the_next_holders_lock_in_place() {
    for seed in 0..20 {
        // Each holder's token names it: the late release finds another's token and
        // leaves it.
        assert!(
            second_holder_keeps_the_lock(LockVariant::Token, seed),
            "seed {seed}"
        );
        // The add lock deletes whatever is there: the second holder lost its lock
        // without knowing.
        assert!(
            !second_holder_keeps_the_lock(LockVariant::Add, seed),
            "seed {seed}"
        );
    }
}
