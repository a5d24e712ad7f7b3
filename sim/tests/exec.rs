//! The executor's verdicts for misbehaving recipe code, and scale.

use std::time::Duration;

use mcsim::exec::{ExecConfig, execute};
use mcsim::explore::Random;
use mcsim::memcache::{Exptime, Key, Memcache, Value};
use mcsim::{Skew, Verdict};

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
    let config = ExecConfig {
        max_time: Duration::from_secs(60),
        ..ExecConfig::default()
    };
    let e = execute(&config, &setup, &mut Random::new(1), 0);
    match e.verdict {
        Verdict::Livelock { time, waiting, .. } => {
            assert!(time.secs() >= 60);
            assert_eq!(waiting.len(), 1);
        }
        other => panic!("{other:?}"),
    }
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
