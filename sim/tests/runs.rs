//! `Runs`: many executions of one configuration, its settings applied once, each
//! execution exactly what a lone `execute` makes of it.

use mcsim::exec::{ExecConfig, Execution, Runs, execute};
use mcsim::explore::Random;
use mcsim::fault::FaultPlan;
use mcsim::memcache::{Exptime, Key, Memcache, Value};
use mcsim::{Failure, Skew, Verdict};

mod support;
use support::on_a_fresh_engine;

/// Three clients adding one to a counter by reading it and writing it back (lost
/// updates in most interleavings, and wherever a reply is lost), and an end check that
/// fails with the number lost, named by `name` as a static or as an owned string.
fn read_and_write_back(name: &'static str, owned_name: bool) -> impl Fn(&mut mcsim::Sim) {
    move |sim: &mut mcsim::Sim| {
        for _ in 0..3 {
            sim.client(Skew::default(), |mc| async move {
                let k = Key::new("n").unwrap();
                // A lost reply reads as no value, and a lost write is left lost.
                let n = match mc.get(&k).await {
                    Ok(Some(v)) => v.as_u64().unwrap_or(0),
                    _ => 0,
                };
                let _ = mc.set(&k, Value::from(n + 1), Exptime::NEVER).await;
                Ok(())
            });
        }
        let key = Key::new("n").unwrap();
        let check = move |view: &mcsim::invariant::EndView<'_>| {
            let n = view.peek(&key).and_then(|v| v.as_u64()).unwrap_or(0);
            if n == 3 {
                Ok(())
            } else {
                Err(Failure::new("lost updates").with("lost", 3 - n as i64))
            }
        };
        if owned_name {
            sim.at_end(name.to_string(), check);
        } else {
            sim.at_end(name, check);
        }
    }
}

/// One result reused by executions of one `Runs` holds only the last one: its
/// violation's name, numbers and faults as a fresh execution has them, after a
/// violation with other numbers, after a pass, and with faults or none.
#[test]
fn each_execution_of_a_runs_holds_its_own_violation() {
    let config = ExecConfig {
        faults: FaultPlan::lost_replies().probability(0.05),
        ..ExecConfig::default()
    };
    for (name, owned) in [("counter.static", false), ("counter.owned", true)] {
        let runs = Runs::new(&config);
        let made = read_and_write_back(name, owned);
        let mut out = Execution::default();
        let (mut losses, mut after_pass, mut with_faults) = (Vec::new(), 0, 0);
        let mut last_passed = false;
        for seed in 0..40 {
            runs.execute_into(&made, &mut Random::new(seed), seed, &mut out);
            let alone = on_a_fresh_engine(config.clone(), read_and_write_back(name, owned), seed);
            assert_eq!(format!("{out:?}"), alone, "execution {seed}");
            match &out.verdict {
                Verdict::Violation(v) => {
                    losses.push(v.failure.numbers["lost"]);
                    after_pass += usize::from(last_passed);
                    with_faults += usize::from(!v.faults.is_empty());
                    last_passed = false;
                }
                _ => last_passed = true,
            }
        }
        losses.dedup();
        assert!(
            losses.len() > 1,
            "violations in a row lose different counts: {losses:?}"
        );
        assert!(
            after_pass > 0 && with_faults > 0,
            "{after_pass} {with_faults}"
        );
    }
}

/// Executions of two `Runs` of different configurations, and lone ones, alternating
/// on one thread: each runs under its own settings (servers, latency, faults), as a
/// fresh execution does.
#[test]
fn runs_of_different_configurations_alternate_on_one_thread() {
    let two_servers = ExecConfig {
        servers: vec![Default::default(), Default::default()],
        latency_max: std::time::Duration::from_millis(2),
        ..ExecConfig::default()
    };
    let faulty = ExecConfig {
        faults: FaultPlan::lost_replies()
            .and(FaultPlan::evictions())
            .probability(0.5),
        ..ExecConfig::default()
    };
    let (a, b) = (Runs::new(&two_servers), Runs::new(&faulty));
    let made = read_and_write_back("counter.static", false);
    let mut out = Execution::default();
    for seed in 0..12 {
        let config = match seed % 3 {
            0 => {
                a.execute_into(&made, &mut Random::new(seed), seed, &mut out);
                &two_servers
            }
            1 => {
                b.execute_into(&made, &mut Random::new(seed), seed, &mut out);
                &faulty
            }
            _ => {
                let lone = ExecConfig::default();
                out = execute(&lone, &made, &mut Random::new(seed), seed);
                let alone =
                    on_a_fresh_engine(lone, read_and_write_back("counter.static", false), seed);
                assert_eq!(format!("{out:?}"), alone);
                continue;
            }
        };
        let alone = on_a_fresh_engine(
            config.clone(),
            read_and_write_back("counter.static", false),
            seed,
        );
        assert_eq!(format!("{out:?}"), alone, "execution {seed}");
    }
}
