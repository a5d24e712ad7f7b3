//! The executor's verdicts for misbehaving recipe code, and scale.

use std::time::Duration;

use mcsim::exec::{ExecConfig, execute};
use mcsim::explore::Random;
use mcsim::memcache::{Exptime, Key, Memcache, Value};
use mcsim::{Skew, Verdict};

mod support;

#[test]
fn a_panicking_recipe_is_a_finding_with_its_step() {
    let setup = |sim: &mut mcsim::Sim| {
        sim.client(Skew::default(), |mc| async move {
            let k = Key::new("k").unwrap();
            mc.set(&k, Value::from("1"), Exptime::NEVER).await?;
            let v = mc.get(&k).await?.unwrap();
            assert_eq!(v.text(), "2", "the recipe expected 2");
            Ok(())
        });
    };
    let e = execute(&ExecConfig::default(), &setup, &mut Random::new(1), 0);
    match e.verdict {
        Verdict::Panic {
            client: 0,
            message,
            step: 2,
        } => assert!(message.contains("expected 2")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn spinning_without_progress_is_a_livelock_not_a_hang() {
    let setup = |sim: &mut mcsim::Sim| {
        sim.client(Skew::default(), |mc| async move {
            let k = Key::new("never").unwrap();
            while mc.get(&k).await?.is_none() {
                mc.sleep(Duration::from_millis(10)).await;
            }
            Ok(())
        });
    };
    let e = support::run_for(Duration::from_secs(600), 1, &setup);
    match e.verdict {
        Verdict::Livelock {
            time,
            waiting,
            repeated,
            ..
        } => {
            // Found as a spin, long before the time budget.
            assert!(time.secs() < 600, "{time}");
            assert!(repeated >= 10_000, "{repeated}");
            assert_eq!(waiting.len(), 1);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn waiting_on_a_ttl_is_stuck_not_a_livelock() {
    // c0 takes a lock for 600 s and never releases it; c1 polls with a backoff. Nothing
    // changes on the server, but the lock's expiry would: a wait, not a spin.
    let setup = |sim: &mut mcsim::Sim| {
        sim.client(Skew::default(), |mc| async move {
            let k = Key::new("lock").unwrap();
            mc.add(&k, mcsim::memcache::Value::from("1"), Exptime::secs(600))
                .await?;
            Ok(())
        });
        sim.client(Skew::default(), |mc| async move {
            let k = Key::new("lock").unwrap();
            mc.sleep(Duration::from_millis(5)).await;
            while mc
                .add(&k, mcsim::memcache::Value::from("2"), Exptime::secs(600))
                .await
                .is_err()
            {
                mc.sleep(Duration::from_millis(50)).await;
            }
            Ok(())
        });
    };
    let e = support::run_for(Duration::from_secs(120), 1, &setup);
    match e.verdict {
        Verdict::Stuck {
            time,
            waiting,
            longest_wait: (client, wait),
            next_expiry: Some((key, at)),
            ..
        } => {
            assert!(time.secs() >= 120);
            assert_eq!((waiting.len(), client, key.as_str()), (1, 1, "lock"));
            assert!(wait.as_secs() >= 110, "{wait:?}");
            // A 600 s TTL ends in (599 s, 600 s] after the store, by the tick phase.
            assert!(at.micros() > 599_000_000, "{at}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_loop_that_reads_its_clock_is_not_called_a_spin() {
    // Retries until its own deadline: repeated calls, but the clock may end the loop.
    let setup = |sim: &mut mcsim::Sim| {
        sim.client(Skew::default(), |mc| async move {
            let k = Key::new("never").unwrap();
            let deadline = mc.now() + Duration::from_secs(30);
            while mc.get(&k).await?.is_none() && mc.now() < deadline {
                mc.sleep(Duration::from_millis(1)).await;
            }
            Ok(())
        });
    };
    let e = execute(&ExecConfig::default(), &setup, &mut Random::new(1), 0);
    assert!(e.verdict.is_pass(), "{}", e.verdict);
}

#[test]
fn awaiting_a_foreign_future_is_reported() {
    let setup = |sim: &mut mcsim::Sim| {
        sim.client(Skew::default(), |_mc| async move {
            std::future::pending::<()>().await;
            Ok(())
        });
    };
    let e = execute(&ExecConfig::default(), &setup, &mut Random::new(1), 0);
    assert!(
        matches!(e.verdict, Verdict::Panic { .. }),
        "{:?}",
        e.verdict
    );
}

#[test]
fn an_unhandled_error_ends_the_run_as_a_client_error() {
    let setup = |sim: &mut mcsim::Sim| {
        sim.client(Skew::default(), |mc| async move {
            mc.incr(&Key::new("missing").unwrap(), 1).await?;
            Ok(())
        });
    };
    let e = execute(&ExecConfig::default(), &setup, &mut Random::new(1), 0);
    assert!(
        matches!(e.verdict, Verdict::ClientError { client: 0, .. }),
        "{:?}",
        e.verdict
    );
}

#[test]
fn three_thousand_clients_in_one_run() {
    let setup = |sim: &mut mcsim::Sim| {
        for _ in 0..3000 {
            sim.client(Skew::default(), |mc| async move {
                let k = Key::new("hits").unwrap();
                if mc.incr(&k, 1).await.is_err() {
                    let _ = mc.add(&k, Value::from("0"), Exptime::NEVER).await;
                    mc.incr(&k, 1).await?;
                }
                Ok(())
            });
        }
        let k = Key::new("hits").unwrap();
        sim.at_end("all counted", move |view| {
            let n = view.peek(&k).and_then(|v| v.as_u64()).unwrap_or(0);
            if n == 3000 {
                Ok(())
            } else {
                Err(mcsim::Failure::new(format!("{n}")))
            }
        });
    };
    let config = ExecConfig {
        trace: false,
        ..ExecConfig::default()
    };
    let e = execute(&config, &setup, &mut Random::new(7), 0);
    assert_eq!(e.verdict, Verdict::Pass);
    assert!(e.calls >= 3000);
}

#[test]
fn client_clocks_carry_their_skew() {
    let setup = |sim: &mut mcsim::Sim| {
        for skew in [Skew::millis(-250), Skew::millis(400)] {
            sim.client(skew, move |mc| async move {
                let drift = mc.now().micros() as i64 - mc.global_now().micros() as i64;
                assert_eq!(drift, skew.0.max(-(mc.global_now().micros() as i64)));
                mc.sleep(Duration::from_secs(1)).await;
                let drift = mc.now().micros() as i64 - mc.global_now().micros() as i64;
                assert_eq!(drift, skew.0);
                Ok(())
            });
        }
    };
    let e = execute(&ExecConfig::default(), &setup, &mut Random::new(1), 0);
    assert_eq!(e.verdict, Verdict::Pass);
}

/// Executions on one thread reuse each other's buffers and cluster; none may see
/// another's state, whatever their sizes and in whatever order they run.
#[test]
fn executions_of_different_sizes_do_not_leak_into_each_other() {
    let counting = |clients: usize| {
        move |sim: &mut mcsim::Sim| {
            for _ in 0..clients {
                sim.client(Skew::default(), |mc| async move {
                    let k = Key::new("n").unwrap();
                    if mc.incr(&k, 1).await.is_err() {
                        mc.add(&k, Value::from(1u64), Exptime::NEVER).await.ok();
                    }
                    Ok(())
                });
            }
            let key = Key::new("n").unwrap();
            sim.at_end("one add, the rest incr", move |view| {
                let n = view.peek(&key).and_then(|v| v.as_u64()).unwrap_or(0);
                // Under interleaving an add may lose to another: never more than `clients`.
                if n >= 1 && n <= clients as u64 {
                    Ok(())
                } else {
                    Err(mcsim::Failure::new(format!("n = {n}")))
                }
            });
        }
    };
    let run = move |clients: usize, seed: u64| {
        execute(
            &ExecConfig::default(),
            &counting(clients),
            &mut Random::new(seed),
            0,
        )
    };
    for (i, clients) in [4, 1, 3, 2, 4].into_iter().enumerate() {
        let seed = i as u64;
        let reused = run(clients, seed);
        // A new thread has nothing to reuse.
        let alone = std::thread::spawn(move || run(clients, seed))
            .join()
            .unwrap();
        assert!(reused.verdict.is_pass(), "{:?}", reused.verdict);
        assert_eq!(reused.schedule.choices, alone.schedule.choices);
        assert_eq!(reused.trace.render(), alone.trace.render());
        assert_eq!(reused.end_time, alone.end_time);
    }
}

/// One result reused by `execute_into` across executions of different settings (traced
/// or not, with faults or none, one server or two) holds only the last execution: the
/// same, field for field, as a fresh `execute` of it on a new thread.
#[test]
fn a_reused_result_holds_only_its_own_execution() {
    use mcsim::exec::{Execution, Runs};
    use mcsim::fault::FaultPlan;
    let counting = support::three_counting;
    let faulty = ExecConfig {
        faults: FaultPlan::lost_replies()
            .and(FaultPlan::evictions())
            .probability(0.5),
        ..ExecConfig::default()
    };
    let quiet = ExecConfig {
        trace: false,
        servers: vec![Default::default(), Default::default()],
        ..ExecConfig::default()
    };
    let configs = [
        faulty.clone(),
        quiet.clone(),
        faulty,
        ExecConfig::default(),
        quiet,
    ];
    let mut out = Execution::default();
    let mut faulted = 0;
    for (seed, config) in configs.into_iter().enumerate() {
        let seed = seed as u64;
        Runs::new(&config).execute_into(&counting, &mut Random::new(seed), seed, &mut out);
        let alone = support::on_a_fresh_engine(config, counting, seed);
        assert_eq!(format!("{out:?}"), alone, "execution {seed}");
        faulted += usize::from(!out.faults.is_empty());
    }
    assert_eq!(faulted, 2, "the faulty executions fire faults");
}

/// The engine keeps what a setup function registers (the clients, the checks, the
/// ghosts, the scripted faults) in place from one execution to the next: executions of
/// two different setups, alternating on one thread, each hold only their own.
#[test]
fn alternating_setups_each_run_only_what_they_registered() {
    use mcsim::exec::{Execution, Runs};
    use mcsim::fault::Fault;
    fn three_writers(sim: &mut mcsim::Sim) {
        for c in 0..3u64 {
            sim.client(Skew::default(), move |mc| async move {
                let k = Key::new("w").unwrap();
                mc.set(&k, Value::from(c), Exptime::NEVER).await?;
                Ok(())
            });
        }
        sim.always("writers: never fails", || Ok(()));
        sim.ghost(|h| std::hash::Hash::hash(&7u8, h));
        sim.at_end("writers: some value", |view| {
            let k = Key::new("w").unwrap();
            match view.peek(&k) {
                Some(_) => Ok(()),
                None => Err(mcsim::Failure::new("no value")),
            }
        });
    }
    fn one_reader_and_a_crash(sim: &mut mcsim::Sim) {
        sim.client(Skew::default(), |mc| async move {
            let k = Key::new("w").unwrap();
            mc.sleep(Duration::from_secs(2)).await;
            mc.get(&k).await.ok();
            Ok(())
        });
        sim.fault_at(Duration::from_secs(1), Fault::Crash { server: 0 });
        sim.on_death(|_| {});
        sim.at_end("reader: never fails", |_| Ok(()));
    }
    let setups: [fn(&mut mcsim::Sim); 4] = [
        three_writers,
        one_reader_and_a_crash,
        three_writers,
        one_reader_and_a_crash,
    ];
    let mut out = Execution::default();
    for (seed, setup) in setups.into_iter().enumerate() {
        let seed = seed as u64;
        let config = ExecConfig::default();
        Runs::new(&config).execute_into(&setup, &mut Random::new(seed), seed, &mut out);
        let alone = support::on_a_fresh_engine(config, setup, seed);
        assert_eq!(format!("{out:?}"), alone, "execution {seed}");
        let checks = out.checks.len();
        assert_eq!(
            checks,
            if seed.is_multiple_of(2) { 2 } else { 1 },
            "execution {seed}"
        );
    }
}

/// The same for a search over timing, whose executions record the phase points (where
/// in a second their outcome could depend on the servers' tick phase): each reused
/// result holds its own execution's points, not the ones before it as well.
#[test]
fn a_reused_result_holds_only_its_own_phase_points() {
    use mcsim::exec::{Execution, Runs};
    use mcsim::exhaustive::Dfs;
    use mcsim::explore::Strategy;
    let expiring = support::expiring;
    let config = ExecConfig::default();
    let mut reused = Dfs::new(None, false).with_timing(true);
    let mut fresh = reused.clone();
    let mut out = Execution::default();
    let (mut executions, mut with_points) = (0, 0);
    for i in 0.. {
        Runs::new(&config).execute_into(&expiring, &mut reused, i, &mut out);
        let alone = execute(&config, &expiring, &mut fresh, i);
        assert_eq!(format!("{out:?}"), format!("{alone:?}"), "execution {i}");
        executions += 1;
        with_points += usize::from(!out.phase_points.is_empty());
        let more = reused.end(false);
        assert_eq!(more, fresh.end(false));
        if !more {
            break;
        }
    }
    assert!(
        executions > 1 && with_points > 0,
        "{executions} {with_points}"
    );
}

/// An execution started inside another's setup (executions nest) runs on an engine of
/// its own: neither sees the other's clients, servers or checks.
#[test]
fn an_execution_inside_another_runs_on_its_own_engine() {
    use std::cell::Cell;
    use std::rc::Rc;
    let one_incr = |sim: &mut mcsim::Sim| {
        sim.client(Skew::default(), |mc| async move {
            let k = Key::new("n").unwrap();
            mc.add(&k, Value::from(5u64), Exptime::NEVER).await?;
            Ok(())
        });
        let key = Key::new("n").unwrap();
        sim.at_end("five", move |view| {
            match view.peek(&key).and_then(|v| v.as_u64()) {
                Some(5) => Ok(()),
                other => Err(mcsim::Failure::new(format!("{other:?}"))),
            }
        });
    };
    let inner_steps = Rc::new(Cell::new(0));
    let seen = inner_steps.clone();
    let outer = move |sim: &mut mcsim::Sim| {
        let inner = execute(&ExecConfig::default(), &one_incr, &mut Random::new(1), 0);
        assert!(inner.verdict.is_pass(), "{:?}", inner.verdict);
        seen.set(inner.steps);
        for _ in 0..2 {
            sim.client(Skew::default(), |mc| async move {
                let k = Key::new("n").unwrap();
                // The inner execution's item is not on the outer execution's server.
                assert!(mc.get(&k).await?.is_none());
                Ok(())
            });
        }
    };
    let e = execute(&ExecConfig::default(), &outer, &mut Random::new(2), 0);
    assert!(e.verdict.is_pass(), "{:?}", e.verdict);
    assert_eq!((inner_steps.get(), e.steps), (1, 2));
    assert!(
        e.checks.is_empty(),
        "the inner execution's check is not the outer's"
    );
}

/// A client handle kept past its execution still sees that execution, not the next one.
#[test]
fn a_client_handle_kept_after_its_execution_is_not_reset() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let kept: Rc<RefCell<Option<mcsim::Client>>> = Rc::default();
    let keep = kept.clone();
    let setup = move |sim: &mut mcsim::Sim| {
        let keep = keep.clone();
        sim.client(Skew::default(), move |mc| {
            *keep.borrow_mut() = Some(mc.clone());
            async move {
                mc.sleep(Duration::from_secs(5)).await;
                Ok(())
            }
        });
    };
    let first = execute(&ExecConfig::default(), &setup, &mut Random::new(0), 0);
    assert_eq!(first.end_time.secs(), 5);
    let other = |sim: &mut mcsim::Sim| {
        sim.client(Skew::default(), |mc| async move {
            mc.sleep(Duration::from_secs(1)).await;
            Ok(())
        });
    };
    execute(&ExecConfig::default(), &other, &mut Random::new(0), 0);
    let handle = kept.borrow().clone().unwrap();
    assert_eq!(handle.global_now().secs(), 5);
}

#[test]
fn waiting_on_a_sleeping_holder_is_not_a_spin() {
    // c0 holds a key (no TTL) for 30 s of sleep, then deletes it; c1 polls it without a
    // pause. Thousands of repeated calls, but the sleeper will change things.
    let setup = |sim: &mut mcsim::Sim| {
        sim.client(Skew::default(), |mc| async move {
            let k = Key::new("lock").unwrap();
            mc.add(&k, Value::from("1"), Exptime::NEVER).await?;
            mc.sleep(Duration::from_secs(30)).await;
            mc.delete(&k).await?;
            Ok(())
        });
        sim.client(Skew::default(), |mc| async move {
            let k = Key::new("lock").unwrap();
            mc.sleep(Duration::from_millis(1)).await;
            while mc.get(&k).await?.is_some() {}
            Ok(())
        });
    };
    let config = ExecConfig {
        max_steps: 1_000_000,
        ..ExecConfig::default()
    };
    let e = execute(&config, &setup, &mut Random::new(1), 0);
    assert!(e.verdict.is_pass(), "{}", e.verdict);
}

/// Final states an exhaustive search reaches: two clients each read a key (the servers
/// end the same whatever the order) and, when `ghost` is on, register the order they
/// finished in as ghost state.
fn distinct_final_states(ghost: bool) -> usize {
    use std::cell::RefCell;
    use std::hash::Hash;
    use std::rc::Rc;

    use mcsim::exhaustive::Dfs;
    use mcsim::explore::Strategy;

    let setup = move |sim: &mut mcsim::Sim| {
        let order: Rc<RefCell<Vec<usize>>> = Rc::default();
        if ghost {
            let seen = order.clone();
            sim.ghost(move |h| seen.borrow().hash(h));
        }
        for c in 0..2 {
            let order = order.clone();
            sim.client(Skew::default(), move |mc| async move {
                mc.get(&Key::new("k").unwrap()).await?;
                order.borrow_mut().push(c);
                Ok(())
            });
        }
    };
    let mut dfs = Dfs::new(None, false);
    let mut states = std::collections::BTreeSet::new();
    for i in 0.. {
        let e = execute(&ExecConfig::default(), &setup, &mut dfs, i);
        states.insert(e.state_hash.expect("dfs asks for the final state"));
        if !dfs.end(false) {
            break;
        }
    }
    states.len()
}

#[test]
fn ghost_state_tells_apart_states_the_servers_do_not() {
    assert_eq!(distinct_final_states(false), 1);
    assert_eq!(distinct_final_states(true), 2);
}

/// The metrics an execution's end checks record are its own in a reused result: an
/// execution that records none hands over none, whatever the ones before it recorded.
#[test]
fn a_reused_result_holds_only_its_own_metrics() {
    use mcsim::exec::{Execution, Runs};
    let measuring = |sim: &mut mcsim::Sim| {
        sim.at_end("measures", |view| {
            view.metric("measured", 1.0);
            Ok(())
        });
    };
    let silent = |sim: &mut mcsim::Sim| {
        sim.at_end("measures nothing", |_| Ok(()));
    };
    let config = ExecConfig::default();
    let mut out = Execution::default();
    for (i, measured) in [true, false, false, true, false, false]
        .into_iter()
        .enumerate()
    {
        let setup: &dyn Fn(&mut mcsim::Sim) = if measured { &measuring } else { &silent };
        Runs::new(&config).execute_into(setup, &mut Random::new(0), i as u64, &mut out);
        assert_eq!(
            out.metrics.contains_key("measured"),
            measured,
            "execution {i}: {:?}",
            out.metrics
        );
    }
}

/// Two servers: a handle addressed to a server reads and writes there, whatever server
/// the key distribution picks; a server the scenario does not have is a panic verdict
/// that names it, not a call to nowhere.
#[test]
fn a_client_addresses_a_server_of_its_own_choosing() {
    let config = ExecConfig {
        servers: vec![mcsim::server::ServerConfig::default(); 2],
        ..ExecConfig::default()
    };
    let setup = |sim: &mut mcsim::Sim| {
        sim.client(Skew::default(), |mc| async move {
            let k = Key::new("k").unwrap();
            let (a, b) = (mc.on_server(0), mc.on_server(1));
            assert_eq!(b.server(), Some(1));
            b.set(&k, Value::from("on 1"), Exptime::NEVER).await?;
            assert_eq!(a.get(&k).await?, None, "server 0 never saw it");
            let on_b = b.get(&k).await?.expect("server 1 holds it");
            assert_eq!(on_b.text(), "on 1");
            a.set(&k, Value::from("on 0"), Exptime::NEVER).await?;
            assert_eq!(
                b.get(&k).await?.unwrap().text(),
                "on 1",
                "nor did 0's reach 1"
            );
            Ok(())
        });
    };
    let e = execute(&config, &setup, &mut Random::new(3), 0);
    assert_eq!(e.verdict, Verdict::Pass, "{:?}", e.trace);

    let nowhere = |sim: &mut mcsim::Sim| {
        sim.client(Skew::default(), |mc| async move {
            mc.on_server(2).get(&Key::new("k").unwrap()).await?;
            Ok(())
        });
    };
    match execute(&config, &nowhere, &mut Random::new(3), 0).verdict {
        Verdict::Panic {
            client: 0, message, ..
        } => {
            assert!(
                message.contains("server 2") && message.contains("2 servers"),
                "{message}"
            )
        }
        other => panic!("{other:?}"),
    }
}
